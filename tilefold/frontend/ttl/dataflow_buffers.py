"""Dataflow buffers: ``ttl.make_dataflow_buffer_like(tensor, shape=(r, c), block_count=2)``.

Reads: the likeness tensor (data type, layout) and the block shape. Writes: a
:class:`DataflowBuffer` registered with the running operation; it becomes circular buffer
``c_<index>`` on every node of the grid, with one page per tile (a tiled tensor; its tiles are
the likeness tensor's — 1x32, 16x32 ... — or ``ttl.make_dfb(..., tile=(h, w))``'s, 32x32 by
default) and
``block pages × block_count`` pages; a row-major block's rows sit one after another (see
``ttl.row_major_pitch``) in tile-sized pages, which a compute kernel computes on as tiles. A 1-D tiled buffer
(``shape=(n,)``) holds blocks of ``n`` tiles of a 1-D tensor: the program sees 1-D blocks, the
device a row of ``(1, n)`` tiles with the elements in row 0 (how a 1-D tensor is tilized).

``ttl.make_tensor_backed_dfb(tensor, shape, block_count=1, byte_offset=0)`` makes a buffer whose
storage is the L1 shard of a sharded, tiled ``tensor`` on each node (a circular buffer at the
tensor's address plus ``byte_offset``): ``dfb.publish()`` hands its whole capacity — the tensor's
pages as they are — to the consumer as filled blocks, and blocks a kernel reserves and fills are
the tensor's own pages, so the tensor holds them when the operation ends.

A buffer no kernel uses is not allocated: it gets no circular buffer and no L1, and a warning
names it at its line (``operation.allocate_buffers``).

Errors (at the user's line): a block count outside 1–32, a shape that is not a tuple of positive
integers, more buffers per node that kernels use than the device has circular buffers (32 on
Wormhole, 64 on Blackhole).
"""

from __future__ import annotations

import linecache
import math
import re

from tilefold.errors import KernelError, KernelValueError, SourceLocation
from tilefold.frontend.ttl import capture
from tilefold.layout.formats import SUPPORTED_TILE_SHAPES, DataFormat, data_format, tensor_tile
from tilefold.caller import checked_arguments, user_location

MAX_BLOCK_COUNT = 32
_ASSIGNED = re.compile(r"^\s*(\w+)\s*=")


def _variable_name(location: SourceLocation | None) -> str | None:
    if location is None:
        return None
    match = _ASSIGNED.match(linecache.getline(location.file, location.line))
    return match.group(1) if match else None


def device_block_shape(shape) -> tuple[int, ...]:
    """The shape in tiles a tiled block has in the IR: a 1-D block of ``(n,)`` tiles is the row
    ``(1, n)`` — a 1-D tensor is held as one row of elements, in row 0 of its tiles."""
    shape = tuple(shape)
    return (1, *shape) if len(shape) == 1 else shape


def _from_user_code() -> bool:
    """Whether the caller of the caller is a user's script (not tilefold itself)."""
    import os
    import sys

    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return not os.path.abspath(sys._getframe(2).f_code.co_filename).startswith(package + os.sep)


class _PublicConstructor(type):
    """``ttl.DataflowBuffer(tensor=..., shape=..., block_count=..., dtype=...)``, TT-Lang's public
    constructor: a buffer like ``tensor`` (:func:`make_dataflow_buffer_like`) or of ``dtype``
    (:func:`make_dfb`); a ``dtype`` other than the tensor's is one error at the line."""

    def __call__(cls, *args, **kwargs):
        if args:            # the front end's own buffers (positional: shape, block count, format ...)
            return super().__call__(*args, **kwargs)
        tensor, dtype = kwargs.pop("tensor", None), kwargs.pop("dtype", None)
        location = user_location()
        if dtype is not None and _template_format(dtype) is None and not isinstance(dtype, str):
            raise KernelValueError(f"ttl.DataflowBuffer(dtype={dtype!r}): give a TT-NN or torch data type "
                                   "(ttnn.bfloat16, torch.float32 ...)", location)
        if tensor is not None and dtype is not None:
            own = _template_format(getattr(tensor, "dtype", None))
            given = _template_format(dtype)
            if given is None:
                raise KernelValueError(f"ttl.DataflowBuffer(dtype={dtype!r}): give a TT-NN or torch data type "
                                       "(ttnn.bfloat16, torch.float32 ...)", location)
            if own is not None and own is not given:
                raise KernelValueError(f"DataflowBuffer dtype {given.ttnn_name} conflicts with backing tensor dtype "
                                       f"{own.ttnn_name}; drop dtype= or make the buffer like a tensor of that type",
                                       location)
        unknown = set(kwargs) - {"shape", "block_count"}
        if unknown or "shape" not in kwargs or tensor is None and dtype is None:
            raise KernelError("ttl.DataflowBuffer(tensor=..., shape=..., block_count=..., dtype=...) takes shape= and "
                              f"a tensor or a dtype{f'; not {sorted(unknown)[0]}=' if unknown else ''}", location)
        if tensor is not None:
            return make_dataflow_buffer_like(tensor, kwargs["shape"], kwargs.get("block_count"))
        return make_dfb(dtype, kwargs["shape"], kwargs.get("block_count"))


class DataflowBuffer(metaclass=_PublicConstructor):
    """A dataflow buffer of an operation (``ttl.DataflowBuffer``)."""

    def __init__(self, shape: tuple[int, ...], block_count: int, fmt: DataFormat, layout: str,
                 location: SourceLocation | None, name: str, hidden: bool = False,
                 tile: tuple[int, int] = (32, 32)):
        self.shape = shape
        self.tile = tuple(tile)       # (height, width) of a tiled buffer's tiles: one page each
        self.block_count = block_count
        self.data_format = fmt
        self.layout = layout
        self.location = location
        self.name = name
        self.hidden = hidden          # made by the compiler (accumulators), not by the user
        self.purpose = ""             # of a hidden buffer: what it is for, for the error past the limit
        self.index = -1
        self.backing = None           # the operation tensor argument whose L1 shard is the storage
        self.byte_offset = 0          # where in that shard the buffer starts
        self.allocation_group = None  # a ttl.make_dfb_allocation_group() it takes turns with
        self.arena_offset = None      # where it starts in the operation's L1 arena (dfb_reuse.l1_arena)

    # what a script reads of a buffer; it made the buffer with them, and assigning one afterwards
    # would skip the checks of make_dataflow_buffer_like (block_count 1..32, a positive shape)
    _READ_ONLY = ("shape", "block_count", "tile", "layout", "data_format")

    def __setattr__(self, name: str, value) -> None:
        if name in self._READ_ONLY and name in self.__dict__ and _from_user_code():
            raise KernelError(f"{self.name}.{name} = ...: a dataflow buffer's {name} is set when it is made; make "
                              f"it with the {name} you want (ttl.make_dataflow_buffer_like(..., {name}=...))",
                              user_location())
        super().__setattr__(name, value)

    @property
    def ir_name(self) -> str:
        """The name as an IR value name (``acc (accumulator)`` → ``acc_accumulator``)."""
        name = re.sub(r"[^A-Za-z0-9_]+", "_", self.name).strip("_") or "dfb"
        return name if not name[0].isdigit() else f"dfb_{name}"

    # -- geometry -----------------------------------------------------------------------------

    @property
    def is_tiled(self) -> bool:
        return self.layout == "TILE"

    @property
    def ir_shape(self) -> tuple[int, ...]:
        """The block shape of the buffer's IR type: ``(1, n)`` tiles for a 1-D tiled buffer."""
        return device_block_shape(self.shape) if self.is_tiled else tuple(self.shape)

    @property
    def compute_shape(self) -> tuple[int, ...]:
        """The block as a compute kernel sees it in the IR: its tiles, or for a row-major buffer
        the ``(1, n)`` tile-sized pages holding its rows."""
        return self.ir_shape if self.is_tiled else (1, self.block_pages)

    @property
    def block_pages(self) -> int:
        """Pages of one block: its tiles (the tile-sized pages of its rows for a row-major buffer)."""
        if self.is_tiled:
            return math.prod(self.shape)
        from tilefold.ir.row_major_blocks import row_major_tiles   # not at import: tilefold.ttl loads no IR

        return row_major_tiles(self.shape)

    @property
    def page_size(self) -> int:
        return self.data_format.tile_size(*self.tile) if self.is_tiled else self.data_format.tile_size()

    @property
    def block_bytes(self) -> int:
        """Bytes of one block: its pages."""
        return self.block_pages * self.page_size

    @property
    def num_pages(self) -> int:
        return self.block_pages * self.block_count

    @property
    def buffer_factor(self) -> int:
        """The pre-1.0 name of ``block_count``."""
        return self.block_count

    @property
    def total_size(self) -> int:
        return self.num_pages * self.page_size

    def describe(self) -> str:
        dims = "x".join(str(s) for s in self.shape)
        unit = "elements"
        if self.is_tiled:
            unit = "tiles" if self.tile == (32, 32) else f"{self.tile[0]}x{self.tile[1]} tiles"
        return f"{self.name} ({dims} {unit} of {self.data_format.ttnn_name} x {self.block_count} blocks = " \
               f"{self.total_size} B)"

    # -- used outside a kernel ------------------------------------------------------------------

    def _outside(self, what: str):
        raise KernelError(f"{self.name}.{what}() can only be called inside a @ttl.compute or @ttl.datamovement "
                          "kernel function", user_location())

    def reserve(self):
        self._outside("reserve")

    def wait(self):
        self._outside("wait")

    def publish(self):
        self._outside("publish")

    def __repr__(self) -> str:
        return f"<DataflowBuffer {self.describe()}>"


def _block_shape(shape, location) -> tuple[int, ...]:
    dims = (shape,) if isinstance(shape, int) else shape
    try:
        dims = tuple(dims)
    except TypeError:
        dims = None
    if not dims or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in dims):
        raise KernelError(f"make_dataflow_buffer_like(shape={shape!r}): shape must be a positive integer or a tuple "
                          "of positive integers (tiles for a tiled tensor, elements for a row-major one)", location)
    return dims


class DFBAllocationGroup:
    """``ttl.make_dfb_allocation_group()``: buffers a program uses one after another, placed in one
    L1 area (:func:`tilefold.frontend.ttl.dfb_reuse.l1_arena`); the simulator stops a run at the
    line where one of them is reserved while another still holds blocks."""


@checked_arguments("ttl.make_dfb_allocation_group")
def make_dfb_allocation_group() -> DFBAllocationGroup:
    return DFBAllocationGroup()


_DTYPE_NAMES = {"bf16": "bfloat16", "fp32": "float32", "f32": "float32", "bfp8": "bfloat8_b", "bfp8_b": "bfloat8_b",
                "bfp4": "bfloat4_b", "bfp4_b": "bfloat4_b"}


@checked_arguments("ttl.make_dfb")
def make_dfb(dtype, shape, block_count: int | None = None, tile=None, *, buffer_factor: int | None = None,
             layout=None, allocation_group=None):
    """``ttl.make_dfb(dtype, shape, block_count)``: a dataflow buffer no tensor describes — of tiles
    (or row-major elements with ``layout=ttnn.ROW_MAJOR_LAYOUT``) of ``dtype`` ("bf16", "fp32",
    "bfp8", "bfp4" or a TT-NN data type); ``tile=(h, w)`` (or a ``ttnn.Tile``) the shape of its
    tiles, 32x32 by default. ``buffer_factor`` is the former name of ``block_count``."""
    location = user_location()
    tile_dims = _tile_dims("ttl.make_dfb", tile, location)
    block_count = _block_count("ttl.make_dfb", block_count, buffer_factor, location)
    name = getattr(dtype, "name", None) or str(dtype)
    name = _DTYPE_NAMES.get(name.lower().removeprefix("ttnn.").removeprefix("datatype."), name)
    try:
        fmt = data_format(name)
    except Exception:       # noqa: BLE001 - reported below
        raise KernelError(f"ttl.make_dfb({dtype!r}, ...): the data type is bf16, fp32, bfp8 or a TT-NN data type",
                          location) from None
    spelled = str(getattr(layout, "name", layout)).upper()
    if layout is not None and "TILE" not in spelled and "ROW_MAJOR" not in spelled:
        raise KernelError(f"ttl.make_dfb(layout={layout!r}): give ttnn.TILE_LAYOUT or ttnn.ROW_MAJOR_LAYOUT", location)
    layout_name = "TILE" if layout is None or "TILE" in spelled else "ROW_MAJOR"
    if layout_name != "TILE" and tile is not None:
        raise KernelError(f"ttl.make_dfb(tile={tile!r}, layout=...): a row-major buffer has no tiles; drop tile=",
                          location)
    return _make(fmt, layout_name, shape, block_count, None, location, "ttl.make_dfb", allocation_group, tile_dims)


def _tile_dims(what: str, tile, location) -> tuple[int, int]:
    """The ``(height, width)`` of a buffer's ``tile=`` (a pair or a ``ttnn.Tile``; None: 32x32)."""
    if tile is None:
        return (32, 32)
    dims = getattr(tile, "tile_shape", tile)
    try:
        dims = tuple(int(d) for d in dims)
    except (TypeError, ValueError):
        dims = None
    if dims not in {tuple(t) for t in SUPPORTED_TILE_SHAPES}:
        shapes = ", ".join(f"{h}x{w}" for h, w in SUPPORTED_TILE_SHAPES)
        raise KernelError(f"{what}(tile={tile!r}): a tile is (height, width), one of {shapes}", location)
    return dims


def _template_format(dtype):
    """The data format of a torch (or TT-NN) dtype of an object without a layout, or None."""
    name = str(getattr(dtype, "name", dtype)).lower().removeprefix("torch.").removeprefix("ttnn.")
    try:
        return data_format(_DTYPE_NAMES.get(name, name))
    except Exception:       # noqa: BLE001 - the caller reports it
        return None


_UNSET = object()


@checked_arguments("ttl.make_dataflow_buffer_like")
def make_dataflow_buffer_like(tensor=_UNSET, shape=_UNSET, block_count: int | None = None, *,
                              buffer_factor: int | None = None, allocation_group=None, likeness_tensor=_UNSET):
    """A dataflow buffer of blocks of ``shape`` in the likeness of ``tensor`` (its data type and
    layout). ``buffer_factor`` is the former name of ``block_count``; ``likeness_tensor`` the name
    TT-Lang 1.1 gives ``tensor``."""
    location = user_location()
    if (tensor is _UNSET) == (likeness_tensor is _UNSET) or shape is _UNSET:
        from tilefold.errors import KernelArgumentError

        given = (tensor is not _UNSET) + (likeness_tensor is not _UNSET)
        what = ("the tensor twice (as tensor and as likeness_tensor): give one" if given == 2
                else "no tensor: give the tensor whose data type and layout it takes first" if given == 0
                else "no shape: give shape=(rows, columns) in tiles")
        raise KernelArgumentError(f"ttl.make_dataflow_buffer_like got {what}", location)
    tensor = likeness_tensor if tensor is _UNSET else tensor
    count = _block_count("make_dataflow_buffer_like", block_count, buffer_factor, location)
    dtype = getattr(tensor, "dtype", None)
    layout = getattr(tensor, "layout", None)
    fmt = _template_format(dtype) if dtype is not None and layout is None else None
    if fmt is not None:             # an object with only a dtype (a torch tensor, a template): tiles of it
        layout = "TILE"
    if dtype is None or layout is None:
        from tilefold.frontend.ttl.capture import active

        capture = active()
        hint = capture.not_a_tensor_hint(tensor) if capture else ""
        raise KernelError(f"make_dataflow_buffer_like: the first argument must be a tensor (it gives the buffer's "
                          f"data type and layout), not {type(tensor).__name__}{hint}", location)
    fmt = fmt or data_format(getattr(dtype, "name", dtype))
    layout_name = "TILE" if "TILE" in str(getattr(layout, "name", layout)).upper() else "ROW_MAJOR"
    tile = tensor_tile(tensor) if layout_name == "TILE" else (32, 32)
    rank = len(tuple(getattr(tensor, "shape", ()) or ()))
    if isinstance(shape, (tuple, list)) and rank >= 2 and len(shape) > rank:
        raise KernelError(f"make_dataflow_buffer_like: shape={tuple(shape)!r} has {len(shape)} dimensions, but the tensor "
                          f"has {rank}; a block has at most the tensor's dimensions — give shape="
                          f"{tuple(shape)[len(shape) - rank:]!r}", location)
    return _make(fmt, layout_name, shape, count, tensor, location, "make_dataflow_buffer_like", allocation_group,
                 tile)


@checked_arguments("ttl.make_tensor_backed_dfb")
def make_tensor_backed_dfb(tensor, shape, *, block_count: int = 1, byte_offset: int = 0, tile=None,
                           allocation_group=None):
    """A dataflow buffer whose storage is ``tensor``'s L1 shard on each node (see the module
    docstring): ``block_count`` blocks of ``shape`` tiles, from ``byte_offset`` bytes into the shard."""
    location = user_location()
    what = "ttl.make_tensor_backed_dfb"
    op = capture.current(what)
    dtype = getattr(tensor, "dtype", None)
    layout = getattr(tensor, "layout", None)
    memory = tensor.memory_config() if callable(getattr(tensor, "memory_config", None)) else None
    if dtype is None or layout is None or memory is None:
        raise KernelError(f"{what}: the first argument must be a device tensor (its L1 shard is the buffer's "
                          f"storage), not {type(tensor).__name__}", location)
    argument = op.tensor_argument(tensor)
    if argument is None:
        raise KernelError(f"{what}: the tensor must be one of the tensors operation {op.name!r} is called with",
                          location)
    place = getattr(getattr(memory, "buffer_type", None), "name", "DRAM")
    if place != "L1":
        raise KernelError(f"{what}({argument.name}): {argument.name} is in {place}; a tensor-backed buffer needs a "
                          "sharded L1 tensor (memory_config with a shard spec and ttnn.BufferType.L1)", location)
    if not getattr(memory, "is_sharded", False):
        raise KernelError(f"{what}({argument.name}): {argument.name} is interleaved in L1; a tensor-backed buffer "
                          "needs a sharded L1 tensor, whose shard each node holds", location)
    if "TILE" not in str(getattr(layout, "name", layout)).upper():
        raise KernelError(f"{what}({argument.name}): a tensor-backed buffer needs a tensor in TILE layout", location)
    # the buffer's tiles: the tensor's by default, or tile= viewing the shard's bytes as other tiles
    tile_dims = tensor_tile(tensor) if tile is None else _tile_dims(what, tile, location)
    _check_count(what, block_count, location)
    fmt = data_format(getattr(dtype, "name", dtype))
    page = fmt.tile_size(*tile_dims)
    if not isinstance(byte_offset, int) or isinstance(byte_offset, bool) or byte_offset < 0 \
            or byte_offset % page:
        raise KernelValueError(f"{what}(byte_offset={byte_offset!r}): byte_offset must be a non-negative multiple "
                               f"of the buffer's {page}-byte page (a {fmt.ttnn_name} tile of "
                               f"{tile_dims[0]}x{tile_dims[1]})", location)
    dfb = _make(fmt, "TILE", shape, block_count, tensor, location, what, allocation_group, tile_dims)
    dfb.backing = argument
    dfb.byte_offset = byte_offset
    return dfb


def _block_count(what: str, block_count, buffer_factor, location) -> int:
    """The block count of a buffer given as ``block_count=`` or by its pre-1.0 name ``buffer_factor=``
    (the same number), 2 when neither is given."""
    if block_count is not None and buffer_factor is not None:
        raise KernelError(f"{what}: give block_count or buffer_factor (its pre-1.0 name), not both", location)
    count = block_count if block_count is not None else (buffer_factor if buffer_factor is not None else 2)
    _check_count(what, count, location, "buffer_factor" if buffer_factor is not None else "block_count")
    return count


def _check_count(what: str, count, location, keyword: str = "block_count") -> None:
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_BLOCK_COUNT:
        raise KernelValueError(f"{what}({keyword}={count!r}): {keyword} must be an integer from 1 "
                               f"to {MAX_BLOCK_COUNT}", location)


def _make(fmt, layout_name: str, shape, count, tensor, location, what: str, allocation_group,
          tile: tuple[int, int] = (32, 32)) -> DataflowBuffer:
    op = capture.active()
    if op is None and what == "ttl.make_tensor_backed_dfb":
        capture.current(what)               # raises: a node's shard exists only inside an operation
    if allocation_group is not None and not isinstance(allocation_group, DFBAllocationGroup):
        raise KernelError(f"{what}(allocation_group={allocation_group!r}): give a group from "
                          "ttl.make_dfb_allocation_group()", location)
    _check_count(what, count, location)
    supported = (DataFormat.Float16_b, DataFormat.Float32, DataFormat.Bfp8_b, DataFormat.Bfp4_b, DataFormat.Int32,
                 DataFormat.UInt32, DataFormat.UInt16, DataFormat.UInt8) if layout_name == "TILE" else (DataFormat.Float16_b, DataFormat.Float32)
    if fmt not in supported:
        kind = "tiles" if layout_name == "TILE" else "row-major elements"
        raise KernelError(f"{what}: a buffer of {fmt.ttnn_name} {kind} is not supported by "
                          f"tilefold yet; use a tensor of {', '.join(f.ttnn_name for f in supported)} (e.g. "
                          "ttnn.from_numpy(array, dtype=ttnn.bfloat16))", location)
    dims = _block_shape(shape, location)
    name = _variable_name(location) or (f"dfb{len(op.dataflow_buffers)}" if op is not None else "dfb")
    dfb = DataflowBuffer(dims, count, fmt, layout_name, location, name, tile=tile)
    dfb.allocation_group = allocation_group
    # made outside an operation (as TT-Lang allows): a buffer no operation has; one that uses it is refused
    dfb.index = op.add_dataflow_buffer(dfb) if op is not None else None
    return dfb


def hidden_dataflow_buffer(shape: tuple[int, ...], fmt: DataFormat, name: str, location: SourceLocation | None,
                           block_count: int = 2, what: str = "an accumulator",
                           tile: tuple[int, int] = (32, 32)) -> DataflowBuffer:
    """A buffer the compiler adds (an accumulator, the staging area of a converting copy),
    registered with the running operation."""
    op = capture.current(what)
    dfb = DataflowBuffer(tuple(shape), block_count, fmt, "TILE", location, name, hidden=True, tile=tile)
    dfb.purpose = "to carry its value between loop iterations" if what == "an accumulator" else f"for {what}"
    dfb.index = op.add_dataflow_buffer(dfb)
    return dfb
