"""``y = a * b + c`` on one node with multi-tile blocks (``GRANULARITY × GRANULARITY`` tiles).

Larger blocks mean fewer, larger transfers and more work per synchronisation. A block larger than
DST is computed in DST-sized sub-blocks (``ttl-assign-dst``), each acquired, computed, packed and
released in turn.

Run: ``python examples/ttl/eltwise_multitile.py``.
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32
GRANULARITY = 4


@ttl.operation(grid=(1, 1))
def eltwise_multitile(a, b, c, y):
    rows = a.shape[0] // TILE // GRANULARITY
    cols = a.shape[1] // TILE // GRANULARITY
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(GRANULARITY, GRANULARITY), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(GRANULARITY, GRANULARITY), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(GRANULARITY, GRANULARITY), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(GRANULARITY, GRANULARITY), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(rows):
            for _ in range(cols):
                with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, c_dfb.wait() as c_blk, y_dfb.reserve() as y_blk:
                    y_blk.store(a_blk * b_blk + c_blk)

    @ttl.datamovement()
    def read():
        for row in range(rows):
            r0 = row * GRANULARITY
            for col in range(cols):
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
        for row in range(rows):
            r0 = row * GRANULARITY
            for col in range(cols):
                c0 = col * GRANULARITY
                with y_dfb.wait() as y_blk:
                    xf = ttl.copy(y_blk, y[r0:r0 + GRANULARITY, c0:c0 + GRANULARITY])
                    xf.wait()


def main(shape=(256, 256), seed=0):
    """Run on random bfloat16 inputs; returns (result, reference) as float32 arrays."""
    rng = np.random.default_rng(seed)
    a, b, c = (ttnn.from_numpy(rng.standard_normal(shape).astype(np.float32), dtype=ttnn.bfloat16,
                               layout=ttnn.TILE_LAYOUT) for _ in range(3))
    y = ttnn.zeros(shape, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    eltwise_multitile(a, b, c, y)
    reference = ttnn.add(ttnn.multiply(a, b), c)
    return ttnn.to_numpy(y), ttnn.to_numpy(reference)


if __name__ == "__main__":
    result, reference = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()))
