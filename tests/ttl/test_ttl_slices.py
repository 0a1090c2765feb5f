"""TT-Lang slices indexed by loops and nodes: a slice that leaves the tensor for some loop or
node value is an error at the slice's line (when no runtime if guards it); guarded and in-range
slices run."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
from tilefold.errors import KernelError
from ttl_helpers import expect_error, tile_tensor, zeros


def _copy_op(cols_read, grid=(1, 1), guard=False):
    @ttl.operation(grid=grid)
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            for _ in range(cols_read):
                with x_dfb.wait() as a, y_dfb.reserve() as b:
                    b.store(a)

        @ttl.datamovement()
        def read():
            nx, _ = ttl.node(dims=2)
            for c in range(cols_read):
                with x_dfb.reserve() as blk:
                    ttl.copy(x[0, nx + c], blk).wait()  # error

        @ttl.datamovement()
        def write():
            nx, _ = ttl.node(dims=2)
            for c in range(cols_read):
                with y_dfb.wait() as blk:
                    ttl.copy(blk, y[0, c]).wait()

    return op


def test_a_loop_that_runs_past_the_last_column():
    x, y = tile_tensor((32, 128), seed=1), zeros((32, 128))
    expect_error(lambda: _copy_op(5)(x, y), _copy_op, KernelError,
                 "x[...]: dimension 1 starts at tile 0 to 4", "outside the tensor (4 tiles")


def test_a_grid_wider_than_the_tensor():
    x, y = tile_tensor((32, 128), seed=1), zeros((32, 128))
    expect_error(lambda: _copy_op(1, grid=(6, 1))(x, y), _copy_op, KernelError,
                 "dimension 1 starts at tile 0 to 5")


def test_slices_within_the_tensor_run():
    x, y = tile_tensor((32, 128), seed=1), zeros((32, 128))
    _copy_op(4)(x, y)
    np.testing.assert_array_equal(ttl_to_numpy(y), ttl_to_numpy(x))


def ttl_to_numpy(t):
    import tilefold.ttnn as ttnn

    return ttnn.to_numpy(t)
