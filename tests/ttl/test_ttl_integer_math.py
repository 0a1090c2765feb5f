"""``+ - *`` of integer blocks: the SFPU's integer ops (``add_int_tile<Int32>`` ...) on the
integers copied into DST, exact above 2^24 and wrapping as the format's words do; run against
numpy, the C++ checked against the real headers, mixed formats reported at the user's line."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error, recorded_programs

SHAPE = (32, 64)


@ttl.operation(grid=(1, 1))
def integer_math(a, b, total, difference, product, copied):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 2), block_count=2)
    total_dfb = ttl.make_dataflow_buffer_like(total, shape=(1, 2), block_count=2)
    difference_dfb = ttl.make_dataflow_buffer_like(difference, shape=(1, 2), block_count=2)
    product_dfb = ttl.make_dataflow_buffer_like(product, shape=(1, 2), block_count=2)
    copied_dfb = ttl.make_dataflow_buffer_like(copied, shape=(1, 2), block_count=2)

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, b_dfb.wait() as y:
            with total_dfb.reserve() as out:
                out.store(x + y)
            with difference_dfb.reserve() as out:
                out.store(x - y * y)
            with product_dfb.reserve() as out:
                out.store(x * y)
            with copied_dfb.reserve() as out:
                out.store(x)

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as x, b_dfb.reserve() as y:
            ttl.copy(a[0, 0:2], x).wait()
            ttl.copy(b[0, 0:2], y).wait()

    @ttl.datamovement()
    def write():
        for dfb, tensor in ((total_dfb, total), (difference_dfb, difference), (product_dfb, product),
                            (copied_dfb, copied)):
            with dfb.wait() as out:
                ttl.copy(out, tensor[0, 0:2]).wait()


def _inputs(dtype: str, seed: int):
    numpy_type = np.dtype(dtype)
    info = np.iinfo(numpy_type)
    rng = np.random.default_rng(seed)
    values = [rng.integers(info.min, info.max, SHAPE, endpoint=True).astype(numpy_type) for _ in range(2)]
    return values, [ttnn.from_numpy(v, dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT) for v in values]


@pytest.mark.parametrize("dtype", ["int32", "uint32", "uint16"])
def test_integer_blocks_add_subtract_and_multiply_exactly(dtype):
    (a, b), tensors = _inputs(dtype, seed=41)
    outs = [ttnn.zeros(SHAPE, dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT) for _ in range(4)]
    integer_math(*tensors, *outs)
    with np.errstate(over="ignore"):
        expected = [a + b, a - b * b, a * b, a]
    for out, want in zip(outs, expected):
        np.testing.assert_array_equal(ttnn.to_numpy(out).astype(a.dtype), want)


def test_integer_math_compiles_against_the_real_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    _, tensors = _inputs("int32", seed=42)
    outs = [ttnn.zeros(SHAPE, dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT) for _ in range(4)]
    with recorded_programs() as programs:
        integer_math(*tensors, *outs)
    compute = next(k for k in programs[0].kernels if k.is_compute)
    text = emit_kernel(compute.function)
    for call in ("add_int_tile<DataFormat::Int32>", "sub_int_tile<DataFormat::Int32>",
                 "mul_int_tile_init<DataFormat::Int32>()", "mul_int_tile<DataFormat::Int32>"):
        assert call in text, call
    path = tmp_path / "compute.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


def test_an_integer_and_a_float_block_are_refused():
    @ttl.operation(grid=(1, 1))
    def op(a, b, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=1)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

        @ttl.compute()
        def compute():
            with a_dfb.wait() as x, b_dfb.wait() as y, out_dfb.reserve() as o:
                o.store(x + y)  # error

    a = ttnn.zeros((32, 32), dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT)
    b = ttnn.zeros((32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    expect_error(lambda: op(a, b, ttnn.zeros((32, 32), dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT)),
                 test_an_integer_and_a_float_block_are_refused, KernelError,
                 "add of an int32 block and a bfloat16 block", "typecast")


def test_other_math_on_integers_is_refused():
    @ttl.operation(grid=(1, 1))
    def op(a, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

        @ttl.compute()
        def compute():
            with a_dfb.wait() as x, out_dfb.reserve() as o:
                o.store(ttl.math.exp(x))  # error

    a = ttnn.zeros((32, 32), dtype=ttnn.uint32, layout=ttnn.TILE_LAYOUT)
    expect_error(lambda: op(a, ttnn.zeros((32, 32), dtype=ttnn.uint32, layout=ttnn.TILE_LAYOUT)),
                 test_other_math_on_integers_is_refused, KernelError,
                 "exp of a uint32 block is not supported", "add, max, min, mul, sub of two blocks of one format")


def _one_block(body):
    @ttl.operation(grid=(1, 1))
    def op(a, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with a_dfb.wait() as x, out_dfb.reserve() as o:
                o.store(body(x))

        @ttl.datamovement()
        def read():
            with a_dfb.reserve() as x:
                ttl.copy(a[0, 0], x).wait()

        @ttl.datamovement()
        def write():
            with out_dfb.wait() as o:
                ttl.copy(o, out[0, 0]).wait()

    return op


def test_whole_numbers_with_an_integer_block(tmp_path, check_kernel):
    """``(x + 1) * 3 - (2^31 - 1) + (5 - x)``: each number fills an int32 tile exactly
    (``fill_tile_int<Int32>``), the arithmetic wraps."""
    from tilefold.codegen.cpp import emit_kernel

    values = np.random.default_rng(43).integers(-2 ** 31, 2 ** 31 - 1, (32, 32)).astype(np.int32)
    a = ttnn.from_numpy(values, dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT)
    with recorded_programs() as programs:
        _one_block(lambda x: (x + 1) * 3 - 2147483647 + (5 - x))(a, out)
    with np.errstate(over="ignore"):
        expected = (values + np.int32(1)) * np.int32(3) - np.int32(2147483647) + (np.int32(5) - values)
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)
    compute = next(k for k in programs[0].kernels if k.is_compute)
    text = emit_kernel(compute.function)
    assert "fill_tile_int<DataFormat::Int32>(2, 2147483647);" in text.replace("u)", ")"), text
    path = tmp_path / "compute.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


def test_a_fraction_with_an_integer_block_is_refused():
    def body(x):
        return x + 1.5  # error

    a = ttnn.zeros((32, 32), dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT)
    expect_error(lambda: _one_block(body)(a, ttnn.zeros((32, 32), dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT)),
                 body, KernelError, "int32 block combines with whole numbers only")


@ttl.operation(grid=(1, 1))
def integer_order(a, b, largest, smallest, greater, at_most):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=1)
    dfbs = [ttl.make_dataflow_buffer_like(t, shape=(1, 1), block_count=1)
            for t in (largest, smallest, greater, at_most)]

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, b_dfb.wait() as y:
            with dfbs[0].reserve() as o:
                o.store(ttl.math.max(x, y))
            with dfbs[1].reserve() as o:
                o.store(ttl.math.min(x, y))
            with dfbs[2].reserve() as o:
                o.store(ttl.math.max(x, y) - y)
            with dfbs[3].reserve() as o:
                o.store(ttl.math.min(x, 7))

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as x, b_dfb.reserve() as y:
            ttl.copy(a[0, 0], x).wait()
            ttl.copy(b[0, 0], y).wait()

    @ttl.datamovement()
    def write():
        for dfb, tensor in zip(dfbs, (largest, smallest, greater, at_most)):
            with dfb.wait() as o:
                ttl.copy(o, tensor[0, 0]).wait()


@pytest.mark.parametrize("dtype", ["int32", "uint32"])
def test_maximum_and_minimum_of_integers(tmp_path, check_kernel, dtype):
    """``binary_max_int32_tile`` / ``binary_min_uint32_tile`` ... (a number filling an integer tile) on
    values of every magnitude, signed or not."""
    from tilefold.codegen.cpp import emit_kernel

    numpy_type = np.dtype(dtype)
    info = np.iinfo(numpy_type)
    rng = np.random.default_rng(44)
    a, b = (rng.integers(info.min, info.max, (32, 32), endpoint=True).astype(numpy_type) for _ in range(2))
    a[0, :3] = (7, 8, info.min)
    tensors = [ttnn.from_numpy(v, dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT) for v in (a, b)]
    outs = [ttnn.zeros((32, 32), dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT) for _ in range(4)]
    with recorded_programs() as programs:
        integer_order(*tensors, *outs)
    with np.errstate(over="ignore"):
        expected = (np.maximum(a, b), np.minimum(a, b), np.maximum(a, b) - b, np.minimum(a, numpy_type.type(7)))
    for out, want in zip(outs, expected):
        np.testing.assert_array_equal(ttnn.to_numpy(out).astype(numpy_type), want)
    compute = next(k for k in programs[0].kernels if k.is_compute)
    text = emit_kernel(compute.function)
    for call in (f"binary_max_{dtype}_tile(", f"binary_min_{dtype}_tile("):
        assert call in text, call
    path = tmp_path / "compute.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


def test_where_of_integer_blocks(tmp_path, check_kernel):
    """``ttl.math.where(mask, x, y)`` of int32 blocks: ``where_tile<DataFormat::Int32>`` chooses between
    the integers themselves (exact above 2^24)."""
    from tilefold.codegen.cpp import emit_kernel

    @ttl.operation(grid=(1, 1))
    def choose(m, a, b, out):
        dfbs = [ttl.make_dataflow_buffer_like(t, shape=(1, 1), block_count=1) for t in (m, a, b)]
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

        @ttl.compute()
        def compute():
            with dfbs[0].wait() as mask, dfbs[1].wait() as x, dfbs[2].wait() as y, out_dfb.reserve() as o:
                o.store(ttl.math.where(mask, x, y))

        @ttl.datamovement()
        def read():
            for dfb, tensor in zip(dfbs, (m, a, b)):
                with dfb.reserve() as blk:
                    ttl.copy(tensor[0, 0], blk).wait()

        @ttl.datamovement()
        def write():
            with out_dfb.wait() as o:
                ttl.copy(o, out[0, 0]).wait()

    rng = np.random.default_rng(45)
    mask = rng.integers(0, 2, (32, 32)).astype(np.int32)
    a, b = (rng.integers(-2 ** 31, 2 ** 31 - 1, (32, 32)).astype(np.int32) for _ in range(2))
    tensors = [ttnn.from_numpy(v, dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT) for v in (mask, a, b)]
    out = ttnn.zeros((32, 32), dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT)
    with recorded_programs() as programs:
        choose(*tensors, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.where(mask != 0, a, b))
    text = emit_kernel(next(k for k in programs[0].kernels if k.is_compute).function)
    assert "where_tile<DataFormat::Int32>(" in text, text
    path = tmp_path / "compute.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


@ttl.operation(grid=(1, 1))
def integer_comparisons(a, b, greater, at_least, less, at_most, equal, unequal):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=1)
    outs = (greater, at_least, less, at_most, equal, unequal)
    dfbs = [ttl.make_dataflow_buffer_like(t, shape=(1, 1), block_count=1) for t in outs]

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, b_dfb.wait() as y:
            with dfbs[0].reserve() as o:
                o.store((x - y) * ttl.math.gt(x, y))
            with dfbs[1].reserve() as o:
                o.store(ttl.math.ge(x, y))
            with dfbs[2].reserve() as o:
                o.store(ttl.math.lt(x, y))
            with dfbs[3].reserve() as o:
                o.store(ttl.math.le(x, y))
            with dfbs[4].reserve() as o:
                o.store(ttl.math.eq(x, y))
            with dfbs[5].reserve() as o:
                o.store(ttl.math.ne(x, y))

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as x, b_dfb.reserve() as y:
            ttl.copy(a[0, 0], x).wait()
            ttl.copy(b[0, 0], y).wait()

    @ttl.datamovement()
    def write():
        for dfb, tensor in zip(dfbs, outs):
            with dfb.wait() as o:
                ttl.copy(o, tensor[0, 0]).wait()


def test_comparisons_of_int32_blocks(tmp_path, check_kernel):
    """``gt_int32_tile`` ... (0.69's ``binary_comp.h``): 1 where the comparison holds, else 0, exact on
    values of every magnitude; the header compiles once sfpi's names are in scope. ``eq`` / ``ne``
    (which 0.69 lacks for int32) are ``1 - ((a > b) + (a < b))`` and ``(a > b) + (a < b)``."""
    from tilefold.codegen.cpp import emit_kernel

    info = np.iinfo(np.int32)
    rng = np.random.default_rng(45)
    a, b = (rng.integers(info.min, info.max, (32, 32), endpoint=True).astype(np.int32) for _ in range(2))
    a[0, :4], b[0, :4] = (5, info.min, info.max, -3), (5, info.max, info.min, -2)
    b[1] = a[1]
    tensors = [ttnn.from_numpy(v, dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT) for v in (a, b)]
    outs = [ttnn.zeros((32, 32), dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT) for _ in range(6)]
    with recorded_programs() as programs:
        integer_comparisons(*tensors, *outs)
    with np.errstate(over="ignore"):
        expected = ((a - b) * (a > b), a >= b, a < b, a <= b, a == b, a != b)
    for out, want in zip(outs, expected):
        np.testing.assert_array_equal(ttnn.to_numpy(out).astype(np.int32), np.asarray(want, np.int32))
    text = emit_kernel(next(k for k in programs[0].kernels if k.is_compute).function)
    for call in ("gt_int32_tile(", "ge_int32_tile(", "lt_int32_tile(", "le_int32_tile("):
        assert call in text, call
    path = tmp_path / "compute.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


def test_comparisons_of_uint32_blocks(tmp_path, check_kernel):
    """0.69 compares no uint32 words: ``a > b`` is ``min(max(a, b) - b, 1)`` in its unsigned max / min
    (``binary_max_uint32_tile``) and integer subtract, the others from it — exact on words above 2**31
    too, where a signed comparison would order them wrongly."""
    from tilefold.codegen.cpp import emit_kernel

    top = np.iinfo(np.uint32).max
    rng = np.random.default_rng(46)
    a, b = (rng.integers(0, top, (32, 32), endpoint=True).astype(np.uint32) for _ in range(2))
    a[0, :4], b[0, :4] = (5, 0, top, 2**31), (5, top, 0, 2**31 - 1)
    b[1] = a[1]
    tensors = [ttnn.from_numpy(v, dtype=ttnn.uint32, layout=ttnn.TILE_LAYOUT) for v in (a, b)]
    outs = [ttnn.zeros((32, 32), dtype=ttnn.uint32, layout=ttnn.TILE_LAYOUT) for _ in range(6)]
    with recorded_programs() as programs:
        integer_comparisons(*tensors, *outs)
    with np.errstate(over="ignore"):
        expected = ((a - b) * (a > b), a >= b, a < b, a <= b, a == b, a != b)
    for out, want in zip(outs, expected):
        np.testing.assert_array_equal(ttnn.to_numpy(out).astype(np.uint32), np.asarray(want, np.uint32))
    text = emit_kernel(next(k for k in programs[0].kernels if k.is_compute).function)
    assert "binary_max_uint32_tile(" in text and "binary_min_uint32_tile(" in text
    path = tmp_path / "compute.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


@ttl.operation(grid=(1, 1))
def integer_signs(a, negated, rectified, absolute):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
    dfbs = [ttl.make_dataflow_buffer_like(t, shape=(1, 1), block_count=1) for t in (negated, rectified, absolute)]

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x:
            with dfbs[0].reserve() as o:
                o.store(ttl.math.neg(x))
            with dfbs[1].reserve() as o:
                o.store(ttl.math.relu(x))
            with dfbs[2].reserve() as o:
                o.store(ttl.math.abs(x))

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as x:
            ttl.copy(a[0, 0], x).wait()

    @ttl.datamovement()
    def write():
        for dfb, tensor in zip(dfbs, (negated, rectified, absolute)):
            with dfb.wait() as o:
                ttl.copy(o, tensor[0, 0]).wait()


@pytest.mark.parametrize("dtype", ["int32", "uint32"])
def test_negation_relu_and_absolute_value_of_integer_blocks(tmp_path, check_kernel, dtype):
    """``0 - x``, ``max(x, 0)`` and ``max(x, 0 - x)`` on the integers (``fill_tile_int``, ``sub_int_tile``,
    ``binary_max_int32_tile``): exact, wrapping as numpy does; relu and abs of unsigned words are the words."""
    from tilefold.codegen.cpp import emit_kernel

    numpy_type = np.dtype(dtype)
    info = np.iinfo(numpy_type)
    a = np.random.default_rng(46).integers(info.min, info.max, (32, 32), endpoint=True).astype(numpy_type)
    a[0, :3] = (info.min, info.max, 0)
    outs = [ttnn.zeros((32, 32), dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT) for _ in range(3)]
    with recorded_programs() as programs:
        integer_signs(ttnn.from_numpy(a, dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT), *outs)
    with np.errstate(over="ignore"):
        if dtype == "int32":
            expected = (-a, np.maximum(a, 0), np.abs(a))
        else:
            expected = ((np.zeros_like(a) - a), a, a)
    for out, want in zip(outs, expected):
        np.testing.assert_array_equal(ttnn.to_numpy(out).astype(numpy_type), want)
    path = tmp_path / "compute.cpp"
    path.write_text(emit_kernel(next(k for k in programs[0].kernels if k.is_compute).function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))
