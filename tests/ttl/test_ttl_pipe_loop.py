"""A pipe used once per loop iteration: the source reads a tile into a block and sends it, each
destination receives it into a block of a buffer its compute kernel consumes, so the receivers'
write pointer of that buffer moves on every iteration while the sender never touches the buffer.
The sender writes where each receiver posted its block; unicast and multicast, buffers of one and
two blocks, simulated against numpy; the data movement kernel's C++ is checked against the real
headers."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import compiled, tile_tensor, zeros

N = 3          # loop iterations, one tile through the pipe each
COLS = 3       # node 0 sends; nodes 1 and 2 receive (a multicast) or node 1 only (unicast)


def make(multicast: bool, blocks: int):
    @ttl.operation(grid=(COLS, 1))
    def loop_pipe(inp, out):
        net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(slice(1, COLS), 0) if multicast else (1, 0))])
        send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=blocks)
        recv_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=blocks)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=blocks)

        @ttl.datamovement()
        def reader():
            for i in range(N):
                def send(pipe):
                    with send_dfb.reserve() as blk:
                        ttl.copy(inp[0, i], blk).wait()
                    with send_dfb.wait() as blk:
                        ttl.copy(blk, pipe).wait()

                def receive(pipe):
                    with recv_dfb.reserve() as blk:
                        ttl.copy(pipe, blk).wait()

                net.if_src(send)
                net.if_dst(receive)

        @ttl.compute()
        def compute():
            if net.is_dst():
                for _ in range(N):
                    with recv_dfb.wait() as x, out_dfb.reserve() as y:
                        y.store(x * 2.0)

        @ttl.datamovement()
        def writer():
            nx, _ = ttl.node(dims=2)
            if net.is_dst():
                for i in range(N):
                    with out_dfb.wait() as blk:
                        ttl.copy(blk, out[nx, i]).wait()

    return loop_pipe


def _inputs():
    rng = np.random.default_rng(5)
    v = rng.integers(-8, 8, size=(32, 32 * N)).astype(np.float32)
    return v, ttnn.from_numpy(v, layout=ttnn.TILE_LAYOUT), ttnn.zeros((32 * COLS, 32 * N), layout=ttnn.TILE_LAYOUT)


@pytest.mark.parametrize("blocks", [1, 2])
@pytest.mark.parametrize("multicast", [False, True], ids=["unicast", "multicast"])
def test_a_tile_per_iteration_through_a_pipe(multicast, blocks):
    v, inp, out = _inputs()
    make(multicast, blocks)(inp, out)
    expected = np.zeros((32 * COLS, 32 * N), np.float32)
    for x in (range(1, COLS) if multicast else (1,)):
        expected[32 * x:32 * (x + 1)] = 2 * v
    np.testing.assert_array_equal(ttnn.to_numpy(out).astype(np.float32), expected)


@pytest.mark.parametrize("multicast", [False, True], ids=["unicast", "multicast"])
def test_the_looping_reader_compiles_against_the_real_dataflow_headers(multicast, tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    _, inp, out = _inputs()
    program = compiled(make(multicast, 2), inp, out).program
    kernel = next(k for k in program.kernels if k.name == "reader")
    path = tmp_path / "reader.cpp"
    path.write_text(emit_kernel(kernel.function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader",
                                                            check_kernel.accessor_compile_args(program, kernel)))


def test_the_same_source_with_another_net_is_built_again():
    """The unicast and the multicast operation lower to the same IR; their pipes' routes differ."""
    for multicast in (False, True, False):
        v, inp, out = _inputs()
        make(multicast, 2)(inp, out)
        written = ttnn.to_numpy(out).astype(np.float32)[64:96]
        np.testing.assert_array_equal(written, 2 * v if multicast else np.zeros_like(v))


@ttl.operation(grid=(3, 1))
def posted_gather(inp, out):
    """Node 2 holds two blocks of one buffer in one with statement and receives a tile from node 0
    into the first, one from node 1 into the second; the blocks are pushed in that order."""
    first = ttl.Pipe(src=(0, 0), dst=(2, 0))
    second = ttl.Pipe(src=(1, 0), dst=(2, 0))
    net = ttl.PipeNet([first, second])
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    recv_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        nx, _ = ttl.node(dims=2)
        if nx == 0:
            with send_dfb.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()
            with send_dfb.wait() as blk:
                ttl.copy(blk, first).wait()
        if nx == 1:
            with send_dfb.reserve() as blk:
                ttl.copy(inp[0, 1], blk).wait()
            with send_dfb.wait() as blk:
                ttl.copy(blk, second).wait()
        if nx == 2:
            with recv_dfb.reserve() as a, recv_dfb.reserve() as b:
                ta = ttl.copy(first, a)
                tb = ttl.copy(second, b)
                ta.wait()
                tb.wait()

    @ttl.compute()
    def compute():
        if net.is_dst():
            with recv_dfb.wait() as a, recv_dfb.wait() as b, out_dfb.reserve() as o:
                o.store(a - b)

    @ttl.datamovement()
    def writer():
        if net.is_dst():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()


def test_two_blocks_of_one_buffer_in_one_with_receive_from_two_sources():
    rng = np.random.default_rng(2)
    v = rng.integers(-8, 8, size=(32, 64)).astype(np.float32)
    out = ttnn.zeros((32, 32), layout=ttnn.TILE_LAYOUT)
    posted_gather(ttnn.from_numpy(v, layout=ttnn.TILE_LAYOUT), out)
    np.testing.assert_array_equal(ttnn.to_numpy(out).astype(np.float32), v[:, :32] - v[:, 32:])


@ttl.operation(grid=(4, 1))
def posted_gather_of_three(inp, out):
    """Node 3 holds three blocks of one buffer and starts a receive from each of nodes 0, 1 and 2
    before waiting for any: every pipe reaching node 3 has its own receive slot (valid semaphore)."""
    pipes = [ttl.Pipe(src=(i, 0), dst=(3, 0)) for i in range(3)]
    net = ttl.PipeNet(pipes)
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    recv_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=3)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        nx, _ = ttl.node(dims=2)
        if nx == 0:
            with send_dfb.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()
            with send_dfb.wait() as blk:
                ttl.copy(blk, pipes[0]).wait()
        if nx == 1:
            with send_dfb.reserve() as blk:
                ttl.copy(inp[0, 1], blk).wait()
            with send_dfb.wait() as blk:
                ttl.copy(blk, pipes[1]).wait()
        if nx == 2:
            with send_dfb.reserve() as blk:
                ttl.copy(inp[0, 2], blk).wait()
            with send_dfb.wait() as blk:
                ttl.copy(blk, pipes[2]).wait()
        if nx == 3:
            with recv_dfb.reserve() as a, recv_dfb.reserve() as b, recv_dfb.reserve() as c:
                ta = ttl.copy(pipes[0], a)
                tb = ttl.copy(pipes[1], b)
                tc = ttl.copy(pipes[2], c)
                tc.wait()
                ta.wait()
                tb.wait()

    @ttl.compute()
    def compute():
        if net.is_dst():
            with recv_dfb.wait() as a, recv_dfb.wait() as b, recv_dfb.wait() as c, out_dfb.reserve() as o:
                o.store(a * 4.0 + b * 2.0 - c)

    @ttl.datamovement()
    def writer():
        if net.is_dst():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()


def test_three_blocks_of_one_buffer_receive_from_three_sources():
    rng = np.random.default_rng(3)
    v = rng.integers(-8, 8, size=(32, 96)).astype(np.float32)
    out = ttnn.zeros((32, 32), layout=ttnn.TILE_LAYOUT)
    posted_gather_of_three(ttnn.from_numpy(v, layout=ttnn.TILE_LAYOUT), out)
    expected = 4 * v[:, :32] + 2 * v[:, 32:64] - v[:, 64:]
    np.testing.assert_array_equal(ttnn.to_numpy(out).astype(np.float32), expected)


@ttl.operation(grid=(5, 1))
def overlapping_multicasts(inp, out):
    """Node 0 multicasts to nodes 2 and 3, node 1 to nodes 3 and 4: node 3 starts both receives
    before waiting; nodes 2 and 4 receive one block each (the receivers of one multicast share its
    receive slot, the two pipes reaching node 3 have different ones)."""
    left = ttl.Pipe(src=(0, 0), dst=(slice(2, 4), 0))
    right = ttl.Pipe(src=(1, 0), dst=(slice(3, 5), 0))
    net = ttl.PipeNet([left, right])
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    recv_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        nx, _ = ttl.node(dims=2)
        if nx == 0:
            with send_dfb.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()
            with send_dfb.wait() as blk:
                ttl.copy(blk, left).wait()
        if nx == 1:
            with send_dfb.reserve() as blk:
                ttl.copy(inp[0, 1], blk).wait()
            with send_dfb.wait() as blk:
                ttl.copy(blk, right).wait()
        if nx >= 2:
            # a multicast writes at one address on all its receivers: each holds the same two
            # blocks, ``left`` lands in the first, ``right`` in the second
            with recv_dfb.reserve() as a, recv_dfb.reserve() as b:
                if nx == 2:
                    ttl.copy(left, a).wait()
                if nx == 3:
                    ta = ttl.copy(left, a)
                    tb = ttl.copy(right, b)
                    tb.wait()
                    ta.wait()
                if nx == 4:
                    ttl.copy(right, b).wait()

    @ttl.compute()
    def compute():
        nx, _ = ttl.node(dims=2)
        if net.is_dst():
            with recv_dfb.wait() as a, recv_dfb.wait() as b, out_dfb.reserve() as o:
                if nx == 2:
                    o.store(a * 2.0)
                if nx == 3:
                    o.store(a - b)
                if nx == 4:
                    o.store(b * 2.0)

    @ttl.datamovement()
    def writer():
        nx, _ = ttl.node(dims=2)
        if net.is_dst():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0, nx - 2]).wait()


def test_two_multicasts_whose_receivers_overlap():
    rng = np.random.default_rng(4)
    v = rng.integers(-8, 8, size=(32, 64)).astype(np.float32)
    out = ttnn.zeros((32, 96), layout=ttnn.TILE_LAYOUT)
    overlapping_multicasts(ttnn.from_numpy(v, layout=ttnn.TILE_LAYOUT), out)
    left, right = v[:, :32], v[:, 32:]
    expected = np.concatenate([2 * left, left - right, 2 * right], axis=1)
    np.testing.assert_array_equal(ttnn.to_numpy(out).astype(np.float32), expected)


@pytest.mark.parametrize("operation, sources", [(posted_gather, 2), (posted_gather_of_three, 3),
                                                (overlapping_multicasts, 2)],
                         ids=["gather_of_two", "gather_of_three", "overlapping_multicasts"])
def test_the_gathering_reader_compiles_against_the_real_dataflow_headers(operation, sources, tmp_path, check_kernel):
    """The reader waits on the valid semaphore of each pipe's receive slot (a runtime argument)."""
    from tilefold.codegen.cpp import emit_kernel

    nodes = 5 if operation is overlapping_multicasts else sources + 1
    inp = ttnn.from_numpy(np.zeros((32, 32 * sources), np.float32), layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32 * max(1, nodes - 2) if operation is overlapping_multicasts else 32),
                     layout=ttnn.TILE_LAYOUT)
    program = compiled(operation, inp, out).program
    kernel = next(k for k in program.kernels if k.name == "reader")
    source = emit_kernel(kernel.function)
    for pipe in range(sources):
        assert f"pipe{pipe}_dst_index" in source and f"pipe{pipe}_src_index" in source
    path = tmp_path / "reader.cpp"
    path.write_text(source)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader",
                                                            check_kernel.accessor_compile_args(program, kernel)))


def test_a_block_reserved_in_a_loop_and_filled_by_pipe_bodies_is_pushed_when_dead():
    """``blk = dfb.reserve()`` each iteration, filled by a ``def`` and a ``lambda`` handed to the net
    (one returning a tuple, as TT-Lang's SUMMA matmul writes it): released once its name is dead,
    the lambda's read of ``blk`` counting where it is passed."""
    rows = 2

    @ttl.operation(grid=(2, 1))
    def bcast(a, out):
        net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(slice(0, 2), 0))])
        dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def dm_read():
            for i in range(rows):
                blk = dfb.reserve()

                def send(pipe):
                    ttl.copy(a[i, 0], blk).wait()
                    ttl.copy(blk, pipe).wait()

                net.if_src(send)
                net.if_dst(lambda pipe: (ttl.copy(pipe, blk).wait(),))

        @ttl.datamovement()
        def dm_write():
            x, _ = ttl.node(dims=2)
            for i in range(rows):
                blk = dfb.wait()
                ttl.copy(blk, out[i, x]).wait()

    a, out = tile_tensor((32 * rows, 32), seed=8), zeros((32 * rows, 64))
    bcast(a, out)
    values = ttnn.to_numpy(a)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.concatenate([values, values], axis=1))
