"""``y = a * b + c`` where ``a`` is a column vector, ``b`` a row vector and ``c`` a scalar.

A tiled vector of shape ``(N, 1)`` keeps its values in column 0 of each tile, ``(1, M)`` in row 0
and a scalar at position (0, 0). ``ttl.block.broadcast`` expands them to the output block: along
``dims=[-1]`` it replicates column 0 across a tile's columns (and the tile across the block's
columns), along ``dims=[0]`` row 0 down the rows, along ``dims=[-2, -1]`` element (0, 0).

Run: ``python examples/ttl/broadcast.py``.
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32
GRANULARITY = 2


@ttl.operation(grid=(1, 1))
def broadcast(a, b, c, y):
    rows = y.shape[0] // TILE // GRANULARITY
    cols = y.shape[1] // TILE // GRANULARITY
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(GRANULARITY, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, GRANULARITY), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(GRANULARITY, GRANULARITY), block_count=2)

    @ttl.compute()
    def compute():
        with c_dfb.wait() as c_blk:
            for _ in range(rows):
                for _ in range(cols):
                    with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, y_dfb.reserve() as y_blk:
                        column = ttl.block.broadcast(a_blk, dims=[-1], shape=y_blk.shape)
                        row = ttl.block.broadcast(b_blk, dims=[0], shape=y_blk.shape)
                        scalar = ttl.block.broadcast(c_blk, dims=[-2, -1], shape=y_blk.shape)
                        y_blk.store(column * row + scalar)

    @ttl.datamovement()
    def read():
        with c_dfb.reserve() as c_blk:
            ttl.copy(c[0, 0], c_blk).wait()
        for r in range(rows):
            for col in range(cols):
                with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk:
                    xa = ttl.copy(a[r * GRANULARITY:(r + 1) * GRANULARITY, 0], a_blk)
                    xb = ttl.copy(b[0, col * GRANULARITY:(col + 1) * GRANULARITY], b_blk)
                    xa.wait()
                    xb.wait()

    @ttl.datamovement()
    def write():
        for r in range(rows):
            for col in range(cols):
                with y_dfb.wait() as y_blk:
                    xf = ttl.copy(y_blk, y[r * GRANULARITY:(r + 1) * GRANULARITY, col * GRANULARITY:(col + 1) * GRANULARITY])
                    xf.wait()


def main(n=128, m=192, seed=0):
    """Run on random bfloat16 vectors; returns (result, reference) as float32 arrays."""
    rng = np.random.default_rng(seed)

    def tensor(shape):
        return ttnn.from_numpy(rng.standard_normal(shape).astype(np.float32), dtype=ttnn.bfloat16,
                               layout=ttnn.TILE_LAYOUT)

    a, b, c = tensor((n, 1)), tensor((1, m)), tensor((1, 1))
    y = ttnn.zeros((n, m), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    broadcast(a, b, c, y)
    product = ttnn.from_numpy(ttnn.to_numpy(a) * ttnn.to_numpy(b), dtype=ttnn.bfloat16)
    reference = ttnn.from_numpy(ttnn.to_numpy(product) + ttnn.to_numpy(c), dtype=ttnn.bfloat16)
    return ttnn.to_numpy(y), ttnn.to_numpy(reference)


if __name__ == "__main__":
    result, reference = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()))
