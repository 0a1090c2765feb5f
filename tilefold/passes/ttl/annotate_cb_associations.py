"""``ttl-annotate-cb-associations``: record which circular buffer (and which tile of it) each tile access uses.

Reads: kernels after ``ttl-lower-to-loops`` (tile ops reading ``tensor.extract`` of blocks,
``ttl.pack_tile``, ``ttl.matmul_block``) and every ``ttl.bind_cb``. Writes:

* on each op that reads or writes tiles of a block: ``ttl.cb_index = [..]`` and
  ``ttl.cb_tile_offset = [..]`` (one entry per block operand): the buffer the block lives in and
  the index of the block's first tile relative to the buffer's read or write pointer (non-zero when
  the kernel holds an older block of the same buffer end);
* on the module: ``ttl.circular_buffers``, one ``#ttl.cb_entry`` per buffer — index, name, block
  shape, data format, layout, block count, page size and page count — which the program builder
  creates. A row-major buffer keeps its block's rows in tile-sized pages; a compute kernel binds
  it as the ``(1, n)`` tiles of those pages (its tile view), the same buffer.

Errors: :class:`CompileError` when two kernels bind one index to different buffers.
"""

from __future__ import annotations

import math

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, TensorType, i32
from xdsl.passes import ModulePass

from tilefold.errors import CompileError
from tilefold.ir import ttl
from tilefold.ir.locations import source_location
from tilefold.ir.ttl_metadata import CBEntryAttr
from tilefold.passes.ttl.common import acquisition_of, bind_of, kernels


def cb_geometry(cb_type: ttl.CircularBufferType) -> tuple[int, int, int]:
    """``(page size, pages per block, pages)`` of a dataflow buffer."""
    shape = cb_type.block_shape
    element = cb_type.element_type
    fmt = ttl.data_format_of(cb_type)
    if isinstance(element, ttl.TileType):
        page = fmt.tile_size(element.height.data, element.width.data)
        per_block = math.prod(shape)
    else:           # row-major: the block's rows in tile-sized pages (see ttl.row_major_pitch)
        page = fmt.tile_size()
        per_block = ttl.row_major_tiles(shape)
    return page, per_block, per_block * cb_type.block_count.data


def is_tile_view(tiled: ttl.CircularBufferType, row_major: ttl.CircularBufferType) -> bool:
    """Whether ``tiled`` is how a compute kernel binds the row-major buffer ``row_major``: its
    tile-sized pages as a ``(1, n)`` block of tiles of the same data format."""
    return (isinstance(tiled.element_type, ttl.TileType) and not isinstance(row_major.element_type, ttl.TileType)
            and ttl.data_format_of(tiled) is ttl.data_format_of(row_major)
            and tiled.block_count == row_major.block_count
            and tiled.block_shape == (1, ttl.row_major_tiles(row_major.block_shape)))


def tile_offset(value) -> int:
    """Tiles between the buffer pointer and the first tile of the block ``value`` belongs to."""
    acq = acquisition_of(value)
    if acq is None:
        return 0
    _, per_block, _ = cb_geometry(acq.cb.type)
    return acq.held_before * per_block


def _block_operands(op) -> list:
    return [o for o in op.operands if isinstance(o.type, (TensorType, ttl.TileType)) and bind_of(o) is not None]


class TTLAnnotateCBAssociations(ModulePass):
    """Annotate tile accesses with their circular buffers (see the module docstring)."""

    name = "ttl-annotate-cb-associations"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        table: dict[int, tuple[ttl.BindCBOp, CBEntryAttr]] = {}
        for kernel in kernels(op):
            for inner in kernel.walk():
                if isinstance(inner, ttl.BindCBOp):
                    self._record(table, inner)
                elif isinstance(inner, (ttl.CopyTileOp, ttl.TileOp, ttl.PackTileOp, ttl.MatmulBlockOp, ttl.CopyOp,
                                        ttl.PipeSendOp, ttl.PipeRecvOp)):
                    blocks = _block_operands(inner)
                    if blocks:
                        inner.attributes[ttl.CB_INDEX_ATTR] = ArrayAttr(
                            [IntegerAttr(bind_of(b).index, i32) for b in blocks])
                        inner.attributes[ttl.CB_TILE_OFFSET_ATTR] = ArrayAttr(
                            [IntegerAttr(tile_offset(b), i32) for b in blocks])
        op.attributes[ttl.CB_TABLE_ATTR] = ArrayAttr([entry for _, (_, entry) in sorted(table.items())])

    @staticmethod
    def _record(table: dict, bind: ttl.BindCBOp) -> None:
        cb_type = bind.result.type
        page, per_block, pages = cb_geometry(cb_type)
        element = cb_type.element_type
        entry = CBEntryAttr.from_dict({
            "index": bind.index,
            "name": bind.buffer_name.data if bind.buffer_name is not None else f"c_{bind.index}",
            "shape": list(cb_type.block_shape),
            "data_format": ttl.data_format_of(cb_type).value,
            "layout": "TILE" if isinstance(element, ttl.TileType) else "ROW_MAJOR",
            "block_count": cb_type.block_count.data,
            "page_size": page,
            "block_pages": per_block,
            "num_pages": pages,
            "tile": ([element.height.data, element.width.data] if isinstance(element, ttl.TileType)
                     and (element.height.data, element.width.data) != (32, 32) else None),
        })
        known = table.get(bind.index)
        if known is None:
            table[bind.index] = (bind, entry)
            return
        known_type = known[0].result.type
        if known_type == cb_type:
            return
        if is_tile_view(known_type, cb_type) or is_tile_view(cb_type, known_type):
            if not isinstance(element, ttl.TileType):       # the entry names the buffer as row-major
                table[bind.index] = (bind, entry)
            return
        raise CompileError(f"circular buffer c_{bind.index} is bound as {known_type} in one kernel and as {cb_type} "
                           "in another", source_location(bind))
