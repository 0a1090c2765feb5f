"""Operations called from an operation's body (dataflow buffer parameters, ``ttl.DFB``): each call
is inlined with the caller's buffers, a callee's scratch buffers are made once per call, calls
nest; run on the simulated device against numpy, kernels checked by check-kernel, and misuse is
one error at the user's line."""

from __future__ import annotations

import numpy as np
from checkkernel import accessor_compile_args, check_kernels, require_accepted

import tilefold.ttl as ttl
from tilefold.codegen.cpp import emit_kernel
from tilefold.errors import KernelError
from ttl_helpers import compiled, expect_error, tile_tensor, zeros

ROWS = 3


def _bf16(values):
    import ml_dtypes

    return np.asarray(values, dtype=np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


@ttl.operation()
def exp_via_scratch(src: ttl.DFB, dst: ttl.DFB):
    """dst = exp(src), through a scratch buffer of its own."""
    scratch = ttl.make_dfb("bf16", shape=(1, 2), block_count=2)
    s = scratch.reserve()
    s.store(ttl.exp(src.wait()))
    d = dst.reserve()
    d.store(scratch.wait())


@ttl.operation()
def add_constant(src: ttl.DFB, dst: ttl.DFB, value=1.0):
    """dst = src + value (a Python number, given by keyword or left at its default)."""
    s = src.wait()
    d = dst.reserve()
    d.store(s + ttl.block.fill(value, shape=s.shape, dtype=s.dtype))


@ttl.operation(grid=(1, 1))
def exp_plus_one(x, y):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 2), block_count=2)
    e_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 2), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 2), block_count=2)
    for r in range(ROWS):
        ttl.copy(x[r, 0:2], x_dfb.reserve()).wait()
        exp_via_scratch(x_dfb, e_dfb)
        add_constant(e_dfb, y_dfb)
        ttl.copy(y_dfb.wait(), y[r, 0:2]).wait()


def test_an_operation_inlined_in_a_loop_computes_exp_then_plus_one():
    x, y = tile_tensor((32 * ROWS, 64), seed=1, scale=0.5), zeros((32 * ROWS, 64))
    exp_plus_one(x, y)
    expected = _bf16(_bf16(np.exp(x.host_values)) + 1.0)
    np.testing.assert_allclose(y.host_values, expected, rtol=2e-2, atol=2e-2)


def test_the_kernels_of_a_body_with_calls_pass_check_kernel(tmp_path):
    program = compiled(exp_plus_one, tile_tensor((32 * ROWS, 64)), zeros((32 * ROWS, 64))).program
    assert len(program.kernels) == 3
    jobs = []
    for k in program.kernels:
        path = tmp_path / f"{k.name}.cpp"
        path.write_text(emit_kernel(k.function))
        role = "compute" if k.is_compute else ("reader" if k.processor == "RISCV_0" else "writer")
        jobs.append((path, role, accessor_compile_args(program, k)))
    for check in check_kernels(jobs):
        require_accepted(check)


@ttl.atom()
def copy_stage(src: ttl.DFB, dst: ttl.DFB):
    d = dst.reserve()
    d.store(src.wait())


@ttl.operation()
def add_twice(src: ttl.DFB, dst: ttl.DFB):
    """Two levels: calls add_constant twice through a scratch buffer."""
    mid = ttl.make_dfb("bf16", shape=(1, 1), block_count=2)
    add_constant(src, mid, value=2.0)
    add_constant(mid, dst)


@ttl.operation(grid=(1, 1))
def nested_calls(x, y):
    a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    b = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
    c = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
    for r in range(ROWS):
        ttl.copy(x[r, 0], a.reserve()).wait()
        add_twice(a, b)
        add_constant(b, b, value=0.5)       # the same buffer as source and result
        copy_stage(b, c)
        ttl.copy(c.wait(), y[r, 0]).wait()


def test_calls_nest_two_levels_and_may_take_one_buffer_twice():
    x, y = tile_tensor((32 * ROWS, 32), seed=2, scale=4.0), zeros((32 * ROWS, 32))
    nested_calls(x, y)
    expected = _bf16(_bf16(_bf16(x.host_values + 2.0) + 1.0) + 0.5)
    np.testing.assert_array_equal(y.host_values, expected)


def test_dfb_and_atom_are_the_buffer_type_and_the_operation_decorator():
    assert ttl.DFB is ttl.DataflowBuffer
    assert isinstance(copy_stage, ttl.Operation)


def test_a_call_with_a_missing_argument_is_an_error_at_its_line():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        ttl.copy(x[0, 0], a.reserve()).wait()
        copy_stage(a)  # error
        ttl.copy(a.wait(), y[0, 0]).wait()

    expect_error(lambda: op(tile_tensor((32, 32)), zeros((32, 32))),
                 test_a_call_with_a_missing_argument_is_an_error_at_its_line, KernelError,
                 "copy_stage():", "'dst'")


def test_a_tensor_for_a_dfb_parameter_is_an_error_at_the_call():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        copy_stage(x, a)  # error
        ttl.copy(a.wait(), y[0, 0]).wait()

    expect_error(lambda: op(tile_tensor((32, 32)), zeros((32, 32))),
                 test_a_tensor_for_a_dfb_parameter_is_an_error_at_the_call, KernelError,
                 "parameter 'src' is a dataflow buffer", "'x'")


def test_calling_a_dfb_operation_with_tensors_from_the_host_is_an_error():
    def run():
        add_constant(tile_tensor((32, 32)), zeros((32, 32)))  # error

    expect_error(run, test_calling_a_dfb_operation_with_tensors_from_the_host_is_an_error, KernelError,
                 "add_constant(): parameter 'src' is a dataflow buffer", "another operation's body")


def test_calling_a_dfb_operation_with_none_from_the_host_is_the_same_error():
    def run():
        add_constant(None, zeros((32, 32)))  # error

    expect_error(run, test_calling_a_dfb_operation_with_none_from_the_host_is_the_same_error, KernelError,
                 "add_constant(): parameter 'src' is a dataflow buffer (ttl.DFB), not None", "another operation's body")


def test_using_the_result_of_an_operation_call_is_an_error():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        ttl.copy(x[0, 0], a.reserve()).wait()
        z = copy_stage(a, a)  # error
        ttl.copy(a.wait(), y[0, 0]).wait()

    expect_error(lambda: op(tile_tensor((32, 32)), zeros((32, 32))),
                 test_using_the_result_of_an_operation_call_is_an_error, KernelError,
                 "copy_stage(...) is an operation", "statement")


def test_a_call_in_a_body_with_kernel_functions_is_an_error():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        copy_stage(a, a)  # error

        @ttl.compute()
        def compute():
            pass

    expect_error(lambda: op(tile_tensor((32, 32)), zeros((32, 32))),
                 test_a_call_in_a_body_with_kernel_functions_is_an_error, KernelError,
                 "inlined only into a body without kernel functions")


def test_an_operation_calling_itself_is_an_error():
    @ttl.operation()
    def again(src: ttl.DFB, dst: ttl.DFB):
        again(src, dst)  # error

    @ttl.operation(grid=(1, 1))
    def op(x, y):
        a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        again(a, a)

    expect_error(lambda: op(tile_tensor((32, 32)), zeros((32, 32))),
                 test_an_operation_calling_itself_is_an_error, KernelError, "calls itself")


@ttl.operation(grid=(1, 1))
def doubled_row(src, dst, row):
    """An ordinary operation (tensor parameters, a constant): run alone, or inlined into a body."""
    s_dfb = ttl.make_dataflow_buffer_like(src, shape=(1, 1), block_count=2)
    d_dfb = ttl.make_dataflow_buffer_like(dst, shape=(1, 1), block_count=2)
    ttl.copy(src[row, 0], s_dfb.reserve()).wait()
    s = s_dfb.wait()
    d = d_dfb.reserve()
    d.store(s + s)
    ttl.copy(d_dfb.wait(), dst[row, 0]).wait()


@ttl.operation(grid=(1, 1))
def doubled_rows(x, y):
    for r in range(ROWS):
        doubled_row(x, y, r)


def test_an_operation_of_tensors_runs_alone_and_inlined():
    x, alone, inlined = tile_tensor((32 * ROWS, 32), seed=3), zeros((32 * ROWS, 32)), zeros((32 * ROWS, 32))
    doubled_row(x, alone, 1)
    expected = _bf16(x.host_values * 2)
    np.testing.assert_array_equal(alone.host_values[32:64], expected[32:64])
    doubled_rows(x, inlined)
    np.testing.assert_array_equal(inlined.host_values, expected)


def test_a_call_inside_a_kernel_function_is_an_error_at_its_line():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        b = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            copy_stage(a, b)  # error

        @ttl.datamovement()
        def move():
            ttl.copy(x[0, 0], a.reserve()).wait()
            ttl.copy(b.wait(), y[0, 0]).wait()

    expect_error(lambda: op(tile_tensor((32, 32)), zeros((32, 32))),
                 test_a_call_inside_a_kernel_function_is_an_error_at_its_line, KernelError,
                 "copy_stage() is an operation", "not from a kernel function")


@ttl.operation()
def copy_through(src: ttl.DFB, dst: ttl.DFB, tiles):
    scratch = ttl.make_dfb("bf16", shape=(1, tiles), block_count=2)
    copy_stage(src, scratch)
    copy_stage(scratch, dst)


def test_a_scratch_buffer_shaped_by_a_loop_variable_is_an_error_at_the_call():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        b = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
        for r in range(2):
            copy_through(a, b, r + 1)  # error

    expect_error(lambda: op(tile_tensor((32, 32)), zeros((32, 32))),
                 test_a_scratch_buffer_shaped_by_a_loop_variable_is_an_error_at_the_call, KernelError,
                 "depends on 'r'")


def _offset_operation():
    """An operation reading ``offset`` from its closure, and a setter rebinding it."""
    offset = 1.0

    @ttl.operation()
    def add_offset(src: ttl.DFB, dst: ttl.DFB):
        s = src.wait()
        d = dst.reserve()
        d.store(s + ttl.block.fill(offset, shape=s.shape, dtype=s.dtype))

    def set_offset(value):
        nonlocal offset
        offset = value

    return add_offset, set_offset


add_offset, set_offset = _offset_operation()


@ttl.operation(grid=(1, 1))
def plus_offset(x, y):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
    ttl.copy(x[0, 0], x_dfb.reserve()).wait()
    add_offset(x_dfb, y_dfb)
    ttl.copy(y_dfb.wait(), y[0, 0]).wait()


def test_a_name_a_callee_reads_is_read_again_at_each_call():
    x = tile_tensor((32, 32), seed=4)
    try:
        for offset in (1.0, 3.0):
            set_offset(offset)
            y = zeros((32, 32))
            plus_offset(x, y)
            np.testing.assert_allclose(y.host_values, _bf16(x.host_values + offset), rtol=1e-2, atol=1e-2)
    finally:
        set_offset(1.0)


@ttl.operation()
def stage_then_return(src: ttl.DFB, dst: ttl.DFB):
    d = dst.reserve()
    d.store(src.wait())
    return


@ttl.operation(grid=(1, 1))
def staged_rows(x, y):
    a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    b = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
    for r in range(2):
        ttl.copy(x[r, 0], a.reserve()).wait()
        stage_then_return(a, b)
        ttl.copy(b.wait(), y[r, 0]).wait()


def test_a_callee_ending_with_a_bare_return_is_inlined_without_it():
    x, y = tile_tensor((64, 32), seed=5), zeros((64, 32))
    staged_rows(x, y)
    np.testing.assert_array_equal(y.host_values, x.host_values)


def test_a_return_before_the_end_of_a_callee_is_an_error_at_its_line():
    @ttl.operation()
    def early(src: ttl.DFB, dst: ttl.DFB, skip=True):
        if skip:
            return  # error
        d = dst.reserve()
        d.store(src.wait())

    @ttl.operation(grid=(1, 1))
    def op(x, y):
        a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        ttl.copy(x[0, 0], a.reserve()).wait()
        early(a, a)
        ttl.copy(a.wait(), y[0, 0]).wait()

    expect_error(lambda: op(tile_tensor((32, 32)), zeros((32, 32))),
                 test_a_return_before_the_end_of_a_callee_is_an_error_at_its_line, KernelError,
                 "early() returns here", "inlined")


@ttl.operation()
def stage_through_width(src: ttl.DFB, dst: ttl.DFB, width=1):
    width = width * 1           # a parameter the body assigns, read by its scratch buffer's shape
    scratch = ttl.make_dfb("bf16", shape=(1, width), block_count=2)
    s = scratch.reserve()
    s.store(src.wait())
    d = dst.reserve()
    d.store(scratch.wait())


@ttl.operation(grid=(1, 1))
def staged_through_width(x, y):
    a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    b = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
    for r in range(2):
        ttl.copy(x[r, 0], a.reserve()).wait()
        stage_through_width(a, b)
        ttl.copy(b.wait(), y[r, 0]).wait()


def test_a_scratch_buffer_shaped_by_a_name_the_callee_sets_is_made_after_it():
    x, y = tile_tensor((64, 32), seed=6), zeros((64, 32))
    staged_through_width(x, y)
    np.testing.assert_array_equal(y.host_values, x.host_values)


def test_a_scratch_buffer_shaped_by_an_acquired_block_is_an_error_at_the_call():
    @ttl.operation()
    def shaped_by_block(src: ttl.DFB, dst: ttl.DFB):
        s = src.wait()
        scratch = ttl.make_dfb("bf16", shape=s.shape, block_count=2)
        t = scratch.reserve()
        t.store(s)
        d = dst.reserve()
        d.store(scratch.wait())

    @ttl.operation(grid=(1, 1))
    def op(x, y):
        a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        b = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
        ttl.copy(x[0, 0], a.reserve()).wait()
        shaped_by_block(a, b)  # error
        ttl.copy(b.wait(), y[0, 0]).wait()

    expect_error(lambda: op(tile_tensor((32, 32)), zeros((32, 32))),
                 test_a_scratch_buffer_shaped_by_an_acquired_block_is_an_error_at_the_call, KernelError,
                 "shaped_by_block(): a scratch buffer", "'s'")


@ttl.operation()
def plus_one_stage(src: ttl.DFB, dst: ttl.DFB):
    s = src.wait()
    d = dst.reserve()
    d.store(s + ttl.block.fill(1.0, shape=s.shape, dtype=s.dtype))


step = copy_stage


@ttl.operation(grid=(1, 1))
def one_step(x, y):
    a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    b = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
    ttl.copy(x[0, 0], a.reserve()).wait()
    step(a, b)
    ttl.copy(b.wait(), y[0, 0]).wait()


def test_a_name_rebound_to_another_operation_between_calls_inlines_the_new_one():
    global step
    x = tile_tensor((32, 32), seed=7)
    try:
        for operation, offset in ((copy_stage, 0.0), (plus_one_stage, 1.0)):
            step = operation
            y = zeros((32, 32))
            one_step(x, y)
            np.testing.assert_allclose(y.host_values, _bf16(x.host_values + offset), rtol=1e-2, atol=1e-2)
    finally:
        step = copy_stage


@ttl.operation()
def exp_to_tensor(src: ttl.DFB, out):
    """out[0, 0] = exp(src): compute and writer statements of its own."""
    scratch = ttl.make_dfb("bf16", shape=(1, 1), block_count=2)
    s = scratch.reserve()
    s.store(ttl.exp(src.wait()))
    ttl.copy(scratch.wait(), out[0, 0]).wait()


@ttl.operation(grid=(1, 1))
def copy_then_exp(x, y, z):
    a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    b = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    ttl.copy(x[0, 0], a.reserve()).wait()
    ttl.copy(x[0, 0], b.reserve()).wait()
    ttl.copy(b.wait(), z[0, 0]).wait()
    exp_to_tensor(a, y)


def test_a_writer_with_the_callers_lines_before_an_inlined_callees_earlier_lines():
    """The writer kernel holds the caller's copy (a later line) and then the callee's copy (an
    earlier line of the file): the kernel still builds and both tensors are written."""
    x, y, z = tile_tensor((32, 32), seed=3, scale=0.5), zeros((32, 32)), zeros((32, 32))
    copy_then_exp(x, y, z)
    np.testing.assert_allclose(z.host_values, x.host_values, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(y.host_values, _bf16(np.exp(x.host_values)), rtol=2e-2, atol=2e-2)


def test_an_error_in_an_inlined_callee_names_the_callees_own_block():
    @ttl.operation()
    def bad_stage(src: ttl.DFB, dst: ttl.DFB):
        s = src.wait()
        block = dst.reserve()
        block.store()  # error

    @ttl.operation(grid=(1, 1))
    def op(x, y):
        a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        b = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
        ttl.copy(x[0, 0], a.reserve()).wait()
        bad_stage(a, b)
        ttl.copy(b.wait(), y[0, 0]).wait()

    err = expect_error(lambda: op(tile_tensor((32, 32)), zeros((32, 32))),
                       test_an_error_in_an_inlined_callee_names_the_callees_own_block, KernelError,
                       ": block.store(expr) takes one block expression")
    assert "__" not in str(err), err


def _composed_in_a_loop(levels: int):
    """Operations made in a loop, each calling the previous one twice through the loop variable
    ``inner`` (TT-Lang binds it when the operation is decorated): ``levels`` doublings of a copy."""
    @ttl.operation()
    def leaf(src: ttl.DFB, dst: ttl.DFB):
        d = dst.reserve()
        d.store(src.wait() * 2)

    nested = leaf
    for _ in range(levels):
        inner = nested

        @ttl.operation()
        def doubled(src: ttl.DFB, dst: ttl.DFB):
            mid = ttl.make_dfb("bf16", shape=(1, 1), block_count=2)
            inner(src, mid)
            inner(mid, dst)

        nested = doubled
    return nested


_CHAIN = _composed_in_a_loop(2)


@ttl.operation(grid=(1, 1))
def _through_chain(x, y):
    a = ttl.make_dfb("bf16", shape=(1, 1), block_count=2)
    b = ttl.make_dfb("bf16", shape=(1, 1), block_count=2)
    ttl.copy(x[0, 0], a.reserve()).wait()
    _CHAIN(a, b)
    ttl.copy(b.wait(), y[0, 0]).wait()


def test_operations_composed_in_a_loop_call_the_one_they_were_made_with():
    x, y = tile_tensor((32, 32), seed=8), zeros((32, 32))
    _through_chain(x, y)
    np.testing.assert_array_equal(y.host_values, x.host_values * 16)    # 2 levels: 4 leaves, each x2


def _scale_by_three(width: int):
    @ttl.atom()
    def scale(x, out: ttl.DFB):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, width), block_count=2)
        ttl.copy(x[0:1, 0:width], x_dfb.reserve())
        o = out.reserve()
        o.store(x_dfb.wait() * ttl.block.fill(3.0, shape=(1, width)))

    return scale


def _scaled_copy_through_a_middle_operation(width: int, scale=None, outer_reads_width: bool = True):
    """Three levels: the outermost operation and the innermost both read ``width`` from the same
    closure; the middle one never names it (TT-Lang's op library composes operations this way).
    With ``outer_reads_width`` False the outermost body names its own copy of the number."""
    scale = scale or _scale_by_three(width)
    columns = width

    @ttl.atom()
    def middle(x, out: ttl.DFB):
        scale(x, out)

    @ttl.atom(grid=(1, 1))
    def outer(x, y):
        out = ttl.make_dataflow_buffer_like(y, shape=(1, width), block_count=2)
        middle(x, out)
        ttl.copy(out.wait(), y[0:1, 0:width])

    @ttl.atom(grid=(1, 1))
    def outer_of_its_own_name(x, y):
        out = ttl.make_dataflow_buffer_like(y, shape=(1, columns), block_count=2)
        middle(x, out)
        ttl.copy(out.wait(), y[0:1, 0:columns])

    return outer if outer_reads_width else outer_of_its_own_name


def test_a_name_the_outermost_body_shares_with_a_callee_two_levels_down():
    """Also after an expansion that found the name in the outermost body: the next operation
    inlining the same callee, whose outermost body does not name it, still carries it over."""
    x = tile_tensor((32, 64), seed=9)
    scale = _scale_by_three(2)
    for reads in (True, False):
        y = zeros((32, 64))
        _scaled_copy_through_a_middle_operation(2, scale, outer_reads_width=reads)(x, y)
        np.testing.assert_allclose(y.host_values, _bf16(x.host_values * 3), rtol=0, atol=0)


@ttl.operation(grid=(1, 1))
def _plus_one_through_tensors(x, y):
    a = ttl.make_dataflow_buffer_like(x, shape=(1, 1))
    b = ttl.make_dataflow_buffer_like(y, shape=(1, 1))
    with a.reserve() as blk:
        ttl.copy(x[0, 0], blk).wait()
    with a.wait() as s, b.reserve() as d:
        d.store(s + 1)
    with b.wait() as blk:
        ttl.copy(blk, y[0, 0]).wait()


def test_composing_through_a_tensor_warns_that_the_read_may_come_first():
    """``f(x, t)`` then ``f(t, y)`` in one body: the writer writes ``t`` while the reader already reads
    it back, nothing ordering the two — a warning at the read; one call per tensor warns nothing."""
    import warnings

    @ttl.operation(grid=(1, 1))
    def twice(x, t, y):
        _plus_one_through_tensors(x, t)
        _plus_one_through_tensors(t, y)

    @ttl.operation(grid=(1, 1))
    def once(x, y):
        _plus_one_through_tensors(x, y)

    tensors = [tile_tensor((32, 32), seed=3), zeros((32, 32)), zeros((32, 32))]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        twice(*tensors)
    messages = [str(w.message) for w in caught if "is read here by the reader kernel" in str(w.message)]
    assert len(messages) == 1 and messages[0].startswith("t[0, 0] is read here") \
        and "nothing orders the read after the write" in messages[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        once(tensors[0], zeros((32, 32)))
    assert not [w for w in caught if "is read here" in str(w.message)]


@ttl.operation()
def does_nothing(x):
    pass


def test_calling_an_operation_with_an_empty_body_says_there_is_nothing_to_run():
    @ttl.operation(grid=(1, 1))
    def op(x):
        does_nothing(x)  # error

    expect_error(lambda: op(tile_tensor((32, 32))),
                 test_calling_an_operation_with_an_empty_body_says_there_is_nothing_to_run, KernelError,
                 "neither body has anything for the device to do")
