"""The element-wise functions TT-Lang also names on ``ttl`` itself (``ttl.recip``, ``ttl.silu``,
``ttl.div``, ``ttl.square`` ...) build the same block functions as their ``ttl.math`` / operator
spellings. Run on the simulated device and compared with numpy."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn


@ttl.operation(grid=(1, 1))
def top_level_chain(a, b, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 2), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=2)

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, b_dfb.wait() as y, out_dfb.reserve() as o:
            o.store(ttl.div(ttl.silu(x), ttl.square(y)) + ttl.recip(y) - ttl.min(x, y))

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as x, b_dfb.reserve() as y:
            ttl.copy(a[0:1, 0:2], x).wait()
            ttl.copy(b[0:1, 0:2], y).wait()

    @ttl.datamovement()
    def write():
        with out_dfb.wait() as o:
            ttl.copy(o, out[0:1, 0:2]).wait()


def test_top_level_recip_silu_div_square_min_match_numpy():
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, (32, 64)).astype(np.float32)
    y = rng.uniform(0.5, 2, (32, 64)).astype(np.float32)
    a, b = (ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT) for v in (x, y))
    out = ttnn.from_numpy(np.zeros((32, 64), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    top_level_chain(a, b, out)
    x, y = (ttnn.to_numpy(t).astype(np.float64) for t in (a, b))       # the bfloat16 inputs
    silu = x / (1 + np.exp(-x))
    want = silu / (y * y) + 1 / y - np.minimum(x, y)
    np.testing.assert_allclose(ttnn.to_numpy(out), want, rtol=3e-2, atol=3e-2)


def test_every_top_level_function_is_a_ttl_math_or_ttl_block_function():
    for name in ("exp2", "floor", "ceil", "trunc", "frac", "sign", "signbit", "gelu", "hardsigmoid", "expm1",
                 "softsign", "sin", "cos", "tan", "asin", "acos", "atan", "eq", "ne", "gt", "lt"):
        assert getattr(ttl, name).qualname == f"ttl.{name}"
        assert getattr(ttl.math, name).name == name
