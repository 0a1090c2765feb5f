"""Pipe nets whose nodes both send and receive, sending first — a ring forwarding to the next
node, a column scatter-gather that multicasts to its own column (itself included) — as TT-Lang's
pipe spec examples write them. A send does not wait for its receivers to reach their receive:
the blocks land in a buffer of one slot per pipe that reaches a common node, each slot with a
semaphore; the receive copies its slot out and frees it for the sender (``ttl.wait_any`` polls the
flag of a deep slot's next block). Simulated against numpy;
the data movement kernel's C++ is checked against the real headers."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import compiled


@ttl.operation(grid=(2, 4))
def forward_neighbor(inp, out):
    to_send = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    received = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    grid_x, grid_y = ttl.grid_size()
    net = ttl.PipeNet([ttl.Pipe(src=(x, y), dst=(x, (y + 1) % grid_y)) for x in range(grid_x) for y in range(grid_y)])

    @ttl.datamovement()
    def dm():
        with to_send.reserve() as send_blk, received.reserve() as recv_blk:
            def pipe_src(pipe):
                nx, ny = ttl.node(dims=2)
                ttl.copy(inp[nx:nx + 1, ny:ny + 1], send_blk).wait()
                ttl.copy(send_blk, pipe).wait()

            def pipe_dst(pipe):
                ttl.copy(pipe, recv_blk).wait()
                nx, ny = ttl.node(dims=2)
                ttl.copy(recv_blk, out[nx:nx + 1, ny:ny + 1]).wait()

            net.if_src(pipe_src)
            net.if_dst(pipe_dst)

    @ttl.compute()
    def compute():
        pass


@ttl.operation(grid=(2, 2))
def column_scatter_gather(inp, out):
    """Every node multicasts its tile to its whole column and receives each node's of its column
    into one block, adding them up in the order they were received (the sum is exact here)."""
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    acc_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    grid_x, grid_y = ttl.grid_size()
    net = ttl.PipeNet([ttl.Pipe(src=(x, y), dst=(x, slice(0, grid_y))) for x in range(grid_x) for y in range(grid_y)])

    @ttl.datamovement()
    def dm():
        with dfb.reserve() as blk:
            def pipe_src(pipe):
                nx, ny = ttl.node(dims=2)
                ttl.copy(inp[nx:nx + 1, ny:ny + 1], blk).wait()
                ttl.copy(blk, pipe).wait()

            def pipe_dst(pipe):
                with acc_dfb.reserve() as part:
                    ttl.copy(pipe, part).wait()

            net.if_src(pipe_src)
            net.if_dst(pipe_dst)

    @ttl.compute()
    def compute():
        total = ttl.block.fill(0, shape=(1, 1))
        for _ in range(grid_y):
            with acc_dfb.wait() as part:
                total += part
        with out_dfb.reserve() as o:
            o.store(total)

    @ttl.datamovement()
    def write():
        nx, ny = ttl.node(dims=2)
        with out_dfb.wait() as o:
            ttl.copy(o, out[nx:nx + 1, ny:ny + 1]).wait()


def _tiles(cols, rows):
    v = np.zeros((cols * 32, rows * 32), np.float32)
    for x in range(cols):
        for y in range(rows):
            v[x * 32:(x + 1) * 32, y * 32:(y + 1) * 32] = x * rows + y + 1
    return v


def test_a_ring_where_every_node_sends_before_it_receives():
    v = _tiles(2, 4)
    inp = ttnn.from_numpy(v, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros(v.shape, layout=ttnn.TILE_LAYOUT)
    forward_neighbor(inp, out)
    expected = np.concatenate([v[:, -32:], v[:, :-32]], axis=1)     # node (x, y) holds (x, y - 1)'s tile
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)


def test_a_column_multicast_to_itself_and_its_column():
    v = _tiles(2, 2)
    out = ttnn.zeros(v.shape, layout=ttnn.TILE_LAYOUT)
    column_scatter_gather(ttnn.from_numpy(v, layout=ttnn.TILE_LAYOUT), out)
    column_sums = v.reshape(2, 32, 2, 32).sum(axis=2, keepdims=True)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.broadcast_to(column_sums, (2, 32, 2, 32)).reshape(v.shape))


def test_landing_pipes_compile_against_the_real_dataflow_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    v = _tiles(2, 4)
    program = compiled(forward_neighbor, ttnn.from_numpy(v, layout=ttnn.TILE_LAYOUT),
                       ttnn.zeros(v.shape, layout=ttnn.TILE_LAYOUT)).program
    kernel = next(k for k in program.kernels if k.name == "dm")
    path = tmp_path / "dm.cpp"
    path.write_text(emit_kernel(kernel.function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader",
                                                            check_kernel.accessor_compile_args(program, kernel)))


ROWS_BYTES = 14 * 32 * 4         # the first 14 rows of a float32 tile's face 0 and 1 ... as bytes


@ttl.operation(grid=(3, 1))
def relay_part(inp, out):
    """Node 2 sends the first bytes of its tile to node 1, which forwards them to node 0 (node 1
    both receives and sends: the net lands its blocks); node 0 writes the block it received into."""
    net = ttl.PipeNet([ttl.Pipe(src=(2, 0), dst=(1, 0)), ttl.Pipe(src=(1, 0), dst=(0, 0))])
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def dm():
        x = ttl.node(dims=1)
        if x == 2:
            with dfb.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()

        def receive(pipe):
            with dfb.reserve() as blk:
                ttl.copy(pipe, blk, byte_count=ROWS_BYTES).wait()

        net.if_dst(receive)

        def send(pipe):
            with dfb.wait() as blk:
                ttl.copy(blk, pipe, byte_count=ROWS_BYTES).wait()

        net.if_src(send)
        if x == 0:
            with dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()

    @ttl.datamovement()
    def idle():
        pass


def test_a_landing_net_moves_the_bytes_a_byte_count_names():
    v = np.random.default_rng(8).standard_normal((32, 32)).astype(np.float32)
    out = ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    relay_part(ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT), out)
    got = ttnn.to_numpy(out)
    # a float32 tile's first 1792 bytes: face 0 (rows 0-15, columns 0-15) and rows 0-11 of face 1
    np.testing.assert_array_equal(got[:16, :16], v[:16, :16])
    np.testing.assert_array_equal(got[:12, 16:], v[:12, 16:])


def test_a_receive_copies_its_landing_slot_with_one_noc_read():
    """The slot is copied into the block by a NOC read of the node's own L1 (not word by word): the
    ring's receiving kernels stay busy a few hundred cycles per tile, as a plain receive does."""
    from tilefold.frontend.ttl import session

    v = _tiles(2, 4)
    forward_neighbor(ttnn.from_numpy(v, layout=ttnn.TILE_LAYOUT), ttnn.zeros(v.shape, layout=ttnn.TILE_LAYOUT))
    perf = session.settings().runs[-1][1].perf
    assert perf.cycles < 4000, perf.summary()


RING = 3


def _ring_of_two_blocks(block_count: int):
    @ttl.operation(grid=(RING, 1))
    def ring_two_blocks(src, dst):
        """Each node sends its two tiles to the next node, then receives the previous node's two."""
        net = ttl.PipeNet([ttl.Pipe(src=(x, 0), dst=((x + 1) % RING, 0)) for x in range(RING)])
        send_dfb = ttl.make_dataflow_buffer_like(src, shape=(1, 1), block_count=block_count)
        recv_dfb = ttl.make_dataflow_buffer_like(src, shape=(1, 1), block_count=block_count)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def exchange():
            x = ttl.node(dims=1)
            for c in range(2):
                with send_dfb.reserve() as b:
                    ttl.copy(src[x:x + 1, c:c + 1], b).wait()
                with send_dfb.wait() as b:
                    net.if_src(lambda pipe: ttl.copy(b, pipe).wait())
            for c in range(2):
                def receive(pipe):
                    with recv_dfb.reserve() as b:
                        ttl.copy(pipe, b).wait()
                    with recv_dfb.wait() as b:
                        ttl.copy(b, dst[x:x + 1, c:c + 1]).wait()

                net.if_dst(receive)

        @ttl.datamovement()
        def idle():
            pass

    return ring_two_blocks


def test_a_ring_node_sends_as_many_blocks_as_its_buffer_holds_before_it_receives():
    """Each landing slot of a net of one-node pipes holds ``block_count`` blocks: two sends before
    the first receive complete with buffers of two blocks (and stop as a deadlock with one)."""
    from tilefold.errors import SemaphoreError

    v = np.random.default_rng(9).standard_normal((RING * 32, 64)).astype(np.float32)
    src = ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    dst = ttnn.zeros(v.shape, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    _ring_of_two_blocks(2)(src, dst)
    np.testing.assert_array_equal(ttnn.to_numpy(dst), np.roll(v.reshape(RING, 32, 64), 1, axis=0).reshape(v.shape))
    import pytest

    with pytest.raises(SemaphoreError, match="semaphore waits that can never be satisfied"):
        _ring_of_two_blocks(1)(src, ttnn.zeros(v.shape, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT))


NODES, CHUNKS = 3, 2


@ttl.operation(grid=(NODES, 1))
def relay_ring_gather(src, dst):
    """A ring all-gather by relay on one chip: each node sends its CHUNKS tiles to the next node
    (seed net); the next receives them into its slice of ``dst`` (a tensor-slice receive: a buffer of
    one block) and forwards them on (relay net, from a buffer of two blocks) before the node after it
    reaches its relayed receives — two blocks ahead on each relay pipe."""
    ring = [ttl.Pipe(src=(x, 0), dst=((x + 1) % NODES, 0)) for x in range(NODES)]
    seed_net, relay_net = ttl.PipeNet(list(ring)), ttl.PipeNet(list(ring))
    local_dfb = ttl.make_dataflow_buffer_like(src, shape=(1, 1), block_count=2)
    relay_dfb = ttl.make_dataflow_buffer_like(src, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def seed():
        x = ttl.node(dims=1)
        for c in range(CHUNKS):
            with local_dfb.reserve() as blk:
                ttl.copy(src[x:x + 1, c:c + 1], blk).wait()
            with local_dfb.wait() as blk:
                seed_net.if_src(lambda pipe: ttl.copy(blk, pipe).wait())

    @ttl.datamovement()
    def relay():
        x = ttl.node(dims=1)
        for distance in range(1, NODES):
            for c in range(CHUNKS):
                col = (distance - 1) * CHUNKS + c
                region = dst[x:x + 1, col:col + 1]

                def receive(pipe):
                    ttl.copy(pipe, region, shape=(1, 1)).wait()

                if distance == 1:
                    seed_net.if_dst(receive)
                else:
                    relay_net.if_dst(receive)
                if distance < NODES - 1:
                    with relay_dfb.reserve() as blk:
                        ttl.copy(region, blk).wait()
                    with relay_dfb.wait() as blk:
                        relay_net.if_src(lambda pipe: ttl.copy(blk, pipe).wait())


def test_a_relay_ring_sends_as_deep_as_its_deepest_buffer():
    v = np.random.default_rng(10).standard_normal((NODES * 32, CHUNKS * 32)).astype(np.float32)
    src = ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    dst = ttnn.zeros((NODES * 32, (NODES - 1) * CHUNKS * 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    relay_ring_gather(src, dst)
    got = ttnn.to_numpy(dst).reshape(NODES, 32, NODES - 1, CHUNKS * 32)
    rows = v.reshape(NODES, 32, CHUNKS * 32)
    for x in range(NODES):
        for distance in range(1, NODES):
            np.testing.assert_array_equal(got[x, :, distance - 1], rows[(x - distance) % NODES])


@ttl.operation(grid=(RING, 1))
def both_ways_selected(src, dst):
    """Each node sends its two tiles to both neighbours (two rings of one-node pipes, so two deep
    landing nets), then takes each pair of blocks with ``ttl.wait_any`` over the two receives:
    the poll reads the flag of each slot's next block."""
    ahead = ttl.PipeNet([ttl.Pipe(src=(x, 0), dst=((x + 1) % RING, 0)) for x in range(RING)])
    back = ttl.PipeNet([ttl.Pipe(src=(x, 0), dst=((x - 1) % RING, 0)) for x in range(RING)])
    send_dfb = ttl.make_dataflow_buffer_like(src, shape=(1, 1), block_count=2)
    from_behind = ttl.make_dataflow_buffer_like(src, shape=(1, 1), block_count=2)
    from_ahead = ttl.make_dataflow_buffer_like(src, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def exchange():
        x = ttl.node(dims=1)
        for c in range(2):
            with send_dfb.reserve() as b:
                ttl.copy(src[x:x + 1, c:c + 1], b).wait()
            with send_dfb.wait() as b:
                ahead.if_src(lambda pipe: ttl.copy(b, pipe).wait())
                back.if_src(lambda pipe: ttl.copy(b, pipe).wait())
        for c in range(2):
            def receive(from_previous):
                def receive_back(from_next):
                    with from_behind.reserve() as behind, from_ahead.reserve() as before:
                        first = ttl.copy(from_previous, behind)
                        second = ttl.copy(from_next, before)
                        ttl.wait_any((first, second), start=c)
                        first.wait()
                        second.wait()
                        ttl.copy(behind, dst[x:x + 1, c:c + 1]).wait()
                        ttl.copy(before, dst[x:x + 1, 2 + c:3 + c]).wait()

                back.if_dst(receive_back)

            ahead.if_dst(receive)

    @ttl.datamovement()
    def idle():
        pass


def test_wait_any_takes_blocks_of_deep_landing_slots(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    v = np.random.default_rng(11).standard_normal((RING * 32, 64)).astype(np.float32)
    src = ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    dst = ttnn.zeros((RING * 32, 128), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    both_ways_selected(src, dst)
    got, rows = ttnn.to_numpy(dst).reshape(RING, 32, 128), v.reshape(RING, 32, 64)
    for x in range(RING):
        np.testing.assert_array_equal(got[x, :, :64], rows[(x - 1) % RING])
        np.testing.assert_array_equal(got[x, :, 64:], rows[(x + 1) % RING])
    program = compiled(both_ways_selected, src, dst).program
    kernel = next(k for k in program.kernels if k.name == "exchange")
    path = tmp_path / "exchange.cpp"
    path.write_text(emit_kernel(kernel.function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader",
                                                            check_kernel.accessor_compile_args(program, kernel)))


def _swap(one_net: bool):
    @ttl.operation(grid=(2, 1))
    def swap(inp, out):
        to_send = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        received = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        there = ttl.Pipe(src=(0, 0), dst=(1, 0))
        back = ttl.Pipe(src=(1, 0), dst=(0, 0))
        nets = [ttl.PipeNet([there, back])] if one_net else [ttl.PipeNet([there]), ttl.PipeNet([back])]

        @ttl.datamovement()
        def read():
            x, _ = ttl.node(dims=2)
            with to_send.reserve() as blk:
                ttl.copy(inp[0, x], blk).wait()

        @ttl.datamovement()
        def exchange():
            x, _ = ttl.node(dims=2)
            with to_send.wait() as blk:
                def send(pipe):
                    ttl.copy(blk, pipe).wait()

                for net in nets:
                    net.if_src(send)

            def receive(pipe):
                with received.reserve() as landed:
                    ttl.copy(pipe, landed).wait()
                with received.wait() as landed:
                    ttl.copy(landed, out[0, x]).wait()

            for net in nets:
                net.if_dst(receive)

    return swap


def test_a_swap_in_one_net_lands_its_blocks_and_in_two_nets_is_a_deadlock_naming_the_cores():
    """The send / receive cycle is looked for within one net: the swap written as one net of two
    pipes runs (its blocks land in a landing buffer); written as two nets it stops at the deadlock,
    naming the cores that wait (as docs/ttl.md says)."""
    import pytest
    from tilefold.errors import SemaphoreError

    v = np.random.default_rng(9).standard_normal((32, 64)).astype(np.float32)
    inp = ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 64), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    _swap(one_net=True)(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.concatenate([v[:, 32:], v[:, :32]], axis=1))
    with pytest.raises(SemaphoreError, match=r"never be satisfied[\s\S]*core \(0,0\)[\s\S]*core \(1,0\)"):
        _swap(one_net=False)(inp, ttnn.zeros((32, 64), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT))
