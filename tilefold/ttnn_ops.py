"""TT-NN's host operations as numpy computes them: the table of names (aliases included) of the
element-wise, reduction, sorting, indexing and shape operations of the host ``ttnn`` module.

Reads: :class:`Value` operands (a tensor's host values and data type name). Writes: a
:class:`Value`, or a tuple of them (``sort``, ``topk``, ``split``). Floating-point arithmetic is
float32, element-wise functions are evaluated in float64 and rounded once to float32; the host
module then rounds each result to its output data type (bfloat16 to nearest even ...). Integer
operands of integer operations compute exactly and wrap around to the format's width, as the
device's integer SFPU ops do; two integer tensors divide to float32 (``div_int32``) unless a
``round_mode`` keeps the quotient integral. Output data types follow TT-NN: an operation's
``dtype=`` or its first tensor's, indices ``uint16`` (``uint32`` past 32768 values) for ``sort`` /
``topk``, ``uint32`` for ``argmax``.
"""

from __future__ import annotations

import builtins
import inspect
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from tilefold.caller import user_location
from tilefold.errors import LayoutError

INT_DTYPES = {"uint32": np.uint32, "int32": np.int32, "uint16": np.uint16, "uint8": np.uint8}


@dataclass(frozen=True)
class Value:
    """An operand: host values (float32 for float data types) and the TT-NN data type name; a
    result may name its layout (``layout=`` of the op; else the first tensor's)."""

    values: np.ndarray
    dtype: str
    layout: object = None

    @property
    def is_int(self) -> bool:
        return self.dtype in INT_DTYPES


OPS: dict[str, Callable] = {}       # TT-NN name -> the function of Values computing it
INPLACE: set[str] = set()           # names whose result is written into their first tensor


def op(*names: str, inplace: tuple[str, ...] = ()):
    """Register a host operation under TT-NN's names (the first is its own, the others aliases),
    and ``inplace`` names that write the result into the first operand."""
    def register(fn):
        for name in names + inplace:
            OPS[name] = fn
        INPLACE.update(inplace)
        return fn
    return register


def fail(message: str):
    return LayoutError(message, user_location())


# --- helpers ------------------------------------------------------------------------------------


def _num(x, like: Value | None = None):
    """The values of an operand: a Value's, or a Python number (an int stays integral next to
    an integer tensor, otherwise float32)."""
    if isinstance(x, Value):
        return x.values
    if not isinstance(x, (int, float, np.number, np.bool_)):    # np.float32(None) would be NaN
        from tilefold.frontend.ttl.host_types import conversion_hint

        hint = conversion_hint(x)
        if hint:
            raise fail(f"an operand is {type(x).__name__}, not a tensor or a number; it is {hint}")
        raise fail(f"operand {' '.join(repr(x).split())[:80]} is not a tensor or a number")
    if isinstance(x, (bool, np.bool_)):
        x = int(x)
    if like is not None and like.is_int and isinstance(x, (int, np.integer)):
        return np.int64(x)
    return np.float32(x)


def _first(*xs) -> Value:
    for x in xs:
        if isinstance(x, Value):
            return x
    raise fail("a host ttnn operation needs a tensor operand")


def _all_int(*xs) -> bool:
    return builtins.all(x.is_int if isinstance(x, Value) else isinstance(x, (int, np.integer)) for x in xs)


def cast(values, dtype: str) -> np.ndarray:
    """``values`` as the host array of ``dtype``: float32 for float types; integers rounded to
    nearest (ties to even) and saturated to the type's range, as the device's typecast does."""
    values = np.asarray(values)
    if dtype not in INT_DTYPES:
        return values.astype(np.float32)
    target = np.dtype(INT_DTYPES[dtype])
    if values.dtype.kind in "iub":
        info = np.iinfo(target)
        return np.clip(values.astype(np.int64), info.min, info.max).astype(target)
    info = np.iinfo(target)
    with np.errstate(invalid="ignore"):
        rounded = np.rint(values.astype(np.float64))
        rounded = np.where(np.isnan(rounded), 0, np.clip(rounded, info.min, info.max))
    return rounded.astype(target)


def _wrapped(values, dtype: str) -> Value:
    """The integer results of integer arithmetic as ``dtype``: wrapped around to its width (two's
    complement), as the device's integer SFPU ops compute them (``INT_MAX + 1`` is ``INT_MIN``)."""
    return Value(np.asarray(values).astype(np.int64).astype(INT_DTYPES[dtype]), dtype)


def _out(values, like: Value, dtype: str | None = None) -> Value:
    dtype = dtype or like.dtype
    return Value(cast(values, dtype), dtype)


def _dim(dim, rank: int, name: str) -> int:
    if not isinstance(dim, (int, np.integer)) or not -builtins.max(rank, 1) <= dim < builtins.max(rank, 1):
        raise fail(f"ttnn.{name}(dim={dim!r}): a {rank}-D tensor has dims {-rank}..{rank - 1}")
    return int(dim) % builtins.max(rank, 1)


# --- element-wise: one operand ------------------------------------------------------------------


def _erfc_tail(z):
    """erfc(z) for z >= 0 in float64 to about 1e-7 relative (the Chebyshev fit of Numerical
    Recipes, 6.2)."""
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))
    return t * np.exp(poly)


def _erfc(x):
    tail = _erfc_tail(np.abs(x))
    return np.where(x >= 0, tail, 2.0 - tail)


def erf(x):
    """erf in float64: its Maclaurin series below |x| = 0.5 (where 1 - erfc would lose the digits
    of a small result), 1 - erfc above."""
    x = np.asarray(x, dtype=np.float64)
    x2 = x * x
    series, term = np.zeros_like(x), x.copy()
    for n in range(12):                 # x (1 - x²/3 + x⁴/10 - ...) 2/√π, converged to 1e-17 at |x| = 0.5
        series += term / (2 * n + 1)
        term = -term * x2 / (n + 1)
    return np.where(np.abs(x) < 0.5, series * (2.0 / np.sqrt(np.pi)), np.sign(x) * (1.0 - _erfc_tail(np.abs(x))))


def _gelu(x):
    """GELU as TT-NN's default and torch's: ``x Φ(x)`` with erf, in float32 steps as torch computes
    it (``1 + erf`` cancels for negative ``x``)."""
    x = x.astype(np.float32)
    e = erf(x.astype(np.float64) * np.float64(np.float32(np.sqrt(0.5)))).astype(np.float32)
    return (np.float32(0.5) * x * (np.float32(1) + e)).astype(np.float64)


def _gelu_tanh(x):
    """The tanh approximation, in float32 steps as torch computes it."""
    x = x.astype(np.float32)
    inner = np.float32(np.sqrt(2.0 / np.pi)) * (x + np.float32(0.044715) * x * x * x)
    return (np.float32(0.5) * x * (np.float32(1) + np.tanh(inner))).astype(np.float64)


def _softplus(x, beta=1.0, threshold=20.0):
    bx = beta * x
    return np.where(bx > threshold, x, np.log1p(np.exp(np.minimum(bx, threshold))) / beta)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772, 1.0507009873554805

# name -> (function of float64 values and the op's parameters, exact on integer tensors)
UNARY: dict[str, tuple[Callable, bool]] = {
    "abs": (np.abs, True), "neg": (np.negative, True), "square": (np.square, True), "sign": (np.sign, True),
    "relu": (lambda x: np.maximum(x, 0), True), "identity": (lambda x: x, True),
    "floor": (np.floor, True), "ceil": (np.ceil, True), "trunc": (np.trunc, True),
    "sqrt": (np.sqrt, False), "rsqrt": (lambda x: 1 / np.sqrt(x), False), "reciprocal": (lambda x: 1 / x, False),
    "cbrt": (np.cbrt, False), "exp": (np.exp, False), "exp2": (np.exp2, False), "expm1": (np.expm1, False),
    "log": (np.log, False), "log2": (np.log2, False), "log10": (np.log10, False), "log1p": (np.log1p, False),
    "sin": (np.sin, False), "cos": (np.cos, False), "tan": (np.tan, False), "asin": (np.arcsin, False),
    "acos": (np.arccos, False), "atan": (np.arctan, False), "sinh": (np.sinh, False), "cosh": (np.cosh, False),
    "tanh": (np.tanh, False), "asinh": (np.arcsinh, False), "acosh": (np.arccosh, False),
    "atanh": (np.arctanh, False), "deg2rad": (np.deg2rad, False), "rad2deg": (np.rad2deg, False),
    "frac": (lambda x: x - np.trunc(x), False), "signbit": (lambda x: np.signbit(x).astype(np.float64), False),
    "erf": (erf, False), "erfc": (_erfc, False),
    "sigmoid": (_sigmoid, False), "silu": (lambda x: x * _sigmoid(x), False),
    "relu6": (lambda x: np.clip(x, 0, 6), False), "softsign": (lambda x: x / (1 + np.abs(x)), False),
    "tanhshrink": (lambda x: x - np.tanh(x), False),
    "hardsigmoid": (lambda x: np.clip(x / 6 + 0.5, 0, 1), False),
    "hardswish": (lambda x: x * np.clip(x / 6 + 0.5, 0, 1), False),
    "mish": (lambda x: x * np.tanh(_softplus(x)), False),
    "selu": (lambda x: _SELU_SCALE * np.where(x > 0, x, _SELU_ALPHA * np.expm1(x)), False),
    "isfinite": (lambda x: np.isfinite(x).astype(np.float64), False),
    "isinf": (lambda x: np.isinf(x).astype(np.float64), False),
    "isnan": (lambda x: np.isnan(x).astype(np.float64), False),
    "isposinf": (lambda x: np.isposinf(x).astype(np.float64), False),
    "isneginf": (lambda x: np.isneginf(x).astype(np.float64), False),
    "logical_not": (lambda x: (x == 0).astype(np.float64), True),
    "eqz": (lambda x: (x == 0).astype(np.float64), True), "nez": (lambda x: (x != 0).astype(np.float64), True),
    "gtz": (lambda x: (x > 0).astype(np.float64), True), "ltz": (lambda x: (x < 0).astype(np.float64), True),
    "gez": (lambda x: (x >= 0).astype(np.float64), True), "lez": (lambda x: (x <= 0).astype(np.float64), True),
    # with parameters (TT-NN's keyword names and defaults)
    "leaky_relu": (lambda x, negative_slope=0.01: np.where(x >= 0, x, x * negative_slope), False),
    "elu": (lambda x, alpha=1.0: np.where(x > 0, x, alpha * np.expm1(x)), False),
    "celu": (lambda x, alpha=1.0: np.maximum(x, 0) + np.minimum(0, alpha * np.expm1(x / alpha)), False),
    "softplus": (_softplus, False),
    "hardtanh": (lambda x, min_val=-1.0, max_val=1.0: np.clip(x, min_val, max_val), False),
    "tril": (lambda x, diagonal=0: np.tril(x, diagonal), True), "triu": (lambda x, diagonal=0: np.triu(x, diagonal), True),
    "i0": (np.i0, False), "lgamma": (np.vectorize(math.lgamma, otypes=[np.float64]), False),
    "relu_max": (lambda x, upper_limit: np.clip(x, 0, upper_limit), False),
    "relu_min": (lambda x, lower_limit: np.maximum(x, lower_limit), False),
    "heaviside": (lambda x, value: np.where(x == 0, value, (x > 0).astype(np.float64)), False),
    "threshold": (lambda x, threshold, value: np.where(x > threshold, x, value), False),
    "logit": (lambda x, eps=None: np.log((z := x if eps is None else np.clip(x, eps, 1 - eps)) / (1 - z)), False),
    "round": (lambda x, decimals=0: np.round(x, decimals), True),
    "rpow": (lambda x, exponent: np.power(exponent, x), False),
}


def _parameters(fn: Callable) -> frozenset:
    """The keyword parameters of an element-wise function of :data:`UNARY` (none for a numpy ufunc,
    whose own keywords — ``where=``, ``out=`` ... — are not TT-NN's)."""
    if isinstance(fn, np.ufunc):
        return frozenset()
    return frozenset(list(inspect.signature(fn).parameters)[1:])


def _unary_op(name: str, fn: Callable, exact_int: bool):
    parameters = _parameters(fn)

    def compute(a: Value, *params, memory_config=None, output_tensor=None, queue_id=None, dtype: str | None = None,
                **kwargs) -> Value:
        for key in kwargs:
            if key not in parameters:
                raise TypeError(f"got an unexpected keyword argument {key!r}")
        if a.is_int and exact_int:
            values = fn(a.values.astype(np.int64), *params, **kwargs)
            return _wrapped(values, dtype or a.dtype) if (dtype or a.dtype) in INT_DTYPES else _out(values, a, dtype)
        with np.errstate(all="ignore"):
            return _out(fn(a.values.astype(np.float64), *params, **kwargs).astype(np.float32), a, dtype)
    compute.__name__ = name
    compute.passes_keywords = True       # its other keywords are the function's (an unknown one is an error)
    return compute


for _name, (_fn, _exact) in UNARY.items():
    OPS[_name] = _unary_op(_name, _fn, _exact)
OPS["negative"] = OPS["neg"]
OPS["copy"] = _unary_op("copy", lambda x: x, True)     # ttnn.copy(a, b) writes it into b (tilefold.ttnn)
INPLACE.update({"relu_", "exp_"})
OPS["relu_"], OPS["exp_"] = OPS["relu"], OPS["exp"]


@op("gelu")
def gelu(a: Value, *, fast_and_approximate_mode: bool = False, **_) -> Value:
    """erf GELU, or its tanh approximation with ``fast_and_approximate_mode=True``."""
    with np.errstate(all="ignore"):
        values = (_gelu_tanh if fast_and_approximate_mode else _gelu)(a.values.astype(np.float64))
    return _out(values.astype(np.float32), a)


@op("clamp", "clip")
def clamp(a: Value, min=None, max=None, **_) -> Value:  # noqa: A002 - TT-NN's names
    if min is None and max is None:
        raise fail("ttnn.clamp needs min=, max= or both")
    lo = None if min is None else _num(min, a)
    hi = None if max is None else _num(max, a)
    values = a.values if a.is_int else a.values.astype(np.float32)
    if lo is not None:
        values = np.maximum(values, lo)
    if hi is not None:
        values = np.minimum(values, hi)
    return _out(values, a)


@op("typecast")
def typecast(a: Value, dtype: str, **_) -> Value:
    """``a`` as ``dtype``. Floats to int32 / uint32 as the device's SFPU typecast does: truncated
    toward zero; int32 gives INT_MIN for |x| ≥ 2³¹, infinities and NaN; uint32 gives 0 for negative
    values (and negative NaN) and 0xFFFFFFFF from 2³² on (and for +inf, positive NaN). Other integer
    types round to nearest and saturate."""
    if dtype in ("int32", "uint32") and not a.is_int:
        x = a.values.astype(np.float64)
        with np.errstate(invalid="ignore"):
            whole = np.trunc(np.where(np.isnan(x), 0.0, x))
            if dtype == "int32":
                bad = np.isnan(x) | (np.abs(x) >= 2.0 ** 31)
                return Value(np.where(bad, -2 ** 31, whole).astype(np.int32), dtype)
            negative = np.signbit(x)
            high = ~negative & (np.isnan(x) | (x >= 2.0 ** 32))
            values = np.where(negative, 0, np.where(high, 2 ** 32 - 1, whole))
        return Value(values.astype(np.uint32), dtype)
    return Value(cast(a.values, dtype), dtype)


@op("bitwise_not")
def bitwise_not(a: Value, **_) -> Value:
    if not a.is_int:
        raise fail(f"ttnn.bitwise_not takes an integer tensor, not {a.dtype}")
    return _out(np.invert(a.values), a)


# --- element-wise: two operands ------------------------------------------------------------------


def _fmod(a, b):
    return np.fmod(a, b)


# name -> (float function, integer function or None: the float one on int64)
BINARY: dict[str, tuple[Callable, Callable | None]] = {
    "add": (np.add, np.add), "subtract": (np.subtract, np.subtract), "multiply": (np.multiply, np.multiply),
    "rsub": (lambda a, b: b - a, lambda a, b: b - a),
    "maximum": (np.maximum, np.maximum), "minimum": (np.minimum, np.minimum),
    "squared_difference": (lambda a, b: np.square(a - b), lambda a, b: np.square(a - b)),
    "eq": (np.equal, np.equal), "ne": (np.not_equal, np.not_equal), "gt": (np.greater, np.greater),
    "ge": (np.greater_equal, np.greater_equal), "lt": (np.less, np.less), "le": (np.less_equal, np.less_equal),
    "logical_and": (lambda a, b: (a != 0) & (b != 0), None), "logical_or": (lambda a, b: (a != 0) | (b != 0), None),
    "logical_xor": (lambda a, b: (a != 0) ^ (b != 0), None),
    "pow": (np.power, None), "atan2": (np.arctan2, None), "hypot": (np.hypot, None),
    "logaddexp": (np.logaddexp, None), "logaddexp2": (np.logaddexp2, None),
    "xlogy": (lambda a, b: np.where(a == 0, 0.0, a * np.log(b)), None),
    "remainder": (np.remainder, np.remainder), "fmod": (_fmod, _fmod),
    "floor_div": (lambda a, b: np.floor(a / b), np.floor_divide),
    "div_no_nan": (lambda a, b: np.where(b == 0, 0.0, a / np.where(b == 0, 1, b)), None),
    "ldexp": (lambda a, b: a * np.exp2(b), None),
    "bias_gelu": (lambda a, b: _gelu(a + b), None),
}
_COMPARISONS = {"eq", "ne", "gt", "ge", "lt", "le", "logical_and", "logical_or", "logical_xor"}
_F64 = {"pow", "atan2", "hypot", "logaddexp", "logaddexp2", "xlogy", "bias_gelu", "ldexp"}   # functions, not arithmetic


def _binary_op(name: str, fn: Callable, int_fn: Callable | None):
    def compute(a, b, *, dtype: str | None = None, memory_config=None, output_tensor=None, queue_id=None,
                activations=None, use_legacy=None, input_tensor_a_activations=None, input_tensor_b_activations=None,
                **_) -> Value:
        for key, given in (("input_tensor_a_activations", input_tensor_a_activations),
                           ("input_tensor_b_activations", input_tensor_b_activations)):
            if given:                        # would change the operands: not to be dropped silently
                raise fail(f"{key}= is not supported by tilefold yet; apply the op (ttnn.relu ...) to the operand "
                           "first")
        like = _first(a, b)
        if int_fn is not None and _all_int(a, b):
            with np.errstate(divide="ignore"):           # an integer divide by zero gives 0, as numpy's
                values = int_fn(np.asarray(_num(a, like)).astype(np.int64), np.asarray(_num(b, like)).astype(np.int64))
            if name not in _COMPARISONS and (dtype or like.dtype) in INT_DTYPES:
                return _apply_activations(_wrapped(values, dtype or like.dtype), activations)
        else:
            x, y = (np.asarray(_num(v), dtype=np.float32) for v in (a, b))      # read only: no copy
            with np.errstate(all="ignore"):
                if name in _F64:
                    values = fn(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
                else:
                    values = fn(x, y)
        if name in _COMPARISONS:
            values = values.astype(np.float32)
        return _apply_activations(_out(values, like, dtype), activations)
    compute.__name__ = name
    return compute


def _apply_activations(v: Value, activations) -> Value:
    for act in activations or ():
        name = getattr(act, "name", act)
        name = str(name).lower().rsplit(".", 1)[-1]
        if name not in UNARY and name not in ACTIVATIONS:
            raise fail(f"activation {act!r} is not a unary op tilefold has (give one ttnn.{name} would be, such as "
                       "\"relu\", \"gelu\", \"silu\" or \"sigmoid\")")
        params = getattr(act, "params", ())
        if name == "gelu":                  # TT-NN's GELU parameter: fast and approximate when nonzero
            v = OPS[name](v, fast_and_approximate_mode=bool(params and params[0]))
            continue
        try:
            v = OPS[name](v, *params)
        except TypeError:
            raise fail(f"activation {act!r}: ttnn.{name} takes other parameters than {params!r}") from None
    return v


# unary ops with keywords of their own that also serve as a matmul's or linear's activation
ACTIVATIONS = ("gelu", "softplus", "elu", "leaky_relu")

for _name, (_fn, _int) in BINARY.items():
    OPS[_name] = _binary_op(_name, _fn, _int)
for _alias, _name in {"sub": "subtract", "mul": "multiply", "gte": "ge", "lte": "le", "power": "pow"}.items():
    OPS[_alias] = OPS[_name]
for _name in ("add", "subtract", "multiply", "sub", "mul", "rsub", "eq", "ne", "gt", "ge", "lt", "le",
              "logical_and", "logical_or", "logical_xor", "squared_difference", "ldexp", "logaddexp"):
    OPS[_name + "_"] = OPS[_name]
    INPLACE.add(_name + "_")


@op("divide", "div", inplace=("divide_", "div_"))
def divide(a, b, *, round_mode: str | None = None, dtype: str | None = None, accurate_mode=None,
           activations=None, **_) -> Value:
    """``a / b`` (``round_mode`` ``"trunc"`` or ``"floor"`` rounds the quotient, as torch.div). Two
    integer operands divide exactly: without ``round_mode`` the quotient is float32, as the device's
    ``div_int32`` computes it; rounded it stays an integer."""
    like = _first(a, b)
    if _all_int(a, b) and round_mode in ("trunc", "floor"):
        x, y = (np.asarray(_num(v, like)).astype(np.int64) for v in (a, b))
        divisor = np.where(y == 0, 1, y)            # a zero divisor gives 0, as numpy's integer division
        q = np.floor_divide(x, divisor) if round_mode == "floor" else \
            np.abs(x) // np.abs(divisor) * np.sign(x) * np.sign(divisor)
        return _apply_activations(_wrapped(np.where(y == 0, 0, q), dtype or like.dtype), activations)
    if _all_int(a, b) and dtype is None:
        dtype = "float32"
    x, y = (np.asarray(_num(v)).astype(np.float32) for v in (a, b))
    with np.errstate(all="ignore"):
        q = x / y
    if round_mode in ("trunc", "floor"):
        q = (np.trunc if round_mode == "trunc" else np.floor)(q)
    elif round_mode not in (None, "None"):
        raise fail(f"ttnn.div(round_mode={round_mode!r}): use None, 'trunc' or 'floor'")
    return _apply_activations(_out(q, like, dtype), activations)


@op("rdiv")
def rdiv(a: Value, value, *, round_mode: str | None = None, **kwargs) -> Value:
    """``value / a``."""
    return divide(value, a, round_mode=round_mode, dtype=kwargs.get("dtype"))


@op("addalpha")
def addalpha(a: Value, b: Value, alpha: float = 1.0, **_) -> Value:
    return _out(a.values.astype(np.float32) + np.float32(alpha) * _num(b), a)


@op("subalpha")
def subalpha(a: Value, b: Value, alpha: float = 1.0, **_) -> Value:
    return _out(a.values.astype(np.float32) - np.float32(alpha) * _num(b), a)


@op("isclose")
def isclose(a: Value, b: Value, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False, **_) -> Value:
    return _out(np.isclose(a.values, _num(b), rtol=rtol, atol=atol, equal_nan=equal_nan).astype(np.float32), a)


def _bitwise(name: str, fn: Callable):
    def compute(a: Value, b, **_) -> Value:
        if not _all_int(a, b):
            raise fail(f"ttnn.{name} takes integer tensors (int32, uint32, uint16), not {a.dtype}")
        return _wrapped(fn(a.values.astype(np.int64), np.asarray(_num(b, a)).astype(np.int64)), a.dtype)
    compute.__name__ = name
    return compute


for _name, _fn in {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
                   "bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift,
                   "logical_left_shift": np.left_shift}.items():
    OPS[_name] = _bitwise(_name, _fn)


@op("prelu")
def prelu(a: Value, weight, **_) -> Value:
    """``a`` where positive, else ``a * weight`` (a number, or one slope per channel: dim 1 of a 4-D
    tensor, as torch.nn.functional.prelu)."""
    w = np.asarray(_num(weight), dtype=np.float32)
    if w.size > 1:
        if a.values.ndim < 2 or w.size != a.values.shape[1]:
            raise fail(f"ttnn.prelu: {w.size} slopes for a tensor of shape {list(a.values.shape)}; give one number "
                       "or one slope per channel (dim 1)")
        w = w.reshape((1, -1) + (1,) * (a.values.ndim - 2))
    x = a.values.astype(np.float32)
    return _out(np.where(x >= 0, x, x * w), a)


def _gated(name: str, gate: Callable):
    def compute(a: Value, dim: int = -1, **_) -> Value:
        axis = _dim(dim, a.values.ndim, name)
        if a.values.shape[axis] % 2:
            raise fail(f"ttnn.{name}: dim {axis} has {a.values.shape[axis]} elements; it is split in two halves")
        x, g = np.split(a.values.astype(np.float64), 2, axis=axis)
        with np.errstate(all="ignore"):
            return _out((x * gate(g)).astype(np.float32), a)
    compute.__name__ = name
    return compute


# TT-NN's gated linear units: the first half of ``dim`` times the gate of the second half
for _name, _gate in {"glu": _sigmoid, "reglu": lambda g: np.maximum(g, 0), "geglu": _gelu,
                     "swiglu": lambda g: g * _sigmoid(g)}.items():
    OPS[_name] = _gated(_name, _gate)


@op("outer")
def outer(a: Value, b: Value, **_) -> Value:
    """The outer product of two vectors (each a tensor with one dim above 1): ``(1, 1, N, M)`` for
    4-D operands, as TT-NN's, else ``(N, M)``."""
    x, y = (np.asarray(_num(v), dtype=np.float32) for v in (a, b))
    if builtins.sum(n > 1 for n in x.shape) > 1 or builtins.sum(n > 1 for n in y.shape) > 1:
        raise fail(f"ttnn.outer takes two vectors (one dim above 1 each), not {list(x.shape)} and {list(y.shape)}")
    values = np.outer(x.ravel(), y.ravel())
    return _out(values.reshape((1, 1) + values.shape) if x.ndim == 4 else values, a)


@op("fill")
def fill(a: Value, fill_value, **_) -> Value:
    """A tensor like ``a`` holding ``fill_value`` everywhere."""
    return _out(np.full(a.values.shape, _num(fill_value, a)), a)


@op("reallocate")
def reallocate(a: Value, **_) -> Value:
    """``a`` moved in memory: the same values."""
    return a


# --- element-wise: three operands ----------------------------------------------------------------


@op("where")
def where(condition, true_value, false_value, **_) -> Value:
    """``true_value`` where ``condition`` is nonzero, else ``false_value`` (tensors or numbers)."""
    like = _first(true_value, false_value, condition)
    cond = np.asarray(_num(condition)) != 0
    return _out(np.where(cond, _num(true_value, like), _num(false_value, like)), like)


@op("addcmul")
def addcmul(a: Value, b: Value, c: Value, value: float = 1.0, **_) -> Value:
    return _out(a.values + np.float32(value) * (_num(b) * _num(c)), a)


@op("addcdiv")
def addcdiv(a: Value, b: Value, c: Value, value: float = 1.0, **_) -> Value:
    with np.errstate(all="ignore"):
        return _out(a.values + np.float32(value) * (_num(b) / _num(c)), a)


@op("lerp")
def lerp(a: Value, end, weight, **_) -> Value:
    x = a.values.astype(np.float32)
    return _out(x + np.asarray(_num(weight), dtype=np.float32) * (_num(end) - x), a)


@op("mac")
def mac(a: Value, b, c, **_) -> Value:
    return _out(a.values.astype(np.float32) * _num(b) + _num(c), a)


# --- matrix products -----------------------------------------------------------------------------


@op("matmul")
def matmul(a: Value, b: Value, *, transpose_a: bool = False, transpose_b: bool = False, dtype: str | None = None,
           activation=None, **_) -> Value:
    """``a @ b`` accumulated in float32 (``transpose_a`` / ``transpose_b`` swap the last two dims)."""
    x = a.values.astype(np.float32)
    y = b.values.astype(np.float32)
    if transpose_a:
        x = np.swapaxes(x, -1, -2)
    if transpose_b:
        y = np.swapaxes(y, -1, -2)
    if x.shape[-1] != y.shape[-2 if y.ndim > 1 else 0]:
        raise fail(f"ttnn.matmul: inner dims differ, {tuple(x.shape)} @ {tuple(y.shape)}")
    return _apply_activations(_out(x @ y, a, dtype), [activation] if activation else None)


@op("linear")
def linear(a: Value, b: Value, *, bias: Value | None = None, transpose_a: bool = False, transpose_b: bool = False,
           dtype: str | None = None, activation=None, **_) -> Value:
    """``a @ b + bias``."""
    out = matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b)
    values = out.values + (bias.values if bias is not None else np.float32(0))
    return _apply_activations(_out(values, a, dtype), [activation] if activation else None)


@op("transformer.scaled_dot_product_attention")
def scaled_dot_product_attention(q: Value, k: Value, v: Value, *, attn_mask: Value | None = None,
                                 is_causal: bool = True, scale: float | None = None, **_) -> Value:
    """``softmax(q kᵀ · scale + mask) v`` over (batch, heads, sequence, head dim), in float32: ``scale``
    defaults to 1/√(head dim), ``is_causal`` (TT-NN's default) masks keys after each query, and
    query heads share key / value heads in groups when there are fewer of those."""
    x, y, z = (t.values.astype(np.float32) for t in (q, k, v))
    if x.ndim != 4 or y.ndim != 4 or z.ndim != 4:
        raise fail("ttnn.transformer.scaled_dot_product_attention takes (batch, heads, sequence, head dim) "
                   f"tensors, not shapes {x.shape}, {y.shape}, {z.shape}")
    if x.shape[1] % y.shape[1]:
        raise fail(f"ttnn.transformer.scaled_dot_product_attention: {x.shape[1]} query heads cannot share "
                   f"{y.shape[1]} key heads")
    group = x.shape[1] // y.shape[1]
    y, z = np.repeat(y, group, axis=1), np.repeat(z, group, axis=1)
    scores = (x @ np.swapaxes(y, -1, -2)) * np.float32(scale if scale is not None else 1 / np.sqrt(x.shape[-1]))
    if attn_mask is not None:
        scores = scores + attn_mask.values.astype(np.float32)
    if is_causal:
        rows, cols = scores.shape[-2:]
        scores = np.where(np.tril(np.ones((rows, cols), bool), cols - rows), scores, -np.inf)
    scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return _out((scores / scores.sum(axis=-1, keepdims=True)) @ z, q)


# --- normalisations -------------------------------------------------------------------------------


@op("softmax")
def softmax(a: Value, dim: int = -1, *, dtype: str | None = None, numeric_stable: bool = True, **_) -> Value:
    """``exp(x - max) / Σ exp(x - max)`` along ``dim``, in float64, rounded once (``numeric_stable``
    chooses how the device computes it; the host result is the same)."""
    axis = _dim(dim, a.values.ndim, "softmax")
    x = a.values.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return _out(e / e.sum(axis=axis, keepdims=True), a, dtype)


def _last_dim_row(name: str, what: str, v: Value | None, width: int) -> np.ndarray | None:
    """``v``'s values for each position of the last dim, as float64 (a tensor padded to a tile's
    32 rows, as TT-NN takes a norm's weight, gives its first row); None without ``v``."""
    if v is None:
        return None
    if v.values.size != width and v.values.shape[-1] != width:
        raise fail(f"ttnn.{name}: {what} has {v.values.size} values; the last dim has {width}")
    return v.values.reshape(-1, width)[0].astype(np.float64)


def _normed(name: str, a: Value, centred: bool, epsilon: float, weight: Value | None, bias: Value | None,
            residual: Value | None, dtype: str | None) -> Value:
    """Normalise over the last dim (``x - mean`` first when ``centred``), then ``* weight + bias``
    (broadcast over the leading dims), in float64, rounded once."""
    x = a.values.astype(np.float64)
    if residual is not None:
        x = x + residual.values.astype(np.float64)
    width = x.shape[-1]
    scale, shift = _last_dim_row(name, "weight", weight, width), _last_dim_row(name, "bias", bias, width)
    if centred:
        x = x - x.mean(axis=-1, keepdims=True)
    x = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + float(epsilon))
    if scale is not None:
        x = x * scale
    if shift is not None:
        x = x + shift
    return _out(x, a, dtype)


@op("rms_norm")
def rms_norm(a: Value, *, epsilon: float = 1e-12, weight: Value | None = None, bias: Value | None = None,
             residual_input_tensor: Value | None = None, dtype: str | None = None, **_) -> Value:
    """``x / sqrt(mean(x²) + epsilon) * weight + bias`` over the last dim."""
    return _normed("rms_norm", a, False, epsilon, weight, bias, residual_input_tensor, dtype)


@op("layer_norm")
def layer_norm(a: Value, *, epsilon: float = 1e-12, weight: Value | None = None, bias: Value | None = None,
               residual_input_tensor: Value | None = None, dtype: str | None = None, **_) -> Value:
    """``(x - mean) / sqrt(var + epsilon) * weight + bias`` over the last dim."""
    return _normed("layer_norm", a, True, epsilon, weight, bias, residual_input_tensor, dtype)


# --- reductions ----------------------------------------------------------------------------------


def _axes(a: Value, dim, name: str):
    rank = a.values.ndim
    if dim is None:
        return None
    dims = [dim] if isinstance(dim, (int, np.integer)) else list(dim)
    return tuple(sorted({_dim(d, rank, name) for d in dims}))


def _reduce(name: str, fn: Callable, exact_int: bool):
    def compute(a: Value, dim=None, keepdim: bool = False, *, dtype=None, memory_config=None,
                compute_kernel_config=None, scalar: float = 1.0, correction=True, **_) -> Value:
        axes = _axes(a, dim, name)
        if a.is_int and exact_int:
            values = fn(a.values.astype(np.int64), axis=axes, keepdims=keepdim)
        else:
            kwargs = {"ddof": 1 if correction else 0} if name in ("std", "var") else {}
            with np.errstate(all="ignore"):
                values = fn(a.values.astype(np.float32), axis=axes, keepdims=keepdim, **kwargs)
            if scalar != 1.0:
                values = values * np.float32(scalar)
        return _out(np.atleast_1d(values), a, dtype)
    compute.__name__ = name
    return compute


for _name, _fn, _exact in (("sum", np.sum, True), ("mean", np.mean, False), ("max", np.max, True),
                           ("min", np.min, True), ("prod", np.prod, True), ("std", np.std, False),
                           ("var", np.var, False)):
    OPS[_name] = _reduce(_name, _fn, _exact)


@op("argmax")
def argmax(a: Value, dim=None, keepdim: bool = False, **_) -> Value:
    """The index of the largest value (the first of equal ones), as ``uint32``; over all
    elements (row-major order) without ``dim``."""
    return _index_of(a, dim, keepdim, np.argmax, "argmax")


@op("argmin")
def argmin(a: Value, dim=None, keepdim: bool = False, **_) -> Value:
    """The index of the smallest value (the first of equal ones), as :func:`argmax` gives the largest."""
    return _index_of(a, dim, keepdim, np.argmin, "argmin")


def _index_of(a: Value, dim, keepdim: bool, pick: Callable, name: str) -> Value:
    """``pick`` (numpy's argmax / argmin) along ``dim`` (all elements without it), as ``uint32``."""
    axis = None if dim is None else _dim(dim, a.values.ndim, name)
    return Value(cast(np.atleast_1d(pick(a.values, axis=axis, keepdims=keepdim)), "uint32"), "uint32")


def _scan(name: str, fn: Callable):
    def compute(a: Value, dim: int, *, dtype=None, **_) -> Value:
        axis = _dim(dim, a.values.ndim, name)
        if a.is_int:
            return _out(fn(a.values.astype(np.int64), axis=axis), a, dtype)
        return _out(fn(a.values.astype(np.float32), axis=axis, dtype=np.float32), a, dtype)
    compute.__name__ = name
    return compute


OPS["cumsum"], OPS["cumprod"] = _scan("cumsum", np.cumsum), _scan("cumprod", np.cumprod)


# --- sorting and indexing ------------------------------------------------------------------------


def index_dtype(n: int) -> str:
    """TT-NN's index type for ``n`` values along the sorted dim: ``uint16`` unless the dim, padded
    to a power of two of whole tiles, reaches 65535 values (more than 32768 values)."""
    return "uint16" if n <= 32768 else "uint32"


def _argsort(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Indices that sort ``x`` along ``axis``; equal values keep their order (either direction)."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    return n - 1 - np.flip(np.argsort(np.flip(x, axis=axis), axis=axis, kind="stable"), axis=axis)


@op("sort")
def sort(a: Value, dim: int = -1, descending: bool = False, stable: bool = False, **_) -> tuple[Value, Value]:
    """``(values, indices)`` of ``a`` sorted along ``dim``; equal values keep their order."""
    if a.values.ndim == 0:
        return a, Value(np.zeros((), np.uint16), "uint16")
    axis = _dim(dim, a.values.ndim, "sort")
    order = _argsort(a.values, axis, descending)
    idx = index_dtype(a.values.shape[axis])
    return (Value(np.take_along_axis(a.values, order, axis), a.dtype), Value(cast(order, idx), idx))


@op("topk")
def topk(a: Value, k: int, dim: int = -1, largest: bool = True, sorted: bool = True, **_) -> tuple[Value, Value]:  # noqa: A002
    """The ``k`` largest (``largest=False``: smallest) values along ``dim`` and their indices."""
    axis = _dim(dim, a.values.ndim, "topk")
    n = a.values.shape[axis]
    if not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
        raise fail(f"ttnn.topk(k={k!r}): dim {dim} has {n} values; give k in 1..{n}")
    order = np.take(_argsort(a.values, axis, largest), np.arange(k), axis=axis)
    idx = index_dtype(n)
    return (Value(np.take_along_axis(a.values, order, axis), a.dtype), Value(cast(order, idx), idx))


@op("gather")
def gather(a: Value, dim: int, index: Value, sparse_grad: bool = False, **_) -> Value:
    """``out[..., i, ...] = a[..., index[..., i, ...], ...]`` along ``dim`` (as torch.gather): the
    shape of ``index``, the data type of ``a``."""
    if not isinstance(index, Value) or not index.is_int:
        got = index.dtype if isinstance(index, Value) else type(index).__name__
        raise fail(f"ttnn.gather: index must be a uint32 or uint16 tensor (ttnn.typecast it), not {got}")
    rank = a.values.ndim
    axis = _dim(dim, rank, "gather")
    if index.values.ndim != rank:
        raise fail(f"ttnn.gather: index has {index.values.ndim} dims, the input {rank}; give it as many")
    shape, ishape = a.values.shape, index.values.shape
    if builtins.any(ishape[d] > shape[d] for d in range(rank) if d != axis):
        raise fail(f"ttnn.gather: index shape {tuple(ishape)} is larger than the input {tuple(shape)} "
                   f"outside dim {dim}")
    idx = index.values.astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= shape[axis]):
        raise fail(f"ttnn.gather: index values {int(idx.min())}..{int(idx.max())} outside 0..{shape[axis] - 1} "
                   f"of dim {dim}")
    window = tuple(slice(None) if d == axis else slice(0, ishape[d]) for d in range(rank))
    return Value(np.take_along_axis(a.values[window], idx, axis), a.dtype)


@op("embedding")
def embedding(index: Value, weight: Value, *, pad_token=None, layout=None, dtype: str | None = None,
              embeddings_type=None, **_) -> Value:
    """Rows of ``weight`` (vocabulary x hidden) picked by the integer tensor ``index``: the shape
    of ``index`` with the hidden size appended, in ``weight``'s data type (or ``dtype``)."""
    if not isinstance(index, Value) or not index.is_int:
        got = index.dtype if isinstance(index, Value) else type(index).__name__
        raise fail(f"ttnn.embedding: the input must be a uint32 tensor of row indices (ttnn.typecast it), not {got}")
    if pad_token is not None or embeddings_type is not None:
        raise fail("ttnn.embedding: pad_token= and embeddings_type= are not supported by tilefold yet")
    table = weight.values.reshape(-1, weight.values.shape[-1])
    rows = index.values.astype(np.int64)
    if rows.size and (rows.min() < 0 or rows.max() >= len(table)):
        raise fail(f"ttnn.embedding: indices {int(rows.min())}..{int(rows.max())} outside the {len(table)} rows of "
                   "the weight")
    out = Value(table[rows], weight.dtype, layout)
    return out if dtype is None else Value(cast(out.values, dtype), dtype, layout)


# --- shapes --------------------------------------------------------------------------------------


def _shape(shape) -> tuple[int, ...]:
    return tuple(int(s) for s in (shape if hasattr(shape, "__len__") else (shape,)))


@op("concat")
def concat(tensors, dim: int = 0, **_) -> Value:
    tensors = list(tensors)
    if not tensors:
        raise fail("ttnn.concat takes a list of tensors")
    first = tensors[0]
    _same_dtypes(tensors, "concat")
    axis = _dim(dim, first.values.ndim, "concat")
    return Value(cast(np.concatenate([t.values for t in tensors], axis=axis), first.dtype), first.dtype)


def _same_dtypes(tensors: list[Value], what: str) -> None:
    """TT-NN's check that the tensors joined by ``what`` share one data type."""
    other = next((t.dtype for t in tensors if t.dtype != tensors[0].dtype), None)
    if other is not None:
        raise fail(f"ttnn.{what} joins tensors of one data type, not {tensors[0].dtype} and {other}; "
                   f"convert them first (ttnn.typecast)")


@op("stack")
def stack(tensors, dim: int = 0, **_) -> Value:
    tensors = list(tensors)
    _same_dtypes(tensors, "stack")
    return Value(cast(np.stack([t.values for t in tensors], axis=dim), tensors[0].dtype), tensors[0].dtype)


@op("split")
def split(a: Value, split_size, dim: int = 0, **_) -> list[Value]:
    """Pieces of ``split_size`` along ``dim`` (the last smaller), or of the sizes in a list."""
    axis = _dim(dim, a.values.ndim, "split")
    n = a.values.shape[axis]
    if isinstance(split_size, (int, np.integer)):
        if split_size < 1:
            raise fail(f"ttnn.split(split_size={split_size}): give a positive piece size")
        sizes = [int(split_size)] * -(-n // int(split_size))
    else:
        sizes = [int(s) for s in split_size]
        if builtins.any(s < 0 for s in sizes) or builtins.sum(sizes) != n:
            raise fail(f"ttnn.split(split_size={sizes}): the sizes must be non-negative and add up to {n}, the "
                       f"size of dim {axis}")
    cuts = np.cumsum(sizes)[:-1]
    return [Value(p, a.dtype) for p in np.split(a.values, cuts, axis=axis)]


@op("chunk")
def chunk(a: Value, chunks: int, dim: int = 0, **_) -> list[Value]:
    """``chunks`` pieces along ``dim``, as torch.chunk cuts them (each of ceil(n / chunks), the last smaller)."""
    n = a.values.shape[_dim(dim, a.values.ndim, "chunk")]
    if not isinstance(chunks, (int, np.integer)) or chunks < 1:
        raise fail(f"ttnn.chunk(chunks={chunks!r}): give a positive number of pieces")
    return split(a, builtins.max(-(-n // int(chunks)), 1), dim)


@op("permute")
def permute(a: Value, dims, **_) -> Value:
    dims = _shape(dims)
    if sorted(d % builtins.max(a.values.ndim, 1) for d in dims) != list(range(a.values.ndim)):
        raise fail(f"ttnn.permute(dims={dims}): give each of the {a.values.ndim} dims once")
    return Value(np.transpose(a.values, dims), a.dtype)


@op("transpose")
def transpose(a: Value, dim0: int = -2, dim1: int = -1, **_) -> Value:
    return Value(np.swapaxes(a.values, dim0, dim1), a.dtype)


@op("reshape", "view")
def reshape(a: Value, shape, *args, **_) -> Value:
    return Value(a.values.reshape(_shape(shape)), a.dtype)


@op("repeat")
def repeat(a: Value, repeat_dims, **_) -> Value:
    """``a`` tiled ``repeat_dims[i]`` times along dim i (as ``torch.Tensor.repeat``: more repeat dims
    than ``a`` has dims prepend dims of size 1)."""
    reps = _shape(repeat_dims)
    if len(reps) < a.values.ndim:
        raise fail(f"ttnn.repeat: {len(reps)} repeat dims for a tensor of rank {a.values.ndim}; give at least "
                   "one per dimension")
    values = a.values.reshape((1,) * (len(reps) - a.values.ndim) + a.values.shape)
    return Value(np.tile(values, reps), a.dtype)


@op("repeat_interleave")
def repeat_interleave(a: Value, repeats, dim: int = 0, **_) -> Value:
    """Each element of ``a`` ``repeats`` times in a row along ``dim`` (``torch.repeat_interleave``
    with an int count)."""
    if not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise fail(f"ttnn.repeat_interleave(repeats={repeats!r}): give a positive int count")
    return Value(np.repeat(a.values, int(repeats), axis=_dim(dim, a.values.ndim, "repeat_interleave")), a.dtype)


@op("expand")
def expand(a: Value, shape, **_) -> Value:
    """``a`` broadcast to ``shape`` (``-1`` keeps a dim)."""
    shape = _shape(shape)
    lead = (1,) * (len(shape) - a.values.ndim) + a.values.shape
    target = tuple(n if s == -1 else s for s, n in zip(shape, lead))
    return Value(np.broadcast_to(a.values.reshape(lead), target).copy(), a.dtype)


@op("squeeze")
def squeeze(a: Value, dim=None, **_) -> Value:
    """``a`` without its dims of size 1 (only ``dim``, an int or a tuple, when given; a named dim of
    another size stays, as in torch)."""
    shape = a.values.shape
    dims = range(len(shape)) if dim is None else [dim] if isinstance(dim, (int, np.integer)) else list(dim)
    dims = [_dim(d, len(shape), "squeeze") for d in dims]
    drop = {d for d in dims if shape[d] == 1} if shape else set()
    return Value(a.values.reshape(tuple(n for i, n in enumerate(shape) if i not in drop)), a.dtype)


@op("unsqueeze")
def unsqueeze(a: Value, dim: int, **_) -> Value:
    return Value(np.expand_dims(a.values, dim), a.dtype)


@op("flip")
def flip(a: Value, dims, **_) -> Value:
    return Value(np.flip(a.values, axis=tuple(_shape(dims))).copy(), a.dtype)


@op("slice")
def slice_(a: Value, slice_start, slice_end, slice_step=None, **_) -> Value:
    """``a[start:end:step]`` in each dim."""
    start, end = _shape(slice_start), _shape(slice_end)
    step = _shape(slice_step) if slice_step is not None else (1,) * len(start)
    if not len(start) == len(end) == len(step) == a.values.ndim:
        raise fail(f"ttnn.slice: give a start, end and step for each of the {a.values.ndim} dims")
    return Value(a.values[tuple(slice(s, e, t) for s, e, t in zip(start, end, step))].copy(), a.dtype)


@op("pad")
def pad(a: Value, padding, value: float = None, *args, **kwargs) -> Value:
    """``a`` padded with ``value``: ``padding`` a ``(before, after)`` pair per dim (the last dims
    when fewer are given); or TT-NN's older ``pad(a, output_padded_shape, input_tensor_start, value)``,
    ``a`` placed at ``input_tensor_start`` of a tensor of ``output_padded_shape``."""
    if padding and all(isinstance(p, (int, np.integer)) for p in padding):      # the older form
        start, value = value, (args[0] if args else kwargs.get("pad_value", kwargs.get("value", 0.0)))
        shape = tuple(int(d) for d in padding)
        start = tuple(int(d) for d in (start or (0,) * len(shape)))
        if len(shape) != a.values.ndim or len(start) != len(shape) or \
                any(s + n > d for s, n, d in zip(start, a.values.shape, shape)):
            raise fail(f"ttnn.pad: a {tuple(a.values.shape)} tensor placed at {start} does not fit {shape}")
        padding = [(s, d - s - n) for s, n, d in zip(start, a.values.shape, shape)]
    if value is None:
        raise fail("ttnn.pad(tensor, padding, value): give the value to pad with")
    pairs = [tuple(int(p) for p in pair) for pair in padding]
    pairs = [(0, 0)] * (a.values.ndim - len(pairs)) + pairs
    return Value(cast(np.pad(a.values, pairs, constant_values=_num(value, a)), a.dtype), a.dtype)


@op("upsample")
def upsample(a: Value, scale_factor, mode: str = "nearest", **_) -> Value:
    """Nearest-neighbour upsampling of an ``(N, H, W, C)`` tensor, ``scale_factor`` an int or
    ``(scale_h, scale_w)``."""
    if mode != "nearest":
        raise fail(f"ttnn.upsample(mode={mode!r}): tilefold's host upsample is 'nearest' only")
    if a.values.ndim != 4:
        raise fail(f"ttnn.upsample takes an (N, H, W, C) tensor, not shape {tuple(a.values.shape)}")
    sh, sw = (scale_factor, scale_factor) if isinstance(scale_factor, int) else tuple(scale_factor)
    return Value(a.values.repeat(sh, axis=1).repeat(sw, axis=2), a.dtype)


@op("clone")
def clone(a: Value, *args, dtype: str | None = None, **_) -> Value:
    return _out(a.values.copy(), a, dtype)


def getitem(a: Value, key) -> Value:
    """``tensor[key]``: basic indexing (ints and slices) of the host values."""
    key = key if isinstance(key, tuple) else (key,)
    if not builtins.all(isinstance(k, (int, np.integer, slice)) or k is Ellipsis for k in key):
        raise fail("tensor[...]: tilefold slices tensors with ints, slices and ... only")
    try:
        return Value(a.values[key].copy(), a.dtype)
    except IndexError as exc:
        raise fail(f"tensor[{', '.join(map(repr, key))}] of a tensor of shape {list(a.values.shape)}: {exc}") from None
