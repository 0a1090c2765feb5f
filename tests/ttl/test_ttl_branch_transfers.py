"""A transfer started before a runtime ``if`` and waited for in one branch only: the other branch
waits for it at its end, so the wait the program writes after the ``if`` (on a handle the branch
reassigned) leaves no copy in flight on either path, and each branch starts from the block states
before the ``if``."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import tile_tensor, zeros


@ttl.operation(grid=(2, 1))
def reassigned_in_a_branch(inp, out, scratch):
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        x, _ = ttl.node(dims=2)
        with in_dfb.reserve() as blk:
            tx = ttl.copy(inp[0, x], blk)
            if x == 1:
                tx.wait()
                tx = ttl.copy(blk, scratch[0, 0])
            tx.wait()

    @ttl.compute()
    def compute():
        with in_dfb.wait() as a, out_dfb.reserve() as o:
            o.store(a)

    @ttl.datamovement()
    def write():
        x, _ = ttl.node(dims=2)
        with out_dfb.wait() as blk:
            ttl.copy(blk, out[0, x]).wait()


def test_a_handle_reassigned_in_one_branch_is_waited_for_on_both_paths():
    inp, out, scratch = tile_tensor((32, 64), seed=1), zeros((32, 64)), zeros((32, 32))
    reassigned_in_a_branch(inp, out, scratch)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(inp))
    np.testing.assert_array_equal(ttnn.to_numpy(scratch), ttnn.to_numpy(inp)[:, 32:])


@ttl.operation(grid=(2, 1))
def waited_in_the_branch_and_after(inp, out):
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        x, _ = ttl.node(dims=2)
        with in_dfb.reserve() as blk:
            tx = ttl.copy(inp[0, x], blk)
            if x == 0:
                tx.wait()
            tx.wait()          # waits on the path that did not; a no-op on the other

    @ttl.compute()
    def compute():
        with in_dfb.wait() as a, out_dfb.reserve() as o:
            o.store(a * 2.0)

    @ttl.datamovement()
    def write():
        x, _ = ttl.node(dims=2)
        with out_dfb.wait() as blk:
            ttl.copy(blk, out[0, x]).wait()


def test_a_wait_in_a_branch_and_again_after_it_is_not_an_error():
    inp, out = tile_tensor((32, 64), seed=2), zeros((32, 64))
    waited_in_the_branch_and_after(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(inp) * 2)


@ttl.operation(grid=(2, 1))
def reassigned_value(inp, out):
    inp_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def comp():
        x, _ = ttl.node(dims=2)
        with inp_dfb.wait() as a, out_dfb.reserve() as o:
            result = a
            if x == 0:
                result = ttl.math.exp(a)
            else:
                result = ttl.math.abs(a)
            o.store(result)

    @ttl.datamovement()
    def rd():
        x, _ = ttl.node(dims=2)
        with inp_dfb.reserve() as blk:
            ttl.copy(inp[0, x], blk).wait()

    @ttl.datamovement()
    def wr():
        x, _ = ttl.node(dims=2)
        with out_dfb.wait() as blk:
            ttl.copy(blk, out[0, x]).wait()


def test_a_value_replaced_in_both_branches_without_being_read():
    """``result = a`` then ``result = exp(a)`` / ``abs(a)`` in an if / else (TT-Lang's cond_reassign):
    the replaced value is waited for before it is popped."""
    inp, out = tile_tensor((32, 64), seed=3), zeros((32, 64))
    reassigned_value(inp, out)
    src, got = ttnn.to_numpy(inp), ttnn.to_numpy(out)
    np.testing.assert_allclose(got[:, :32], np.exp(src[:, :32]), rtol=2e-2, atol=5e-2)
    np.testing.assert_array_equal(got[:, 32:], np.abs(src[:, 32:]))
