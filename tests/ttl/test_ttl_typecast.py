"""``ttl.math.typecast(x, dtype)``: a block converted between the float formats
(``typecast_tile<IN, OUT>``). Widening is exact; float32 to bfloat16 rounds to nearest even, a cast
to bfloat8_b / bfloat4_b is packed with shared exponents into the buffer it is stored in, and later
ops and the store see the new format. A value used several times in one expression is computed once.
Floats to int32 / uint32 truncate and saturate, int32 to floats rounds to nearest even, uint32 to
floats rounds its low 31 bits and then adds 2^31 (two roundings), uint32 to uint16 saturates and to
uint8 keeps the low byte, uint16 / uint8 to uint32 are exact, as 0.69's LLK does. Simulated
against numpy; the compute kernel's C++ is checked against the real 0.69 headers; unsupported pairs and dtypes and integer misuse are errors at the user's line."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import compiled, expect_error


def _unary_operation(body):
    """An operation of one (1, 1) block: ``out = body(x)`` with ``x`` read from ``inp``."""

    @ttl.operation(grid=(1, 1))
    def cast(inp, out):
        inp_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute_fn():
            with inp_dfb.wait() as x, out_dfb.reserve() as o:
                o.store(body(x))

        @ttl.datamovement()
        def dm_read():
            with inp_dfb.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()

        @ttl.datamovement()
        def dm_write():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()

    return cast


def _widen(x):
    return ttl.math.typecast(x, ttnn.float32)


def _narrow(x):
    return ttl.math.typecast(x, "bfloat16")


def _residual(x):
    return x - ttl.math.typecast(x, ttnn.bfloat16)


widen = _unary_operation(_widen)
narrow = _unary_operation(_narrow)
residual = _unary_operation(_residual)


def _bf16_values(seed=0):
    return (np.random.default_rng(seed).standard_normal((32, 32)) * 100).astype(ml_dtypes.bfloat16)


def _float32_between_bf16():
    """float32 values whose low 16 bits are below, at (ties, with an even and an odd bfloat16
    neighbour) and above half a bfloat16 step, so nearest-even and truncation differ; the bits
    below 13 are zero, so the values pass the unpacker's TF32 source registers unchanged."""
    rng = np.random.default_rng(3)
    high = rng.integers(0x3C00, 0x4400, (32, 32), dtype=np.uint32) << 16        # about 2^-7 .. 2^8
    high |= (rng.random((32, 32)) < 0.5).astype(np.uint32) << 31               # signs
    low = np.array([0x2000, 0x6000, 0x8000, 0xA000, 0xE000], np.uint32)[rng.integers(0, 5, (32, 32))]
    return (high | low).view(np.float32)


def _truncated(v):
    return (v.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)


def _rne(v):
    return v.astype(ml_dtypes.bfloat16).astype(np.float32)


def test_bfloat16_to_float32_is_exact():
    v = _bf16_values()
    inp = ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    widen(inp, out)
    got = ttnn.to_numpy(out)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, v.astype(np.float32))


def test_float32_to_bfloat16_rounds_to_nearest_even_in_a_float32_buffer():
    v = _float32_between_bf16()
    assert not np.array_equal(_rne(v), _truncated(v))
    inp = ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    narrow(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), _rne(v))


def test_later_ops_see_the_rounded_block():
    """``x - typecast(x, bfloat16)`` in float32 is the rounding error of nearest even."""
    v = _float32_between_bf16()
    inp = ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    residual(inp, out)
    got = ttnn.to_numpy(out)
    np.testing.assert_array_equal(got, v - _rne(v))
    assert not np.array_equal(got, v - _truncated(v))


@ttl.operation(grid=(1, 1))
def scaled_narrow(inp, out):
    """A (2, 2) block per step: float32 in, ``typecast(x, bfloat16) * 2`` out in bfloat16."""
    inp_dfb = ttl.make_dataflow_buffer_like(inp, shape=(2, 2), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(2, 2), block_count=2)
    steps = inp.shape[0] // 64

    @ttl.compute()
    def compute_fn():
        for _ in range(steps):
            with inp_dfb.wait() as x, out_dfb.reserve() as o:
                o.store(ttl.math.typecast(x, ttnn.bfloat16) * 2.0)

    @ttl.datamovement()
    def dm_read():
        for i in range(steps):
            with inp_dfb.reserve() as blk:
                ttl.copy(inp[2 * i:2 * i + 2, 0:2], blk).wait()

    @ttl.datamovement()
    def dm_write():
        for i in range(steps):
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[2 * i:2 * i + 2, 0:2]).wait()


def test_multi_tile_blocks_in_a_loop_into_a_bfloat16_buffer():
    v = np.concatenate([np.concatenate([_float32_between_bf16()] * 2, axis=1)] * 4, axis=0)
    inp = ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((128, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    scaled_narrow(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), _rne(v) * 2)


def test_torch_dtypes_are_named_without_torch():
    class FakeTorchDtype:                 # str() of a torch dtype, without importing torch
        def __str__(self):
            return "torch.float32"

    dtype = FakeTorchDtype()
    op = _unary_operation(lambda x: ttl.math.typecast(x, dtype))
    v = _bf16_values(1)
    inp = ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    op(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), v.astype(np.float32))


@pytest.mark.parametrize("operation, in_dtype, out_dtype, templates", [
    (widen, ttnn.bfloat16, ttnn.float32, "(uint32_t)DataFormat::Float16_b, (uint32_t)DataFormat::Float32"),
    (narrow, ttnn.float32, ttnn.float32, "(uint32_t)DataFormat::Float32, (uint32_t)DataFormat::Float16_b"),
])
def test_compute_kernel_compiles_against_the_real_headers(tmp_path, check_kernel, operation, in_dtype,
                                                          out_dtype, templates):
    from tilefold.codegen.cpp import emit_kernel

    inp = ttnn.zeros((32, 32), dtype=in_dtype, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=out_dtype, layout=ttnn.TILE_LAYOUT)
    program = compiled(operation, inp, out).program
    kernel = next(k for k in program.kernels if k.name == "compute_fn")
    text = emit_kernel(kernel.function)
    assert f"typecast_tile_init<{templates}>();" in text
    assert f"typecast_tile<{templates}>(" in text
    assert '#include "api/compute/eltwise_unary/typecast.h"' in text
    path = tmp_path / "compute.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


def _run(body, in_dtype=ttnn.bfloat16):
    op = _unary_operation(body)
    inp = ttnn.zeros((32, 32), dtype=in_dtype, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    return lambda: op(inp, out)


def test_a_uint16_block_cast_to_a_float_is_refused_at_the_users_line():
    def body(x):
        return ttl.math.typecast(x, ttnn.float32)  # error

    expect_error(_run(body, ttnn.uint16), body, KernelError, "ttl.math.typecast() from uint16 to float32 is not "
                 "supported", "from uint16 and uint8 to uint32")


def test_a_16_bit_integer_dtype_is_refused_at_the_users_line():
    def body(x):
        return ttl.math.typecast(x, ttnn.uint16)  # error

    expect_error(_run(body), body, KernelError, "ttl.math.typecast() from bfloat16 to uint16 is not supported")


def test_math_on_an_integer_block_is_refused_at_the_users_line():
    def body(x):
        return ttl.math.exp(ttl.math.typecast(x, ttnn.int32))  # error

    expect_error(_run(body), body, KernelError, "exp of an int32 block is not supported by tilefold",
                 "ttl.math.typecast(x, ttnn.float32) first")


def test_storing_an_integer_block_into_a_float_buffer_is_refused_at_the_users_line():
    def body(x):
        return ttl.math.typecast(x, ttnn.int32)

    op = _unary_operation(body)
    inp = ttnn.zeros((32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    with pytest.raises(KernelError, match=r"o.store\(\): the value is int32 but the block is float32") as e:
        op(inp, out)
    assert "test_ttl_typecast.py:" in str(e.value)


@pytest.mark.parametrize("source, target", [("bfloat16", "int32"), ("uint32", "uint8")])
def test_an_integer_cast_with_a_16_bit_dst_is_refused_at_the_users_line(source, target):
    target_dtype = getattr(ttnn, target)

    @ttl.operation(grid=(1, 1), fp32_dest_acc_en=False)
    def cast16(inp, out):
        inp_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute_fn():
            with inp_dfb.wait() as x, out_dfb.reserve() as o:
                o.store(ttl.math.typecast(x, target_dtype))  # error

        @ttl.datamovement()
        def dm_read():
            with inp_dfb.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()

        @ttl.datamovement()
        def dm_write():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()

    inp = ttnn.zeros((32, 32), dtype=getattr(ttnn, source), layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=target_dtype, layout=ttnn.TILE_LAYOUT)
    with pytest.raises(KernelError, match=f"from {source} to {target} needs a 32-bit DST") as e:
        cast16(inp, out)
    assert "test_ttl_typecast.py:" in str(e.value)


def test_an_unknown_dtype_is_an_error_at_the_users_line():
    def body(x):
        return ttl.math.typecast(x, "complex64")  # error

    expect_error(_run(body), body, KernelError, "ttl.math.typecast(): unknown dtype 'complex64'")


def test_a_missing_dtype_is_an_error_at_the_users_line():
    def body(x):
        return ttl.math.typecast(x)  # error

    expect_error(_run(body), body, KernelError, "ttl.math.typecast(x, dtype) needs the target dtype")


def test_a_cast_to_the_blocks_own_format_changes_nothing():
    op = _unary_operation(lambda x: ttl.math.typecast(x, ttnn.bfloat16))
    v = _bf16_values(2)
    inp = ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    op(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), v.astype(np.float32))


def _block_op(body, rows=3, cols=5):
    """An operation of one (rows, cols) block: ``out = body(x)``."""

    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        inp_dfb = ttl.make_dataflow_buffer_like(inp, shape=(rows, cols), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(rows, cols), block_count=2)

        @ttl.compute()
        def compute_fn():
            with inp_dfb.wait() as x, out_dfb.reserve() as o:
                o.store(body(x))

        @ttl.datamovement()
        def dm_read():
            with inp_dfb.reserve() as blk:
                ttl.copy(inp[0:rows, 0:cols], blk).wait()

        @ttl.datamovement()
        def dm_write():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0:rows, 0:cols]).wait()

    return op


def _values(seed):
    return np.random.default_rng(seed).standard_normal((96, 160)).astype(np.float32) * 3


@pytest.mark.parametrize("target", ["bfloat8_b", "bfloat4_b"])
def test_a_cast_to_a_block_float_is_packed_with_shared_exponents(target):
    """bfloat16 in, cast to a block float, stored into a buffer of it: the tensor TT-NN makes of the
    same values in that format."""
    v = _values(5)
    inp = ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros(v.shape, dtype=getattr(ttnn, target), layout=ttnn.TILE_LAYOUT)
    _block_op(lambda x: ttl.math.typecast(x, target))(inp, out)
    expected = ttnn.to_numpy(ttnn.from_numpy(ttnn.to_numpy(inp), dtype=getattr(ttnn, target),
                                              layout=ttnn.TILE_LAYOUT))
    got = ttnn.to_numpy(out)
    np.testing.assert_array_equal(got, expected)
    assert not np.array_equal(got, ttnn.to_numpy(inp))       # the shared exponents did round


@pytest.mark.parametrize("source", ["bfloat8_b", "bfloat4_b"])
def test_a_block_float_cast_to_float32_is_exact(source):
    inp = ttnn.from_numpy(_values(6), dtype=getattr(ttnn, source), layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((96, 160), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    _block_op(lambda x: ttl.math.typecast(x, ttnn.float32))(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(inp))


def _fusion(x):
    f = ttl.math.typecast(x, ttnn.float32)
    return ((f + f) * f) + f


def test_a_cast_value_used_four_times_is_computed_once_and_fits_a_float32_dst():
    """``f`` is one DST value read by three ops (not three copies of the cast): the expression needs
    two DST slots besides the result, so a 3x5 block runs in float32 DST (4 tiles per acquire)."""
    v = _values(7).astype(ml_dtypes.bfloat16)
    inp = ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros(v.shape, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    op = _block_op(_fusion)
    op(inp, out)
    f = v.astype(np.float32)
    np.testing.assert_allclose(ttnn.to_numpy(out), ((f + f) * f) + f, rtol=1e-5, atol=1e-5)
    text = compiled(op, inp, out).dumps
    dst = dict(text)["ttl-assign-dst"]
    assert dst.count("ttl.tile_typecast") == 1
    assert "ttl.dst_footprint = 2" in dst


@pytest.mark.parametrize("body, in_dtype, out_dtype, templates", [
    (lambda x: ttl.math.typecast(x, ttnn.bfloat8_b), ttnn.bfloat16, ttnn.bfloat8_b,
     "(uint32_t)DataFormat::Float16_b, (uint32_t)DataFormat::Bfp8_b"),
    (lambda x: ttl.math.typecast(x, ttnn.float32), ttnn.bfloat4_b, ttnn.float32,
     "(uint32_t)DataFormat::Bfp4_b, (uint32_t)DataFormat::Float32"),
    (_fusion, ttnn.bfloat16, ttnn.float32, "(uint32_t)DataFormat::Float16_b, (uint32_t)DataFormat::Float32"),
])
def test_block_float_casts_and_shared_values_compile_against_the_real_headers(tmp_path, check_kernel, body,
                                                                              in_dtype, out_dtype, templates):
    from tilefold.codegen.cpp import emit_kernel

    op = _block_op(body)
    inp = ttnn.zeros((96, 160), dtype=in_dtype, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((96, 160), dtype=out_dtype, layout=ttnn.TILE_LAYOUT)
    program = compiled(op, inp, out).program
    kernel = next(k for k in program.kernels if k.name == "compute_fn")
    text = emit_kernel(kernel.function)
    assert f"typecast_tile<{templates}>(" in text
    path = tmp_path / "compute.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


# --- integers ------------------------------------------------------------------------------------
# 0.69's LLK (Wormhole B0): float -> int32 / uint32 shifts the 24-bit significand by the exponent
# (truncation toward zero); int32 saturates |x| >= 2^31, infinities and NaN to INT_MIN, uint32 gives
# 0 for negatives and 0xFFFFFFFF from 2^32 up. int32 -> float32 is the nearest float32 (ties to
# even), -> bfloat16 that rounded again to nearest even.

def _special_floats():
    """Fractions with ties (x.5) both signs, values beyond 2^31 / 2^32, infinities, NaN, the int32
    and uint32 limits, and random values of all magnitudes, as float32 (32, 32)."""
    rng = np.random.default_rng(11)
    special = np.array([0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.999, -0.999, 1e-40, -0.0, 7.99, -7.99,
                        2.0 ** 31, -2.0 ** 31, 2.0 ** 31 - 128, -(2.0 ** 31 - 128), 3e9, -3e9, 2.0 ** 32 - 256,
                        2.0 ** 32, 1e20, -1e20, np.inf, -np.inf, np.nan, -np.nan, 16777217.0, 123456.75],
                       np.float32)
    rest = (rng.standard_normal(1024 - special.size) * 10.0 ** rng.integers(-2, 10, 1024 - special.size))
    return np.concatenate([special, rest.astype(np.float32)]).reshape(32, 32)


def _int32_reference(v):
    """int32 of float32 ``v`` as the LLK computes it, written independently: Python's int()
    truncates toward zero."""
    out = np.empty(v.size, np.int64)
    for k, x in enumerate(v.ravel().tolist()):
        out[k] = -2 ** 31 if not np.isfinite(x) or abs(x) >= 2 ** 31 else int(x)
    return out.reshape(v.shape).astype(np.int32)


def _uint32_reference(v):
    out = np.empty(v.size, np.int64)
    for k, (x, neg) in enumerate(zip(v.ravel().tolist(), np.signbit(v).ravel().tolist())):
        out[k] = 0 if neg else (2 ** 32 - 1 if not x < 2 ** 32 else int(x))
    return out.reshape(v.shape).astype(np.uint32)


to_int32 = _unary_operation(lambda x: ttl.math.typecast(x, ttnn.int32))
to_uint32 = _unary_operation(lambda x: ttl.math.typecast(x, "uint32"))
round_trip = _unary_operation(lambda x: ttl.math.typecast(ttl.math.typecast(x, ttnn.int32), ttnn.float32))


@pytest.mark.parametrize("source", ["float32", "bfloat16", "bfloat8_b"])
@pytest.mark.parametrize("target, operation, reference", [
    ("int32", to_int32, _int32_reference), ("uint32", to_uint32, _uint32_reference)])
def test_a_float_cast_to_an_integer_truncates_and_saturates(source, target, operation, reference):
    # a block float shares exponents per 16 values: an infinity there would flush its neighbours
    v = _special_floats() if source != "bfloat8_b" else (
        np.random.default_rng(14).standard_normal((32, 32)) * 8).astype(np.float32)
    inp = ttnn.from_numpy(v, dtype=getattr(ttnn, source), layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=getattr(ttnn, target), layout=ttnn.TILE_LAYOUT)
    operation(inp, out)
    got = ttnn.to_numpy(out)
    assert got.dtype == np.dtype(target)
    held = ttnn.to_numpy(inp).astype(np.float32)       # the values as the input format holds them
    np.testing.assert_array_equal(got, reference(held))
    rounded = np.rint(held[np.isfinite(held) & (np.abs(held) < 2 ** 31)])
    assert not np.array_equal(rounded, reference(held)[np.isfinite(held) & (np.abs(held) < 2 ** 31)])


def test_int32_saturates_positive_overflow_to_int_min():
    inp = ttnn.from_numpy(np.full((32, 32), 3e9, np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT)
    to_int32(inp, out)
    assert (ttnn.to_numpy(out) == np.iinfo(np.int32).min).all()


def test_a_cast_to_int32_and_back_truncates_in_one_kernel():
    v = (np.random.default_rng(12).standard_normal((32, 32)) * 1000).astype(np.float32)
    inp = ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    round_trip(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.trunc(v))


def _int32_values():
    """int32 values of every magnitude, both signs, the limits, and odd values above 2^24 that
    float32 and bfloat16 must round (ties included)."""
    rng = np.random.default_rng(13)
    special = np.array([2 ** 31 - 1, -2 ** 31, -2 ** 31 + 1, 0, 1, -1, 2 ** 24 + 1, 2 ** 24 + 3, -(2 ** 24 + 3),
                        2 ** 25 + 2, 2 ** 25 + 6, 123456789, -123456789, 257, -257, 385, 0x7FFFFF80], np.int64)
    rest = rng.integers(-2 ** 31, 2 ** 31, 1024 - special.size) >> rng.integers(0, 31, 1024 - special.size)
    return np.concatenate([special, rest]).astype(np.int32).reshape(32, 32)


@pytest.mark.parametrize("target", ["float32", "bfloat16"])
def test_int32_cast_to_a_float_rounds_to_nearest_even(target):
    v = _int32_values()
    op = _unary_operation(lambda x: ttl.math.typecast(x, target))
    inp = ttnn.from_numpy(v, dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=getattr(ttnn, target), layout=ttnn.TILE_LAYOUT)
    op(inp, out)
    expected = v.astype(np.float32)                            # numpy: nearest even
    if target == "bfloat16":
        expected = expected.astype(ml_dtypes.bfloat16)
    got = ttnn.to_numpy(out)
    np.testing.assert_array_equal(got, expected)
    assert not np.array_equal(got.astype(np.float64), v.astype(np.float64))    # some values did round


def test_int32_cast_to_bfloat8_b_is_packed_with_shared_exponents():
    v = _int32_values() >> 12
    inp = ttnn.from_numpy(v, dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT)
    _unary_operation(lambda x: ttl.math.typecast(x, ttnn.bfloat8_b))(inp, out)
    bf16 = v.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)
    expected = ttnn.to_numpy(ttnn.from_numpy(bf16, dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT))
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)


@pytest.mark.parametrize("operation, in_dtype, out_dtype, templates", [
    (to_int32, ttnn.float32, ttnn.int32, "(uint32_t)DataFormat::Float32, (uint32_t)DataFormat::Int32"),
    (to_uint32, ttnn.bfloat16, ttnn.uint32, "(uint32_t)DataFormat::Float16_b, (uint32_t)DataFormat::UInt32"),
    (_unary_operation(lambda x: ttl.math.typecast(x, ttnn.bfloat16)), ttnn.int32, ttnn.bfloat16,
     "(uint32_t)DataFormat::Int32, (uint32_t)DataFormat::Float16_b"),
    (round_trip, ttnn.bfloat8_b, ttnn.float32, "(uint32_t)DataFormat::Int32, (uint32_t)DataFormat::Float32"),
])
def test_integer_casts_compile_against_the_real_headers_with_a_32_bit_dst(tmp_path, check_kernel, operation,
                                                                          in_dtype, out_dtype, templates):
    from tilefold.codegen.cpp import emit_kernel

    inp = ttnn.zeros((32, 32), dtype=in_dtype, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=out_dtype, layout=ttnn.TILE_LAYOUT)
    program = compiled(operation, inp, out).program
    kernel = next(k for k in program.kernels if k.name == "compute_fn")
    assert kernel.config.fp32_dest_acc_en
    if in_dtype is ttnn.int32:          # the unpacker writes the int32 tiles straight into DST
        assert [m for _, m in kernel.config.unpack_to_dest_mode] == ["UnpackToDestFp32"]
    text = emit_kernel(kernel.function)
    assert f"typecast_tile_init<{templates}>();" in text
    assert f"typecast_tile<{templates}>(" in text
    path = tmp_path / "compute.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


def test_storing_a_waited_integer_block_copies_it_exactly():
    """Through DST and back, odd values above 2^24 and the limits included."""
    v = _int32_values()
    inp = ttnn.from_numpy(v, dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT)
    _unary_operation(lambda x: x)(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), v)


def test_the_host_program_unpacks_the_int32_buffer_to_dst_and_passes_check_host(tmp_path):
    from checkhost import check_hosts, require_hosts_accepted
    from tilefold.frontend.ttl import session

    v = _int32_values()
    inp = ttnn.from_numpy(v, dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    with session.configured(project_dir=tmp_path):
        _unary_operation(lambda x: ttl.math.typecast(x, ttnn.float32))(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), v.astype(np.float32))
    mains = sorted(tmp_path.glob("*/main.cpp"))
    text = mains[0].read_text()
    assert "UnpackToDestMode::UnpackToDestFp32" in text and ".fp32_dest_acc_en = true" in text
    require_hosts_accepted(check_hosts(mains))


# --- uint32 and the narrow unsigned formats ------------------------------------------------------
# 0.69's LLK (Wormhole B0): uint32 -> float casts the low 31 bits to float32 (nearest even) and,
# when bit 31 is set, adds 2^31 in float32 (nearest even again); -> bfloat16 rounds that to nearest
# even. uint32 -> uint16 saturates at 65535, uint32 -> uint8 keeps the low byte (x & 0xFF);
# uint16 / uint8 -> uint32 keep the value.

def _uint32_values():
    """uint32 values of every magnitude, the limits, and values from 2^31 up whose low 31 bits
    round to a tie of the second rounding (2^31 + 2^25 + 129: once rounded it is 2^31 + 2^25 + 256,
    twice 2^31 + 2^25), as (64, 64)."""
    rng = np.random.default_rng(21)
    special = np.array([0, 1, 255, 256, 65535, 65536, 2 ** 24 + 1, 2 ** 24 + 3, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1,
                        2 ** 31 + 2 ** 25 + 129, 2 ** 31 + 2 ** 25 + 384 + 129, 2 ** 32 - 1, 2 ** 32 - 129,
                        2 ** 32 - 128, 3_000_000_123, 123_456_789], np.uint64)
    n = 64 * 64 - special.size
    rest = rng.integers(0, 2 ** 32, n, dtype=np.uint64) >> rng.integers(0, 32, n).astype(np.uint64)
    return np.concatenate([special, rest]).astype(np.uint32).reshape(64, 64)


def _uint32_to_float32_reference(v):
    """Written independently, element by element: Python floats are doubles, and a double holding
    an integer below 2^32 or a float32 plus 2^31 is exact, so np.float32() of it rounds once."""
    out = np.empty(v.size, np.float32)
    for k, x in enumerate(v.ravel().tolist()):
        low = np.float32(x & 0x7FFFFFFF)                      # nearest even
        out[k] = np.float32(float(low) + 2.0 ** 31) if x >> 31 else low
    return out.reshape(v.shape)


@pytest.mark.parametrize("target", ["float32", "bfloat16"])
def test_uint32_cast_to_a_float_rounds_its_low_bits_then_adds_two_to_the_31(target):
    v = _uint32_values()
    op = _block_op(lambda x: ttl.math.typecast(x, target), 2, 2)
    inp = ttnn.from_numpy(v, dtype=ttnn.uint32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros(v.shape, dtype=getattr(ttnn, target), layout=ttnn.TILE_LAYOUT)
    op(inp, out)
    expected = _uint32_to_float32_reference(v)
    if target == "bfloat16":
        expected = expected.astype(ml_dtypes.bfloat16).astype(np.float32)
    got = ttnn.to_numpy(out).astype(np.float32)
    np.testing.assert_array_equal(got, expected)
    assert got[0, 11] == 2.0 ** 31 + 2.0 ** 25                 # the tie of the second rounding, to even
    single = v.astype(np.float32)                               # one rounding, as numpy does it
    assert target == "bfloat16" or single[0, 11] != got[0, 11]


def test_uint32_cast_to_bfloat8_b_is_packed_with_shared_exponents():
    v = _uint32_values()[:32, :32]
    op = _unary_operation(lambda x: ttl.math.typecast(x, ttnn.bfloat8_b))
    inp = ttnn.from_numpy(v, dtype=ttnn.uint32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT)
    op(inp, out)
    bf16 = _uint32_to_float32_reference(v).astype(ml_dtypes.bfloat16).astype(np.float32)
    expected = ttnn.to_numpy(ttnn.from_numpy(bf16, dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT))
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)


@pytest.mark.parametrize("target, reference", [
    ("uint16", lambda v: np.minimum(v, 65535).astype(np.uint16)),
    ("uint8", lambda v: (v & 0xFF).astype(np.uint8)),
])
def test_uint32_cast_to_uint16_saturates_and_to_uint8_keeps_the_low_byte(target, reference):
    v = _uint32_values()
    op = _block_op(lambda x: ttl.math.typecast(x, target), 2, 2)
    inp = ttnn.from_numpy(v, dtype=ttnn.uint32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros(v.shape, dtype=getattr(ttnn, target), layout=ttnn.TILE_LAYOUT)
    op(inp, out)
    got = ttnn.to_numpy(out)
    assert got.dtype == np.dtype(target)
    np.testing.assert_array_equal(got, reference(v))


@pytest.mark.parametrize("source", ["uint16", "uint8"])
def test_uint16_and_uint8_cast_to_uint32_keep_the_value(source):
    info = np.iinfo(source)
    v = np.random.default_rng(22).integers(0, info.max + 1, (64, 64)).astype(source)
    v[0, :3] = [0, 1, info.max]
    op = _block_op(lambda x: ttl.math.typecast(x, ttnn.uint32), 2, 2)
    inp = ttnn.from_numpy(v, dtype=getattr(ttnn, source), layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros(v.shape, dtype=ttnn.uint32, layout=ttnn.TILE_LAYOUT)
    op(inp, out)
    got = ttnn.to_numpy(out)
    assert got.dtype == np.uint32
    np.testing.assert_array_equal(got, v.astype(np.uint32))


def test_a_float_cast_to_uint32_and_back_in_one_kernel():
    """The saturated 0xFFFFFFFF and the values from 2^31 up come back through the uint32 -> float32
    rounding (2^32 - 1 -> 2^32)."""
    v = _special_floats()
    op = _unary_operation(lambda x: ttl.math.typecast(ttl.math.typecast(x, ttnn.uint32), ttnn.float32))
    inp = ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    op(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), _uint32_to_float32_reference(_uint32_reference(v)))


def test_storing_a_uint16_block_into_a_uint32_buffer_without_a_cast_is_refused_at_the_users_line():
    def body(x):
        return ttl.math.typecast(x, ttnn.uint16)

    op = _unary_operation(body)
    inp = ttnn.zeros((32, 32), dtype=ttnn.uint32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=ttnn.uint32, layout=ttnn.TILE_LAYOUT)
    with pytest.raises(KernelError, match=r"o.store\(\): the value is uint16 but the block is uint32") as e:
        op(inp, out)
    assert "test_ttl_typecast.py:" in str(e.value)


@pytest.mark.parametrize("in_dtype, out_dtype, templates", [
    (ttnn.uint32, ttnn.float32, "(uint32_t)DataFormat::UInt32, (uint32_t)DataFormat::Float32"),
    (ttnn.uint32, ttnn.bfloat16, "(uint32_t)DataFormat::UInt32, (uint32_t)DataFormat::Float16_b"),
    (ttnn.uint32, ttnn.uint16, "(uint32_t)DataFormat::UInt32, (uint32_t)DataFormat::UInt16"),
    (ttnn.uint32, ttnn.uint8, "(uint32_t)DataFormat::UInt32, (uint32_t)DataFormat::UInt8"),
    (ttnn.uint16, ttnn.uint32, "(uint32_t)DataFormat::UInt16, (uint32_t)DataFormat::UInt32"),
    (ttnn.uint8, ttnn.uint32, "(uint32_t)DataFormat::UInt8, (uint32_t)DataFormat::UInt32"),
])
def test_unsigned_casts_compile_against_the_real_headers_with_a_32_bit_dst(tmp_path, check_kernel, in_dtype,
                                                                           out_dtype, templates):
    from tilefold.codegen.cpp import emit_kernel

    op = _block_op(lambda x: ttl.math.typecast(x, out_dtype), 2, 2)
    inp = ttnn.zeros((64, 64), dtype=in_dtype, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((64, 64), dtype=out_dtype, layout=ttnn.TILE_LAYOUT)
    program = compiled(op, inp, out).program
    kernel = next(k for k in program.kernels if k.name == "compute_fn")
    assert kernel.config.fp32_dest_acc_en
    text = emit_kernel(kernel.function)
    assert f"typecast_tile_init<{templates}>();" in text
    assert f"typecast_tile<{templates}>(" in text
    path = tmp_path / "compute.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


def test_the_host_program_of_a_uint16_to_uint32_cast_passes_check_host(tmp_path):
    from checkhost import check_hosts, require_hosts_accepted
    from tilefold.frontend.ttl import session

    v = np.arange(32 * 32, dtype=np.uint16).reshape(32, 32) * 61
    inp = ttnn.from_numpy(v, dtype=ttnn.uint16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32, 32), dtype=ttnn.uint32, layout=ttnn.TILE_LAYOUT)
    with session.configured(project_dir=tmp_path):
        _unary_operation(lambda x: ttl.math.typecast(x, ttnn.uint32))(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), v.astype(np.uint32))
    mains = sorted(tmp_path.glob("*/main.cpp"))
    text = mains[0].read_text()
    assert "DataFormat::UInt16" in text and ".fp32_dest_acc_en = true" in text
    require_hosts_accepted(check_hosts(mains))
