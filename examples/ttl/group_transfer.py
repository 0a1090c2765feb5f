"""Several transfers waited for at once with ``ttl.GroupTransfer``: ``y = a * b + c``, written twice.

The reader starts the three input copies of a block, adds them to one group and waits for all of
them with a single ``wait_all()``; the writer sends each result block to two output tensors the
same way (the second, ``y_rows_reversed``, gets the row blocks in reverse order).

Run: ``python examples/ttl/group_transfer.py`` (or ``tilefold sim`` on this file).
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32


@ttl.operation(grid=(1, 1))
def fused_multiply_add(a, b, c, y, y_rows_reversed):
    rows, cols = a.shape[0] // TILE, a.shape[1] // TILE
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, cols), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, cols), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(1, cols), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, cols), block_count=2)

    @ttl.datamovement()
    def read():
        for r in range(rows):
            with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk, c_dfb.reserve() as c_blk:
                group = ttl.GroupTransfer()
                group.add(ttl.copy(a[r, 0:cols], a_blk))
                group.add(ttl.copy(b[r, 0:cols], b_blk))
                group.add(ttl.copy(c[r, 0:cols], c_blk))
                group.wait_all()

    @ttl.compute()
    def compute():
        for _ in range(rows):
            with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, c_dfb.wait() as c_blk, y_dfb.reserve() as y_blk:
                y_blk.store(a_blk * b_blk + c_blk)

    @ttl.datamovement()
    def write():
        for r in range(rows):
            with y_dfb.wait() as y_blk:
                group = ttl.GroupTransfer()
                group.add(ttl.copy(y_blk, y[r, 0:cols]))
                group.add(ttl.copy(y_blk, y_rows_reversed[rows - 1 - r, 0:cols]))
                group.wait_all()


def main(shape=(96, 64), seed=0):
    """Run on random bfloat16 inputs; returns (results, references) as float32 arrays."""
    rng = np.random.default_rng(seed)
    a, b, c = (ttnn.from_numpy(rng.standard_normal(shape).astype(np.float32), dtype=ttnn.bfloat16,
                               layout=ttnn.TILE_LAYOUT) for _ in range(3))
    y, y_rev = (ttnn.zeros(shape, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT) for _ in range(2))
    fused_multiply_add(a, b, c, y, y_rev)
    product = ttnn.multiply(a, b)
    reference = ttnn.to_numpy(ttnn.add(product, c))
    reversed_rows = reference.reshape(-1, TILE, shape[1])[::-1].reshape(shape)
    return np.stack([ttnn.to_numpy(y), ttnn.to_numpy(y_rev)]), np.stack([reference, reversed_rows])


if __name__ == "__main__":
    result, reference = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()))
