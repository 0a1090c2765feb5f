"""TT-NN's TensorSpec: a logical tensor, its page layout and where its pages live.

Reads: a logical shape, a data format, ROW_MAJOR or TILE layout, a :class:`MemoryConfig`
(INTERLEAVED / HEIGHT_SHARDED / WIDTH_SHARDED / BLOCK_SHARDED in DRAM or L1, with a 2-D
:class:`ShardSpec` or an N-D :class:`NdShardSpec`) and a tile shape.
Writes: nothing; derives the padded shape, strides, the 2-D physical shape (leading dims
collapsed into rows, the innermost dim wide), shard and physical shard shapes, the shard
grid, pages (shape, size, count), the buffer size and a
:class:`~tilefold.layout.addressing.BufferLayout` that maps page ids to banks.

Conventions: ``stride`` is the row-major (PyTorch) stride of the padded shape, so
``physical_shape == (stride[0] * padded[0] // stride[-2], stride[-2])``. A 2-D shard spec is
PHYSICAL by default (its shape cuts the padded 2-D tensor and must be tile-aligned in TILE
layout) or LOGICAL (its shape cuts the unpadded 2-D tensor; each shard is then padded to the
tile — grid first, then tile).

Errors: :class:`~tilefold.errors.LayoutError` naming the argument and what to change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from tilefold.arch import Arch, get_arch
from tilefold.arch.cores import CoreCoord, CoreRange, CoreRangeSet
from tilefold.errors import LayoutError
from tilefold.layout.addressing import (
    BufferDistributionSpec,
    BufferLayout,
    BufferType,
    ShardDistributionStrategy,
    ShardOrientation,
    TTNNEnumType,
    align,
    buffer_type,
    shard_orientation,
)
from tilefold.layout.formats import DataFormat, data_format
from tilefold.layout.tiles import TileShape, tile_shape


class Layout(Enum):
    ROW_MAJOR = "ROW_MAJOR"
    TILE = "TILE"


class TensorMemoryLayout(Enum, metaclass=TTNNEnumType):
    INTERLEAVED = "INTERLEAVED"
    HEIGHT_SHARDED = "HEIGHT_SHARDED"
    WIDTH_SHARDED = "WIDTH_SHARDED"
    BLOCK_SHARDED = "BLOCK_SHARDED"


class ShardMode(Enum, metaclass=TTNNEnumType):
    PHYSICAL = "PHYSICAL"
    LOGICAL = "LOGICAL"


def _enum(enum_type, spec, name: str):
    if isinstance(spec, enum_type):
        return spec
    key = str(spec).strip().upper().replace("-", "_")
    aliases = {"HEIGHT": "HEIGHT_SHARDED", "WIDTH": "WIDTH_SHARDED", "BLOCK": "BLOCK_SHARDED", "ROW": "ROW_MAJOR"}
    key = aliases.get(key, key)
    for member in enum_type:
        if key == member.name:
            return member
    raise LayoutError(f"{name} {spec!r} is unknown; use one of {', '.join(m.name for m in enum_type)}")


def layout(spec) -> Layout:
    return _enum(Layout, spec, "layout")


def tensor_memory_layout(spec) -> TensorMemoryLayout:
    return _enum(TensorMemoryLayout, spec, "memory_layout")


def _positive(values, name: str, rank: int | None = None) -> tuple[int, ...]:
    if isinstance(values, str):
        values = [v for v in values.replace("x", ",").split(",") if v.strip()]
    try:
        dims = tuple(int(v) for v in values)
    except (TypeError, ValueError):
        raise LayoutError(f"{name} {values!r} is not a list of integers") from None
    if rank is not None and len(dims) != rank:
        raise LayoutError(f"{name} {list(dims)} must have {rank} dims")
    if not dims or any(d <= 0 for d in dims):
        raise LayoutError(f"{name} {list(dims)} must have positive dims")
    return dims


def core_grid(spec) -> CoreRangeSet:
    """A CoreRangeSet from itself, a CoreRange, a CoreCoord, a list of ranges, or ``(x, y)``
    grid size as a tuple of two ints meaning the cores (0, 0)..(x-1, y-1)."""
    if isinstance(spec, CoreRangeSet):
        return spec
    if callable(getattr(spec, "ranges", None)):        # ttnn.CoreRangeSet
        spec = spec.ranges()
    if isinstance(spec, (list, tuple, set, frozenset)) and all(hasattr(r, "start") and hasattr(r, "end") and
                                                               not isinstance(r, CoreRange) for r in spec):
        spec = [CoreRange((r.start.x, r.start.y), (r.end.x, r.end.y)) for r in spec]     # ttnn.CoreRange
    if isinstance(spec, (CoreRange, CoreCoord)):
        return CoreRangeSet(spec)
    if isinstance(spec, tuple) and len(spec) == 2 and all(isinstance(v, int) for v in spec):
        x, y = spec
        if x <= 0 or y <= 0:
            raise LayoutError(f"grid size {spec} must be positive")
        return CoreRangeSet([CoreRange((0, 0), (x - 1, y - 1))])
    try:
        return CoreRangeSet(spec)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, LayoutError):
            raise
        raise LayoutError(f"grid {spec!r} is not a CoreRangeSet or a list of core ranges") from None


@dataclass(frozen=True)
class ShardSpec:
    """A 2-D shard spec: ``shape`` (height, width) of a shard, the cores, the orientation."""

    grid: CoreRangeSet
    shape: tuple[int, int]
    orientation: ShardOrientation = ShardOrientation.ROW_MAJOR
    mode: ShardMode = ShardMode.PHYSICAL

    def __post_init__(self):
        object.__setattr__(self, "grid", core_grid(self.grid))
        object.__setattr__(self, "shape", _positive(self.shape, "shard_spec.shape", 2))
        object.__setattr__(self, "orientation", shard_orientation(self.orientation))
        object.__setattr__(self, "mode", _enum(ShardMode, self.mode, "shard_spec.mode"))


@dataclass(frozen=True)
class NdShardSpec:
    """An N-D shard spec: ``shard_shape`` in elements, dealt round-robin to the cores."""

    shard_shape: tuple[int, ...]
    grid: CoreRangeSet
    orientation: ShardOrientation = ShardOrientation.ROW_MAJOR
    distribution: ShardDistributionStrategy = ShardDistributionStrategy.ROUND_ROBIN_1D

    def __post_init__(self):
        object.__setattr__(self, "shard_shape", _positive(self.shard_shape, "nd_shard_spec.shard_shape"))
        object.__setattr__(self, "grid", core_grid(self.grid))
        object.__setattr__(self, "orientation", shard_orientation(self.orientation))
        if not isinstance(self.distribution, ShardDistributionStrategy):
            object.__setattr__(
                self, "distribution", _enum(ShardDistributionStrategy, self.distribution, "nd_shard_spec.distribution")
            )


class CallableFlag(int):
    """A truth value that can also be called: ``config.is_sharded`` and TT-NN's ``config.is_sharded()``."""

    def __new__(cls, value) -> "CallableFlag":
        return super().__new__(cls, bool(value))

    def __call__(self) -> bool:
        return bool(self)

    def __repr__(self) -> str:
        return repr(bool(self))


@dataclass(frozen=True)
class MemoryConfig:
    memory_layout: TensorMemoryLayout = TensorMemoryLayout.INTERLEAVED
    buffer_type: BufferType = BufferType.DRAM
    shard_spec: ShardSpec | None = None
    nd_shard_spec: NdShardSpec | None = None

    def __post_init__(self):
        if isinstance(self.memory_layout, BufferType) and isinstance(self.buffer_type, NdShardSpec):
            # TT-NN's MemoryConfig(buffer_type, nd_shard_spec)
            object.__setattr__(self, "nd_shard_spec", self.buffer_type)
            object.__setattr__(self, "buffer_type", self.memory_layout)
            object.__setattr__(self, "memory_layout", TensorMemoryLayout.BLOCK_SHARDED)
        object.__setattr__(self, "memory_layout", tensor_memory_layout(self.memory_layout))
        object.__setattr__(self, "buffer_type", buffer_type(self.buffer_type))
        if self.shard_spec is not None and self.nd_shard_spec is not None:
            raise LayoutError("memory_config has both shard_spec and nd_shard_spec; give one of them")
        if self.memory_layout is TensorMemoryLayout.INTERLEAVED:
            if self.shard_spec is not None or self.nd_shard_spec is not None:
                raise LayoutError(
                    "memory_config is INTERLEAVED but has a shard spec; use HEIGHT_SHARDED, WIDTH_SHARDED or "
                    "BLOCK_SHARDED, or drop the shard spec"
                )
        elif self.shard_spec is None and self.nd_shard_spec is None:
            raise LayoutError(
                f"memory_config is {self.memory_layout.name} but has no shard_spec; give a ShardSpec or NdShardSpec"
            )

    @property
    def is_sharded(self) -> CallableFlag:
        """Whether the config shards: a truth value, also callable as TT-NN's ``config.is_sharded()``."""
        return CallableFlag(self.memory_layout is not TensorMemoryLayout.INTERLEAVED)

    def distribution(self, tensor, arch: Arch | str | None = None) -> BufferDistributionSpec | None:
        """The page distribution this config gives ``tensor`` — anything with ``shape``,
        ``data_format`` (or ``dtype``), ``layout`` and ``tile``; with ``arch``, also checked
        against that device (cores on its grid, shards fitting a bank)."""
        try:
            dtype = getattr(tensor, "data_format", None) or tensor.dtype
            spec = TensorSpec(tensor.shape, dtype, tensor.layout, self, tensor.tile)
        except AttributeError:
            raise LayoutError(f"tensor {tensor!r} needs shape, data_format, layout and tile") from None
        return spec.distribution_spec() if arch is None else spec.buffer_layout(arch).distribution


DRAM_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.DRAM)
L1_MEMORY_CONFIG = MemoryConfig(TensorMemoryLayout.INTERLEAVED, BufferType.L1)


@dataclass(frozen=True)
class TensorSpec:
    """A tensor as TT-NN lays it out: see the module docstring for the conventions."""

    shape: tuple[int, ...]
    dtype: DataFormat = DataFormat.Float16_b
    layout: Layout = Layout.TILE
    memory_config: MemoryConfig = field(default_factory=MemoryConfig)
    tile: TileShape = field(default_factory=TileShape)

    def __post_init__(self):
        object.__setattr__(self, "shape", _positive(self.shape, "shape"))
        object.__setattr__(self, "dtype", data_format(self.dtype))
        object.__setattr__(self, "layout", layout(self.layout))
        object.__setattr__(self, "tile", tile_shape(self.tile))
        if not isinstance(self.memory_config, MemoryConfig):
            raise LayoutError(f"memory_config {self.memory_config!r} is not a MemoryConfig")
        if self.layout is Layout.ROW_MAJOR and self.dtype.is_block_float:
            self.dtype.element_size  # raises the format's own LayoutError: block floats need TILE
        self._validate_sharding()

    # -- shapes ---------------------------------------------------------------------------

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def _shard_spec(self) -> ShardSpec | None:
        return self.memory_config.shard_spec

    @property
    def _nd(self) -> NdShardSpec | None:
        return self.memory_config.nd_shard_spec

    @property
    def _is_logical_sharding(self) -> bool:
        return self._shard_spec is not None and self._shard_spec.mode is ShardMode.LOGICAL

    @property
    def _width_alignment(self) -> int:
        """Row-major width alignment: the shard width for width/block 2-D sharding and ND
        sharding (a page is one shard-wide stick), else 1."""
        if self._shard_spec is not None and self.memory_config.memory_layout is not TensorMemoryLayout.HEIGHT_SHARDED:
            return self._shard_spec.shape[1]
        if self._nd is not None:
            return self._nd.shard_shape[-1]
        return 1

    @property
    def padded_shape(self) -> tuple[int, ...]:
        """TILE: the last two dims rounded up to the tile (rank 1 becomes tile-height × W);
        ROW_MAJOR: the width rounded up to the row-major width alignment."""
        if self._is_logical_sharding:
            return self.shape
        if self.layout is Layout.TILE:
            th, tw = self.tile.height, self.tile.width
            if self.rank == 1:
                return (th, align(self.shape[0], tw))
            return self.shape[:-2] + (align(self.shape[-2], th), align(self.shape[-1], tw))
        return self.shape[:-1] + (align(self.shape[-1], self._width_alignment),)

    @property
    def stride(self) -> tuple[int, ...]:
        """Row-major strides of the padded shape (elements)."""
        padded = self.padded_shape
        strides = [1] * len(padded)
        for i in range(len(padded) - 2, -1, -1):
            strides[i] = strides[i + 1] * padded[i + 1]
        return tuple(strides)

    @property
    def logical_2d_shape(self) -> tuple[int, int]:
        return (math.prod(self.shape[:-1]), self.shape[-1])

    @property
    def physical_shape(self) -> tuple[int, int]:
        """The 2-D physical shape: rows = all leading dims collapsed, width = innermost dim."""
        if self._is_logical_sharding:
            rows, cols = self.logical_2d_shape
            sh, sw = self._shard_spec.shape
            ph, pw = self.physical_shard_shape
            return (-(-rows // sh) * ph, -(-cols // sw) * pw)
        padded = self.padded_shape
        return (math.prod(padded[:-1]), padded[-1])

    @property
    def tile_shape(self) -> TileShape:
        return self.tile

    @property
    def shard_shape(self) -> tuple[int, ...] | None:
        """The shard shape as given (2-D, or N-D for an ND shard spec); None if interleaved."""
        if self._shard_spec is not None:
            return self._shard_spec.shape
        if self._nd is not None:
            return self._nd.shard_shape
        return None

    @property
    def physical_shard_shape(self) -> tuple[int, ...] | None:
        """The shard padded to the tile (TILE layout); as given otherwise."""
        shard = self.shard_shape
        if shard is None:
            return None
        if self.layout is not Layout.TILE:
            return shard
        if len(shard) == 1:
            return (align(shard[0], self.tile.width),)
        return shard[:-2] + (align(shard[-2], self.tile.height), align(shard[-1], self.tile.width))

    def _nd_shard_full_rank(self) -> tuple[int, ...]:
        shard = self.physical_shard_shape
        padded = self.padded_shape
        return (1,) * (len(padded) - len(shard)) + tuple(shard)

    @property
    def grid_shape(self) -> tuple[int, ...] | None:
        """Shards per dim: ``[ceil(rows / shard_h), ceil(width / shard_w)]`` for a 2-D spec
        (rows = ``stride[0] * padded[0] // stride[-2]``), one per dim for an ND spec."""
        if self._shard_spec is not None:
            rows, cols = self.physical_shape
            ph, pw = self.physical_shard_shape
            return (-(-rows // ph), -(-cols // pw))
        if self._nd is not None:
            return tuple(-(-t // s) for t, s in zip(self.padded_shape, self._nd_shard_full_rank()))
        return None

    @property
    def num_shards(self) -> int:
        grid = self.grid_shape
        return math.prod(grid) if grid else 0

    # -- pages ----------------------------------------------------------------------------

    @property
    def page_shape(self) -> tuple[int, int]:
        """TILE: one tile. ROW_MAJOR: one stick — the full width, or a shard's width when
        width/block/ND sharded."""
        if self.layout is Layout.TILE:
            return (self.tile.height, self.tile.width)
        if self._width_alignment > 1:
            return (1, self.physical_shard_shape[-1])
        return (1, self.physical_shape[1])

    @property
    def page_size(self) -> int:
        if self.layout is Layout.TILE:
            return self.dtype.tile_size(self.tile.height, self.tile.width)
        return self.page_shape[1] * self.dtype.element_size

    @property
    def tensor_shape_in_pages(self) -> tuple[int, int]:
        (rows, cols), (ph, pw) = self.physical_shape, self.page_shape
        return (rows // ph, cols // pw)

    @property
    def num_pages(self) -> int:
        return math.prod(self.tensor_shape_in_pages)

    @property
    def buffer_size(self) -> int:
        """Packed bytes: pages × page size."""
        return self.num_pages * self.page_size

    # -- placement ------------------------------------------------------------------------

    def _validate_sharding(self) -> None:
        mc = self.memory_config
        spec = mc.shard_spec
        if spec is not None:
            sh, sw = spec.shape
            if self.layout is Layout.TILE and spec.mode is ShardMode.PHYSICAL:
                th, tw = self.tile.height, self.tile.width
                if sh % th or sw % tw:
                    raise LayoutError(
                        f"memory_config.shard_spec.shape {sh}x{sw} is not a multiple of the {self.tile} tile; use "
                        f"{align(sh, th)}x{align(sw, tw)} or mode=LOGICAL to pad each shard"
                    )
            rows, cols = self.logical_2d_shape if spec.mode is ShardMode.LOGICAL else self.physical_shape
            if mc.memory_layout is TensorMemoryLayout.HEIGHT_SHARDED and sw != cols:
                raise LayoutError(
                    f"memory_config.shard_spec.shape width {sw} must equal the tensor's physical width {cols} for "
                    f"HEIGHT_SHARDED; use shape {sh}x{cols} or BLOCK_SHARDED"
                )
            if mc.memory_layout is TensorMemoryLayout.WIDTH_SHARDED and sh != rows:
                raise LayoutError(
                    f"memory_config.shard_spec.shape height {sh} must equal the tensor's physical height {rows} for "
                    f"WIDTH_SHARDED; use shape {rows}x{sw} or BLOCK_SHARDED"
                )
            if mc.memory_layout is not TensorMemoryLayout.BLOCK_SHARDED and self.num_shards > spec.grid.num_cores:
                raise LayoutError(
                    f"memory_config.shard_spec.grid has {spec.grid.num_cores} cores but the tensor needs "
                    f"{self.num_shards} shards of {sh}x{sw}; use a bigger grid or a bigger shard shape"
                )
        nd = mc.nd_shard_spec
        if nd is not None:
            if len(nd.shard_shape) > max(self.rank, 2):
                raise LayoutError(
                    f"memory_config.nd_shard_spec.shard_shape {list(nd.shard_shape)} has more dims than the tensor "
                    f"shape {list(self.shape)}"
                )
            if self.layout is Layout.TILE:
                shard = nd.shard_shape
                th, tw = self.tile.height, self.tile.width
                if shard[-1] % tw or (len(shard) >= 2 and shard[-2] % th):
                    raise LayoutError(
                        f"memory_config.nd_shard_spec.shard_shape {list(shard)} is not tile-aligned in its last two "
                        f"dims; use multiples of the {self.tile} tile"
                    )
        self.distribution_spec()  # checks a 2-D shard grid fits its core grid

    def distribution_spec(self) -> BufferDistributionSpec | None:
        """The page distribution of a sharded tensor (None when interleaved)."""
        spec, nd = self._shard_spec, self._nd
        if spec is not None:
            strategy = (
                ShardDistributionStrategy.GRID_2D
                if self.memory_config.memory_layout is TensorMemoryLayout.BLOCK_SHARDED
                else ShardDistributionStrategy.ROUND_ROBIN_1D
            )
            return BufferDistributionSpec.from_shard_spec(
                self.physical_shape, self.physical_shard_shape, self.page_shape, spec.grid, spec.orientation, strategy
            )
        if nd is not None:
            return BufferDistributionSpec.from_shard_spec(
                self.padded_shape, self._nd_shard_full_rank(), self.page_shape, nd.grid, nd.orientation, nd.distribution
            )
        return None

    def buffer_layout(self, arch: Arch | str | None = None) -> BufferLayout:
        """Where the pages go on ``arch``; checks the cores exist and the buffer fits a bank."""
        a = get_arch(arch)
        buf = BufferLayout(self.memory_config.buffer_type, self.page_size, self.num_pages, self.distribution_spec())
        if buf.is_sharded:
            buf.bank_noc_coords(a)  # every core is on the grid / every DRAM bank exists
        per_bank = buf.bytes_per_bank(a)
        capacity = a.l1_free if not buf.is_dram else a.dram_bank_size
        if per_bank > capacity:
            where = "an L1 bank" if not buf.is_dram else "a DRAM bank"
            raise LayoutError(
                f"tensor {list(self.shape)} needs {per_bank} bytes in {where} but {a.board} has {capacity}; use more "
                f"cores, DRAM, or a smaller shard_shape"
            )
        return buf

    def page_locations(self, arch: Arch | str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(bank index, byte offset) of every page, in page-id order."""
        return self.buffer_layout(arch).page_location(np.arange(self.num_pages), arch)

    # -- padding --------------------------------------------------------------------------

    def real_masks(self) -> tuple[np.ndarray, np.ndarray]:
        """(row mask, column mask) over the 2-D physical shape: True where real data sits.
        An element is padding iff its row or its column is False."""
        rows, cols = self.physical_shape
        r = np.arange(rows)
        c = np.arange(cols)
        if self._is_logical_sharding:
            (lrows, lcols), (sh, sw), (ph, pw) = self.logical_2d_shape, self._shard_spec.shape, self.physical_shard_shape
            row_real = (r % ph < sh) & ((r // ph) * sh + r % ph < lrows)
            col_real = (c % pw < sw) & ((c // pw) * sw + c % pw < lcols)
            return row_real, col_real
        h = self.shape[-2] if self.rank >= 2 else 1
        ph = self.padded_shape[-2] if self.rank >= 2 or self.layout is Layout.TILE else 1
        return (r % ph < h), (c < self.shape[-1])

    def padding_elements(self) -> int:
        rows, cols = self.real_masks()
        return rows.size * cols.size - int(rows.sum()) * int(cols.sum())


__all__ = [
    "Layout",
    "TensorMemoryLayout",
    "ShardMode",
    "ShardSpec",
    "NdShardSpec",
    "MemoryConfig",
    "DRAM_MEMORY_CONFIG",
    "L1_MEMORY_CONFIG",
    "TensorSpec",
    "core_grid",
    "layout",
    "tensor_memory_layout",
]
