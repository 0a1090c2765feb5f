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


def _matmul_op(transposed: bool):
    """(64 x 96) @ (96 x 64) with ``ttl.matmul``; with ``transposed`` the right operand comes as its
    (64 x 96) transpose and ``transpose_rhs=True`` turns it back."""

    @ttl.operation(grid=(1, 1))
    def op(a, b, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(2, 3), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(2, 3) if transposed else (3, 2), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(2, 2), block_count=2)

        @ttl.compute()
        def compute():
            with a_dfb.wait() as x, b_dfb.wait() as y, o_dfb.reserve() as o:
                if transposed:
                    o.store(ttl.matmul(x, y, transpose_rhs=True))
                else:
                    o.store(ttl.math.matmul(x, y, o))      # the older spelling names the output block

        @ttl.datamovement()
        def read():
            with a_dfb.reserve() as x, b_dfb.reserve() as y:
                ttl.copy(a[0:2, 0:3], x).wait()
                ttl.copy(b[0:2, 0:3] if transposed else b[0:3, 0:2], y).wait()

        @ttl.datamovement()
        def write():
            with o_dfb.wait() as o:
                ttl.copy(o, out[0:2, 0:2]).wait()

    return op


def test_matmul_function_with_and_without_a_transposed_rhs():
    rng = np.random.default_rng(3)
    a_host = rng.standard_normal((64, 96)).astype(np.float32)
    b_host = rng.standard_normal((96, 64)).astype(np.float32)
    for transposed in (False, True):
        a = ttnn.from_numpy(a_host, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
        b = ttnn.from_numpy(b_host.T.copy() if transposed else b_host, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
        out = ttnn.zeros((64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
        _matmul_op(transposed)(a, b, out)
        b_values = ttnn.to_numpy(b).astype(np.float64)
        reference = ttnn.to_numpy(a).astype(np.float64) @ (b_values.T if transposed else b_values)
        # a float32 DST sums K; the result is rounded once to bfloat16 (half a unit at |x| < 64)
        np.testing.assert_allclose(ttnn.to_numpy(out), reference, rtol=2 ** -8, atol=2 ** -3)


def test_matmul_into_an_output_block_of_another_shape():
    from tilefold.errors import KernelError
    from ttl_helpers import expect_error, tile_tensor, zeros

    @ttl.operation(grid=(1, 1))
    def op(a, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(2, 2), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=2)

        @ttl.compute()
        def compute():
            with a_dfb.wait() as x, o_dfb.reserve() as o:
                o.store(ttl.math.matmul(x, x, o))  # error

        @ttl.datamovement()
        def read():
            with a_dfb.reserve() as x:
                ttl.copy(a[0:2, 0:2], x).wait()

        @ttl.datamovement()
        def write():
            with o_dfb.wait() as o:
                ttl.copy(o, out[0:1, 0:2]).wait()

    expect_error(lambda: op(tile_tensor((64, 64)), zeros((32, 64))), test_matmul_into_an_output_block_of_another_shape,
                 KernelError, "the product is 2x2 but o is 1x2")


@ttl.operation(grid=(1, 1))
def compared_with_numbers(a, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=2)

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, out_dfb.reserve() as o:
            o.store(ttl.math.where(x > 0.0, x, 0.5 * x) + (x <= -1.0) + ttl.ne(1.5, x) * 2.0)

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as x:
            ttl.copy(a[0:1, 0:2], x).wait()

    @ttl.datamovement()
    def write():
        with out_dfb.wait() as o:
            ttl.copy(o, out[0:1, 0:2]).wait()


def test_a_block_compared_with_a_number():
    """``x > 0.0``, ``x <= -1.0``, ``ttl.ne(1.5, x)``: the number fills a block like ``x``."""
    values = np.random.default_rng(4).uniform(-3, 3, (32, 64)).astype(np.float32)
    values[0, :4] = (0.0, -1.0, 1.5, 2.0)
    a = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    compared_with_numbers(a, out)
    x = ttnn.to_numpy(a).astype(np.float32)
    want = np.where(x > 0, x, 0.5 * x) + (x <= -1.0) + (x != 1.5) * 2.0
    np.testing.assert_allclose(ttnn.to_numpy(out).astype(np.float32), want, rtol=1e-2, atol=1e-2)
