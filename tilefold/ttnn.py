"""The host tensor module of TT-Lang scripts (the names of TT-NN a script uses), for the simulated device.

Reads: torch tensors or numpy arrays. Writes: :class:`Tensor` objects holding the values a
device tensor of that data type holds (bfloat16 rounded to nearest even, bfloat8_b with its
shared exponents), and torch tensors / numpy arrays back.

A script written for TT-Lang runs unchanged when ``import ttnn`` resolves to this module
(``tilefold sim SCRIPT.py`` arranges that, or write ``import tilefold.ttnn as ttnn``):
``open_device`` / ``close_device``, ``from_torch`` / ``to_torch`` (and ``from_numpy`` /
``to_numpy``), ``zeros`` / ``ones`` / ``full`` / ``rand`` / ``empty``, the data types
``bfloat16`` / ``float32`` / ``bfloat8_b``, the layouts ``TILE_LAYOUT`` / ``ROW_MAJOR_LAYOUT``,
``DRAM_MEMORY_CONFIG`` / ``L1_MEMORY_CONFIG``, and a few element-wise operations computed on the
host as the device would round them (``add``, ``subtract``, ``multiply``, ``matmul``, ``relu``,
``exp``). torch is optional: without it, use the numpy functions.
"""

from __future__ import annotations

import numpy as np

from tilefold.errors import LayoutError
from tilefold.layout.formats import DataFormat, data_format, to_bfloat16
from tilefold.layout.host import from_device_pages, to_device_pages
from tilefold.layout.tensor_spec import DRAM_MEMORY_CONFIG, L1_MEMORY_CONFIG, MemoryConfig


class DataType:
    """A TT-NN data type (``ttnn.bfloat16`` ...)."""

    def __init__(self, name: str):
        self.name = name

    @property
    def data_format(self) -> DataFormat:
        return data_format(self.name)

    def __repr__(self) -> str:
        return f"DataType.{self.name.upper()}"


bfloat16 = DataType("bfloat16")
float32 = DataType("float32")
bfloat8_b = DataType("bfloat8_b")
bfloat4_b = DataType("bfloat4_b")
uint32 = DataType("uint32")
int32 = DataType("int32")
_DTYPES = {d.name: d for d in (bfloat16, float32, bfloat8_b, bfloat4_b, uint32, int32)}


class Layout:
    """A TT-NN layout (``ttnn.TILE_LAYOUT`` / ``ttnn.ROW_MAJOR_LAYOUT``)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"Layout.{self.name}"


TILE_LAYOUT = Layout("TILE")
ROW_MAJOR_LAYOUT = Layout("ROW_MAJOR")
TILE_SIZE = 32


class Shape(tuple):
    """A tensor shape (a tuple of ints)."""

    @property
    def rank(self) -> int:
        return len(self)


class CoreCoord:
    def __init__(self, x: int, y: int):
        self.x, self.y = x, y

    def __repr__(self) -> str:
        return f"CoreCoord(x={self.x}, y={self.y})"


class Device:
    """A simulated device (``ttnn.open_device``)."""

    def __init__(self, device_id: int = 0, arch=None):
        from tilefold.arch import get_arch

        self.device_id = device_id
        self.arch = get_arch(arch)
        self.is_open = True

    def compute_with_storage_grid_size(self) -> CoreCoord:
        return CoreCoord(*self.arch.grid)

    def id(self) -> int:
        return self.device_id

    def __repr__(self) -> str:
        return f"<simulated {self.arch.board} device {self.device_id}>"


def open_device(device_id: int = 0, **kwargs) -> Device:
    """Open the simulated device (the session's architecture; Wormhole n150 unless told otherwise)."""
    from tilefold.frontend.ttl.session import settings

    return Device(device_id, settings().arch)


def close_device(device: Device) -> None:
    device.is_open = False


def _dtype(dtype) -> DataType:
    if isinstance(dtype, DataType):
        return dtype
    name = getattr(dtype, "name", None) or str(dtype)
    name = name.lower().removeprefix("datatype.").removeprefix("ttnn.")
    if name in _DTYPES:
        return _DTYPES[name]
    try:
        return _DTYPES[data_format(name).ttnn_name]
    except Exception:      # noqa: BLE001 - reported below
        raise LayoutError(f"dtype {dtype!r} is not a TT-NN data type; use ttnn.bfloat16, ttnn.float32 or "
                          "ttnn.bfloat8_b") from None


def _layout(layout) -> Layout:
    if isinstance(layout, Layout):
        return layout
    text = str(getattr(layout, "name", layout)).upper()
    return TILE_LAYOUT if "TILE" in text else ROW_MAJOR_LAYOUT


def quantize(values: np.ndarray, dtype: DataType, layout: Layout) -> np.ndarray:
    """The values a device tensor of ``dtype`` holds for ``values`` (float32 for float formats)."""
    fmt = dtype.data_format
    values = np.asarray(values)
    if fmt is DataFormat.Float16_b:
        return to_bfloat16(values.astype(np.float32)).astype(np.float32)
    if fmt is DataFormat.Float32:
        return values.astype(np.float32)
    if fmt.is_block_float:
        if layout is not TILE_LAYOUT:
            raise LayoutError(f"{dtype.name} exists only in tile layout; pass layout=ttnn.TILE_LAYOUT")
        pages = to_device_pages(values.astype(np.float32), fmt, "TILE")
        return from_device_pages(pages, values.shape, fmt, "TILE").astype(np.float32)
    return values.astype(fmt.numpy_dtype)


class Tensor:
    """A device tensor: shape, data type, layout, memory config and its values.

    Like a TT-NN tensor on a device, it keeps the bytes the device holds (pages, tilized and
    packed) once an operation has used or written it; host values are converted from those bytes
    only when the host reads them, so operations chained on device tensors pay no conversions."""

    def __init__(self, values: np.ndarray, dtype: DataType, layout: Layout, device: Device | None = None,
                 memory_config: MemoryConfig | None = None):
        values = np.asarray(values)
        if values.ndim == 0:
            raise LayoutError("a device tensor needs rank >= 1; reshape the scalar to (1,)")
        self.dtype = dtype
        self.layout = layout
        self._device = device
        self._memory_config = memory_config or DRAM_MEMORY_CONFIG
        self._values: np.ndarray | None = quantize(values, dtype, layout)
        self._shape = self._values.shape
        self._pages: tuple | None = None     # (buffer geometry, device pages)

    @property
    def shape(self) -> Shape:
        return Shape(self._shape)

    @property
    def padded_shape(self) -> Shape:
        if self.layout is not TILE_LAYOUT:
            return self.shape
        s = list(self.shape)
        s[-1] = -(-s[-1] // TILE_SIZE) * TILE_SIZE
        if len(s) > 1:
            s[-2] = -(-s[-2] // TILE_SIZE) * TILE_SIZE
        return Shape(s)

    @property
    def host_values(self) -> np.ndarray:
        """The tensor's values (float32 for float data types)."""
        if self._values is None:
            (shape, fmt, layout, tile), pages = self._pages
            self._values = from_device_pages(pages, shape, fmt, layout, tile)
        return self._values

    def device_pages(self, buffer) -> np.ndarray:
        """The bytes of this tensor as ``buffer`` (a Program buffer) holds them on the device."""
        key = (tuple(buffer.shape), buffer.data_format, buffer.layout, buffer.tile)
        if self._pages is None or self._pages[0] != key:
            self._pages = (key, to_device_pages(self.host_values, buffer.data_format, buffer.layout, buffer.tile))
        return self._pages[1]

    def set_device_pages(self, pages: np.ndarray, buffer) -> None:
        """What the device wrote into this tensor's buffer; host values follow when asked for."""
        if tuple(buffer.shape) != tuple(self._shape):
            raise LayoutError(f"buffer shape {tuple(buffer.shape)} does not match the tensor {tuple(self._shape)}")
        self._pages = ((tuple(buffer.shape), buffer.data_format, buffer.layout, buffer.tile), pages)
        self._values = None

    def memory_config(self) -> MemoryConfig:
        return self._memory_config

    def device(self) -> Device | None:
        return self._device

    def get_dtype(self) -> DataType:
        return self.dtype

    def get_layout(self) -> Layout:
        return self.layout

    def to_numpy(self) -> np.ndarray:
        return self.host_values.copy()

    def __repr__(self) -> str:
        return f"ttnn.Tensor(shape={tuple(self.shape)}, dtype={self.dtype.name}, layout={self.layout.name})"


# --- conversion -----------------------------------------------------------------------------


def _torch():
    try:
        import torch
    except ImportError:
        raise LayoutError("torch is not installed; use ttnn.from_numpy / ttnn.to_numpy") from None
    return torch


def _default_dtype(array: np.ndarray) -> DataType:
    """The data type of a numpy array's values: bfloat16 for ml_dtypes.bfloat16, int32 for integers,
    float32 otherwise."""
    if array.dtype.name == "bfloat16":
        return bfloat16
    if array.dtype.kind in "iu":
        return int32
    return float32


def from_numpy(array, dtype=None, layout=ROW_MAJOR_LAYOUT, device: Device | None = None,
               memory_config: MemoryConfig | None = None) -> Tensor:
    """A device tensor with the values of a numpy array, rounded to ``dtype`` (by default the array's)."""
    array = np.asarray(array)
    dt = _dtype(dtype) if dtype is not None else _default_dtype(array)
    return Tensor(array.astype(np.float32) if dt.data_format.is_float else array, dt, _layout(layout), device,
                  memory_config)


def from_torch(tensor, dtype=None, layout=ROW_MAJOR_LAYOUT, device: Device | None = None,
               memory_config: MemoryConfig | None = None, **kwargs) -> Tensor:
    """A device tensor with the values of a torch tensor (its own data type unless ``dtype`` is given)."""
    torch = _torch()
    if not isinstance(tensor, torch.Tensor):
        raise LayoutError(f"from_torch takes a torch.Tensor, not {type(tensor).__name__}; use from_numpy for arrays")
    if dtype is None:
        dtype = {torch.bfloat16: bfloat16, torch.float32: float32, torch.int32: int32}.get(tensor.dtype, bfloat16)
    values = tensor.detach().to(torch.float32).cpu().numpy() if tensor.is_floating_point() else tensor.cpu().numpy()
    return Tensor(values, _dtype(dtype), _layout(layout), device, memory_config)


def to_numpy(tensor: Tensor) -> np.ndarray:
    """The tensor's values as a numpy array (float32 for float data types)."""
    return tensor.to_numpy()


def to_torch(tensor: Tensor, dtype=None, **kwargs):
    """The tensor's values as a torch tensor (bfloat16 for bfloat16 and block-float tensors)."""
    torch = _torch()
    values = torch.from_numpy(tensor.to_numpy())
    if dtype is not None:
        return values.to(dtype)
    if tensor.dtype.data_format in (DataFormat.Float16_b, DataFormat.Bfp8_b, DataFormat.Bfp4_b):
        return values.to(torch.bfloat16)
    return values


# --- creation -----------------------------------------------------------------------------------


def _shape(shape) -> tuple[int, ...]:
    return tuple(int(s) for s in (shape if hasattr(shape, "__len__") else (shape,)))


def full(shape, fill_value, dtype=bfloat16, layout=ROW_MAJOR_LAYOUT, device=None, memory_config=None) -> Tensor:
    return Tensor(np.full(_shape(shape), fill_value, dtype=np.float32), _dtype(dtype), _layout(layout), device,
                  memory_config)


def zeros(shape, dtype=bfloat16, layout=ROW_MAJOR_LAYOUT, device=None, memory_config=None) -> Tensor:
    return full(shape, 0.0, dtype, layout, device, memory_config)


def ones(shape, dtype=bfloat16, layout=ROW_MAJOR_LAYOUT, device=None, memory_config=None) -> Tensor:
    return full(shape, 1.0, dtype, layout, device, memory_config)


def empty(shape, dtype=bfloat16, layout=ROW_MAJOR_LAYOUT, device=None, memory_config=None) -> Tensor:
    return zeros(shape, dtype, layout, device, memory_config)


def rand(shape, dtype=bfloat16, layout=ROW_MAJOR_LAYOUT, device=None, memory_config=None, seed=None) -> Tensor:
    values = np.random.default_rng(seed).random(_shape(shape), dtype=np.float32)
    return Tensor(values, _dtype(dtype), _layout(layout), device, memory_config)


def zeros_like(tensor: Tensor, dtype=None, layout=None, device=None, memory_config=None) -> Tensor:
    return zeros(tensor.shape, dtype or tensor.dtype, layout or tensor.layout, device or tensor.device(),
                 memory_config or tensor.memory_config())


# --- host-side element-wise operations ------------------------------------------------------------


def _result(values: np.ndarray, like: Tensor, dtype=None) -> Tensor:
    return Tensor(values, _dtype(dtype) if dtype is not None else like.dtype, like.layout, like.device(),
                  like.memory_config())


def _operand(x, like: Tensor) -> np.ndarray:
    return x.host_values if isinstance(x, Tensor) else np.float32(x)


def add(a: Tensor, b, dtype=None, **kwargs) -> Tensor:
    return _result(a.host_values + _operand(b, a), a, dtype)


def subtract(a: Tensor, b, dtype=None, **kwargs) -> Tensor:
    return _result(a.host_values - _operand(b, a), a, dtype)


def multiply(a: Tensor, b, dtype=None, **kwargs) -> Tensor:
    return _result(a.host_values * _operand(b, a), a, dtype)


def matmul(a: Tensor, b: Tensor, dtype=None, **kwargs) -> Tensor:
    return _result(a.host_values.astype(np.float32) @ b.host_values.astype(np.float32), a, dtype)


def relu(a: Tensor, **kwargs) -> Tensor:
    return _result(np.maximum(a.host_values, 0), a)


def exp(a: Tensor, **kwargs) -> Tensor:
    return _result(np.exp(a.host_values), a)


def to_layout(tensor: Tensor, layout, **kwargs) -> Tensor:
    return Tensor(tensor.host_values, tensor.dtype, _layout(layout), tensor.device(), tensor.memory_config())


def to_device(tensor: Tensor, device, memory_config=None) -> Tensor:
    return Tensor(tensor.host_values, tensor.dtype, tensor.layout, device, memory_config or tensor.memory_config())


def from_device(tensor: Tensor) -> Tensor:
    return tensor


__all__ = [
    "DataType", "bfloat16", "float32", "bfloat8_b", "bfloat4_b", "uint32", "int32", "Layout", "TILE_LAYOUT",
    "ROW_MAJOR_LAYOUT", "TILE_SIZE", "MemoryConfig", "DRAM_MEMORY_CONFIG", "L1_MEMORY_CONFIG", "Shape", "Device",
    "open_device", "close_device", "Tensor", "from_numpy", "from_torch", "to_numpy", "to_torch", "full", "zeros",
    "ones", "empty", "rand", "zeros_like", "add", "subtract", "multiply", "matmul", "relu", "exp", "to_layout",
    "to_device", "from_device",
]
