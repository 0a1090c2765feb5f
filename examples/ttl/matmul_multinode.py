"""``y = relu(a @ b + c)`` on a grid of nodes, accumulating over K through a dataflow buffer.

Each node computes a rectangle of output blocks. The K accumulation is written out explicitly, as
TT-Lang's matmul tutorial does: ``acc_dfb`` holds the running sum; every K step waits for the
previous sum, reserves the next one and stores ``pre_acc_blk + a_blk @ b_blk``. Nodes at the
trailing edge of the grid skip blocks past the tensor's end.

Run: ``python examples/ttl/matmul_multinode.py``.
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32
M_BLOCK, N_BLOCK, K_BLOCK = 2, 2, 2


@ttl.operation(grid=(2, 2))
def matmul_multinode(a, b, c, y):
    m_blocks = a.shape[0] // TILE // M_BLOCK
    n_blocks = b.shape[1] // TILE // N_BLOCK
    k_blocks = a.shape[1] // TILE // K_BLOCK
    grid_n, grid_m = ttl.grid_size(dims=2)
    m_blocks_per_node = -(-m_blocks // grid_m)
    n_blocks_per_node = -(-n_blocks // grid_n)
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(M_BLOCK, K_BLOCK), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(K_BLOCK, N_BLOCK), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(M_BLOCK, N_BLOCK), block_count=2)
    acc_dfb = ttl.make_dataflow_buffer_like(y, shape=(M_BLOCK, N_BLOCK), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(M_BLOCK, N_BLOCK), block_count=2)

    @ttl.datamovement()
    def read():
        node_n, node_m = ttl.node(dims=2)
        for local_m in range(m_blocks_per_node):
            m_block = node_m * m_blocks_per_node + local_m
            if m_block < m_blocks:
                m0 = m_block * M_BLOCK
                for local_n in range(n_blocks_per_node):
                    n_block = node_n * n_blocks_per_node + local_n
                    if n_block < n_blocks:
                        n0 = n_block * N_BLOCK
                        with c_dfb.reserve() as c_blk:
                            ttl.copy(c[m0:m0 + M_BLOCK, n0:n0 + N_BLOCK], c_blk).wait()
                        for k_block in range(k_blocks):
                            k0 = k_block * K_BLOCK
                            with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk:
                                xa = ttl.copy(a[m0:m0 + M_BLOCK, k0:k0 + K_BLOCK], a_blk)
                                xb = ttl.copy(b[k0:k0 + K_BLOCK, n0:n0 + N_BLOCK], b_blk)
                                xa.wait()
                                xb.wait()

    @ttl.compute()
    def compute():
        node_n, node_m = ttl.node(dims=2)
        for local_m in range(m_blocks_per_node):
            m_block = node_m * m_blocks_per_node + local_m
            if m_block < m_blocks:
                for local_n in range(n_blocks_per_node):
                    n_block = node_n * n_blocks_per_node + local_n
                    if n_block < n_blocks:
                        with acc_dfb.reserve() as acc_blk:
                            acc_blk.store(ttl.block.fill(0, shape=acc_blk.shape))
                        for _ in range(k_blocks):
                            with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, acc_dfb.wait() as pre_acc_blk:
                                with acc_dfb.reserve() as acc_blk:
                                    acc_blk.store(pre_acc_blk + a_blk @ b_blk)
                        with c_dfb.wait() as c_blk, acc_dfb.wait() as acc_blk:
                            with y_dfb.reserve() as y_blk:
                                y_blk.store(ttl.math.relu(c_blk + acc_blk))

    @ttl.datamovement()
    def write():
        node_n, node_m = ttl.node(dims=2)
        for local_m in range(m_blocks_per_node):
            m_block = node_m * m_blocks_per_node + local_m
            if m_block < m_blocks:
                m0 = m_block * M_BLOCK
                for local_n in range(n_blocks_per_node):
                    n_block = node_n * n_blocks_per_node + local_n
                    if n_block < n_blocks:
                        n0 = n_block * N_BLOCK
                        with y_dfb.wait() as y_blk:
                            ttl.copy(y_blk, y[m0:m0 + M_BLOCK, n0:n0 + N_BLOCK]).wait()


def main(m=192, k=128, n=256, seed=0):
    """Run on random bfloat16 inputs; returns (result, reference) — reference in float64."""
    rng = np.random.default_rng(seed)

    def tensor(shape):
        return ttnn.from_numpy(rng.standard_normal(shape).astype(np.float32), dtype=ttnn.bfloat16,
                               layout=ttnn.TILE_LAYOUT)

    a, b, c = tensor((m, k)), tensor((k, n)), tensor((m, n))
    y = ttnn.zeros((m, n), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    matmul_multinode(a, b, c, y)
    reference = np.maximum(ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(b) + ttnn.to_numpy(c), 0)
    return ttnn.to_numpy(y), reference


if __name__ == "__main__":
    result, reference = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()),
          "max |reference|:", float(np.abs(reference).max()))
