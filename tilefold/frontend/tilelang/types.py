"""Tensor annotations of the TileLang front end (``T.Tensor``) and the memref types of its buffers.

Reads: shapes and dtypes the user writes. Writes: nothing. A dtype is kept as the tilefold
:class:`~tilefold.layout.formats.DataFormat` it is stored in (:mod:`.dtypes` says which);
memrefs carry that format as their element type (``f32``, ``bf16``, ``f16``, ``si32`` ...).
"""

from __future__ import annotations

from dataclasses import dataclass

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

from tilefold.errors import KernelError
from tilefold.frontend.tilelang.dtypes import DType, canonical_name, data_format_of
from tilefold.layout.formats import DataFormat

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


@dataclass(frozen=True)
class TensorType:
    """``T.Tensor(shape, dtype)`` / ``T.Buffer(shape, dtype)``: a kernel parameter's type."""

    shape: tuple[int, ...]
    dtype: DataFormat
    dtype_name: str = ""            # the TileLang dtype (host arrays come back in it)

    def __repr__(self) -> str:
        return f"T.Tensor({self.shape}, {self.dtype_name or short_name(self.dtype)})"


def tensor_type(shape, dtype="float32", where=None) -> TensorType:
    """A checked :class:`TensorType`; dims may still be unbound ``T.const`` names (eager kernels)."""
    from tilefold.frontend.tilelang.values import ConstVar, Index

    if isinstance(shape, (int, ConstVar)) or (isinstance(shape, Index) and shape.is_constant):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise KernelError(f"T.Tensor shape {shape!r} must be a tuple of ints", where)
    dims = []
    for s in shape:
        if isinstance(s, Index) and s.is_constant:
            s = s.const
        if isinstance(s, ConstVar):
            dims.append(s)
            continue
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise KernelError(f"T.Tensor shape {tuple(shape)!r} must hold integer constants (T.const names are "
                              "bound from the tensors an eager kernel is called with)", where)
        if s <= 0:
            raise KernelError(f"T.Tensor shape {tuple(shape)} must have only positive dims", where)
        dims.append(int(s))
    if not dims:
        raise KernelError("T.Tensor shape () has no dims; give it at least one", where)
    return TensorType(tuple(dims), data_format_of(dtype, where, "T.Tensor dtype"), canonical_name(dtype))


class _TensorAnnotation:
    """``T.Tensor(shape, dtype)`` and ``T.Tensor[shape, dtype]`` (also ``T.Buffer``): a kernel
    parameter's type. Inside a kernel body, ``T.Tensor(shape, dtype, X.data)`` is a view of X."""

    __tile_intrinsic__ = "Tensor"

    def __init__(self, name: str):
        self.__name__ = name

    def __call__(self, shape, dtype="float32", *args, **kwargs) -> TensorType:
        from tilefold.program.caller import user_location

        return tensor_type(shape, kwargs.get("dtype", dtype), user_location())

    def __getitem__(self, key) -> TensorType:
        from tilefold.program.caller import user_location

        shape, dtype = (key[0], key[1]) if isinstance(key, tuple) and len(key) == 2 else (key, "float32")
        return tensor_type(shape, dtype, user_location())

    def __repr__(self) -> str:
        return f"T.{self.__name__}"


Tensor = _TensorAnnotation("Tensor")
Buffer = _TensorAnnotation("Buffer")
StridedTensor = _TensorAnnotation("StridedTensor")
# Parameter annotations of ``@T.macro`` helpers: the builder inlines a helper at its call, so
# these only document the buffers a helper takes.
SharedBuffer = _TensorAnnotation("SharedBuffer")
FragmentBuffer = _TensorAnnotation("FragmentBuffer")
LocalBuffer = _TensorAnnotation("LocalBuffer")


__all__ = ["DType", "data_format_of", "short_name", "format_of_short_name", "element_type", "memref_type",
           "format_of_memref", "TensorType", "tensor_type", "Tensor", "Buffer", "SharedBuffer",
           "FragmentBuffer", "LocalBuffer"]
