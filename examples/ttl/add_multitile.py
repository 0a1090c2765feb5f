"""The 2 × 2 multi-tile add that the TT-Lang multi-tile lowering traces through the TT-Lang pipeline.

``out = lhs + rhs`` for one 2 × 2 block of tiles on one node, written with explicit ``wait`` /
``reserve`` / ``pop`` / ``push``. ``tilefold compile -o build/add examples/ttl/add_multitile.py
--print-ir-after-all`` shows the IR after every pass: the fused ``ttl.compute``, DST footprint 2
with the result at ``footprint + linear index``, the compute loop and the pack loop inside one
acquire / release. It keeps the lowering that trace shows — both tiles copied into DST, then the
SFPU's ``add_binary_tile`` — with ``--no-ttl-fpu-binary-ops``; by default ``l + r`` of two buffer
tiles is the FPU's ``add_tiles``, which reads both from their buffers into one DST slot.

Run: ``python examples/ttl/add_multitile.py``.
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn


@ttl.operation(grid=(1, 1), options="--no-ttl-fpu-binary-ops")
def add_multitile_kernel(lhs, rhs, out):
    lhs_cb = ttl.make_dataflow_buffer_like(lhs, shape=(2, 2), block_count=2)
    rhs_cb = ttl.make_dataflow_buffer_like(rhs, shape=(2, 2), block_count=2)
    out_cb = ttl.make_dataflow_buffer_like(out, shape=(2, 2), block_count=2)

    @ttl.compute()
    def add_compute():
        l = lhs_cb.wait()
        r = rhs_cb.wait()
        o = out_cb.reserve()
        result = l + r
        o.store(result)
        l.pop()
        r.pop()
        o.push()

    @ttl.datamovement()
    def dm_read():
        with lhs_cb.reserve() as lhs_blk, rhs_cb.reserve() as rhs_blk:
            lhs_xf = ttl.copy(lhs[0:2, 0:2], lhs_blk)
            rhs_xf = ttl.copy(rhs[0:2, 0:2], rhs_blk)
            lhs_xf.wait()
            rhs_xf.wait()

    @ttl.datamovement()
    def dm_write():
        with out_cb.wait() as out_blk:
            out_xf = ttl.copy(out_blk, out[0:2, 0:2])
            out_xf.wait()


def main(seed=0):
    """Run on random 64 × 64 bfloat16 inputs; returns (result, reference) as float32 arrays."""
    rng = np.random.default_rng(seed)
    lhs, rhs = (ttnn.from_numpy(rng.standard_normal((64, 64)).astype(np.float32), dtype=ttnn.bfloat16,
                                layout=ttnn.TILE_LAYOUT) for _ in range(2))
    out = ttnn.zeros((64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    add_multitile_kernel(lhs, rhs, out)
    return ttnn.to_numpy(out), ttnn.to_numpy(ttnn.add(lhs, rhs))


if __name__ == "__main__":
    result, reference = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()))
