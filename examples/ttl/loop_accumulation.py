"""Sum of squares over the row blocks of a tensor, accumulated across a loop.

``y[0:1, c] = sum over r of x[r, c] ** 2``: each node owns one column of tiles; the compute kernel
starts from the first block (``acc = x0 * x0``) and adds the square of every further block that
arrives (``acc = acc + xv * xv``), a block value carried from one loop iteration to the next.

Run: ``python examples/ttl/loop_accumulation.py`` (or ``tilefold sim`` on this file).
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32


@ttl.operation(grid=(2, 1))
def sum_of_squares(x, y):
    rows, cols = x.shape[0] // TILE, x.shape[1] // TILE
    nodes, _ = ttl.grid_size(dims=2)
    cols_per_node = cols // nodes
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(cols_per_node):
            with x_dfb.wait() as x0:
                acc = x0 * x0
            for _ in range(rows - 1):
                with x_dfb.wait() as xv:
                    acc = acc + xv * xv
            with y_dfb.reserve() as y_blk:
                y_blk.store(acc)

    @ttl.datamovement()
    def read():
        node_col, _ = ttl.node(dims=2)
        for j in range(cols_per_node):
            for r in range(rows):
                with x_dfb.reserve() as blk:
                    ttl.copy(x[r, node_col * cols_per_node + j], blk).wait()

    @ttl.datamovement()
    def write():
        node_col, _ = ttl.node(dims=2)
        for j in range(cols_per_node):
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[0, node_col * cols_per_node + j]).wait()


def main(shape=(128, 128), seed=0):
    """Run on random bfloat16 inputs; returns (result, reference) as float32 arrays."""
    x = ttnn.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32),
                        dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    y = ttnn.zeros((TILE, shape[1]), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    sum_of_squares(x, y)
    v = ttnn.to_numpy(x).astype(np.float64)
    reference = (v.reshape(shape[0] // TILE, TILE, shape[1]) ** 2).sum(axis=0)
    return ttnn.to_numpy(y), reference.astype(np.float32)


if __name__ == "__main__":
    result, reference = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()))
