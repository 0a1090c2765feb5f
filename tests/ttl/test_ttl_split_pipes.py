"""Pipes whose destinations form no rectangle: a range of linear nodes ``(slice(a, b),)`` that wraps
from one column of the grid to the next takes several multicasts (a partial column, full columns, a
partial column), each with its own handshake. Run on the simulated device against numpy; the C++
checked against the real headers."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import compiled, expect_error, tile_tensor, zeros

GRID = (4, 4)
NODES = GRID[0] * GRID[1]
FIRST, STOP = 1, 11           # linear nodes 1..10: the column of the source, less it, and 3 of the next


@ttl.operation(grid=GRID)
def split_multicast(inp, out, span):
    """Linear node 0 multicasts tile 0 of ``inp`` to linear nodes 1..10; every node of the pipe
    adds its own tile ``inp[0, i]`` to the tile it holds and writes it to ``out[0, i]``. In its body
    the source reads ``pipe.dst`` (the linear range as written) and copies those tiles to ``span``."""
    net = ttl.PipeNet([ttl.Pipe((0,), (slice(FIRST, STOP),))])
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    own = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    wide = ttl.make_dataflow_buffer_like(inp, shape=(1, STOP - FIRST), block_count=1)

    @ttl.compute()
    def compute():
        if not net.is_active():
            return
        with dfb.wait() as x, own.wait() as o, out_dfb.reserve() as y:
            y.store(x + o)

    @ttl.datamovement()
    def dm():
        if not net.is_active():
            return
        i = ttl.node(dims=1)
        with own.reserve() as blk:
            ttl.copy(inp[0, i], blk).wait()
        with dfb.reserve() as blk:
            def send(pipe):
                (dsts,) = pipe.dst
                with wide.reserve() as w:
                    ttl.copy(inp[0, dsts], w).wait()
                with wide.wait() as w:
                    ttl.copy(w, span[0, dsts]).wait()
                ttl.copy(inp[0, 0], blk).wait()
                ttl.copy(blk, pipe).wait()

            def receive(pipe):
                ttl.copy(pipe, blk).wait()

            net.if_src(send)
            net.if_dst(receive)

    @ttl.datamovement()
    def write():
        if not net.is_active():
            return
        with out_dfb.wait() as blk:
            ttl.copy(blk, out[0, ttl.node(dims=1)]).wait()


def _expected(inp):
    v = ttnn.to_numpy(inp).astype(np.float32)
    expected = np.zeros_like(v)
    for i in range(STOP):
        expected[:, i * 32:(i + 1) * 32] = v[:, :32] + v[:, i * 32:(i + 1) * 32]
    return expected


def test_a_linear_range_that_is_no_rectangle_is_multicast_in_pieces():
    inp = tile_tensor((32, NODES * 32), seed=11)
    out, span = zeros((32, NODES * 32)), zeros((32, NODES * 32))
    split_multicast(inp, out, span)
    np.testing.assert_allclose(ttnn.to_numpy(out), _expected(inp), rtol=1e-2, atol=1e-2)
    mirror = np.zeros_like(ttnn.to_numpy(inp))
    mirror[:, FIRST * 32:STOP * 32] = ttnn.to_numpy(inp)[:, FIRST * 32:STOP * 32]
    np.testing.assert_array_equal(ttnn.to_numpy(span), mirror)


def test_the_pipe_takes_one_route_per_rectangle():
    tensors = (tile_tensor((32, NODES * 32)), zeros((32, NODES * 32)), zeros((32, NODES * 32)))
    net = split_multicast.build(tensors, {}).capture.pipe_nets[0]
    rects = [(r.x0, r.y0, r.x1, r.y1, r.exclude_src) for r in net.routes]
    # column 0 less its source (linear 1..3) and column 1 (linear 4..7): one rectangle skipping the
    # sender; then linear 8..10, a partial column
    assert rects == [(0, 0, 1, 3, True), (2, 0, 2, 2, False)]
    assert net.pipe_routes == [[0, 1]]
    assert sorted(d for r in net.routes for d in r.destinations) == sorted(
        (k // GRID[1], k % GRID[1]) for k in range(FIRST, STOP))


def _check(program, name, tmp_path, check_kernel, multicasts: int):
    """The kernel's C++ holds ``multicasts`` sends (each a multicast with and one without loopback)
    and passes the checker."""
    from tilefold.codegen.cpp import emit_kernel

    kernel = next(k for k in program.kernels if k.name == name)
    path = tmp_path / f"{name}.cpp"
    path.write_text(emit_kernel(kernel.function))
    text = path.read_text()
    assert text.count("noc_async_write_multicast(") == multicasts
    assert text.count("noc_async_write_multicast_loopback_src(") == multicasts
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader",
                                                            check_kernel.accessor_compile_args(program, kernel)))


def test_the_split_multicast_compiles_against_the_real_dataflow_headers(tmp_path, check_kernel):
    program = compiled(split_multicast, tile_tensor((32, NODES * 32)), zeros((32, NODES * 32)),
                       zeros((32, NODES * 32))).program
    _check(program, "dm", tmp_path, check_kernel, 2)    # the source body, once per route


WIDE = (8, 8)
WIDE_PIPE = ttl.Pipe(0, (slice(3, 30),))     # linear 3..29: a partial column, two columns, a partial column


@ttl.operation(grid=WIDE)
def named_split_multicast(inp, out):
    """The same through a pipe the kernel names, on an 8x8 grid and three rectangles: the source's
    one ``ttl.copy(blk, pipe)`` multicasts to each, its ``wait()`` waits for all; every receiver
    multiplies what it got by its own tile."""
    net = ttl.PipeNet([WIDE_PIPE])
    send = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    own = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        if net.is_dst():
            with dfb.wait() as x, own.wait() as o, out_dfb.reserve() as y:
                y.store(x * o)

    @ttl.datamovement()
    def dm():
        i = ttl.node(dims=1)
        if net.is_src():
            with send.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()
            with send.wait() as blk:
                ttl.copy(blk, WIDE_PIPE).wait()
        elif net.is_dst():
            with own.reserve() as blk:
                ttl.copy(inp[0, i], blk).wait()
            with dfb.reserve() as blk:
                ttl.copy(WIDE_PIPE, blk).wait()

    @ttl.datamovement()
    def write():
        if net.is_dst():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0, ttl.node(dims=1)]).wait()


def test_a_named_split_pipe_sends_to_every_rectangle():
    n = WIDE[0] * WIDE[1]
    inp = tile_tensor((32, n * 32), seed=12)
    out = zeros((32, n * 32))
    named_split_multicast(inp, out)
    v = ttnn.to_numpy(inp).astype(np.float32)
    expected = np.zeros_like(v)
    for i in range(3, 30):
        expected[:, i * 32:(i + 1) * 32] = v[:, :32] * v[:, i * 32:(i + 1) * 32]
    np.testing.assert_allclose(ttnn.to_numpy(out), expected, rtol=2e-2, atol=2e-2)


def test_the_named_split_multicast_compiles_against_the_real_dataflow_headers(tmp_path, check_kernel):
    n = WIDE[0] * WIDE[1]
    tensors = (tile_tensor((32, n * 32)), zeros((32, n * 32)))
    assert len(named_split_multicast.build(tensors, {}).capture.pipe_nets[0].routes) == 3
    _check(compiled(named_split_multicast, *tensors).program, "dm", tmp_path, check_kernel, 3)


@ttl.operation(grid=GRID)
def split_and_back(inp, out):
    """Linear node 0 multicasts its tile to linear nodes 1..10 while linear node 5, one of them,
    sends its tile back to node 0: nodes both send and receive, so the blocks land in a landing
    buffer. Every receiver writes the tile it got plus its own to ``out[0, i]``."""
    net = ttl.PipeNet([ttl.Pipe((0,), (slice(FIRST, STOP),)), ttl.Pipe((5,), (0,))])
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    own = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        if net.is_dst():
            with dfb.wait() as x, own.wait() as o, out_dfb.reserve() as y:
                y.store(x + o)

    @ttl.datamovement()
    def dm():
        i = ttl.node(dims=1)

        def send(pipe):
            with own.reserve() as blk:
                ttl.copy(inp[0, i], blk).wait()
            with own.wait() as blk:
                ttl.copy(blk, pipe).wait()

        def receive(pipe):
            with own.reserve() as blk:
                ttl.copy(inp[0, i], blk).wait()
            with dfb.reserve() as blk:
                ttl.copy(pipe, blk).wait()

        net.if_src(send)
        net.if_dst(receive)

    @ttl.datamovement()
    def write():
        if net.is_dst():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0, ttl.node(dims=1)]).wait()


def test_a_split_pipe_in_a_net_whose_nodes_send_and_receive():
    inp = tile_tensor((32, NODES * 32), seed=14)
    out = zeros((32, NODES * 32))
    split_and_back(inp, out)
    v = ttnn.to_numpy(inp).astype(np.float32)
    expected = _expected(inp)
    expected[:, :32] = v[:, :32] + v[:, 5 * 32:6 * 32]
    np.testing.assert_allclose(ttnn.to_numpy(out), expected, rtol=1e-2, atol=1e-2)


@ttl.operation(grid=GRID)
def members(inp, out):
    """Every node of the split pipe (its source and its ten destinations) copies its tile of ``inp``
    to ``out``; the others copy nothing."""
    pipe = ttl.Pipe((0,), (slice(FIRST, STOP),))
    ttl.PipeNet([pipe])
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def dm():
        i = ttl.node(dims=1)
        if pipe.has_current_core():
            with dfb.reserve() as blk:
                ttl.copy(inp[0, i], blk).wait()
            with dfb.wait() as blk:
                ttl.copy(blk, out[0, i]).wait()


def test_has_current_core_covers_every_rectangle_of_a_split_pipe():
    inp = tile_tensor((32, NODES * 32), seed=13)
    out = zeros((32, NODES * 32))
    members(inp, out)
    expected = ttnn.to_numpy(inp).copy()
    expected[:, STOP * 32:] = 0
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)


def test_a_linear_range_with_a_step_names_the_users_line():
    @ttl.operation(grid=(2, 3))
    def op(inp, out):
        net = ttl.PipeNet([ttl.Pipe((0,), (slice(1, 5, 2),))])  # error

        @ttl.datamovement()
        def dm():
            net.if_src(lambda pipe: None)

    expect_error(lambda: op(tile_tensor((32, 32)), zeros((32, 32))),
                 test_a_linear_range_with_a_step_names_the_users_line, KernelError,
                 "step must be 1 or None", "drop the step 2")
