"""Compute on tiles smaller than 32x32, as TT-Lang's sub-tile programs write it: the unpacker lays a
small tile's faces into DST, the math runs on them, the packer writes them back. Element-wise math
on every shape (16x32, 32x16, 16x16, 8x32 ...); matmuls (small tiles on the left), reductions and
broadcasts on tiles at most 16 rows high, whose faces lie where a 32x32 tile's top rows do. Run
against numpy, the kernels and host program checked against the real headers, the rest refused
at the user's line."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error, recorded_programs

COLUMNS = 3          # tiles along the second dimension


@ttl.operation(grid=(1, 1))
def fused(a, b, y):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(2, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(2, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(2, 1), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(COLUMNS):
            with a_dfb.wait() as x, b_dfb.wait() as z, y_dfb.reserve() as out:
                out.store(ttl.math.exp(x) * z + x - 1.0)

    @ttl.datamovement()
    def read():
        for c in range(COLUMNS):
            with a_dfb.reserve() as x, b_dfb.reserve() as z:
                ttl.copy(a[0:2, c], x).wait()
                ttl.copy(b[0:2, c], z).wait()

    @ttl.datamovement()
    def write():
        for c in range(COLUMNS):
            with y_dfb.wait() as out:
                ttl.copy(out, y[0:2, c]).wait()


def _tensor(values, tile, dtype=ttnn.bfloat16):
    return ttnn.from_numpy(values, dtype=dtype, layout=ttnn.TILE_LAYOUT, tile=ttnn.Tile(tile))


def _run(tile, dtype=ttnn.bfloat16, seed=51):
    h, w = tile
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal((2 * h, COLUMNS * w)).astype(np.float32) for _ in range(2))
    ta, tb = _tensor(a, tile, dtype), _tensor(b, tile, dtype)
    y = _tensor(np.zeros_like(a), tile, dtype)
    fused(ta, tb, y)
    x, z = (ttnn.to_numpy(t).astype(np.float32) for t in (ta, tb))
    return ttnn.to_numpy(y).astype(np.float32), np.exp(x) * z + x - 1.0


@pytest.mark.parametrize("tile", [(16, 32), (32, 16), (16, 16), (8, 32), (1, 16)])
def test_element_wise_math_on_small_tiles_against_numpy(tile):
    got, expected = _run(tile)
    np.testing.assert_allclose(got, expected, rtol=2e-2, atol=5e-2)


def test_float32_small_tiles_keep_float32_precision():
    got, expected = _run((16, 32), ttnn.float32)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@ttl.operation(grid=(1, 1))
def integer_sum(a, b, y):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, b_dfb.wait() as z, y_dfb.reserve() as out:
            out.store(x + z)

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as x, b_dfb.reserve() as z:
            ttl.copy(a[0, 0], x).wait()
            ttl.copy(b[0, 0], z).wait()

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as out:
            ttl.copy(out, y[0, 0]).wait()


def test_integer_small_tiles_add_exactly():
    rng = np.random.default_rng(52)
    a, b = (rng.integers(-2 ** 30, 2 ** 30, (16, 32)).astype(np.int32) for _ in range(2))
    y = _tensor(np.zeros_like(a), (16, 32), ttnn.int32)
    integer_sum(_tensor(a, (16, 32), ttnn.int32), _tensor(b, (16, 32), ttnn.int32), y)
    np.testing.assert_array_equal(ttnn.to_numpy(y), a + b)


def test_small_tile_programs_compile_against_the_real_headers(tmp_path, check_kernel):
    from checkhost import check_hosts, require_hosts_accepted
    from tilefold.codegen.cpp import emit_kernel
    from tilefold.frontend.ttl import session

    with session.configured(project_dir=tmp_path), recorded_programs() as programs:
        _run((16, 32))
    compute = next(k for k in programs[0].kernels if k.is_compute)
    path = tmp_path / "compute.cpp"
    path.write_text(emit_kernel(compute.function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))
    mains = sorted(tmp_path.glob("*/main.cpp"))
    assert mains and "set_tile_dims" in mains[0].read_text() and "Tile({16, 32})" in mains[0].read_text()
    require_hosts_accepted(check_hosts(mains))


def _one_tile_operation(body):
    @ttl.operation(grid=(1, 1))
    def op(a, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=1)

        @ttl.compute()
        def compute():
            with a_dfb.wait() as x, y_dfb.reserve() as out:
                out.store(body(x))

    return op


def test_a_matmul_of_small_right_tiles_is_refused():
    def body(x):
        return x @ x  # error

    small = _tensor(np.zeros((16, 16), np.float32), (16, 16))
    expect_error(lambda: _one_tile_operation(body)(small, _tensor(np.zeros((16, 16), np.float32), (16, 16))),
                 body, KernelError, "a @ b of blocks of 16x16 and 16x16 tiles", "right operand of 32x32 tiles")


def test_a_reduction_of_tiles_two_faces_high_is_refused():
    def body(x):
        return ttl.math.reduce_sum(x, dims=[1])  # error

    small = _tensor(np.zeros((32, 16), np.float32), (32, 16))
    expect_error(lambda: _one_tile_operation(body)(small, _tensor(np.zeros((32, 16), np.float32), (32, 16))),
                 body, KernelError, "reduce_sum of a block of 32x16 tiles is not supported", "at most 16 rows high")


@ttl.operation(grid=(1, 1))
def positional(a, b, product, row_softmax_sums, column_max):
    """Tiles at most 16 rows high in the ops that depend on positions: ``a @ b`` with ``a`` of
    small tiles and ``b`` of 32x32 ones, a row reduction broadcast back, a column maximum."""
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=1)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(2, 2), block_count=1)
    p_dfb = ttl.make_dataflow_buffer_like(product, shape=(1, 2), block_count=1)
    m_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    s_dfb = ttl.make_dataflow_buffer_like(row_softmax_sums, shape=(1, 2), block_count=1)
    c_dfb = ttl.make_dataflow_buffer_like(column_max, shape=(1, 2), block_count=1)

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x:
            with b_dfb.wait() as w, p_dfb.reserve() as o:
                o.store(x @ w)
            with m_dfb.reserve() as m:
                m.store(ttl.math.reduce_max(x, dims=[1]))
            with m_dfb.wait() as m, s_dfb.reserve() as o:
                shifted = ttl.math.exp(x - ttl.math.broadcast(m, dims=[1], shape=(1, 2)))
                o.store(ttl.math.broadcast(ttl.math.reduce_sum(shifted, dims=[1]), dims=[1], shape=(1, 2)))
            with c_dfb.reserve() as o:
                o.store(ttl.math.reduce_max(x, dims=[0]))

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as x, b_dfb.reserve() as w:
            ttl.copy(a[0:1, 0:2], x).wait()
            ttl.copy(b[0:2, 0:2], w).wait()

    @ttl.datamovement()
    def write():
        for dfb, tensor in ((p_dfb, product), (s_dfb, row_softmax_sums), (c_dfb, column_max)):
            with dfb.wait() as o:
                ttl.copy(o, tensor[0:1, 0:2]).wait()


@pytest.mark.parametrize("tile", [(16, 32), (8, 32), (1, 32)])
def test_matmul_reductions_and_broadcasts_of_tiles_one_face_high(tile):
    h = tile[0]
    rng = np.random.default_rng(53)
    a = _tensor(rng.standard_normal((h, 64)).astype(np.float32) - 2.0, tile)      # (column maxima below 0)
    b = ttnn.from_numpy(rng.standard_normal((64, 64)).astype(np.float32), dtype=ttnn.bfloat16,
                        layout=ttnn.TILE_LAYOUT)
    outs = [_tensor(np.zeros((h, 64), np.float32), tile) for _ in range(3)]
    positional(a, b, *outs)
    x, w = ttnn.to_numpy(a).astype(np.float64), ttnn.to_numpy(b).astype(np.float64)
    product, sums, maxima = (ttnn.to_numpy(t).astype(np.float64) for t in outs)
    np.testing.assert_allclose(product, x @ w, rtol=2e-2, atol=0.3)
    expected_sums = np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True) * np.ones((1, 64))
    np.testing.assert_allclose(sums, expected_sums, rtol=2e-2, atol=0.1)
    np.testing.assert_array_equal(maxima[0], x.max(axis=0))
    np.testing.assert_array_equal(maxima[1:], 0.0)


def test_blocks_of_two_tile_shapes_are_refused():
    @ttl.operation(grid=(1, 1))
    def op(a, b, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=1)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=1)

        @ttl.compute()
        def compute():
            with a_dfb.wait() as x, b_dfb.wait() as z, y_dfb.reserve() as out:
                out.store(x + z)  # error

    a = _tensor(np.zeros((16, 32), np.float32), (16, 32))
    b = ttnn.from_numpy(np.zeros((32, 32), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    expect_error(lambda: op(a, b, _tensor(np.zeros((16, 32), np.float32), (16, 32))),
                 test_blocks_of_two_tile_shapes_are_refused, KernelError, "add of blocks of 16x32 and 32x32 tiles")
