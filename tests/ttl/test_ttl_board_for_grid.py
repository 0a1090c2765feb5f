"""A grid larger than the default device (n150, 8x8) runs on the smallest board that holds it —
TT-Lang programs written for Blackhole use ``grid=(13, 10)`` — with a warning at the operation
naming ``--arch``; with the device chosen it stays an error (``test_ttl_errors``). Results are
compared with numpy on the simulated board."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.frontend.ttl.session import configured


def doubling(grid):
    @ttl.operation(grid=grid)
    def double(a, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with a_dfb.wait() as x, o_dfb.reserve() as o:
                o.store(x + x)

        @ttl.datamovement()
        def read():
            x, y = ttl.node(dims=2)
            with a_dfb.reserve() as blk:
                ttl.copy(a[y, x], blk).wait()

        @ttl.datamovement()
        def write():
            x, y = ttl.node(dims=2)
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[y, x]).wait()

    return double


@pytest.mark.parametrize("grid, board", [((13, 10), "p150-full (13x10)"), ((9, 3), "p150 (11x10)")])
def test_grid_too_large_for_the_default_device_runs_on_the_board_that_holds_it(grid, board):
    cols, rows = grid
    values = np.random.default_rng(1).standard_normal((32 * rows, 32 * cols)).astype(np.float32)
    a = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros(values.shape, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    with configured(report=False) as session:
        with pytest.warns(UserWarning, match=r"does not fit the 8x8 compute grid of n150") as caught:
            doubling(grid)(a, out)
        assert len(session.runs) == 1
    assert caught[0].filename == __file__
    assert f"runs on a {board}" in str(caught[0].message) and f"--arch {board.split()[0]}" in str(caught[0].message)
    bf16 = a.to_numpy()
    np.testing.assert_array_equal(out.to_numpy(), bf16 + bf16)
