"""Kernels written without ``push()`` / ``pop()`` that hold several blocks: a compute kernel using a
younger block after an older one of the same buffer was released (the younger block is acquired
again at its new FIFO position, values read from it are kept first), a data movement kernel whose
copy rebinds the block's name (``tx = ttl.copy(tx, ...)``: the block stays until ``tx.wait()``), a
waited block's name reassigned in a loop (it carries the block's value). Run on the simulated
device against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import tile_tensor, zeros


def _np(t):
    return ttnn.to_numpy(t).astype(np.float32)


@ttl.operation(grid=(1, 1))
def three_in_flight(inp, out):
    """Wait for three tiles, then write 2*c, a+1, b-c: ``a`` is released after its last use while
    ``b`` and ``c`` (and ``d``, computed from ``c`` before) are still to be read."""
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=3)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        a = in_dfb.wait()
        b = in_dfb.wait()
        c = in_dfb.wait()
        d = c * 2.0
        with out_dfb.reserve() as o:
            o.store(a + 1.0)
        with out_dfb.reserve() as o:
            o.store(b - c)
        with out_dfb.reserve() as o:
            o.store(d)

    @ttl.datamovement()
    def reader():
        for k in range(3):
            blk = in_dfb.reserve()
            tx = ttl.copy(inp[0, k], blk)
            tx.wait()

    @ttl.datamovement()
    def writer():
        for k in range(3):
            tx = out_dfb.wait()
            tx = ttl.copy(tx, out[0, k])
            tx.wait()


def test_younger_blocks_after_an_older_release_and_copies_rebinding_the_block_name():
    inp = tile_tensor((32, 96), seed=11)
    out = zeros((32, 96))
    three_in_flight(inp, out)
    v = _np(inp)
    a, b, c = v[:, :32], v[:, 32:64], v[:, 64:]
    expected = np.concatenate([a + 1.0, b - c, c * 2.0], axis=1)
    np.testing.assert_allclose(_np(out), expected, rtol=2e-2, atol=2e-2)


@ttl.operation(grid=(1, 1))
def doubled_three_times(inp, out):
    """``acc = dfb.wait()`` and ``acc = acc + acc`` three times in a loop: 8 times the tile."""
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

    @ttl.compute()
    def compute():
        acc = in_dfb.wait()
        for _ in range(3):
            acc = acc + acc
        with out_dfb.reserve() as o:
            o.store(acc)

    @ttl.datamovement()
    def reader():
        with in_dfb.reserve() as blk:
            ttl.copy(inp[0, 0], blk).wait()

    @ttl.datamovement()
    def writer():
        with out_dfb.wait() as blk:
            ttl.copy(blk, out[0, 0]).wait()


def test_waited_block_name_reassigned_in_a_loop():
    inp = tile_tensor((32, 32), seed=12)
    out = zeros((32, 32))
    doubled_three_times(inp, out)
    np.testing.assert_allclose(_np(out), _np(inp) * 8.0, rtol=1e-2, atol=1e-2)


@ttl.operation(grid=(1, 1))
def unwaited_inline_copies(inp, out):
    """Copies into and out of blocks acquired inside the copy, never waited for by the program:
    each is waited for before its block is released at the end of the statement."""
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(2, 2), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(2, 2), block_count=2)

    @ttl.compute()
    def compute():
        x = in_dfb.wait()
        o = out_dfb.reserve()
        o.store(ttl.math.abs(x) + 0.5)

    @ttl.datamovement()
    def reader():
        ttl.copy(inp[0:2, 0:2], in_dfb.reserve())

    @ttl.datamovement()
    def writer():
        ttl.copy(out_dfb.wait(), out[0:2, 0:2])


def test_copies_into_inline_acquired_blocks_are_waited_for():
    inp = tile_tensor((64, 64), seed=13)
    out = zeros((64, 64))
    unwaited_inline_copies(inp, out)
    np.testing.assert_allclose(_np(out), np.abs(_np(inp)) + 0.5, rtol=1e-2, atol=1e-2)


def test_two_held_blocks_straddling_the_buffer_end_name_the_buffer():
    """Taking one block of a 2-block buffer alone and then two at once puts the second held block
    past the buffer's end: the run stops at the line, naming the buffer and what to change."""
    from tilefold.errors import CircularBufferError

    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        staged = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def reader():
            for i in range(3):
                with staged.reserve() as blk:
                    ttl.copy(inp[0, i], blk).wait()

        @ttl.datamovement()
        def writer():
            with staged.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()
            with staged.wait() as first, staged.wait() as second:
                ttl.copy(first, out[0, 1]).wait()
                ttl.copy(second, out[0, 2]).wait()

    with pytest.raises(CircularBufferError, match="staged: several blocks held at once must not straddle its end"):
        op(tile_tensor((32, 96)), zeros((32, 96)))
