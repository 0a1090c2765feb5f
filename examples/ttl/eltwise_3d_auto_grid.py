"""``y = relu(a) + b * 0.5`` on 3-D tensors, spread over an automatic grid.

``grid="auto"`` gives the operation every node of the device; the (depth x rows) tile rows are
dealt to the nodes round-robin by their linear index ``ttl.node(dims=1)``, and each node copies one
row of tiles of a 3-D slice (``a[d, r, 0:cols]``) per block.

Run: ``python examples/ttl/eltwise_3d_auto_grid.py`` (or ``tilefold sim`` on this file).
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32


@ttl.operation(grid="auto")
def eltwise_3d(a, b, y):
    depth, rows, cols = a.shape[0], a.shape[1] // TILE, a.shape[2] // TILE
    nodes = ttl.grid_size(dims=1)
    total = depth * rows
    per_node = -(-total // nodes)
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1, cols), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1, cols), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1, cols), block_count=2)

    @ttl.compute()
    def compute():
        node = ttl.node(dims=1)
        for i in range(per_node):
            if node * per_node + i < total:
                with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, y_dfb.reserve() as y_blk:
                    y_blk.store(ttl.math.relu(a_blk) + b_blk * 0.5)

    @ttl.datamovement()
    def read():
        node = ttl.node(dims=1)
        for i in range(per_node):
            row = node * per_node + i
            if row < total:
                d, r = row // rows, row % rows
                with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk:
                    xa = ttl.copy(a[d, r, 0:cols], a_blk)
                    xb = ttl.copy(b[d, r, 0:cols], b_blk)
                    xa.wait()
                    xb.wait()

    @ttl.datamovement()
    def write():
        node = ttl.node(dims=1)
        for i in range(per_node):
            row = node * per_node + i
            if row < total:
                d, r = row // rows, row % rows
                with y_dfb.wait() as y_blk:
                    ttl.copy(y_blk, y[d, r, 0:cols]).wait()


def main(shape=(3, 64, 96), seed=0):
    """Run on random bfloat16 inputs; returns (result, reference) as float32 arrays."""
    rng = np.random.default_rng(seed)
    a, b = (ttnn.from_numpy(rng.standard_normal(shape).astype(np.float32), dtype=ttnn.bfloat16,
                            layout=ttnn.TILE_LAYOUT) for _ in range(2))
    y = ttnn.zeros(shape, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    eltwise_3d(a, b, y)
    half = ttnn.from_numpy(ttnn.to_numpy(b) * 0.5, dtype=ttnn.bfloat16)
    reference = ttnn.from_numpy(np.maximum(ttnn.to_numpy(a), 0) + ttnn.to_numpy(half), dtype=ttnn.bfloat16)
    return ttnn.to_numpy(y), ttnn.to_numpy(reference)


if __name__ == "__main__":
    result, reference = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()))
