"""TT-Lang's newer operation spellings: lists of dataflow buffers in a body without kernel functions
(``ttl.copy(t[...], buffers[0].reserve())``), node expressions with ``//`` / ``%`` in both bounds of
a slice, a pipe receive into a block reserved before ``net.if_dst``, a copy into a block sent
without a wait, ``kernel=`` selectors on kernels and on ``push`` / ``pop``, and the points where
buffers start over (``ttl.reset_dataflow_buffers()``, ``ttl.reset_dfbs``, ``ttl.reconfigure_dfbs``).
Simulated against numpy, the C++ checked against the real headers; misuse is one line at the
user's file:line."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError, LayoutError
from ttl_helpers import compiled, expect_error, tile_tensor, zeros


def _bf16(v):
    return np.asarray(v, dtype=np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def _check_all(program, tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    roles = {"read": "reader", "write": "writer", "compute": "compute"}
    for kernel in program.kernels:
        role = next((r for suffix, r in roles.items() if kernel.name.endswith(suffix)), None)
        if role is None:
            role = "compute" if "compute" in kernel.name else "reader"
        path = tmp_path / f"{kernel.name}.cpp"
        path.write_text(emit_kernel(kernel.function))
        args = check_kernel.accessor_compile_args(program, kernel) if role != "compute" else None
        check_kernel.require_accepted(check_kernel.check_kernel(path, role, args))


# -- a list of buffers, an acquisition inside a copy ----------------------------------------------

@ttl.operation()
def _double_stage(source: ttl.DFB, destination: ttl.DFB):
    block = source.wait()
    out = destination.reserve()
    out.store(block + block)


@ttl.operation(grid=(1, 1))
def through_buffer_list(x, y):
    buffers = [ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2),
               ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)]
    ttl.copy(x[0:1, 0:1], buffers[0].reserve()).wait()
    _double_stage(buffers[0], buffers[1])
    ttl.copy(buffers[1].wait(), y[0:1, 0:1]).wait()


def test_a_buffer_of_a_list_acquired_inside_a_copy_is_released_after_it():
    x, y = tile_tensor((32, 32), seed=1), zeros((32, 32))
    through_buffer_list(x, y)
    v = ttnn.to_numpy(x)
    np.testing.assert_array_equal(ttnn.to_numpy(y), _bf16(v + v))


# -- node expressions with // and % in slice bounds -----------------------------------------------

COLS = 2


@ttl.operation(grid=(2 * COLS, 1))
def banded_copy(x, y):
    """Node x reads tile column ``x % COLS`` of band ``x // COLS`` (a row of tiles) and writes it
    to column ``x`` of ``y``; both bounds of each slice use the same node expression."""
    dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    node_x, _ = ttl.node(dims=2)
    band = node_x // COLS
    col = node_x % COLS
    blk = dfb.reserve()
    ttl.copy(x[band:band + 1, col:col + 1], blk)
    ttl.copy(dfb.wait(), y[0:1, node_x:node_x + 1])


def test_slices_whose_bounds_share_a_modulo_of_the_node_have_a_compile_time_extent():
    x, y = tile_tensor((64, 64), seed=2), zeros((32, 128))
    banded_copy(x, y)
    v = ttnn.to_numpy(x)
    expected = np.concatenate([v[b * 32:(b + 1) * 32, c * 32:(c + 1) * 32] for b in range(2) for c in range(COLS)],
                              axis=1)
    np.testing.assert_array_equal(ttnn.to_numpy(y), expected)


@ttl.operation(grid=(2, 1))
def regrouped_copy(x, y):
    """Each node copies column groups of ``x`` to rows of ``y``; every slice recomputes its start
    in its stop (``(t % GROUPS) * 2:(t % GROUPS) * 2 + 2``), as hand-written kernels do."""
    dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 2), block_count=2)

    @ttl.datamovement()
    def read():
        node_x, _ = ttl.node(dims=2)
        for local in range(2):
            t = node_x * 2 + local
            with dfb.reserve() as blk:
                ttl.copy(x[t // GROUPS, (t % GROUPS) * 2:(t % GROUPS) * 2 + 2], blk).wait()

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def write():
        node_x, _ = ttl.node(dims=2)
        for local in range(2):
            t = node_x * 2 + local
            with dfb.wait() as blk:
                ttl.copy(blk, y[t:t + 1, (t // GROUPS) * (t % GROUPS):(t // GROUPS) * (t % GROUPS) + 2]).wait()


GROUPS = 2


def test_slice_bounds_that_recompute_a_modulo_or_product_have_a_compile_time_extent():
    x, y = tile_tensor((64, 128), seed=4), zeros((128, 128))
    regrouped_copy(x, y)
    v, got = ttnn.to_numpy(x), ttnn.to_numpy(y)
    for t in range(4):
        row, group = divmod(t, GROUPS)
        tiles = v[row * 32:(row + 1) * 32, group * 64:(group + 1) * 64]
        col = row * group * 32
        np.testing.assert_array_equal(got[t * 32:(t + 1) * 32, col:col + 64], tiles)


# -- a receive into a block reserved before net.if_dst; a read block sent without a wait ----------

@ttl.operation(grid=(2, 1))
def forward_and_add(a, out):
    own_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    send_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    recv_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    net = ttl.PipeNet([ttl.Pipe(src=(1, 0), dst=(0, 0))])
    node_x, _ = ttl.node(dims=2)
    sent = send_dfb.reserve()
    received = recv_dfb.reserve()

    def send(pipe):
        ttl.copy(a[1:2, 0:1], sent)
        ttl.copy(sent, pipe)

    net.if_src(send)

    def receive(pipe):
        ttl.copy(pipe, received)

    net.if_dst(receive)

    if node_x == 0:
        own = own_dfb.reserve()
        ttl.copy(a[0:1, 0:1], own)
        s = out_dfb.reserve()
        s.store(own_dfb.wait() + recv_dfb.wait())
        ttl.copy(out_dfb.wait(), out[0:1, 0:1])


def test_a_receive_into_a_block_reserved_before_the_pipe_body_is_waited_at_its_end():
    a, out = tile_tensor((64, 32), seed=3), zeros((32, 32))
    with pytest.warns(UserWarning, match="pushed and never popped"):     # node 1's reserve of recv_dfb
        forward_and_add(a, out)
    v = ttnn.to_numpy(a)
    np.testing.assert_array_equal(ttnn.to_numpy(out), _bf16(v[:32] + v[32:]))


def test_the_forwarding_kernels_compile_against_the_real_headers(tmp_path, check_kernel):
    program = compiled(forward_and_add, tile_tensor((64, 32)), zeros((32, 32))).program
    _check_all(program, tmp_path, check_kernel)


# -- kernel= selectors ----------------------------------------------------------------------------

compute_kernel = ttl.Kernel(ttl.KernelKind.COMPUTE)
reader_kernel = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)


@ttl.operation(grid=(2, 1))
def selected_add(inp, out):
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

    @ttl.compute(kernel=compute_kernel)
    def compute():
        x, _ = ttl.node(dims=2)
        b = in_dfb.wait()
        o = out_dfb.reserve()
        if x == 0:
            o.store(b + b)
        else:
            o.store(b)
        b.pop(kernel=compute_kernel)
        o.push(kernel=compute_kernel)

    @ttl.datamovement(kernel=reader_kernel)
    def read():
        b = in_dfb.reserve()
        ttl.copy(inp[0, 0], b).wait()
        b.push(kernel=reader_kernel)

    @ttl.datamovement()
    def write():
        x, _ = ttl.node(dims=2)
        b = out_dfb.wait()
        ttl.copy(b, out[0, x]).wait()
        b.pop(kernel=ttl.KernelKind.DATA_MOVEMENT)


def test_kernel_selectors_on_kernels_and_on_push_and_pop():
    inp, out = tile_tensor((32, 32), seed=4), zeros((32, 64))
    selected_add(inp, out)
    v = ttnn.to_numpy(inp)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.concatenate([_bf16(v + v), v], axis=1))


def test_a_selector_of_the_other_kind_is_a_value_error_at_the_users_line():
    def run():
        @ttl.compute(kernel=ttl.KernelKind.DATA_MOVEMENT)  # error
        def compute():
            pass

    error = expect_error(run, test_a_selector_of_the_other_kind_is_a_value_error_at_the_users_line, ValueError,
                         "data movement kernel", "ttl.KernelKind.COMPUTE")
    assert isinstance(error, KernelError)


def test_a_selector_of_another_type_is_a_type_error_at_the_users_line():
    def run():
        @ttl.datamovement(kernel=(ttl.KernelKind.DATA_MOVEMENT,))  # error
        def read():
            pass

    expect_error(run, test_a_selector_of_another_type_is_a_type_error_at_the_users_line, TypeError, "not tuple")


def test_one_named_kernel_selected_twice_names_the_second_function():
    shared = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)

    def run():
        @ttl.operation(grid=(1, 1))
        def op(x):
            @ttl.datamovement(kernel=shared)
            def first():
                pass

            @ttl.datamovement(kernel=shared)
            def second():  # error
                pass

        op(zeros((32, 32)))

    expect_error(run, test_one_named_kernel_selected_twice_names_the_second_function, KernelError,
                 "'second'", "'first'")


def test_a_push_naming_another_kernel_names_the_users_line():
    def run():
        @ttl.operation(grid=(1, 1))
        def op(x, y):
            dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=1)

            @ttl.datamovement(kernel=reader_kernel)
            def read():
                b = dfb.reserve()
                ttl.copy(x[0, 0], b).wait()
                b.push(kernel=ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT))  # error

            @ttl.datamovement()
            def write():
                b = dfb.wait()
                ttl.copy(b, y[0, 0]).wait()
                b.pop()

        op(zeros((32, 32)), zeros((32, 32)))

    expect_error(run, test_a_push_naming_another_kernel_names_the_users_line, KernelError, "does not select")


# -- buffers that start over ----------------------------------------------------------------------

TILES = 3


@ttl.operation(grid=(1, 1))
def two_epochs(bf16_in, f32_out, f32_in, bf16_out):
    first_in = ttl.make_dataflow_buffer_like(bf16_in, shape=(1, 1), block_count=2)
    first_out = ttl.make_dataflow_buffer_like(f32_out, shape=(1, 1), block_count=2)
    second_in = ttl.make_dataflow_buffer_like(f32_in, shape=(1, 1), block_count=2)
    second_out = ttl.make_dataflow_buffer_like(bf16_out, shape=(1, 1), block_count=2)
    for i in range(TILES):
        r = first_in.reserve()
        ttl.copy(bf16_in[i:i + 1, 0:1], r).wait()
        w = first_out.reserve()
        w.store(ttl.math.typecast(first_in.wait(), ttnn.float32))
        ttl.copy(first_out.wait(), f32_out[i:i + 1, 0:1]).wait()
    ttl.reset_dataflow_buffers()
    for i in range(TILES):
        r = second_in.reserve()
        ttl.copy(f32_in[i:i + 1, 0:1], r).wait()
        w = second_out.reserve()
        w.store(ttl.math.typecast(second_in.wait(), ttnn.bfloat16))
        ttl.copy(second_out.wait(), bf16_out[i:i + 1, 0:1]).wait()


def _epoch_tensors():
    shape = (TILES * 32, 32)
    return (tile_tensor(shape, seed=5), zeros(shape, "float32"), tile_tensor(shape, seed=6, dtype="float32"),
            zeros(shape))


def test_a_reset_between_two_epochs_of_a_body_without_kernel_functions():
    bf16_in, f32_out, f32_in, bf16_out = _epoch_tensors()
    two_epochs(bf16_in, f32_out, f32_in, bf16_out)
    np.testing.assert_array_equal(ttnn.to_numpy(f32_out), ttnn.to_numpy(bf16_in))
    np.testing.assert_array_equal(ttnn.to_numpy(bf16_out), _bf16(ttnn.to_numpy(f32_in)))


def test_the_reset_kernels_compile_against_the_real_headers(tmp_path, check_kernel):
    program = compiled(two_epochs, *_epoch_tensors()).program
    _check_all(program, tmp_path, check_kernel)


def _boundary_op(compute_kernel, reader_kernel, writer_kernel, point, reconfigure: bool):
    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.compute(kernel=compute_kernel)
        def compute():
            for _ in range(2):
                if reconfigure:
                    ttl.reconfigure_dfbs(point)
                else:
                    ttl.reset_dfbs(point, dfbs=[dfb])

        @ttl.datamovement(kernel=reader_kernel)
        def read():
            for i in range(2):
                with dfb.reserve() as blk:
                    ttl.copy(inp[0, i], blk).wait()
                if reconfigure:
                    ttl.reconfigure_dfbs(point)
                else:
                    ttl.reset_dfbs(point, dfbs=[dfb])

        @ttl.datamovement(kernel=writer_kernel)
        def write():
            for i in range(2):
                with dfb.wait() as blk:
                    ttl.copy(blk, out[0, i]).wait()
                if reconfigure:
                    ttl.reconfigure_dfbs(point)
                else:
                    ttl.reset_dfbs(point, dfbs=[dfb])

    return op


@pytest.mark.parametrize("reconfigure", [False, True])
def test_reset_and_reconfiguration_points_in_kernel_functions(reconfigure):
    kernels = (ttl.Kernel(ttl.KernelKind.COMPUTE), ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT),
               ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT))
    point = ttl.DFBReconfiguration(participants=kernels, discard_dfb_state=True) if reconfigure else \
        ttl.DFBReset(participants=kernels)
    inp, out = tile_tensor((32, 64), seed=7), zeros((32, 64))
    _boundary_op(*kernels, point, reconfigure)(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(inp))


def test_kernel_kinds_and_the_pipe_source_kernel_as_participants():
    """TT-Lang's canonical participants (``ttl.KernelKind`` values and ``ttl.PIPE_SOURCE_KERNEL``), in
    kernel functions and in a body whose one statement is the point (every kernel runs it)."""
    point = ttl.DFBReconfiguration(participants=(ttl.KernelKind.COMPUTE, ttl.KernelKind.DATA_MOVEMENT,
                                                 ttl.PIPE_SOURCE_KERNEL))
    kernels = (ttl.Kernel(ttl.KernelKind.COMPUTE), ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT),
               ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT))
    inp, out = tile_tensor((32, 64), seed=9), zeros((32, 64))
    _boundary_op(*kernels, point, True)(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(inp))

    @ttl.operation(grid=(1, 1))
    def only_the_point(x):
        ttl.reconfigure_dfbs(point)

    only_the_point(inp)


def test_discard_dfb_state_must_be_a_bool():
    def run():
        ttl.DFBReconfiguration(participants=(ttl.Kernel(ttl.KernelKind.COMPUTE),), discard_dfb_state=1)  # error

    expect_error(run, test_discard_dfb_state_must_be_a_bool, TypeError, "discard_dfb_state must be a bool")


def test_a_block_held_across_a_reset_names_the_users_line():
    def run():
        @ttl.operation(grid=(1, 1))
        def op(x, y):
            dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
            blk = dfb.reserve()
            ttl.copy(x[0:1, 0:1], blk).wait()
            ttl.reset_dataflow_buffers()  # error
            ttl.copy(dfb.wait(), y[0:1, 0:1]).wait()
            ttl.copy(x[0:1, 0:1], blk).wait()

        op(zeros((32, 32)), zeros((32, 32)))

    expect_error(run, test_a_block_held_across_a_reset_names_the_users_line, KernelError,
                 "blk", "still held here")


def test_a_reset_called_by_python_names_the_users_line():
    def run():
        ttl.reset_dataflow_buffers()  # error

    expect_error(run, test_a_reset_called_by_python_names_the_users_line, KernelError, "kernel function")


def test_the_public_dataflow_buffer_constructor():
    """``ttl.DataflowBuffer(tensor=..., shape=..., block_count=...)`` as TT-Lang writes it; a dtype
    other than the tensor's is one error at the line."""
    @ttl.operation(grid=(1, 1))
    def copy_through(x, y):
        dfb = ttl.DataflowBuffer(tensor=x, shape=(1, 1), block_count=2, dtype=ttnn.bfloat16)

        @ttl.datamovement()
        def read():
            with dfb.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()

        @ttl.datamovement()
        def write():
            with dfb.wait() as blk:
                ttl.copy(blk, y[0, 0]).wait()

        @ttl.compute()
        def idle():
            pass

    x, y = tile_tensor((32, 32), seed=11), zeros((32, 32))
    copy_through(x, y)
    np.testing.assert_array_equal(ttnn.to_numpy(y), ttnn.to_numpy(x))

    def run():
        ttl.DataflowBuffer(tensor=x, shape=(1, 1), block_count=2, dtype=ttnn.float32)  # error

    expect_error(run, test_the_public_dataflow_buffer_constructor, ValueError,
                 "DataflowBuffer dtype float32 conflicts with backing tensor dtype bfloat16")


def test_reset_all_dfbs_restores_every_buffer_but_those_preserved():
    kernels = (ttl.Kernel(ttl.KernelKind.COMPUTE), ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT),
               ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT))
    reset = ttl.DFBReset(participants=kernels)
    compute_kernel, reader_kernel, writer_kernel = kernels

    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        kept = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.compute(kernel=compute_kernel)
        def compute():
            for _ in range(2):
                ttl.reset_all_dfbs(reset, preserve=[kept])

        @ttl.datamovement(kernel=reader_kernel)
        def read():
            for i in range(2):
                with dfb.reserve() as blk:
                    ttl.copy(inp[0, i], blk).wait()
                ttl.reset_all_dfbs(reset)

        @ttl.datamovement(kernel=writer_kernel)
        def write():
            for i in range(2):
                with dfb.wait() as blk:
                    ttl.copy(blk, out[0, i]).wait()
                ttl.reset_all_dfbs(reset)

    inp, out = tile_tensor((32, 64), seed=11), zeros((32, 64))
    with pytest.warns(UserWarning, match="dfb kept is declared but no kernel uses it"):
        op(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(inp))


@pytest.mark.parametrize("participants, fragment", [
    ([ttl.KernelKind.COMPUTE], "takes a nonempty tuple"),
    ((17,), "takes a nonempty tuple"),
    ((ttl.KernelKind.COMPUTE, ttl.KernelKind.COMPUTE), "must be distinct"),
    ((ttl.Kernel(ttl.KernelKind.COMPUTE),), "one compute and two data movement kernels"),
])
def test_reset_participants_that_cannot_meet_are_an_error(participants, fragment):
    with pytest.raises(KernelError, match=fragment):
        ttl.DFBReset(participants=participants)


@pytest.mark.filterwarnings("ignore:dfb .* is declared but no kernel uses it")
@pytest.mark.parametrize("statement, fragment", [
    ("ttl.reset_dfbs(reset, dfbs=[])", "dfbs must be a nonempty list"),
    ("ttl.reset_dfbs(reset, dfbs=[target, target])", "dfbs must name distinct buffers"),
    ("ttl.reset_all_dfbs(reset, dfbs=[target])", "takes only the preserve keyword"),
    ("ttl.reset_all_dfbs(reset, preserve=(target,))", "preserve must be a list of dataflow buffers"),
    ("ttl.reset_all_dfbs(reset, preserve=[target, target])", "preserve must name distinct buffers"),
    ("ttl.reset_dfbs(reset, dfbs=[made_elsewhere[0]])", "is not a dataflow buffer of this operation"),
])
def test_reset_statements_naming_buffers_wrongly_are_an_error_at_their_line(statement, fragment, tmp_path,
                                                                               monkeypatch):
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")
    script = tmp_path / "resets.py"
    script.write_text(
        "import numpy as np\nimport tilefold.ttl as ttl\nimport tilefold.ttnn as ttnn\n"
        "kernels = (ttl.Kernel(ttl.KernelKind.COMPUTE), ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT),\n"
        "           ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT))\n"
        "reset = ttl.DFBReset(participants=kernels)\n"
        "made_elsewhere = []\n"
        "@ttl.operation(grid=(1, 1))\n"
        "def other(inp):\n"
        "    made_elsewhere.append(ttl.make_dfb('bf16', shape=(1, 1), block_count=2))\n"
        "    ttl.reset_dfbs(reset, dfbs=made_elsewhere)\n"
        "t = ttnn.from_numpy(np.zeros((32, 32), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)\n"
        "@ttl.operation(grid=(1, 1))\n"
        "def op(inp):\n"
        "    target = ttl.make_dfb('bf16', shape=(1, 1), block_count=2)\n"
        f"    {statement}\n"
        "other(t)\n"
        "op(t)\n")
    import runpy

    with pytest.raises(KernelError) as info:
        runpy.run_path(str(script))
    assert str(info.value).startswith(f"{script}:16: ") and fragment in str(info.value), str(info.value)


@ttl.operation(grid=(1, 1), fp32_dest_acc_en=True)
def matmul_into_float32(a, b, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=1)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(2, 1), block_count=1)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, b_dfb.wait() as y, o_dfb.reserve() as o:
            o.store(ttl.math.matmul(x, y, dtype=ttnn.float32))

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as x, b_dfb.reserve() as y:
            ttl.copy(a[0:1, 0:2], x).wait()
            ttl.copy(b[0:2, 0:1], y).wait()

    @ttl.datamovement()
    def write():
        with o_dfb.wait() as o:
            ttl.copy(o, out[0:1, 0:1]).wait()


def test_matmul_takes_the_products_dtype():
    """``ttl.math.matmul(a, b, dtype=ttnn.float32)`` (TT-Lang's reduce-scatter matmul): a float32
    product of bfloat16 blocks, summed in a 32-bit DST and stored without rounding to bfloat16."""
    a, b = tile_tensor((32, 64), seed=1), tile_tensor((64, 32), seed=2)
    out = zeros((32, 32), dtype="float32")
    matmul_into_float32(a, b, out)
    exact = ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(b).astype(np.float64)
    np.testing.assert_allclose(ttnn.to_numpy(out), exact, rtol=1e-5, atol=1e-4)


def test_fabric_and_program_cache_names_of_host_scripts():
    """What TT-Lang's multi-device tests call around their operations: every 0.69 ``FabricConfig``,
    ``FabricReliabilityMode``, and a device's program cache (tilefold keeps every compiled call:
    repeating a call adds no entry)."""
    assert [c.name for c in ttnn.FabricConfig][-4:] == ["FABRIC_2D_TORUS_X", "FABRIC_2D_TORUS_Y",
                                                         "FABRIC_2D_TORUS_XY", "CUSTOM"]
    ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D_NEIGHBOR_EXCHANGE, ttnn.FabricReliabilityMode.RELAXED_INIT)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
    mesh.enable_program_cache()
    a, b = tile_tensor((32, 64), seed=1), tile_tensor((64, 32), seed=2)
    counts = []
    for _ in range(3):
        matmul_into_float32(a, b, zeros((32, 32), dtype="float32"))
        counts.append(mesh.num_program_cache_entries())
    assert counts[0] >= 1 and len(set(counts)) == 1
    mesh.disable_and_clear_program_cache()
    assert mesh.num_program_cache_entries() == 0


def test_fabric_router_config_sets_the_packet_payload():
    """``ttnn.FabricRouterConfig`` given to ``set_fabric_config`` (positionally, after the tensix,
    UDM and manager modes, as TT-NN tests pass them) sets what
    ``get_tt_fabric_max_payload_size_bytes`` answers; without one it is TT-Metal's default."""
    ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_2D)
    assert ttnn.get_tt_fabric_max_payload_size_bytes() == 4 * 1088
    config = ttnn.FabricRouterConfig()
    config.max_packet_payload_size_bytes = 2 * 2048
    ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_2D, ttnn.FabricReliabilityMode.STRICT_INIT, None,
                           ttnn.FabricTensixConfig.DISABLED, ttnn.FabricUDMMode.DISABLED,
                           ttnn.FabricManagerMode.DEFAULT, config)
    assert ttnn.get_tt_fabric_max_payload_size_bytes() == 4096
    assert ttnn.get_fabric_config() is ttnn.FabricConfig.FABRIC_2D
    config.max_packet_payload_size_bytes = 1000
    with pytest.raises(LayoutError, match="a multiple of 16"):
        ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_2D, router_config=config)
    ttnn.set_fabric_config(ttnn.FabricConfig.DISABLED)
    assert ttnn.get_tt_fabric_max_payload_size_bytes() == 4 * 1088


def test_tt_langs_file_writing_environment_variables_are_named_as_ignored(monkeypatch):
    import importlib

    operation = importlib.import_module("tilefold.frontend.ttl.operation")
    monkeypatch.setenv("TTLANG_EMIT_RUNNER", "/tmp/runner.py")
    monkeypatch.setattr(operation, "_WARNED_ENVIRONMENT", set())
    a, b = tile_tensor((32, 64), seed=1), tile_tensor((64, 32), seed=2)
    with pytest.warns(UserWarning, match="TTLANG_EMIT_RUNNER is set, but tilefold writes no standalone runner"):
        matmul_into_float32(a, b, zeros((32, 32), dtype="float32"))


def _tile_pairs(rows, cols):
    """A generator of (row, column) tile coordinates, as programs write their block schedules."""
    for r in range(rows):
        for c in range(cols):
            yield r, c


@ttl.operation(grid=(1, 1))
def negate_over_a_generator(x, y):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        for r, c in _tile_pairs(2, 3):
            with x_dfb.reserve() as blk:
                ttl.copy(x[r, c], blk).wait()

    @ttl.compute()
    def compute():
        for _ in _tile_pairs(2, 3):
            with x_dfb.wait() as xv, y_dfb.reserve() as yv:
                yv.store(-xv)

    @ttl.datamovement()
    def write():
        for r, c in _tile_pairs(2, 3):
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[r, c]).wait()


def test_a_kernel_loop_over_a_generator_unrolls_its_items():
    """``for r, c in blocks()`` over a Python generator: its items are taken when the kernel is
    built and unrolled, as a loop over a list is (each build calls the generator afresh)."""
    x, y = tile_tensor((64, 96), seed=12), zeros((64, 96))
    negate_over_a_generator(x, y)
    np.testing.assert_array_equal(y.host_values, -x.host_values)
    y2 = zeros((64, 96))
    negate_over_a_generator(x, y2)
    np.testing.assert_array_equal(y2.host_values, -x.host_values)


# -- the specification's keyword names and positions ---------------------------------------------

@ttl.operation(grid=(1, 1))
def spec_spellings(x, y):
    """``ttl.make_dfb(dtype, shape, block_count, tile)`` with its tile fourth; ``rsub(a, b=...)``;
    ``elu(x, slope=...)``; ``ttl.block.fill(..., layout=ttnn.TILE_LAYOUT, dtype=...)``."""
    x_dfb = ttl.make_dfb(ttnn.float32, (1, 1), 2, (32, 32))
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        with x_dfb.reserve() as blk:
            ttl.copy(x[0, 0], blk).wait()

    @ttl.compute()
    def compute():
        with x_dfb.wait() as a, y_dfb.reserve() as out:
            ones = ttl.block.fill(1.0, shape=(1, 1), layout=ttnn.TILE_LAYOUT, dtype=ttnn.float32)
            out.store(ttl.math.rsub(a, b=5) + ttl.math.elu(a * 4.0 + ones, slope=2.0))

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as blk:
            ttl.copy(blk, y[0, 0]).wait()


def test_the_specifications_keywords_and_positions():
    v = np.linspace(0.5, 2.0, 1024, dtype=np.float32).reshape(32, 32)      # elu of positive values: exact
    x, y = (ttnn.from_numpy(a, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT) for a in (v, np.zeros_like(v)))
    spec_spellings(x, y)
    np.testing.assert_allclose(ttnn.to_numpy(y), (5 - v) + (v * 4 + 1), rtol=1e-3)
