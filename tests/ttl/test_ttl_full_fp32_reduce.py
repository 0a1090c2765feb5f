"""Reductions in full float32, as TT-Lang compiles them (its ``reduce-full-fp32`` option, on by
default): on Blackhole every reduction except a row reduction reads float32 operands whole
(``reduce_tile<..., true>``, a 32-bit DST); on Wormhole, or with ``--no-ttl-reduce-full-fp32``,
the source registers cut them to TF32. Simulated against numpy; the C++ is checked against the
real compute headers."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.codegen.cpp import emit_kernel
from tilefold.frontend.ttl.session import configured
from ttl_helpers import zeros


def _reduction(dims, options=None):
    @ttl.operation(grid=(1, 1), options=options)
    def reduce_op(x, scaler, out):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        s_dfb = ttl.make_dataflow_buffer_like(scaler, shape=(1, 1), block_count=1)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as xv, s_dfb.wait() as sv, o_dfb.reserve() as o:
                o.store(ttl.math.reduce_max(xv, sv, dims=dims))

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()
            with s_dfb.reserve() as blk:
                ttl.copy(scaler[0, 0], blk).wait()

        @ttl.datamovement()
        def write():
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()

    return reduce_op


SCALAR, COLUMNS, ROWS = _reduction([0, 1]), _reduction([0]), _reduction([1])
SCALAR_TF32 = _reduction([0, 1], "--no-ttl-reduce-full-fp32")
PEAK = np.float32(4.101493)           # 24 significant bits; TF32 keeps 11: 4.097656


def _tensors():
    values = np.full((32, 32), -1e9, np.float32)
    values[3, 5] = PEAK
    x = ttnn.from_numpy(values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    scaler = ttnn.from_numpy(np.ones((32, 32), np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    return x, scaler, zeros((32, 32), "float32")


def _tf32(value) -> np.float32:
    """``value`` as the source registers hold a float32: its 10 highest mantissa bits."""
    return np.array([value], np.float32).view(np.uint32).__and__(np.uint32(0xFFFFE000)).view(np.float32)[0]


@pytest.mark.parametrize("arch, operation, at, exact", [
    ("blackhole", SCALAR, (0, 0), True),
    ("blackhole", COLUMNS, (0, 5), True),
    ("blackhole", ROWS, (3, 0), False),          # a row reduction keeps TF32 on Blackhole (as TT-Lang)
    ("blackhole", SCALAR_TF32, (0, 0), False),
    ("wormhole_b0", SCALAR, (0, 0), False),
])
def test_a_float32_reduction_is_exact_where_tt_lang_computes_it_in_full_float32(arch, operation, at, exact):
    x, scaler, out = _tensors()
    with configured(arch=arch):
        operation(x, scaler, out)
    got = ttnn.to_numpy(out)[at]
    assert got == (PEAK if exact else _tf32(PEAK)), got


def test_the_full_float32_reduction_compiles_against_the_real_compute_headers(tmp_path, check_kernel, monkeypatch):
    from tilefold.arch import get_arch
    from tilefold.run.ttl import compile_built

    x, scaler, out = _tensors()
    with configured(arch="blackhole"):
        program = compile_built(SCALAR.build((x, scaler, out), {}), get_arch("blackhole")).program
    kernel = next(k for k in program.kernels if k.name == "compute")
    source = emit_kernel(kernel.function)
    assert "reduce_tile<PoolType::MAX, ReduceDim::REDUCE_SCALAR, true>(" in source
    assert "reduce_uninit<true>(" in source
    assert kernel.config.fp32_dest_acc_en
    path = tmp_path / "compute.cpp"
    path.write_text(source)
    monkeypatch.setenv("ACC", "true")           # the checker's DST_ACCUM_MODE: the kernel's 32-bit DST
    for result in check_kernel.check_kernels([(path, "compute", check_kernel.accessor_compile_args(program, kernel))]):
        check_kernel.require_accepted(result)
