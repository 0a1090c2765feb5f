"""``y = a * b + c`` on one node, one tile per block (TT-Lang, the simplest operation).

The reader copies one tile of each input into its dataflow buffer, the compute kernel fuses the
multiply and the add into one pass over DST, the writer copies the result tile back.

Run: ``python examples/ttl/eltwise_single_tile.py`` (or ``tilefold sim`` on this file).
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32


@ttl.operation(grid=(1, 1))
def eltwise_single_tile(a, b, c, y):
    rows = a.shape[0] // TILE
    cols = a.shape[1] // TILE
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(rows * cols):
            with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, c_dfb.wait() as c_blk, y_dfb.reserve() as y_blk:
                y_blk.store(a_blk * b_blk + c_blk)

    @ttl.datamovement()
    def read():
        for r in range(rows):
            for col in range(cols):
                with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk, c_dfb.reserve() as c_blk:
                    xa = ttl.copy(a[r, col], a_blk)
                    xb = ttl.copy(b[r, col], b_blk)
                    xc = ttl.copy(c[r, col], c_blk)
                    xa.wait()
                    xb.wait()
                    xc.wait()

    @ttl.datamovement()
    def write():
        for r in range(rows):
            for col in range(cols):
                with y_dfb.wait() as y_blk:
                    xf = ttl.copy(y_blk, y[r, col])
                    xf.wait()


def main(shape=(128, 128), seed=0):
    """Run on random bfloat16 inputs; returns (result, reference) as float32 arrays."""
    rng = np.random.default_rng(seed)
    a, b, c = (ttnn.from_numpy(rng.standard_normal(shape).astype(np.float32), dtype=ttnn.bfloat16,
                               layout=ttnn.TILE_LAYOUT) for _ in range(3))
    y = ttnn.zeros(shape, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    eltwise_single_tile(a, b, c, y)
    reference = ttnn.from_numpy(ttnn.to_numpy(ttnn.multiply(a, b)) + ttnn.to_numpy(c), dtype=ttnn.bfloat16)
    return ttnn.to_numpy(y), ttnn.to_numpy(reference)


if __name__ == "__main__":
    result, reference = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()))
