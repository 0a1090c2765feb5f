"""The operation's body as TT-Lang's spec examples write it: ``ttl.node()`` values compared there
(``assert 0 <= x < 8``) are Python values when every node agrees, one clear error when nodes
differ (never a silent ``False`` for ``node == 0``); a body of setup only runs nothing on the
device; ``padded_shape`` and ``tile.tile_shape`` of host tensors as TT-NN gives them."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error


def test_comparisons_every_node_agrees_on_are_python_values():
    seen = []

    @ttl.operation(grid=(4, 2))
    def op():
        x, y, z = ttl.node(dims=3)
        n = ttl.node(dims=1)
        assert 0 <= x < 4 and 0 <= y < 2 and z == 0
        assert n < 8 and not (n >= 8) and (n + 1 > 0)
        seen.append(int(x * 0 + 3))

    op()
    assert seen == [3]


def test_a_comparison_nodes_disagree_on_names_the_users_line():
    @ttl.operation(grid=(2, 1))
    def op():
        if ttl.node(dims=1) == 0:  # error
            pass

    expect_error(op, test_a_comparison_nodes_disagree_on_names_the_users_line, KernelError, "differs between nodes")


def test_a_node_value_nodes_disagree_on_as_an_int_names_the_users_line():
    @ttl.operation(grid=(2, 1))
    def op():
        list(range(ttl.node(dims=1)))  # error

    expect_error(op, test_a_node_value_nodes_disagree_on_as_an_int_names_the_users_line, KernelError,
                 "differs between nodes")


def test_padded_shapes_in_tiles_and_in_rows():
    def tiles(t):
        padded, tile = list(t.padded_shape), list(t.tile.tile_shape)
        return padded[:-2] + [d // s for d, s in zip(padded[-2:], tile)]

    for shape, expected in (((), [1, 1]), ((128,), [1, 4]), ((128, 1), [4, 1]), ((2, 2, 120, 30), [2, 2, 4, 1])):
        assert tiles(ttnn.from_numpy(np.zeros(shape, np.float32), layout=ttnn.TILE_LAYOUT)) == expected
    for shape, expected in (((), [1]), ((128,), [128]), ((2, 120, 30), [2, 120, 30])):
        t = ttnn.from_numpy(np.zeros(shape, np.float32), layout=ttnn.ROW_MAJOR_LAYOUT)
        assert list(t.padded_shape) == expected


def test_unpacking_the_linear_node_index_in_the_body_is_an_error_at_the_line():
    def run():
        @ttl.operation(grid=(2, 2))
        def op():
            x, y = ttl.node(dims=1)  # error

        op()

    expect_error(run, test_unpacking_the_linear_node_index_in_the_body_is_an_error_at_the_line, KernelError,
                 "this node coordinate is one number", "ttl.node(dims=2)")
