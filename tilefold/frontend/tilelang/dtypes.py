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

import numpy as np

from tilefold.errors import KernelError
from tilefold.ir.tile_types import (  # noqa: F401  (the dtype tables live in the IR layer)
    NAMES,
    DTypeWarning,
    canonical_name,
    data_format_of,
    dtype_bits,
    host_dtype,
    is_float_dtype,
)
from tilefold.layout.formats import DataFormat


class DType(str):
    """A TileLang dtype: a string naming it, callable as a cast (``T.float32(1.0)`` is ``1.0``)."""

    def __new__(cls, name: str):
        return super().__new__(cls, name)

    @property
    def name(self) -> str:
        return str(self)

    @property
    def data_format(self) -> DataFormat:
        return data_format_of(self)

    @property
    def is_float(self) -> bool:
        return is_float_dtype(self)

    @property
    def bits(self) -> int:
        return dtype_bits(self)

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


def dtype(name) -> DType:
    """The :class:`DType` named by ``name`` (any spelling :func:`canonical_name` accepts)."""
    return name if isinstance(name, DType) else DType(canonical_name(name))


float32 = DType("float32")
float16 = DType("float16")
bfloat16 = DType("bfloat16")
float64 = DType("float64")
float8_e4m3fn = DType("float8_e4m3fn")
float8_e4m3 = float8_e4m3fn         # TileLang's other spelling of it
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
           "float32", "float16", "bfloat16", "float64", "float8_e4m3fn", "float8_e4m3", "float8_e5m2", "int32", "int8",
           "int16", "int64", "uint32", "uint16", "uint8", "bool_"]
