"""The SFPU operations of the compute API: one row per function, the only list of them.

Reads: nothing. Writes: nothing. Each row is one ``<name>_tile`` call of the TT-Metalium 0.69
compute API on DST slots: its shape (``unary``: one slot in place, with extra parameters;
``scalar``: one slot and the bits of a float; ``binary``: two slots into a third), its header,
its init call, the cost family the simulator charges (cycles per family are the device's, in
:mod:`tilefold.arch.costs`) and what it computes on float32 values (the simulator's numerics).
:mod:`tilefold.ir.ttkernel_api` makes the API rows from this table; :mod:`tilefold.sim` runs
them with these functions.

Parameters that carry a float (``value_bits``, ``alpha_bits`` ...) hold its IEEE-754 bits.
Functions the SFPU approximates (``asin``, ``atan``, ``tan``, ``sinh``, ``expm1``, ``elu`` ...) use
the device's own polynomials and reductions (:mod:`tilefold.ir.sfpu_approx`); they depend on
DST's precision (``dest_aware``: their values take ``fp32_dest``). The others are exact in float32.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import ml_dtypes
import numpy as np

from tilefold.ir import sfpu_approx as approx


@dataclass(frozen=True)
class SfpuOp:
    """One SFPU function: the API call ``<name>_tile``."""

    name: str
    arity: str                          # "unary", "scalar" or "binary"
    header: str
    params: tuple[tuple[str, str], ...]  # parameters after the DST slot(s): (name, operand kind)
    init: str                           # the init call that configures the SFPU for it
    cost: str                           # cost family (tilefold.arch.costs.DEFAULT_SFPU_TILE_CYCLES)
    values: Callable                    # float32 values (and the parameters) -> float32 values
    dest_aware: bool = False            # values also take fp32_dest= (DST's precision)
    tilelang: bool = False              # TileLang's element function ``T.<name>`` (inside T.Parallel)
    cpp_name: str | None = None         # the C++ function when one templated function serves several rows
    cpp_templates: str | None = None    # its fixed template arguments (of the call and of its init)
    # the init's uint32 template parameters (name, default): constants the init programs into the
    # SFPU, which every later call reads; ``values`` takes them after the call's parameters
    init_templates: tuple[tuple[str, int], ...] = ()

    @property
    def call(self) -> str:
        return f"{self.name}_tile"


def bits_to_float(bits: int) -> np.float32:
    return np.uint32(bits & 0xFFFFFFFF).view(np.float32)


_f = bits_to_float


def _exp_approx(x, scale_bits=0x3F800000):
    """``exp_tile<true>`` after ``exp_tile_init<true, scale>()`` (approximate, inputs clamped):
    Schraudolph's exponential of ``scale * x`` as 0.69's SFPU computes it. The init folds the
    scale (float32 bits) into its constants, in float32: ``A = 256/ln 2 · scale`` and the clamp
    ``-88.5 / scale``. The call clamps ``x`` below at that, computes ``t = A·x + (B - C)`` with one
    rounding (B - C = 32500.818359375), rounds it to an unsigned 16-bit integer and shifts it left
    by 15 into a float32's exponent and top mantissa bits: 2^(t/256 - 127), within a few percent
    of exp(scale · x)."""
    scale = bits_to_float(scale_bits)
    a = np.float32(np.float32(256.0) * np.float32(1.4426950408889634)) * scale
    threshold = np.float32(-88.5) / scale
    clamped = np.maximum(np.asarray(x, np.float32), threshold)
    t = (np.float64(a) * clamped.astype(np.float64) + np.float64(np.float32(32500.818359375))).astype(np.float32)
    u = np.clip(np.rint(t.astype(np.float64)), 0, 0xFFFF).astype(np.uint32)
    return (u << 15).view(np.float32)


def _gelu(x):
    return 0.5 * x * (1.0 + np.tanh(np.float32(0.7978845608) * (x + np.float32(0.044715) * x * x * x)))


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def _softplus(x, beta, beta_reciprocal, threshold):
    """``(1 / beta) * log(1 + exp(beta * x))``, and ``x`` where ``beta * x`` exceeds the threshold."""
    bx = x * _f(beta)
    with np.errstate(over="ignore"):
        soft = _f(beta_reciprocal) * np.log1p(np.exp(np.minimum(bx, 88.0)))
    return np.where(bx > _f(threshold), x, soft)


def _mask(f):
    return lambda *a: f(*a).astype(np.float32)


def _remainder(a, b, fp32_dest=False):
    """``remainder_binary_tile`` (0.69's ``_sfpu_binary_remainder_``): ``a - floor(a * (1/b)) * b``
    (the reciprocal as float32; the multiply-subtract rounded once, as the SFPU's MAD), moved into
    ``b``'s sign (``+ b`` where the result is nonzero and of the other sign), less ``b`` once more
    where the floor came out low for operands of equal sign, NaN where ``b`` is 0, and rounded to
    bfloat16 unless DST holds float32: Python's and torch's ``a % b`` for floats."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    quotient = np.floor(a * (np.float32(1.0) / b))
    result = (a.astype(np.float64) - quotient.astype(np.float64) * b).astype(np.float32)
    result = np.where((result != 0) & (np.signbit(result) != np.signbit(b)), result + b, result)
    diff = result - b
    result = np.where((b > 0) & (a > 0) & (diff >= 0), diff, result)
    result = np.where((b < 0) & (a < 0) & (diff <= 0), diff, result)
    result = np.where(b == 0, np.float32(np.nan), result).astype(np.float32)
    return result if fp32_dest else _round_bf16(result)


_U = "api/compute/eltwise_unary/"
_CKA = "api/compute/compute_kernel_api.h"
_TRIG = _U + "trigonometry.h"
_ROUND = _U + "rounding.h"
_COMP = _U + "comp.h"
_SCALAR_H = _U + "binop_with_scalar.h"
_BINARY_H = "api/compute/eltwise_binary_sfpu.h"
_MAXMIN_H = "api/compute/binary_max_min.h"
_V = (("value_bits", "u32"),)


def _unary(name, header, values, cost, params=(), init=None, tilelang=False):
    return SfpuOp(name, "unary", header, tuple(params), init or f"{name}_tile_init", cost, values,
                  tilelang=tilelang)


def _approx(name, header, values, cost, params=()):
    """A function the SFPU approximates; ``values(x, *params, fp32_dest=...)``."""
    return SfpuOp(name, "unary", header, tuple(params), f"{name}_tile_init", cost, values, dest_aware=True)


def _scalar(name, values, cost):
    return SfpuOp(name, "scalar", _SCALAR_H, (("scalar_bits", "u32"),), "binop_with_scalar_tile_init", cost, values)


def _round_bf16(x):
    """float32 values rounded to bfloat16 (nearest even), kept in float32."""
    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


# ``typecast_tile<Float32, Float16_b>``: rounds each value in DST to bfloat16 (nearest even)
_TYPECAST_BF16 = SfpuOp("typecast_fp32_to_bf16", "unary", _U + "typecast.h", (), "typecast_fp32_to_bf16_tile_init",
                        "copy", _round_bf16, cpp_name="typecast_tile",
                        cpp_templates="(uint32_t)DataFormat::Float32, (uint32_t)DataFormat::Float16_b")


def _unchanged(x):
    return np.asarray(x, np.float32)


# ``typecast_tile<IN_DTYPE, OUT_DTYPE>`` between the float formats: bfloat16 -> float32 leaves DST as
# it is (the packer writes float32), float32 -> bfloat16 rounds to nearest even on the SFPU. A cast
# from or to a block float (bfloat8_b, bfloat4_b) runs no SFPU code either: the unpacker has already
# expanded the block float, and the packer writes the shared exponents when it packs into a buffer
# of that format.
#
# Float to int32 / uint32 (0.69's fp32_to_int32 / fp32_to_uint32 LLK): the 24-bit significand
# shifted by the exponent, so truncation toward zero. int32: |x| >= 2^31, infinities and NaN give
# INT_MIN (also for positive values). uint32: negative values (and -inf, negative NaN) give 0,
# x >= 2^32, +inf and positive NaN give 0xFFFFFFFF. int32 to float: magnitude cast to float32
# (SFPCAST, nearest even), sign restored, INT_MIN exactly -2^31; to bfloat16 (and the block floats,
# which the packer then packs) also rounded to nearest even (SFP_STOCH_RND, mode 0). DST holds the
# integer results as float32 values (exact: a truncated float32 is a float32) and int32 inputs as
# the unpacker gives them (nearest float32), so int32 -> float32 leaves them as they are.
# uint32 to float (0.69's uint32_to_fp32 / uint32_to_fp16b): the low 31 bits cast to float32
# (nearest even), 2^31 added in float32 (nearest even) when the top bit is set, so values from 2^31
# up are rounded twice; to bfloat16 (and the block floats) that is rounded again to nearest even.
# uint32 to uint16 saturates at 65535; uint32 to uint8 keeps the low byte (x & 0xFF, a wrap, as
# uint_to_uint8 masks it); uint16 and uint8 to uint32 keep the value. These read the integers a
# slot holds exactly (``ints``, see :func:`typecast_values`).
_FLOATS = ("Float16_b", "Float32", "Bfp8_b", "Bfp4_b")
_INT_MIN = np.float32(-2.0 ** 31)


def _to_int32(x):
    x = np.asarray(x, np.float32)
    with np.errstate(invalid="ignore"):
        inside = np.abs(x) < np.float32(2.0 ** 31)          # False for infinities and NaN
        return np.where(inside, np.trunc(x), _INT_MIN).astype(np.float32)


def _to_uint32(x):
    x = np.asarray(x, np.float32)
    negative = np.signbit(x)
    with np.errstate(invalid="ignore"):
        inside = x < np.float32(2.0 ** 32)                   # False for +inf and NaN
        out = np.where(inside, np.trunc(x), np.float32(4294967295.0))
    return np.where(negative, np.float32(0), out).astype(np.float32)


_TWO_31 = np.float32(2.0 ** 31)


def _uint32_to_float32(u):
    u = np.asarray(u, np.int64)
    low = (u & 0x7FFFFFFF).astype(np.float32)              # SFPCAST: nearest even
    return np.where(u >= 2 ** 31, low + _TWO_31, low).astype(np.float32)


def _uint32_to_bf16(u):
    return _round_bf16(_uint32_to_float32(u))


def _saturate_uint16(u):
    return np.minimum(np.asarray(u, np.int64), 0xFFFF).astype(np.float32)


def _low_byte(u):
    return (np.asarray(u, np.int64) & 0xFF).astype(np.float32)


def _int_unchanged(u):
    return np.asarray(u, np.int64).astype(np.float32)


TYPECASTS: dict[tuple[str, str], Callable] = {
    (a, b): _round_bf16 if (a, b) == ("Float32", "Float16_b") else _unchanged
    for a in _FLOATS for b in _FLOATS if a != b
}
TYPECASTS.update({(a, "Int32"): _to_int32 for a in _FLOATS})
TYPECASTS.update({(a, "UInt32"): _to_uint32 for a in _FLOATS})
TYPECASTS.update({("Int32", b): _unchanged if b == "Float32" else _round_bf16 for b in _FLOATS})
TYPECASTS.update({("UInt32", b): _uint32_to_float32 if b == "Float32" else _uint32_to_bf16 for b in _FLOATS})
TYPECASTS.update({("UInt32", "UInt16"): _saturate_uint16, ("UInt32", "UInt8"): _low_byte,
                  ("UInt16", "UInt32"): _int_unchanged, ("UInt8", "UInt32"): _int_unchanged})
# the integer formats; typecast_tile needs a 32-bit DST (fp32_dest_acc_en) for them, as for Float32
INTEGER_32 = ("Int32", "UInt32", "UInt16", "UInt8")
INTEGER_RANGES = {"Int32": (-2 ** 31, 2 ** 31 - 1), "UInt32": (0, 2 ** 32 - 1), "UInt16": (0, 0xFFFF), "UInt8": (0, 0xFF)}


def typecast_values(x, in_dtype: str, out_dtype: str, ints=None) -> np.ndarray:
    """float32 DST values after ``typecast_tile<in_dtype, out_dtype>`` (``tt::DataFormat`` names;
    one of :data:`TYPECASTS`). From an integer format the cast reads ``ints``, the integers the
    slot holds exactly (int64) when known, else ``x`` rounded to integers of that format's range."""
    if in_dtype in INTEGER_RANGES:
        if ints is None:
            lo, hi = INTEGER_RANGES[in_dtype]
            ints = np.clip(np.rint(np.asarray(x, np.float64)), lo, hi).astype(np.int64)
        x = ints
    return TYPECASTS[in_dtype, out_dtype](x)


def _binary(name, values, cost, header=_BINARY_H, dest_aware=False):
    return SfpuOp(name, "binary", header, (), f"{name}_tile_init", cost, values, dest_aware=dest_aware)


_ROUNDING_INIT = "rounding_op_tile_init"     # the rounding functions share one init in 0.69

SFPU_OPS: tuple[SfpuOp, ...] = (
    _unary("exp", _U + "exp.h", np.exp, "exp", tilelang=True),
    # ``exp_tile<approx=false, scale_en=true>(slot, VectorMode::RC, scale)``: exp(scale * x), the scale
    # a bfloat16 (its 16 bits) multiplied in on the SFPU in float32 (ttl.math.exp(x, scale=s))
    SfpuOp("exp_scaled", "unary", _U + "exp.h", (("vector_mode", "i32"), ("scale_bf16_bits", "u32")), "exp_tile_init",
           "exp", lambda x, mode, scale: np.exp(x * _f(int(scale) << 16)), cpp_name="exp_tile",
           cpp_templates="false, true"),
    # ``exp_tile<true>`` / ``exp_tile_init<true[, scale]>()``: the approximate exp of scale * x
    # (ttl.math.exp(x, approx=True[, scale=s])); the scale (float32 bits) is the init's alone: the
    # call's runtime scale and scale_en are not read on the approximate path
    SfpuOp("exp_approx", "unary", _U + "exp.h", (), "exp_approx_tile_init", "exp", _exp_approx, cpp_name="exp_tile",
           cpp_templates="true", init_templates=(("scale", 0x3F800000),)),
    _unary("exp2", _CKA, np.exp2, "exp2", tilelang=True),
    _unary("log", _CKA, np.log, "log", tilelang=True),
    _unary("sqrt", _U + "sqrt.h", np.sqrt, "sqrt", tilelang=True),
    _unary("rsqrt", _U + "rsqrt.h", lambda x: 1.0 / np.sqrt(x), "rsqrt", tilelang=True),
    _unary("recip", _U + "recip.h", lambda x: 1.0 / x, "recip"),
    _unary("square", _CKA, lambda x: x * x, "square"),
    _unary("tanh", _CKA, np.tanh, "tanh", tilelang=True),
    _unary("sigmoid", _CKA, _sigmoid, "sigmoid", tilelang=True),
    _unary("relu", _U + "relu.h", lambda x: np.maximum(x, 0), "relu"),
    _unary("gelu", _U + "gelu.h", _gelu, "gelu"),
    _unary("silu", _CKA, lambda x: x * _sigmoid(x), "silu"),
    _unary("sin", _TRIG, np.sin, "sin", tilelang=True),
    _unary("cos", _TRIG, np.cos, "cos", tilelang=True),
    _unary("abs", _CKA, np.abs, "abs", tilelang=True),
    _unary("negative", _U + "negative.h", lambda x: -x, "neg"),
    _unary("floor", _ROUND, np.floor, "floor", init=_ROUNDING_INIT, tilelang=True),
    _unary("ceil", _ROUND, np.ceil, "ceil", init=_ROUNDING_INIT, tilelang=True),
    _unary("sign", _CKA, np.sign, "compare"),
    _unary("fill", _U + "fill.h", lambda x, v: np.full_like(x, np.float32(v)), "fill", (("value", "f32"),)),
    _unary("clamp", _U + "clamp.h", lambda x, lo, hi: np.clip(x, _f(lo), _f(hi)), "clamp",
           (("min_bits", "u32"), ("max_bits", "u32"))),
    _unary("unary_max", _CKA, lambda x, v: np.maximum(x, _f(v)), "max", _V),
    _unary("unary_min", _CKA, lambda x, v: np.minimum(x, _f(v)), "min", _V),
    _unary("power", _CKA, lambda x, e: np.power(x, np.float32(e)), "power", (("exponent", "u32"),)),
    _unary("trunc", _ROUND, np.trunc, "floor", init=_ROUNDING_INIT, tilelang=True),
    _unary("gtz", _COMP, _mask(lambda x: x > 0), "compare"),
    _unary("gez", _COMP, _mask(lambda x: x >= 0), "compare"),
    _unary("ltz", _COMP, _mask(lambda x: x < 0), "compare"),
    _unary("lez", _COMP, _mask(lambda x: x <= 0), "compare"),
    _unary("eqz", _COMP, _mask(lambda x: x == 0), "compare"),
    _unary("nez", _COMP, _mask(lambda x: x != 0), "compare"),
    _unary("unary_gt", _COMP, _mask(lambda x, v: x > _f(v)), "compare", _V),
    _unary("unary_ge", _COMP, _mask(lambda x, v: x >= _f(v)), "compare", _V),
    _unary("unary_lt", _COMP, _mask(lambda x, v: x < _f(v)), "compare", _V),
    _unary("unary_le", _COMP, _mask(lambda x, v: x <= _f(v)), "compare", _V),
    _unary("unary_eq", _COMP, _mask(lambda x, v: x == _f(v)), "compare", _V),
    _unary("unary_ne", _COMP, _mask(lambda x, v: x != _f(v)), "compare", _V),
    # cumsum carries its last row to the next call in SFPU registers: the simulator implements
    # it by itself (these values are one tile's, first=true)
    _unary("cumsum", "api/compute/cumsum.h", None, "cumsum", (("first", "u32"),)),
    _approx("asin", _TRIG, approx.asin, "trig"),
    _approx("acos", _TRIG, approx.acos, "trig"),
    _approx("atan", _TRIG, approx.atan, "trig"),
    _approx("sinh", _TRIG, approx.sinh, "trig"),
    _approx("cosh", _TRIG, approx.cosh, "trig"),
    _unary("asinh", _TRIG, np.arcsinh, "trig"),
    _unary("acosh", _TRIG, np.arccosh, "trig"),
    _unary("atanh", _TRIG, np.arctanh, "trig"),
    _approx("tan", _TRIG, approx.tan, "trig"),
    _unary("softsign", _U + "activations.h", lambda x: x / (1.0 + np.abs(x)), "recip"),
    _unary("hardsigmoid", _U + "activations.h",
           lambda x: np.clip(x * np.float32(1.0 / 6.0) + np.float32(0.5), 0.0, 1.0), "clamp"),
    _approx("celu", _U + "activations.h",
            lambda x, a, ra, fp32_dest=False: approx.celu(x, _f(a), _f(ra), fp32_dest), "exp",
            (("alpha_bits", "u32"), ("alpha_recip_bits", "u32"))),
    _approx("elu", _U + "elu.h", lambda x, a, fp32_dest=False: approx.elu(x, _f(a), fp32_dest), "exp",
            (("alpha_bits", "u32"),)),
    _approx("selu", _U + "selu.h",
            lambda x, sc, a, fp32_dest=False: approx.selu(x, _f(sc), _f(a), fp32_dest), "exp",
            (("scale_bits", "u32"), ("alpha_bits", "u32"))),
    _unary("leaky_relu", _U + "relu.h", lambda x, k: np.where(x < 0, x * _f(k), x), "relu", (("slope_bits", "u32"),)),
    _unary("prelu", _U + "prelu.h", lambda x, k: np.where(x < 0, x * _f(k), x), "relu", (("alpha_bits", "u32"),)),
    _unary("softplus", _U + "softplus.h", _softplus, "exp",
           (("beta_bits", "u32"), ("beta_reciprocal_bits", "u32"), ("threshold_bits", "u32"))),
    _unary("threshold", _U + "threshold.h", lambda x, t, v: np.where(x <= _f(t), _f(v), x), "compare",
           (("threshold_bits", "u32"), ("value_bits", "u32"))),
    _approx("expm1", _CKA, approx.expm1, "exp"),
    _unary("signbit", _CKA, _mask(np.signbit), "compare"),
    _unary("log1p", _U + "log1p.h", np.log1p, "log"),
    _unary("frac", _ROUND, lambda x: x - np.trunc(x), "floor", init=_ROUNDING_INIT),
    _TYPECAST_BF16,
    _unary("round", _ROUND, lambda x, d: np.round(x, int(np.int32(np.uint32(d & 0xFFFFFFFF)))), "floor",
           (("decimals", "i32"),), init=_ROUNDING_INIT),
    # a float scalar with one DST slot
    _scalar("add_unary", lambda x, v: x + _f(v), "add"),
    _scalar("sub_unary", lambda x, v: x - _f(v), "sub"),
    _scalar("mul_unary", lambda x, v: x * _f(v), "mul"),
    _scalar("div_unary", lambda x, v: x / _f(v), "div"),
    _scalar("rsub_unary", lambda x, v: _f(v) - x, "rsub"),
    # two DST slots into a third
    _binary("add_binary", np.add, "add"),
    _binary("sub_binary", np.subtract, "sub"),
    _binary("mul_binary", np.multiply, "mul"),
    _binary("div_binary", np.divide, "div"),
    _binary("rsub_binary", lambda a, b: b - a, "rsub"),
    _binary("power_binary", np.power, "power"),
    _binary("eq_binary", _mask(np.equal), "compare"),
    _binary("ne_binary", _mask(np.not_equal), "compare"),
    _binary("lt_binary", _mask(np.less), "compare"),
    _binary("gt_binary", _mask(np.greater), "compare"),
    _binary("le_binary", _mask(np.less_equal), "compare"),
    _binary("ge_binary", _mask(np.greater_equal), "compare"),
    _binary("binary_max", np.maximum, "max", _MAXMIN_H),
    _binary("binary_min", np.minimum, "min", _MAXMIN_H),
    _binary("remainder_binary", _remainder, "power", "api/compute/binary_remainder.h", dest_aware=True),
)

SFPU: dict[str, SfpuOp] = {op.name: op for op in SFPU_OPS}


@dataclass(frozen=True)
class IntegerSfpuOp:
    """One SFPU function on the integers two DST slots hold, into a third: the API call
    ``<name>_tile`` (its numbers computed on int64 and wrapped to the format by the simulator)."""

    name: str                           # add_int, binary_max_int32 ...
    block_op: str                       # the block operation it computes: add, max ...
    header: str
    values: Callable                    # (int64, int64) -> int64
    data_format: str | None = None      # the one format it takes; None: a template argument
    templated_init: bool = False        # its init takes the format too (mul_int_tile_init<fmt>)

    @property
    def call(self) -> str:
        return f"{self.name}_tile"

    @property
    def init(self) -> str:
        return f"{self.name}_tile_init"

    def takes(self, data_format: str) -> bool:
        return data_format == self.data_format if self.data_format else data_format in INTEGER_ARITHMETIC


# the integer formats + - * compute on (add_int_tile<fmt> ...)
INTEGER_ARITHMETIC = ("Int32", "UInt32", "UInt16")
_MAX_MIN_H = "api/compute/binary_max_min.h"

INTEGER_SFPU_OPS: tuple[IntegerSfpuOp, ...] = (
    IntegerSfpuOp("add_int", "add", "api/compute/add_int_sfpu.h", np.add),
    IntegerSfpuOp("sub_int", "sub", "api/compute/sub_int_sfpu.h", np.subtract),
    IntegerSfpuOp("mul_int", "mul", "api/compute/mul_int_sfpu.h", np.multiply, templated_init=True),
    *(IntegerSfpuOp(f"binary_{op}_{fmt.lower()}", op, _MAX_MIN_H, fn, fmt)
      for op, fn in (("max", np.maximum), ("min", np.minimum)) for fmt in ("Int32", "UInt32")),
    # int32 comparisons: 1 where true, else 0 (0.69 has them for int32 only; their header needs
    # sfpi's names in scope first, see ttkernel_api.HEADER_PREREQUISITES)
    *(IntegerSfpuOp(f"{op}_int32", op, "api/compute/binary_comp.h",
                    (lambda f: lambda a, b: f(a, b).astype(np.int64))(fn), "Int32")
      for op, fn in (("gt", np.greater), ("ge", np.greater_equal), ("lt", np.less), ("le", np.less_equal))),
)
INTEGER_SFPU: dict[str, IntegerSfpuOp] = {op.call: op for op in INTEGER_SFPU_OPS}


def integer_op_for(block_op: str, data_format: str) -> IntegerSfpuOp | None:
    """The integer SFPU function computing ``block_op`` on blocks of ``data_format``, if any."""
    return next((op for op in INTEGER_SFPU_OPS if op.block_op == block_op and op.takes(data_format)), None)
# TileLang's element functions: the rows it spells ``T.<name>``, and the logarithms it computes
# as ``log`` times a constant (``T.log2``, ``T.log10``: their bases)
TILELANG_FUNCTIONS: tuple[str, ...] = tuple(op.name for op in SFPU_OPS if op.tilelang)
TILELANG_LOGARITHMS: dict[str, float] = {"log2": 2.0, "log10": 10.0}
# by API call name (``exp_tile``)
SFPU_CALLS: dict[str, SfpuOp] = {op.call: op for op in SFPU_OPS}


def sfpu_values(name: str, *values_and_params, fp32_dest: bool = False) -> np.ndarray:
    """SFPU function ``name`` on float32 DST values (any shape) and its parameters, as float32;
    ``fp32_dest``: DST holds float32 (the approximated functions depend on it)."""
    op = SFPU[name]
    with np.errstate(all="ignore"):
        if op.dest_aware:
            return np.asarray(op.values(*values_and_params, fp32_dest=fp32_dest), dtype=np.float32)
        return np.asarray(op.values(*values_and_params), dtype=np.float32)


__all__ = ["SfpuOp", "SFPU_OPS", "SFPU", "SFPU_CALLS", "IntegerSfpuOp", "INTEGER_SFPU_OPS", "INTEGER_SFPU",
           "INTEGER_ARITHMETIC", "integer_op_for", "TYPECASTS", "INTEGER_32", "typecast_values", "TILELANG_FUNCTIONS", "TILELANG_LOGARITHMS", "sfpu_values", "bits_to_float"]
