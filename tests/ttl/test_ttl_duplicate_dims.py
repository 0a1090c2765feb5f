"""A reduction or broadcast whose dims list one dimension twice (``dims=[1, 1]``, ``dims=[1, -1]``)
is an error at the user's line, as numpy and torch make it; each dimension once still runs
(compared with numpy)."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error, tile_tensor, zeros


def _reduce_op(dims):
    @ttl.operation(grid=(1, 1))
    def op(x, sc, out):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        sc_dfb = ttl.make_dataflow_buffer_like(sc, shape=(1, 1), block_count=1)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as xv, sc_dfb.wait() as s, out_dfb.reserve() as o:
                o.store(ttl.math.reduce_sum(xv, s, dims=dims))  # error

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()
            with sc_dfb.reserve() as blk:
                ttl.copy(sc[0, 0], blk).wait()

        @ttl.datamovement()
        def write():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()

    return op


def _args():
    return (tile_tensor((32, 32)), ttnn.from_numpy(np.ones((32, 32), np.float32), dtype=ttnn.bfloat16,
                                                   layout=ttnn.TILE_LAYOUT), zeros((32, 32)))


@pytest.mark.parametrize("dims", [[1, 1], [1, -1]])
def test_a_reduction_dimension_listed_twice(dims):
    expect_error(lambda: _reduce_op(dims)(*_args()), _reduce_op, KernelError,
                 f"ttl.math.reduce_sum: dims={dims} names dimension 1 twice")


def test_each_reduction_dimension_once_runs():
    x, sc, out = _args()
    _reduce_op([1])(x, sc, out)
    want = ttnn.to_numpy(x).astype(np.float32).sum(axis=1)
    np.testing.assert_allclose(ttnn.to_numpy(out)[:, 0].astype(np.float32), want, rtol=2e-2, atol=0.3)


def test_a_broadcast_dimension_listed_twice():
    @ttl.operation(grid=(1, 1))
    def op(x, out):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as xv, out_dfb.reserve() as o:
                o.store(ttl.math.broadcast(xv, o, dims=[0, 0]))  # error

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()

        @ttl.datamovement()
        def write():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()

    expect_error(lambda: op(tile_tensor((32, 32)), zeros((32, 32))), test_a_broadcast_dimension_listed_twice,
                 KernelError, "ttl.math.broadcast: dims=[0, 0] names dimension 0 twice")
