"""Tensor annotations of the TileLang front end (``T.Tensor``) and the memref types of its buffers.

Reads: shapes and dtypes the user writes. Writes: nothing. A dtype is kept as the tilefold
:class:`~tilefold.layout.formats.DataFormat` it is stored in (:mod:`.dtypes` says which);
the memref element types of those formats are in :mod:`tilefold.ir.tile_types`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilefold.errors import KernelError
from tilefold.frontend.tilelang.dtypes import DType, canonical_name, data_format_of
from tilefold.ir.tile_types import (  # noqa: F401  (memref element types live in the IR layer)
    element_type,
    format_of_memref,
    format_of_short_name,
    memref_type,
    short_name,
)
from tilefold.layout.formats import DataFormat


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
        from tilefold.caller import user_location

        return tensor_type(shape, kwargs.get("dtype", dtype), user_location())

    def __getitem__(self, key) -> TensorType:
        from tilefold.caller import user_location

        shape, dtype = (key[0], key[1]) if isinstance(key, tuple) and len(key) == 2 else (key, "float32")
        return tensor_type(shape, dtype, user_location())

    def __repr__(self) -> str:
        return f"T.{self.__name__}"


class _StridedAnnotation(_TensorAnnotation):
    """``T.StridedTensor(shape, strides, dtype)``: a tensor the caller passes as a strided view (a
    slice of a larger one). The host gathers and scatters its elements, so the device tensor is
    an ordinary one of ``shape``: the strides change nothing on the device."""

    def __call__(self, shape, strides=None, dtype="float32", *args, **kwargs) -> TensorType:
        return super().__call__(shape, kwargs.get("dtype", dtype))

    def __getitem__(self, key) -> TensorType:
        if isinstance(key, tuple) and len(key) == 3:
            key = (key[0], key[2])
        return super().__getitem__(key)


Tensor = _TensorAnnotation("Tensor")
Buffer = _TensorAnnotation("Buffer")
StridedTensor = _StridedAnnotation("StridedTensor")
# Parameter annotations of ``@T.macro`` helpers: the builder inlines a helper at its call, so
# these only document the buffers a helper takes.
SharedBuffer = _TensorAnnotation("SharedBuffer")
FragmentBuffer = _TensorAnnotation("FragmentBuffer")
LocalBuffer = _TensorAnnotation("LocalBuffer")


__all__ = ["DType", "data_format_of", "short_name", "format_of_short_name", "element_type", "memref_type",
           "format_of_memref", "TensorType", "tensor_type", "Tensor", "Buffer", "SharedBuffer",
           "FragmentBuffer", "LocalBuffer"]
