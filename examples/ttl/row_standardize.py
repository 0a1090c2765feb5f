"""Row standardization on a grid of nodes: ``y = (x - mean) / sqrt(var + eps)`` along each row.

Each node takes a run of tile rows. ``ttl.math.reduce_sum`` over ``dims=[-1]`` leaves one value
per row in column 0 of a tile; ``ttl.math.broadcast`` spreads it back across the row. The per-row
values (the mean, then ``rsqrt(var + eps)``) are stored to a one-tile dataflow buffer and the
centred row to a row buffer, so each is computed once per tile row: an expression that used them
unstored would be recomputed for every tile it is fused into. TT-Lang
tensors live in DRAM in tile layout; ``tilefold.ops.row_standardize`` is the same computation on
row-major tensors, tilizing on the device.

Run: ``python examples/ttl/row_standardize.py`` — prints the error against numpy and the modeled
time beside the DRAM roofline.
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.frontend.ttl import session

TILE = 32
EPS = 1e-5


@ttl.operation(grid=(8, 8))
def row_standardize(x, y):
    row_tiles = x.shape[0] // TILE
    cols = x.shape[1] // TILE
    grid_cols, grid_rows = ttl.grid_size(dims=2)
    rows_per_node = row_tiles // (grid_cols * grid_rows)
    inv_n = 1.0 / x.shape[1]
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, cols), block_count=2)
    xm_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, cols), block_count=1)
    row_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=1)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, cols), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(rows_per_node):
            with x_dfb.wait() as x_blk:
                with row_dfb.reserve() as mean:
                    mean.store(ttl.math.reduce_sum(x_blk, dims=[-1], shape=(1, 1)) * inv_n)
                with row_dfb.wait() as mean, xm_dfb.reserve() as centred:
                    centred.store(x_blk - ttl.math.broadcast(mean, dims=[-1], shape=(1, cols)))
            with xm_dfb.wait() as centred:
                with row_dfb.reserve() as scale:
                    var = ttl.math.reduce_sum(centred * centred, dims=[-1], shape=(1, 1)) * inv_n
                    scale.store(ttl.math.rsqrt(var + EPS))
                with row_dfb.wait() as scale, y_dfb.reserve() as y_blk:
                    y_blk.store(centred * ttl.math.broadcast(scale, dims=[-1], shape=(1, cols)))

    @ttl.datamovement()
    def read():
        node_col, node_row = ttl.node(dims=2)
        first = (node_row * grid_cols + node_col) * rows_per_node
        for i in range(rows_per_node):
            with x_dfb.reserve() as x_blk:
                ttl.copy(x[first + i, :], x_blk).wait()

    @ttl.datamovement()
    def write():
        node_col, node_row = ttl.node(dims=2)
        first = (node_row * grid_cols + node_col) * rows_per_node
        for i in range(rows_per_node):
            with y_dfb.wait() as y_blk:
                ttl.copy(y_blk, y[first + i, :]).wait()


def reference(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + EPS)


def main(shape=(4096, 256), seed=0):
    """Run on random bfloat16 input; returns (result, reference in float64, modeled perf)."""
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape) * 3 + rng.uniform(-4, 4, (shape[0], 1))
    x = ttnn.from_numpy(data.astype(np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    y = ttnn.zeros(shape, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    with session.configured() as settings:
        row_standardize(x, y)
        perf = settings.runs[-1][1].perf
    return ttnn.to_numpy(y), reference(ttnn.to_numpy(x)), perf


if __name__ == "__main__":
    result, ref, perf = main()
    roofline = 2 * result.size * 2 / 288e9
    print("max abs error vs numpy:", float(np.abs(result - ref).max()))
    print(f"modeled {perf.seconds * 1e6:.1f} us, DRAM roofline {roofline * 1e6:.1f} us ({roofline / perf.seconds:.0%})")
