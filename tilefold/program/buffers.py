"""Device buffers of a Program: DRAM or L1, interleaved or sharded, paged.

Reads: nothing. Writes: nothing. A :class:`Buffer` describes a tensor on the device: its
logical shape, data format, layout (TILE pages of one tile, ROW_MAJOR pages of one row),
buffer type, page size and page count, and how pages are distributed (interleaved over
banks, or sharded by a TT-NN memory config). ``role`` says whether the host writes it
before the run (input), reads it after (output), both, or neither (scratch).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tilefold.errors import ProgramError, SourceLocation
from tilefold.layout.formats import DataFormat, data_format
from tilefold.layout.tiles import TileShape, tile_shape
from tilefold.program.args import BufferAddress, TensorAccessorArgsRef

LAYOUTS = ("TILE", "ROW_MAJOR")
BUFFER_TYPES = ("DRAM", "L1")
# scratch: device data only; arena: an L1 area circular buffers take turns in (no data of its own)
ROLES = ("input", "output", "inout", "scratch", "arena")


def _padded_2d(shape: tuple[int, ...], tile: TileShape, layout: str) -> tuple[int, int]:
    """(rows, width) after folding leading dims into rows and padding to the tile (TILE)."""
    if len(shape) == 0:
        raise ProgramError("a buffer needs a shape of rank >= 1")
    w = shape[-1]
    h = shape[-2] if len(shape) >= 2 else 1
    batch = math.prod(shape[:-2]) if len(shape) > 2 else 1
    if layout == "TILE":
        h = -(-h // tile.height) * tile.height
        w = -(-w // tile.width) * tile.width
    return batch * h, w


@dataclass
class Buffer:
    name: str
    shape: tuple[int, ...]
    data_format: DataFormat
    layout: str = "TILE"
    buffer_type: str = "DRAM"
    tile: TileShape = field(default_factory=TileShape)
    role: str = "input"
    memory_config: Any = None          # a TT-NN MemoryConfig for sharded buffers; None = interleaved
    page_size_override: int | None = None
    defined_at: SourceLocation | None = None
    logical_shape: tuple[int, ...] | None = None   # the tensor inside a padded ``shape`` (None: all of it)

    def __post_init__(self):
        self.shape = tuple(int(s) for s in self.shape)
        self.data_format = data_format(self.data_format)
        self.tile = tile_shape(self.tile)
        self.layout = str(self.layout).upper()
        self.buffer_type = str(self.buffer_type).upper()
        if self.layout not in LAYOUTS:
            raise ProgramError(f"buffer {self.name!r}: layout must be TILE or ROW_MAJOR, not {self.layout!r}",
                               self.defined_at)
        if self.buffer_type not in BUFFER_TYPES:
            raise ProgramError(f"buffer {self.name!r}: buffer_type must be DRAM or L1, not {self.buffer_type!r}",
                               self.defined_at)
        if self.role not in ROLES:
            raise ProgramError(f"buffer {self.name!r}: role must be one of {', '.join(ROLES)}", self.defined_at)
        if self.layout == "ROW_MAJOR" and self.data_format.is_block_float:
            raise ProgramError(f"buffer {self.name!r}: {self.data_format.ttnn_name} needs TILE layout",
                               self.defined_at)

    # -- geometry ---------------------------------------------------------------------

    @property
    def padded_2d(self) -> tuple[int, int]:
        return _padded_2d(self.shape, self.tile, self.layout)

    @property
    def page_size(self) -> int:
        if self.page_size_override is not None:
            return self.page_size_override
        if self.layout == "TILE":
            return self.data_format.tile_size(self.tile.height, self.tile.width)
        return self.padded_2d[1] * self.data_format.element_size

    @property
    def num_pages(self) -> int:
        rows, width = self.padded_2d
        if self.layout == "TILE":
            return (rows // self.tile.height) * (width // self.tile.width)
        return rows * width * self.data_format.element_size // self.page_size

    @property
    def size(self) -> int:
        return self.page_size * self.num_pages

    def logical_pages(self):
        """A bool per page: whether it holds any element of the logical tensor (TILE layout, N-D
        shapes folded into rows); None when every page does."""
        logical = self.logical_shape
        if logical is None or tuple(logical) == self.shape or self.layout != "TILE":
            return None
        rows = np.indices(self.shape[:-1]).reshape(len(self.shape) - 1, -1) if len(self.shape) > 1 else \
            np.zeros((0, 1), np.int64)
        row_in = np.all(rows < np.asarray(logical[:-1])[:, None], axis=0)
        height, width = self.tile.height, self.tile.width
        tile_rows = -(-row_in.size // height)
        row_in = np.resize(np.r_[row_in, np.zeros(tile_rows * height - row_in.size, bool)], (tile_rows, height))
        col_in = np.arange(-(-self.shape[-1] // width)) * width < logical[-1]
        return (row_in.any(axis=1)[:, None] & col_in[None, :]).ravel()

    @property
    def is_sharded(self) -> bool:
        return self.memory_config is not None and getattr(self.memory_config, "is_sharded", False)

    # -- symbolic handles for argument lists --------------------------------------------

    @property
    def address(self) -> BufferAddress:
        """The buffer's device address, for runtime argument lists."""
        return BufferAddress(self.name)

    @property
    def accessor_args(self) -> TensorAccessorArgsRef:
        """The buffer's TensorAccessorArgs, for compile-time argument lists."""
        return TensorAccessorArgsRef(self.name)

    def buffer_layout(self, arch=None):
        """The page placement of this buffer as :mod:`tilefold.layout.addressing` describes it
        (checked against ``arch``'s grid and banks when given)."""
        from tilefold.layout.addressing import BufferLayout

        distribution = self.memory_config.distribution(self, arch) if self.is_sharded else None
        return BufferLayout(self.buffer_type, self.page_size, self.num_pages, distribution)

    def describe(self) -> str:
        dims = "x".join(str(s) for s in self.shape)
        kind = "sharded" if self.is_sharded else "interleaved"
        return (f"{self.name}: {dims} {self.data_format.ttnn_name} {self.layout} {kind} {self.buffer_type}, "
                f"{self.num_pages} pages of {self.page_size} B")
