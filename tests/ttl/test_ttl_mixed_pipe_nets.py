"""A ttl.PipeNet holding point-to-point and collective (multicast) pipes together. TT-Lang asks
every pipe of a net to be of one kind; tilefold lowers each pipe to its own route (a unicast is a
rectangle of one node) with its own semaphores, so a mixed net runs as the same pipes in separate
nets would. Run on the simulated device against numpy; the data movement C++ is checked against
the real headers."""

from __future__ import annotations

import numpy as np
from checkkernel import accessor_compile_args, check_kernels, require_accepted

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.codegen.cpp import emit_kernel
from tilefold.errors import KernelError, NocHazardError
from ttl_helpers import compiled, expect_error, tile_tensor, zeros


@ttl.operation(grid=(4, 1))
def relay(inp, out):
    """TT-Lang's mixed net: node 3 sends its tile to node 0 (point to point), node 0 multicasts what
    it received to nodes 1 and 2 (collective), which write it at their column."""
    net = ttl.PipeNet([ttl.Pipe(src=(3, 0), dst=(0, 0)), ttl.Pipe(src=(0, 0), dst=(slice(1, 3), 0))])
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def dm():
        x, _ = ttl.node(dims=2)
        if x == 3:
            with dfb.reserve() as blk:
                ttl.copy(inp[0, 3], blk).wait()

        def receive(pipe):
            with dfb.reserve() as blk:
                ttl.copy(pipe, blk).wait()

        net.if_dst(receive)

        def send(pipe):
            with dfb.wait() as blk:
                ttl.copy(blk, pipe).wait()

        net.if_src(send)
        if x == 1 or x == 2:
            with dfb.wait() as blk:
                ttl.copy(blk, out[0, x]).wait()

    @ttl.datamovement()
    def idle():
        pass


def test_a_point_to_point_pipe_feeds_a_multicast_of_the_same_net():
    inp = tile_tensor((32, 128), seed=2)
    out = zeros((32, 128))
    relay(inp, out)
    v, got = ttnn.to_numpy(inp), ttnn.to_numpy(out)
    expected = np.zeros_like(v)
    expected[:, 32:64] = expected[:, 64:96] = v[:, 96:128]
    np.testing.assert_array_equal(got, expected)


@ttl.operation(grid=(4, 1))
def both_kinds_into_one_node(inp, out):
    """Node 0 multicasts tile 0 to nodes 1 and 2; node 3 sends tile 3 to node 2 alone. Node 1
    writes what it got; node 2 receives from both pipes (in the net's order) and writes their sum."""
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(slice(1, 3), 0)), ttl.Pipe(src=(3, 0), dst=(2, 0))])
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    recv_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        x, _ = ttl.node(dims=2)
        if x == 1:
            with recv_dfb.wait() as a, out_dfb.reserve() as o:
                o.store(a)
        if x == 2:
            with recv_dfb.wait() as a, recv_dfb.wait() as b, out_dfb.reserve() as o:
                o.store(a + b)

    @ttl.datamovement()
    def dm():
        x, _ = ttl.node(dims=2)

        def send(pipe):
            with send_dfb.reserve() as blk:
                ttl.copy(inp[0, x], blk).wait()
            with send_dfb.wait() as blk:
                ttl.copy(blk, pipe).wait()

        net.if_src(send)

        def receive(pipe):
            with recv_dfb.reserve() as blk:
                ttl.copy(pipe, blk).wait()

        net.if_dst(receive)

    @ttl.datamovement()
    def write():
        x, _ = ttl.node(dims=2)
        if x == 1 or x == 2:
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0, x]).wait()


def test_a_node_receives_from_a_multicast_and_a_point_to_point_pipe_of_one_net():
    import ml_dtypes

    inp = tile_tensor((32, 128), seed=5)
    out = zeros((32, 128))
    both_kinds_into_one_node(inp, out)
    v, got = ttnn.to_numpy(inp).astype(np.float32), ttnn.to_numpy(out).astype(np.float32)
    expected = np.zeros_like(v)
    expected[:, 32:64] = v[:, 0:32]
    expected[:, 64:96] = (v[:, 0:32] + v[:, 96:128]).astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(got, expected)


def test_mixed_net_kernels_compile_against_the_real_headers(tmp_path):
    jobs = []
    for operation in (relay, both_kinds_into_one_node):
        program = compiled(operation, tile_tensor((32, 128)), zeros((32, 128))).program
        for k in program.kernels:
            if k.is_compute:
                continue
            path = tmp_path / f"{operation.__name__}_{k.name}.cpp"
            path.write_text(emit_kernel(k.function))
            role = "reader" if k.processor == "RISCV_0" else "writer"
            jobs.append((path, role, accessor_compile_args(program, k)))
    for check in check_kernels(jobs):
        require_accepted(check)


def test_a_multicast_into_blocks_at_different_addresses_stops_at_the_send():
    """A multicast writes one address on every receiver: receivers whose blocks (here of two
    buffers) sit at different L1 addresses stop the run at the send, naming the receiver whose
    pages it would overwrite."""
    pipe = ttl.Pipe(src=(0, 0), dst=(slice(1, 3), 0))
    net = ttl.PipeNet([pipe])  # noqa: F841 - the net the pipe belongs to

    @ttl.operation(grid=(3, 1))
    def mcast(inp, out):
        send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        first_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        second_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def reader():
            x, _ = ttl.node(dims=2)
            if x == 0:
                with send_dfb.reserve() as blk:
                    ttl.copy(inp[0, 0], blk).wait()
                    ttl.copy(blk, pipe).wait()  # error
            if x == 1:
                with first_dfb.reserve() as blk:
                    ttl.copy(pipe, blk).wait()
            if x == 2:
                with second_dfb.reserve() as blk:
                    ttl.copy(pipe, blk).wait()

        @ttl.datamovement()
        def writer():
            x, _ = ttl.node(dims=2)
            if x == 1:
                with first_dfb.wait() as blk:
                    ttl.copy(blk, out[0, 0]).wait()
            if x == 2:
                with second_dfb.wait() as blk:
                    ttl.copy(blk, out[0, 1]).wait()

    expect_error(lambda: mcast(tile_tensor((32, 32)), zeros((32, 64))),
                 test_a_multicast_into_blocks_at_different_addresses_stops_at_the_send, NocHazardError,
                 "noc_async_write_multicast writes one L1 address on every core it reaches, but core (1,0) holds its "
                 "reserved block in c_1 (first_dfb), not in the pages of c_2 (second_dfb)",
                 "receive into the same dataflow buffer on every receiver")


def test_a_multicast_received_into_two_buffers_in_turn_runs():
    """Every receiver takes the first transfer into one buffer and the second into another: for each
    transfer all receivers' blocks are at one address, as a multicast needs."""
    pipe = ttl.Pipe(src=(0, 0), dst=(slice(1, 3), 0))
    net = ttl.PipeNet([pipe])

    @ttl.operation(grid=(3, 1))
    def halves(inp, out):
        send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        left_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
        right_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def mover():
            x, _ = ttl.node(dims=2)
            for half in range(2):
                if x == 0:
                    with send_dfb.reserve() as blk:
                        ttl.copy(inp[0, half], blk).wait()
                        net.if_src(lambda p: ttl.copy(blk, p).wait())
                elif half == 0:
                    with left_dfb.reserve() as got:
                        net.if_dst(lambda p: ttl.copy(p, got).wait())
                        ttl.copy(got, out[x - 1, 0]).wait()
                else:
                    with right_dfb.reserve() as got:
                        net.if_dst(lambda p: ttl.copy(p, got).wait())
                        ttl.copy(got, out[x - 1, 1]).wait()

        @ttl.datamovement()
        def idle():
            pass

    inp, out = tile_tensor((32, 64), seed=4), zeros((64, 64))
    halves(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.concatenate([ttnn.to_numpy(inp)] * 2))


def test_a_multicast_into_one_buffer_at_different_positions_stops_at_the_send():
    """Receiver 1 took a block of ``recv_dfb`` before the transfer, receiver 2 did not: their blocks
    sit at different positions of the buffer, which one multicast address cannot reach."""
    def run():
        @ttl.operation(grid=(3, 1))
        def asym(inp, out):
            collective = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(slice(1, 3), 0))])
            send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
            recv_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

            @ttl.compute()
            def compute():
                pass

            @ttl.datamovement()
            def dm():
                x, _ = ttl.node(dims=2)
                if x == 1:
                    with recv_dfb.reserve() as blk:
                        ttl.copy(inp[0, 0], blk).wait()
                    with recv_dfb.wait():
                        pass

                def send(pipe):
                    with send_dfb.reserve() as blk:
                        ttl.copy(inp[0, 0], blk).wait()
                    with send_dfb.wait() as blk:
                        ttl.copy(blk, pipe).wait()  # error

                collective.if_src(send)

                def recv(pipe):
                    with recv_dfb.reserve() as blk:
                        ttl.copy(pipe, blk).wait()
                    with recv_dfb.wait() as blk:
                        ttl.copy(blk, out[0, x - 1]).wait()

                collective.if_dst(recv)

        asym(tile_tensor((32, 32)), zeros((32, 64)))

    expect_error(run, test_a_multicast_into_one_buffer_at_different_positions_stops_at_the_send, NocHazardError,
                 "noc_async_write_multicast writes one L1 address on every core it reaches, but core (1,0) reserved "
                 "its block of c_1 (recv_dfb) at another position of the buffer", "keep them in step")
