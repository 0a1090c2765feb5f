"""Pipes named in a kernel: ``ttl.copy(blk, pipe)`` / ``ttl.copy(pipe, blk)`` with a ``ttl.Pipe`` of
a net, guarded by the node's role and coordinates as TT-Lang's main branch writes gathers and
all-gathers; run on the simulated device against numpy, C++ checked against the real headers."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError, SourceLocation
from ttl_helpers import compiled, expect_error, tile_tensor, zeros

SOURCES = 3
WIDTH = 4


@ttl.operation(grid=(SOURCES + 1, 1))
def gather(inp, out):
    """Nodes 1..3 each send one two-tile block to node 0, which receives them one after another
    into a single-block buffer and writes them side by side."""
    pipes = [ttl.Pipe(src=(k, 0), dst=(0, 0)) for k in range(1, SOURCES + 1)]
    net = ttl.PipeNet(pipes)
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 2), block_count=2)
    recv_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=1)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def dm():
        node_x, _ = ttl.node(dims=2)
        for k, pipe in enumerate(pipes):
            if net.is_dst():
                with recv_dfb.reserve() as blk:
                    ttl.copy(pipe, blk).wait()
                with recv_dfb.wait() as blk:
                    ttl.copy(blk, out[0, 2 * k:2 * k + 2]).wait()
            elif net.is_src() and node_x == k + 1:
                with send_dfb.reserve() as blk:
                    ttl.copy(inp[0, 2 * k:2 * k + 2], blk).wait()
                with send_dfb.wait() as blk:
                    ttl.copy(blk, pipe).wait()

    @ttl.datamovement()
    def idle():
        pass


def test_a_receiver_takes_named_pipes_one_after_another():
    inp = tile_tensor((32, 2 * SOURCES * 32), seed=4)
    out = zeros((32, 2 * SOURCES * 32))
    gather(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(inp))


@ttl.operation(grid=(WIDTH, 1))
def row_all_gather(inp, out):
    """Every node multicasts its tile to the whole row (itself included); every node posts the
    receive first, and the pipe's source sends while its own receive is pending."""
    pipes = [ttl.Pipe(src=(k, 0), dst=(slice(0, WIDTH), 0)) for k in range(WIDTH)]
    net = ttl.PipeNet(pipes)
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    recv_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def dm():
        node_x, _ = ttl.node(dims=2)
        if net.is_dst():
            for k, pipe in enumerate(pipes):
                with recv_dfb.reserve() as recv_blk:
                    recv_tx = ttl.copy(pipe, recv_blk)
                    if node_x == k:
                        with send_dfb.reserve() as send_blk:
                            ttl.copy(inp[0, k], send_blk).wait()
                        with send_dfb.wait() as send_blk:
                            ttl.copy(send_blk, pipe).wait()
                    recv_tx.wait()
                with recv_dfb.wait() as recv_blk:
                    ttl.copy(recv_blk, out[node_x, k]).wait()

    @ttl.datamovement()
    def idle():
        pass


def test_a_row_all_gather_through_named_multicast_pipes():
    inp = tile_tensor((32, WIDTH * 32), seed=6)
    out = zeros((WIDTH * 32, WIDTH * 32))
    row_all_gather(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.tile(ttnn.to_numpy(inp), (WIDTH, 1)))


def test_named_pipes_compile_against_the_real_dataflow_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    inp = tile_tensor((32, WIDTH * 32))
    program = compiled(row_all_gather, inp, zeros((WIDTH * 32, WIDTH * 32))).program
    kernel = next(k for k in program.kernels if k.name == "dm")
    path = tmp_path / "dm.cpp"
    path.write_text(emit_kernel(kernel.function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader",
                                                            check_kernel.accessor_compile_args(program, kernel)))


LONE = ttl.Pipe(src=(0, 0), dst=(1, 0))
# a net of another file holding a pipe equal to LONE: it must not lend LONE a net
ELSEWHERE = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))], _location=SourceLocation("/elsewhere/other.py", 3))


def test_a_pipe_outside_every_net_is_a_net_of_its_own():
    """As TT-Lang takes it: ``ttl.copy`` into and out of a ``ttl.Pipe`` no net holds sends the block
    (the nets of other files holding an equal pipe lend it nothing)."""
    @ttl.operation(grid=(2, 1))
    def op(inp, out):
        send = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
        receive = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

        @ttl.datamovement()
        def dm():
            x, _ = ttl.node(dims=2)
            if x == 0:
                with send.reserve() as blk:
                    ttl.copy(inp[0, 0], blk).wait()
                with send.wait() as blk:
                    ttl.copy(blk, LONE).wait()
            else:
                with receive.reserve() as blk:
                    ttl.copy(LONE, blk).wait()
                with receive.wait() as blk:
                    ttl.copy(blk, out[0, 0]).wait()

        @ttl.compute()
        def compute():
            pass

    inp, out = tile_tensor((32, 32)), zeros((32, 32))
    op(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(inp))


def test_a_receive_from_a_pipe_nothing_sends_into_names_the_users_line():
    @ttl.operation(grid=(2, 1))
    def op(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def dm():
            with dfb.reserve() as blk:
                ttl.copy(LONE, blk).wait()  # error

        @ttl.compute()
        def compute():
            pass

    expect_error(lambda: op(tile_tensor((32, 64)), zeros((32, 64))),
                 test_a_receive_from_a_pipe_nothing_sends_into_names_the_users_line, KernelError,
                 "nothing sends into it")


def test_a_grid_over_several_chips_names_the_users_line():
    def run():
        @ttl.operation(grid=(2, 4, 4, 4))  # error
        def op(a):
            pass

        op(tile_tensor((32, 32)))

    ttnn.set_num_devices(4)
    try:
        expect_error(run, test_a_grid_over_several_chips_names_the_users_line, KernelError,
                     "spans 8 chips (2x4) but 4 are simulated", "--num-devices 8")
    finally:
        ttnn.set_num_devices(None)


def test_a_pipe_to_another_chip_names_the_users_line():
    @ttl.operation(grid=(2, 1))
    def op(a):
        ttl.PipeNet([ttl.Pipe((0, 0, 0, 0), (slice(0, 2), slice(0, 2), 0, 0))])  # error

        @ttl.compute()
        def compute():
            pass

    expect_error(lambda: op(tile_tensor((32, 32))), test_a_pipe_to_another_chip_names_the_users_line, KernelError,
                 "Pipe 0 dst (0:2, 0:2, 0, 0) names nodes on chips of a mesh", "not supported by tilefold yet")


@ttl.operation(grid=(4, 1))
def gather_by_list(inp, out):
    """A list of pipes indexed by a range() variable: the loop unrolls, each copy names one pipe."""
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    pipes = [ttl.Pipe(src=(i, 0), dst=(0, 0)) for i in range(1, 4)]
    ttl.PipeNet(pipes)

    @ttl.datamovement()
    def dm():
        x, _ = ttl.node(dims=2)
        if x == 0:
            for i in range(3):
                with dfb.reserve() as blk:
                    ttl.copy(pipes[i], blk).wait()
                with dfb.wait() as blk:
                    ttl.copy(blk, out[0, i + 1]).wait()
        else:
            for i in range(3):
                if x == i + 1:
                    with dfb.reserve() as blk:
                        ttl.copy(inp[0, x], blk).wait()
                    with dfb.wait() as blk:
                        ttl.copy(blk, pipes[i]).wait()

    @ttl.compute()
    def compute():
        pass


def test_a_list_of_pipes_indexed_by_a_range_variable():
    import numpy as np

    v = np.zeros((32, 128), np.float32)
    for t in range(4):
        v[:, 32 * t:32 * (t + 1)] = t + 1
    out = ttnn.zeros((32, 128), layout=ttnn.TILE_LAYOUT)
    gather_by_list(ttnn.from_numpy(v, layout=ttnn.TILE_LAYOUT), out)
    expected = v.copy()
    expected[:, :32] = 0
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)


@ttl.operation(grid=(4, 1))
def scatter_by_list(inp, out):
    """One source sends on three unicast pipes: each pipe has a ready semaphore of its own on the
    source, so receivers that are ready at once do not count for each other."""
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    pipes = [ttl.Pipe(src=(0, 0), dst=(i, 0)) for i in range(1, 4)]
    ttl.PipeNet(pipes)

    @ttl.datamovement()
    def dm():
        x, _ = ttl.node(dims=2)
        if x == 0:
            for i in range(3):
                with dfb.reserve() as blk:
                    ttl.copy(inp[0, i + 1], blk).wait()
                with dfb.wait() as blk:
                    ttl.copy(blk, pipes[i]).wait()
        else:
            for i in range(3):
                if x == i + 1:
                    with dfb.reserve() as blk:
                        ttl.copy(pipes[i], blk).wait()
                    with dfb.wait() as blk:
                        ttl.copy(blk, out[0, x]).wait()

    @ttl.compute()
    def compute():
        pass


def test_one_source_sending_on_several_unicast_pipes():
    v = np.zeros((32, 128), np.float32)
    for t in range(4):
        v[:, 32 * t:32 * (t + 1)] = t + 1
    out = ttnn.zeros((32, 128), layout=ttnn.TILE_LAYOUT)
    scatter_by_list(ttnn.from_numpy(v, layout=ttnn.TILE_LAYOUT), out)
    expected = v.copy()
    expected[:, :32] = 0
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)
