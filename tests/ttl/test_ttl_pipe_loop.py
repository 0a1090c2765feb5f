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
from ttl_helpers import compiled

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
                ttl.copy(blk, first).wait()
        if nx == 1:
            with send_dfb.reserve() as blk:
                ttl.copy(inp[0, 1], blk).wait()
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


@pytest.mark.xfail(strict=True, reason="deadlocks: node 2 waits for the first pipe's block (open)")
def test_two_blocks_of_one_buffer_in_one_with_receive_from_two_sources():
    rng = np.random.default_rng(2)
    v = rng.integers(-8, 8, size=(32, 64)).astype(np.float32)
    out = ttnn.zeros((32, 32), layout=ttnn.TILE_LAYOUT)
    posted_gather(ttnn.from_numpy(v, layout=ttnn.TILE_LAYOUT), out)
    np.testing.assert_array_equal(ttnn.to_numpy(out).astype(np.float32), v[:, :32] - v[:, 32:])
