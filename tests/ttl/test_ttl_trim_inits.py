"""``ttl-trim-inits``: a full init that finds the same full init in effect becomes its short form, and
an operation init replaced before any use is dropped. TT-Lang's one-tile matmul K loop runs exactly
on the simulator with the trimmed kernel (which passes ``check-kernel``); kernels written as IR show
when a full init must stay."""

from __future__ import annotations

import numpy as np
import pytest
from checkkernel import accessor_compile_args, check_kernels, require_accepted
from compute_ir import compute_kernel

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.codegen.cpp import emit_kernel
from tilefold.ir.ttkernel import ApiCallOp
from tilefold.passes.ttl.trim_inits import TtlTrimInits
from ttl_helpers import compiled

K_TILES, N_TILES = 3, 2


@ttl.operation(grid=(1, 1))
def k_loop(a, b, y):
    """TT-Lang's one-tile matmul tutorial step: the running sum goes through a buffer each K step."""
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    acc_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(N_TILES):
            with acc_dfb.reserve() as acc:
                acc.store(ttl.block.fill(0, shape=acc.shape))
            for _ in range(K_TILES):
                with a_dfb.wait() as x, b_dfb.wait() as w, acc_dfb.wait() as pre:
                    with acc_dfb.reserve() as acc:
                        acc.store(pre + x @ w)
            with acc_dfb.wait() as done, y_dfb.reserve() as out:
                out.store(ttl.math.relu(done))

    @ttl.datamovement()
    def read():
        for n in range(N_TILES):
            for k in range(K_TILES):
                with a_dfb.reserve() as x, b_dfb.reserve() as w:
                    ttl.copy(a[0, k], x).wait()
                    ttl.copy(b[k, n], w).wait()

    @ttl.datamovement()
    def write():
        for n in range(N_TILES):
            with y_dfb.wait() as out:
                ttl.copy(out, y[0, n]).wait()


def _tensors():
    rng = np.random.default_rng(5)
    a = rng.integers(-2, 3, (32, 32 * K_TILES)).astype(np.float32)
    b = rng.integers(-2, 3, (32 * K_TILES, 32 * N_TILES)).astype(np.float32)
    def tile(x):
        return ttnn.from_numpy(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    return tile(a), tile(b), ttnn.zeros((32, 32 * N_TILES), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


def test_the_k_step_makes_short_inits_only(tmp_path):
    program = compiled(k_loop, *_tensors()).program
    compute = next(k for k in program.kernels if k.is_compute)
    source = emit_kernel(compute.function)
    path = tmp_path / "compute.cpp"
    path.write_text(source)
    require_accepted(check_kernels([(path, "compute", accessor_compile_args(program, compute) or None)])[0])
    k_step = source[source.index("for (uint32_t", source.index("pack_tile")):]
    k_step = k_step[:k_step.index("cb_pop_front")]
    assert "mm_block_init(" not in k_step and k_step.count("mm_block_init_short(") == 1, k_step
    assert k_step.index("copy_tile_init(") < k_step.index("copy_tile(") < k_step.index("mm_block_init_short(")
    assert source.count("mm_block_init(") == 1         # the fill's, the first the engines see each round


def test_the_trimmed_k_loop_computes_the_exact_product():
    a, b, y = _tensors()
    k_loop(a, b, y)
    expected = np.maximum(ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(b).astype(np.float64), 0)
    np.testing.assert_array_equal(ttnn.to_numpy(y), expected)


MM = "ttkernel.mm_block_init(%a, %b, %o, %c0, %c1, %c1, %c1) : !ttkernel.cb, !ttkernel.cb, !ttkernel.cb, index, index, index, index"
COPY_INIT = "ttkernel.copy_tile_init(%o) : !ttkernel.cb"
COPY = "ttkernel.copy_tile(%o, %c0, %c0) : !ttkernel.cb, index, index"
SFPU = "ttkernel.init_sfpu(%a, %o) : !ttkernel.cb, !ttkernel.cb"


def _calls(body: str) -> list[str]:
    module = compute_kernel(body, ("a", "b", "o"))
    TtlTrimInits().apply(None, module)
    return [op.api.name for op in module.walk() if isinstance(op, ApiCallOp) and op.api.configures]


def test_a_repeated_full_init_becomes_short():
    assert _calls(f"{MM}\n{COPY_INIT}\n{COPY}\n{MM}") == ["mm_block_init", "copy_tile_init", "mm_block_init_short"]


def test_a_loop_entered_with_the_same_init_shortens_the_one_in_its_body():
    body = f"{MM}\nscf.for %i = %c0 to %c4 step %c1 {{\n{MM}\n{COPY}\n{COPY_INIT}\n{COPY}\n}}"
    assert _calls(body) == ["mm_block_init", "mm_block_init_short", "copy_tile_init"]
    # shortened, then replaced before any use: dropped
    body = f"{MM}\nscf.for %i = %c0 to %c4 step %c1 {{\n{MM}\n{COPY_INIT}\n{COPY}\n}}"
    assert _calls(body) == ["mm_block_init", "copy_tile_init"]


@pytest.mark.parametrize("body, why", [
    (f"{MM}\nttkernel.reconfig_data_format(%b, %a) : !ttkernel.cb, !ttkernel.cb\n{MM}",
     "a reconfiguration in between"),
    (f"{MM}\nscf.for %i = %c0 to %c4 step %c1 {{\n{MM}\n{COPY}\n{SFPU}\n{COPY}\n}}",
     "the loop's body ends configured for another full init"),
    (f"scf.if %t {{\n{MM}\n}}\n{MM}", "only one way of a branch made the init"),
    (f"{SFPU}\n{COPY}\n{MM}", "another full init"),
    (f"{MM}\nttkernel.pack_reconfig_l1_acc(%c1) : index\n{MM}", "the packer's L1 accumulation switched"),
])
def test_a_full_init_stays_when_the_engines_may_be_configured_otherwise(body, why):
    calls = _calls(body)
    assert "mm_block_init_short" not in calls and calls.count("mm_block_init") == body.count("mm_block_init("), why


def test_an_operation_init_replaced_before_any_use_is_dropped():
    short = "ttkernel.mm_block_init_short(%a, %b, %c0, %c1, %c1, %c1) : !ttkernel.cb, !ttkernel.cb, index, index, index, index"
    assert _calls(f"{MM}\n{COPY}\n{short}\nttkernel.tile_regs_acquire()\n{COPY_INIT}\n{COPY}") == \
        ["mm_block_init", "copy_tile_init"]
    assert _calls(f"{MM}\n{short}\n{COPY}\n{COPY_INIT}\n{COPY}") == \
        ["mm_block_init", "mm_block_init_short", "copy_tile_init"]


@pytest.mark.parametrize("upper, kept", [(4, False), (0, True)])
def test_an_operation_init_a_running_loop_replaces_first_is_dropped(upper, kept):
    short = "ttkernel.mm_block_init_short(%a, %b, %c0, %c1, %c1, %c1) : !ttkernel.cb, !ttkernel.cb, index, index, index, index"
    module = compute_kernel(f"{MM}\n{COPY}\n{short}\nscf.for %i = %c0 to %c4 step %c1 {{\n"
                            f"ttkernel.tile_regs_acquire()\n{COPY_INIT}\n{COPY}\n}}", ("a", "b", "o"), upper)
    TtlTrimInits().apply(None, module)
    calls = [op.api.name for op in module.walk() if isinstance(op, ApiCallOp) and op.api.configures]
    assert ("mm_block_init_short" in calls) == kept, calls
