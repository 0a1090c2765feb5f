"""``a != b`` / ``a == b`` of two blocks as a condition asks whether they are the same block (as
blocks compare in TT-Lang's simulator): a name rebound to a broadcast is no longer the block it
started as; run on the simulated device against numpy."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import tile_tensor, zeros


def _operation(broadcast_c: bool):
    @ttl.operation(grid=(1, 1))
    def add_maybe_broadcast(a, c, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(2, 1), block_count=2)
        c_dfb = ttl.make_dataflow_buffer_like(c, shape=(c.shape[0] // 32, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(2, 1), block_count=2)

        @ttl.datamovement()
        def read():
            with a_dfb.reserve() as ab, c_dfb.reserve() as cb:
                ttl.copy(a[0:2, 0:1], ab).wait()
                ttl.copy(c[0:c.shape[0] // 32, 0:1], cb).wait()

        @ttl.compute()
        def compute():
            with a_dfb.wait() as ab, c_dfb.wait() as cb, y_dfb.reserve() as yb:
                c_expr = cb
                if broadcast_c:
                    c_expr = ttl.math.broadcast(cb, dims=[0])
                if c_expr == cb:
                    yb.store(ab - cb)
                else:
                    yb.store(ab + (c_expr if c_expr != cb else cb))

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as yb:
                ttl.copy(yb, y[0:2, 0:1]).wait()

    return add_maybe_broadcast


def test_a_block_rebound_to_a_broadcast_is_not_the_block():
    a, c = tile_tensor((64, 32), seed=1), tile_tensor((32, 32), seed=2)
    y = zeros((64, 32))
    _operation(True)(a, c, y)
    cv = ttnn.to_numpy(c)
    np.testing.assert_allclose(ttnn.to_numpy(y), ttnn.to_numpy(a) + np.vstack([cv[:1].repeat(32, 0)] * 2),
                               rtol=1e-2, atol=2e-2)


def test_a_block_not_rebound_is_the_block():
    a, c = tile_tensor((64, 32), seed=3), tile_tensor((64, 32), seed=4)
    y = zeros((64, 32))
    _operation(False)(a, c, y)
    np.testing.assert_allclose(ttnn.to_numpy(y), ttnn.to_numpy(a) - ttnn.to_numpy(c), rtol=1e-2, atol=2e-2)
