"""Kernels written without push() / pop() (TT-Lang's newer style): a block taken with
``name = dfb.reserve()`` is pushed once it holds its value and its name is dead, one taken with
``name = dfb.wait()`` is popped once neither its name nor a value computed from it is live, a copy
not waited for is waited before its block is released, and ``ttl.copy(dfb.wait(), ...)`` releases
its block after the statement; run on the simulated device against numpy."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import tile_tensor, zeros

TILES = 3


@ttl.operation(grid=(1, 1))
def scaled_sum(a, b, out):
    """out[t] = 2 * (a[t] + b[t]) + a[t], through a scratch buffer reserved and waited in the loop."""
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    tmp_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(TILES):
            x = a_dfb.wait()
            y = b_dfb.wait()
            s = x + y
            t = tmp_dfb.reserve()
            t.store(s * 2.0)
            doubled = tmp_dfb.wait()
            o = o_dfb.reserve()
            o.store(doubled + x)

    @ttl.datamovement()
    def read():
        for i in range(TILES):
            blk = a_dfb.reserve()
            ttl.copy(a[0, i], blk)
            other = b_dfb.reserve()
            ttl.copy(b[0, i], other)

    @ttl.datamovement()
    def write():
        for i in range(TILES):
            ttl.copy(o_dfb.wait(), out[0, i]).wait()


def test_blocks_are_released_where_their_names_die():
    rng = np.random.default_rng(4)
    a, b = (rng.random((32, 32 * TILES), dtype=np.float32) for _ in range(2))
    tensors = [ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT) for v in (a, b, np.zeros_like(a))]
    scaled_sum(*tensors)
    np.testing.assert_allclose(ttnn.to_numpy(tensors[2]), 2 * (a + b) + a, rtol=1e-5)


@ttl.operation(grid=(2, 1))
def forward(a, out):
    """Node 0 reads a tile and sends it to node 1 with ``ttl.copy(dfb.wait(), pipe)`` in a pipe
    body: the wait belongs to the body, so node 1 (no source) never waits on its own buffer."""
    net = ttl.PipeNet([ttl.Pipe((0, 0), (1, 0))])
    send_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    recv_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def read():
        if net.is_src():
            blk = send_dfb.reserve()
            ttl.copy(a[0, 0], blk)
        net.if_src(lambda pipe: ttl.copy(send_dfb.wait(), pipe).wait())

    @ttl.datamovement()
    def write():
        def receive(pipe):
            blk = recv_dfb.reserve()
            ttl.copy(pipe, blk).wait()

        net.if_dst(receive)
        if net.is_dst():
            ttl.copy(recv_dfb.wait(), out[0, 0]).wait()


def test_a_block_taken_inside_a_pipe_body_is_held_by_the_body():
    a = np.random.default_rng(5).random((32, 32), dtype=np.float32)
    tensors = [ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT) for v in (a, np.zeros_like(a))]
    forward(*tensors)
    np.testing.assert_array_equal(ttnn.to_numpy(tensors[1]), a)


def _scaled_rows(explicit: bool):
    """Rows of x times a scale tile. The reader (one source, shared by both variants) acquires its
    blocks inside ``ttl.copy(...)``; the compute kernel releases explicitly or implicitly."""

    @ttl.operation(grid=(2, 1))
    def op(x, s, out):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        s_dfb = ttl.make_dataflow_buffer_like(s, shape=(1, 1), block_count=1)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
        if explicit:
            @ttl.compute()
            def compute():
                sv = s_dfb.wait()
                for _ in range(2):
                    xv = x_dfb.wait()
                    o = o_dfb.reserve()
                    o.store(xv * sv)
                    o.push()
                    xv.pop()
                sv.pop()
        else:
            @ttl.compute()
            def compute():
                sv = s_dfb.wait()
                for _ in range(2):
                    xv = x_dfb.wait()
                    o = o_dfb.reserve()
                    o.store(xv * sv)
        _shared_reader(x, s, x_dfb, s_dfb)

        @ttl.datamovement()
        def write():
            node, _ = ttl.node(dims=2)
            for j in range(2):
                ttl.copy(o_dfb.wait(), out[node, j]).wait()

    return op


def _shared_reader(x, s, x_dfb, s_dfb):
    @ttl.datamovement()
    def read():
        node, _ = ttl.node(dims=2)
        ttl.copy(s[0, 0], s_dfb.reserve()).wait()
        for j in range(2):
            ttl.copy(x[node, j], x_dfb.reserve()).wait()


def test_a_kernel_source_built_again_releases_its_inline_blocks_again():
    """The same reader source built for a second operation (its tree is kept between builds)."""
    v = np.random.default_rng(5).standard_normal((64, 64)).astype(np.float32)
    for explicit in (False, True):
        x = ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
        s = ttnn.from_numpy(np.full((32, 32), 2.0, np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
        out = ttnn.zeros((64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
        _scaled_rows(explicit)(x, s, out)
        np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(x) * 2)


@ttl.operation(grid=(1, 1))
def _blocks_acquired_in_expressions(x, out):
    """Blocks with no name: ``dfb.reserve().store(...)``, a wait as an operand, an acquisition in an
    assignment's expression, ``ttl.copy(t[...], dfb.reserve())`` — each released after its statement
    once no live value is computed from it."""
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    t_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    u_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        xb = x_dfb.wait()
        t_dfb.reserve().store(ttl.math.exp(xb))
        u_dfb.reserve().store(xb * 2)
        total = t_dfb.wait() + u_dfb.wait()
        ob = o_dfb.reserve()
        ob.store(total + xb)

    @ttl.datamovement()
    def dm_read():
        ttl.copy(x[0, 0], x_dfb.reserve()).wait()

    @ttl.datamovement()
    def dm_write():
        ttl.copy(o_dfb.wait(), out[0, 0]).wait()


def test_blocks_acquired_inside_expressions_are_released_after_their_statement():
    x, out = tile_tensor((32, 32), seed=12), zeros((32, 32))
    _blocks_acquired_in_expressions(x, out)
    v = ttnn.to_numpy(x).astype(np.float64)
    np.testing.assert_allclose(ttnn.to_numpy(out), np.exp(v) + 3 * v, rtol=3e-2, atol=3e-2)


@ttl.operation(grid=(1, 1))
def staged_rows(inp, out):
    """The reader stages two tiles whose blocks it leaves to implicit release and pushes a third
    itself (as TT-Lang's all-gather matmul example mixes the two); the writer pops explicitly."""
    a_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def reader():
        for i in range(2):
            row = a_dfb.reserve()            # pushed once written and its name is dead
            ttl.copy(inp[0, i], row).wait()
        last = b_dfb.reserve()
        ttl.copy(inp[0, 2], last).wait()
        last.push()

    @ttl.datamovement()
    def writer():
        for i in range(2):
            row = a_dfb.wait()
            ttl.copy(row, out[0, i]).wait()
            row.pop()
        last = b_dfb.wait()                  # popped where its name dies
        ttl.copy(last, out[0, 2]).wait()


def test_a_kernel_pushing_some_named_blocks_releases_the_others_implicitly():
    inp, out = tile_tensor((32, 96), seed=8), zeros((32, 96))
    staged_rows(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(inp))


@ttl.operation(grid=(1, 1))
def relay_through_one_name(inp, out):
    """One name for a block the kernel reserves and pushes itself, then for the block it waits for
    and leaves to implicit release (popped where the name is bound again), per iteration."""
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def reader():
        for i in range(3):
            blk = dfb.reserve()
            ttl.copy(inp[0, i], blk).wait()
            blk.push()
            blk = dfb.wait()
            o = out_dfb.reserve()
            ttl.copy(blk, o).wait()
            o.push()

    @ttl.datamovement()
    def writer():
        for i in range(3):
            with out_dfb.wait() as o:
                ttl.copy(o, out[0, i]).wait()


def test_a_name_pushed_explicitly_then_bound_to_a_block_left_to_implicit_release():
    inp, out = tile_tensor((32, 96), seed=9), zeros((32, 96))
    relay_through_one_name(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(inp))
