"""``y = relu(a @ b + c)`` on one node, accumulating over K in a variable.

The compute kernel keeps the running sum in ``acc``: it starts as ``ttl.math.fill(0, ...)`` and
takes ``acc += a_blk @ b_blk`` once per K block. Because its value crosses loop iterations, the
front end keeps it in a dataflow buffer of its own, one block (the loop only adds to it): each
``a_blk @ b_blk`` is computed in DST with ``matmul_block`` over DST-sized output sub-blocks and
packed onto the previous sum with the packer's L1 accumulation.

Run: ``python examples/ttl/matmul_single_node.py``.
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32
M_BLOCK, N_BLOCK, K_BLOCK = 2, 2, 2


@ttl.operation(grid=(1, 1))
def matmul_single_node(a, b, c, y):
    m_blocks = a.shape[0] // TILE // M_BLOCK
    n_blocks = b.shape[1] // TILE // N_BLOCK
    k_blocks = a.shape[1] // TILE // K_BLOCK
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(M_BLOCK, K_BLOCK), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(K_BLOCK, N_BLOCK), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(M_BLOCK, N_BLOCK), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(M_BLOCK, N_BLOCK), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(m_blocks):
            for _ in range(n_blocks):
                acc = ttl.math.fill(0, shape=(M_BLOCK, N_BLOCK))
                for _ in range(k_blocks):
                    with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk:
                        acc += a_blk @ b_blk
                with c_dfb.wait() as c_blk, y_dfb.reserve() as y_blk:
                    y_blk.store(ttl.math.relu(acc + c_blk))

    @ttl.datamovement()
    def read():
        for m in range(m_blocks):
            m0 = m * M_BLOCK
            for n in range(n_blocks):
                n0 = n * N_BLOCK
                for k in range(k_blocks):
                    k0 = k * K_BLOCK
                    with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk:
                        xa = ttl.copy(a[m0:m0 + M_BLOCK, k0:k0 + K_BLOCK], a_blk)
                        xb = ttl.copy(b[k0:k0 + K_BLOCK, n0:n0 + N_BLOCK], b_blk)
                        xa.wait()
                        xb.wait()
                with c_dfb.reserve() as c_blk:
                    ttl.copy(c[m0:m0 + M_BLOCK, n0:n0 + N_BLOCK], c_blk).wait()

    @ttl.datamovement()
    def write():
        for m in range(m_blocks):
            m0 = m * M_BLOCK
            for n in range(n_blocks):
                n0 = n * N_BLOCK
                with y_dfb.wait() as y_blk:
                    ttl.copy(y_blk, y[m0:m0 + M_BLOCK, n0:n0 + N_BLOCK]).wait()


def main(m=128, k=256, n=128, seed=0):
    """Run on random bfloat16 inputs; returns (result, reference) — reference in float64."""
    rng = np.random.default_rng(seed)

    def tensor(shape):
        return ttnn.from_numpy(rng.standard_normal(shape).astype(np.float32), dtype=ttnn.bfloat16,
                               layout=ttnn.TILE_LAYOUT)

    a, b, c = tensor((m, k)), tensor((k, n)), tensor((m, n))
    y = ttnn.zeros((m, n), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    matmul_single_node(a, b, c, y)
    reference = np.maximum(ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(b) + ttnn.to_numpy(c), 0)
    return ttnn.to_numpy(y), reference


if __name__ == "__main__":
    result, reference = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()),
          "max |reference|:", float(np.abs(reference).max()))
