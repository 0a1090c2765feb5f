"""Linear node indices as TT-Lang numbers them: ``ttl.node(dims=1)`` is ``x * rows + y`` (the last
coordinate varies fastest), pipes name nodes by a linear index, a 1-tuple ``(i,)`` or a range
``(slice(a, b),)``, and a linear range that fills a rectangle less its source is a multicast that
skips its sender. Run on the simulated device against numpy; the C++ checked against the headers."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import compiled, expect_error, tile_tensor, zeros


@ttl.operation(grid=(3, 2))
def by_linear_index(inp, out):
    """Node (x, y) copies tile (y, x) of ``inp`` to tile (0, node(dims=1)) of ``out``."""
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def dm():
        x, y = ttl.node(dims=2)
        i = ttl.node(dims=1)
        with dfb.reserve() as blk:
            ttl.copy(inp[y, x], blk).wait()
            ttl.copy(blk, out[0, i]).wait()


def test_node_dims_1_is_x_times_rows_plus_y():
    inp, out = tile_tensor((2 * 32, 3 * 32), seed=1), zeros((32, 6 * 32))
    by_linear_index(inp, out)
    v = ttnn.to_numpy(inp)
    expected = np.concatenate([v[y * 32:(y + 1) * 32, x * 32:(x + 1) * 32] for x in range(3) for y in range(2)],
                              axis=1)
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)


@ttl.operation(grid=(2, 3))
def multicast_to_the_others(inp, out):
    """Linear node 0 reads one tile and multicasts it to the linear nodes 1..5 (the whole grid but
    the sender); every node adds one to its tile and writes it to tile (0, node(dims=1)) of ``out``."""
    net = ttl.PipeNet([ttl.Pipe((0,), (slice(1, ttl.grid_size(dims=1)),))])
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with dfb.wait() as x, out_dfb.reserve() as y:
            y.store(x + 1.0)

    @ttl.datamovement()
    def dm():
        with dfb.reserve() as blk:
            def send(pipe):
                ttl.copy(inp[0, 0], blk).wait()
                ttl.copy(blk, pipe).wait()

            def receive(pipe):
                ttl.copy(pipe, blk).wait()

            net.if_src(send)
            net.if_dst(receive)

    @ttl.datamovement()
    def write():
        with out_dfb.wait() as blk:
            ttl.copy(blk, out[0, ttl.node(dims=1)]).wait()


def test_a_linear_range_multicast_skips_its_sender():
    inp, out = tile_tensor((32, 32), seed=2), zeros((32, 6 * 32))
    multicast_to_the_others(inp, out)
    tile = ttnn.to_numpy(inp)
    got = ttnn.to_numpy(out)
    expected = tile.astype(np.float32) + 1.0
    for i in range(6):
        np.testing.assert_allclose(got[:, i * 32:(i + 1) * 32], expected, rtol=1e-2, atol=1e-2)


def test_the_multicast_that_skips_its_sender_compiles(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    program = compiled(multicast_to_the_others, tile_tensor((32, 32)), zeros((32, 6 * 32))).program
    kernel = next(k for k in program.kernels if k.name == "dm")
    path = tmp_path / "dm.cpp"
    path.write_text(emit_kernel(kernel.function))
    text = path.read_text()
    assert "noc_async_write_multicast" in text
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader",
                                                            check_kernel.accessor_compile_args(program, kernel)))


def _write_where(condition):
    """An operation on a 2x2 grid where each node copies its tile of x into y when ``condition(node)``
    (a comparison of the runtime tuple ``ttl.node(dims=2)``) holds."""

    @ttl.operation(grid=(2, 2))
    def op(x, y):
        a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def reader():
            c, r = ttl.node(dims=2)
            ttl.copy(x[r, c], a.reserve()).wait()

        @ttl.datamovement()
        def writer():
            c, r = ttl.node(dims=2)
            blk = a.wait()
            if condition(ttl.node(dims=2)):
                ttl.copy(blk, y[r, c]).wait()

        @ttl.compute()
        def compute():
            pass

    return op


def test_the_node_tuple_compares_with_a_tuple_like_python_tuples():
    x = tile_tensor((64, 64), seed=2)
    nodes = [(c, r) for c in range(2) for r in range(2)]
    for condition in (lambda n: n == (1, 0), lambda n: n != (1, 0), lambda n: n < (1, 1), lambda n: n >= (1, 0),
                      lambda n: n > (0, 1), lambda n: n <= (0,), lambda n: n == (1, 0, 0), lambda n: n < (1,)):
        y = zeros((64, 64))
        _write_where(condition)(x, y)
        expected = np.zeros((64, 64), np.float32)
        for c, r in nodes:
            if condition((c, r)):
                expected[32 * r:32 * r + 32, 32 * c:32 * c + 32] = x.host_values[32 * r:32 * r + 32, 32 * c:32 * c + 32]
        np.testing.assert_array_equal(y.host_values, expected)


def test_the_node_tuple_compared_with_a_number_is_an_error_at_the_line():
    def run():
        @ttl.operation(grid=(2, 2))
        def op(x, y):
            a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

            @ttl.datamovement()
            def reader():
                ttl.copy(x[0, 0], a.reserve()).wait()

            @ttl.datamovement()
            def writer():
                blk = a.wait()
                if ttl.node(dims=2) < 2:  # error
                    ttl.copy(blk, y[0, 0]).wait()

            @ttl.compute()
            def compute():
                pass

        op(tile_tensor((64, 64)), zeros((64, 64)))

    expect_error(run, test_the_node_tuple_compared_with_a_number_is_an_error_at_the_line, KernelError,
                 "'<' not supported between instances of 'tuple' and 'int'")


def test_unpacking_more_node_coordinates_than_names_describes_them():
    def run():
        @ttl.operation(grid=(2, 2))
        def op(x, y):
            a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

            @ttl.datamovement()
            def reader():
                c, r = ttl.node(dims=3)  # error
                ttl.copy(x[r, c], a.reserve()).wait()

            @ttl.datamovement()
            def writer():
                ttl.copy(a.wait(), y[0, 0]).wait()

            @ttl.compute()
            def compute():
                pass

        op(tile_tensor((64, 64)), zeros((64, 64)))

    err = expect_error(run, test_unpacking_more_node_coordinates_than_names_describes_them, KernelError,
                       "cannot unpack a tuple of 3 values (a runtime integer, a runtime integer, int 0) into 2 names")
    assert "OpResult" not in str(err)
