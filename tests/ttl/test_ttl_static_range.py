"""``ttl.static_range``: a loop unrolled when the kernel is built (its index a Python integer in each
copy of the body); its bounds must be compile-time integers."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error, tile_tensor, zeros

SCALES = [1.0, 2.0, 3.0, 4.0]


@ttl.operation(grid=(1, 1))
def _scaled_columns(x, y):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for k in ttl.static_range(3, -1, -1):          # columns 3, 2, 1, 0; k is a Python int
            with x_dfb.wait() as xv, y_dfb.reserve() as yv:
                yv.store(xv * ttl.math.fill(xv, SCALES[k]))

    @ttl.datamovement()
    def read():
        for k in ttl.static_range(3, -1, -1):
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, k], blk).wait()

    @ttl.datamovement()
    def write():
        for k in ttl.static_range(3, -1, -1):
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[0, k]).wait()


def test_static_range_unrolls_with_python_indices():
    x, y = tile_tensor((32, 128), seed=5), zeros((32, 128))
    _scaled_columns(x, y)
    want = ttnn.to_numpy(x).astype(np.float32) * np.repeat(np.array(SCALES, np.float32), 32)[None, :]
    np.testing.assert_allclose(ttnn.to_numpy(y).astype(np.float32), want, rtol=1e-2, atol=1e-2)
    assert list(ttl.static_range(2, 8, 3)) == [2, 5]          # outside a kernel it is range


def test_a_runtime_bound_of_static_range_names_the_line():
    @ttl.operation(grid=(2, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            node_x, _ = ttl.node(dims=2)
            for k in ttl.static_range(node_x):  # error
                with x_dfb.reserve() as blk:
                    ttl.copy(x[0, k], blk).wait()

    expect_error(lambda: op(tile_tensor((32, 64)), zeros((32, 64))), test_a_runtime_bound_of_static_range_names_the_line,
                 KernelError, "ttl.static_range() argument 1 must be a compile-time integer")


def test_a_zero_step_of_static_range_names_the_line():
    def run():
        ttl.static_range(0, 4, 0)  # error

    expect_error(run, test_a_zero_step_of_static_range_names_the_line, KernelError,
                 "ttl.static_range() step must not be zero")
