"""Multicast one block to a row of nodes through a pipe, then scale each node's columns by it.

Node (0, 0) reads the block ``a`` from DRAM and sends it through the pipe net; the pipe's
destination is the node range ``(slice(1, columns), 0)``, so one NOC multicast delivers it to every
other node of row 0 (the receivers signal that their block is free, the sender waits for all of
them, writes the block and sets their "valid" semaphore). Every node then computes
``y[:, node] = a * b[:, node]``.

Run: ``python examples/ttl/pipe_multicast.py``.
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32
COLUMNS = 4


@ttl.operation(grid=(COLUMNS, 1))
def pipe_multicast(a, b, y):
    columns, _ = ttl.grid_size(dims=2)
    rows = a.shape[0] // TILE
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(slice(1, columns), 0))])
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(rows, 1), block_count=1)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(rows, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(rows, 1), block_count=2)

    @ttl.datamovement()
    def read():
        node_col, _ = ttl.node(dims=2)
        with a_dfb.reserve() as a_blk:

            def send(pipe):
                ttl.copy(a[0:rows, 0], a_blk).wait()
                xf = ttl.copy(a_blk, pipe)
                xf.wait()

            def receive(pipe):
                xf = ttl.copy(pipe, a_blk)
                xf.wait()

            net.if_src(send)
            net.if_dst(receive)
        with b_dfb.reserve() as b_blk:
            ttl.copy(b[0:rows, node_col], b_blk).wait()

    @ttl.compute()
    def compute():
        with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, y_dfb.reserve() as y_blk:
            y_blk.store(a_blk * b_blk)

    @ttl.datamovement()
    def write():
        node_col, _ = ttl.node(dims=2)
        with y_dfb.wait() as y_blk:
            ttl.copy(y_blk, y[0:rows, node_col]).wait()


def main(rows=64, seed=0):
    """Run on random bfloat16 inputs; returns (result, reference) as float32 arrays."""
    rng = np.random.default_rng(seed)

    def tensor(shape):
        return ttnn.from_numpy(rng.standard_normal(shape).astype(np.float32), dtype=ttnn.bfloat16,
                               layout=ttnn.TILE_LAYOUT)

    a, b = tensor((rows, TILE)), tensor((rows, TILE * COLUMNS))
    y = ttnn.zeros((rows, TILE * COLUMNS), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    pipe_multicast(a, b, y)
    reference = ttnn.multiply(ttnn.from_numpy(np.tile(ttnn.to_numpy(a), (1, COLUMNS)), dtype=ttnn.bfloat16), b)
    return ttnn.to_numpy(y), ttnn.to_numpy(reference)


if __name__ == "__main__":
    result, reference = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()))
