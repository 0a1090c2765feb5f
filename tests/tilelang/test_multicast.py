"""tt-multicast-reuse: TileLang GEMMs whose cores share A or B blocks read each once from DRAM and
multicast it; results against numpy, the protocol verify-tt-ir checks, a receiver that does not
wait is a simulator hazard, the host program's semaphores."""

import numpy as np
import pytest
from tilelang_helpers import load_example, matmul_reference, random_bf16
from xdsl.rewriter import Rewriter

import tilefold.language as T
from tilefold.errors import CompileError, DeadlockError, NocHazardError
from tilefold.run.jit import jit
from tilefold.ir.attributes import get_attr, kernel_function, set_attr
from tilefold.passes.pipelines import pass_named
from tilefold.passes.tilelang.verify_tt_ir import _semaphore_id
from tilefold.program.from_tilelang import build_program
from tilefold.sim import Device


@pytest.fixture(scope="module")
def gemm_factory():
    return load_example("gemm").matmul


def run(kernel, m, n, k, seed=0):
    a, b = random_bf16((m, k), seed), random_bf16((k, n), seed + 1)
    c = kernel(a, b)
    np.testing.assert_allclose(c.astype(np.float32), matmul_reference(a, b), rtol=1e-2, atol=1e-2)
    return a, b


@pytest.fixture(scope="module")
def gemm_512(gemm_factory):
    """4 x 4 blocks of 4 x 4 tiles on 8 x 2 cores: A shared by runs of four cores along a row, B by
    the two cores of a column."""
    return gemm_factory(512, 512, 512, 128, 128, 64)


def test_shared_blocks_are_read_once_and_the_result_matches_numpy(gemm_512):
    run(gemm_512, 512, 512, 512)
    groups = get_attr(gemm_512.compiled.function, "tt.multicast_groups")
    assert groups["A_shared"]["axis"] == "row" and len(groups["A_shared"]["groups"]) == 4
    assert groups["B_shared"]["axis"] == "column" and len(groups["B_shared"]["groups"]) == 8
    assert len(gemm_512.compiled.program.semaphores) == 4
    counters = gemm_512.last_result.perf.counters
    # A once; each B block column twice (cores x and x + 4 of a row use it, but they are not neighbours)
    assert counters.dram_read_bytes == 512 * 512 * 2 + 2 * 512 * 512 * 2
    assert counters.dram_write_bytes == 512 * 512 * 2


def test_uneven_blocks_per_core_and_padding(gemm_factory):
    """12 x 12 blocks over 64 cores (some cores compute three, others two) and a padded shape."""
    kernel = gemm_factory(768, 768, 256, 64, 64, 128)
    run(kernel, 768, 768, 256, seed=2)
    assert get_attr(kernel.compiled.function, "tt.multicast_groups")
    padded = gemm_factory(200, 168, 100, 64, 64, 32)
    run(padded, 200, 168, 100, seed=4)


def test_a_kernel_no_cores_share_reads_is_left_alone():
    @T.prim_func
    def copy(A: T.Tensor((256, 256), "bfloat16"), B: T.Tensor((256, 256), "bfloat16")):
        with T.Kernel(4, 4) as (bx, by):
            s = T.alloc_shared((64, 64), "bfloat16")
            T.copy(A[by * 64, bx * 64], s)
            T.copy(s, B[by * 64, bx * 64])

    kernel = jit(copy)
    a = random_bf16((256, 256), 0)
    np.testing.assert_array_equal(np.asarray(kernel(a), np.float32), np.asarray(a, np.float32))
    assert "tt.multicast_groups" not in kernel.compiled.function.attributes
    assert not kernel.compiled.program.semaphores


def _reader(module):
    return next(f for f in module.ops if getattr(f, "sym_name", None) and f.sym_name.data == "reader")


def _drop(module, name: str, sem: int, operand: int = 0) -> None:
    """Erase the first ``ttkernel.<name>`` of the reader on semaphore ``sem``."""
    op = next(o for o in _reader(module).walk()
              if o.name == f"ttkernel.{name}" and _semaphore_id(o.operands[operand]) == sem)
    Rewriter.erase_op(op)


def _fresh(gemm_factory):
    return gemm_factory(256, 256, 256, 64, 64, 64).compiled


def test_verify_rejects_a_missing_wait(gemm_factory):
    compiled = _fresh(gemm_factory)
    group = get_attr(compiled.function, "tt.multicast_groups")["A_shared"]
    _drop(compiled.module, "noc_semaphore_wait", group["sender_sem"])
    with pytest.raises(CompileError, match="handshake is broken.*sender waits for its receivers: 0"):
        pass_named("verify-tt-ir").apply(None, compiled.module)


def test_verify_rejects_groups_that_disagree_with_the_runtime_args(gemm_factory):
    compiled = _fresh(gemm_factory)
    host = kernel_function(compiled.module)
    groups = get_attr(host, "tt.multicast_groups")
    sx, sy, x0, y0, x1, y1 = groups["A_shared"]["groups"][0]
    groups["A_shared"]["groups"][0] = [sx, sy, x0, y0, x1 - 1, y1]
    set_attr(host, "tt.multicast_groups", groups)
    with pytest.raises(CompileError, match="do not match its group"):
        pass_named("verify-tt-ir").apply(None, compiled.module)


def test_a_receiver_that_does_not_wait_is_a_simulator_hazard(gemm_factory):
    compiled = _fresh(gemm_factory)
    group = get_attr(compiled.function, "tt.multicast_groups")["A_shared"]
    _drop(compiled.module, "noc_semaphore_wait", group["receiver_sem"])
    a, b = random_bf16((256, 256), 0), random_bf16((256, 256), 1)
    with pytest.raises((NocHazardError, DeadlockError), match="semaphore"):
        Device(compiled.arch).run(build_program(compiled.module, compiled.arch), compiled.device_inputs({"A": a, "B": b}))


def test_host_program_creates_the_semaphores_and_passes_noc_coordinates(gemm_512):
    """(check-host compiles every example's host program, the multicast GEMM of gemm.py among them.)"""
    main = gemm_512.compiled.artifacts()["main.cpp"]
    assert main.count("CreateSemaphore") == 4 and "worker_core_from_logical_core" in main
