"""Python helpers called from kernels that return from inside ``if`` / ``elif`` / ``else``: the work
split of TT-Metal's multi-core examples (``if node < n1: return w1 elif ...: return w2 else: return 0``)
with the node's runtime index, run on the simulated device against numpy."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error, tile_tensor, zeros

TILES = 7           # over 3 nodes: 3, 3, 1 tiles; ceil split as TT-Metal's split_work_to_cores


@ttl.operation(grid=(3, 1))
def split_copy(x, y):
    n_nodes = 3
    per_node = -(-TILES // n_nodes)
    full_nodes = TILES // per_node
    dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

    def tiles_of(node):
        if node < full_nodes:
            return per_node
        elif node == full_nodes:
            return TILES - full_nodes * per_node
        else:
            return 0

    def span_of(node):
        if node < full_nodes:
            return node * per_node, per_node
        return full_nodes * per_node, tiles_of(node)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def read():
        node = ttl.node(dims=1)
        start, count = span_of(node)
        for t in range(count):
            with dfb.reserve() as blk:
                ttl.copy(x[0, start + t], blk).wait()

    @ttl.datamovement()
    def write():
        node = ttl.node(dims=1)
        first, _ = span_of(node)
        for t in range(tiles_of(node)):
            with dfb.wait() as blk:
                ttl.copy(blk, y[0, first + t]).wait()


def test_helpers_returning_from_branches_split_the_work():
    x = tile_tensor((32, TILES * 32), seed=4)
    y = zeros((32, TILES * 32))
    split_copy(x, y)
    np.testing.assert_array_equal(ttnn.to_numpy(y), ttnn.to_numpy(x))


def test_a_return_inside_a_loop_of_a_helper_is_a_clear_error():
    def first_even(n):
        for i in range(n):
            if i % 2 == 0:
                return i  # error
        return 0

    @ttl.operation(grid=(2, 1))
    def op(x, y):
        dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def read():
            node = ttl.node(dims=1)
            with dfb.reserve() as blk:
                ttl.copy(x[0, first_even(node)], blk).wait()

        @ttl.datamovement()
        def write():
            node = ttl.node(dims=1)
            with dfb.wait() as blk:
                ttl.copy(blk, y[0, node]).wait()

    expect_error(lambda: op(tile_tensor((32, 64)), zeros((32, 64))),
                 test_a_return_inside_a_loop_of_a_helper_is_a_clear_error, KernelError, "returns from inside a for")


def _flat(coord, rows):
    x, y = coord
    return x * rows + y


@ttl.operation(grid=(2, 2))
def copy_by_flat_index(x, y):
    dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def read():
        i = _flat(ttl.node(dims=2), 2)
        with dfb.reserve() as blk:
            ttl.copy(x[0, i], blk).wait()

    @ttl.datamovement()
    def write():
        i = _flat(ttl.node(dims=2), 2)
        with dfb.wait() as blk:
            ttl.copy(blk, y[0, i]).wait()


def test_a_helper_given_a_tuple_of_runtime_values_is_built_inline():
    x = tile_tensor((32, 128), seed=6)
    y = zeros((32, 128))
    copy_by_flat_index(x, y)
    np.testing.assert_array_equal(ttnn.to_numpy(y), ttnn.to_numpy(x))
