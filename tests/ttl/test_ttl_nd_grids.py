"""Grids of 3 or more dimensions, ``@ttl.operation(grid=(d0, ..., dn))``, as TT-Lang numbers their
nodes: the linear index enumerates the grid with the last coordinate fastest, ``ttl.node(dims=k)``
flattens the first coordinates (or pads with 0), ``ttl.grid_size(dims=k)`` the last sizes (or pads
with 1). The grid runs on ``d0 * ... * d(n-1)`` columns of ``dn`` rows. Pipes and semaphores name
nodes with n coordinates; a pipe to a box of nodes that is no rectangle of columns and rows takes
several multicasts. Run on the simulated device against numpy; the C++ checked against the headers."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import compiled, expect_error, tile_tensor, zeros

GRID3 = (2, 3, 4)
NODES3 = math.prod(GRID3)


def elementwise(grid, dims: int, in_body: bool):
    """Node ``i`` (linear) doubles tile ``(0, i)`` of ``inp`` plus one and writes it to tile
    ``(c0, flat(c1..cn))`` of ``out``, found from its coordinates ``ttl.node(dims)`` — in the
    operation's body (:func:`place`) or in the kernel (the same arithmetic, written out)."""
    cols = math.prod(grid[1:])          # out has grid[0] tile rows of cols tiles
    per_row = cols // grid[-1]          # columns of nodes per tile row of out

    def place(coords):
        """(row, column) of the node's tile in ``out`` from ttl.node(dims) coordinates."""
        if dims == 1:
            return coords // cols, coords % cols
        if dims == 2:                  # (c0 * ... * d(n-2) + c(n-2), cn)
            flat, last = coords
            return flat // per_row, flat % per_row * grid[-1] + last
        flat = 0
        for c, d in zip(coords[1:], grid[1:]):
            flat = flat * d + c
        return coords[0], flat

    @ttl.operation(grid=grid)
    def op(inp, out):
        if in_body:
            row, col = place(ttl.node(dims=dims))
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with dfb.wait() as x, out_dfb.reserve() as y:
                y.store(x * 2.0 + 1.0)

        @ttl.datamovement()
        def read():
            with dfb.reserve() as blk:
                ttl.copy(inp[0, ttl.node(dims=1)], blk).wait()

        @ttl.datamovement()
        def write():
            if in_body:
                r, c = row, col
            elif dims == 1:
                i = ttl.node(dims=1)
                r, c = i // cols, i % cols
            elif dims == 2:
                flat, last = ttl.node(dims=2)
                r, c = flat // per_row, flat % per_row * grid[-1] + last
            else:
                coords = ttl.node(dims=dims)
                r, c = coords[0], 0
                for k, size in enumerate(grid):
                    if k > 0:
                        c = c * size + coords[k]
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[r, c]).wait()

    return op


def _expected_elementwise(inp, grid):
    """Tile (0, i) of ``inp`` transformed, at tile (c0, flat(c1..cn)) for (c0, ..., cn) = unravel(i)."""
    v = ttnn.to_numpy(inp).astype(np.float32) * 2.0 + 1.0
    cols = math.prod(grid[1:])
    expected = np.zeros((grid[0] * 32, cols * 32), np.float32)
    for i in range(math.prod(grid)):
        coords = np.unravel_index(i, grid)
        row, col = coords[0], np.ravel_multi_index(coords[1:], grid[1:])
        expected[row * 32:(row + 1) * 32, col * 32:(col + 1) * 32] = v[:, i * 32:(i + 1) * 32]
    return expected


@pytest.mark.parametrize("in_body", [False, True], ids=["kernel", "body"])
@pytest.mark.parametrize("dims", [3, 1, 2])
def test_a_3d_grid_node_picks_its_tile(dims, in_body):
    inp = tile_tensor((32, NODES3 * 32), seed=dims)
    out = zeros((GRID3[0] * 32, NODES3 // GRID3[0] * 32))
    elementwise(GRID3, dims, in_body)(inp, out)
    np.testing.assert_allclose(ttnn.to_numpy(out), _expected_elementwise(inp, GRID3), rtol=1e-2, atol=1e-2)


def test_a_3d_grid_takes_columns_of_its_last_dimension(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    op = elementwise(GRID3, 3, False)
    tensors = (tile_tensor((32, NODES3 * 32)), zeros((64, 12 * 32)))
    capture = op.build(tensors, {}).capture
    assert capture.grid == (6, 4) and capture.grid_dims == GRID3
    program = compiled(op, *tensors).program
    kernel = next(k for k in program.kernels if k.name == "write")
    path = tmp_path / "write.cpp"
    path.write_text(emit_kernel(kernel.function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "writer",
                                                            check_kernel.accessor_compile_args(program, kernel)))


@pytest.mark.parametrize("in_body", [False, True], ids=["kernel", "body"])
def test_a_4d_grid_that_fits_one_chip(in_body):
    grid = (1, 2, 2, 4)
    nodes = math.prod(grid)
    inp, out = tile_tensor((32, nodes * 32), seed=5), zeros((32, nodes * 32))
    elementwise(grid, 4, in_body)(inp, out)
    np.testing.assert_allclose(ttnn.to_numpy(out), _expected_elementwise(inp, grid), rtol=1e-2, atol=1e-2)


# -- ttl.grid_size ------------------------------------------------------------------------------

SEEN: dict = {}


@ttl.operation(grid=GRID3)
def grid_sizes(inp, out):
    """The body records ttl.grid_size(dims=1..4); the kernel asserts them (when it is built) and
    places node i's tile at (i // 12, i % 12) of ``out`` with sizes it computes from them."""
    SEEN["body"] = [ttl.grid_size(dims=k) for k in range(1, 5)]
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def dm():
        total = ttl.grid_size(dims=1)
        first, rest = ttl.grid_size(dims=2)
        d0, d1, d2 = ttl.grid_size(dims=3)
        e0, e1, e2, e3 = ttl.grid_size(dims=4)
        assert total == 24 and (first, rest) == (2, 12) and (d0, d1, d2) == (2, 3, 4)
        assert (e0, e1, e2, e3) == (2, 3, 4, 1)
        i = ttl.node(dims=1)
        with dfb.reserve() as blk:
            ttl.copy(inp[0, i], blk).wait()
        with dfb.wait() as blk:
            ttl.copy(blk, out[i // (d1 * d2 * e3), i % rest]).wait()


def test_grid_size_of_a_3d_grid_in_the_body_and_in_a_kernel():
    inp = tile_tensor((32, NODES3 * 32), seed=3)
    out = zeros((2 * 32, 12 * 32))
    grid_sizes(inp, out)
    assert SEEN["body"] == [24, (2, 12), (2, 3, 4), (2, 3, 4, 1)]
    v = ttnn.to_numpy(inp)
    expected = np.concatenate([v[:, :12 * 32], v[:, 12 * 32:]], axis=0)
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)


# -- pipes and semaphores -----------------------------------------------------------------------

BOX = (slice(0, 2), 1, slice(0, 4))         # nodes (a, 1, c): linear 4..7 and 16..19, columns 1 and 4


@ttl.operation(grid=GRID3)
def box_multicast(inp, out, seen):
    """Node (0, 0, 0) multicasts tile 0 of ``inp`` to the box ``BOX``; each receiver adds its own
    tile ``inp[0, i + 1]`` and writes the sum to ``out[0, i]``. The source reads ``pipe.dst`` (the
    box as written, with runtime slice bounds) and copies tile 0 to ``seen`` at the box's first and
    last node."""
    net = ttl.PipeNet([ttl.Pipe((0, 0, 0), BOX)])
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    own = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    stage = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)

    @ttl.compute()
    def compute():
        if not net.is_dst():
            return
        with dfb.wait() as x, own.wait() as o, out_dfb.reserve() as y:
            y.store(x + o)

    @ttl.datamovement()
    def dm():
        if not net.is_active():
            return
        i = ttl.node(dims=1)
        if net.is_dst():
            with own.reserve() as blk:
                ttl.copy(inp[0, i + 1], blk).wait()

        def send(pipe):
            a, b, c = pipe.dst
            with stage.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()
            with stage.wait() as blk:
                ttl.copy(blk, seen[0, (a.start * 3 + b) * 4 + c.start]).wait()
                ttl.copy(blk, seen[0, ((a.stop - 1) * 3 + b) * 4 + c.stop - 1]).wait()
                ttl.copy(blk, pipe).wait()

        def receive(pipe):
            with dfb.reserve() as blk:
                ttl.copy(pipe, blk).wait()

        net.if_src(send)
        net.if_dst(receive)

    @ttl.datamovement()
    def write():
        if not net.is_dst():
            return
        with out_dfb.wait() as blk:
            ttl.copy(blk, out[0, ttl.node(dims=1)]).wait()


def _box_nodes():
    return [int(np.ravel_multi_index((a, 1, c), GRID3)) for a in range(2) for c in range(4)]


def test_a_pipe_to_a_box_of_a_3d_grid():
    inp = tile_tensor((32, (NODES3 + 1) * 32), seed=7)
    out, seen = zeros((32, NODES3 * 32)), zeros((32, NODES3 * 32))
    box_multicast(inp, out, seen)
    v = ttnn.to_numpy(inp).astype(np.float32)
    expected = np.zeros((32, NODES3 * 32), np.float32)
    for i in _box_nodes():
        expected[:, i * 32:(i + 1) * 32] = v[:, :32] + v[:, (i + 1) * 32:(i + 2) * 32]
    np.testing.assert_allclose(ttnn.to_numpy(out), expected, rtol=1e-2, atol=1e-2)
    marks = np.zeros((32, NODES3 * 32), np.float32)
    for i in (4, 19):                       # (0, 1, 0) and (1, 1, 3)
        marks[:, i * 32:(i + 1) * 32] = ttnn.to_numpy(inp)[:, :32]
    np.testing.assert_array_equal(ttnn.to_numpy(seen), marks)


def test_the_box_takes_one_multicast_per_rectangle(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    tensors = (tile_tensor((32, (NODES3 + 1) * 32)), zeros((32, NODES3 * 32)), zeros((32, NODES3 * 32)))
    net = box_multicast.build(tensors, {}).capture.pipe_nets[0]
    assert [(r.x0, r.y0, r.x1, r.y1, r.exclude_src) for r in net.routes] == [(1, 0, 1, 3, False),
                                                                             (4, 0, 4, 3, False)]
    assert sorted(d for r in net.routes for d in r.destinations) == sorted(divmod(i, 4) for i in _box_nodes())
    program = compiled(box_multicast, *tensors).program
    kernel = next(k for k in program.kernels if k.name == "dm")
    path = tmp_path / "dm.cpp"
    path.write_text(emit_kernel(kernel.function))
    assert path.read_text().count("noc_async_write_multicast(") == 2
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader",
                                                            check_kernel.accessor_compile_args(program, kernel)))


@ttl.operation(grid=GRID3)
def gather_on_a_3d_grid(inp, scratch, out):
    """Every node of the second half (c0 = 1) but the last copies its tile to ``scratch`` and
    increments the barrier of node (1, 2, 3) (the last); that node waits, copies them to ``out``
    and then releases the half with a multicast set on (1, 0:3, 0:4); they write a second tile."""
    i = ttl.node(dims=1)
    a, b, c = ttl.node(dims=3)
    barrier = ttl.Semaphore()
    done = ttl.Semaphore()
    last = barrier.get_remote((1, 2, 3))
    half = done.get_remote_multicast((1, slice(0, 3), slice(0, 4)))
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def dm():
        if a == 1:
            if i != 23:
                with dfb.reserve() as blk:
                    ttl.copy(inp[0, i], blk).wait()
                with dfb.wait() as blk:
                    ttl.copy(blk, scratch[0, i]).wait()
                last.inc(1)
                done.wait_eq(1)
                with dfb.reserve() as blk:
                    ttl.copy(scratch[0, 12], blk).wait()
                with dfb.wait() as blk:
                    ttl.copy(blk, out[1, i]).wait()
            else:
                barrier.wait_eq(11)
                for t in range(12, 23):
                    with dfb.reserve() as blk:
                        ttl.copy(scratch[0, t], blk).wait()
                    with dfb.wait() as blk:
                        ttl.copy(blk, out[0, t]).wait()
                with dfb.reserve() as blk:
                    ttl.copy(inp[0, 12], blk).wait()
                with dfb.wait() as blk:
                    ttl.copy(blk, scratch[0, 12]).wait()
                half.set(1)

    @ttl.compute()
    def compute():
        pass


def test_semaphores_name_nodes_of_a_3d_grid():
    inp = tile_tensor((32, NODES3 * 32), seed=9)
    scratch, out = zeros((32, NODES3 * 32)), zeros((64, NODES3 * 32))
    gather_on_a_3d_grid(inp, scratch, out)
    v = ttnn.to_numpy(inp)
    expected = np.zeros((64, NODES3 * 32), np.float32)
    expected[:32, 12 * 32:23 * 32] = v[:, 12 * 32:23 * 32]
    for i in range(12, 23):
        expected[32:, i * 32:(i + 1) * 32] = v[:, 12 * 32:13 * 32]
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)


# -- errors -------------------------------------------------------------------------------------


def test_a_4d_grid_larger_than_the_chip_names_the_limit():
    @ttl.operation(grid=(1, 5, 3, 4))  # error
    def op(a):
        pass

    ttnn.set_num_devices(4)
    try:
        expect_error(lambda: op(tile_tensor((32, 32))), test_a_4d_grid_larger_than_the_chip_names_the_limit,
                     KernelError, "spans 5 chips (1x5) but 4 are simulated", "--num-devices 5")
    finally:
        ttnn.set_num_devices(None)


def test_a_4d_grid_whose_chips_do_not_fit_names_the_limit():
    @ttl.operation(grid=(1, 2, 9, 4))  # error
    def op(a):
        pass

    expect_error(lambda: op(tile_tensor((32, 32))), test_a_4d_grid_whose_chips_do_not_fit_names_the_limit,
                 KernelError, "spans several chips", "x <= 8, y <= 8", "18 columns (d0 * d1 * d2) by 4 rows (d3)")


def test_a_3d_grid_larger_than_the_chip_names_the_limit():
    @ttl.operation(grid=(2, 2, 9))  # error
    def op(a):
        pass

    expect_error(lambda: op(tile_tensor((32, 32))), test_a_3d_grid_larger_than_the_chip_names_the_limit,
                 KernelError, "spans several chips", "(mesh axes..., x, y)", "4 columns (d0 * d1) by 9 rows (d2)",
                 "d2 <= 8")


def test_a_pipe_node_outside_a_3d_grid_names_the_users_line():
    @ttl.operation(grid=GRID3)
    def op(a):
        ttl.PipeNet([ttl.Pipe((0, 0, 0), (0, 3, slice(0, 4)))])  # error

        @ttl.compute()
        def compute():
            pass

    expect_error(lambda: op(tile_tensor((32, 32))), test_a_pipe_node_outside_a_3d_grid_names_the_users_line,
                 KernelError, "Pipe 0 dst (0, 3, 0:4) reaches outside the grid (2, 3, 4)")


def test_a_multicast_semaphore_on_no_rectangle_names_the_users_line():
    @ttl.operation(grid=GRID3)
    def op(a):
        ttl.Semaphore().get_remote_multicast(BOX)  # error

        @ttl.compute()
        def compute():
            pass

    expect_error(lambda: op(tile_tensor((32, 32))),
                 test_a_multicast_semaphore_on_no_rectangle_names_the_users_line, KernelError,
                 "form no rectangle of the grid's 6 columns and 4 rows")


# -- 1-D grids ----------------------------------------------------------------------------------


@ttl.operation(grid=(16,))
def one_d_grid(inp, out):
    """16 nodes in a line: node i (``ttl.node(dims=1)``, or ``(i, 0)`` with dims=2) doubles tile
    ``(0, i)`` and adds tile 16, which node 0 reads and multicasts to nodes 1..15."""
    SEEN["one_d"] = (ttl.grid_size(dims=1), ttl.grid_size(dims=2), ttl.grid_size())
    net = ttl.PipeNet([ttl.Pipe((0,), (slice(1, 16),))])
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    shared = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with dfb.wait() as x, shared.wait() as s, out_dfb.reserve() as y:
            y.store(x * 2.0 + s)

    @ttl.datamovement()
    def read():
        i, zero = ttl.node(dims=2)
        assert ttl.grid_size(dims=2) == (16, 1) and isinstance(i, int) and zero == 0
        with dfb.reserve() as blk:
            ttl.copy(inp[0, i], blk).wait()
        with shared.reserve() as blk:
            def send(pipe):
                ttl.copy(inp[0, 16], blk).wait()
                ttl.copy(blk, pipe).wait()

            def receive(pipe):
                ttl.copy(pipe, blk).wait()

            net.if_src(send)
            net.if_dst(receive)

    @ttl.datamovement()
    def write():
        with out_dfb.wait() as blk:
            ttl.copy(blk, out[0, ttl.node(dims=1)]).wait()


def test_a_1d_grid_fills_columns_of_eight_rows():
    inp = tile_tensor((32, 17 * 32), seed=11)
    out = zeros((32, 16 * 32))
    one_d_grid(inp, out)
    assert SEEN["one_d"] == (16, (16, 1), (16, 1))
    assert one_d_grid.build((inp, out), {}).capture.grid == (2, 8)
    v = ttnn.to_numpy(inp).astype(np.float32)
    expected = v[:, :16 * 32] * 2.0 + np.tile(v[:, 16 * 32:], 16)    # the source keeps its own copy
    np.testing.assert_allclose(ttnn.to_numpy(out), expected, rtol=2e-2, atol=2e-2)


def test_a_1d_grid_too_long_for_the_device():
    @ttl.operation(grid=(11,))  # error
    def op(x, y):
        pass

    expect_error(lambda: op(tile_tensor((64, 64)), zeros((64, 64))), test_a_1d_grid_too_long_for_the_device,
                 KernelError, "8x8", "11 nodes take 11 columns of 1 row", "--arch blackhole")
