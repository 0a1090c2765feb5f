"""What the TileLang passes share: buffers by name, op placement, errors at the user's line.

Reads: the kernel function (its parameters, ``tile.alloc`` ops and ``tt.*`` attributes).
Writes: ops, through :func:`insert_before` / :func:`insert_after`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, UnknownLoc
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.builder import Builder
from xdsl.rewriter import InsertPoint

from tilefold.errors import CompileError
from tilefold.ir.tile_types import format_of_memref
from tilefold.ir import tile
from tilefold.passes.builder import LocatedBuilder
from tilefold.ir.locations import source_location
from tilefold.layout.formats import DataFormat
from tilefold.ir.attributes import param_names

TILE = 32


def tiles_for(elements: int) -> int:
    """Tiles along one dim of ``elements`` (a partial tile is a whole one, its rest padding)."""
    return max(1, -(-elements // TILE))


def tile_grid(shape) -> tuple[int, int]:
    """(rows, cols) of tiles of a local buffer: a 2-D (r, c) block is ceil(r/32) x ceil(c/32)
    tiles, element (i, j) in tile (i // 32, j // 32) at (i % 32, j % 32); a vector of n values
    is ceil(n/32) tiles, value k in tile k // 32 (down its first column or along its first row,
    as its layout says)."""
    shape = tuple(shape)
    if len(shape) == 1:
        return tiles_for(shape[0]), 1
    return tiles_for(shape[-2]), tiles_for(shape[-1])


def compile_error(op: Operation | None, message: str) -> CompileError:
    """A CompileError at the user's line of ``op``."""
    return CompileError(message, source_location(op))


@dataclass
class BufferInfo:
    """A global parameter or a local buffer of the kernel."""

    name: str
    shape: tuple[int, ...]
    data_format: DataFormat
    scope: str                 # "global" | "shared" | "fragment"
    value: SSAValue
    op: Operation | None = None  # the tile.alloc of a local buffer

    @property
    def is_global(self) -> bool:
        return self.scope == "global"

    @property
    def tiles(self) -> tuple[int, int]:
        """Shape in tiles (:func:`tile_grid`)."""
        return tile_grid(self.shape)

    @property
    def num_tiles(self) -> int:
        rows, cols = self.tiles
        return rows * cols


def buffers(kernel: func.FuncOp) -> dict[str, BufferInfo]:
    """Every buffer of the kernel by name: parameters first, then ``tile.alloc`` ops."""
    out: dict[str, BufferInfo] = {}
    for name, arg in zip(param_names(kernel), kernel.body.block.args):
        mtype = arg.type
        out[name] = BufferInfo(name, tuple(mtype.get_shape()), format_of_memref(mtype), "global", arg)
    for op in kernel.walk():
        if isinstance(op, tile.AllocOp):
            mtype = op.result.type
            out[op.buffer_name.data] = BufferInfo(op.buffer_name.data, tuple(mtype.get_shape()),
                                                  format_of_memref(mtype), op.scope.data, op.result, op)
    return out


def buffer_name(value: SSAValue, kernel: func.FuncOp) -> str:
    """The name of the buffer a memref value is."""
    if isinstance(value, BlockArgument) and value.owner is kernel.body.block:
        return param_names(kernel)[value.index]
    owner = value.owner
    if isinstance(owner, tile.AllocOp):
        return owner.buffer_name.data
    raise compile_error(owner if isinstance(owner, Operation) else None, "a buffer operand is neither a kernel "
                                                                          "parameter nor a tile.alloc")


def is_global(value: SSAValue, kernel: func.FuncOp) -> bool:
    return isinstance(value, BlockArgument) and value.owner is kernel.body.block


def memref_shape(value: SSAValue) -> tuple[int, ...]:
    mtype = value.type
    assert isinstance(mtype, MemRefType)
    return tuple(mtype.get_shape())


def insert_before(anchor: Operation, op: Operation) -> Operation:
    """Insert ``op`` before ``anchor``; an op without a location takes the anchor's."""
    Builder(InsertPoint.before(anchor)).insert(op)
    if isinstance(op.location, UnknownLoc):
        op.location = anchor.location
    return op


def insert_after(anchor: Operation, op: Operation) -> Operation:
    """Insert ``op`` after ``anchor``; an op without a location takes the anchor's."""
    Builder(InsertPoint.after(anchor)).insert(op)
    if isinstance(op.location, UnknownLoc):
        op.location = anchor.location
    return op


def append(block: Block, op: Operation, loc_from: Operation | None = None) -> Operation:
    block.add_op(op)
    if loc_from is not None:
        op.location = loc_from.location
    return op


def inserter(anchor: Operation | None = None, block: Block | None = None,
             loc_from: Operation | None = None) -> LocatedBuilder:
    """An xDSL Builder placing ops one after another before ``anchor`` (or at the end of
    ``block``), with ``loc_from``'s location (default: the anchor's)."""
    point = InsertPoint.before(anchor) if anchor is not None else InsertPoint.at_end(block)
    return LocatedBuilder(point, loc_from=loc_from or anchor)


def persistent_loop(kernel: func.FuncOp) -> tile.ForOp | None:
    for op in kernel.body.block.ops:
        if isinstance(op, tile.ForOp) and op.kind.data == "persistent":
            return op
    return None


def kernel_op(kernel: func.FuncOp) -> tile.KernelOp | None:
    for op in kernel.body.block.ops:
        if isinstance(op, tile.KernelOp):
            return op
    return None


__all__ = ["TILE", "tiles_for", "tile_grid", "compile_error", "BufferInfo", "buffers", "buffer_name", "is_global", "memref_shape",
           "insert_before", "insert_after", "append", "inserter", "persistent_loop",
           "kernel_op"]
