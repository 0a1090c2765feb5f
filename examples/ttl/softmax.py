"""Softmax over each row of tiles: ``y = exp(x - max(x)) / sum(exp(x - max(x)))`` along the last dim.

``ttl.math.reduce_max`` / ``reduce_sum`` over ``dims=[-1]`` leave one value per row in column 0 of
each tile; ``ttl.math.broadcast`` spreads it back across the row. The compiler keeps the
reductions' results (and the exponentials the sum reads) in internal dataflow buffers, because
the hardware reduces and broadcasts tiles it reads from circular buffers.

Run: ``python examples/ttl/softmax.py``.
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32


@ttl.operation(grid=(1, 2))
def softmax(x, y):
    row_tiles = x.shape[0] // TILE
    cols = x.shape[1] // TILE
    _, grid_rows = ttl.grid_size(dims=2)
    rows_per_node = row_tiles // grid_rows
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, cols), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, cols), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(rows_per_node):
            with x_dfb.wait() as x_blk, y_dfb.reserve() as y_blk:
                peak = ttl.math.reduce_max(x_blk, dims=[-1], shape=(1, 1))
                shifted = ttl.math.exp(x_blk - ttl.math.broadcast(peak, dims=[-1], shape=(1, cols)))
                total = ttl.math.reduce_sum(shifted, dims=[-1], shape=(1, 1))
                y_blk.store(shifted * ttl.math.broadcast(ttl.math.recip(total), dims=[-1], shape=(1, cols)))

    @ttl.datamovement()
    def read():
        _, node_row = ttl.node(dims=2)
        for i in range(rows_per_node):
            with x_dfb.reserve() as x_blk:
                ttl.copy(x[node_row * rows_per_node + i, :], x_blk).wait()

    @ttl.datamovement()
    def write():
        _, node_row = ttl.node(dims=2)
        for i in range(rows_per_node):
            with y_dfb.wait() as y_blk:
                ttl.copy(y_blk, y[node_row * rows_per_node + i, :]).wait()


def reference(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def main(shape=(128, 256), seed=0):
    """Run on random bfloat16 input; returns (result, reference) — reference in float64."""
    rng = np.random.default_rng(seed)
    x = ttnn.from_numpy((rng.standard_normal(shape) * 2).astype(np.float32), dtype=ttnn.bfloat16,
                        layout=ttnn.TILE_LAYOUT)
    y = ttnn.zeros(shape, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    softmax(x, y)
    return ttnn.to_numpy(y), reference(ttnn.to_numpy(x))


if __name__ == "__main__":
    result, ref = main()
    print("max abs error vs numpy:", float(np.abs(result - ref).max()))
