"""``y = a * b + c`` on the device's full grid, for sizes the grid does not divide.

``grid="full"`` takes every node of the device (8 × 8 on a Wormhole n150). Each node gets
``ceil(blocks / grid)`` blocks per dimension; nodes at the trailing edge skip the blocks past the
tensor's end — the bounds check appears in all three kernels so that they agree.

Run: ``python examples/ttl/eltwise_full_grid.py``.
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32
GRANULARITY = 2


@ttl.operation(grid="full")
def eltwise_full_grid(a, b, c, y):
    grid_cols, grid_rows = ttl.grid_size(dims=2)
    rows = a.shape[0] // TILE // GRANULARITY
    cols = a.shape[1] // TILE // GRANULARITY
    rows_per_node = -(-rows // grid_rows)
    cols_per_node = -(-cols // grid_cols)
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(GRANULARITY, GRANULARITY), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(GRANULARITY, GRANULARITY), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(GRANULARITY, GRANULARITY), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(GRANULARITY, GRANULARITY), block_count=2)

    @ttl.compute()
    def compute():
        node_col, node_row = ttl.node(dims=2)
        for local_row in range(rows_per_node):
            row = node_row * rows_per_node + local_row
            if row < rows:
                for local_col in range(cols_per_node):
                    col = node_col * cols_per_node + local_col
                    if col < cols:
                        with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, c_dfb.wait() as c_blk, \
                                y_dfb.reserve() as y_blk:
                            y_blk.store(a_blk * b_blk + c_blk)

    @ttl.datamovement()
    def read():
        node_col, node_row = ttl.node(dims=2)
        for local_row in range(rows_per_node):
            row = node_row * rows_per_node + local_row
            if row < rows:
                r0 = row * GRANULARITY
                for local_col in range(cols_per_node):
                    col = node_col * cols_per_node + local_col
                    if col < cols:
                        c0 = col * GRANULARITY
                        with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk, c_dfb.reserve() as c_blk:
                            xa = ttl.copy(a[r0:r0 + GRANULARITY, c0:c0 + GRANULARITY], a_blk)
                            xb = ttl.copy(b[r0:r0 + GRANULARITY, c0:c0 + GRANULARITY], b_blk)
                            xc = ttl.copy(c[r0:r0 + GRANULARITY, c0:c0 + GRANULARITY], c_blk)
                            xa.wait()
                            xb.wait()
                            xc.wait()

    @ttl.datamovement()
    def write():
        node_col, node_row = ttl.node(dims=2)
        for local_row in range(rows_per_node):
            row = node_row * rows_per_node + local_row
            if row < rows:
                r0 = row * GRANULARITY
                for local_col in range(cols_per_node):
                    col = node_col * cols_per_node + local_col
                    if col < cols:
                        c0 = col * GRANULARITY
                        with y_dfb.wait() as y_blk:
                            xf = ttl.copy(y_blk, y[r0:r0 + GRANULARITY, c0:c0 + GRANULARITY])
                            xf.wait()


def main(shape=(640, 576), seed=0):
    """Run on random bfloat16 inputs (any multiple of GRANULARITY tiles); returns (result, reference)."""
    rng = np.random.default_rng(seed)
    a, b, c = (ttnn.from_numpy(rng.standard_normal(shape).astype(np.float32), dtype=ttnn.bfloat16,
                               layout=ttnn.TILE_LAYOUT) for _ in range(3))
    y = ttnn.zeros(shape, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    eltwise_full_grid(a, b, c, y)
    reference = ttnn.add(ttnn.multiply(a, b), c)
    return ttnn.to_numpy(y), ttnn.to_numpy(reference)


if __name__ == "__main__":
    result, reference = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()))
