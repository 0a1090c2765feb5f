"""Sibling ``if`` s on conditions that exclude each other (``if selected == 0:`` ... ``if selected ==
1:`` after ``ttl.wait_any``, as TT-Lang's spec writes the choice; ``if y == 0:`` ... ``if y != 0:``):
a block one of them released, or a receive one of them waited for, is still held (not completed) in
the other; once such ifs cover every path the block is released. Run on the simulated device
against numpy; conditions that do not exclude each other stay errors at the user's line."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error

SLOW = ttl.Pipe(src=(1, 0), dst=(0, 0))
FAST = ttl.Pipe(src=(2, 0), dst=(0, 0))
SLOW_NET, FAST_NET = ttl.PipeNet([SLOW]), ttl.PipeNet([FAST])


@ttl.operation(grid=(3, 1))
def first_then_second(inp, out):
    """Node 0 takes whichever of two receives completes first into out column 0 and the other
    into column 1; nodes 1 and 2 send tiles 1 and 2 of ``inp``."""
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    slow_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    fast_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def send():
        x, _ = ttl.node(dims=2)
        if x > 0:
            with send_dfb.reserve() as blk:
                ttl.copy(inp[0:1, x:x + 1], blk).wait()
                if x == 1:
                    ttl.copy(blk, SLOW).wait()
                else:
                    ttl.copy(blk, FAST).wait()

    @ttl.datamovement()
    def receive():
        x, _ = ttl.node(dims=2)
        if x == 0:
            slow_block = slow_dfb.reserve()
            fast_block = fast_dfb.reserve()
            slow_request = ttl.copy(SLOW, slow_block)
            fast_request = ttl.copy(FAST, fast_block)
            selected = ttl.wait_any((slow_request, fast_request), start=0).index()
            if selected == 0:
                slow_block.push()
                with slow_dfb.wait() as r:
                    ttl.copy(r, out[0:1, 0:1]).wait()
            if selected == 1:
                fast_block.push()
                with fast_dfb.wait() as r:
                    ttl.copy(r, out[0:1, 0:1]).wait()
            if selected == 0:                   # the other one, in a second pair of branches
                fast_request.wait()
                fast_block.push()
                with fast_dfb.wait() as r:
                    ttl.copy(r, out[0:1, 1:2]).wait()
            if selected == 1:
                slow_request.wait()
                slow_block.push()
                with slow_dfb.wait() as r:
                    ttl.copy(r, out[0:1, 1:2]).wait()


def test_sibling_ifs_on_the_selected_index_release_and_complete_each_block_once():
    values = np.random.default_rng(3).standard_normal((32, 96)).astype(np.float32)
    inp = ttnn.from_numpy(values, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 64), layout=ttnn.TILE_LAYOUT)
    first_then_second(inp, out)
    got = ttnn.to_numpy(out)
    tiles = {ttnn.to_numpy(inp)[:, 32:64].tobytes(), ttnn.to_numpy(inp)[:, 64:].tobytes()}
    assert {got[:, :32].tobytes(), got[:, 32:].tobytes()} == tiles


PIPE = ttl.Pipe(src=(1, 0), dst=(0, 0))
NET = ttl.PipeNet([PIPE])


@ttl.operation(grid=(2, 1))
def complementary(inp, out):
    """Node (0, 0) receives node (1, 0)'s tile in a block waited for and pushed in ``if y == 0:`` and
    again in ``if y != 0:``; after them the block is released on every path, so the buffer is read."""
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    land_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def send():
        x, y = ttl.node(dims=2)
        if x == 1 and y == 0:
            with send_dfb.reserve() as blk:
                ttl.copy(inp[0:1, 0:1], blk).wait()
                ttl.copy(blk, PIPE).wait()

    @ttl.datamovement()
    def receive():
        x, y = ttl.node(dims=2)
        if x == 0 and y == 0:
            blk = land_dfb.reserve()
            request = ttl.copy(PIPE, blk)
            if y == 0:
                request.wait()
                blk.push()
            if y != 0:
                request.wait()
                blk.push()
            with land_dfb.wait() as r:
                ttl.copy(r, out[0:1, 0:1]).wait()


def test_a_receive_waited_in_complementary_ifs_completes_on_every_path():
    values = np.random.default_rng(4).standard_normal((32, 32)).astype(np.float32)
    inp = ttnn.from_numpy(values, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), layout=ttnn.TILE_LAYOUT)
    complementary(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(inp))


def test_ifs_whose_conditions_may_both_hold_still_see_the_earlier_release():
    def build():
        @ttl.operation(grid=(2, 1))
        def overlapping(inp, out):
            dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

            @ttl.compute()
            def compute():
                pass

            @ttl.datamovement()
            def read():
                x, _ = ttl.node(dims=2)
                blk = dfb.reserve()
                ttl.copy(inp[0:1, 0:1], blk).wait()
                if x == 0:
                    blk.push()
                if x < 2:
                    blk.push()  # error

            @ttl.datamovement()
            def write():
                with dfb.wait() as blk:
                    ttl.copy(blk, out[0:1, 0:1]).wait()

        t = ttnn.zeros((32, 32), layout=ttnn.TILE_LAYOUT)
        overlapping(t, ttnn.zeros((32, 32), layout=ttnn.TILE_LAYOUT))

    expect_error(build, test_ifs_whose_conditions_may_both_hold_still_see_the_earlier_release, KernelError,
                 "blk was already released")
