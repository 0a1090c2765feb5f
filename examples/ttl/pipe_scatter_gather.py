"""Scatter row blocks from node 0 to the other nodes through pipes, compute, gather them back.

Node 0 reads the whole input. It keeps row block 0 and sends row block ``i`` to node ``i`` through
the pipe net ``scatter`` (one unicast pipe per node: ``net.if_src`` runs its body once per pipe, and
``pipe.dst`` is the node at the other end), staging each block in a buffer that only its reader uses
(reserve and copy in, then wait and copy into the pipe). Every node computes ``exp(x) * 0.5`` on its block; nodes 1..
send their result to node 0 through ``gather``, and node 0 writes all blocks (``pipe.src`` says
which). Two nets of several pipes take 16 semaphores on node 0, what TT-Metal gives a core; a net
per pipe would take five each.

Run: ``python examples/ttl/pipe_scatter_gather.py`` (or ``tilefold sim`` on this file).
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32
NODES = 4


@ttl.operation(grid=(NODES, 1))
def scatter_gather(x, y):
    cols = x.shape[1] // TILE
    scatter = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(i, 0)) for i in range(1, NODES)])
    gather = ttl.PipeNet([ttl.Pipe(src=(i, 0), dst=(0, 0)) for i in range(1, NODES)])
    stage_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, cols), block_count=1)
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, cols), block_count=1)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, cols), block_count=1)
    g_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, cols), block_count=1)

    @ttl.datamovement()
    def read():
        node_col, _ = ttl.node(dims=2)
        def send(pipe):
            dst_col, _ = pipe.dst
            with stage_dfb.reserve() as s:
                ttl.copy(x[dst_col, 0:cols], s).wait()
            with stage_dfb.wait() as s:
                ttl.copy(s, pipe).wait()

        scatter.if_src(send)
        with x_dfb.reserve() as blk:

            def receive(pipe):
                ttl.copy(pipe, blk).wait()

            scatter.if_dst(receive)
            if node_col == 0:
                ttl.copy(x[0, 0:cols], blk).wait()

    @ttl.compute()
    def compute():
        with x_dfb.wait() as x_blk, y_dfb.reserve() as y_blk:
            y_blk.store(ttl.math.exp(x_blk) * 0.5)

    @ttl.datamovement()
    def write():
        node_col, _ = ttl.node(dims=2)
        with y_dfb.wait() as y_blk:

            def send(pipe):
                ttl.copy(y_blk, pipe).wait()

            gather.if_src(send)
            if node_col == 0:
                ttl.copy(y_blk, y[0, 0:cols]).wait()
        def receive(pipe):
            src_col, _ = pipe.src
            with g_dfb.reserve() as g:
                ttl.copy(pipe, g).wait()
            with g_dfb.wait() as g:
                ttl.copy(g, y[src_col, 0:cols]).wait()

        gather.if_dst(receive)


def main(cols=2, seed=0):
    """Run on random bfloat16 inputs; returns (result, reference) as float32 arrays."""
    shape = (NODES * TILE, cols * TILE)
    x = ttnn.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32),
                        dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    y = ttnn.zeros(shape, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    scatter_gather(x, y)
    return ttnn.to_numpy(y), np.exp(ttnn.to_numpy(x).astype(np.float64)).astype(np.float32) * 0.5


if __name__ == "__main__":
    result, reference = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()))
