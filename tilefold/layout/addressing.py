"""Page addressing: which bank holds a page and where, and the TensorAccessorArgs encoding.

Reads: page ids (numpy arrays), page sizes, shapes in pages, core grids, an :class:`Arch`.
Writes: bank indices and byte offsets (numpy arrays), and the compile-time / common runtime
argument words a kernel's ``TensorAccessorArgs<CTA_OFFSET>()`` reads.

* Interleaved: ``bank = page_id % num_banks``,
  ``address = bank_base + (page_id // num_banks) * align(page_size, ALIGN) + offset``
  (ALIGN from the arch: Wormhole DRAM 32 B, L1 16 B; Blackhole DRAM 64 B, L1 16 B).
* Sharded (ND): shards tile the tensor (in pages) as a row-major shard grid;
  ``shard_id = Σ (coord_i // shard_i) · grid_stride_i``, ``bank = shard_id % num_banks``, page
  offset in the bank ``(shard_id // num_banks) · shard_volume + Σ (coord_i % shard_i) ·
  shard_stride_i``; a partial shard still takes a full slot. Legacy 2-D HEIGHT/WIDTH sharding
  distributes shards round-robin over the cores (ROUND_ROBIN_1D), BLOCK sharding puts the 2-D
  shard grid onto the 2-D core grid (GRID_2D); the orientation orders the cores.
* TensorAccessorArgs: CTA[0] the :class:`ArgConfig` flags, CTA[1] the aligned page size;
  interleaved stops there. Sharded adds rank, number of banks, tensor shape and shard shape
  (pages), then the banks' NOC coordinates, ``(x << 8) | y`` per bank, two banks per word
  (even bank in the low half). Parts flagged ``Runtime*`` go to the common runtime args
  instead, in the same order.

Errors: :class:`~tilefold.errors.LayoutError` naming the argument (``page_ids``,
``shard_shape``, ``grid``, ``cta`` ...).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum, EnumMeta, IntFlag
from typing import Sequence

import numpy as np

from tilefold.arch import Arch, get_arch
from tilefold.arch.cores import CoreCoord, CoreRange, CoreRangeSet
from tilefold.errors import ArchError, LayoutError
from tilefold.layout.formats import data_format
from tilefold.layout.tiles import tile_shape

MAX_RANK = 8  # tensor_accessor::MAX_RANK of the device headers


class TTNNEnumType(EnumMeta):
    """The class of TT-NN's enums: a member tilefold lacks (``TensorMemoryLayout.ND_SHARDED``) is one
    error at the user's line naming the members it has, not Python's bare ``AttributeError``."""

    def __getattr__(cls, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        from tilefold.caller import user_location
        from tilefold.errors import KernelAttributeError

        raise KernelAttributeError(f"ttnn.{cls.__name__}.{name} is not supported by tilefold yet; it has "
                                   f"{', '.join(cls.__members__)}", user_location())


class BufferType(Enum, metaclass=TTNNEnumType):
    DRAM = "DRAM"
    L1 = "L1"


class ShardOrientation(Enum, metaclass=TTNNEnumType):
    """Order in which shards go to the cores of a grid: row by row or column by column."""

    ROW_MAJOR = "ROW_MAJOR"
    COL_MAJOR = "COL_MAJOR"


class ShardDistributionStrategy(Enum):
    """ROUND_ROBIN_1D deals shards to the cores in order, wrapping around; GRID_2D puts a
    2-D shard grid onto a 2-D core grid (legacy BLOCK sharding)."""

    ROUND_ROBIN_1D = "ROUND_ROBIN_1D"
    GRID_2D = "GRID_2D"


class ArgConfig(IntFlag):
    """CTA[0] of TensorAccessorArgs (``tensor_accessor::ArgConfig``)."""

    NONE = 0
    Sharded = 1
    IsDram = 2
    RuntimeRank = 4
    RuntimeNumBanks = 8
    RuntimeTensorShape = 16
    RuntimeShardShape = 32
    RuntimeBankCoords = 64
    Runtime = 4 | 8 | 16 | 32 | 64


def _enum(enum_type, spec, name: str):
    if isinstance(spec, enum_type):
        return spec
    key = str(spec).strip().upper().replace("-", "_")
    for member in enum_type:
        if key in (member.name.upper(), str(member.value).upper()):
            return member
    raise LayoutError(f"{name} {spec!r} is unknown; use one of {', '.join(m.name for m in enum_type)}")


def buffer_type(spec) -> BufferType:
    return _enum(BufferType, spec, "buffer_type")


def shard_orientation(spec) -> ShardOrientation:
    return _enum(ShardOrientation, spec, "orientation")


def align(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


# --- page sizes -----------------------------------------------------------------------------


def page_size(layout: str, dtype, width: int | None = None, tile=None) -> int:
    """Bytes of one page: a row-major stick is ``width · element_size``; a tile is the
    format's tile size (bf16 32×32: 2048; bfp8_b: 1088)."""
    fmt = data_format(dtype)
    kind = str(getattr(layout, "name", layout)).upper()
    if kind == "TILE":
        t = tile_shape(tile)
        return fmt.tile_size(t.height, t.width)
    if kind == "ROW_MAJOR":
        if width is None or int(width) <= 0:
            raise LayoutError(f"width {width!r} of a row-major page must be a positive number of elements")
        return int(width) * fmt.element_size
    raise LayoutError(f"layout {layout!r} is unknown; use ROW_MAJOR or TILE")


def page_alignment(arch: Arch | str | None, buffer: BufferType | str) -> int:
    """The arch's page alignment for a buffer type (Wormhole DRAM 32, L1 16; Blackhole DRAM 64)."""
    return get_arch(arch).alignment(buffer_type(buffer).value)


def aligned_page_size(size: int, arch: Arch | str | None, buffer: BufferType | str) -> int:
    return align(int(size), page_alignment(arch, buffer))


def num_banks(arch: Arch | str | None, buffer: BufferType | str) -> int:
    """Interleaved banks: one per DRAM channel, or one per worker core for L1."""
    a = get_arch(arch)
    return a.dram_banks if buffer_type(buffer) is BufferType.DRAM else a.num_cores


def _page_ids(page_ids, num_pages: int | None = None) -> np.ndarray:
    ids = np.asarray(page_ids)
    if ids.dtype.kind not in "iu":
        if ids.size == 0:
            ids = ids.astype(np.int64)
        else:
            raise LayoutError(f"page_ids must be integers, got an array of {ids.dtype}")
    ids = ids.astype(np.int64, copy=False)
    if ids.size and ids.min() < 0:
        raise LayoutError(f"page_ids must be non-negative, got {int(ids.min())}")
    if num_pages is not None and ids.size and ids.max() >= num_pages:
        raise LayoutError(f"page id {int(ids.max())} is out of range; the tensor has {num_pages} pages (0..{num_pages - 1})")
    return ids


# --- interleaved -----------------------------------------------------------------------------


def interleaved_page_location(page_ids, num_banks: int, aligned_page_size: int) -> tuple[np.ndarray, np.ndarray]:
    """(bank, byte offset within the buffer's part of the bank) for every page id."""
    if num_banks <= 0:
        raise LayoutError(f"num_banks must be positive, got {num_banks}")
    ids = _page_ids(page_ids)
    return ids % num_banks, (ids // num_banks) * int(aligned_page_size)


def interleaved_page_address(
    page_ids,
    *,
    page_size: int,
    num_banks: int,
    alignment: int,
    bank_base=0,
    offset: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """(bank, address): ``bank_base + (page_id // num_banks) · align(page_size, alignment) +
    offset``; ``bank_base`` is one address or one per bank."""
    bank, within = interleaved_page_location(page_ids, num_banks, align(page_size, alignment))
    base = np.asarray(bank_base, dtype=np.int64)
    if base.ndim:
        if base.shape != (num_banks,):
            raise LayoutError(f"bank_base has {base.shape[0]} entries; give one or {num_banks} (one per bank)")
        base = base[bank]
    return bank, base + within + int(offset)


# --- sharded ---------------------------------------------------------------------------------


def _strides(shape: Sequence[int]) -> np.ndarray:
    strides = np.ones(len(shape), dtype=np.int64)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return strides


def sharded_page_location(
    page_ids, tensor_shape: Sequence[int], shard_shape: Sequence[int], num_banks: int
) -> tuple[np.ndarray, np.ndarray]:
    """(bank, page offset within the bank, in pages) of each page id under ND sharding
    (shapes in pages). Page ids are row-major over ``tensor_shape``."""
    tensor = [int(v) for v in tensor_shape]
    shard = [int(v) for v in shard_shape]
    ids = _page_ids(page_ids, math.prod(tensor))
    grid_strides = _strides([-(-t // s) for t, s in zip(tensor, shard)])
    shard_strides = _strides(shard)
    rest = ids
    shard_id = np.zeros(ids.shape, dtype=np.int64)
    within = np.zeros(ids.shape, dtype=np.int64)
    for i in range(len(tensor) - 1, -1, -1):  # innermost dim first, as the device does
        rest, coord = np.divmod(rest, tensor[i])
        block, local = np.divmod(coord, shard[i])
        shard_id += block * grid_strides[i]
        within += local * shard_strides[i]
    slot, bank = np.divmod(shard_id, num_banks)
    return bank, slot * math.prod(shard) + within


def squeeze_shape_ranks(tensor_shape: Sequence[int], shard_shape: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Merge dims that do not change the page mapping, inner to outer: an outer dim joins
    the current group when every dim of the group is whole (tensor == shard), or when its
    shard extent is 1 and the dim just inside divides evenly. Leading tensor dims beyond the
    shard's rank fold into the outermost group; trailing all-one dims are dropped."""
    tensor = [int(v) for v in tensor_shape]
    shard = [int(v) for v in shard_shape]
    if len(tensor) < len(shard):
        raise LayoutError(f"shard_shape {shard} has more dims than the tensor shape {tensor}")
    tensor_volume, shard_volume = math.prod(tensor), math.prod(shard)
    new_tensor: list[int] = []
    new_shard: list[int] = []
    whole_group = False
    inner_divides = False
    seen_tensor = seen_shard = 1
    for dim in range(-1, -len(shard) - 1, -1):
        t, s = tensor[dim], shard[dim]
        merge = dim < -1 and (whole_group or (s == 1 and inner_divides))
        if merge:
            new_tensor[-1] *= t
            new_shard[-1] *= s
        else:
            new_tensor.append(t)
            new_shard.append(s)
            whole_group = True
        whole_group = whole_group and t == s
        inner_divides = t % s == 0
        seen_tensor *= t
        seen_shard *= s
        if seen_tensor == tensor_volume and seen_shard == shard_volume:
            break
    for dim in range(-len(shard) - 1, -len(tensor) - 1, -1):
        new_tensor[-1] *= tensor[dim]
    return tuple(reversed(new_tensor)), tuple(reversed(new_shard))


def cores_in_order(grid: CoreRangeSet, orientation: ShardOrientation) -> tuple[CoreCoord, ...]:
    """The cores of ``grid`` range by range; within a range row by row (ROW_MAJOR) or
    column by column (COL_MAJOR)."""
    out: list[CoreCoord] = []
    for r in grid.ranges:
        xs = range(r.start.x, r.end.x + 1)
        ys = range(r.start.y, r.end.y + 1)
        if orientation is ShardOrientation.ROW_MAJOR:
            out += [CoreCoord(x, y) for y in ys for x in xs]
        else:
            out += [CoreCoord(x, y) for x in xs for y in ys]
    return tuple(out)


def _core_grid(grid) -> CoreRangeSet:
    if isinstance(grid, CoreRangeSet):
        return grid
    if isinstance(grid, (CoreRange, CoreCoord)):
        return CoreRangeSet(grid)
    try:
        return CoreRangeSet(grid)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, LayoutError):
            raise
        raise LayoutError(f"grid {grid!r} is not a CoreRangeSet, CoreRange or list of core ranges") from None


@dataclass(frozen=True)
class BufferDistributionSpec:
    """Where the pages of a sharded buffer go: tensor and shard shapes in pages and the
    cores (banks) in bank order. Shapes are kept squeezed, as the device sees them."""

    tensor_shape_in_pages: tuple[int, ...]
    shard_shape_in_pages: tuple[int, ...]
    cores: tuple[CoreCoord, ...]

    def __post_init__(self):
        tensor = tuple(int(v) for v in self.tensor_shape_in_pages)
        shard = tuple(int(v) for v in self.shard_shape_in_pages)
        if len(tensor) != len(shard):
            raise LayoutError(
                f"shard_shape {list(shard)} has rank {len(shard)} but the tensor has rank {len(tensor)}; give one "
                f"shard extent per tensor dim"
            )
        if not shard or any(v <= 0 for v in shard):
            raise LayoutError(f"shard_shape {list(shard)} must have positive extents")
        if any(v < 0 for v in tensor):
            raise LayoutError(f"tensor shape {list(tensor)} must not be negative")
        if not self.cores:
            raise LayoutError("grid holds no cores; a sharded buffer needs at least one core")
        tensor, shard = squeeze_shape_ranks(tensor, shard)
        if len(tensor) > MAX_RANK:
            raise LayoutError(f"sharded tensor has rank {len(tensor)} after squeezing; the device supports at most {MAX_RANK}")
        object.__setattr__(self, "tensor_shape_in_pages", tensor)
        object.__setattr__(self, "shard_shape_in_pages", shard)
        object.__setattr__(self, "cores", tuple(CoreCoord(*c) for c in self.cores))

    @classmethod
    def from_shard_spec(
        cls,
        tensor_shape: Sequence[int],
        shard_shape: Sequence[int],
        page_shape: Sequence[int],
        grid,
        orientation: ShardOrientation | str = ShardOrientation.ROW_MAJOR,
        strategy: ShardDistributionStrategy | str = ShardDistributionStrategy.ROUND_ROBIN_1D,
    ) -> "BufferDistributionSpec":
        """From shapes in elements and a page shape (rows, cols): the last two dims are
        counted in pages (rounded up)."""
        orientation = shard_orientation(orientation)
        strategy = _enum(ShardDistributionStrategy, strategy, "strategy")
        grid = _core_grid(grid)
        tensor = [int(v) for v in tensor_shape]
        shard = [int(v) for v in shard_shape]
        if len(shard) != len(tensor):
            raise LayoutError(
                f"shard_shape {shard} has rank {len(shard)} but the tensor shape {tensor} has rank {len(tensor)}"
            )
        if any(v <= 0 for v in shard):
            raise LayoutError(f"shard_shape {shard} must have positive extents")
        ph, pw = (int(v) for v in page_shape)
        for shape in (tensor, shard):
            shape[-1] = -(-shape[-1] // pw)
            if len(shape) >= 2:
                shape[-2] = -(-shape[-2] // ph)
        if strategy is ShardDistributionStrategy.ROUND_ROBIN_1D:
            cores = cores_in_order(grid, orientation)
        else:
            cores = _grid_2d_cores(tensor, shard, grid, orientation)
        return cls(tuple(tensor), tuple(shard), cores)

    # -- derived figures ------------------------------------------------------------------

    @property
    def rank(self) -> int:
        return len(self.tensor_shape_in_pages)

    @property
    def num_banks(self) -> int:
        return len(self.cores)

    @property
    def shard_grid(self) -> tuple[int, ...]:
        return tuple(-(-t // s) for t, s in zip(self.tensor_shape_in_pages, self.shard_shape_in_pages))

    @property
    def num_shards(self) -> int:
        return math.prod(self.shard_grid) if self.num_pages else 0

    @property
    def shard_volume(self) -> int:
        return math.prod(self.shard_shape_in_pages)

    @property
    def num_pages(self) -> int:
        return math.prod(self.tensor_shape_in_pages)

    @property
    def max_shards_per_bank(self) -> int:
        return -(-self.num_shards // self.num_banks)

    @property
    def pages_per_bank(self) -> int:
        """Page slots each bank reserves (partial shards take a full slot)."""
        return self.max_shards_per_bank * self.shard_volume

    @property
    def cores_with_data(self) -> tuple[CoreCoord, ...]:
        return self.cores[: min(self.num_banks, self.num_shards)]

    def shards_per_bank(self) -> np.ndarray:
        n, b = self.num_shards, self.num_banks
        return n // b + (np.arange(b) < n % b)

    def page_location(self, page_ids) -> tuple[np.ndarray, np.ndarray]:
        """(bank index, page offset within the bank) of each page id."""
        return sharded_page_location(page_ids, self.tensor_shape_in_pages, self.shard_shape_in_pages, self.num_banks)


def _grid_2d_cores(
    tensor: Sequence[int], shard: Sequence[int], grid: CoreRangeSet, orientation: ShardOrientation
) -> tuple[CoreCoord, ...]:
    """Legacy BLOCK sharding: shard (i, j) goes to core (x0 + j, y0 + i) (ROW_MAJOR) or
    (x0 + i, y0 + j) (COL_MAJOR) of a single rectangular core grid."""
    if len(shard) > 2:
        raise LayoutError(f"shard_shape {list(shard)} is {len(shard)}-D; a 2-D core grid takes 2-D shards only")
    if len(grid.ranges) != 1:
        raise LayoutError(f"grid {grid} has {len(grid.ranges)} core ranges; block sharding needs one rectangle")
    rng = grid.ranges[0]
    along_w = max(-(-tensor[-1] // shard[-1]), 1)
    along_h = max(-(-tensor[-2] // shard[-2]), 1) if len(shard) == 2 else 1
    need_x, need_y = (along_w, along_h) if orientation is ShardOrientation.ROW_MAJOR else (along_h, along_w)
    width, height = rng.grid_size
    if need_x > width or need_y > height:
        raise LayoutError(
            f"grid {grid} ({width}x{height} cores) is too small for {along_h}x{along_w} shards in "
            f"{orientation.name} orientation (needs {need_x} columns x {need_y} rows); use a bigger grid or a bigger "
            f"shard_shape"
        )
    trimmed = CoreRange(rng.start, (rng.start.x + need_x - 1, rng.start.y + need_y - 1))
    return cores_in_order(CoreRangeSet([trimmed]), orientation)


# --- a buffer's page placement ---------------------------------------------------------------


@dataclass(frozen=True)
class BufferLayout:
    """What a TT-Metalium buffer knows about its pages: buffer type, page size, number of
    pages and, when sharded, the distribution spec. ``page_location`` answers where any page
    lives: (bank index, byte offset from the buffer's base address in that bank)."""

    buffer_type: BufferType
    page_size: int
    num_pages: int
    distribution: BufferDistributionSpec | None = None

    def __post_init__(self):
        object.__setattr__(self, "buffer_type", buffer_type(self.buffer_type))
        if int(self.page_size) <= 0:
            raise LayoutError(f"page_size must be a positive number of bytes, got {self.page_size}")
        if int(self.num_pages) < 0:
            raise LayoutError(f"num_pages must not be negative, got {self.num_pages}")
        if self.distribution is not None and self.distribution.num_pages != self.num_pages:
            raise LayoutError(
                f"num_pages {self.num_pages} does not match the shard distribution's {self.distribution.num_pages} pages"
            )

    @property
    def is_sharded(self) -> bool:
        return self.distribution is not None

    @property
    def is_dram(self) -> bool:
        return self.buffer_type is BufferType.DRAM

    @property
    def size(self) -> int:
        """Packed bytes of the buffer's data (``num_pages · page_size``)."""
        return self.num_pages * self.page_size

    def aligned_page_size(self, arch=None) -> int:
        return aligned_page_size(self.page_size, arch, self.buffer_type)

    def num_banks(self, arch=None) -> int:
        return self.distribution.num_banks if self.is_sharded else num_banks(arch, self.buffer_type)

    def pages_per_bank(self, arch=None) -> int:
        if self.is_sharded:
            return self.distribution.pages_per_bank
        return -(-self.num_pages // self.num_banks(arch))

    def bytes_per_bank(self, arch=None) -> int:
        """Bytes the buffer reserves in each bank."""
        return self.pages_per_bank(arch) * self.aligned_page_size(arch)

    def page_location(self, page_ids, arch=None) -> tuple[np.ndarray, np.ndarray]:
        ids = _page_ids(page_ids, self.num_pages)
        aligned = self.aligned_page_size(arch)
        if self.is_sharded:
            bank, slot = self.distribution.page_location(ids)
            return bank, slot * aligned
        return interleaved_page_location(ids, self.num_banks(arch), aligned)

    def bank_noc_coords(self, arch=None) -> tuple[tuple[int, int], ...]:
        """NOC coordinates of the banks in bank order (sharded buffers only)."""
        if not self.is_sharded:
            raise LayoutError("an interleaved buffer has no bank list; its banks are the arch's DRAM or L1 banks")
        a = get_arch(arch)
        if self.is_dram:
            coords = []
            for c in self.distribution.cores:
                if not 0 <= c.x < a.dram_banks or c.y != 0:
                    raise LayoutError(f"DRAM shard core {c} is not a DRAM bank of {a.board}; use (bank, 0) with bank < {a.dram_banks}")
                coords.append(a.dram_noc_coord(c.x))
            return tuple(coords)
        try:
            return tuple(a.worker_noc_coord(c.x, c.y) for c in self.distribution.cores)
        except ArchError as err:
            raise LayoutError(f"grid: {err}") from None


# --- TensorAccessorArgs --------------------------------------------------------------------


def pack_bank_coords(coords: Sequence[tuple[int, int]]) -> list[int]:
    """Two ``(x << 8) | y`` halves per word, even bank in the low half; an odd count leaves
    the last high half zero."""
    words = []
    for i in range(0, len(coords), 2):
        halves = []
        for x, y in coords[i : i + 2]:
            if not (0 <= x <= 0xFF and 0 <= y <= 0xFF):
                raise LayoutError(f"bank NOC coordinate ({x}, {y}) does not fit 8 bits per axis")
            halves.append((x << 8) | y)
        words.append(halves[0] | (halves[1] << 16 if len(halves) == 2 else 0))
    return words


def unpack_bank_coords(words: Sequence[int], count: int) -> tuple[tuple[int, int], ...]:
    coords = []
    for i in range(count):
        half = (int(words[i // 2]) >> (16 * (i % 2))) & 0xFFFF
        coords.append(((half >> 8) & 0xFF, half & 0xFF))
    return tuple(coords)


def _check_config(config: ArgConfig) -> None:
    if config & ArgConfig.Sharded:
        if config & ArgConfig.RuntimeRank and not (
            config & ArgConfig.RuntimeTensorShape and config & ArgConfig.RuntimeShardShape
        ):
            raise LayoutError(
                "args_config has RuntimeRank without RuntimeTensorShape and RuntimeShardShape; a runtime rank needs "
                "runtime shapes"
            )
        if config & ArgConfig.RuntimeNumBanks and not config & ArgConfig.RuntimeBankCoords:
            raise LayoutError("args_config has RuntimeNumBanks without RuntimeBankCoords; runtime banks need runtime coordinates")


@dataclass(frozen=True)
class TensorAccessorArgs:
    """The host side of ``TensorAccessorArgs(buffer).append_to(cta)``.

    ``args_config`` chooses which parts of a sharded buffer's description go to common
    runtime args (``ArgConfig.Runtime*``); an interleaved buffer always encodes as two words.
    """

    buffer: BufferLayout
    arch: Arch | str | None = None
    args_config: ArgConfig = ArgConfig.NONE

    def __post_init__(self):
        config = ArgConfig(int(self.args_config)) & ArgConfig.Runtime
        if self.buffer.is_sharded:
            config |= ArgConfig.Sharded
        else:
            config = ArgConfig.NONE
        if self.buffer.is_dram:
            config |= ArgConfig.IsDram
        _check_config(config)
        object.__setattr__(self, "args_config", config)

    def _sharded_parts(self) -> list[tuple[ArgConfig, list[int]]]:
        dist = self.buffer.distribution
        return [
            (ArgConfig.RuntimeRank, [dist.rank]),
            (ArgConfig.RuntimeNumBanks, [dist.num_banks]),
            (ArgConfig.RuntimeTensorShape, list(dist.tensor_shape_in_pages)),
            (ArgConfig.RuntimeShardShape, list(dist.shard_shape_in_pages)),
            (ArgConfig.RuntimeBankCoords, pack_bank_coords(self.buffer.bank_noc_coords(self.arch))),
        ]

    def compile_time_args(self) -> list[int]:
        args = [int(self.args_config), self.buffer.aligned_page_size(self.arch)]
        if self.buffer.is_sharded:
            for flag, words in self._sharded_parts():
                if not self.args_config & flag:
                    args += words
        return args

    def common_runtime_args(self) -> list[int]:
        args: list[int] = []
        if self.buffer.is_sharded:
            for flag, words in self._sharded_parts():
                if self.args_config & flag:
                    args += words
        return args

    def append_to(self, compile_time_args: list[int], common_runtime_args: list[int] | None = None) -> None:
        crta = self.common_runtime_args()
        if crta and common_runtime_args is None:
            raise LayoutError("args_config puts parts in common runtime args; pass a list for common_runtime_args")
        compile_time_args += self.compile_time_args()
        if common_runtime_args is not None:
            common_runtime_args += crta


def as_buffer_layout(buffer, arch: Arch | str | None = None) -> BufferLayout:
    """A :class:`BufferLayout` from itself, from anything with a ``buffer_layout(arch)``
    method (a TensorSpec), or from a buffer description with ``buffer_type``, ``page_size``,
    ``num_pages`` and an optional sharded ``memory_config`` whose ``distribution(buffer,
    arch)`` gives the page distribution."""
    if isinstance(buffer, BufferLayout):
        return buffer
    to_layout = getattr(buffer, "buffer_layout", None)
    if callable(to_layout):
        return to_layout(arch)
    try:
        mc = getattr(buffer, "memory_config", None)
        dist = mc.distribution(buffer, arch) if mc is not None and getattr(mc, "is_sharded", False) else None
        return BufferLayout(buffer.buffer_type, buffer.page_size, buffer.num_pages, dist)
    except AttributeError:
        raise LayoutError(
            f"buffer {buffer!r} does not describe a buffer; give a BufferLayout, a TensorSpec or an object with "
            f"buffer_type, page_size and num_pages"
        ) from None


def tensor_accessor_args(
    buffer,
    arch: Arch | str | None = None,
    args_config: ArgConfig = ArgConfig.NONE,
    aligned_page_size: int | None = None,
) -> list[int]:
    """Compile-time argument words for ``TensorAccessorArgs<CTA_OFFSET>()``. ``buffer`` is
    anything :func:`as_buffer_layout` accepts; ``aligned_page_size`` overrides CTA[1] when an
    allocator aligned the pages differently."""
    args = TensorAccessorArgs(as_buffer_layout(buffer, arch), arch, args_config).compile_time_args()
    if aligned_page_size is not None:
        if int(aligned_page_size) < as_buffer_layout(buffer, arch).page_size:
            raise LayoutError(f"aligned_page_size {aligned_page_size} is smaller than the page size")
        args[1] = int(aligned_page_size)
    return args


@dataclass(frozen=True)
class TensorAccessorSpec:
    """What a kernel's ``TensorAccessorArgs`` sees after decoding its arguments."""

    args_config: ArgConfig
    aligned_page_size: int
    rank: int = 0
    num_banks: int = 0
    tensor_shape: tuple[int, ...] = ()
    shard_shape: tuple[int, ...] = ()
    bank_coords: tuple[tuple[int, int], ...] = ()
    num_compile_time_args: int = 2
    num_common_runtime_args: int = 0

    @property
    def is_sharded(self) -> bool:
        return bool(self.args_config & ArgConfig.Sharded)

    @property
    def is_dram(self) -> bool:
        return bool(self.args_config & ArgConfig.IsDram)

    @property
    def num_pages(self) -> int | None:
        return math.prod(self.tensor_shape) if self.is_sharded else None

    def page_location(self, page_ids, arch=None, page_size: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(bank index, byte offset from the buffer base in that bank), as the device computes
        it: interleaved over the arch's DRAM or L1 banks, sharded over the encoded banks.
        ``page_size`` is the accessor's page stride (``TensorAccessor(args, base,
        page_size)``); by default the encoded aligned page size."""
        stride = self.aligned_page_size if page_size is None else int(page_size)
        if self.is_sharded:
            bank, slot = sharded_page_location(page_ids, self.tensor_shape, self.shard_shape, self.num_banks)
            return bank, slot * stride
        banks = num_banks(arch, BufferType.DRAM if self.is_dram else BufferType.L1)
        return interleaved_page_location(page_ids, banks, stride)

    def bank_noc_coord(self, bank, arch=None) -> tuple[np.ndarray, np.ndarray]:
        """NOC (x, y) of bank indices: the encoded coordinates of a sharded accessor, the
        arch's interleaved banks otherwise (see :func:`interleaved_bank_noc_coords`)."""
        if self.is_sharded:
            coords = np.asarray(self.bank_coords, dtype=np.int64).reshape(-1, 2)
        else:
            coords = interleaved_bank_noc_coords(arch, BufferType.DRAM if self.is_dram else BufferType.L1)
        b = np.asarray(bank, dtype=np.int64)
        if b.size and (b.min() < 0 or b.max() >= len(coords)):
            raise LayoutError(f"bank index {int(b.max())} is out of range; the accessor has {len(coords)} banks")
        return coords[b, 0], coords[b, 1]

    def noc_address(self, page_ids, bank_base_address: int, arch=None, offset: int = 0):
        """(x, y, local address) of each page, as ``get_noc_addr(page_id, accessor, offset)``
        computes it: the bank's NOC coordinates and ``base + page offset + offset``."""
        bank, byte_offset = self.page_location(page_ids, arch)
        x, y = self.bank_noc_coord(bank, arch)
        return x, y, int(bank_base_address) + byte_offset + int(offset)


def interleaved_bank_noc_coords(arch, buffer: BufferType | str) -> np.ndarray:
    """NOC (x, y) of every interleaved bank, one row per bank: DRAM bank ``b`` at
    ``Arch.dram_noc_coord(b)``; L1 bank ``b`` on worker core ``(b % grid_x, b // grid_x)``."""
    a = get_arch(arch)
    if buffer_type(buffer) is BufferType.DRAM:
        return np.array([a.dram_noc_coord(b) for b in range(a.dram_banks)], dtype=np.int64)
    gx = a.grid[0]
    return np.array([a.worker_noc_coord(b % gx, b // gx) for b in range(a.num_cores)], dtype=np.int64)


def accessor_page_location(
    spec: TensorAccessorSpec, page_ids, arch=None, page_size: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(bank index, byte offset) of page ids under a decoded accessor spec."""
    return spec.page_location(page_ids, arch, page_size)


def spec_page_location(
    spec: "TensorAccessorSpec | BufferDistributionSpec", page_ids, page_size: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(bank index, byte offset in the bank) of page ids of a sharded buffer, from a decoded
    accessor spec or a distribution spec; ``page_size`` is the byte stride between pages of
    a bank (default: the accessor's aligned page size; required for a distribution spec)."""
    if isinstance(spec, TensorAccessorSpec):
        if not spec.is_sharded:
            raise LayoutError("spec is an interleaved accessor; use its page_location with the arch's banks")
        return spec.page_location(page_ids, None, page_size)
    if isinstance(spec, BufferDistributionSpec):
        if page_size is None:
            raise LayoutError("page_size is needed to turn a distribution spec's page slots into byte offsets")
        bank, slot = spec.page_location(page_ids)
        return bank, slot * int(page_size)
    raise LayoutError(f"spec {spec!r} is neither a TensorAccessorSpec nor a BufferDistributionSpec")


def decode_tensor_accessor_args(
    cta: Sequence[int], offset: int = 0, common_runtime_args: Sequence[int] = (), crta_offset: int = 0
) -> tuple[TensorAccessorSpec, int]:
    """Read ``TensorAccessorArgs<offset>`` from compile-time args (and, for parts flagged
    runtime, from common runtime args at ``crta_offset``). Returns the spec and the number
    of compile-time words it used, so the next accessor starts at ``offset + n``."""
    words = [int(v) for v in cta]

    def cta_word(i: int, what: str) -> int:
        if not 0 <= i < len(words):
            raise LayoutError(
                f"cta has {len(words)} words but TensorAccessorArgs<{offset}> needs word {i} ({what}); append the "
                f"buffer's TensorAccessorArgs at offset {offset}"
            )
        return words[i]

    crta = [int(v) for v in common_runtime_args]

    def crta_word(i: int, what: str) -> int:
        if not 0 <= i < len(crta):
            raise LayoutError(
                f"common_runtime_args has {len(crta)} words but the accessor needs word {i} ({what}) there"
            )
        return crta[i]

    raw = cta_word(offset, "args config")
    if raw & ~int(ArgConfig.Sharded | ArgConfig.IsDram | ArgConfig.Runtime):
        raise LayoutError(f"cta[{offset}] = {raw:#x} is not a TensorAccessorArgs config word (unknown flag bits)")
    config = ArgConfig(raw)
    _check_config(config)
    page = cta_word(offset + 1, "aligned page size")
    if not config & ArgConfig.Sharded:
        return TensorAccessorSpec(config, page), 2

    ct, rt = offset + 2, crta_offset

    def take(flag: ArgConfig, count: int, what: str) -> list[int]:
        nonlocal ct, rt
        if config & flag:
            vals = [crta_word(rt + k, what) for k in range(count)]
            rt += count
        else:
            vals = [cta_word(ct + k, what) for k in range(count)]
            ct += count
        return vals

    (rank,) = take(ArgConfig.RuntimeRank, 1, "rank")
    (nbanks,) = take(ArgConfig.RuntimeNumBanks, 1, "number of banks")
    if not 1 <= rank <= MAX_RANK:
        raise LayoutError(f"encoded rank {rank} is out of range; TensorAccessorArgs supports ranks 1..{MAX_RANK}")
    if nbanks < 1:
        raise LayoutError("encoded number of banks is 0; a sharded buffer needs at least one bank")
    tensor = tuple(take(ArgConfig.RuntimeTensorShape, rank, "tensor shape"))
    shard = tuple(take(ArgConfig.RuntimeShardShape, rank, "shard shape"))
    if any(s <= 0 for s in shard):
        raise LayoutError(f"encoded shard shape {list(shard)} has a zero extent")
    packed = take(ArgConfig.RuntimeBankCoords, (nbanks + 1) // 2, "bank coordinates")
    spec = TensorAccessorSpec(
        config, page, rank, nbanks, tensor, shard, unpack_bank_coords(packed, nbanks),
        num_compile_time_args=ct - offset, num_common_runtime_args=rt - crta_offset,
    )
    return spec, ct - offset


__all__ = [
    "MAX_RANK",
    "BufferType",
    "ShardOrientation",
    "ShardDistributionStrategy",
    "ArgConfig",
    "buffer_type",
    "shard_orientation",
    "align",
    "page_size",
    "page_alignment",
    "aligned_page_size",
    "num_banks",
    "interleaved_page_location",
    "interleaved_page_address",
    "sharded_page_location",
    "spec_page_location",
    "squeeze_shape_ranks",
    "cores_in_order",
    "BufferDistributionSpec",
    "BufferLayout",
    "pack_bank_coords",
    "unpack_bank_coords",
    "TensorAccessorArgs",
    "as_buffer_layout",
    "tensor_accessor_args",
    "TensorAccessorSpec",
    "decode_tensor_accessor_args",
    "interleaved_bank_noc_coords",
    "accessor_page_location",
]
