"""Reductions that name the leading (batch) dimensions of a block: the tiles along them combine
element-wise, then (with a tile dimension) reduce inside each tile; run against numpy, the C++
checked against the real headers."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error, recorded_programs, tile_tensor, zeros

SHAPE = (3, 2, 2)        # the block, in tiles: batch, rows, columns


def _reduce_of(dims):
    out_shape = tuple(1 if d in dims else s for d, s in enumerate(SHAPE))

    @ttl.operation(grid=(1, 1))
    def reduce_op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=SHAPE, block_count=1)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=out_shape, block_count=1)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as out:
                out.store(ttl.math.reduce_sum(a, dims=dims))

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as a:
                ttl.copy(x[0:3, 0:2, 0:2], a).wait()

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as out:
                ttl.copy(out, y[0:out_shape[0], 0:out_shape[1], 0:out_shape[2]]).wait()

    return reduce_op, out_shape


def _expected(values: np.ndarray, dims) -> np.ndarray:
    """TT-Lang's definition: tiles summed over the named dims, then rows / columns inside each
    tile into its first row / column."""
    tiles = values.reshape(3, 2, 32, 2, 32).transpose(0, 1, 3, 2, 4)
    summed = tiles.sum(axis=tuple(dims), keepdims=True)
    rows, cols = 1 in dims, 2 in dims
    out = np.zeros_like(summed) if rows or cols else summed
    if rows and cols:
        out[..., 0, 0] = summed.sum(axis=(-1, -2))
    elif cols:
        out[..., :, 0] = summed.sum(axis=-1)
    elif rows:
        out[..., 0, :] = summed.sum(axis=-2)
    b, r, c = out.shape[:3]
    return out.transpose(0, 1, 3, 2, 4).reshape(b, r * 32, c * 32)


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
@pytest.mark.parametrize("dims", [[0], [0, 1], [0, 2], [0, 1, 2]])
def test_reduce_sum_over_batch_dims_against_numpy(dims, dtype):
    """float32 blocks too, whose DST holds half as many tiles: the batch tiles' sums run in
    sub-blocks of the slices of each batch index, whose tile indices count from the whole block."""
    op, out_shape = _reduce_of(dims)
    x = tile_tensor((3, 64, 64), seed=31, dtype=dtype)
    y = zeros(tuple(n * 32 if i else n for i, n in enumerate(out_shape)), dtype=dtype)
    op(x, y)
    expected = _expected(ttnn.to_numpy(x).astype(np.float32), dims)
    scale = np.abs(expected).max()
    np.testing.assert_allclose(ttnn.to_numpy(y).astype(np.float32), expected, rtol=2e-2, atol=1e-2 * scale)


@ttl.operation(grid=(1, 1))
def batch_of_expressions(x, y, z):
    """Over the two batch dims of a 4-D block, the sum of an expression (materialized first);
    over one of them, the largest element of each position."""
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(2, 3, 1, 2), block_count=1)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1, 1, 2), block_count=1)
    z_dfb = ttl.make_dataflow_buffer_like(z, shape=(2, 1, 1, 2), block_count=1)

    @ttl.compute()
    def compute():
        with x_dfb.wait() as a:
            with y_dfb.reserve() as out:
                out.store(ttl.math.reduce_sum(ttl.math.exp(a) * 0.5, dims=[0, 1]))
            with z_dfb.reserve() as out:
                out.store(ttl.math.reduce_max(a, dims=[1]) + 1.0)

    @ttl.datamovement()
    def read():
        with x_dfb.reserve() as a:
            ttl.copy(x[0:2, 0:3, 0:1, 0:2], a).wait()

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as out:
            ttl.copy(out, y[0:1, 0:1, 0:1, 0:2]).wait()
        with z_dfb.wait() as out:
            ttl.copy(out, z[0:2, 0:1, 0:1, 0:2]).wait()


def _run_expressions():
    x, y, z = tile_tensor((2, 3, 32, 64), seed=32), zeros((1, 1, 32, 64)), zeros((2, 1, 32, 64))
    batch_of_expressions(x, y, z)
    return x, y, z


def test_reductions_of_expressions_over_batch_dims_only():
    x, y, z = _run_expressions()
    v = ttnn.to_numpy(x).astype(np.float32)
    summed = (np.exp(v) * 0.5).sum(axis=(0, 1), keepdims=True)
    np.testing.assert_allclose(ttnn.to_numpy(y).astype(np.float32), summed, rtol=2e-2, atol=0.1)
    np.testing.assert_allclose(ttnn.to_numpy(z).astype(np.float32), v.max(axis=1, keepdims=True) + 1.0,
                               rtol=1e-2, atol=2e-2)


def test_batch_reductions_compile_against_the_real_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    with recorded_programs() as programs:
        _run_expressions()
    compute = next(k for k in programs[0].kernels if k.is_compute)
    text = emit_kernel(compute.function)
    assert "add_tiles" in text and "max" in text
    path = tmp_path / "compute.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


def test_a_scaler_with_batch_dims_only_is_refused():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=SHAPE, block_count=1)
        s_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1, 1), block_count=1)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 2, 2), block_count=1)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, s_dfb.wait() as s, y_dfb.reserve() as out:
                out.store(ttl.math.reduce_sum(a, s, dims=[0]))  # error

    expect_error(lambda: op(tile_tensor((3, 64, 64)), zeros((1, 64, 64))),
                 test_a_scaler_with_batch_dims_only_is_refused, KernelError, "batch dims [0] only", "no scaler")
