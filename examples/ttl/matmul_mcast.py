"""``y = a @ b`` on a grid of nodes with A and B blocks multicast through pipes, the data flow of
TT-Metal's 2-D multicast matmul.

Node (x, y) computes the output block of tile rows ``y·PM ..`` and tile columns ``x·PN ..``.
For every K block, the first node of each grid row reads the row's A block from DRAM and sends
it through a pipe to the other nodes of the row; the first node of each grid column does the
same for B down the column. A pipe copy is a NOC multicast with the semaphore handshake (the
receivers signal that their buffer is free, the sender waits for all of them, writes the block
and sets their "valid" semaphore), so DRAM serves each A and B tile once. The compute kernel
accumulates the K blocks through ``acc_dfb``.

Run: ``python examples/ttl/matmul_mcast.py`` — prints the error against numpy and the modeled
device time.
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.frontend.ttl import session

TILE = 32
K_BLOCK = 2
GRID = (4, 4)


@ttl.operation(grid=GRID)
def matmul_mcast(a, b, y):
    grid_n, grid_m = ttl.grid_size(dims=2)
    pm = a.shape[0] // TILE // grid_m
    pn = b.shape[1] // TILE // grid_n
    k_blocks = a.shape[1] // TILE // K_BLOCK
    rows = ttl.PipeNet([ttl.Pipe(src=(0, r), dst=(slice(1, grid_n), r)) for r in range(grid_m)])
    columns = ttl.PipeNet([ttl.Pipe(src=(c, 0), dst=(c, slice(1, grid_m))) for c in range(grid_n)])
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(pm, K_BLOCK), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(K_BLOCK, pn), block_count=2)
    acc_dfb = ttl.make_dataflow_buffer_like(y, shape=(pm, pn), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(pm, pn), block_count=1)

    @ttl.datamovement()
    def read_a():
        node_n, node_m = ttl.node(dims=2)
        m0 = node_m * pm
        for k_block in range(k_blocks):
            k0 = k_block * K_BLOCK
            with a_dfb.reserve() as a_blk:

                def send(pipe):
                    ttl.copy(a[m0:m0 + pm, k0:k0 + K_BLOCK], a_blk).wait()
                    ttl.copy(a_blk, pipe).wait()

                def receive(pipe):
                    ttl.copy(pipe, a_blk).wait()

                rows.if_src(send)
                rows.if_dst(receive)

    @ttl.compute()
    def compute():
        with acc_dfb.reserve() as acc_blk:
            acc_blk.store(ttl.block.fill(0, shape=acc_blk.shape))
        for _ in range(k_blocks - 1):
            with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, acc_dfb.wait() as pre_acc_blk:
                with acc_dfb.reserve() as acc_blk:
                    acc_blk.store(pre_acc_blk + a_blk @ b_blk)
        with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, acc_dfb.wait() as pre_acc_blk:
            with y_dfb.reserve() as y_blk:
                y_blk.store(pre_acc_blk + a_blk @ b_blk)

    @ttl.datamovement()
    def read_b_write_y():
        node_n, node_m = ttl.node(dims=2)
        n0 = node_n * pn
        for k_block in range(k_blocks):
            k0 = k_block * K_BLOCK
            with b_dfb.reserve() as b_blk:

                def send(pipe):
                    ttl.copy(b[k0:k0 + K_BLOCK, n0:n0 + pn], b_blk).wait()
                    ttl.copy(b_blk, pipe).wait()

                def receive(pipe):
                    ttl.copy(pipe, b_blk).wait()

                columns.if_src(send)
                columns.if_dst(receive)
        with y_dfb.wait() as y_blk:
            ttl.copy(y_blk, y[node_m * pm:(node_m + 1) * pm, n0:n0 + pn]).wait()


def main(m=256, k=256, n=256, seed=0):
    """Run on random bfloat16 inputs; returns (result, reference in float64, modeled seconds)."""
    rng = np.random.default_rng(seed)

    def tensor(shape):
        return ttnn.from_numpy(rng.standard_normal(shape).astype(np.float32), dtype=ttnn.bfloat16,
                               layout=ttnn.TILE_LAYOUT)

    a, b = tensor((m, k)), tensor((k, n))
    y = ttnn.zeros((m, n), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    with session.configured() as settings:
        matmul_mcast(a, b, y)
        perf = settings.runs[-1][1].perf
    reference = ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(b)
    return ttnn.to_numpy(y), reference, perf


if __name__ == "__main__":
    result, reference, perf = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()),
          "max |reference|:", float(np.abs(reference).max()))
    print(f"modeled device time: {perf.seconds * 1e6:.1f} us; DRAM read {perf.counters.dram_read_bytes:,} B")
