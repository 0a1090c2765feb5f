"""TileLang dtypes (``T.float16``, ``T.int32``, ``T.bool`` ...) and the tile format each is stored in.

Reads: dtype names, :class:`DType` objects, numpy / torch dtypes. Writes: nothing.

A :class:`DType` is a ``str`` (``T.float16 == "float16"``), callable as a cast of a Python
number (``T.float32(1.0)``), and is what ``T.dtype`` annotations name. Each dtype is stored
in one TT-Metalium tile format; where Tensix has no format of its own the nearest one is used
and the user is told once, by a :class:`DTypeWarning` naming the line:

============================  ===================  ==========================================
TileLang dtype                tile format          note
============================  ===================  ==========================================
float32 / float               Float32
bfloat16                      Float16_b
float16 / half                Float16              IEEE half, as the unpacker reads it
float64                       Float32              no 64-bit format: values rounded (told)
float8_e4m3fn / float8_e5m2   Bfp8_b               no fp8 on Wormhole: bfloat8_b blocks (told)
int32 / uint32 / uint16       Int32 / UInt32 / UInt16
uint8 / int8 / bool           UInt8 / Int32 / UInt8  int8 widened to Int32 (told)
============================  ===================  ==========================================

Errors: :class:`KernelError` for a dtype name tilefold does not know.
"""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np

from tilefold.errors import KernelError, SourceLocation
from tilefold.layout.formats import DataFormat


class DTypeWarning(UserWarning):
    """A dtype stored in a nearby tile format (fp8 as bfloat8_b, float64 as float32)."""


class DType(str):
    """A TileLang dtype: a string naming it, callable as a cast (``T.float32(1.0)`` is ``1.0``)."""

    def __new__(cls, name: str):
        return super().__new__(cls, name)

    @property
    def name(self) -> str:
        return str(self)

    @property
    def data_format(self) -> DataFormat:
        return _FORMATS[canonical_name(self)]

    @property
    def is_float(self) -> bool:
        return canonical_name(self) in _FLOATS

    @property
    def bits(self) -> int:
        return _BITS[canonical_name(self)]

    @property
    def numpy_dtype(self) -> np.dtype:
        return host_dtype(self)

    def __call__(self, value=0):
        if isinstance(value, (int, float, bool, np.number)):
            return float(value) if self.is_float else int(value)
        from tilefold.frontend.tilelang.values import Elem, Index, Symbol

        if isinstance(value, (Index, Symbol)) and self.is_float:
            return cast_marker(value, self)
        if isinstance(value, (Elem, Index, Symbol)):
            return cast_marker(value, self)
        raise KernelError(f"T.{self}({value!r}): cast a number or an element value")

    def __repr__(self) -> str:
        return f"T.{str(self)}"

    def __hash__(self) -> int:
        return str.__hash__(self)

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                return canonical_name(self) == canonical_name(other)
            except KernelError:
                return False
        return NotImplemented

    def as_torch(self):
        import torch

        return getattr(torch, canonical_name(self))


def cast_marker(value, dtype):
    """An element cast inside a kernel body: the builder reads ``T.float32(x)`` itself, so this
    only runs when a kernel helper is executed as Python."""
    from tilefold.frontend.tilelang.values import active

    return active().cast_value(value, dtype)


_FORMATS = {
    "float32": DataFormat.Float32, "bfloat16": DataFormat.Float16_b, "float16": DataFormat.Float16,
    "float64": DataFormat.Float32, "float8_e4m3fn": DataFormat.Bfp8_b, "float8_e5m2": DataFormat.Bfp8_b,
    "int32": DataFormat.Int32, "uint32": DataFormat.UInt32, "uint16": DataFormat.UInt16, "uint8": DataFormat.UInt8,
    "int8": DataFormat.Int32, "int16": DataFormat.Int32, "bool": DataFormat.UInt8, "int64": DataFormat.Int32,
}
_FLOATS = {"float32", "bfloat16", "float16", "float64", "float8_e4m3fn", "float8_e5m2"}
_BITS = {"float32": 32, "bfloat16": 16, "float16": 16, "float64": 64, "float8_e4m3fn": 8, "float8_e5m2": 8,
         "int32": 32, "uint32": 32, "uint16": 16, "uint8": 8, "int8": 8, "int16": 16, "bool": 8, "int64": 64}
_ALIASES = {
    "float": "float32", "fp32": "float32", "f32": "float32", "float32": "float32", "tfloat32": "float32",
    "bfloat16": "bfloat16", "bf16": "bfloat16", "float16_b": "bfloat16",
    "float16": "float16", "half": "float16", "fp16": "float16", "f16": "float16",
    "float64": "float64", "double": "float64", "fp64": "float64",
    "float8_e4m3fn": "float8_e4m3fn", "float8_e4m3": "float8_e4m3fn", "fp8_e4m3": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2", "fp8_e5m2": "float8_e5m2",
    "int32": "int32", "int": "int32", "uint32": "uint32", "uint16": "uint16", "uint8": "uint8", "int8": "int8",
    "int16": "int16", "int64": "int64", "bool": "bool",
}
# The nearest format, and what the user is told, for dtypes Tensix does not store as such.
_APPROXIMATED = {
    "float64": "float64 has no tile format; stored as float32",
    "float8_e4m3fn": "float8_e4m3fn has no Wormhole tile format; stored as bfloat8_b (a shared exponent per 16 "
                     "values, 7-bit mantissas)",
    "float8_e5m2": "float8_e5m2 has no Wormhole tile format; stored as bfloat8_b (a shared exponent per 16 "
                   "values, 7-bit mantissas)",
    "int8": "int8 has no tile format here; stored as int32", "int16": "int16 has no tile format; stored as int32",
    "int64": "int64 has no tile format; stored as int32",
}
_HOST = {
    "float32": np.float32, "bfloat16": ml_dtypes.bfloat16, "float16": np.float16, "float64": np.float64,
    "float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2, "int32": np.int32,
    "uint32": np.uint32, "uint16": np.uint16, "uint8": np.uint8, "int8": np.int8, "int16": np.int16,
    "bool": np.bool_, "int64": np.int64,
}
_FROM_FORMAT = {DataFormat.Float32: "float32", DataFormat.Float16_b: "bfloat16", DataFormat.Float16: "float16",
                DataFormat.Int32: "int32", DataFormat.UInt32: "uint32", DataFormat.UInt16: "uint16",
                DataFormat.UInt8: "uint8", DataFormat.Bfp8_b: "float8_e4m3fn"}
_told: set[tuple] = set()

NAMES = tuple(sorted(set(_ALIASES.values())))


def canonical_name(dtype) -> str:
    """``"float32"`` for ``T.float``, ``"float"``, ``np.float32``, ``torch.float32`` ..."""
    if isinstance(dtype, DataFormat):
        return _FROM_FORMAT.get(dtype, "float32")
    if isinstance(dtype, type) and issubclass(dtype, np.generic):
        dtype = np.dtype(dtype).name
    elif isinstance(dtype, np.dtype):
        dtype = dtype.name
    key = str(getattr(dtype, "name", dtype) if not isinstance(dtype, str) else dtype)
    key = key.strip().lower().removeprefix("torch.").removeprefix("t.").removeprefix("tl.")
    if key in _ALIASES:
        return _ALIASES[key]
    raise KernelError(f"dtype {dtype!r} is not supported; use one of {', '.join(NAMES)}")


def dtype(name) -> DType:
    """The :class:`DType` named by ``name`` (any spelling :func:`canonical_name` accepts)."""
    return name if isinstance(name, DType) else DType(canonical_name(name))


def data_format_of(spec, where: SourceLocation | None = None, what: str = "dtype") -> DataFormat:
    """The tile format a dtype is stored in, telling the user once per line when it is a nearby one."""
    if isinstance(spec, DataFormat):
        return spec
    try:
        name = canonical_name(spec)
    except KernelError:
        raise KernelError(f"{what} {spec!r} is not supported; use one of {', '.join(NAMES)}", where) from None
    note = _APPROXIMATED.get(name)
    if note is not None and (name, where) not in _told:
        _told.add((name, where))
        warnings.warn(f"{where}: {note}" if where else note, DTypeWarning, stacklevel=2)
    return _FORMATS[name]


def host_dtype(spec) -> np.dtype:
    """The numpy dtype results of this TileLang dtype come back in."""
    return np.dtype(_HOST[canonical_name(spec)])


float32 = DType("float32")
float16 = DType("float16")
bfloat16 = DType("bfloat16")
float64 = DType("float64")
float8_e4m3fn = DType("float8_e4m3fn")
float8_e5m2 = DType("float8_e5m2")
int32 = DType("int32")
int8 = DType("int8")
int16 = DType("int16")
int64 = DType("int64")
uint32 = DType("uint32")
uint16 = DType("uint16")
uint8 = DType("uint8")
bool_ = DType("bool")

__all__ = ["DType", "DTypeWarning", "canonical_name", "dtype", "data_format_of", "host_dtype", "NAMES",
           "float32", "float16", "bfloat16", "float64", "float8_e4m3fn", "float8_e5m2", "int32", "int8", "int16",
           "int64", "uint32", "uint16", "uint8", "bool_"]
