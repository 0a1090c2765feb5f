"""TT-Lang programs as TT-Lang's spec examples write them: a rank-0 (scalar) tensor read as one tile,
``ttnn.zeros`` outputs (float32 unless a dtype is given, as TT-Lang's simulator holds them), and a
compute kernel whose buffers differ in data format (bfloat16 inputs, a float32 accumulator and
output): every FPU read and pack sets the formats it needs. Simulated against numpy; the compute
kernel's C++ is checked against the real headers."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import compiled


@ttl.operation(grid=(1, 1))
def scaled_column_sums(a, d, z):
    """z[m] = sum over n of (a[n, m] + d)^2 for a (N, M) bfloat16 ``a``, a scalar ``d`` and a
    float32 row vector ``z`` (M,): a float32 accumulator over the row blocks of ``a``."""
    rows, cols = a.shape[0] // 32, a.shape[1] // 32
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, cols), block_count=2)
    d_dfb = ttl.make_dataflow_buffer_like(d, shape=(1, 1), block_count=1)
    z_dfb = ttl.make_dataflow_buffer_like(z, shape=(1, cols), block_count=1)

    @ttl.datamovement()
    def read():
        with d_dfb.reserve() as d_blk:
            ttl.copy(d[0, 0], d_blk).wait()
        for r in range(rows):
            with a_dfb.reserve() as a_blk:
                ttl.copy(a[slice(r, r + 1), :], a_blk).wait()

    @ttl.compute()
    def compute():
        with d_dfb.wait() as d_blk, z_dfb.reserve() as z_blk:
            d_wide = ttl.block.broadcast(d_blk, dims=[0, 1], shape=(1, cols))
            total = ttl.block.fill(0, shape=(1, cols))
            for _ in range(rows):
                with a_dfb.wait() as a_blk:
                    total += ttl.math.reduce_sum((a_blk + d_wide) ** 2, dims=[0], shape=(1, cols))
            z_blk.store(total)

    @ttl.datamovement()
    def write():
        with z_dfb.wait() as z_blk:
            ttl.copy(z_blk, z[0, :]).wait()


def _inputs():
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, (64, 64)).astype(ml_dtypes.bfloat16)
    d = np.float32(0.375)
    return a, d


def test_a_scalar_tensor_is_one_tile_and_comes_back_as_a_scalar():
    d = ttnn.from_numpy(np.float32(1.5), layout=ttnn.TILE_LAYOUT)
    assert tuple(d.shape) == () and tuple(d.padded_shape) == (32, 32)
    assert ttnn.to_numpy(d).shape == () and float(ttnn.to_numpy(d)) == 1.5


def test_host_made_tensors_are_float32_unless_a_dtype_is_given():
    # as TT-Lang's simulator holds them: TT-Lang's programs compare them with float32 torch tensors
    for made in (ttnn.zeros((2, 3)), ttnn.ones((2, 3)), ttnn.empty((2, 3)), ttnn.rand((2, 3)), ttnn.full((2, 3), 1.5)):
        assert made.dtype == ttnn.float32
    assert ttnn.zeros((2, 3), dtype=ttnn.float32).dtype == ttnn.float32
    assert ttnn.zeros((2, 3), dtype=ttnn.bfloat16).dtype == ttnn.bfloat16


def test_mixed_format_compute_with_a_scalar_matches_numpy():
    a, d = _inputs()
    a_t = ttnn.from_numpy(a, layout=ttnn.TILE_LAYOUT)
    d_t = ttnn.from_numpy(d, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    z_t = ttnn.zeros((64,), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    scaled_column_sums(a_t, d_t, z_t)
    expected = ((a.astype(np.float32) + d) ** 2).sum(axis=0)
    got = ttnn.to_numpy(z_t)
    assert got.shape == (64,)
    np.testing.assert_allclose(got, expected, rtol=2e-2, atol=2e-2)


def test_mixed_format_compute_kernel_compiles_against_the_real_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    a, d = _inputs()
    program = compiled(scaled_column_sums, ttnn.from_numpy(a, layout=ttnn.TILE_LAYOUT),
                       ttnn.from_numpy(d, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT),
                       ttnn.zeros((64,), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)).program
    kernel = next(k for k in program.kernels if k.name == "compute")
    text = emit_kernel(kernel.function)
    assert "reconfig_data_format" in text and "pack_reconfig_data_format" in text
    path = tmp_path / "compute.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


@ttl.operation(grid=(1, 3))
def column_copy(a, out):
    """Each node copies its share of ``a``'s tile columns (the last share is shorter), the share
    worked out in the operation's body from ``ttl.node`` with ``min``, as TT-Lang's spec does."""
    col_tiles = a.shape[1] // ttl.TILE_SHAPE[1]
    cols_per_node = -(-col_tiles // ttl.grid_size(dims=1))
    start = ttl.node(dims=1) * cols_per_node
    end = min(start + cols_per_node, col_tiles)
    dfb = ttl.make_dataflow_buffer_like(a, shape=(2, 1), block_count=2)

    @ttl.datamovement()
    def read():
        for ct in range(start, end):
            with dfb.reserve() as blk:
                ttl.copy(a[0:2, ct:ct + 1], blk).wait()

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def write():
        for ct in range(start, max(end, start)):
            with dfb.wait() as blk:
                ttl.copy(blk, out[0:2, ct:ct + 1]).wait()


def test_node_shares_with_min_in_the_operation_body():
    v = np.random.default_rng(2).standard_normal((64, 5 * 32)).astype(np.float32)
    a = ttnn.from_numpy(v, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((64, 5 * 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    column_copy(a, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), v)
