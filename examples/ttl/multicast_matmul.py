"""``y = a @ b`` with ``a`` multicast: node 0 reads each K block of ``a`` once and one NOC multicast
delivers it to every other node of the row; each node reads its own columns of ``b``.

The nodes split the output columns (one column of tiles each). For every K block, node 0 copies
``a[0:M, k]`` from DRAM and sends it through the pipe net whose destination is the node range
``(slice(1, columns), 0)``; the others receive it into the same buffer. The compute kernel
accumulates the K blocks in the output block (``y_blk += a_blk @ b_blk``).

Run: ``python examples/ttl/multicast_matmul.py`` (or ``tilefold sim`` on this file).
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32
COLUMNS = 4
K_BLOCK = 2


@ttl.operation(grid=(COLUMNS, 1))
def multicast_matmul(a, b, y):
    columns, _ = ttl.grid_size(dims=2)
    m_tiles = a.shape[0] // TILE
    k_blocks = a.shape[1] // TILE // K_BLOCK
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(slice(1, columns), 0))])
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(m_tiles, K_BLOCK), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(K_BLOCK, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(m_tiles, 1), block_count=1)

    @ttl.datamovement()
    def read():
        node_col, _ = ttl.node(dims=2)
        for k in range(k_blocks):
            k0 = k * K_BLOCK
            with a_dfb.reserve() as a_blk:

                def send(pipe):
                    ttl.copy(a[0:m_tiles, k0:k0 + K_BLOCK], a_blk).wait()
                    ttl.copy(a_blk, pipe).wait()

                def receive(pipe):
                    ttl.copy(pipe, a_blk).wait()

                net.if_src(send)
                net.if_dst(receive)
            with b_dfb.reserve() as b_blk:
                ttl.copy(b[k0:k0 + K_BLOCK, node_col], b_blk).wait()

    @ttl.compute()
    def compute():
        with y_dfb.reserve() as y_blk:
            y_blk.store(ttl.math.fill(0.0, shape=(m_tiles, 1)))
            for _ in range(k_blocks):
                with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk:
                    y_blk += a_blk @ b_blk

    @ttl.datamovement()
    def write():
        node_col, _ = ttl.node(dims=2)
        with y_dfb.wait() as y_blk:
            ttl.copy(y_blk, y[0:m_tiles, node_col]).wait()


def main(m=64, k=128, seed=0):
    """Run on random bfloat16 inputs; returns (result, reference) as float32 arrays."""
    rng = np.random.default_rng(seed)

    def tensor(shape):
        return ttnn.from_numpy(rng.standard_normal(shape).astype(np.float32), dtype=ttnn.bfloat16,
                               layout=ttnn.TILE_LAYOUT)

    a, b = tensor((m, k)), tensor((k, TILE * COLUMNS))
    y = ttnn.zeros((m, TILE * COLUMNS), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    multicast_matmul(a, b, y)
    reference = ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(b).astype(np.float64)
    return ttnn.to_numpy(y), reference.astype(np.float32)


if __name__ == "__main__":
    result, reference = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()))
