"""C++ spellings of the scalar types and constants that ttkernel functions use.

Reads: xDSL types and ``arith.constant`` attributes. Writes: C++ type names and literals.
Integers are unsigned in C++ (``i32`` → ``uint32_t``; ``index`` → ``uint32_t``, the width of
a RISC-V register and of every TT-Metalium index); signed arithmetic casts its operands to the
signed type of the same width. ``i1`` is ``bool``, ``f32`` is ``float``.
"""

from __future__ import annotations

import math
import struct

from xdsl.dialects.builtin import (
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Attribute

from tilefold.errors import CompileError

INDEX_BITS = 32
_UNSIGNED = {1: "bool", 8: "uint8_t", 16: "uint16_t", 32: "uint32_t", 64: "uint64_t"}
_SIGNED = {8: "int8_t", 16: "int16_t", 32: "int32_t", 64: "int64_t"}


def bit_width(t: Attribute) -> int:
    """Bits of an integer-like type (index counts as 32)."""
    if isinstance(t, IndexType):
        return INDEX_BITS
    if isinstance(t, IntegerType):
        return t.width.data
    if isinstance(t, Float32Type):
        return 32
    raise CompileError(f"the C++ emitter has no scalar type for {t}")


def is_float(t: Attribute) -> bool:
    return isinstance(t, Float32Type)


def is_bool(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


def cpp_type(t: Attribute) -> str:
    """The C++ type of a scalar SSA value."""
    if isinstance(t, Float32Type):
        return "float"
    width = bit_width(t)
    if width not in _UNSIGNED:
        raise CompileError(f"the C++ emitter has no type for {width}-bit integers ({t})")
    return _UNSIGNED[width]


def signed_cpp_type(t: Attribute) -> str:
    """The signed C++ type of the same width (for divsi, remsi, shrsi, signed compares)."""
    width = bit_width(t)
    if width == 1:
        return "bool"
    return _SIGNED[width]


def memref_element_type(t: MemRefType) -> str:
    return cpp_type(t.element_type)


def memref_shape(t: MemRefType) -> tuple[int, ...]:
    shape = tuple(t.get_shape())
    if any(d < 0 for d in shape):
        raise CompileError(f"a local array needs a static shape, not {t}")
    return shape


def _float_literal(value: float) -> str:
    if math.isnan(value):
        return "__builtin_nanf(\"\")"
    if math.isinf(value):
        return "__builtin_inff()" if value > 0 else "-__builtin_inff()"
    # shortest text that round-trips through float32
    f32 = struct.unpack("<f", struct.pack("<f", value))[0]
    for digits in range(1, 18):
        text = f"{f32:.{digits}g}"
        if struct.unpack("<f", struct.pack("<f", float(text)))[0] == f32:
            break
    if "e" not in text and "." not in text and "inf" not in text:
        text += ".0"
    return text + "f"


def integer_literal(value: int, width: int, typed: bool = False) -> str:
    """The literal of an integer constant of ``width`` bits, as the unsigned value the C++
    variable holds. Plain decimal (``32``) when it fits an ``int``; otherwise (and always when
    ``typed``) with the suffix of its type (``32u``, ``4294967295u``, ``1ull``)."""
    if width == 1:
        return "true" if value & 1 else "false"
    unsigned = value % (1 << width)
    if width > 32:
        return f"{unsigned}ull" if typed or unsigned > 0x7FFFFFFF else str(unsigned)
    if typed or unsigned > 0x7FFFFFFF:
        return f"{unsigned}u"
    return str(unsigned)


def constant_literal(attr: Attribute, typed: bool = False) -> str:
    """The C++ literal of an ``arith.constant`` value attribute."""
    if isinstance(attr, IntegerAttr):
        return integer_literal(attr.value.data, bit_width(attr.type), typed)
    if isinstance(attr, FloatAttr):
        return _float_literal(attr.value.data)
    raise CompileError(f"the C++ emitter cannot print the constant {attr}")
