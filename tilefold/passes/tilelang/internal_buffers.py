"""Circular buffers the lowering adds on its own: constant tiles and matmul partials.

Reads: ``tt.cb.*``. Writes: a ``tile.alloc`` at the top of the kernel and its ``tt.cb.<name>``
(with a free index, compute-internal range first); for a constant tile also the
``tile.fill`` that makes it, before the persistent loop, so it is computed once per core.
"""

from __future__ import annotations

from xdsl.dialects import func

from tilefold.ir.tile_types import memref_type
from tilefold.arch import ARCHS
from tilefold.ir import tile
from tilefold.layout.formats import DataFormat
from tilefold.ir.attributes import cb_entries, set_attr
from tilefold.passes.tilelang.common import TILE, compile_error, insert_before, persistent_loop

NUM_CBS = min(a.max_circular_buffers for a in ARCHS.values())     # the circular buffers every device has


def free_index(kernel: func.FuncOp, start: int = 24) -> int:
    used = {cb["index"] for cb in cb_entries(kernel).values() if "index" in cb}
    for index in list(range(start, NUM_CBS)) + list(range(0, start)):
        if index not in used:
            return index
    raise compile_error(kernel, f"the kernel needs more than {NUM_CBS} circular buffers; use fewer local buffers")


def add_buffer(kernel: func.FuncOp, name: str, shape: tuple[int, int], fmt: DataFormat, pages: int,
               producer: str = "compute", consumer: str = "compute") -> tile.AllocOp:
    """A new compute-internal buffer with its CB."""
    loop = persistent_loop(kernel)
    alloc = tile.AllocOp(name, "fragment", memref_type(shape, fmt, "fragment"))
    alloc.result.name_hint = name
    insert_before(loop, alloc)
    add_cb(kernel, name, shape, fmt, pages, producer, consumer)
    return alloc


def add_cb(kernel: func.FuncOp, name: str, shape: tuple[int, int], fmt: DataFormat, pages: int,
           producer: str, consumer: str) -> int:
    """The ``tt.cb.<name>`` entry of a new CB (no buffer in the kernel's body: after the kernel is
    split, only the entries remain); its index."""
    index = free_index(kernel)
    set_attr(kernel, f"tt.cb.{name}", {
        "page_size": fmt.tile_size(TILE, TILE), "depth": pages, "data_format": fmt.value,
        "block_tiles": [shape[0] // TILE, shape[1] // TILE], "index": index, "producer": producer,
        "consumer": consumer, "scope": "fragment"})
    return index


def constant_tile(kernel: func.FuncOp, name: str, value: float, fmt: DataFormat = DataFormat.Float16_b) -> str:
    """A one-tile CB holding ``value`` everywhere (made once, before the persistent loop)."""
    if f"tt.cb.{name}" in kernel.attributes:
        return name
    alloc = add_buffer(kernel, name, (TILE, TILE), fmt, 1)
    insert_before(persistent_loop(kernel), tile.FillOp(alloc.result, value))
    return name


INDEX_TILES = ("tile_row_index", "tile_col_index")


def scratch_for(kernel: func.FuncOp, thread: str) -> str:
    """A one-page CB a data-movement kernel uses as scratch memory for the face rows it moves
    element by element (it reserves the page at its start and frees it at its end)."""
    name = f"{thread}_scratch"
    if f"tt.cb.{name}" not in kernel.attributes:
        if persistent_loop(kernel) is None:        # split already: the entry is all that is left
            add_cb(kernel, name, (TILE, TILE), DataFormat.Float32, 1, producer=thread, consumer=thread)
        else:
            add_buffer(kernel, name, (TILE, TILE), DataFormat.Float32, 1, producer=thread, consumer=thread)
    return name


def index_tile(kernel: func.FuncOp, dim: int) -> str:
    """A one-tile CB whose elements hold their row (``dim`` 0) or column (1) number in the tile
    (made once, before the persistent loop)."""
    name = INDEX_TILES[dim]
    if f"tt.cb.{name}" in kernel.attributes:
        return name
    alloc = add_buffer(kernel, name, (TILE, TILE), DataFormat.Float16_b, 1)
    insert_before(persistent_loop(kernel), tile.IotaOp(alloc.result, dim))
    return name
