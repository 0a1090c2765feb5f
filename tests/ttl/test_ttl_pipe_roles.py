"""``net.is_src()`` / ``net.is_dst()`` / ``net.is_active()``: per-node booleans from the node's pipe
counts, in data movement and compute kernels, on nets made inside an operation or at module level;
run on the simulated device against numpy, and the generated C++ checked against the real headers."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import compiled, expect_error, tile_tensor, zeros

COLS = 4

# a net made outside any operation, as TT-Lang's main branch allows: node x of row 0 sends its tile
# to node x of row 1
DOWN = ttl.PipeNet([ttl.Pipe(src=(x, 0), dst=(slice(x, x + 1), 1)) for x in range(COLS)])


@ttl.operation(grid=(COLS, 2))
def shift_down(inp, out):
    """Row 0 reads its tile and sends it down; row 1 receives it, adds one in compute and writes it.
    The compute and writer kernels run their work only where ``DOWN.is_dst()``."""
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    recv_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        if DOWN.is_dst():
            with recv_dfb.wait() as x, out_dfb.reserve() as y:
                y.store(x + 1.0)

    @ttl.datamovement()
    def send_dm():
        nx, _ = ttl.node(dims=2)
        if DOWN.is_src():
            with send_dfb.reserve() as blk:
                ttl.copy(inp[0, nx], blk).wait()
                DOWN.if_src(lambda pipe: ttl.copy(blk, pipe).wait())

    @ttl.datamovement()
    def recv_dm():
        nx, _ = ttl.node(dims=2)

        def recv(pipe):
            with recv_dfb.reserve() as blk:
                ttl.copy(pipe, blk).wait()

        DOWN.if_dst(recv)
        if not DOWN.is_active():
            return
        if DOWN.is_dst():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[1, nx]).wait()


def test_kernels_guarded_by_the_nodes_role_in_a_module_level_net():
    inp = tile_tensor((64, COLS * 32), seed=3)
    out = zeros((64, COLS * 32))
    shift_down(inp, out)
    v = ttnn.to_numpy(inp).astype(np.float32)
    expected = np.zeros_like(v)
    expected[32:] = (v[:32].astype(np.float64) + 1).astype(ttnn.to_numpy(out).dtype)
    np.testing.assert_allclose(ttnn.to_numpy(out), expected, rtol=1e-2, atol=1e-2)


@ttl.operation(grid=(3, 1))
def role_map(inp, out):
    """A net from node 0 to node 1; node 2 takes no part. Each node copies tile 0 of ``inp`` if it
    is a source, tile 1 if a destination, else tile 2, into row 0 (active nodes) or row 1 of
    ``out`` at its column."""
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def reader():
        with dfb.reserve() as blk:
            if net.is_src():
                ttl.copy(inp[0, 0], blk).wait()
            elif net.is_dst():
                ttl.copy(inp[0, 1], blk).wait()
            else:
                ttl.copy(inp[0, 2], blk).wait()

    @ttl.datamovement()
    def writer():
        nx, _ = ttl.node(dims=2)
        with dfb.wait() as blk:
            if net.is_active():
                ttl.copy(blk, out[0, nx]).wait()
            else:
                ttl.copy(blk, out[1, nx]).wait()


def test_each_node_sees_its_own_role_and_a_node_outside_every_pipe_runs_nothing():
    """TT-Lang's PipeNet active set (its main branch and tt-lang-sim 1.1.6): node 2 is
    neither a source nor a destination, so it runs no kernel and its ``else`` branches never run."""
    inp = tile_tensor((32, 96), seed=5)
    out = zeros((64, 96))
    with pytest.warns(UserWarning, match=r"1 of the 3 nodes of operation 'role_map' is neither a source nor a "
                                         r"destination of any of its pipes, so they run none of its kernels"):
        role_map(inp, out)
    v = ttnn.to_numpy(inp)
    expected = np.zeros((64, 96), v.dtype)
    expected[:32, :64] = v[:, :64]            # node 0 (source) tile 0, node 1 (destination) tile 1
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)
    program = compiled(role_map, inp, out).program
    for kernel in program.kernels:
        assert sorted((c.x, c.y) for c in kernel.cores) == [(0, 0), (1, 0)], kernel.name


def test_role_predicates_compile_against_the_real_headers(tmp_path, check_kernel):
    """The compute kernel reads its pipe counts with get_arg_val like the data movement kernels
    (whose pipe code the named-pipe and pipe-peer tests check)."""
    from tilefold.codegen.cpp import emit_kernel

    inp = tile_tensor((64, COLS * 32))
    program = compiled(shift_down, inp, zeros((64, COLS * 32))).program
    kernel = next(k for k in program.kernels if k.name == "compute")
    text = emit_kernel(kernel.function)
    assert "get_arg_val" in text
    path = tmp_path / "compute.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute",
                                                            check_kernel.accessor_compile_args(program, kernel)))


@ttl.operation(grid=(2, 4))
def eltwise_pipe(a_in, b_in, c_in, out):
    """TT-Lang's eltwise pipe example: node 0 multicasts a float32 tile of ``c`` to the nodes
    (0, 0..3), linear nodes 0..3, which compute ``a * b + broadcast(c)`` on the tile column of their
    linear index; the nodes (1, y) return at once (``is_active``)."""
    granularity = 2
    row_tiles, col_tiles = a_in.shape[0] // 32, a_in.shape[1] // 32
    a_dfb = ttl.make_dataflow_buffer_like(a_in, shape=(granularity, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b_in, shape=(granularity, 1), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c_in, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(granularity, 1), block_count=2)
    pipe_net = ttl.PipeNet([ttl.Pipe((0, 0), (0, slice(0, 4)))])

    @ttl.compute()
    def compute():
        if not pipe_net.is_active():
            return
        c_block = c_dfb.wait()
        for _ in range(row_tiles // granularity):
            a_block, b_block, out_block = a_dfb.wait(), b_dfb.wait(), out_dfb.reserve()
            out_block.store(a_block * b_block + ttl.block.broadcast(c_block, dims=[0], shape=(granularity, 1)))
            out_block.push()
            a_block.pop()
            b_block.pop()
        c_block.pop()

    @ttl.datamovement()
    def dm0():
        if not pipe_net.is_active():
            return
        ct = ttl.node(dims=1)
        with c_dfb.reserve() as c_block:
            def pipe_src(pipe):
                ttl.copy(c_in[0:1, 0:1], c_block).wait()
                ttl.copy(c_block, pipe).wait()

            def pipe_dst(pipe):
                ttl.copy(pipe, c_block).wait()

            pipe_net.if_src(pipe_src)
            pipe_net.if_dst(pipe_dst)
        for rt in range(row_tiles // granularity):
            rows = slice(rt * granularity, (rt + 1) * granularity)
            with a_dfb.reserve() as a_block:
                ttl.copy(a_in[rows, ct:ct + 1], a_block).wait()
            with b_dfb.reserve() as b_block:
                ttl.copy(b_in[rows, ct:ct + 1], b_block).wait()

    @ttl.datamovement()
    def dm1():
        if not pipe_net.is_active():
            return
        ct = ttl.node(dims=1)
        for rt in range(row_tiles // granularity):
            with out_dfb.wait() as out_block:
                ttl.copy(out_block, out[rt * granularity:(rt + 1) * granularity, ct:ct + 1]).wait()


def test_a_float32_multicast_broadcast_on_the_active_nodes_only():
    rng = np.random.default_rng(7)
    a, b = rng.random((64, 128), dtype=np.float32), rng.random((64, 128), dtype=np.float32)
    c = rng.random((32, 32), dtype=np.float32)
    tensors = [ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT) for v in (a, b, c)]
    out = ttnn.from_numpy(np.zeros((64, 128), np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    eltwise_pipe(*tensors, out)
    expected = a * b + np.tile(c[0:1], (64, 4))
    np.testing.assert_allclose(ttnn.to_numpy(out), expected, rtol=4e-3, atol=4e-3)


@ttl.operation(grid=(2, 1))
def sum_on_the_source(a, out):
    """Only node 0 takes part (a loopback pipe): its compute sums three tiles in a loop-carried
    block after ``if not net.is_active(): return``; node 1 returns at once."""
    net = ttl.PipeNet([ttl.Pipe((0, 0), (0, 0))])
    dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        if not net.is_active():
            return
        acc = ttl.block.fill(0, shape=(1, 1))
        for _ in range(3):
            with dfb.wait() as x:
                acc = acc + x
        with out_dfb.reserve() as y:
            y.store(acc)

    @ttl.datamovement()
    def read():
        if not net.is_active():
            return
        for k in range(3):
            with dfb.reserve() as blk:
                ttl.copy(a[0, k], blk).wait()

    @ttl.datamovement()
    def write():
        if net.is_src():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()


def test_a_loop_carried_block_after_an_early_return():
    a = tile_tensor((32, 96), seed=8)
    out = zeros((32, 32))
    sum_on_the_source(a, out)
    v = ttnn.to_numpy(a).astype(np.float64)
    np.testing.assert_allclose(ttnn.to_numpy(out), v[:, :32] + v[:, 32:64] + v[:, 64:], rtol=2e-2, atol=5e-2)


@ttl.operation(grid=(3, 2))
def pipe_members_scale(a_in, c_in, out):
    """``pipe.has_current_core()`` in every kernel: the nodes (0, 0), (0, 1) and (1, 1) of a pipe
    from (0, 0) to the rectangle (0..1, 1) work, the others return at once. ``c_in`` (1x1) is
    expanded to a tile in the body (``ttnn.repeat`` then ``ttnn.squeeze``); the expanded tensor,
    which is not an argument, becomes an input of the operation. Member ``i`` (in linear node order)
    writes ``a[:, i] * c`` to column ``i`` of ``out``."""
    c_tile = ttnn.squeeze(ttnn.repeat(c_in, (1, 1, *ttl.TILE_SHAPE)))
    pipe = ttl.Pipe((0, 0), (slice(0, 2), 1))
    net = ttl.PipeNet([pipe])
    a_dfb = ttl.make_dataflow_buffer_like(a_in, shape=(1, 1), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c_tile, shape=(1, 1), block_count=1)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    def member():
        x, y = ttl.node(dims=2)
        return x + y

    @ttl.compute()
    def compute():
        if not pipe.has_current_core():
            return
        with c_dfb.wait() as c, a_dfb.wait() as a, out_dfb.reserve() as o:
            o.store(a * c)

    @ttl.datamovement()
    def reader():
        if not pipe.has_current_core():
            return
        with c_dfb.reserve() as c_block:
            def send(p):
                ttl.copy(c_tile[0:1, 0:1], c_block).wait()
                ttl.copy(c_block, p).wait()

            def receive(p):
                ttl.copy(p, c_block).wait()

            net.if_src(send)
            net.if_dst(receive)
        with a_dfb.reserve() as a:
            ttl.copy(a_in[0, member()], a).wait()

    @ttl.datamovement()
    def writer():
        if pipe.has_current_core():
            with out_dfb.wait() as o:
                ttl.copy(o, out[0, member()]).wait()


def test_pipe_has_current_core_and_a_tensor_made_in_the_body():
    rng = np.random.default_rng(11)
    a = rng.random((32, 96), dtype=np.float32)
    c = np.array([[1.5]], np.float32)
    out = ttnn.from_numpy(np.zeros((32, 96), np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    pipe_members_scale(ttnn.from_numpy(a, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT),
                       ttnn.from_numpy(c, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT), out)
    # members (0,0), (0,1), (1,1) have x + y = 0, 1, 2; nodes (1,0), (2,0), (2,1) take no part
    np.testing.assert_allclose(ttnn.to_numpy(out), a * 1.5, rtol=1e-6)


def test_pipe_has_current_core_outside_a_kernel_names_the_line():
    import pytest
    from tilefold.errors import KernelError

    with pytest.raises(KernelError, match="inside a kernel function") as info:
        ttl.Pipe((0, 0), (1, 0)).has_current_core()
    assert info.value.location.line > 0 and info.value.location.file.endswith("test_ttl_pipe_roles.py")


SCALE = ttnn.from_numpy(np.full((32, 32), 3.0, np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)


@ttl.operation(grid=(1, 1))
def scale_by_module_tensor(a_in, out):
    """A kernel reads a device tensor made at module level: it becomes an input too."""
    a_dfb = ttl.make_dataflow_buffer_like(a_in, shape=(1, 1), block_count=2)
    s_dfb = ttl.make_dataflow_buffer_like(SCALE, shape=(1, 1), block_count=1)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with a_dfb.wait() as a, s_dfb.wait() as s, out_dfb.reserve() as o:
            o.store(a * s)

    @ttl.datamovement()
    def reader():
        with a_dfb.reserve() as a, s_dfb.reserve() as s:
            ttl.copy(a_in[0, 0], a).wait()
            ttl.copy(SCALE[0, 0], s).wait()

    @ttl.datamovement()
    def writer():
        with out_dfb.wait() as o:
            ttl.copy(o, out[0, 0]).wait()


def test_a_module_level_device_tensor_read_by_a_kernel():
    a = np.random.default_rng(2).random((32, 32), dtype=np.float32)
    out = ttnn.from_numpy(np.zeros((32, 32), np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    scale_by_module_tensor(ttnn.from_numpy(a, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT), out)
    np.testing.assert_allclose(ttnn.to_numpy(out), a * 3.0, rtol=1e-6)


# -- roles checked by runtime asserts -------------------------------------------------------------

def role_check(wrong_node: int | None):
    """On a 2x2 grid with a unicast (0, 0) -> (1, 0), each node asserts its roles with ``is True`` /
    ``is False`` and ``in``; node ``wrong_node`` (if any) claims the source's roles and raises."""

    @ttl.operation(grid=(2, 2))
    def op(a, b):
        unicast = ttl.PipeNet([ttl.Pipe((0, 0), (1, 0))])

        @ttl.compute()
        def compute():
            node = ttl.node(dims=1)
            if node == wrong_node:
                raise AssertionError(f"node {node} is not where the pipe starts")
            if node == 0:
                assert unicast.is_src() is True and unicast.is_dst() is False
            elif node in (2,):
                assert unicast.is_dst() is True and unicast.is_active() is not False
            elif node in (1, 3):
                assert unicast.is_active() is False, f"node {node} is outside the pipe"
            else:
                raise ValueError(f"no node {node}")

        @ttl.datamovement()
        def dm():
            pass

    return op


def test_runtime_asserts_of_pipe_roles_hold_on_every_node():
    role_check(None)(tile_tensor((32, 32)), zeros((32, 32)))


def test_a_raise_in_a_kernel_fails_on_the_node_that_reaches_it():
    from tilefold.errors import KernelAssertError

    with pytest.raises(KernelAssertError, match=r"AssertionError: node 2 is not where the pipe starts"):
        role_check(2)(tile_tensor((32, 32)), zeros((32, 32)))
    role_check(3)(tile_tensor((32, 32)), zeros((32, 32)))     # node 3 is in no pipe: it runs no kernel


def test_a_pipe_range_with_a_step_is_a_value_error():
    with pytest.raises(ValueError, match="step must be 1 or None"):
        ttl.Pipe((0, 0), (slice(0, 4, 2), 0))
    ttl.Pipe((0, 0), (slice(0, 4, 1), 0))


def test_a_pipe_range_needs_explicit_increasing_bounds():
    """Open or empty node ranges are a ValueError at the user's line, as TT-Lang's own check."""
    for dst, wanted in (((slice(None, 4), 0), "explicit start and stop"),
                        ((slice(0, None), 0), "explicit start and stop"),
                        ((slice(4, 4), 0), "start must be < stop"),
                        ((0, slice(4, 0)), "start must be < stop")):
        with pytest.raises(ValueError, match=wanted) as raised:
            ttl.Pipe((0, 0), dst)
        assert f"{__file__}:" in str(raised.value)


def test_an_empty_pipe_net_is_a_value_error():
    with pytest.raises(ValueError, match="at least one pipe") as raised:
        ttl.PipeNet([])
    assert f"{__file__}:" in str(raised.value)


def test_copying_a_tensor_slice_into_the_pipe_of_if_src_names_the_pipe():
    def run():
        @ttl.operation(grid=(COLS, 2))
        def op(inp, out):
            recv_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

            @ttl.datamovement()
            def send_dm():
                nx, _ = ttl.node(dims=2)
                DOWN.if_src(lambda pipe: ttl.copy(inp[0, nx], pipe).wait())  # error

            @ttl.datamovement()
            def recv_dm():
                nx, _ = ttl.node(dims=2)

                def recv(pipe):
                    with recv_dfb.reserve() as blk:
                        ttl.copy(pipe, blk).wait()

                DOWN.if_dst(recv)
                if DOWN.is_dst():
                    with recv_dfb.wait() as blk:
                        ttl.copy(blk, out[1, nx]).wait()

        op(tile_tensor((64, COLS * 32)), zeros((64, COLS * 32)))

    err = expect_error(run, test_copying_a_tensor_slice_into_the_pipe_of_if_src_names_the_pipe, KernelError,
                       "not a tensor slice into the pipe given to net.if_src's body")
    assert "object at" not in str(err)


def test_a_send_into_a_nodes_pipe_to_itself_from_its_if_dst_body():
    """Each node's pipe goes to itself: its ``if_dst`` body posts the receive, then sends its own
    tile into the same pipe (TT-Lang allows it), and writes what it received."""
    @ttl.operation(grid=(2, 1))
    def loopback(inp, out):
        net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(0, 0)), ttl.Pipe(src=(1, 0), dst=(1, 0))])
        send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
        recv_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def dm():
            x, _ = ttl.node(dims=2)

            def receive_and_send(pipe):
                with recv_dfb.reserve() as r:
                    rx = ttl.copy(pipe, r)
                    with send_dfb.reserve() as s:
                        ttl.copy(inp[0, x], s).wait()
                    with send_dfb.wait() as s:
                        ttl.copy(s, pipe).wait()
                    rx.wait()
                with recv_dfb.wait() as blk:
                    ttl.copy(blk, out[0, x]).wait()

            net.if_dst(receive_and_send)

        @ttl.datamovement()
        def idle():
            pass

    inp, out = tile_tensor((32, 64), seed=3), zeros((32, 64))
    loopback(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(inp))
