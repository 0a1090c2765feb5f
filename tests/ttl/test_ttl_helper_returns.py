"""Python helpers called from kernels that return from inside ``if`` / ``elif`` / ``else``: the work
split of TT-Metal's multi-core examples (``if node < n1: return w1 elif ...: return w2 else: return 0``)
with the node's runtime index; and helpers given a dataflow buffer (which only kernel code acquires
from), built into the kernel; run on the simulated device against numpy."""

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


@ttl.operation(grid=(4, 1))
def fall_through_copy(x, y):
    """Node n copies ``count(n)`` tiles of row n; ``count`` returns from an ``if`` and an ``elif``
    and falls through to a last ``return`` (no ``else``), and ``offset`` returns from a nested
    ``if`` with statements after it."""
    dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

    def count(node):
        if node < 1:
            return 3
        elif node < 3:
            return 2
        return 1

    def offset(node):
        if node >= 1:
            if node == 3:
                return 2
            extra = node - 1
            return extra
        start = 0
        return start

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def read():
        node = ttl.node(dims=1)
        for t in range(count(node)):
            with dfb.reserve() as blk:
                ttl.copy(x[node, offset(node) + t], blk).wait()

    @ttl.datamovement()
    def write():
        node = ttl.node(dims=1)
        for t in range(count(node)):
            with dfb.wait() as blk:
                ttl.copy(blk, y[node, offset(node) + t]).wait()


def test_statements_after_an_if_elif_run_only_where_no_branch_returned():
    x = tile_tensor((128, 96), seed=6)
    y = zeros((128, 96))
    fall_through_copy(x, y)
    tiles = {0: (0, 3), 1: (0, 2), 2: (1, 2), 3: (2, 1)}          # node: (first tile, count)
    keep = np.zeros((4, 3), bool)
    for node, (first, n) in tiles.items():
        keep[node, first:first + n] = True
    expected = ttnn.to_numpy(x) * np.kron(keep, np.ones((32, 32)))
    np.testing.assert_array_equal(ttnn.to_numpy(y), expected)


def first_at_least(n, limit):
    """The first i with i + n >= limit (a return inside a loop), else 3; and a pair from nested loops."""
    for i in range(3):
        if i + n >= limit:
            return i
    return 3


def pair_from_nested(n):
    for i in range(2):
        for j in range(2):
            if i * 2 + j == n:
                return j, i
    return 1, 1


def test_a_return_inside_a_loop_of_a_helper():
    @ttl.operation(grid=(4, 1))
    def op(x, y):
        dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def read():
            node = ttl.node(dims=1)
            r, c = pair_from_nested(node)
            with dfb.reserve() as blk:
                ttl.copy(x[r, (first_at_least(node, 2) + c) % 4], blk).wait()

        @ttl.datamovement()
        def write():
            node = ttl.node(dims=1)
            with dfb.wait() as blk:
                ttl.copy(blk, y[0, node]).wait()

    x, y = tile_tensor((64, 128), seed=7), zeros((32, 128))
    op(x, y)
    tiles = ttnn.to_numpy(x).reshape(2, 32, 4, 32)
    picked = [tiles[pair_from_nested(n)[0], :, (first_at_least(n, 2) + pair_from_nested(n)[1]) % 4, :]
              for n in range(4)]
    np.testing.assert_array_equal(ttnn.to_numpy(y), np.concatenate(picked, axis=1))


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


# -- defs inside a kernel, called there ----------------------------------------------------------


@ttl.operation(grid=(2, 2))
def nested_defs(x, y):
    """Each kernel defines its own helpers and calls them: the compute kernel ``3 * a + 1`` through
    two nested defs (one with a default), the reader the node's tile through a def that reads the
    node's coordinates and returns from a runtime branch."""
    dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        def scaled(block, k=3.0):
            return block * k

        def shifted(block):
            return scaled(block) + 1.0

        with dfb.wait() as a, out_dfb.reserve() as o:
            o.store(shifted(a))

    @ttl.datamovement()
    def read():
        def tile_of_node():
            col, row = ttl.node(dims=2)
            assert isinstance(col, int) and not isinstance(col, tuple)
            if row == 0:
                return col
            return 2 + col

        with dfb.reserve() as blk:
            ttl.copy(x[0, tile_of_node()], blk).wait()

    @ttl.datamovement()
    def write():
        def where():
            coord = ttl.node(dims=2)
            assert isinstance(coord, tuple) and len(coord) == 2
            return coord[1] * 2 + coord[0]

        with out_dfb.wait() as blk:
            ttl.copy(blk, y[0, where()]).wait()


def test_defs_inside_a_kernel_are_built_where_they_are_called():
    x = tile_tensor((32, 4 * 32), seed=9)
    y = zeros((32, 4 * 32))
    nested_defs(x, y)
    expected = ttnn.to_numpy(x).astype(np.float32) * 3.0 + 1.0
    np.testing.assert_allclose(ttnn.to_numpy(y), expected, rtol=2e-2, atol=2e-2)


def test_a_def_inside_a_kernel_called_with_wrong_arguments():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            def first(i):
                return i

            with dfb.reserve() as blk:
                ttl.copy(x[0, first(0, 1)], blk).wait()  # error

        @ttl.compute()
        def compute():
            with dfb.wait():
                pass

    expect_error(lambda: op(tile_tensor((32, 64)), zeros((32, 64))),
                 test_a_def_inside_a_kernel_called_with_wrong_arguments, KernelError, "first()",
                 "too many positional arguments")


def _load(dfb, tensor, col):
    """A plain helper that only kernel code can run: it reserves, copies into and pushes a block."""
    blk = dfb.reserve()
    ttl.copy(tensor[0:1, col:col + 1], blk).wait()
    blk.push()


@ttl.operation(grid=(1, 1))
def loaded_by_a_helper(inp, out):
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        _load(in_dfb, inp, 1)          # every argument known when the kernel is built: still inlined

    @ttl.compute()
    def compute():
        with in_dfb.wait() as a, out_dfb.reserve() as o:
            o.store(a * 3.0)

    @ttl.datamovement()
    def write():
        with out_dfb.wait() as o:
            ttl.copy(o, out[0:1, 0:1]).wait()


def test_a_helper_given_a_buffer_is_built_into_the_kernel():
    values = np.random.default_rng(2).standard_normal((32, 64)).astype(np.float32)
    inp = ttnn.from_numpy(values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    loaded_by_a_helper(inp, out)
    np.testing.assert_allclose(ttnn.to_numpy(out), values[:, 32:] * 3.0, rtol=1e-6)
