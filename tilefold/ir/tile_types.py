"""Element types of tiles: TileLang dtype names, tile formats and memref element types.

Reads: dtype names (``"float16"``, ``np.float32``, ``torch.bfloat16`` ...), tile formats and
memref types. Writes: nothing. Each dtype is stored in one TT-Metalium tile format
(:class:`~tilefold.layout.formats.DataFormat`); where Tensix has no format of its own the
nearest one is used and the user is told once, by a :class:`DTypeWarning` naming the line.
Memrefs carry the format as their element type (``f32``, ``bf16``, ``f16``, ``si32`` ...); the
``tt.buffer`` metadata names it by a short name (``bf16``, ``bfp8_b`` ...).

The TileLang front end builds IR with these types and the passes read them back, so they live
in the IR layer.

Errors: :class:`~tilefold.errors.KernelError` for a dtype name tilefold does not know.
"""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    IntegerType,
    MemRefType,
    Signedness,
    StringAttr,
    bf16,
    f16,
    f32,
    f8E4M3FN,
)

from tilefold.errors import KernelError, SourceLocation
from tilefold.layout.formats import DataFormat


class DTypeWarning(UserWarning):
    """A dtype stored in a nearby tile format (fp8 as bfloat8_b, float64 as float32)."""


_DTYPE_FORMATS = {
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
    "float8_e4m3fn": "float8_e4m3fn", "float8_e4m3": "float8_e4m3fn", "fp8_e4m3": "float8_e4m3fn", "e4m3_float8": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2", "fp8_e5m2": "float8_e5m2", "e5m2_float8": "float8_e5m2",
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
    return _DTYPE_FORMATS[name]


def host_dtype(spec) -> np.dtype:
    """The numpy dtype results of this TileLang dtype come back in."""
    return np.dtype(_HOST[canonical_name(spec)])


# tile format -> (short name in ``tt.buffer`` entries, memref element type). MLIR has no
# block-float type: a bfloat8_b buffer's memref uses f8E4M3FN as its element type.
_FORMATS = {
    DataFormat.Float32: ("f32", f32),
    DataFormat.Float16_b: ("bf16", bf16),
    DataFormat.Float16: ("f16", f16),
    DataFormat.Bfp8_b: ("bfp8_b", f8E4M3FN),
    DataFormat.Int32: ("i32", IntegerType(32, Signedness.SIGNED)),
    DataFormat.UInt32: ("u32", IntegerType(32, Signedness.UNSIGNED)),
    DataFormat.UInt16: ("u16", IntegerType(16, Signedness.UNSIGNED)),
    DataFormat.UInt8: ("u8", IntegerType(8, Signedness.UNSIGNED)),
}
_SHORT = {fmt: short for fmt, (short, _) in _FORMATS.items()}
_BY_SHORT = {short: fmt for fmt, short in _SHORT.items()}
_BY_ELEMENT = {element: fmt for fmt, (_, element) in _FORMATS.items()}


def short_name(fmt: DataFormat) -> str:
    """``bf16`` / ``f32`` / ``i32`` ...: the name the ``tt.buffer`` attributes use."""
    return _SHORT[fmt]


def format_of_short_name(name: str) -> DataFormat:
    return _BY_SHORT[name]


def element_type(fmt: DataFormat):
    return _FORMATS[fmt][1]


def memref_type(shape, fmt: DataFormat, scope: str | None = None) -> MemRefType:
    space = StringAttr(scope) if scope else None
    return MemRefType(element_type(fmt), list(shape), memory_space=space) if space else \
        MemRefType(element_type(fmt), list(shape))


def format_of_memref(mtype: MemRefType) -> DataFormat:
    return _BY_ELEMENT.get(mtype.element_type, DataFormat.Float16_b)


def is_float_dtype(name) -> bool:
    """Whether the dtype ``name`` (any spelling) is a floating-point one."""
    return canonical_name(name) in _FLOATS


def dtype_bits(name) -> int:
    """The width in bits of the dtype ``name`` (any spelling)."""
    return _BITS[canonical_name(name)]


__all__ = ["DTypeWarning", "NAMES", "canonical_name", "data_format_of", "host_dtype", "is_float_dtype", "dtype_bits",
           "short_name", "format_of_short_name", "element_type", "memref_type", "format_of_memref"]
