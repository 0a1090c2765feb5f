"""The ``acc = None`` idiom: ``acc = x if acc is None else acc + x`` over a runtime loop sums its
blocks (the first iteration is built on its own), against numpy."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import tile_tensor, zeros


@ttl.operation(grid=(1, 1))
def row_of_products(a, b, c):
    """c[0, n] = sum over k of a[0, k] @ b[k, n], one output tile per n."""
    k_tiles = a.shape[1] // ttl.TILE_SIZE
    n_tiles = b.shape[1] // ttl.TILE_SIZE
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(n_tiles):
            acc = None
            for _ in range(k_tiles):
                with a_dfb.wait() as x, b_dfb.wait() as y:
                    product = x @ y
                    acc = product if acc is None else acc + product
            with c_dfb.reserve() as out:
                out.store(acc)

    @ttl.datamovement()
    def read():
        for n in range(n_tiles):
            for k in range(k_tiles):
                with a_dfb.reserve() as x, b_dfb.reserve() as y:
                    ttl.copy(a[0, k], x).wait()
                    ttl.copy(b[k, n], y).wait()

    @ttl.datamovement()
    def write():
        for n in range(n_tiles):
            with c_dfb.wait() as out:
                ttl.copy(out, c[0, n]).wait()


def test_acc_none_then_sum_over_a_runtime_loop():
    a = tile_tensor((32, 128), seed=14, scale=0.5)
    b = tile_tensor((128, 64), seed=15, scale=0.5)
    c = zeros((32, 64))
    row_of_products(a, b, c)
    expected = ttnn.to_numpy(a).astype(np.float32) @ ttnn.to_numpy(b).astype(np.float32)
    np.testing.assert_allclose(ttnn.to_numpy(c).astype(np.float32), expected, rtol=2e-2, atol=5e-2)
