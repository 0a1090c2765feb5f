"""The host tensor module of TT-Lang scripts (the names of TT-NN a script uses), for the simulated device.

Reads: torch tensors or numpy arrays. Writes: :class:`Tensor` objects holding the values a
device tensor of that data type holds (bfloat16 rounded to nearest even, bfloat8_b / bfloat4_b
with their shared exponents), and torch tensors / numpy arrays back.

A script written for TT-Lang runs unchanged when ``import ttnn`` resolves to this module
(``tilefold sim SCRIPT.py`` arranges that, or write ``import tilefold.ttnn as ttnn``):
``open_device`` / ``close_device`` (``worker_l1_size=`` splits a core's L1 between the
kernel-config ring and the allocator, at most ``get_max_worker_l1_unreserved_size()``), ``from_torch`` / ``to_torch`` (and ``from_numpy`` /
``to_numpy``), ``zeros`` / ``ones`` / ``full`` / ``rand`` / ``empty``, the data types
``bfloat16`` / ``float32`` / ``bfloat8_b`` / ``bfloat4_b``, the layouts ``TILE_LAYOUT`` / ``ROW_MAJOR_LAYOUT``,
``DRAM_MEMORY_CONFIG`` / ``L1_MEMORY_CONFIG``, sharded memory configs (``create_sharded_memory_config``
over a ``CoreGrid`` or ``CoreRangeSet`` by ``ShardStrategy``, ``to_memory_config``, ``TensorSpec`` with
TT-NN's sharding helpers and ``NdShardSpec``), and TT-NN's operations computed on
the host and rounded to their data types (:mod:`tilefold.ttnn_ops`: element-wise ops and their
aliases, reductions, ``sort`` / ``topk`` / ``gather``, ``typecast``, shapes; ``HOST_OPS`` names them,
and the operators ``+ - * / ** @ < > <= >= == != & | ^ ~ << >>`` and slicing apply them to tensors).
torch is optional: without it, use the numpy functions.

Tensors are created in tile layout unless a layout is given, as TT-Lang's simulator does (TT-NN
itself defaults to row major; TT-Lang programs written for it pass the layout). A sharded tensor's
shards live in the L1 of the cores of its shard grid, so a node of an operation that reads its own
part reads its local shard. ``all_reduce`` / ``all_gather`` combine the pieces of a tensor spread
over a mesh of chips. A name this module lacks raises one error naming the user's line, and so
does an argument of the wrong kind: a torch tensor or numpy array where a ttnn tensor goes, a layout,
data type, device, memory config, tile or shape that is not one, a closed device, or a tensor its
sharded memory config cannot hold.
"""

from __future__ import annotations

from tilefold.frozen_gc import frozen_gc as _frozen_gc

# beside torch, a full collection during these imports walks about a million objects (0.1 s)
with _frozen_gc():
    import builtins
    import contextlib
    import enum
    import inspect
    import math as _math
    import sys
    import types

    import ml_dtypes
    import numpy as np

    from tilefold import ttnn_cache_ops  # noqa: F401 - registers the KV-cache operations in ttnn_ops.OPS
    from tilefold import ttnn_ops, uncaught
    from tilefold.errors import LayoutError, NotSimulatedError, TilefoldError, warn_at
    from tilefold.frontend.ttl import mesh
    from tilefold.frontend.ttl.host_types import (ROW_MAJOR_LAYOUT, TILE_LAYOUT, CoreCoord, CoreRange, CoreRangeSet, Layout,
                                                 SemaphoreDescriptor, conversion_hint)
    from tilefold.layout.formats import DataFormat, data_format, to_bfloat16
    from tilefold.layout.host import from_device_pages, to_device_pages
    from tilefold.layout.tiles import SUPPORTED_TILE_SHAPES, tile_shape as tile_shape_of
    from tilefold.layout.addressing import BufferType, ShardDistributionStrategy, ShardOrientation
    from tilefold.layout.addressing import buffer_type as _buffer_type
    from tilefold.layout.tensor_spec import (DRAM_MEMORY_CONFIG, L1_MEMORY_CONFIG, MemoryConfig, ShardSpec,
                                             TensorMemoryLayout)
    from tilefold.layout.tensor_spec import NdShardSpec as _LayoutNdShardSpec
    from tilefold.caller import missing_name, user_location
    from tilefold.huge_pages import ordinary_pages

uncaught.install()   # an uncaught tilefold error prints as one line

ordinary_pages()      # host tensors and TT-NN operations on ordinary pages (tilefold.huge_pages)


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
uint16 = DataType("uint16")
uint8 = DataType("uint8")
_DTYPES = {d.name: d for d in (bfloat16, float32, bfloat8_b, bfloat4_b, uint32, int32, uint16, uint8)}
for _dtype in _DTYPES.values():        # ttnn.DataType.BFLOAT16 is ttnn.bfloat16, as in TT-NN
    setattr(DataType, _dtype.name.upper(), _dtype)


TILE_SIZE = 32


class Shape(tuple):
    """A tensor shape (a tuple of ints); equal to a list or tuple of the same ints, as TT-NN's."""

    @property
    def rank(self) -> int:
        return len(self)

    def __eq__(self, other) -> bool:
        return tuple(self) == tuple(other) if isinstance(other, (list, tuple)) else NotImplemented

    def __ne__(self, other) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__

    def volume(self) -> int:
        """The number of elements (``Shape.volume()``)."""
        return int(np.prod(self, dtype=np.int64)) if self else 1

    def to_rank(self, rank: int) -> "Shape":
        """The shape with leading 1s to ``rank`` dims (or its leading 1s dropped down to it)."""
        dims = tuple(self)
        while len(dims) > rank and dims[0] == 1:
            dims = dims[1:]
        if len(dims) > rank:
            raise LayoutError(f"Shape{dims}.to_rank({rank}): its leading dims are not 1", user_location())
        return Shape((1,) * (rank - len(dims)) + dims)


class Device(mesh.ProgramCache):
    """A simulated device (``ttnn.open_device``)."""

    def __init__(self, device_id: int = 0, arch=None):
        from tilefold.arch import get_arch

        self.device_id = device_id
        self.arch = get_arch(arch)
        self.is_open = True
        self.worker_l1_size = None       # set by open_device(worker_l1_size=...)
        self._session_arch = None        # the session's device before that changed its L1 split

    def compute_with_storage_grid_size(self) -> CoreCoord:
        return CoreCoord(*self.arch.grid)

    def id(self) -> int:
        return self.device_id

    def l1_size_per_core(self) -> int:
        return self.arch.l1_size

    def __repr__(self) -> str:
        return f"<simulated {self.arch.board} device {self.device_id}>"


def open_device(device_id: int = 0, worker_l1_size: int | None = None, **kwargs) -> Device:
    """Open the simulated device (the session's architecture; Wormhole n150 unless told otherwise).

    ``worker_l1_size`` (bytes, at most :func:`get_max_worker_l1_unreserved_size`) is the L1 of each
    core the allocator gives to circular buffers and L1 buffers while the device is open; the
    kernel-config ring takes the rest. Operations run until ``close_device`` see that split.
    """
    from tilefold.arch import get_arch
    from tilefold.frontend.ttl.session import settings

    session = settings()
    arch = get_arch(session.arch)
    chips = mesh.num_available_devices()
    if isinstance(device_id, bool) or not isinstance(device_id, (int, np.integer)) or not 0 <= device_id < chips:
        simulated = f"{chips} {arch.board} chip{'s are' if chips > 1 else ' is'} simulated"
        raise LayoutError(f"open_device(device_id={device_id!r}): {simulated}; give an id in 0..{chips - 1}",
                          user_location())
    device_id = int(device_id)
    if worker_l1_size is None:
        return Device(device_id, arch)
    limit = arch.max_worker_l1_unreserved_size
    if not isinstance(worker_l1_size, int) or not 0 < worker_l1_size <= limit:
        raise LayoutError(f"open_device(worker_l1_size={worker_l1_size!r}): a {arch.board} core has {limit} B of L1 "
                          "above its firmware (ttnn.get_max_worker_l1_unreserved_size()); give a size in 1.."
                          f"{limit}", user_location())
    device = Device(device_id, arch.with_worker_l1_size(worker_l1_size))
    device.worker_l1_size, device._session_arch = worker_l1_size, session.arch
    session.arch = device.arch
    return device


@contextlib.contextmanager
def manage_device(device_id: int = 0, **kwargs):
    """``with ttnn.manage_device(device_id=0) as device:``: a device opened for the block, closed after it."""
    device = open_device(device_id, **kwargs)
    try:
        yield device
    finally:
        close_device(device)


def close_device(device: Device) -> None:
    from tilefold.frontend.ttl.session import settings

    if not isinstance(device, (Device, mesh.MeshDevice)):
        raise LayoutError(f"close_device takes the device ttnn.open_device returned, not {type(device).__name__}",
                          user_location())
    # a mesh device (TT-Lang's multi-device tutorials close theirs here) never changes the L1 split
    if device.is_open and getattr(device, "worker_l1_size", None) is not None and settings().arch is device.arch:
        settings().arch = device._session_arch
    device.is_open = False


CreateDevice = open_device      # noqa: N816 - TT-NN's older names
CloseDevice = close_device      # noqa: N816


def get_max_worker_l1_unreserved_size() -> int:
    """Bytes of L1 per core above the firmware, shared by the kernel-config ring and the allocator
    (the largest ``worker_l1_size`` of ``open_device``), on the session's device."""
    from tilefold.arch import get_arch
    from tilefold.frontend.ttl.session import settings

    return get_arch(settings().arch).max_worker_l1_unreserved_size


class _DeviceModule:
    """``ttnn.device``: the device functions of TT-NN's ``ttnn.device`` module."""

    open_device = staticmethod(open_device)
    close_device = staticmethod(close_device)
    get_max_worker_l1_unreserved_size = staticmethod(get_max_worker_l1_unreserved_size)

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        from tilefold.frontend.ttl.math_api import UnsupportedName

        raise UnsupportedName(missing_name("ttnn.device", name, dir(type(self))), user_location())


device = _DeviceModule()


def _dtype(dtype) -> DataType:
    if isinstance(dtype, DataType):
        return dtype
    name = getattr(dtype, "name", None) or str(dtype)
    name = name.lower().removeprefix("datatype.").removeprefix("ttnn.").removeprefix("torch.")
    if name in _DTYPES:
        return _DTYPES[name]
    try:
        return _DTYPES[data_format(name).ttnn_name]
    except Exception:      # noqa: BLE001 - reported below
        raise LayoutError(f"dtype {dtype!r} is not a TT-NN data type; use ttnn.bfloat16, ttnn.float32, "
                          "ttnn.bfloat8_b, ttnn.bfloat4_b, ttnn.uint32, ttnn.int32, ttnn.uint16 or ttnn.uint8",
                          user_location()) from None


def _layout(layout) -> Layout:
    """``layout=``: a TT-NN layout (None: row major, as TT-NN's default)."""
    if isinstance(layout, Layout):
        return layout
    if layout is None:
        return ROW_MAJOR_LAYOUT
    name = getattr(layout, "name", None)
    if isinstance(name, str) and name.upper() in ("TILE", "ROW_MAJOR"):     # another module's Layout enum
        return TILE_LAYOUT if name.upper() == "TILE" else ROW_MAJOR_LAYOUT
    raise LayoutError(f"layout {layout!r} is not a TT-NN layout; use ttnn.TILE_LAYOUT or ttnn.ROW_MAJOR_LAYOUT",
                      user_location())


def _not_a_tensor(value, what: str) -> LayoutError:
    """The error for ``value`` given where ``what`` takes a ttnn tensor."""
    from tilefold.sim.device import RunResult

    if isinstance(value, RunResult):
        return LayoutError(f"{what} takes a ttnn tensor, not what an operation call returns: an operation writes its "
                           "results into the output tensors it is given — pass that tensor", user_location())
    hint = conversion_hint(value)
    hint = f"; it is {hint}" if hint else ""
    return LayoutError(f"{what} takes a ttnn tensor, not {type(value).__name__}{hint}", user_location())


def _tensor(value, what: str, mesh_ok: bool = True):
    """``value`` when it is a ttnn tensor (or a mesh tensor, if ``mesh_ok``); else one clear error."""
    if isinstance(value, Tensor) or mesh_ok and isinstance(value, mesh.MeshTensor):
        return value
    raise _not_a_tensor(value, what)


def _device(device, what: str):
    """``device=``: None (a host tensor) or an open device."""
    if device is None:
        return None
    if not isinstance(device, (Device, mesh.MeshDevice)):
        raise LayoutError(f"{what}(device={device!r}): give the device ttnn.open_device returned (or None)",
                          user_location())
    if not device.is_open:
        raise LayoutError(f"{what}: the device was closed (ttnn.close_device) before this use; close it after its "
                          "last use", user_location())
    return device


def _placed(tensor: Tensor, what: str = "") -> Tensor:
    """``tensor`` when its sharded memory config can hold it on the session's device (whole tiles
    per shard, enough cores, cores on the device's grid); else one error at the user's line."""
    config = tensor.memory_config()
    if config.is_sharded:
        from types import SimpleNamespace

        from tilefold.arch import get_arch
        from tilefold.frontend.ttl.session import settings

        view = SimpleNamespace(shape=tensor.device_shape, data_format=tensor.dtype.data_format,
                               layout=tensor.layout.name, tile=tensor.tile.tile_shape)
        try:
            config.distribution(view, get_arch(settings().arch))
        except LayoutError as exc:
            if exc.location is not None:
                raise
            raise LayoutError(f"{what}a {'x'.join(map(str, tensor.shape))} tensor does not fit its sharded memory "
                              f"config: {exc.message}", user_location()) from None
    return tensor


_CONVERSION_KEYWORDS = ("pad_value", "cq_id", "spec")


def _conversion_keywords(kwargs: dict, what: str) -> None:
    """The other keywords of ``from_torch`` / ``from_numpy``: TT-NN's."""
    for key in kwargs:
        if key not in _CONVERSION_KEYWORDS:
            raise LayoutError(f"{what}() got an unexpected keyword argument {key!r}", user_location())


def _memory_config(memory_config, what: str) -> MemoryConfig | None:
    if memory_config is None or isinstance(memory_config, MemoryConfig):
        return memory_config
    raise LayoutError(f"{what}(memory_config={memory_config!r}): give ttnn.DRAM_MEMORY_CONFIG, ttnn.L1_MEMORY_CONFIG "
                      "or a config of ttnn.create_sharded_memory_config", user_location())


def quantize(values: np.ndarray, dtype: DataType, layout: Layout) -> np.ndarray:
    """The values a device tensor of ``dtype`` holds for ``values`` (float32 for float formats)."""
    fmt = dtype.data_format
    values = np.asarray(values)
    if fmt is DataFormat.Float16_b:
        if values.dtype.name == "bfloat16":     # already bfloat16: only NaNs change (canonical)
            return to_bfloat16(values).astype(np.float32)
        return to_bfloat16(np.asarray(values, dtype=np.float32)).astype(np.float32)
    if fmt is DataFormat.Float32:
        return values.astype(np.float32)
    if fmt.is_block_float:
        if layout is not TILE_LAYOUT:
            raise LayoutError(f"{dtype.name} exists only in tile layout; pass layout=ttnn.TILE_LAYOUT", user_location())
        pages = to_device_pages(values.astype(np.float32), fmt, "TILE")
        return from_device_pages(pages, values.shape, fmt, "TILE").astype(np.float32)
    if values.dtype.name == "bfloat16":
        values = values.astype(np.float32)
    return values.astype(fmt.numpy_dtype)


class Tile:
    """``ttnn.Tile((height, width))``: the shape of one tile of a tiled tensor, and its faces:
    32×32 (four 16×16 faces), 16×32, 32×16, 16×16, and the tiny tiles 1/2/4/8×32 and 1/2/4/8×16
    (faces of 1/2/4/8 rows). ``transpose_tile=True`` (faces stored transposed) is not supported."""

    def __init__(self, tile_shape=(32, 32), transpose_tile: bool = False):
        location = user_location()
        try:
            shape = tuple(int(d) for d in tile_shape)
            self._shape = tile_shape_of(shape)
        except (TypeError, ValueError, LayoutError):
            raise LayoutError(f"ttnn.Tile({tile_shape!r}): a tile is (height, width), one of "
                              f"{', '.join(f'({h}, {w})' for h, w in SUPPORTED_TILE_SHAPES)}", location) from None
        if transpose_tile:
            raise LayoutError("ttnn.Tile(..., transpose_tile=True): transposed tiles are not supported by tilefold "
                              "yet; give transpose_tile=False", location)
        self.transpose_tile = False

    @property
    def tile_shape(self) -> tuple[int, int]:
        return (self._shape.height, self._shape.width)

    @property
    def face_shape(self) -> tuple[int, int]:
        return self._shape.face_shape

    @property
    def num_faces(self) -> int:
        return self._shape.num_faces

    def get_tile_size(self, dtype) -> int:
        """Bytes of one tile of ``dtype``."""
        return _dtype(dtype).data_format.tile_size(*self.tile_shape)

    def __eq__(self, other) -> bool:
        return isinstance(other, Tile) and other.tile_shape == self.tile_shape

    def __hash__(self) -> int:
        return hash(self.tile_shape)

    def __repr__(self) -> str:
        return f"ttnn.Tile({self.tile_shape!r})"


_FULL_TILE = Tile((TILE_SIZE, TILE_SIZE))


class _Bytes(int):
    """A byte count that is also callable (``t.element_size`` and ``t.element_size()`` both work)."""

    def __call__(self) -> int:
        return int(self)


class Tensor:
    """A device tensor: shape, data type, layout, memory config and its values.

    Like a TT-NN tensor on a device, it keeps the bytes the device holds (pages, tilized and
    packed) once an operation has used or written it; host values are converted from those bytes
    only when the host reads them, so operations chained on device tensors pay no conversions."""

    def __init__(self, values: np.ndarray, dtype: DataType | None = None, layout: Layout | None = None,
                 device: Device | None = None, memory_config: MemoryConfig | None = None, tile: Tile | None = None):
        if dtype is None or layout is None:      # ttnn.Tensor(torch_tensor): a row-major host tensor of its values
            values, own = _numpy_of(values, "ttnn.Tensor")
            dtype, layout = dtype or own, layout or ROW_MAJOR_LAYOUT
        values = np.asarray(values)
        self._tile = tile if tile is not None and layout is TILE_LAYOUT else None     # None: 32x32
        self._scalar = values.ndim == 0       # a rank-0 tensor: one element, held on the device as (1,)
        values = values.reshape(1) if self._scalar else values
        self.dtype = dtype
        self.layout = layout
        self._device = device
        self._memory_config = memory_config or DRAM_MEMORY_CONFIG
        # bfloat16 values given as bfloat16 stay so until float32 is asked for (host_values): a
        # device buffer's pages are made from them directly
        self._bf16: np.ndarray | None = None
        if dtype.data_format is DataFormat.Float16_b and values.dtype.name == "bfloat16":
            stored = to_bfloat16(values)
            self._bf16 = stored.copy() if np.may_share_memory(stored, values) else stored     # not the caller's memory
            self._values: np.ndarray | None = None
        else:
            self._values = quantize(values, dtype, layout)
        self._shape = values.shape
        self._pages: tuple | None = None     # (buffer geometry, device pages)
        self._not_simulated: str | None = None   # why the values are unknown (mark_not_simulated)
        # made by ttnn.empty: True until an operation writes it, then a mask of the device pages none
        # wrote (what a device leaves undefined; see note_written); None: every value is defined
        self._undefined: bool | np.ndarray | None = None

    @property
    def shape(self) -> Shape:
        return Shape(() if self._scalar else self._shape)

    @property
    def device_shape(self) -> tuple[int, ...]:
        """The shape of the tensor's device buffer: its shape, ``(1,)`` for a rank-0 tensor."""
        return tuple(self._shape)

    @property
    def padded_shape(self) -> Shape:
        """The shape the device holds: whole tiles in the last two dims of a tiled tensor (a
        rank-0 or rank-1 one padded to two dims), at least one element of a row-major one."""
        if self.layout is not TILE_LAYOUT:
            return Shape(self._shape)
        s = [1] * (2 - len(self.shape)) + list(self.shape)
        height, width = self.tile.tile_shape
        s[-1] = -(-s[-1] // width) * width
        s[-2] = -(-s[-2] // height) * height
        return Shape(s)

    @property
    def tile(self) -> Tile:
        """``tensor.tile``: the tile of a tiled tensor (``tile_shape``; 32x32 unless made with
        ``tile=ttnn.Tile(...)``)."""
        return self._tile if self._tile is not None else _FULL_TILE

    def get_tile(self) -> Tile:
        """``tensor.get_tile()``, TT-NN's method for :attr:`tile`."""
        return self.tile

    @property
    def element_size(self) -> "_Bytes":
        """Bytes per element of the tensor's data type (a block-float format: its mantissa byte) —
        ``tensor.element_size`` as tt-lang-sim has it, and ``tensor.element_size()`` as TT-NN does."""
        fmt = self.dtype.data_format
        return _Bytes(1 if fmt.is_block_float else fmt.element_size)

    def size_in_bytes(self, n_elements: int) -> int:
        """Bytes ``n_elements`` of the tensor's data type take (block-float formats: their mantissas
        and one shared exponent byte per 16 elements)."""
        fmt = self.dtype.data_format
        if not fmt.is_block_float:
            return n_elements * fmt.element_size
        mantissas = n_elements if fmt is DataFormat.Bfp8_b else -(-n_elements // 2)
        return mantissas + -(-n_elements // 16)

    @property
    def has_full_tiles(self) -> bool:
        """Whether the tensor is row-major or made of 32x32 tiles, as device operations take it."""
        return self._tile is None or self._tile.tile_shape == (TILE_SIZE, TILE_SIZE)

    @property
    def host_values(self) -> np.ndarray:
        """The tensor's values (float32 for float data types)."""
        if self._values is None and self._bf16 is not None:
            self._values = self._bf16.astype(np.float32)
        if self._values is None:
            if self._pages is None and getattr(self, "_not_simulated", None):
                raise NotSimulatedError(self._not_simulated, user_location())
            if self._pages is None:
                raise LayoutError("this tensor was deallocated (tensor.deallocate() / ttnn.deallocate) before "
                                  "this use", user_location())
            (shape, fmt, layout, tile), pages = self._pages
            self._values = from_device_pages(pages, shape, fmt, layout, tile)
        return self._values.reshape(()) if self._scalar else self._values

    def device_pages(self, buffer) -> np.ndarray:
        """The bytes of this tensor as ``buffer`` (a Program buffer) holds them on the device."""
        key = (tuple(buffer.shape), buffer.data_format, buffer.layout, buffer.tile)
        if self._pages is None or self._pages[0] != key:
            values = self._bf16 if self._bf16 is not None else self.host_values.reshape(self._shape)
            self._pages = (key, to_device_pages(values, buffer.data_format, buffer.layout, buffer.tile))
        return self._pages[1]

    def set_device_pages(self, pages: np.ndarray, buffer) -> None:
        """What the device wrote into this tensor's buffer; host values follow when asked for."""
        if tuple(buffer.shape) != tuple(self._shape):
            raise LayoutError(f"buffer shape {tuple(buffer.shape)} does not match the tensor {tuple(self._shape)}")
        self._pages = ((tuple(buffer.shape), buffer.data_format, buffer.layout, buffer.tile), pages)
        self._values = self._bf16 = None
        self._not_simulated = None

    def mark_undefined(self) -> None:
        """``ttnn.empty``: a device leaves the contents undefined (here they are zeros)."""
        self._undefined = True

    def note_written(self, unwritten: np.ndarray, num_pages: int) -> None:
        """An operation wrote this tensor's device buffer except pages ``unwritten`` (indices): those
        stay undefined if they were."""
        if self._undefined is None:
            return
        mask = np.zeros(num_pages, bool)
        mask[unwritten] = True
        if self._undefined is not True:
            mask &= self._undefined
        self._undefined = mask if mask.any() else None

    def _warn_undefined(self) -> None:
        """A read of values some operation left unwritten in a tensor ``ttnn.empty`` made: a warning
        at the reading line (once)."""
        mask = self._undefined
        if mask is None or mask is True:        # never written by an operation: nothing to tell apart
            return
        self._undefined = None
        pages = np.nonzero(mask)[0]
        shown = ", ".join(str(p) for p in pages[:8]) + (" ..." if pages.size > 8 else "")
        warn_at(f"{pages.size} of the {mask.size} device pages of this tensor were written by no operation since "
                f"ttnn.empty made it (pages {shown}): a device holds whatever its DRAM held there, tilefold shows "
                "zeros — write every page, or make the tensor with ttnn.zeros", user_location())

    def mark_not_simulated(self, reason: str) -> None:
        """An operation wrote this tensor with C++ the simulator cannot run: its values are unknown,
        and reading them is a :class:`NotSimulatedError` (``reason``) at the reading line."""
        self._values = self._bf16 = self._pages = None
        self._not_simulated = reason

    def memory_config(self) -> MemoryConfig:
        return self._memory_config

    def deallocate(self, force: bool = True) -> None:
        """``tensor.deallocate()``: frees the tensor; a later use of it is an error."""
        self._values = self._bf16 = self._pages = self._not_simulated = None

    def is_allocated(self) -> bool:
        return (self._values is not None or self._bf16 is not None or self._pages is not None
                or getattr(self, "_not_simulated", None) is not None)

    def device(self) -> Device | None:
        return self._device

    def get_dtype(self) -> DataType:
        return self.dtype

    def get_layout(self) -> Layout:
        return self.layout

    def to_numpy(self) -> np.ndarray:
        self._warn_undefined()
        return self.host_values.copy()

    def to_torch(self, dtype=None, **kwargs):
        """``tensor.to_torch()``: :func:`to_torch` of this tensor."""
        return to_torch(self, dtype, **kwargs)

    # TT-NN's tensor methods that are its functions of the tensor
    def reshape(self, *shape) -> "Tensor":
        return reshape(self, shape[0] if len(shape) == 1 and isinstance(shape[0], (list, tuple)) else shape)

    def to(self, target, memory_config=None) -> "Tensor":
        """``tensor.to(layout)`` (:func:`to_layout`) or ``tensor.to(device)`` (:func:`to_device`)."""
        if isinstance(target, Layout):
            return to_layout(self, target)
        return to_device(self, target, memory_config)

    def cpu(self, blocking: bool = True) -> "Tensor":
        """``tensor.cpu()``: the tensor on the host (:func:`from_device`)."""
        return from_device(self)

    def is_sharded(self) -> bool:
        return is_sharded(self)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def volume(self) -> int:
        return self.shape.volume()

    def logical_shape(self) -> Shape:
        return self.shape

    def __repr__(self) -> str:
        return f"ttnn.Tensor(shape={tuple(self.shape)}, dtype={self.dtype.name}, layout={self.layout.name})"

    def __getattr__(self, name: str):
        """A TT-NN tensor method tilefold lacks: one error at the user's line (an AttributeError)."""
        if name.startswith("_"):
            raise AttributeError(name)
        from tilefold.frontend.ttl.math_api import UnsupportedName

        module = sys.modules[__name__]
        hint = f"; use ttnn.{name}(tensor, ...)" if callable(module.__dict__.get(name)) else ""
        raise UnsupportedName(f"ttnn.Tensor.{name} is not supported by tilefold yet{hint}", user_location())


# --- conversion -----------------------------------------------------------------------------


def _torch():
    try:
        import torch
    except ImportError:
        raise LayoutError("torch is not installed; use ttnn.from_numpy / ttnn.to_numpy", user_location()) from None
    return torch


def _default_dtype(array: np.ndarray) -> DataType:
    """The data type of a numpy array's values: bfloat16 for ml_dtypes.bfloat16, int32 for integers,
    float32 otherwise."""
    if array.dtype.name == "bfloat16":
        return bfloat16
    if array.dtype.kind in "iu":
        return int32
    return float32


def _tile(tile) -> Tile | None:
    """The ``tile=`` of a tensor made on the host: a ``ttnn.Tile`` or ``(height, width)``."""
    if tile is None or isinstance(tile, Tile):
        return tile
    if isinstance(tile, (tuple, list)):
        return Tile(tile)
    raise LayoutError(f"tile={tile!r}: give a ttnn.Tile((height, width))", user_location())


def from_numpy(array, dtype=None, layout=TILE_LAYOUT, device: Device | None = None,
               memory_config: MemoryConfig | None = None, mesh_mapper=None, tile=None, **kwargs) -> Tensor:
    """A device tensor with the values of a numpy array, rounded to ``dtype`` (by default the array's);
    on a mesh device, spread over its chips by ``mesh_mapper`` (replicated without one). ``tile=``
    a ``ttnn.Tile`` of a tiled tensor (32x32 by default)."""
    if isinstance(array, (Tensor, mesh.MeshTensor)):
        raise LayoutError("from_numpy takes a numpy array; this is already a ttnn tensor", user_location())
    if type(array).__module__.split(".")[0] == "torch":
        raise LayoutError("from_numpy takes a numpy array, not a torch tensor; use ttnn.from_torch", user_location())
    array = np.asarray(array)
    if array.dtype.name != "bfloat16" and array.dtype.kind not in "biuf":
        raise LayoutError(f"from_numpy: the values are {array.dtype} ({array.dtype.kind!r}); a ttnn tensor holds "
                          "numbers (float, int or bool)", user_location())
    device = _device(device, "from_numpy")
    _conversion_keywords(kwargs, "from_numpy")
    if kwargs.get("spec") is not None:
        dtype, layout, memory_config = _from_spec(kwargs["spec"], array.shape, "from_numpy")
    memory_config = _memory_config(memory_config, "from_numpy")
    layout = _layout(layout)
    dt = _dtype(dtype) if dtype is not None else _default_dtype(array)
    tile = _tile(tile)
    _integer_range(array, dt, "from_numpy")
    # bfloat16 arrays stay bfloat16 until quantize (every float format holds their values exactly)
    values = array.astype(np.float32) if dt.data_format.is_float and array.dtype.name != "bfloat16" else array
    if isinstance(device, mesh.MeshDevice) or mesh_mapper is not None:
        target = device if isinstance(device, mesh.MeshDevice) else getattr(mesh_mapper, "mesh", None)
        if not isinstance(target, mesh.MeshDevice):
            raise LayoutError(f"mesh_mapper={mesh_mapper!r}: give ttnn.ShardTensorToMesh, ttnn.ShardTensor2dMesh or "
                              "ttnn.ReplicateTensorToMesh of a mesh device (ttnn.open_mesh_device)", user_location())
        return mesh.distribute(values, lambda v: _placed(Tensor(v, dt, layout, None, memory_config, tile), ""),
                               target, mesh_mapper)
    return _placed(Tensor(values, dt, layout, device, memory_config, tile), "")


def from_torch(tensor, dtype=None, layout=TILE_LAYOUT, device: Device | None = None,
               memory_config: MemoryConfig | None = None, mesh_mapper=None, tile=None, **kwargs) -> Tensor:
    """A device tensor with the values of a torch tensor (its own data type unless ``dtype`` is given)."""
    torch = _torch()
    if not isinstance(tensor, torch.Tensor):
        what = "this is already a ttnn tensor" if isinstance(tensor, (Tensor, mesh.MeshTensor)) else \
            f"not {type(tensor).__name__}; use from_numpy for arrays"
        raise LayoutError(f"from_torch takes a torch.Tensor, {what}", user_location())
    values, own = _numpy_of(tensor, "from_torch")
    _conversion_keywords(kwargs, "from_torch")
    _device(device, "from_torch")            # its own name in the errors of these arguments
    if kwargs.get("spec") is not None:
        dtype, layout, memory_config = _from_spec(kwargs.pop("spec"), values.shape, "from_torch")
    _memory_config(memory_config, "from_torch")
    _integer_range(values, _dtype(dtype or own), "from_torch")
    return from_numpy(values, _dtype(dtype or own), layout, device, memory_config, mesh_mapper, tile, **kwargs)


def _from_spec(spec, shape: tuple, what: str) -> tuple:
    """The data type, layout and memory config of ``spec=`` (a ``ttnn.TensorSpec`` of ``shape``)."""
    if not isinstance(spec, TensorSpec):
        raise LayoutError(f"{what}(spec={spec!r}): give a ttnn.TensorSpec", user_location())
    if tuple(spec.shape) != tuple(shape):
        raise LayoutError(f"{what}: the values have shape {list(shape)}, the spec {list(spec.shape)}",
                          user_location())
    return spec.dtype, spec.layout, spec.memory_config


def _integer_range(values: np.ndarray, dtype: DataType, what: str) -> None:
    """Values an integer tensor of ``dtype`` cannot hold — NaN, an infinity, or a number outside its
    range, which a cast would wrap around (-1 as 4294967295) — are one error at the user's line."""
    fmt = dtype.data_format
    if fmt.is_float or fmt.is_block_float or values.size == 0 or values.dtype.kind == "b":
        return
    limits = np.iinfo(fmt.numpy_dtype)
    if values.dtype.kind in "iu" and np.can_cast(values.dtype, fmt.numpy_dtype):
        return
    with np.errstate(invalid="ignore"):
        checked = values.astype(np.float64) if values.dtype.name == "bfloat16" else values
        bad = ~np.isfinite(checked) if checked.dtype.kind == "f" else np.zeros(checked.shape, bool)
        bad |= (checked < limits.min) | (checked > limits.max)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        more = "" if bad.sum() == 1 else f", and {int(bad.sum()) - 1} more"
        raise LayoutError(f"{what}: a {fmt.ttnn_name} tensor holds whole numbers {limits.min}..{limits.max}, and "
                          f"the values hold {checked[index].item()!r} (at {index}{more}), which a cast would "
                          "wrap around or garble — clip or round the values first, or give a float dtype", user_location())


def _numpy_of(tensor, what: str) -> tuple[np.ndarray, DataType]:
    """A torch tensor's values as numpy (bfloat16 bits as they are: exact, and no float32 copy) and
    the ttnn data type it has (bfloat16 for types ttnn has not); numpy arrays are taken as they are."""
    if isinstance(tensor, np.ndarray):
        return tensor, {np.dtype(np.float32): float32, np.dtype(np.int32): int32}.get(tensor.dtype, bfloat16)
    torch = _torch()
    if not isinstance(tensor, torch.Tensor):
        raise LayoutError(f"{what} takes a torch.Tensor, not {type(tensor).__name__}", user_location())
    if tensor.is_complex():
        raise LayoutError(f"{what}: a ttnn tensor holds real numbers, not {tensor.dtype}", user_location())
    if tensor.is_meta:
        raise LayoutError(f"{what}: a tensor on torch's meta device has a shape but no values; make it on the CPU "
                          "(device='cpu')", user_location())
    if tensor.layout != torch.strided:
        raise LayoutError(f"{what}: a {tensor.layout} torch tensor; convert it with .to_dense() first",
                          user_location())
    own = {torch.bfloat16: bfloat16, torch.float32: float32, torch.int32: int32}.get(tensor.dtype, bfloat16)
    if tensor.dtype == torch.bfloat16:
        return tensor.detach().cpu().contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16), own
    if tensor.dtype == torch.float64:        # as it is: whole numbers beyond 2**24 stay exact for integer types
        return tensor.detach().cpu().numpy(), own
    if tensor.is_floating_point():
        return tensor.detach().to(torch.float32).cpu().numpy(), own
    return tensor.cpu().numpy(), own


def as_tensor(tensor, dtype=None, *, layout=TILE_LAYOUT, device: Device | None = None,
              memory_config: MemoryConfig | None = None, cache_file_name=None, preprocess=None, mesh_mapper=None,
              use_device_tilizer: bool = False, tile=None) -> Tensor:
    """``ttnn.as_tensor``: :func:`from_torch` of ``preprocess(tensor)`` (when given). TT-NN also keeps
    the converted tensor in ``cache_file_name`` to load it from there next time; here the conversion
    is cheap and always made from ``tensor``, so no file is read or written."""
    if preprocess is not None:
        tensor = preprocess(tensor)
    if isinstance(tensor, np.ndarray):      # a numpy array too, as from_numpy takes it
        return from_numpy(tensor, dtype, layout, device, memory_config, mesh_mapper, tile)
    return from_torch(tensor, dtype, layout, device, memory_config, mesh_mapper, tile)


def to_numpy(tensor: Tensor, mesh_composer=None, **kwargs) -> np.ndarray:
    """The tensor's values as a numpy array (float32 for float data types); a mesh tensor's pieces
    joined by ``mesh_composer``."""
    _tensor(tensor, "to_numpy")
    if isinstance(tensor, mesh.MeshTensor):
        return mesh.compose(tensor, mesh_composer)
    return tensor.to_numpy()


def to_torch(tensor: Tensor, dtype=None, mesh_composer=None, **kwargs):
    """The tensor's values as a torch tensor (bfloat16 for bfloat16 and block-float tensors)."""
    torch = _torch()
    _tensor(tensor, "to_torch")
    if dtype is not None and not isinstance(dtype, torch.dtype):
        raise LayoutError(f"to_torch(dtype={dtype!r}): give a torch data type (torch.float32, torch.bfloat16 ...)",
                          user_location())
    values = torch.from_numpy(to_numpy(tensor, mesh_composer))
    if dtype is not None:
        return values.to(dtype)
    if tensor.dtype.data_format in (DataFormat.Float16_b, DataFormat.Bfp8_b, DataFormat.Bfp4_b):
        return values.to(torch.bfloat16)
    return values


# --- creation -----------------------------------------------------------------------------------


def _shape(shape) -> tuple[int, ...]:
    """A tensor shape given to a creation function (a tuple of sizes, or one size)."""
    dims = shape if hasattr(shape, "__len__") and not isinstance(shape, str) else (shape,)
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in dims):
        raise LayoutError(f"shape {shape!r}: give a tuple of sizes (ints >= 0)", user_location())
    dims = tuple(int(d) for d in dims)
    from tilefold.arch import get_arch
    from tilefold.frontend.ttl.session import settings

    arch = get_arch(settings().arch)
    dram = arch.dram_banks * arch.dram_bank_size
    if _math.prod(dims) > 2 * dram:      # more than the DRAM holds even of half-byte bfloat4_b elements
        raise LayoutError(f"shape {dims}: {_math.prod(dims):,} elements are more than the {dram / (1 << 30):.0f} GiB "
                          f"of DRAM of {arch.board} hold in any data type; use a smaller shape", user_location())
    return dims


def _created_dtype(dtype) -> DataType:
    """The data type of a tensor made on the host (``full``, ``zeros``, ``rand`` ...): float32 unless
    ``dtype`` says otherwise. TT-NN's default is bfloat16, but TT-Lang's programs are written for
    its simulator, which holds every tensor in float32 and hands it to torch as float32: its spec
    examples compare such outputs with float32 torch tensors (``torch.allclose`` refuses a bfloat16
    one) or exactly."""
    return float32 if dtype is None else _dtype(dtype)


def full(shape, fill_value, dtype=None, layout=TILE_LAYOUT, device=None, memory_config=None,
         optional_tensor=None) -> Tensor:
    """``ttnn.full``: a new tensor of ``fill_value``, or ``optional_tensor`` filled with it (in its
    own data type, layout and memory) and returned."""
    if optional_tensor is not None:
        _tensor(optional_tensor, "ttnn.full(optional_tensor=...)", mesh_ok=False)
        if tuple(_shape(shape)) != tuple(optional_tensor.shape):
            raise LayoutError(f"ttnn.full(optional_tensor=...): shape {tuple(_shape(shape))} but the tensor is "
                              f"{tuple(optional_tensor.shape)}", user_location())
        return copy(full(shape, fill_value, optional_tensor.dtype, optional_tensor.layout), optional_tensor)
    if not isinstance(fill_value, (int, float, np.number, np.bool_)):
        raise LayoutError(f"ttnn.full(fill_value={fill_value!r}): give a number", user_location())
    fmt = _created_dtype(dtype).data_format
    if not fmt.is_float and not fmt.is_block_float:
        limits = np.iinfo(fmt.numpy_dtype)
        if not (np.isfinite(fill_value) and limits.min <= fill_value <= limits.max):
            raise LayoutError(f"ttnn.full(fill_value={fill_value!r}): a {fmt.ttnn_name} tensor holds "
                              f"{limits.min}..{limits.max}", user_location())
    return from_numpy(np.full(_shape(shape), fill_value, dtype=np.float32), _created_dtype(dtype), layout, device,
                      memory_config)


def zeros(shape, dtype=None, layout=TILE_LAYOUT, device=None, memory_config=None, optional_tensor=None) -> Tensor:
    return full(shape, 0.0, dtype, layout, device, memory_config, optional_tensor)


def ones(shape, dtype=None, layout=TILE_LAYOUT, device=None, memory_config=None, optional_tensor=None) -> Tensor:
    return full(shape, 1.0, dtype, layout, device, memory_config, optional_tensor)


def empty(shape, dtype=None, layout=TILE_LAYOUT, device=None, memory_config=None) -> Tensor:
    """``ttnn.empty``: zeros here, whose contents a device leaves undefined (an operation that writes
    only some of its pages is warned of, :func:`tilefold.run.ttl.run_operation`)."""
    return _undefined(zeros(shape, dtype, layout, device, memory_config))


def allocate_tensor_on_device(shape, dtype=None, layout=None, device=None, memory_config=None) -> Tensor:
    """``ttnn.allocate_tensor_on_device(shape, dtype, layout, device, memory_config)`` or
    ``(spec, device)``: a device tensor whose contents are undefined, as :func:`empty`."""
    if isinstance(shape, TensorSpec):
        spec, device = shape, dtype if device is None else device
        shape, dtype, layout, memory_config = spec.shape, spec.dtype, spec.layout, spec.memory_config
    if device is None:
        raise LayoutError("ttnn.allocate_tensor_on_device needs the device ttnn.open_device returned", user_location())
    return empty(shape, dtype, layout, device, memory_config)


def _undefined(tensor):
    if isinstance(tensor, Tensor):      # (a mesh tensor's pieces are not followed)
        tensor.mark_undefined()
    return tensor


def rand(shape, dtype=None, layout=TILE_LAYOUT, device=None, memory_config=None, seed=None, low: float = 0.0,
         high: float = 1.0) -> Tensor:
    """Uniform values in [low, high) (newer TT-NN's keywords; [0, 1) by default)."""
    if seed is not None and (not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0):
        raise LayoutError(f"ttnn.rand(seed={seed!r}): give a non-negative int (or None)", user_location())
    if not (isinstance(low, (int, float)) and isinstance(high, (int, float)) and low < high):
        raise LayoutError(f"ttnn.rand(low={low!r}, high={high!r}): give numbers with low < high", user_location())
    values = np.random.default_rng(seed).random(_shape(shape), dtype=np.float32)
    if (low, high) != (0.0, 1.0):
        values = (np.float32(low) + values * np.float32(high - low)).astype(np.float32)
    return from_numpy(values, _created_dtype(dtype), layout, device, memory_config)


def full_like(tensor: Tensor, fill_value, dtype=None, layout=None, device=None, memory_config=None) -> Tensor:
    """``ttnn.full_like``: a tensor of ``tensor``'s shape (and data type, layout, device and memory
    config unless given) filled with ``fill_value``."""
    _tensor(tensor, "ttnn.full_like", mesh_ok=False)
    return full(tensor.shape, fill_value, dtype or tensor.dtype, layout or tensor.layout, device or tensor.device(),
                memory_config or tensor.memory_config())


def zeros_like(tensor: Tensor, dtype=None, layout=None, device=None, memory_config=None) -> Tensor:
    return full_like(tensor, 0.0, dtype, layout, device, memory_config)


def ones_like(tensor: Tensor, dtype=None, layout=None, device=None, memory_config=None) -> Tensor:
    return full_like(tensor, 1.0, dtype, layout, device, memory_config)


def empty_like(tensor: Tensor, dtype=None, layout=None, device=None, memory_config=None) -> Tensor:
    return _undefined(zeros_like(tensor, dtype, layout, device, memory_config))


def arange(start, end=None, step=1, dtype=None, device=None, layout=TILE_LAYOUT, memory_config=None) -> Tensor:
    """``ttnn.arange(end)`` or ``ttnn.arange(start, end, step)``: a 1-D tensor of ``start, start + step,
    ... < end`` (float32 unless ``dtype`` says otherwise, as the other creation functions)."""
    if end is None:
        start, end = 0, start
    if not all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in (start, end, step)) \
            or step == 0:
        raise LayoutError(f"ttnn.arange({start!r}, {end!r}, {step!r}): give numbers, and a step that is not 0",
                          user_location())
    values = np.arange(start, end, step, dtype=np.float64)
    return from_numpy(ttnn_ops.cast(values, _created_dtype(dtype).name), _created_dtype(dtype), layout, device,
                      memory_config)


# --- host operations ------------------------------------------------------------------------------


def _result(values: np.ndarray, like: Tensor, dtype=None) -> Tensor:
    return Tensor(values, _dtype(dtype) if dtype is not None else like.dtype, like.layout, like.device(),
                  like.memory_config())


def _find_tensor(args, kwargs) -> Tensor | None:
    for x in (*args, *kwargs.values()):
        if isinstance(x, Tensor):
            return x
        if isinstance(x, (list, tuple)):
            for y in x:
                if isinstance(y, Tensor):
                    return y
    return None


def _operand(x):
    """A host op's operand: a tensor's values and data type, a data type's name, the rest as given."""
    if isinstance(x, Tensor):
        return ttnn_ops.Value(x.host_values, x.dtype.name)
    if isinstance(x, DataType):
        return x.name
    if isinstance(x, (list, tuple)) and any(isinstance(y, Tensor) for y in x):
        return [_operand(y) for y in x]
    return x


# keyword arguments of TT-NN ops that choose the device's approximation or placement of the work
_DEVICE_ONLY_FLAGS = ("fast_and_approximate_mode", "vector_mode", "approx", "accurate_mode", "sub_core_grids",
                      "compute_kernel_config", "use_legacy", "core_grid", "program_config")


# keywords TT-NN's ops take that do not change a host result
_KNOWN_DROPPED = ("queue_id",)


def _host_op(name: str, compute):
    """The ``ttnn.NAME`` of a host operation of :mod:`tilefold.ttnn_ops`: its tensors' host values
    in, tensors of its results out (rounded to their data types) on the first tensor's device and
    memory config (or ``memory_config=``); an in-place op (``add_``) writes into its first tensor."""
    inplace = name in ttnn_ops.INPLACE
    signature: inspect.Signature | None = None     # ``compute``'s, read at the first call (not at import)
    ignored: list[str] = []              # the device-only flags ``compute`` does not take
    named: set[str] = set()              # the keywords ``compute`` names (it may take others and drop them)

    def run(*args, **kwargs):
        nonlocal signature, ignored, named
        if signature is None:
            signature = inspect.signature(compute)
            ignored = [f for f in _DEVICE_ONLY_FLAGS if f not in signature.parameters]
            named = {p.name for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD}
            named |= {"memory_config", "output_tensor", "optional_output_tensor", *_DEVICE_ONLY_FLAGS, *_KNOWN_DROPPED}
        unknown = sorted(set(kwargs) - named)
        if unknown and not getattr(compute, "passes_keywords", False):
            warn_at(f"ttnn.{name}({', '.join(k + '=' for k in unknown)}): tilefold does not know "
                    f"{'these keywords' if len(unknown) > 1 else 'this keyword'} of ttnn.{name} and ignores "
                    f"{'them' if len(unknown) > 1 else 'it'}; check the spelling", user_location())
        for value in (*args, *kwargs.values()):
            if type(value).__module__.split(".")[0] == "torch" and type(value).__name__ == "Tensor":
                raise _not_a_tensor(value, f"ttnn.{name}")
        like = _find_tensor(args, kwargs)
        if like is None:
            if not args and not kwargs:
                raise LayoutError(f"ttnn.{name}() needs a ttnn tensor", user_location())
            first = args[0] if args else next(iter(kwargs.values()))
            raise _not_a_tensor(first, f"ttnn.{name}")
        memory_config = _memory_config(kwargs.pop("memory_config", None), f"ttnn.{name}") or like.memory_config()
        output = kwargs.pop("output_tensor", None)
        optional = kwargs.pop("optional_output_tensor", None)       # matmul's and linear's name for it
        if optional is not None:
            if output is not None:
                raise LayoutError(f"ttnn.{name}(): output_tensor= and optional_output_tensor= are the same "
                                  "argument; give one", user_location())
            output = optional
        if output is not None:
            _tensor(output, f"ttnn.{name}(output_tensor=...)", mesh_ok=False)
        if kwargs.get("dtype") is not None:
            kwargs["dtype"] = _dtype(kwargs["dtype"]).name
        if name == "typecast" and len(args) > 1:
            args = (args[0], _dtype(args[1]).name, *args[2:])
        for flag in ignored:                 # how the device computes it; the host computes exactly
            kwargs.pop(flag, None)
        try:
            signature.bind(*args, **kwargs)
        except TypeError as exc:             # a missing, extra or unknown argument
            raise LayoutError(f"ttnn.{name}(): {exc}", user_location()) from None
        try:
            result = compute(*map(_operand, args), **{k: _operand(v) for k, v in kwargs.items()})
        except (TypeError, ValueError, IndexError) as exc:      # a wrong argument: shapes, dims, keywords
            if isinstance(exc, TilefoldError):
                if exc.message.startswith("ttnn."):
                    raise
                raise LayoutError(f"ttnn.{name}: {exc.message}", exc.location or user_location()) from None
            raise LayoutError(f"ttnn.{name}: {str(exc).replace('compute()', 'it')}", user_location()) from None

        def tensor(v: ttnn_ops.Value) -> Tensor:
            layout = _layout(v.layout) if v.layout is not None else like.layout
            return Tensor(v.values, _DTYPES[v.dtype], layout, like.device(), memory_config)

        if inplace:
            if isinstance(result, tuple) or tuple(result.values.shape) != tuple(like.shape):
                raise LayoutError(f"ttnn.{name}: the result has shape "
                                  f"{list(result.values.shape) if not isinstance(result, tuple) else 'of several tensors'}"
                                  f" but the tensor it is written into is {list(like.shape)}; an in-place op keeps its "
                                  "tensor's shape", user_location())
            like._values, like._bf16, like._shape, like._pages = quantize(result.values, like.dtype, like.layout), None, \
                result.values.shape, None
            return like
        if output is not None:               # the result written into the given tensor, in its data type
            if isinstance(result, tuple) or tuple(result.values.shape) != tuple(output.shape):
                shape = "several tensors" if isinstance(result, tuple) else "x".join(map(str, result.values.shape))
                raise LayoutError(f"ttnn.{name}(output_tensor=...): the result is {shape or 'a scalar'} but "
                                  f"output_tensor is {'x'.join(map(str, output.shape)) or 'a scalar'}", user_location())
            values = quantize(result.values, output.dtype, output.layout)
            output._values, output._bf16, output._pages, output._not_simulated = \
                values.reshape(output.device_shape), None, None, None
            return output
        if isinstance(result, list):          # pieces (split, chunk): a list, as TT-NN returns them
            return [tensor(v) for v in result]
        return tuple(tensor(v) for v in result) if isinstance(result, tuple) else tensor(result)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = compute.__doc__ or f"``ttnn.{name}`` computed on the host (see :mod:`tilefold.ttnn_ops`)."
    return run


def _over_mesh(op):
    """A host op that applies to each chip's piece of mesh tensors."""
    signature: inspect.Signature | None = None     # ``op``'s, read at the first call (not at import)

    def wrapped(*args, **kwargs):
        nonlocal signature
        if signature is None:
            signature = inspect.signature(op)
        try:
            signature.bind(*args, **kwargs)
        except TypeError as exc:             # a missing, extra or unknown argument
            raise LayoutError(f"ttnn.{op.__name__}(): {exc}", user_location()) from None
        if args and isinstance(args[0], mesh.MeshTensor):
            a = args[0]

            def piece(x, i):
                if not isinstance(x, mesh.MeshTensor):
                    return x
                if len(x.pieces) != len(a.pieces):
                    raise LayoutError(f"ttnn.{op.__name__}(): its mesh tensors are on meshes of {len(a.pieces)} and "
                                      f"{len(x.pieces)} chips; give tensors of one mesh", user_location())
                return x.pieces[i]

            results = [op(*(piece(x, i) for x in args), **{k: piece(v, i) for k, v in kwargs.items()})
                       for i in range(len(a.pieces))]
            output = kwargs.get("output_tensor", kwargs.get("optional_output_tensor"))
            if isinstance(output, mesh.MeshTensor):
                return output
            if isinstance(results[0], tuple):        # (values, indices) ...: a mesh tensor of each
                return tuple(mesh.MeshTensor(list(parts), a.mesh) for parts in zip(*results))
            return mesh.MeshTensor(results, a.mesh)
        return op(*args, **kwargs)
    wrapped.__name__ = wrapped.__qualname__ = op.__name__
    wrapped.__doc__ = op.__doc__
    return wrapped


class _Namespace:
    """A TT-NN submodule of host operations (``ttnn.transformer``); other names are one clear error."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        from tilefold.frontend.ttl.math_api import UnsupportedName

        raise UnsupportedName(f"ttnn.{self._name}.{name} is not supported by tilefold yet", user_location())


transformer = _Namespace("transformer")
experimental = _Namespace("experimental")
HOST_OPS = tuple(sorted(ttnn_ops.OPS))
for _name in HOST_OPS:
    _space, _, _leaf = _name.rpartition(".")
    setattr(globals()[_space] if _space else sys.modules[__name__], _leaf,
            _over_mesh(_host_op(_name, ttnn_ops.OPS[_name])))


_copy_into = globals()["copy"]       # the host op: its values, written into output_tensor=


def copy(input_a, input_b, **kwargs):
    """``ttnn.copy(a, b)``: ``a``'s values written into ``b`` (in ``b``'s data type; each chip's
    piece of mesh tensors), which it returns."""
    return _copy_into(input_a, output_tensor=input_b, **kwargs)


def _paged_fused_update_cache(cache_tensor1, input_tensor1, cache_tensor2, input_tensor2, **kwargs):
    """``ttnn.experimental.paged_fused_update_cache``: ``paged_update_cache`` of both caches with the
    same positions; returns both."""
    return (experimental.paged_update_cache(cache_tensor1, input_tensor1, **kwargs),
            experimental.paged_update_cache(cache_tensor2, input_tensor2, **kwargs))


experimental.paged_fused_update_cache = _paged_fused_update_cache


def _tensor_op(name: str, swap: bool = False):
    def method(self, other):
        return globals()[name](other, self) if swap else globals()[name](self, other)
    return method


for _dunder, _name, _swap in (("add", "add", False), ("radd", "add", True), ("sub", "subtract", False),
                              ("rsub", "subtract", True), ("mul", "multiply", False), ("rmul", "multiply", True),
                              ("truediv", "divide", False), ("rtruediv", "divide", True), ("pow", "pow", False),
                              ("matmul", "matmul", False), ("gt", "gt", False), ("ge", "ge", False),
                              ("lt", "lt", False), ("le", "le", False), ("floordiv", "floor_div", False),
                              ("rfloordiv", "floor_div", True), ("mod", "remainder", False),
                              ("rmod", "remainder", True), ("rpow", "rpow", False), ("eq", "eq", False),
                              ("ne", "ne", False), ("and", "bitwise_and", False), ("or", "bitwise_or", False),
                              ("xor", "bitwise_xor", False), ("lshift", "bitwise_left_shift", False),
                              ("rshift", "bitwise_right_shift", False)):
    setattr(Tensor, f"__{_dunder}__", _tensor_op(_name, _swap))
Tensor.__hash__ = object.__hash__      # a tensor is itself: ``==`` compares values, as TT-NN's
Tensor.__neg__ = lambda self: neg(self)  # noqa: F821 - made from the table above
Tensor.__abs__ = lambda self: globals()["abs"](self)
Tensor.__invert__ = lambda self: bitwise_not(self)  # noqa: F821 - made from the table above
Tensor.__getitem__ = lambda self, key: _result(ttnn_ops.getitem(_operand(self), key).values, self)


# --- cores and memory configs -------------------------------------------------------------------


def split_work_to_cores(grid, units_to_divide: int, row_wise: bool = False):
    """``ttnn.split_work_to_cores(grid, units, row_wise)``: ``(num_cores, all_cores, core_group_1,
    core_group_2, units_per_core_group_1, units_per_core_group_2)`` as TT-Metal's work split gives
    them (the first ``units % num_cores`` cores take one unit more)."""
    from tilefold.arch import cores as device_cores
    from tilefold.ops.work_split import split_work_to_core_set, split_work_to_cores as split

    ranges = grid.ranges() if isinstance(grid, CoreRangeSet) else None
    if ranges is not None and (len(ranges) != 1 or (ranges[0].start.x, ranges[0].start.y) != (0, 0)):
        work = split_work_to_core_set(device_cores.CoreRangeSet(       # the set's ranges one after another
            device_cores.CoreRange((r.start.x, r.start.y), (r.end.x, r.end.y)) for r in ranges),
            units_to_divide, row_wise)
    else:                       # a grid from core (0, 0)
        grid = ranges[0].grid_size() if ranges is not None else grid
        size = (grid.x, grid.y) if isinstance(grid, (CoreCoord, CoreGrid)) else tuple(grid)
        work = split(size, units_to_divide, row_wise)

    return (work.num_cores, _host_core_set(work.all_cores), _host_core_set(work.core_group_1),
            _host_core_set(work.core_group_2), work.units_per_core_group_1, work.units_per_core_group_2)


def _host_core_set(cores) -> CoreRangeSet:
    """A ``ttnn.CoreRangeSet`` of the device model's core set (:mod:`tilefold.arch.cores`)."""
    return CoreRangeSet(CoreRange(CoreCoord(r.start.x, r.start.y), CoreCoord(r.end.x, r.end.y)) for r in cores.ranges)


def num_cores_to_corerangeset(target_num_cores: int, grid_size, row_wise: bool = False) -> CoreRangeSet:
    """``ttnn.num_cores_to_corerangeset(n, grid_size, row_wise)``: the first ``n`` cores of a grid of
    ``grid_size`` (a ``CoreCoord(x, y)`` or ``CoreGrid``; a pair is ``(rows, columns)``, as TT-Lang's
    simulator reads it), as TT-Metal's work split counts them: whole columns and one partial column,
    or whole rows and one partial row with ``row_wise``."""
    from tilefold.errors import ProgramError
    from tilefold.ops.work_split import num_cores_to_corerangeset as first_cores

    size = (grid_size.x, grid_size.y) if isinstance(grid_size, (CoreCoord, CoreGrid)) else \
        tuple(grid_size)[::-1] if isinstance(grid_size, (tuple, list)) else grid_size
    try:
        cores = first_cores(target_num_cores, size, bool(row_wise))
    except ProgramError as exc:
        raise LayoutError(f"ttnn.num_cores_to_corerangeset: {exc}", user_location()) from None
    return _host_core_set(cores)


def core_range_set_to_core_grid(core_ranges: CoreRangeSet) -> "CoreGrid":
    """``ttnn.core_range_set_to_core_grid``: the ``CoreGrid`` of a core set's bounding rectangle."""
    ranges = core_ranges.ranges() if isinstance(core_ranges, CoreRangeSet) else None
    if not ranges:
        raise LayoutError(f"ttnn.core_range_set_to_core_grid({core_ranges!r}): give a ttnn.CoreRangeSet with cores",
                          user_location())
    return CoreGrid(y=builtins.max(r.end.y for r in ranges) - builtins.min(r.start.y for r in ranges) + 1,
                    x=builtins.max(r.end.x for r in ranges) - builtins.min(r.start.x for r in ranges) + 1)


class CoreGrid:
    """``ttnn.CoreGrid(y=rows, x=columns)``."""

    def __init__(self, y: int, x: int):
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 for v in (y, x)):
            raise LayoutError(f"ttnn.CoreGrid(y={y!r}, x={x!r}): give positive numbers of rows and columns of cores",
                              user_location())
        self.y, self.x = int(y), int(x)

    @property
    def num_cores(self) -> int:
        return self.x * self.y

    def __repr__(self) -> str:
        return f"CoreGrid(y={self.y}, x={self.x})"


class _UnaryOp:
    """One member of ``ttnn.UnaryOpType`` (``ttnn.UnaryOpType.RELU``): names a host unary op."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"UnaryOpType.{self.name}"


class UnaryOpType:
    """``ttnn.UnaryOpType``: the unary ops a matmul's or linear's activation may name."""


for _op_name in sorted({*ttnn_ops.UNARY, *ttnn_ops.ACTIVATIONS}):
    setattr(UnaryOpType, _op_name.upper(), _UnaryOp(_op_name.upper()))


class UnaryWithParam:
    """``ttnn.UnaryWithParam(op_type, *params)``: an activation and its parameters, in the order the
    op takes them (``UnaryWithParam(UnaryOpType.LEAKY_RELU, 0.2)``: a slope of 0.2)."""

    def __init__(self, op_type, *params):
        self.op_type = op_type
        self.name = getattr(op_type, "name", str(op_type))
        self.params = tuple(float(p) for p in params)

    def __repr__(self) -> str:
        return f"UnaryWithParam({self.op_type!r}{''.join(f', {p!r}' for p in self.params)})"


class DispatchCoreConfig:
    """``ttnn.DispatchCoreConfig(...)``: where a device's dispatch cores sit; the simulated device's
    command dispatch takes no worker cores, so any configuration is accepted and changes nothing."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class ShardStrategy:
    HEIGHT = TensorMemoryLayout.HEIGHT_SHARDED
    WIDTH = TensorMemoryLayout.WIDTH_SHARDED
    BLOCK = TensorMemoryLayout.BLOCK_SHARDED


def create_sharded_memory_config(shape, core_grid: CoreGrid, strategy, orientation=None,
                                 use_height_and_width_as_shard_shape: bool = False, **kwargs) -> MemoryConfig:
    """An L1 memory config that shards a tensor of ``shape`` over ``core_grid`` (a ``CoreGrid`` of
    the cores from (0, 0), or a ``CoreRangeSet``) by ``strategy``.

    On the simulated device each shard lives in the L1 of its core of ``core_grid`` (height and width
    sharding deal the shards to the cores in row-major order, or column-major with a column-major
    orientation; block sharding gives core ``(x, y)`` the shard in block row ``y`` and column ``x``
    of the grid, which must then be a rectangle)."""
    shape = _shape(shape)
    if not isinstance(strategy, TensorMemoryLayout) or not strategy.name.endswith("_SHARDED"):
        raise LayoutError(f"create_sharded_memory_config(strategy={strategy!r}): give ttnn.ShardStrategy.HEIGHT, "
                          "WIDTH or BLOCK", user_location())
    if isinstance(core_grid, CoreRangeSet):
        cores, core_grid = core_grid, _bounding_grid(core_grid, strategy)
    elif isinstance(core_grid, CoreGrid):
        cores = (core_grid.x, core_grid.y)
    else:
        raise LayoutError(f"create_sharded_memory_config(core_grid={core_grid!r}): give a ttnn.CoreGrid(y=..., x=...) "
                          "or a ttnn.CoreRangeSet", user_location())
    if len(shape) < 2:
        raise LayoutError(f"create_sharded_memory_config(shape={shape}): give the tensor's shape (at least 2 dims)",
                          user_location())
    layout = strategy
    height, width = int(np.prod(shape[:-1])), shape[-1]
    if use_height_and_width_as_shard_shape:
        shard = (shape[-2], shape[-1])
    elif layout is TensorMemoryLayout.HEIGHT_SHARDED:
        shard = (-(-height // core_grid.num_cores), width)
    elif layout is TensorMemoryLayout.WIDTH_SHARDED:
        shard = (height, -(-width // core_grid.num_cores))
    else:
        shard = (-(-height // core_grid.y), -(-width // core_grid.x))
    spec = ShardSpec(cores, shard, orientation or ShardOrientation.ROW_MAJOR)
    return MemoryConfig(layout, BufferType.L1, spec)


def _num_cores(core_ranges: CoreRangeSet) -> int:
    """The cores of a core set."""
    return builtins.sum((r.end.x - r.start.x + 1) * (r.end.y - r.start.y + 1) for r in core_ranges.ranges())


def _bounding_grid(cores: CoreRangeSet, strategy) -> CoreGrid:
    """The ``CoreGrid`` standing for a core set in :func:`create_sharded_memory_config`: its number
    of cores (height and width sharding), or its rectangle (block sharding: the set must fill it)."""
    count = _num_cores(cores)
    if not count:
        raise LayoutError("create_sharded_memory_config(core_grid=ttnn.CoreRangeSet()): the set has no cores",
                          user_location())
    if strategy is not TensorMemoryLayout.BLOCK_SHARDED:
        return CoreGrid(y=1, x=count)
    box = core_range_set_to_core_grid(cores)
    if count != box.num_cores:
        raise LayoutError(f"create_sharded_memory_config(core_grid={cores!r}, strategy=ttnn.ShardStrategy.BLOCK): "
                          "block sharding needs a rectangle of cores; give a ttnn.CoreGrid or one ttnn.CoreRange",
                          user_location())
    return box


# --- tensor specs: TT-NN's tensor sharding API ---------------------------------------------------


def NdShardSpec(shard_shape, grid=None, orientation=ShardOrientation.ROW_MAJOR,
                shard_distribution_strategy=ShardDistributionStrategy.ROUND_ROBIN_1D, *, core_ranges=None,
                distribution=None) -> _LayoutNdShardSpec:
    """``ttnn.NdShardSpec(shard_shape, grid, orientation, shard_distribution_strategy)``: shards of
    ``shard_shape`` elements (one per dimension of the tensor) on the cores of ``grid`` (a
    ``CoreRangeSet``; TT-Lang's simulator calls it ``core_ranges=``)."""
    grid = grid if grid is not None else core_ranges
    if grid is None:
        raise LayoutError("ttnn.NdShardSpec(shard_shape, grid): give the cores, a ttnn.CoreRangeSet", user_location())
    try:
        return _LayoutNdShardSpec(tuple(shard_shape), grid, orientation, distribution or shard_distribution_strategy)
    except LayoutError as exc:
        raise LayoutError(f"ttnn.NdShardSpec: {exc.message}", user_location()) from None


class TensorSpec:
    """``ttnn.TensorSpec(shape, dtype, layout, buffer_type=ttnn.BufferType.DRAM)``; its sharding
    helpers return a new spec whose ``memory_config`` shards the tensor in L1."""

    def __init__(self, shape, dtype, layout, buffer_type=BufferType.DRAM, memory_config=None):
        self.shape = Shape(_shape(shape))
        self.dtype = _dtype(dtype)
        self.layout = _layout(layout)
        self.buffer_type = _buffer_type(buffer_type)
        self.memory_config = memory_config or MemoryConfig(buffer_type=self.buffer_type)

    def _with(self, memory_config) -> "TensorSpec":
        return TensorSpec(self.shape, self.dtype, self.layout, BufferType.L1, memory_config)

    def _sharded(self, core_ranges, strategy, orientation) -> "TensorSpec":
        return self._with(create_sharded_memory_config(tuple(self.shape), core_ranges, strategy, orientation))

    def height_sharded(self, core_ranges, orientation=ShardOrientation.ROW_MAJOR, **kwargs) -> "TensorSpec":
        """Leading dimensions collapsed into the height, split over the cores."""
        return self._sharded(core_ranges, ShardStrategy.HEIGHT, orientation)

    def width_sharded(self, core_ranges, orientation=ShardOrientation.ROW_MAJOR, **kwargs) -> "TensorSpec":
        """The last dimension split over the cores."""
        return self._sharded(core_ranges, ShardStrategy.WIDTH, orientation)

    def block_sharded(self, core_ranges, orientation=ShardOrientation.ROW_MAJOR, **kwargs) -> "TensorSpec":
        """Height and width split over a rectangle of cores."""
        return self._sharded(core_ranges, ShardStrategy.BLOCK, orientation)

    def nd_sharded(self, shard_shape, core_ranges, orientation=ShardOrientation.ROW_MAJOR,
                   shard_distribution_strategy=ShardDistributionStrategy.ROUND_ROBIN_1D) -> "TensorSpec":
        """Shards of ``shard_shape`` elements, dealt to the cores."""
        if len(tuple(shard_shape)) != len(self.shape):
            raise LayoutError(f"TensorSpec.nd_sharded: shard_shape {list(shard_shape)} has {len(tuple(shard_shape))} "
                              f"dims; the tensor {list(self.shape)} has {len(self.shape)}", user_location())
        spec = NdShardSpec(shard_shape, core_ranges, orientation, shard_distribution_strategy)
        return self._with(MemoryConfig(TensorMemoryLayout.BLOCK_SHARDED, BufferType.L1, nd_shard_spec=spec))

    def sharded_across_dims(self, dims, core_ranges, orientation=ShardOrientation.ROW_MAJOR) -> "TensorSpec":
        """One shard per index of the dimensions ``dims`` (a tile's height or width along the last
        two dimensions of a tiled tensor), the shards dealt to the cores round-robin."""
        rank = len(self.shape)
        tiled = self.layout.name == "TILE"
        shard = list(self.shape)
        for d in dims:
            if not -rank <= d < rank:
                raise LayoutError(f"TensorSpec.sharded_across_dims: dim {d} is outside the tensor's {rank} dims",
                                  user_location())
            d %= rank
            shard[d] = 32 if tiled and d >= rank - 2 else 1
        if _num_cores(core_ranges) < 1:
            raise LayoutError("TensorSpec.sharded_across_dims: the core set has no cores", user_location())
        return self.nd_sharded(shard, core_ranges, orientation)

    def tensor_layout(self):
        return self.layout

    def __repr__(self) -> str:
        return (f"TensorSpec(shape={list(self.shape)}, dtype={self.dtype!r}, layout={self.layout!r}, "
                f"memory_config={self.memory_config!r})")


@_over_mesh
def to_memory_config(tensor: Tensor, memory_config: MemoryConfig, dtype=None, **kwargs) -> Tensor:
    """The tensor in another memory (each chip's piece of a mesh tensor), of ``dtype`` if given."""
    _tensor(tensor, "ttnn.to_memory_config", mesh_ok=False)
    if not isinstance(memory_config, MemoryConfig):
        _memory_config(memory_config, "ttnn.to_memory_config")
        raise LayoutError("ttnn.to_memory_config needs memory_config=: ttnn.DRAM_MEMORY_CONFIG, ttnn.L1_MEMORY_CONFIG "
                          "or a sharded config", user_location())
    dtype = tensor.dtype if dtype is None else _dtype(dtype)
    # TT-NN's conversion allocates its output with the default 32x32 tile, whatever the input's
    return _placed(Tensor(tensor.host_values, dtype, tensor.layout, tensor.device(), memory_config),
                   "ttnn.to_memory_config: ")


def get_memory_config(tensor: Tensor) -> MemoryConfig:
    return _tensor(tensor, "ttnn.get_memory_config", mesh_ok=False).memory_config()


def is_sharded(tensor: Tensor) -> bool:
    return bool(_tensor(tensor, "ttnn.is_sharded", mesh_ok=False).memory_config().is_sharded)


@_over_mesh
def to_layout(tensor: Tensor, layout, dtype=None, memory_config=None, **kwargs) -> Tensor:
    """The tensor in ``layout`` (of ``dtype`` and in ``memory_config`` if given)."""
    _tensor(tensor, "ttnn.to_layout", mesh_ok=False)
    dtype = tensor.dtype if dtype is None else _dtype(dtype)
    memory_config = _memory_config(memory_config, "ttnn.to_layout") or tensor.memory_config()
    return _placed(Tensor(tensor.host_values, dtype, _layout(layout), tensor.device(), memory_config, tensor._tile),
                   "ttnn.to_layout: ")


def to_device(tensor: Tensor, device, memory_config=None) -> Tensor:
    _tensor(tensor, "ttnn.to_device", mesh_ok=False)
    if device is None:
        raise LayoutError("ttnn.to_device needs the device ttnn.open_device returned", user_location())
    return _placed(Tensor(tensor.host_values, tensor.dtype, tensor.layout, _device(device, "ttnn.to_device"),
                          _memory_config(memory_config, "ttnn.to_device") or tensor.memory_config(), tensor.tile),
                   "ttnn.to_device: ")


def from_device(tensor: Tensor) -> Tensor:
    return _tensor(tensor, "ttnn.from_device")


def is_tensor_storage_on_device(tensor: Tensor) -> bool:
    return _tensor(tensor, "ttnn.is_tensor_storage_on_device").device() is not None


def to_dtype(tensor: Tensor, dtype) -> Tensor:
    """``ttnn.to_dtype``: the tensor's values in another data type (rounded as :func:`typecast`)."""
    return typecast(tensor, dtype)


def tilize(tensor: Tensor, memory_config=None, dtype=None, **kwargs) -> Tensor:
    return to_layout(tensor, TILE_LAYOUT, dtype=dtype, memory_config=memory_config)


tilize_with_zero_padding = tilize


def untilize(tensor: Tensor, memory_config=None, **kwargs) -> Tensor:
    return to_layout(tensor, ROW_MAJOR_LAYOUT, memory_config=memory_config)


def sharded_to_interleaved(tensor: Tensor, memory_config=None, **kwargs) -> Tensor:
    return to_memory_config(tensor, memory_config or DRAM_MEMORY_CONFIG)


def interleaved_to_sharded(tensor: Tensor, memory_config, *args, **kwargs) -> Tensor:
    return to_memory_config(tensor, memory_config)


def unsqueeze_to_4D(tensor: Tensor) -> Tensor:
    """The tensor with leading dims of 1 up to four dims."""
    return reshape(tensor, tuple(tensor.shape.to_rank(4)))



# --- several chips ------------------------------------------------------------------------------

def _mesh_input(tensor, name: str) -> mesh.MeshTensor:
    if not isinstance(tensor, mesh.MeshTensor):
        raise LayoutError(f"ttnn.{name} takes a tensor spread over a mesh (from_torch(..., mesh_mapper=...))",
                          user_location())
    return tensor


def _collective(name: str, tensor: mesh.MeshTensor, groups, steps: int, nbytes: int, seconds: float) -> None:
    """Record a collective's ethernet traffic as one step of the multi-chip run (and report it)."""
    from tilefold.frontend.ttl.session import settings

    n = len(groups[0])
    mesh.TRANSFERS.append(mesh.EthernetTransfer(name, n, steps, nbytes, seconds))
    mesh.record_step(mesh.MeshStep("collective", name, (seconds,) * len(tensor.pieces)))
    if settings().report:
        where = f"{n} chips" if len(groups) == 1 else f"{len(groups)} groups of {n} chips"
        print(f"ttnn.{name} over {where}: {steps} ethernet ring steps of {nbytes:,} B per chip, "
              f"estimated {seconds * 1e6:.1f} us")


def _device_bytes(tensor: Tensor) -> int:
    return -(-int(np.prod(tensor.shape)) * tensor.dtype.data_format.tile_size() // 1024)


def all_reduce(tensor: mesh.MeshTensor, cluster_axis=None, **kwargs) -> mesh.MeshTensor:
    """The sum of the chips' pieces, on every chip (a ring all-reduce over ethernet, among all chips
    or within each row / column of the mesh with ``cluster_axis``; see :mod:`tilefold.frontend.ttl.mesh`)."""
    tensor = _mesh_input(tensor, "all_reduce")
    groups = mesh.chip_groups(tensor.mesh, cluster_axis)
    out = list(tensor.pieces)
    for group in groups:
        first = tensor.pieces[group[0]]
        total = first.host_values.astype(np.float32)
        for chip in group[1:]:
            total = quantize(total + tensor.pieces[chip].host_values.astype(np.float32), first.dtype, first.layout)
        for chip in group:
            out[chip] = Tensor(total, first.dtype, first.layout, first.device(), first.memory_config())
    n = len(groups[0])
    steps, chunk = 2 * (n - 1), -(-_device_bytes(tensor.pieces[0]) // n)
    _collective("all_reduce", tensor, groups, steps, chunk, mesh.ring_seconds(steps, chunk))
    return mesh.MeshTensor(out, tensor.mesh)


def all_gather(tensor: mesh.MeshTensor, dim: int, num_links: int = 1, cluster_axis=None, **kwargs) -> mesh.MeshTensor:
    """The chips' pieces concatenated along ``dim``, on every chip (a ring all-gather over ethernet:
    ``n - 1`` steps, each forwarding one piece over ``num_links`` links per chip)."""
    tensor = _mesh_input(tensor, "all_gather")
    first = tensor.pieces[0]
    rank = len(first.shape)
    if not isinstance(dim, int) or not -rank <= dim < rank:
        raise LayoutError(f"ttnn.all_gather(dim={dim!r}): a {rank}-D tensor has dims {-rank}..{rank - 1}",
                          user_location())
    if not isinstance(num_links, int) or num_links < 1:
        raise LayoutError(f"ttnn.all_gather(num_links={num_links!r}): give a positive number of links",
                          user_location())
    groups = mesh.chip_groups(tensor.mesh, cluster_axis)
    out = list(tensor.pieces)
    for group in groups:
        values = np.concatenate([tensor.pieces[chip].host_values for chip in group], axis=dim)
        for chip in group:
            out[chip] = Tensor(values, first.dtype, first.layout, first.device(), first.memory_config())
    n = len(groups[0])
    steps, piece = n - 1, -(-_device_bytes(first) // num_links)
    _collective("all_gather", tensor, groups, steps, piece, mesh.ring_seconds(steps, piece))
    return mesh.MeshTensor(out, tensor.mesh)


MeshShape = mesh.MeshShape


class _SystemMeshDescriptor:
    """``ttnn._ttnn.multi_device.SystemMeshDescriptor()`` (TT-Lang's test utilities ask it for the
    board's mesh): one row of every simulated chip, the mesh ``open_mesh_device()`` opens."""

    def shape(self) -> MeshShape:
        return MeshShape(1, mesh.num_available_devices())


_ttnn = types.SimpleNamespace(multi_device=types.SimpleNamespace(SystemMeshDescriptor=_SystemMeshDescriptor))
MeshDevice = mesh.MeshDevice
MeshTensor = mesh.MeshTensor
open_mesh_device = mesh.open_mesh_device
ShardTensorToMesh = mesh.ShardTensorToMesh
ShardTensor2dMesh = mesh.ShardTensor2dMesh
ReplicateTensorToMesh = mesh.ReplicateTensorToMesh
ConcatMeshToTensor = mesh.ConcatMeshToTensor
ConcatMesh2dToTensor = mesh.ConcatMesh2dToTensor
set_num_devices = mesh.set_num_devices


def GetNumAvailableDevices() -> int:  # noqa: N802 - TT-NN's name
    """The simulated chips: the board's (n300: 2) unless ``set_num_devices`` chose another number."""
    return mesh.num_available_devices()


def get_num_devices() -> int:
    """``ttnn.get_num_devices()``: the simulated chips (as :func:`GetNumAvailableDevices`)."""
    return mesh.num_available_devices()


def get_arch_name() -> str:
    """``ttnn.get_arch_name()``: the simulated chips' architecture, ``"wormhole_b0"`` or ``"blackhole"``."""
    from tilefold.arch import get_arch
    from tilefold.frontend.ttl.session import settings

    return get_arch(settings().arch).name


def close_mesh_device(device) -> None:
    device.is_open = False


class MathFidelity(enum.Enum):
    """``ttnn.MathFidelity``: how many phases a matmul's products take (``@ttl.operation(math_fidelity=...)``
    takes these as its names do)."""

    LoFi = "LoFi"
    HiFi2 = "HiFi2"
    HiFi3 = "HiFi3"
    HiFi4 = "HiFi4"


class WormholeComputeKernelConfig:
    """``ttnn.WormholeComputeKernelConfig(math_fidelity=, math_approx_mode=, fp32_dest_acc_en=,
    packer_l1_acc=, dst_full_sync_en=)``: how TT-NN's device ops compute; host ops take it as
    ``compute_kernel_config=`` and compute exactly."""

    def __init__(self, math_fidelity=MathFidelity.LoFi, math_approx_mode: bool = True, fp32_dest_acc_en: bool = False,
                 packer_l1_acc: bool = False, dst_full_sync_en: bool = False, throttle_level=None):
        self.math_fidelity = math_fidelity
        self.math_approx_mode = math_approx_mode
        self.fp32_dest_acc_en = fp32_dest_acc_en
        self.packer_l1_acc = packer_l1_acc
        self.dst_full_sync_en = dst_full_sync_en
        self.throttle_level = throttle_level


class BlackholeComputeKernelConfig(WormholeComputeKernelConfig):
    """``ttnn.BlackholeComputeKernelConfig``: as :class:`WormholeComputeKernelConfig`."""


def init_device_compute_kernel_config(arch=None, *, math_fidelity=MathFidelity.LoFi, math_approx_mode: bool = True,
                                      fp32_dest_acc_en: bool = False, packer_l1_acc: bool = False,
                                      dst_full_sync_en: bool = False, throttle_level=None):
    """``ttnn.init_device_compute_kernel_config(arch, math_fidelity=, ...)``: the compute config of a device."""
    return WormholeComputeKernelConfig(math_fidelity, math_approx_mode, fp32_dest_acc_en, packer_l1_acc,
                                       dst_full_sync_en, throttle_level)


class FabricConfig(enum.Enum):
    """``ttnn.FabricConfig`` (TT-Metal 0.69's values); the simulated chips reach each other over
    ethernet whatever is chosen."""

    DISABLED = 0
    FABRIC_1D_NEIGHBOR_EXCHANGE = 1
    FABRIC_1D = 2
    FABRIC_1D_RING = 3
    FABRIC_2D = 4
    FABRIC_2D_TORUS_X = 5
    FABRIC_2D_TORUS_Y = 6
    FABRIC_2D_TORUS_XY = 7
    CUSTOM = 8


class FabricReliabilityMode(enum.Enum):
    """``ttnn.FabricReliabilityMode`` (TT-NN's names for TT-Metal 0.69's values), accepted by
    :func:`set_fabric_config`."""

    STRICT_INIT = 0
    RELAXED_INIT = 1
    DYNAMIC_RECONFIG = 2


class FabricTensixConfig(enum.Enum):
    """``ttnn.FabricTensixConfig``, accepted by :func:`set_fabric_config`."""

    DISABLED = 0
    MUX = 1
    UDM = 2


class FabricUDMMode(enum.Enum):
    """``ttnn.FabricUDMMode``, accepted by :func:`set_fabric_config`."""

    DISABLED = 0
    ENABLED = 1


class FabricManagerMode(enum.Enum):
    """``ttnn.FabricManagerMode`` (bit flags in TT-Metal), accepted by :func:`set_fabric_config`."""

    ENABLED = 0
    INIT_FABRIC = 1
    TERMINATE_FABRIC = 2
    DEFAULT = 3


class FabricRouterConfig:
    """``ttnn.FabricRouterConfig``: settings of the fabric's routers. ``max_packet_payload_size_bytes``
    (None: the default of the fabric's routing) is what :func:`get_tt_fabric_max_payload_size_bytes`
    answers once :func:`set_fabric_config` is given this config; the simulated ethernet's cost
    does not depend on it."""

    def __init__(self, max_packet_payload_size_bytes: int | None = None):
        self.max_packet_payload_size_bytes = max_packet_payload_size_bytes


# TT-Metal's default payload of one fabric packet (without its header): four bfloat8_b tiles
DEFAULT_FABRIC_PAYLOAD_BYTES = 4 * 1088
_fabric: dict = {"config": FabricConfig.DISABLED, "payload": None}


def set_fabric_config(config, reliability_mode=None, num_planes=None, fabric_tensix_config=None, fabric_udm_mode=None,
                      fabric_manager=None, router_config=None, **kwargs) -> None:
    """``ttnn.set_fabric_config``: records the fabric config and the router config's packet payload
    (:func:`get_tt_fabric_max_payload_size_bytes`); the simulated chips reach each other over
    ethernet whatever is chosen."""
    router_config = kwargs.pop("fabric_router_config", router_config)
    payload = getattr(router_config, "max_packet_payload_size_bytes", None)
    if payload is not None and (not isinstance(payload, int) or payload <= 0 or payload % 16):
        raise LayoutError(f"FabricRouterConfig.max_packet_payload_size_bytes={payload!r}: give a positive number of "
                          "bytes, a multiple of 16", user_location())
    _fabric.update(config=config, payload=payload)


def get_fabric_config():
    """``ttnn.get_fabric_config()``: the config last given to :func:`set_fabric_config`."""
    return _fabric["config"]


def get_tt_fabric_max_payload_size_bytes() -> int:
    """The largest payload of one fabric packet: the router config's, else TT-Metal's default."""
    return _fabric["payload"] or DEFAULT_FABRIC_PAYLOAD_BYTES


def deallocate(tensor: Tensor, force: bool = True) -> None:
    """``ttnn.deallocate(tensor)``: :meth:`Tensor.deallocate`."""
    _tensor(tensor, "ttnn.deallocate").deallocate(force)


def synchronize_device(*args, **kwargs) -> None:
    """Simulated operations finish before the call that runs them returns."""


from tilefold.frontend.ttl.device_profiler import (ReadDeviceProfiler,  # noqa: E402 - TT-NN's profiler calls
                                                   get_latest_programs_perf_data)



__all__ = [
    "DataType", "bfloat16", "float32", "bfloat8_b", "bfloat4_b", "uint32", "int32", "Layout", "TILE_LAYOUT",
    "ROW_MAJOR_LAYOUT", "TILE_SIZE", "MemoryConfig", "DRAM_MEMORY_CONFIG", "L1_MEMORY_CONFIG", "Shape", "Device",
    "open_device", "close_device", "CreateDevice", "CloseDevice", "Tensor", "from_numpy", "from_torch", "to_numpy", "to_torch", "full", "zeros",
    "ones", "empty", "rand", "zeros_like", "add", "subtract", "multiply", "matmul", "relu", "exp", "to_layout",
    "to_device", "from_device", "as_tensor", "copy", "abs", "neg", "sqrt", "rsqrt", "reciprocal", "square", "log", "sin", "cos", "tanh",
    "sigmoid", "silu", "gelu", "upsample", "divide", "maximum", "minimum", "sum", "transpose", "reshape", "CoreGrid", "CoreRange", "CoreRangeSet", "SemaphoreDescriptor", "split_work_to_cores",
    "num_cores_to_corerangeset", "core_range_set_to_core_grid", "allocate_tensor_on_device", "TensorSpec",
    "NdShardSpec", "ShardDistributionStrategy", "manage_device",
    "ShardStrategy", "ShardOrientation", "TensorMemoryLayout", "BufferType", "create_sharded_memory_config",
    "to_memory_config", "get_memory_config", "is_sharded", "is_tensor_storage_on_device", "to_dtype", "tilize",
    "tilize_with_zero_padding", "untilize", "sharded_to_interleaved", "interleaved_to_sharded", "unsqueeze_to_4D",
    "UnaryOpType", "UnaryWithParam", "DispatchCoreConfig", "MeshShape", "MeshDevice", "MeshTensor",
    "open_mesh_device", "close_mesh_device", "ShardTensorToMesh", "ShardTensor2dMesh", "ReplicateTensorToMesh",
    "ConcatMeshToTensor", "ConcatMesh2dToTensor", "all_reduce", "all_gather", "set_num_devices", "GetNumAvailableDevices", "get_num_devices",
    "get_arch_name",
    "MathFidelity", "WormholeComputeKernelConfig", "BlackholeComputeKernelConfig", "init_device_compute_kernel_config",
    "FabricConfig", "FabricReliabilityMode", "FabricRouterConfig", "FabricTensixConfig", "FabricUDMMode",
    "FabricManagerMode", "set_fabric_config", "get_fabric_config",
    "get_tt_fabric_max_payload_size_bytes", "synchronize_device", "ReadDeviceProfiler",
    "get_latest_programs_perf_data", "get_max_worker_l1_unreserved_size", "device",
    "uint16", "uint8", "deallocate", "full_like", "ones_like", "empty_like", "arange", "HOST_OPS",
]
__all__ += [name for name in HOST_OPS if name not in __all__ and "." not in name] + ["transformer", "experimental"]


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    from tilefold.frontend.ttl.math_api import UnsupportedName

    raise UnsupportedName(missing_name("ttnn", name, globals()), user_location())


from tilefold import ttl_submodules as _submodules  # noqa: E402  (after the names it views)

_submodules.install_for_tilefold()      # `from tilefold.ttnn.X import ...`, as `from ttnn.X import ...`
