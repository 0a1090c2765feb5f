"""``ttl.math.reduce_sum(x, scaler_blk, [out_blk,] dims=...)`` and ``reduce_max`` likewise: the block
is the reduce's scaler tile, weighted as the hardware weights it (the first row of each of its
faces scales the input's face); ``ttl.math.fill(expr, value)`` takes the expression's shape. Run
on the simulated device against numpy; the compute C++ checked against the real headers."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.codegen.cpp import emit_kernel
from tilefold.errors import TilefoldError
from ttl_helpers import compiled, expect_error

TS = 32


def _reduce_kernel(dims, pool="sum", with_out=False):
    @ttl.operation(grid=(1, 1))
    def reduce_with_scaler(x, scaler, out):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(2, 2), block_count=1)
        s_dfb = ttl.make_dataflow_buffer_like(scaler, shape=(1, 1), block_count=1)
        out_shape = (1 if 0 in dims else 2, 1 if 1 in dims else 2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=out_shape, block_count=1)

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as xb:
                ttl.copy(x[0:2, 0:2], xb).wait()
            with s_dfb.reserve() as sb:
                ttl.copy(scaler[0, 0], sb).wait()

        @ttl.compute()
        def compute():
            with x_dfb.wait() as xv, s_dfb.wait() as sc, o_dfb.reserve() as o:
                reduce = ttl.math.reduce_max if pool == "max" else ttl.math.reduce_sum
                if with_out:
                    o.store(reduce(xv, sc, o, dims=dims))
                else:
                    o.store(reduce(xv, sc, dims=dims))

        @ttl.datamovement()
        def write():
            with o_dfb.wait() as ob:
                ttl.copy(ob, out[0:out_shape[0], 0:out_shape[1]]).wait()

    return reduce_with_scaler


def _tensor(values, dtype):
    return ttnn.from_numpy(np.asarray(values, np.float32), dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT)


def _weights(scaler, dim):
    """Per element of a tile: the scaler value the hardware multiplies it by (row 0 of the scaler's
    face of the same position; REDUCE_ROW indexes it by column, REDUCE_COL by row)."""
    w = np.empty((TS, TS))
    for r in range(TS):
        for c in range(TS):
            face_row, face_col = 16 * (r // 16), 16 * (c // 16)
            w[r, c] = scaler[face_row, c] if dim == "row" else scaler[face_row, face_col + r % 16]
    return w


def _inputs(dtype, seed):
    rng = np.random.default_rng(seed)
    x = _tensor(rng.standard_normal((2 * TS, 2 * TS)), dtype)
    s = _tensor(rng.integers(1, 9, (TS, TS)) / 4.0, dtype)     # non-uniform, exact in bf16
    return x, s, ttnn.to_numpy(x).astype(np.float64), ttnn.to_numpy(s).astype(np.float64)


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_reduce_sum_along_rows_weights_each_column_by_the_scaler_blocks_first_face_rows(dtype):
    x, s, xv, sv = _inputs(dtype, 1)
    out = _tensor(np.zeros((2 * TS, TS)), dtype)
    _reduce_kernel([1])(x, s, out)
    w = _weights(sv, "row")
    tiles = xv.reshape(2, TS, 2, TS)
    expected = (tiles * w[None, :, None, :]).sum(axis=(2, 3)).reshape(2 * TS)
    got = ttnn.to_numpy(out)[:, 0]
    tol = 1e-2 if dtype == "bfloat16" else 2e-3
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * np.abs(expected).max())
    # the uniform-ones result differs: the scaler is really used
    assert np.abs(got - tiles.sum(axis=(2, 3)).reshape(-1)).max() > 1.0


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_reduce_sum_along_columns_weights_each_row_by_the_scaler_blocks_first_face_rows(dtype):
    x, s, xv, sv = _inputs(dtype, 2)
    out = _tensor(np.zeros((TS, 2 * TS)), dtype)
    _reduce_kernel([0])(x, s, out)
    w = _weights(sv, "col")
    tiles = xv.reshape(2, TS, 2, TS)
    expected = (tiles * w[None, :, None, :]).sum(axis=(0, 1)).reshape(2 * TS)
    got = ttnn.to_numpy(out)[0, :]
    tol = 1e-2 if dtype == "bfloat16" else 2e-3
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * np.abs(expected).max())


def test_reduce_max_along_rows_takes_the_largest_weighted_element():
    x, s, xv, sv = _inputs("bfloat16", 3)
    out = _tensor(np.zeros((2 * TS, TS)), "bfloat16")
    _reduce_kernel([1], pool="max")(x, s, out)
    w = _weights(sv, "row")
    expected = (xv.reshape(2, TS, 2, TS) * w[None, :, None, :]).max(axis=(2, 3)).reshape(2 * TS)
    np.testing.assert_allclose(ttnn.to_numpy(out)[:, 0], expected, rtol=1e-2, atol=1e-2)


def test_a_scalar_reduce_with_an_output_block_scales_twice_as_the_hardware_does():
    """reduce_sum(x, scaler, out_blk, dims=[0, 1]): the hardware pools the columns and then the
    pooled row, both with the scaler's weights, so a uniform 1/2 gives a quarter of the sum."""
    x, _, xv, _ = _inputs("bfloat16", 4)
    s = _tensor(np.full((TS, TS), 0.5), "bfloat16")
    out = _tensor(np.zeros((TS, TS)), "bfloat16")
    _reduce_kernel([0, 1], with_out=True)(x, s, out)
    np.testing.assert_allclose(ttnn.to_numpy(out)[0, 0], 0.25 * xv.sum(), rtol=1e-2, atol=0.1)


def test_the_form_before_1_0_with_an_output_block_reads_dims_as_1_x_does_without_a_warning():
    """reduce_sum(x, scaler, out, dims=[0]), TT-Lang's form before 1.0, reduces across rows (one
    value per column), as its documentation says and as 1.x reads dims: the same numbers as the
    form without the output block, and no warning."""
    import warnings

    x, s, _, _ = _inputs("bfloat16", 6)
    outs = [_tensor(np.zeros((TS, 2 * TS)), "bfloat16") for _ in range(2)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _reduce_kernel([0], with_out=True)(x, s, outs[0])
        _reduce_kernel([0])(x, s, outs[1])
    np.testing.assert_array_equal(ttnn.to_numpy(outs[0]), ttnn.to_numpy(outs[1]))
    assert np.abs(ttnn.to_numpy(outs[0])[0]).max() > 0


def test_the_compute_kernel_reads_the_programs_scaler_block_and_passes_check_kernel(tmp_path, check_kernel):
    x, s, _, _ = _inputs("bfloat16", 5)
    out = _tensor(np.zeros((2 * TS, TS)), "bfloat16")
    result = compiled(_reduce_kernel([1]), x, s, out)
    compute = emit_kernel(next(k for k in result.program.kernels if k.is_compute).function)
    assert "scaler tile" not in compute and compute.count("reduce_tile<") == 1
    path = tmp_path / "compute.cpp"
    path.write_text(compute)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


@ttl.operation(grid=(1, 1))
def filled_like_an_expression(a, b, out):
    """out = (a - b) * fill(a - b, 3): fill takes its shape from a block expression."""
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=1)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 2), block_count=1)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=1)

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
            ttl.copy(a[0:1, 0:2], ab).wait()
            ttl.copy(b[0:1, 0:2], bb).wait()

    @ttl.compute()
    def compute():
        with a_dfb.wait() as av, b_dfb.wait() as bv, o_dfb.reserve() as o:
            d = av - bv
            o.store(d * ttl.math.fill(d, 3.0))

    @ttl.datamovement()
    def write():
        with o_dfb.wait() as ob:
            ttl.copy(ob, out[0:1, 0:2]).wait()


def test_fill_takes_the_shape_of_a_block_expression(tmp_path, check_kernel):
    rng = np.random.default_rng(6)
    a, b = (_tensor(rng.standard_normal((TS, 2 * TS)), "float32") for _ in range(2))
    out = _tensor(np.zeros((TS, 2 * TS)), "float32")
    filled_like_an_expression(a, b, out)
    expected = 3.0 * (ttnn.to_numpy(a).astype(np.float64) - ttnn.to_numpy(b))
    np.testing.assert_allclose(ttnn.to_numpy(out), expected, rtol=1e-5, atol=1e-5)
    result = compiled(filled_like_an_expression, a, b, out)
    path = tmp_path / "compute.cpp"
    path.write_text(emit_kernel(next(k for k in result.program.kernels if k.is_compute).function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


def test_a_scaler_block_of_several_tiles_is_an_error_at_the_users_line():
    @ttl.operation(grid=(1, 1))
    def two_tile_scaler(x, scaler, out):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 2), block_count=1)
        s_dfb = ttl.make_dataflow_buffer_like(scaler, shape=(1, 2), block_count=1)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as xv, s_dfb.wait() as sc, o_dfb.reserve() as o:
                o.store(ttl.math.reduce_sum(xv, sc, dims=[1]))  # error

    x = _tensor(np.zeros((TS, 2 * TS)), "bfloat16")
    expect_error(lambda: two_tile_scaler(x, x, _tensor(np.zeros((TS, TS)), "bfloat16")),
                 test_a_scaler_block_of_several_tiles_is_an_error_at_the_users_line, TilefoldError,
                 "the scaler block is 1x2 tiles")
