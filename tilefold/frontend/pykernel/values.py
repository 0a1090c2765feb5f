"""What a Python expression in a kernel evaluates to while the kernel is being built.

Reads: nothing. Writes: nothing. An expression is either

* a Python constant (``int``, ``bool``, ``float``, ``str``), folded at build time and
  materialised as an ``arith.constant`` of whatever type its use needs (so ``64`` is an
  ``i32`` next to a ``uint32`` and an ``i64`` next to a NOC address);
* an SSA value: ``i32`` for ``uint32_t``, ``i64`` for ``uint64_t``, ``i1`` for a
  comparison, ``f32`` nowhere but float API parameters, a ``TensorAccessor`` /
  ``TensorAccessorArgs``, or a ``memref`` for an ``array``;
* an :class:`L1Pointer` (``l1_ptr(addr, width)``), which only exists to be indexed;
* a :class:`Static` object: something the kernel names but cannot hold as a value (a
  device function, an ``@inline`` helper, a module, the ``CBIndex`` enum).
"""

from __future__ import annotations

import types
from dataclasses import dataclass

from xdsl.dialects.builtin import Float32Type, IndexType, IntegerType, MemRefType, i1, i32, i64
from xdsl.ir import Attribute, SSAValue

from tilefold.frontend.pykernel.api import DeviceFunction, InlineFunction
from tilefold.ir.ttkernel import TensorAccessorArgsType, TensorAccessorType

U32 = i32
U64 = i64
BOOL = i1


@dataclass(frozen=True)
class L1Pointer:
    """``reinterpret_cast<volatile tt_l1_ptr uintW_t*>(address)``."""

    address: SSAValue
    width: int


@dataclass(frozen=True)
class Static:
    """A compile-time object named by the kernel (``name`` is how the kernel spelled it)."""

    obj: object
    name: str


Value = int | float | str | SSAValue | L1Pointer | Static


def int_width(t: Attribute) -> int | None:
    """Bit width of an integer type (``index`` counts as 64), else None."""
    if isinstance(t, IntegerType):
        return t.width.data
    if isinstance(t, IndexType):
        return 64
    return None


def is_int_value(value) -> bool:
    return isinstance(value, SSAValue) and isinstance(value.type, IntegerType)


def is_array(value) -> bool:
    return isinstance(value, SSAValue) and isinstance(value.type, MemRefType)


def describe(value) -> str:
    """How an error message names a value."""
    if isinstance(value, bool):
        return f"the boolean {value}"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the float {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, L1Pointer):
        return f"an l1_ptr (a {value.width}-bit L1 pointer)"
    if isinstance(value, Static):
        obj = value.obj
        if isinstance(obj, DeviceFunction):
            return f"the device function {obj.name}"
        if isinstance(obj, InlineFunction):
            return f"the @inline helper {obj.name}"
        if isinstance(obj, types.ModuleType):
            return f"the module {obj.__name__}"
        if isinstance(obj, type):
            return f"the class {obj.__name__}"
        if callable(obj):
            return f"the Python function {value.name}"
        return f"{value.name} (a Python {type(obj).__name__})"
    if isinstance(value, SSAValue):
        t = value.type
        if t == i1:
            return "a boolean"
        if isinstance(t, IntegerType):
            return f"a {t.width.data}-bit integer" + (" (a NOC address)" if t == i64 else "")
        if isinstance(t, Float32Type):
            return "a float"
        if isinstance(t, TensorAccessorType):
            return "a TensorAccessor"
        if isinstance(t, TensorAccessorArgsType):
            return "a TensorAccessorArgs"
        if isinstance(t, MemRefType):
            return "an array"
    return f"a {type(value).__name__}"


def wider(*types_: Attribute) -> Attribute:
    """The integer type two operands are brought to: i64 if either is 64-bit, else i32."""
    return U64 if any(int_width(t) == 64 for t in types_) else U32
