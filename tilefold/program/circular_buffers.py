"""Circular buffers of a Program: an index, the cores that have it, and its pages.

Reads: nothing. Writes: nothing. Mirrors ``CircularBufferConfig(total_size,
{{index, format}}).set_page_size(index, page_size)`` created on a core range set; a CB
may be backed by an L1 buffer (``set_globally_allocated_address``), in which case it takes
no extra L1 and starts ``backing_offset`` bytes into the buffer's range on each core.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilefold.arch.cores import CoreRangeSet
from tilefold.errors import SourceLocation
from tilefold.layout.formats import DataFormat


@dataclass
class CircularBuffer:
    index: int
    cores: CoreRangeSet
    page_size: int
    num_pages: int
    data_format: DataFormat
    name: str = ""
    backing_buffer: str | None = None     # an L1 buffer whose address the CB uses
    backing_offset: int = 0               # bytes from that buffer's address to the CB's first page
    defined_at: SourceLocation | None = None
    tile: tuple[int, int] = (32, 32)      # (height, width) of the tiles its pages hold

    def __post_init__(self):
        if self.backing_buffer is None and self.backing_offset:
            raise ValueError("a circular buffer's backing_offset needs a backing_buffer")

    @property
    def total_size(self) -> int:
        return self.page_size * self.num_pages

    def describe(self) -> str:
        label = f" ({self.name})" if self.name else ""
        tiles = "" if self.tile == (32, 32) else f" ({self.tile[0]}x{self.tile[1]} tiles)"
        return (f"CB c_{self.index}{label}: {self.num_pages} pages x {self.page_size} B "
                f"{self.data_format.ttnn_name}{tiles} on {self.cores.num_cores} cores")
