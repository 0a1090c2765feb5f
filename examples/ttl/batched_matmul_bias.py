"""Batched matmul with a bias: ``y[i] = a[i] @ b[i] + bias`` for every batch ``i``.

The batches are dealt to the nodes (``ttl.node(dims=1)``); for each one the reader copies the
2-D matrices ``a[i, 0:M, 0:K]`` and ``b[i, 0:K, 0:N]`` out of the 3-D tensors and the bias
``bias[0:M, 0:N]``, and the compute kernel fuses the matmul and the bias add into one store.

Run: ``python examples/ttl/batched_matmul_bias.py`` (or ``tilefold sim`` on this file).
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32


@ttl.operation(grid=(2, 1))
def batched_matmul_bias(a, b, bias, y):
    batches, m_tiles, k_tiles = a.shape[0], a.shape[1] // TILE, a.shape[2] // TILE
    n_tiles = b.shape[2] // TILE
    nodes = ttl.grid_size(dims=1)
    per_node = -(-batches // nodes)
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(m_tiles, k_tiles), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(k_tiles, n_tiles), block_count=2)
    bias_dfb = ttl.make_dataflow_buffer_like(bias, shape=(m_tiles, n_tiles), block_count=1)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(m_tiles, n_tiles), block_count=2)

    @ttl.datamovement()
    def read():
        node = ttl.node(dims=1)
        with bias_dfb.reserve() as bias_blk:
            ttl.copy(bias[0:m_tiles, 0:n_tiles], bias_blk).wait()
        for j in range(per_node):
            i = node * per_node + j
            if i < batches:
                with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk:
                    xa = ttl.copy(a[i, 0:m_tiles, 0:k_tiles], a_blk)
                    xb = ttl.copy(b[i, 0:k_tiles, 0:n_tiles], b_blk)
                    xa.wait()
                    xb.wait()

    @ttl.compute()
    def compute():
        node = ttl.node(dims=1)
        with bias_dfb.wait() as bias_blk:
            for j in range(per_node):
                if node * per_node + j < batches:
                    with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, y_dfb.reserve() as y_blk:
                        y_blk.store(a_blk @ b_blk + bias_blk)

    @ttl.datamovement()
    def write():
        node = ttl.node(dims=1)
        for j in range(per_node):
            i = node * per_node + j
            if i < batches:
                with y_dfb.wait() as y_blk:
                    ttl.copy(y_blk, y[i, 0:m_tiles, 0:n_tiles]).wait()


def main(batches=3, m=64, k=64, n=64, seed=0):
    """Run on random bfloat16 inputs; returns (result, reference) as float32 arrays."""
    rng = np.random.default_rng(seed)

    def tensor(shape):
        return ttnn.from_numpy(rng.standard_normal(shape).astype(np.float32), dtype=ttnn.bfloat16,
                               layout=ttnn.TILE_LAYOUT)

    a, b, bias = tensor((batches, m, k)), tensor((batches, k, n)), tensor((m, n))
    y = ttnn.zeros((batches, m, n), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    batched_matmul_bias(a, b, bias, y)
    reference = ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(b) + ttnn.to_numpy(bias)
    return ttnn.to_numpy(y), reference.astype(np.float32)


if __name__ == "__main__":
    result, reference = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()))
