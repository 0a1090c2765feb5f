"""Infinities and NaN flow through a simulated kernel as they do on the device: the matmul of an
infinity and a zero is NaN in the result, and the run prints no floating-point warning of the
simulator's own arithmetic."""

from __future__ import annotations

import warnings

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import zeros


@ttl.operation(grid=(1, 1))
def product(a, b, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, b_dfb.wait() as y, out_dfb.reserve() as o:
            o.store(x @ y)

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as blk:
            ttl.copy(a[0, 0], blk).wait()
        with b_dfb.reserve() as blk:
            ttl.copy(b[0, 0], blk).wait()

    @ttl.datamovement()
    def write():
        with out_dfb.wait() as blk:
            ttl.copy(blk, out[0, 0]).wait()


def test_an_infinity_times_zero_is_nan_without_a_warning():
    a = np.ones((32, 32), np.float32)
    a[0, 0] = np.inf
    b = np.zeros((32, 32), np.float32)
    b[:, 1] = 1.0
    out = zeros((32, 32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # any warning fails the test
        product(ttnn.from_numpy(a, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT),
                ttnn.from_numpy(b, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT), out)
    got = out.host_values
    assert np.isnan(got[0, 0]) and got[0, 1] == np.inf      # inf * 0 and inf * 1 in row 0
    np.testing.assert_array_equal(got[1:, 1], 32.0)
    np.testing.assert_array_equal(got[1:, 0], 0.0)
