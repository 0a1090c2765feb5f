"""``pipe.src`` in an ``if_dst`` body and ``pipe.dst`` in an ``if_src`` body: the node at the other
end of the pipe, used to index tensors, on the simulated device against numpy."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import compiled, expect_error, tile_tensor, zeros

COLS, ROWS = 3, 2


@ttl.operation(grid=(COLS, ROWS))
def gather_by_source(inp, out):
    """Every node of a row sends its tile to the row's first node, which stores each tile where
    ``pipe.src`` says it came from."""
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    net = ttl.PipeNet([ttl.Pipe(src=(x, y), dst=(0, y)) for x in range(1, COLS) for y in range(ROWS)])

    @ttl.datamovement()
    def dm():
        def send(pipe):
            nx, ny = ttl.node(dims=2)
            with dfb.reserve() as blk:
                ttl.copy(inp[ny, nx], blk).wait()
                ttl.copy(blk, pipe).wait()

        def receive(pipe):
            sx, sy = pipe.src
            with dfb.reserve() as blk:
                ttl.copy(pipe, blk).wait()
                ttl.copy(blk, out[sy, sx]).wait()

        net.if_src(send)
        net.if_dst(receive)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def idle():
        pass


def test_a_receiver_stores_each_tile_where_pipe_src_says():
    inp = tile_tensor((ROWS * 32, COLS * 32), seed=5)
    out = zeros((ROWS * 32, COLS * 32))
    gather_by_source(inp, out)
    expected = ttnn.to_numpy(inp).copy()
    expected[:, :32] = 0
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)


@ttl.operation(grid=(2, 3))
def multicast_by_destination(inp, out, mirror):
    """The first node of each column multicasts its tile down the column; in its body ``pipe.dst``
    is ``(x, slice(1, 3))`` and indexes the 2x1 tiles of the column it sends to."""
    one = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    column = ttl.make_dataflow_buffer_like(inp, shape=(2, 1), block_count=1)
    net = ttl.PipeNet([ttl.Pipe(src=(x, 0), dst=(x, slice(1, 3))) for x in range(2)])

    @ttl.datamovement()
    def dm():
        def send(pipe):
            dx, dys = pipe.dst
            with one.reserve() as blk:
                ttl.copy(inp[0, dx], blk).wait()
                ttl.copy(blk, pipe).wait()
            with column.reserve() as col:
                ttl.copy(inp[dys, dx], col).wait()
                ttl.copy(col, mirror[dys, dx]).wait()

        def receive(pipe):
            nx, ny = ttl.node(dims=2)
            with one.reserve() as blk:
                ttl.copy(pipe, blk).wait()
                ttl.copy(blk, out[ny, nx]).wait()

        net.if_src(send)
        net.if_dst(receive)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def idle():
        pass


def test_a_multicast_source_indexes_tensors_with_pipe_dst():
    inp = tile_tensor((3 * 32, 2 * 32), seed=6)
    out, mirror = zeros((3 * 32, 2 * 32)), zeros((3 * 32, 2 * 32))
    multicast_by_destination(inp, out, mirror)
    v = ttnn.to_numpy(inp)
    expected = np.zeros_like(v)
    expected[32:, :] = np.tile(v[:32, :], (2, 1))
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)
    expected_mirror = v.copy()
    expected_mirror[:32] = 0
    np.testing.assert_array_equal(ttnn.to_numpy(mirror), expected_mirror)


def test_pipe_peers_compile_against_the_real_dataflow_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    inp = tile_tensor((ROWS * 32, COLS * 32))
    program = compiled(gather_by_source, inp, zeros((ROWS * 32, COLS * 32))).program
    kernel = next(k for k in program.kernels if k.name == "dm")
    path = tmp_path / "dm.cpp"
    path.write_text(emit_kernel(kernel.function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader",
                                                            check_kernel.accessor_compile_args(program, kernel)))


def test_pipe_src_in_a_source_body_names_the_users_line():
    @ttl.operation(grid=(2, 1))
    def op(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])

        @ttl.datamovement()
        def dm():
            def send(pipe):
                with dfb.reserve() as blk:
                    ttl.copy(inp[0, 0], blk).wait()
                    ttl.copy(blk, out[pipe.src[1], 0]).wait()  # error

            net.if_src(send)

        @ttl.compute()
        def compute():
            pass

    expect_error(lambda: op(tile_tensor((32, 64)), zeros((32, 64))),
                 test_pipe_src_in_a_source_body_names_the_users_line, KernelError,
                 "pipe.src: in net.if_src's body a pipe has .dst")


@ttl.operation(grid=(3, 1))
def only_active_nodes(inp, out):
    """Node (0, 0) sends a tile to (1, 0); both double it and store it in their column of ``out``.
    Node (2, 0) takes part in no pipe: every kernel returns early there (``net.is_active()``)."""
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])

    @ttl.datamovement()
    def read():
        if not net.is_active():
            return
        with dfb.reserve() as blk:
            def send(pipe):
                ttl.copy(inp[0, 0], blk).wait()
                ttl.copy(blk, pipe).wait()

            def receive(pipe):
                ttl.copy(pipe, blk).wait()

            net.if_src(send)
            net.if_dst(receive)

    @ttl.compute()
    def compute():
        if not net.is_active():
            return
        with dfb.wait() as x, out_dfb.reserve() as y:
            y.store(x * 2.0)

    @ttl.datamovement()
    def write():
        if not (net.is_src() or net.is_dst()):
            return
        nx, _ = ttl.node(dims=2)
        with out_dfb.wait() as blk:
            ttl.copy(blk, out[0, nx]).wait()


def test_kernels_return_early_on_nodes_outside_the_pipe_net():
    inp = tile_tensor((32, 96), seed=9)
    out = zeros((32, 96))
    only_active_nodes(inp, out)
    first = ttnn.to_numpy(inp)[:, :32].astype(np.float64) * 2
    expected = np.concatenate([first, first, np.zeros_like(first)], axis=1)
    np.testing.assert_allclose(ttnn.to_numpy(out), expected, rtol=0.01, atol=0.01)


LINE = 5


@ttl.operation(grid=(LINE,))
def scatter_on_a_line(inp, out):
    """On a 1-D grid, node 0 sends tile ``i - 1`` to node ``i`` (pipes written ``(i,)``), choosing
    it by ``pipe.dst[0]``; each receiver stores it by its own ``ttl.node(dims=1)``."""
    stage = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    got = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    net = ttl.PipeNet([ttl.Pipe(src=(0,), dst=(i,)) for i in range(1, LINE)])

    @ttl.datamovement()
    def sender():
        def send(pipe):
            with stage.reserve() as s:
                ttl.copy(inp[0, pipe.dst[0] - 1], s).wait()
            with stage.wait() as s:
                ttl.copy(s, pipe).wait()
        net.if_src(send)

    @ttl.datamovement()
    def receiver():
        i = ttl.node(dims=1)

        def receive(pipe):
            with got.reserve() as b:
                ttl.copy(pipe, b).wait()
            with got.wait() as b:
                ttl.copy(b, out[0, i - 1]).wait()
        net.if_dst(receive)


def test_pipe_ends_written_as_one_coordinate_read_back_as_one():
    x = tile_tensor((32, 32 * (LINE - 1)), seed=12)
    y = zeros((32, 32 * (LINE - 1)))
    scatter_on_a_line(x, y)
    np.testing.assert_array_equal(ttnn.to_numpy(y), ttnn.to_numpy(x))
