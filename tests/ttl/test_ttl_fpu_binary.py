"""``a + b``, ``a - b`` and ``a * b`` of two buffer tiles run on the FPU (``add_tiles`` /
``sub_tiles`` / ``mul_tiles``, reading both tiles from their buffers into one DST slot), as TT-Lang's
compiler lowers them by default; an operand computed in DST, or float32 operands (the FPU's source
registers hold 19 bits), keep the SFPU form; ``options="--no-ttl-fpu-binary-ops"`` keeps the SFPU
form everywhere. Simulated against numpy, both forms; the compute kernel's C++ is checked against
the real headers."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.codegen.cpp import emit_kernel
from tilefold.frontend.ttl import session
from ttl_helpers import compiled, tile_tensor, zeros


def _operation(options: str | None = None):
    @ttl.operation(grid=(1, 1), options=options)
    def mixed(a, b, c, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(2, 2), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(2, 2), block_count=2)
        c_dfb = ttl.make_dataflow_buffer_like(c, shape=(2, 2), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(2, 2), block_count=2)

        @ttl.compute()
        def compute():
            for _ in range(2):
                with a_dfb.wait() as x, b_dfb.wait() as y, c_dfb.wait() as z, o_dfb.reserve() as o:
                    # x + y and x * z read two buffers (FPU); ... - y reads a DST value (SFPU)
                    o.store(ttl.math.exp(x + y) - y + x * z)

        @ttl.datamovement()
        def read():
            for i in range(2):
                with a_dfb.reserve() as x, b_dfb.reserve() as y, c_dfb.reserve() as z:
                    ttl.copy(a[0:2, 2 * i:2 * i + 2], x).wait()
                    ttl.copy(b[0:2, 2 * i:2 * i + 2], y).wait()
                    ttl.copy(c[0:2, 2 * i:2 * i + 2], z).wait()

        @ttl.datamovement()
        def write():
            for i in range(2):
                with o_dfb.wait() as o:
                    ttl.copy(o, out[0:2, 2 * i:2 * i + 2]).wait()

    return mixed


FPU, SFPU = _operation(), _operation("--no-ttl-fpu-binary-ops")


def _inputs(dtype="bfloat16"):
    return [tile_tensor((64, 128), seed=s, dtype=dtype, scale=0.5) for s in (1, 2, 3)]


def _expected(a, b, c) -> np.ndarray:
    x, y, z = (ttnn.to_numpy(t).astype(np.float64) for t in (a, b, c))
    return np.exp(x + y) - y + x * z


def _compute_source(operation, *tensors) -> str:
    program = compiled(operation, *tensors).program
    return emit_kernel(next(k for k in program.kernels if k.name == "compute").function)


def test_two_buffer_tiles_are_added_and_multiplied_on_the_fpu():
    a, b, c = _inputs()
    source = _compute_source(FPU, a, b, c, zeros((64, 128)))
    assert "binary_op_init_common(a_dfb, b_dfb, o_dfb)" in source      # the region starts with the FPU add
    assert "add_tiles(a_dfb, b_dfb" in source and "mul_tiles(a_dfb, c_dfb" in source
    assert "mul_binary_tile(" not in source and "copy_tile(c_dfb" not in source
    # exp(x + y) - y and the last + read values in DST: the SFPU's, y copied into DST for the first
    assert "sub_binary_tile(" in source and source.count("add_binary_tile(") == 1 and "copy_tile(b_dfb" in source


@pytest.mark.parametrize("operation", [FPU, SFPU], ids=["fpu", "sfpu"])
def test_both_forms_compute_the_expression(operation):
    a, b, c = _inputs()
    out = zeros((64, 128))
    operation(a, b, c, out)
    np.testing.assert_allclose(ttnn.to_numpy(out).astype(np.float64), _expected(a, b, c), rtol=2e-2, atol=3e-2)


def test_the_fpu_form_takes_less_compute_time():
    a, b, c = _inputs()
    perf = {}
    for name, operation in (("fpu", FPU), ("sfpu", SFPU)):
        operation(a, b, c, zeros((64, 128)))
        perf[name] = session.settings().runs[-1][1].perf
    busy = {name: max(float(t.busy_cycles.max()) for t in p.threads if t.role == "compute")
            for name, p in perf.items()}
    assert busy["fpu"] < busy["sfpu"], busy
    assert perf["fpu"].cycles < perf["sfpu"].cycles
    # exp, - and the last + on the SFPU (3 a tile), against those and the two binaries (5 a tile)
    assert (perf["fpu"].counters.sfpu_tiles, perf["sfpu"].counters.sfpu_tiles) == (3 * 8, 5 * 8)


def test_options_given_to_one_call_hold_for_that_call():
    """``op(..., options="--no-ttl-fpu-binary-ops")`` keeps the SFPU form for that call only (its
    compiled program is another than the decorator's options give)."""
    a, b, c = _inputs()
    perf = {}
    for name, options in (("sfpu", "--no-ttl-fpu-binary-ops"), ("fpu", None)):
        FPU(a, b, c, zeros((64, 128)), **({"options": options} if options else {}))
        perf[name] = session.settings().runs[-1][1].perf
    assert (perf["fpu"].counters.sfpu_tiles, perf["sfpu"].counters.sfpu_tiles) == (3 * 8, 5 * 8)
    assert FPU.options.get("fpu_binary_ops") is None        # the decorator's options are as they were


def test_float32_operands_stay_on_the_sfpu():
    a, b, c = _inputs("float32")
    out = zeros((64, 128), "float32")
    source = _compute_source(FPU, a, b, c, out)
    assert "add_tiles(" not in source and "add_binary_tile(" in source
    FPU(a, b, c, out)
    np.testing.assert_allclose(ttnn.to_numpy(out).astype(np.float64), _expected(a, b, c), rtol=1e-5, atol=1e-5)


def test_the_fpu_compute_kernel_compiles_against_the_real_compute_headers(tmp_path, check_kernel):
    a, b, c = _inputs()
    program = compiled(FPU, a, b, c, zeros((64, 128))).program
    kernel = next(k for k in program.kernels if k.name == "compute")
    path = tmp_path / "compute.cpp"
    path.write_text(emit_kernel(kernel.function))
    for result in check_kernel.check_kernels([(path, "compute", check_kernel.accessor_compile_args(program, kernel))]):
        check_kernel.require_accepted(result)


@ttl.operation(grid=(1, 1))
def difference_of_two_blocks(a, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=2)

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, a_dfb.wait() as y, o_dfb.reserve() as o:
            o.store(x - y)

    @ttl.datamovement()
    def read():
        for i in range(2):
            with a_dfb.reserve() as x:
                ttl.copy(a[0:1, 2 * i:2 * i + 2], x).wait()

    @ttl.datamovement()
    def write():
        with o_dfb.wait() as o:
            ttl.copy(o, out[0:1, 0:2]).wait()


def test_an_fpu_binary_of_two_blocks_of_one_buffer_reads_the_second_past_the_first():
    a, out = tile_tensor((32, 128), seed=4), zeros((32, 64))
    source = _compute_source(difference_of_two_blocks, a, out)
    assert "sub_tiles(a_dfb, a_dfb, i1, i1 + 2, i1)" in source, source
    difference_of_two_blocks(a, out)
    x = ttnn.to_numpy(a).astype(np.float64)
    np.testing.assert_allclose(ttnn.to_numpy(out).astype(np.float64), x[:, :64] - x[:, 64:], atol=2e-2, rtol=1e-2)
