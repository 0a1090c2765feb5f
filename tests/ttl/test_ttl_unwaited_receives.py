"""A pipe receive posted and never waited for — its block never published either — is an error at
the receive's line, as TT-Lang asks every receive to be completed: in a pipe body, in a runtime
branch, at a kernel's end. In a body without kernel functions a receive into a block that outlives
the pipe body is waited where the body ends. A receive whose block is published
without a wait is waited before the push (as TT-Lang inserts that wait), and one a ttl.wait_any took
part in may stay pending at the kernel's end; both run on the simulated device against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError, LeftoverBlocksWarning
from ttl_helpers import expect_error, tile_tensor, zeros


def _tensors():
    return tile_tensor((32, 64), seed=7), zeros((32, 64))


def test_a_receive_in_a_pipe_body_never_waited_is_an_error_at_its_line():
    @ttl.operation(grid=(2, 1))
    def op(inp, out):
        net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def dm():
            def send(pipe):
                with dfb.reserve() as blk:
                    ttl.copy(inp[0, 0], blk).wait()
                with dfb.wait() as blk:
                    ttl.copy(blk, pipe).wait()

            net.if_src(send)
            got = dfb.reserve()
            net.if_dst(lambda pipe: ttl.copy(pipe, got))  # error
            got.push()

        @ttl.datamovement()
        def idle():
            pass

    expect_error(lambda: op(*_tensors()), test_a_receive_in_a_pipe_body_never_waited_is_an_error_at_its_line,
                 KernelError, "this pipe receive into got is posted but never waited for",
                 "call .wait() on it (or take it with ttl.wait_any) before the end of this branch")


def test_a_receive_never_waited_when_the_kernel_ends_is_an_error_at_its_line():
    """Every node of the row receives the multicast (its source too), so the receive needs no
    guard; the kernel pushes and pops at its buffers itself, so nothing waits for the receive on
    its behalf."""

    @ttl.operation(grid=(2, 1))
    def op(inp, out):
        pipe = ttl.Pipe(src=(0, 0), dst=(slice(0, 2), 0))
        net = ttl.PipeNet([pipe])
        send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        recv_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def dm():
            def send(p):
                blk = send_dfb.reserve()
                ttl.copy(inp[0, 0], blk).wait()
                send_dfb.push()
                blk = send_dfb.wait()
                ttl.copy(blk, p).wait()
                send_dfb.pop()

            net.if_src(send)
            got = recv_dfb.reserve()
            ttl.copy(pipe, got)  # error

        @ttl.datamovement()
        def idle():
            pass

    expect_error(lambda: op(*_tensors()), test_a_receive_never_waited_when_the_kernel_ends_is_an_error_at_its_line,
                 KernelError, "this pipe receive into got is posted but never waited for", "before the kernel ends")


def test_a_receive_into_a_block_reserved_before_the_pipe_body_is_waited_at_its_end():
    """In a body without kernel functions the block outlives the pipe body, so the receive is
    waited where the body ends (the node that posted it) and the block is pushed later; node 1
    writes it out. Node 0 reserved it too and pushes it unread (a leftover page)."""

    @ttl.operation(grid=(2, 1))
    def op(a, out):
        link = ttl.Pipe(src=(0, 0), dst=(1, 0))
        net = ttl.PipeNet([link])
        stage_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        peer_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        if net.is_src():
            with stage_dfb.reserve() as blk:
                ttl.copy(a[0, 0], blk).wait()

        def send(pipe):
            with stage_dfb.wait() as b:
                ttl.copy(b, pipe).wait()

        net.if_src(send)
        got = peer_dfb.reserve()

        def receive(pipe):
            ttl.copy(pipe, got)

        net.if_dst(receive)
        x, _ = ttl.node(dims=2)
        if x == 1:
            ttl.copy(peer_dfb.wait(), out[0:1, 1:2]).wait()

    a, out = _tensors()
    with pytest.warns(LeftoverBlocksWarning, match="core \\(0,0\\)"):
        op(a, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out)[:, 32:], ttnn.to_numpy(a)[:, :32])


@ttl.operation(grid=(2, 1))
def published_without_wait(inp, out):
    """Node 1 receives into a block it never waits for by hand: the block is pushed once its name is
    dead, and the receive is waited first; then node 1 writes it out."""
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def dm():
        x, _ = ttl.node(dims=2)

        def send(pipe):
            with dfb.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()
            with dfb.wait() as blk:
                ttl.copy(blk, pipe).wait()

        net.if_src(send)

        def receive(pipe):
            got = dfb.reserve()
            ttl.copy(pipe, got)

        net.if_dst(receive)
        if x == 1:
            done = dfb.wait()
            ttl.copy(done, out[0, 1]).wait()

    @ttl.datamovement()
    def idle():
        pass


def test_a_receive_whose_block_is_published_is_waited_before_the_push():
    inp, out = _tensors()
    published_without_wait(inp, out)
    v, got = ttnn.to_numpy(inp), ttnn.to_numpy(out)
    np.testing.assert_array_equal(got[:, 32:], v[:, :32])
    assert not got[:, :32].any()
