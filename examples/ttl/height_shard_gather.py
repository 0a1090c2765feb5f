"""Height-sharded gather: each node reads the whole tensor, its own shard and its neighbour's.

The input (64 x 64 elements) is height-sharded over two nodes in L1 (``ttnn.create_sharded_memory_config``
with ``ShardStrategy.HEIGHT``): each holds one tile row. Both nodes copy the whole tensor into one
block with a single ``ttl.copy`` — half of it local, half remote — pass it through the compute
kernel (scaled by two) and write it to their own part of a DRAM tensor (node ``i`` to rows block
``i``), so every output page has one writer.

Run: ``python examples/ttl/height_shard_gather.py`` (or ``tilefold sim`` on this file).
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32
NODES = 2      # nodes, one tile row each
COLS = 2       # tile columns


@ttl.operation(grid=(NODES, 1))
def height_shard_gather(inp, out):
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(NODES, COLS))
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(NODES, COLS))

    @ttl.compute()
    def compute():
        with in_dfb.wait() as in_blk, out_dfb.reserve() as out_blk:
            out_blk.store(in_blk * 2.0)

    @ttl.datamovement()
    def dm_read():
        with in_dfb.reserve() as blk:
            tx = ttl.copy(inp[0:NODES, 0:COLS], blk)
            tx.wait()

    @ttl.datamovement()
    def dm_write():
        node_col, _ = ttl.node(dims=2)
        with out_dfb.wait() as blk:
            tx = ttl.copy(blk, out[node_col * NODES:(node_col + 1) * NODES, 0:COLS])
            tx.wait()


def main(seed=0):
    """Gather a sharded tensor; returns (result, reference) as float32 arrays."""
    device = ttnn.open_device(device_id=0)
    shape = (NODES * TILE, COLS * TILE)
    sharded = ttnn.create_sharded_memory_config(shape=shape, core_grid=ttnn.CoreGrid(y=1, x=NODES),
                                                strategy=ttnn.ShardStrategy.HEIGHT)
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    inp = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device,
                          memory_config=sharded)
    out = ttnn.empty((NODES * shape[0], shape[1]), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    height_shard_gather(inp, out)
    ttnn.close_device(device)
    return ttnn.to_numpy(out), np.tile(ttnn.to_numpy(inp) * 2, (NODES, 1))


if __name__ == "__main__":
    result, reference = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()))
