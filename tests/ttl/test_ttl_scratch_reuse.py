"""The compute kernel's internal buffers (a typecast or transpose an operation reads from a
circular buffer, such as a matmul operand) are reused by later statements once the kernel is done
with them: two statements that each cast a bfloat8_b block for a matmul take one circular buffer,
so an operation close to the 32 circular buffers of a node still fits. Casts read at once keep
buffers of their own. Run on the simulated device against numpy; the compute kernel's C++ is
checked against the real 0.69 headers."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.codegen.cpp import emit_kernel
from ttl_helpers import compiled

TS = 32


@ttl.operation(grid=(1, 1))
def chained_cast_matmuls(x, y, w, out):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
    w_dfb = ttl.make_dataflow_buffer_like(w, shape=(1, 1), block_count=2)
    mid_dfb = ttl.make_dataflow_buffer_like(w, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(2):
            with x_dfb.wait() as xb, w_dfb.wait() as wb, mid_dfb.reserve() as m:
                m.store(wb @ ttl.math.typecast(xb, ttnn.bfloat16))
            with y_dfb.wait() as yb, mid_dfb.wait() as mb, out_dfb.reserve() as o:
                o.store(mb @ ttl.math.typecast(yb, ttnn.bfloat16))

    @ttl.datamovement()
    def read():
        for i in range(2):
            with x_dfb.reserve() as xb, y_dfb.reserve() as yb, w_dfb.reserve() as wb:
                ttl.copy(x[i:i + 1, 0:1], xb).wait()
                ttl.copy(y[i:i + 1, 0:1], yb).wait()
                ttl.copy(w[i:i + 1, 0:1], wb).wait()

    @ttl.datamovement()
    def write():
        for i in range(2):
            with out_dfb.wait() as o:
                ttl.copy(o, out[i:i + 1, 0:1]).wait()


@ttl.operation(grid=(1, 1))
def both_cast_at_once(x, y, out):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with x_dfb.wait() as xb, y_dfb.wait() as yb, out_dfb.reserve() as o:
            o.store(ttl.math.typecast(xb, ttnn.bfloat16) @ ttl.math.typecast(yb, ttnn.bfloat16))

    @ttl.datamovement()
    def read():
        with x_dfb.reserve() as xb, y_dfb.reserve() as yb:
            ttl.copy(x[0:1, 0:1], xb).wait()
            ttl.copy(y[0:1, 0:1], yb).wait()

    @ttl.datamovement()
    def write():
        with out_dfb.wait() as o:
            ttl.copy(o, out[0:1, 0:1]).wait()


def _tensor(values, dtype):
    return ttnn.from_numpy(values.astype(np.float32), dtype=dtype, layout=ttnn.TILE_LAYOUT)


def _casts(result) -> list:
    return [cb for cb in result.program.circular_buffers if "typecast" in (cb.name or "")]


def _close(got, exact):
    assert np.abs(got - exact).max() <= 2 ** -6 * np.abs(exact).max()


def test_casts_of_successive_statements_share_one_buffer_and_match_numpy(tmp_path, check_kernel):
    rng = np.random.default_rng(3)
    x, y = (_tensor(rng.standard_normal((2 * TS, TS)), ttnn.bfloat8_b) for _ in range(2))
    w = _tensor(rng.standard_normal((2 * TS, TS)), ttnn.bfloat16)
    out = _tensor(np.zeros((2 * TS, TS)), ttnn.bfloat16)
    result = compiled(chained_cast_matmuls, x, y, w, out)
    assert len(_casts(result)) == 1
    chained_cast_matmuls(x, y, w, out)
    xs, ys, ws = (ttnn.to_numpy(t).astype(np.float64).reshape(2, TS, TS) for t in (x, y, w))
    _close(ttnn.to_numpy(out).reshape(2, TS, TS), ws @ xs @ ys)
    path = tmp_path / "compute.cpp"
    path.write_text(emit_kernel(next(k for k in result.program.kernels if k.is_compute).function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


def test_casts_read_by_one_matmul_keep_buffers_of_their_own():
    rng = np.random.default_rng(4)
    x, y = (_tensor(rng.standard_normal((TS, TS)), ttnn.bfloat8_b) for _ in range(2))
    out = _tensor(np.zeros((TS, TS)), ttnn.bfloat16)
    assert len(_casts(compiled(both_cast_at_once, x, y, out))) == 2
    both_cast_at_once(x, y, out)
    xs, ys = (ttnn.to_numpy(t).astype(np.float64) for t in (x, y))
    _close(ttnn.to_numpy(out), xs @ ys)
