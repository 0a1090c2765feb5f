"""TT-Lang front-end features, each run on the simulated device and compared with numpy."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold import compiler
from tilefold.ir.context import parse_module, print_ir
from tilefold.sim.tile_math import to_tf32
from ttl_helpers import tile_tensor, zeros


def bf16(x):
    return np.asarray(x, dtype=np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def unary_operation(expression, shape=(1, 1), out_shape=None, grid=(1, 1)):
    """An operation ``y = expression(x_blk)`` over one block of ``shape`` tiles."""
    out_shape = out_shape or shape

    @ttl.operation(grid=grid)
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=shape)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=out_shape)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as x_blk, y_dfb.reserve() as y_blk:
                y_blk.store(expression(x_blk))

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0:shape[0], 0:shape[1]], blk).wait()

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[0:out_shape[0], 0:out_shape[1]]).wait()

    return op


def run_unary(expression, x, out_shape=None):
    out_shape = out_shape or tuple(x.shape)
    op = unary_operation(expression, (x.shape[0] // 32, x.shape[1] // 32), (out_shape[0] // 32, out_shape[1] // 32))
    y = zeros(out_shape)
    op(x, y)
    return ttnn.to_numpy(y)


# --- block functions ------------------------------------------------------------------------------


@pytest.mark.parametrize("name,reference", [
    ("exp", np.exp), ("exp2", np.exp2), ("sqrt", lambda v: np.sqrt(np.abs(v) + 1)), ("square", np.square),
    ("tanh", np.tanh), ("sigmoid", lambda v: 1 / (1 + np.exp(-v))), ("relu", lambda v: np.maximum(v, 0)),
    ("sin", np.sin), ("cos", np.cos), ("floor", np.floor), ("ceil", np.ceil), ("abs", np.abs), ("neg", np.negative),
    ("silu", lambda v: v / (1 + np.exp(-v))), ("recip", lambda v: 1 / (np.abs(v) + 1)),
    ("rsqrt", lambda v: 1 / np.sqrt(np.abs(v) + 1)), ("log", lambda v: np.log(np.abs(v) + 1)),
])
def test_unary_math_functions(name, reference):
    fn = getattr(ttl.math, name)
    positive = name in ("sqrt", "recip", "rsqrt", "log")
    expression = (lambda b: fn(abs(b) + 1.0)) if positive else (lambda b: fn(b))
    x = tile_tensor((32, 32), seed=1, scale=2.0)
    got = run_unary(expression, x)
    np.testing.assert_allclose(got, reference(ttnn.to_numpy(x).astype(np.float64)), rtol=0.02, atol=0.02)


def test_gelu_matches_the_tanh_approximation():
    x = tile_tensor((32, 32), seed=2)
    v = ttnn.to_numpy(x).astype(np.float64)
    reference = 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3)))
    np.testing.assert_allclose(run_unary(ttl.math.gelu, x), reference, rtol=0.02, atol=0.02)


def test_clamp_min_max_where_and_scalar_operators():
    x = tile_tensor((32, 32), seed=3, scale=3.0)
    v = ttnn.to_numpy(x)
    np.testing.assert_array_equal(run_unary(lambda b: ttl.math.clamp(b, -1.0, 0.5), x), np.clip(v, -1, 0.5))
    np.testing.assert_array_equal(run_unary(lambda b: ttl.math.max(b, 0.25), x), np.maximum(v, 0.25))
    np.testing.assert_array_equal(run_unary(lambda b: ttl.math.min(b, b * 0.5), x), bf16(np.minimum(v, v * 0.5)))
    np.testing.assert_array_equal(run_unary(lambda b: 2.0 - b, x), bf16(2.0 - v))
    np.testing.assert_array_equal(run_unary(lambda b: ttl.math.where(b > 0.0 * b, b, -b), x), np.abs(v))
    np.testing.assert_allclose(run_unary(lambda b: b ** 3, x), bf16(v ** 3), rtol=0.02, atol=0.02)


def test_transpose_of_a_two_by_three_block():
    x = tile_tensor((64, 96), seed=4)
    got = run_unary(ttl.math.transpose, x, out_shape=(96, 64))
    np.testing.assert_array_equal(got, ttnn.to_numpy(x).T)


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_transpose_of_a_batch_transposes_each_matrix(dtype):
    """A (2, 1, 3)-tile block: each batch index's 1x3 tiles become 3x1, each tile transposed."""
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(2, 1, 3), block_count=1)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(2, 3, 1), block_count=1)

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0:2, 0:1, 0:3], blk).wait()

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as out:
                out.store(ttl.math.transpose(a))

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[0:2, 0:3, 0:1]).wait()

    x = tile_tensor((2, 32, 96), seed=14, dtype=dtype)
    y = zeros((2, 96, 32), dtype=dtype)
    op(x, y)
    expected = ttnn.to_numpy(x).transpose(0, 2, 1)
    if dtype == "float32":          # transpose_wh_tile reads through SRCA, as TT-Lang's compiler has it
        expected = to_tf32(expected)
    np.testing.assert_array_equal(ttnn.to_numpy(y), expected)


@pytest.mark.parametrize("dims,axis", [([-1], 1), ([0], 0), ([0, 1], (0, 1))], ids=["rows", "columns", "all"])
def test_reduce_sum_over_rows_columns_and_everything(dims, axis):
    x = tile_tensor((64, 64), seed=5)
    v = ttnn.to_numpy(x).astype(np.float64)
    out_shape = tuple(1 if d in [d % 2 for d in dims] else 2 for d in range(2))

    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(2, 2))
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=out_shape)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as x_blk, y_dfb.reserve() as y_blk:
                y_blk.store(ttl.math.reduce_sum(x_blk, dims=dims, shape=out_shape))

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0:2, 0:2], blk).wait()

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[0:out_shape[0], 0:out_shape[1]]).wait()

    y = zeros((32 * out_shape[0], 32 * out_shape[1]))
    op(x, y)
    got = ttnn.to_numpy(y)
    total = v.sum(axis=axis)
    if axis == 1:
        np.testing.assert_allclose(got[:, 0], total, rtol=0.02, atol=0.1)
        assert not got[:, 1:].any()
    elif axis == 0:
        np.testing.assert_allclose(got[0, :], total, rtol=0.02, atol=0.1)
        assert not got[1:, :].any()
    else:
        assert got[0, 0] == pytest.approx(total, rel=0.02, abs=0.5)


# --- variables, accumulators, node coordinates ------------------------------------------------------


def test_accumulator_variable_carries_a_block_across_loop_iterations():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 2))
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 2))

        @ttl.compute()
        def compute():
            total = ttl.math.fill(0.0, shape=(1, 2))
            for _ in range(3):
                with x_dfb.wait() as x_blk:
                    total += x_blk * x_blk
            with y_dfb.reserve() as y_blk:
                y_blk.store(total)

        @ttl.datamovement()
        def read():
            for r in range(3):
                with x_dfb.reserve() as blk:
                    ttl.copy(x[r, 0:2], blk).wait()

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[0, 0:2]).wait()

    x = tile_tensor((96, 64), seed=6)
    y = zeros((32, 64))
    op(x, y)
    v = ttnn.to_numpy(x)
    expected = np.zeros((32, 64), dtype=np.float32)
    for r in range(3):
        expected = bf16(expected + bf16(v[32 * r:32 * (r + 1)] ** 2))
    np.testing.assert_allclose(ttnn.to_numpy(y), expected, rtol=0.01, atol=0.01)


def test_node_coordinates_in_the_operation_body_and_one_dimensional_grid_size():
    @ttl.operation(grid=(2, 2))
    def op(x, y):
        node = ttl.node(dims=1)
        count = ttl.grid_size(dims=1)
        first = node * 2
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))

        @ttl.datamovement()
        def copy():
            assert_count = count
            for t in range(2):
                with x_dfb.reserve() as blk:
                    ttl.copy(x[0, first + t], blk).wait()
                    ttl.copy(blk, y[0, first + t]).wait()
            with x_dfb.wait() as blk:
                pass
            with x_dfb.wait() as blk:
                pass

        assert count == 4

    x = tile_tensor((32, 32 * 8), seed=7)
    y = zeros((32, 32 * 8))
    op(x, y)
    np.testing.assert_array_equal(ttnn.to_numpy(y), ttnn.to_numpy(x))


def test_runtime_integer_variable_in_a_loop():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=3)

        @ttl.datamovement()
        def copy():
            column = 0
            for _ in range(3):
                with x_dfb.reserve() as blk:
                    ttl.copy(x[0, column], blk).wait()
                    ttl.copy(blk, y[0, 2 - column]).wait()
                column += 1
            for _ in range(3):
                with x_dfb.wait() as blk:
                    pass

    x = tile_tensor((32, 96), seed=8)
    y = zeros((32, 96))
    op(x, y)
    v = ttnn.to_numpy(x)
    np.testing.assert_array_equal(ttnn.to_numpy(y), np.concatenate([v[:, 64:], v[:, 32:64], v[:, :32]], axis=1))


def test_two_blocks_of_one_buffer_held_at_once():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            first = x_dfb.wait()
            second = x_dfb.wait()
            with y_dfb.reserve() as out:
                out.store(first - second)
            first.pop()
            second.pop()

        @ttl.datamovement()
        def read():
            a = x_dfb.reserve()
            b = x_dfb.reserve()
            xa = ttl.copy(x[0, 0], a)
            xb = ttl.copy(x[0, 1], b)
            xa.wait()
            xb.wait()
            a.push()
            b.push()

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[0, 0]).wait()

    x = tile_tensor((32, 64), seed=9)
    y = zeros((32, 32))
    op(x, y)
    v = ttnn.to_numpy(x)
    np.testing.assert_array_equal(ttnn.to_numpy(y), bf16(v[:, :32] - v[:, 32:]))


def test_row_major_tensors_and_a_group_transfer():
    @ttl.operation(grid=(1, 1))
    def upsample(inp, out):
        rows, width = inp.shape
        io_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, width), block_count=2)

        @ttl.datamovement()
        def reader():
            for r in range(rows):
                with io_dfb.reserve() as blk:
                    ttl.copy(inp[r, :], blk).wait()

        @ttl.datamovement()
        def writer():
            for r in range(rows):
                with io_dfb.wait() as blk:
                    group = ttl.GroupTransfer()
                    for k in range(2):
                        group.add(ttl.copy(blk, out[2 * r + k, :]))
                    group.wait_all()

    x = ttnn.from_numpy(np.random.default_rng(10).standard_normal((5, 40)).astype(np.float32),
                        dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT)
    out = ttnn.zeros((10, 40), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT)
    upsample(x, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.repeat(ttnn.to_numpy(x), 2, axis=0))


def test_row_major_blocks_of_several_rows_at_a_column_offset_each_node_has():
    """Each node writes rows 0:2 of its own 16 columns: the rows' page writes start at a byte offset
    that differs per node (a batch of them takes one offset per lane)."""
    @ttl.operation(grid=(2, 1))
    def halves(x, y):
        d = ttl.make_dataflow_buffer_like(x, shape=(2, 16), block_count=1)

        @ttl.datamovement()
        def read():
            n = ttl.node(dims=1)
            with d.reserve() as blk:
                ttl.copy(x[0:2, 16 * n:16 * n + 16], blk).wait()

        @ttl.datamovement()
        def write():
            n = ttl.node(dims=1)
            with d.wait() as blk:
                ttl.copy(blk, y[0:2, 16 * n:16 * n + 16]).wait()

    x = ttnn.from_numpy(np.random.default_rng(11).standard_normal((2, 32)).astype(np.float32),
                        dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT)
    y = ttnn.zeros((2, 32), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT)
    halves(x, y)
    np.testing.assert_array_equal(ttnn.to_numpy(y), ttnn.to_numpy(x))


def test_waiting_a_completed_transfer_again_waits_for_nothing():
    """A second ``wait()`` of a copy, a ``wait()`` of a group's member after (or before) its
    ``wait_all()``, and a second ``wait_all()`` return at once, as TT-Lang's do."""
    @ttl.operation(grid=(1, 1))
    def twice(inp, out):
        a_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def reader():
            with a_dfb.reserve() as a, b_dfb.reserve() as b:
                group = ttl.GroupTransfer()
                first = ttl.copy(inp[0, 0], a)
                second = ttl.copy(inp[0, 1], b)
                group.add(first)
                group.add(second)
                second.wait()
                group.wait_all()
                first.wait()
                group.wait_all()

        @ttl.datamovement()
        def writer():
            with a_dfb.wait() as a, b_dfb.wait() as b:
                tx = ttl.copy(a, out[0, 0])
                tx.wait()
                tx.wait()
                ttl.copy(b, out[0, 1]).wait()

    x = tile_tensor((32, 64), seed=11)
    y = zeros((32, 64))
    twice(x, y)
    np.testing.assert_array_equal(ttnn.to_numpy(y), ttnn.to_numpy(x))


@pytest.mark.parametrize("expression,reference", [
    (lambda b: (b + 2.0) ** (b * 0.5), lambda v: (v + 2.0) ** (v * 0.5)),      # a block exponent
    (lambda b: (b + 2.0) ** 0.5, lambda v: np.sqrt(v + 2.0)),                 # a fractional number
    (lambda b: 2.0 ** b, np.exp2),                                            # a number to a block's power
], ids=["block", "fraction", "base"])
def test_powers_other_than_non_negative_integers(expression, reference):
    """``**`` with a block exponent or a number that is no non-negative integer: the SFPU's
    element-wise power of two blocks (bfloat16 result) against numpy."""
    rng = np.random.default_rng(14)
    v = rng.uniform(-1, 1, (32, 64)).astype(np.float32)
    x = ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    xv = ttnn.to_numpy(x).astype(np.float64)
    np.testing.assert_allclose(run_unary(expression, x), reference(xv), rtol=2e-2, atol=2e-2)


def test_fill_takes_the_blocks_tile():
    """``ttl.block.fill(v, shape=blk.shape, dtype=blk.dtype, tile=blk.tile)`` as TT-Lang main writes it
    for any tile: ``blk.tile`` is ``(32, 32)`` here and the fill is a 32x32 one."""
    x = tile_tensor((32, 64), seed=16)
    got = run_unary(lambda b: b * ttl.block.fill(0.25, shape=b.shape, dtype=b.dtype, tile=b.tile), x)
    np.testing.assert_array_equal(got, bf16(ttnn.to_numpy(x) * 0.25))


# --- compiling --------------------------------------------------------------------------------------


def test_front_end_ir_round_trips_through_the_parser():
    op = unary_operation(lambda b: ttl.math.exp(b) * 2.0 + b, shape=(2, 2))
    built = op.build((tile_tensor((64, 64)), zeros((64, 64))), {})
    text = print_ir(built.module)
    assert print_ir(parse_module(text)) == text
    debug = print_ir(built.module, debuginfo=True)
    assert "test_ttl_frontend.py" in debug


def test_a_second_call_reuses_the_compiled_program(monkeypatch):
    op = unary_operation(lambda b: b + 1.0)
    x, y = tile_tensor((32, 32)), zeros((32, 32))
    op(x, y)
    calls = []
    monkeypatch.setattr(compiler, "build_ttl_program", lambda *a: calls.append(a))
    op(x, y)
    assert calls == []
    np.testing.assert_array_equal(ttnn.to_numpy(y), bf16(ttnn.to_numpy(x) + 1))


def counting_builds(monkeypatch):
    from tilefold.frontend.ttl import builder

    calls = []
    original = builder.build_kernel
    monkeypatch.setattr(builder, "build_kernel", lambda *a: calls.append(a) or original(*a))
    return calls


OFFSET = 1.0


@ttl.operation(grid=(1, 1))
def add_global_offset(x, y):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1))

    @ttl.compute()
    def compute():
        with x_dfb.wait() as blk, y_dfb.reserve() as out:
            out.store(blk + OFFSET)

    @ttl.datamovement()
    def read():
        with x_dfb.reserve() as blk:
            ttl.copy(x[0, 0], blk).wait()

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as blk:
            ttl.copy(blk, y[0, 0]).wait()


def test_a_second_call_builds_no_ir(monkeypatch):
    op = unary_operation(lambda b: b * 2.0)
    op(tile_tensor((32, 32)), zeros((32, 32)))
    builds = counting_builds(monkeypatch)
    x, y = tile_tensor((32, 32), seed=5), zeros((32, 32))
    op(x, y)
    assert builds == []
    np.testing.assert_array_equal(ttnn.to_numpy(y), bf16(ttnn.to_numpy(x) * 2))


def test_a_changed_global_the_kernel_reads_rebuilds(monkeypatch):
    global OFFSET
    x = tile_tensor((32, 32))
    y = zeros((32, 32))
    add_global_offset(x, y)
    builds = counting_builds(monkeypatch)
    OFFSET = 3.0
    try:
        add_global_offset(x, y)
    finally:
        OFFSET = 1.0
    assert builds != []
    np.testing.assert_array_equal(ttnn.to_numpy(y), bf16(ttnn.to_numpy(x) + 3))


SHIFT = [1]


def _adding(k):
    def add(v):
        return v + k
    return add


def _shifted_rows(by_default: bool):
    """Node n copies row ``(n + SHIFT) % 2``: through two helpers of one code made with other cells
    (``by_default`` false), or through a keyword-only default; a helper both data movement kernels
    call. Nothing in the kernels reads SHIFT itself, so only those values tell two builds apart."""
    @ttl.operation(grid=(2, 1))
    def shifted_rows(x, y):
        first, second = _adding(0), _adding(0 if by_default else SHIFT[0])

        def row(n, *, by=SHIFT[0] if by_default else 0):
            return (second(first(n)) + by) % 2

        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def read():
            n = ttl.node(dims=1)
            with x_dfb.reserve() as blk:
                ttl.copy(x[row(n), 0], blk).wait()

        @ttl.datamovement()
        def write():
            n = ttl.node(dims=1)
            with x_dfb.wait() as blk:
                ttl.copy(blk, y[row(n) * 0 + n, 0]).wait()

    return shifted_rows


@pytest.mark.parametrize("by_default", [False, True])
def test_closures_of_one_code_and_keyword_defaults_key_the_build(monkeypatch, by_default):
    op = _shifted_rows(by_default)
    x, y = tile_tensor((64, 32), seed=6), zeros((64, 32))
    rows = ttnn.to_numpy(x).reshape(2, 32, 32)
    for shift in (1, 2, 1):
        SHIFT[0] = shift
        try:
            op(x, y)
        finally:
            SHIFT[0] = 1
        expected = np.concatenate([rows[(n + shift) % 2] for n in range(2)])
        np.testing.assert_array_equal(ttnn.to_numpy(y), expected)
    builds = counting_builds(monkeypatch)
    op(x, y)                    # the same values as the first call: its build is reused
    assert builds == []


def test_a_different_tensor_shape_rebuilds(monkeypatch):
    op = unary_operation(lambda b: b + 1.0)
    op(tile_tensor((32, 32)), zeros((32, 32)))
    builds = counting_builds(monkeypatch)
    x, y = tile_tensor((64, 64)), zeros((64, 64))
    op(x, y)
    assert builds != []
    np.testing.assert_array_equal(ttnn.to_numpy(y)[:32, :32], bf16(ttnn.to_numpy(x)[:32, :32] + 1))
