"""Data types and tensor annotations of the TileLang front end (``T.float32``, ``T.Tensor``).

Reads: dtype names and shapes the user writes. Writes: nothing. A dtype is kept as the
tilefold :class:`~tilefold.layout.formats.DataFormat` it is stored in; TileLang's names map
as the Tenstorrent backend maps them: ``float``/``float32`` → Float32, ``bfloat16`` →
Float16_b, and ``float16`` → Float16_b too (the 16-bit float format of the Tensix engines'
circular buffers here is bfloat16; seed 001 stores its float16 example as ``BFloat16_b``).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import MemRefType, StringAttr, bf16, f32

from tilefold.errors import KernelError, SourceLocation
from tilefold.layout.formats import DataFormat

_DTYPES = {
    "float": DataFormat.Float32, "float32": DataFormat.Float32, "fp32": DataFormat.Float32, "f32": DataFormat.Float32,
    "bfloat16": DataFormat.Float16_b, "bf16": DataFormat.Float16_b,
    "float16": DataFormat.Float16_b, "half": DataFormat.Float16_b, "fp16": DataFormat.Float16_b,
}
_SHORT = {DataFormat.Float32: "f32", DataFormat.Float16_b: "bf16"}


@dataclass(frozen=True)
class DType:
    """A TileLang dtype (``T.float32``, ``T.bfloat16``, ``T.float16``)."""

    name: str

    @property
    def data_format(self) -> DataFormat:
        return _DTYPES[self.name]

    def __str__(self) -> str:
        return self.name


float32 = DType("float32")
bfloat16 = DType("bfloat16")
float16 = DType("float16")


def data_format_of(dtype, where: SourceLocation | None = None, what: str = "dtype") -> DataFormat:
    """The storage format of a TileLang dtype (a :class:`DType`, a name, or a DataFormat)."""
    if isinstance(dtype, DataFormat) and dtype in _SHORT:
        return dtype
    name = dtype.name if isinstance(dtype, DType) else str(getattr(dtype, "name", dtype))
    key = name.strip().lower().removeprefix("torch.").removeprefix("t.")
    if key in _DTYPES:
        return _DTYPES[key]
    raise KernelError(f"{what} {dtype!r} is not supported; use one of float32, bfloat16 or float16", where)


def short_name(fmt: DataFormat) -> str:
    """``bf16`` / ``f32``: the name the ``tt.buffer`` attributes use."""
    return _SHORT[fmt]


def element_type(fmt: DataFormat):
    return f32 if fmt is DataFormat.Float32 else bf16


def memref_type(shape, fmt: DataFormat, scope: str | None = None) -> MemRefType:
    space = StringAttr(scope) if scope else None
    return MemRefType(element_type(fmt), list(shape), memory_space=space) if space else \
        MemRefType(element_type(fmt), list(shape))


def format_of_memref(mtype: MemRefType) -> DataFormat:
    return DataFormat.Float32 if mtype.element_type == f32 else DataFormat.Float16_b


@dataclass(frozen=True)
class TensorType:
    """``T.Tensor(shape, dtype)`` / ``T.Buffer(shape, dtype)``: a kernel parameter's type."""

    shape: tuple[int, ...]
    dtype: DataFormat

    def __repr__(self) -> str:
        return f"T.Tensor({self.shape}, {short_name(self.dtype)})"


def _tensor(shape, dtype="float32", *args, **kwargs) -> TensorType:
    from tilefold.program.caller import user_location

    where = user_location()
    if isinstance(shape, int):
        shape = (shape,)
    try:
        dims = tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise KernelError(f"T.Tensor shape {shape!r} must be a tuple of ints (symbolic shapes are not supported; "
                          "build the kernel for each shape)", where) from None
    if not dims or any(d <= 0 for d in dims):
        raise KernelError(f"T.Tensor shape {dims} must have at least one dim and only positive dims", where)
    return TensorType(dims, data_format_of(dtype, where, "T.Tensor dtype"))


def Tensor(shape, dtype="float32", *args, **kwargs) -> TensorType:  # noqa: N802 - TileLang's name
    """A global tensor parameter of a ``@T.prim_func``: its shape and dtype."""
    return _tensor(shape, dtype)


def Buffer(shape, dtype="float32", *args, **kwargs) -> TensorType:  # noqa: N802 - TileLang's name
    """The same as :func:`Tensor` (TileLang's older spelling)."""
    return _tensor(shape, dtype)


__all__ = ["DType", "float32", "bfloat16", "float16", "data_format_of", "short_name", "element_type",
           "memref_type", "format_of_memref", "TensorType", "Tensor", "Buffer"]
