"""Tune a TT-Lang matmul over its Python constants: block shape, buffer depth and grid.

The operation is built by a factory whose arguments are the constants a TT-Lang author would
otherwise edit by hand (``M_BLOCK``, ``N_BLOCK``, ``K_BLOCK``, the dataflow buffers' block count
and the grid). ``@tilefold.autotune`` builds the operation for each configuration, runs it on
copies of the tensors given by ``set_autotune_inputs``, checks ``y = a @ b`` against numpy and
ranks the configurations by modeled device time.

Run: ``tilefold tune examples/ttl/autotune_matmul.py`` or ``python examples/ttl/autotune_matmul.py``.
"""

import itertools

import numpy as np

import tilefold
import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.autotuner import set_autotune_inputs

TILE = 32

CONFIGS = [{"m_block": m, "n_block": n, "k_block": k, "block_count": c, "grid": g}
           for m, n, k, c, g in itertools.product([1, 2], [1, 2], [1, 2], [2], [(1, 1), (2, 2)])]


def reference(a, b, y):
    return a.astype(np.float32) @ b.astype(np.float32)


@tilefold.autotune(configs=CONFIGS, ref_prog=reference, rtol=2e-2, atol=5e-2)
def make_matmul(m_block=2, n_block=2, k_block=2, block_count=2, grid=(2, 2)):
    @ttl.operation(grid=grid)
    def matmul(a, b, y):
        m_blocks = a.shape[0] // TILE // m_block
        n_blocks = b.shape[1] // TILE // n_block
        k_blocks = a.shape[1] // TILE // k_block
        grid_n, grid_m = ttl.grid_size(dims=2)
        m_per_node = -(-m_blocks // grid_m)
        n_per_node = -(-n_blocks // grid_n)
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(m_block, k_block), block_count=block_count)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(k_block, n_block), block_count=block_count)
        acc_dfb = ttl.make_dataflow_buffer_like(y, shape=(m_block, n_block), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(m_block, n_block), block_count=block_count)

        @ttl.datamovement()
        def read():
            node_n, node_m = ttl.node(dims=2)
            for local_m in range(m_per_node):
                mb = node_m * m_per_node + local_m
                if mb < m_blocks:
                    for local_n in range(n_per_node):
                        nb = node_n * n_per_node + local_n
                        if nb < n_blocks:
                            for kb in range(k_blocks):
                                with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk:
                                    xa = ttl.copy(a[mb * m_block:(mb + 1) * m_block, kb * k_block:(kb + 1) * k_block],
                                                  a_blk)
                                    xb = ttl.copy(b[kb * k_block:(kb + 1) * k_block, nb * n_block:(nb + 1) * n_block],
                                                  b_blk)
                                    xa.wait()
                                    xb.wait()

        @ttl.compute()
        def compute():
            node_n, node_m = ttl.node(dims=2)
            for local_m in range(m_per_node):
                mb = node_m * m_per_node + local_m
                if mb < m_blocks:
                    for local_n in range(n_per_node):
                        nb = node_n * n_per_node + local_n
                        if nb < n_blocks:
                            with acc_dfb.reserve() as acc_blk:
                                acc_blk.store(ttl.block.fill(0, shape=acc_blk.shape))
                            for _ in range(k_blocks):
                                with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, acc_dfb.wait() as pre:
                                    with acc_dfb.reserve() as acc_blk:
                                        acc_blk.store(pre + a_blk @ b_blk)
                            with acc_dfb.wait() as acc_blk, y_dfb.reserve() as y_blk:
                                y_blk.store(acc_blk)

        @ttl.datamovement()
        def write():
            node_n, node_m = ttl.node(dims=2)
            for local_m in range(m_per_node):
                mb = node_m * m_per_node + local_m
                if mb < m_blocks:
                    for local_n in range(n_per_node):
                        nb = node_n * n_per_node + local_n
                        if nb < n_blocks:
                            with y_dfb.wait() as y_blk:
                                ttl.copy(y_blk, y[mb * m_block:(mb + 1) * m_block, nb * n_block:(nb + 1) * n_block]).wait()

    return matmul


def main(m=256, k=256, n=256, seed=0):
    rng = np.random.default_rng(seed)

    def tensor(shape):
        return ttnn.from_numpy(rng.standard_normal(shape).astype(np.float32), dtype=ttnn.bfloat16,
                               layout=ttnn.TILE_LAYOUT)

    a, b = tensor((m, k)), tensor((k, n))
    y = ttnn.zeros((m, n), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    with set_autotune_inputs(a, b, y):
        best = make_matmul()                     # tunes; the best configuration's operation
    best(a, b, y)
    result = make_matmul.last_result
    print(f"best: {result.config}, modeled {result.latency * 1e3:.1f} us")
    return result, ttnn.to_numpy(y), reference(ttnn.to_numpy(a), ttnn.to_numpy(b), None)


if __name__ == "__main__":
    main()
