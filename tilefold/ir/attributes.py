"""The ``tt.*`` metadata of the TileLang pipeline: Python values ↔ MLIR attributes.

Reads / writes: function attributes. Passes keep their metadata as plain Python values
(dicts, lists, strings, ints, floats, bools, None) and store them on the kernel function as
MLIR attributes: a dict as the typed record of its key (:data:`tilefold.ir.metadata.RECORDS`,
which verifies its fields when made; a dict under any other key is refused), everything else as
``ArrayAttr``, ``StringAttr``, ``IntegerAttr``, ``FloatAttr``, ``BoolAttr`` or ``UnitAttr``
(None) — so every pass's output prints and parses back as MLIR text. :func:`kernel_function` finds the TileLang kernel of a module.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    f64,
    i64,
)
from xdsl.ir import Attribute

from tilefold.errors import CompileError, SourceLocation
from tilefold.ir.metadata import NameMap, Record, as_record

PARAMS = "tile.params"
_MISSING = object()


def to_attr(value: Any) -> Attribute:
    """A Python value as an MLIR attribute."""
    if isinstance(value, Attribute):
        return value
    if value is None:
        return UnitAttr()
    if isinstance(value, bool):
        return BoolAttr.from_bool(value)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    if isinstance(value, float):
        return FloatAttr(value, f64)
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, dict):
        raise TypeError(f"metadata records are typed: give {value!r} a record in tilefold.ir.metadata")
    if isinstance(value, (list, tuple)):
        return ArrayAttr([to_attr(v) for v in value])
    raise TypeError(f"cannot store {value!r} as an attribute")


def from_attr(attr: Attribute) -> Any:
    """An MLIR attribute as a Python value."""
    if isinstance(attr, UnitAttr):
        return None
    if isinstance(attr, IntegerAttr):
        if isinstance(attr.type, IntegerType) and attr.type.width.data == 1:
            return bool(attr.value.data)
        return attr.value.data
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, ArrayAttr):
        return [from_attr(v) for v in attr.data]
    if isinstance(attr, (Record, NameMap)):
        return attr.to_dict()
    return attr


def get_attr(op, key: str, default: Any = _MISSING) -> Any:
    attr = op.attributes.get(key)
    if attr is None:
        if default is _MISSING:
            raise CompileError(f"the kernel has no {key} attribute; run the passes of the TileLang pipeline in order")
        return default
    return from_attr(attr)


def set_attr(op, key: str, value: Any) -> None:
    """Store ``value`` under ``key``: as its typed record when ``key`` holds one
    (:mod:`tilefold.ir.metadata`, which checks the fields), else as plain MLIR attributes."""
    record = as_record(key, value)
    op.attributes[key] = record if record is not None else to_attr(value)


def kernel_function(module: ModuleOp) -> func.FuncOp:
    """The TileLang kernel of a module (the function with ``tile.params``)."""
    for op in module.ops:
        if isinstance(op, func.FuncOp) and PARAMS in op.attributes:
            return op
    raise CompileError("the module holds no TileLang kernel (a func.func with a tile.params attribute)")


def param_names(kernel: func.FuncOp) -> list[str]:
    return get_attr(kernel, PARAMS)


def location_of(spec: dict | None) -> SourceLocation | None:
    """The ``loc`` [file, line] an annotation dict carries, as a SourceLocation."""
    loc = (spec or {}).get("loc")
    if isinstance(loc, list) and len(loc) == 2:
        return SourceLocation(str(loc[0]), int(loc[1]))
    return None


__all__ = ["to_attr", "from_attr", "get_attr", "set_attr", "kernel_function", "param_names", "location_of", "PARAMS"]


def cb_entries(kernel: func.FuncOp) -> dict[str, dict]:
    """The ``tt.cb.<name>`` entries of a kernel, by buffer name."""
    prefix = "tt.cb."
    return {k[len(prefix):]: get_attr(kernel, k) for k in kernel.attributes if k.startswith(prefix)}
