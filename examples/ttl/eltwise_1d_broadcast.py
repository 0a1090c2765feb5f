"""``hyp = sqrt(a^2 + s^2)`` and ``gap = a^2 - s^2`` over 1-D tensors, with ``s`` a single value.

A 1-D tensor of ``n`` elements is ``ceil(n / 32)`` tiles of 32 elements: ``a[t]`` is tile ``t``
and a 1-D buffer (``shape=(1,)``) holds blocks of one such tile. On the device the tensor is one
row, so a tile keeps its 32 elements in row 0 and the last tile is padded. ``s`` has one element:
``ttl.math.broadcast(x, out_blk, dims=[0])`` replicates element 0 of its block across the output
block (``ttl.block.broadcast(x, dims=[0], shape=...)`` is the same with the shape spelled out).

Run: ``python examples/ttl/eltwise_1d_broadcast.py``.
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn


@ttl.operation(grid=(1, 1))
def eltwise_1d_broadcast(a, s, hyp, gap):
    tile = ttl.TILE_SHAPE[0]
    tiles = -(-a.shape[0] // tile)
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1,))
    s_dfb = ttl.make_dataflow_buffer_like(s, shape=(1,), block_count=1)
    hyp_dfb = ttl.make_dataflow_buffer_like(hyp, shape=(1,))
    gap_dfb = ttl.make_dataflow_buffer_like(gap, shape=(1,))

    @ttl.datamovement()
    def read():
        with s_dfb.reserve() as s_blk:
            ttl.copy(s[0], s_blk).wait()
        for t in range(tiles):
            with a_dfb.reserve() as a_blk:
                ttl.copy(a[t], a_blk).wait()

    @ttl.compute()
    def compute():
        with s_dfb.wait() as s_blk:
            for _ in range(tiles):
                with a_dfb.wait() as a_blk, hyp_dfb.reserve() as hyp_blk, gap_dfb.reserve() as gap_blk:
                    a_sq = a_blk ** 2
                    s_sq = s_blk ** 2
                    hyp_blk.store(ttl.math.sqrt(a_sq + ttl.math.broadcast(s_sq, hyp_blk, dims=[0])))
                    gap_blk.store(a_sq - ttl.block.broadcast(s_sq, dims=[0], shape=gap_blk.shape))

    @ttl.datamovement()
    def write():
        for t in range(tiles):
            with hyp_dfb.wait() as hyp_blk, gap_dfb.wait() as gap_blk:
                to_hyp = ttl.copy(hyp_blk, hyp[t])
                to_gap = ttl.copy(gap_blk, gap[t])
                to_hyp.wait()
                to_gap.wait()


def main(n=200, seed=0):
    """Run on a random float32 vector of ``n`` elements and one value; returns ((hyp, gap), their
    float64 references) as arrays."""
    rng = np.random.default_rng(seed)
    a_values = rng.uniform(-4, 4, n).astype(np.float32)
    s_values = np.array([1.5], dtype=np.float32)
    a = ttnn.from_numpy(a_values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    s = ttnn.from_numpy(s_values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    hyp = ttnn.empty((n,), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    gap = ttnn.empty((n,), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    eltwise_1d_broadcast(a, s, hyp, gap)
    a64, s64 = a_values.astype(np.float64), float(s_values[0])
    references = (np.sqrt(a64 ** 2 + s64 ** 2), a64 ** 2 - s64 ** 2)
    return (ttnn.to_numpy(hyp), ttnn.to_numpy(gap)), references


if __name__ == "__main__":
    (hyp, gap), (hyp_ref, gap_ref) = main()
    print("max abs error vs numpy: hyp", float(np.abs(hyp - hyp_ref).max()), "gap", float(np.abs(gap - gap_ref).max()))
