"""A buffer left holding blocks when the program ends (the last value of a running maximum that
nothing reads, as flash-attention kernels leave it): a warning at the last push, not an error —
on the device each launch starts its buffers empty. Run against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError, LeftoverBlocksWarning
from ttl_helpers import expect_error, tile_tensor, zeros

STEPS = 4


def _line_of(marker: str) -> int:
    return next(i for i, line in enumerate(open(__file__).read().splitlines(), 1) if line.endswith(marker))


@ttl.operation(grid=(1, 1))
def running_max(x, out):
    """out = max over the STEPS tiles of x; the running maximum is passed through m_dfb, whose last
    block nobody pops."""
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    m_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with x_dfb.wait() as first, m_dfb.reserve() as m:
            m.store(first)
        for _ in range(STEPS - 1):
            with x_dfb.wait() as t, m_dfb.wait() as m_old:
                with m_dfb.reserve() as m_new:
                    m_new.store(ttl.math.max(m_old, t))  # leftover
                with out_dfb.reserve() as o:
                    o.store(ttl.math.max(m_old, t))

    @ttl.datamovement()
    def read():
        for s in range(STEPS):
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, s], blk).wait()

    @ttl.datamovement()
    def write():
        for s in range(STEPS - 1):
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0, s]).wait()


def test_a_block_left_in_a_buffer_is_a_warning_at_its_push():
    x = tile_tensor((32, STEPS * 32), seed=2)
    out = zeros((32, (STEPS - 1) * 32))
    with pytest.warns(LeftoverBlocksWarning, match=r"c_1 on core \(0,0\): 1 pages pushed and never popped") as caught:
        running_max(x, out)
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, _line_of("# leftover"))]
    v = ttnn.to_numpy(x).reshape(32, STEPS, 32)
    expected = np.maximum.accumulate(v, axis=1)[:, 1:].reshape(32, (STEPS - 1) * 32)
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)


def test_more_blocks_left_than_the_buffer_holds_is_still_an_error():
    @ttl.operation(grid=(1, 1))
    def op(x, out):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            for _ in range(STEPS):
                with x_dfb.reserve() as blk:
                    blk.store(ttl.block.fill(1.0, shape=(1, 1)))  # error

        @ttl.datamovement()
        def write():
            with x_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()

    expect_error(lambda: op(tile_tensor((32, 32)), zeros((32, 32))),
                 test_more_blocks_left_than_the_buffer_holds_is_still_an_error, KernelError,
                 "receives 4 blocks from its producer but its consumer takes only 1")


@ttl.operation(grid=(1, 1))
def scaled_copies(x, scale, out):
    """Each tile of x times a scale tile that the compute kernel waits for once and never pops."""
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    s_dfb = ttl.make_dataflow_buffer_like(scale, shape=(1, 1), block_count=1)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        s = s_dfb.wait()            # a kernel releasing at its buffers keeps a block it never pops
        for _ in range(STEPS):
            t = x_dfb.wait()
            o = out_dfb.reserve()
            o.store(t * s)
            out_dfb.push()
            x_dfb.pop()

    @ttl.datamovement()
    def read():
        with s_dfb.reserve() as blk:
            ttl.copy(scale[0, 0], blk).wait()  # scale
        for i in range(STEPS):
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, i], blk).wait()

    @ttl.datamovement()
    def write():
        for i in range(STEPS):
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0, i]).wait()


def test_a_waited_block_never_popped_stays_in_its_buffer():
    x, scale, out = tile_tensor((32, STEPS * 32), seed=3), tile_tensor((32, 32), seed=4), zeros((32, STEPS * 32))
    with pytest.warns(LeftoverBlocksWarning, match=r"c_1 on core \(0,0\): 1 pages pushed and never popped"):
        scaled_copies(x, scale, out)
    v, s = ttnn.to_numpy(x).astype(np.float32), ttnn.to_numpy(scale).astype(np.float32)
    expected = (v.reshape(32, STEPS, 32) * s[:, None, :]).reshape(32, STEPS * 32)
    np.testing.assert_allclose(ttnn.to_numpy(out), expected, rtol=1e-2, atol=1e-2)


@ttl.operation(grid=(3, 1))
def copy_leaving_a_block(x, out):
    """Each node passes its tile through a buffer twice and reads it back once: one block stays."""
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    kept = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with x_dfb.wait() as t:
            with kept.reserve() as a:
                a.store(t)
            with kept.reserve() as b:
                b.store(t)
        with kept.wait() as k, out_dfb.reserve() as o:
            o.store(k)

    @ttl.datamovement()
    def read():
        i = ttl.node(dims=1)
        with x_dfb.reserve() as blk:
            ttl.copy(x[0, i], blk).wait()

    @ttl.datamovement()
    def write():
        i = ttl.node(dims=1)
        with out_dfb.wait() as blk:
            ttl.copy(blk, out[0, i]).wait()


def test_leftovers_on_many_cores_are_one_entry_per_buffer():
    """The same leftover on every node of a grid is named once, with the number of cores."""
    x = tile_tensor((32, 96), seed=4)
    out = zeros((32, 96))
    with pytest.warns(LeftoverBlocksWarning) as caught:
        copy_leaving_a_block(x, out)
    message = str(caught[0].message)
    assert "on 3 cores ((0,0), (1,0), (2,0)): 1 pages each pushed and never popped" in message, message
    assert message.count("pushed and never popped") == 1
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(x))


@ttl.operation(grid=(2, 1))
def one_node_leaves_a_block(x, out):
    """Node 0's reader pushes one block nobody waits for; node 1's pushes two, both copied out."""
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        node, _ = ttl.node(dims=2)
        if node == 1:
            for _ in range(2):
                with x_dfb.wait() as t, out_dfb.reserve() as o:
                    o.store(t)

    @ttl.datamovement()
    def read():
        node, _ = ttl.node(dims=2)
        if node == 0:
            with x_dfb.reserve() as t:
                ttl.copy(x[0, 0], t).wait()  # node 0 leaves this
        else:
            for c in range(2):
                with x_dfb.reserve() as t:
                    ttl.copy(x[0, c], t).wait()  # node 1 pushes last

    @ttl.datamovement()
    def write():
        node, _ = ttl.node(dims=2)
        if node == 1:
            for c in range(2):
                with out_dfb.wait() as o:
                    ttl.copy(o, out[0, c]).wait()


def test_a_leftover_names_the_push_of_the_core_that_left_it():
    """Node 1 pushes after node 0 here; the warning names node 0's line, where the block was left."""
    x = tile_tensor((32, 64), seed=5)
    out = zeros((32, 64))
    with pytest.warns(LeftoverBlocksWarning) as caught:
        one_node_leaves_a_block(x, out)
    text = str(caught[0].message)
    assert caught[0].lineno == _line_of("# node 0 leaves this"), text
    assert f"test_ttl_leftover_blocks.py:{_line_of('# node 0 leaves this')})" in text
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(x))
