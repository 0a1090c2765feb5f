"""Where the block of a global↔local ``tile.copy`` lies in the tensor's tiles.

Reads: a ``tile.copy`` with element offsets (one per global dim) and ``dims`` (which global
dim each local dim runs along), the global tensor's shape and device (padded) shape.
Writes: nothing; :func:`copy_geometry` describes the block for tile_pad_tt (how far it
reaches), propagate_tt_layout (its CB geometry), the work partition (which block an
output write is) and lower_shared_to_cb (how to move it).

On the device a tensor is tiled with every dim but the last folded into rows (a 1-D tensor
of n values is one row, (1, n)). A block of a local ``(rows, cols)`` buffer (a vector is one
row) takes local row ``q`` from folded row ``first_row + q * row_step`` and columns
``first_col ..`` of the last dim. Local element (q, c) sits at (q % 32, c % 32) of local tile
(q // 32, c // 32) whatever the block's place in the tensor: when the block's rows start on a
tile row, follow each other and its columns start on a tile, whole tiles move (``aligned``);
otherwise rows move one face row (16 values) at a time.

Blocks whose columns are not whole face rows (a vector of one value per row, a column of a
tensor) move element by element: the face rows holding them are read into a scratch page
and the elements copied in place (:mod:`.lower_cb_intrinsics`).

A vector along a dim other than the last (``T.copy(mask[b, k0:k0 + n, h], mask_local)``) is a
*column*: its elements move one by one too, each from its own row of the tensor.

Errors (:class:`CompileError` at the copy): the rows of a block running along the tensor's
last dim.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.ir import SSAValue

from tilefold.ir import tile
from tilefold.passes.tilelang.affine import Affine, affine_of, affine_range
from tilefold.passes.tilelang.common import TILE, buffer_name, compile_error, is_global, memref_shape, tiles_for

FACE = 16


@dataclass
class CopyGeometry:
    copy: tile.CopyOp
    reading: bool
    glob: SSAValue
    local: SSAValue
    gname: str
    lname: str
    gshape: tuple[int, ...]        # the tensor's logical shape
    local_shape: tuple[int, ...]
    dims: list[int]                # the global dim of each local dim (-1: none)
    extents: list[int]             # elements of the block along each global dim
    rows: int                      # local rows (1 for a vector)
    cols: int                      # local columns
    row_step: int                  # folded tensor rows per local row
    first_row: Affine              # folded tensor row of local row 0
    first_col: Affine              # column of the tensor's last dim of local column 0
    column: bool = False           # a vector along a dim other than the last: local element c is tensor
                                   # element (first_row + c * row_step, first_col)

    @property
    def local_tiles(self) -> tuple[int, int]:
        return tiles_for(self.rows), tiles_for(self.cols)

    def rows_aligned(self) -> bool:
        return (self.row_step == 1 or self.rows == 1) and self.first_row.divisible_by(TILE)

    def cols_aligned(self) -> bool:
        return self.first_col.divisible_by(TILE)

    def whole_rows(self) -> bool:
        """The block's rows fill the tile rows it touches, or the rest of them is padding."""
        folded = math.prod(self.gshape[:-1]) if len(self.gshape) > 1 else 1
        return self.rows % TILE == 0 or (folded <= self.rows and self.first_row.is_constant
                                         and self.first_row.const == 0)

    def whole_cols(self) -> bool:
        return self.cols % TILE == 0 or (self.gshape[-1] <= self.cols and self.first_col.is_constant
                                         and self.first_col.const == 0)

    def face_rows(self) -> bool:
        """Whether the block's columns are whole 16-value face rows (or pieces the padding completes)."""
        if self.column:
            return False
        return self.first_col.divisible_by(FACE) and (self.cols % FACE == 0 or self.whole_cols())

    def moves_whole_tiles(self) -> bool:
        """Whole pages: a read of tile-aligned rows and columns (what lies past the block is read
        too and never used); a write only when it overwrites nothing but the block or padding."""
        if self.column or not (self.rows_aligned() and self.cols_aligned()):
            return False
        return self.reading or (self.whole_rows() and self.whole_cols())


def folded_row_strides(padded: list[int]) -> list[int]:
    """Folded-row stride of each dim but the last of a device shape."""
    rank = len(padded)
    strides = [0] * rank
    step = 1
    for d in range(rank - 2, -1, -1):
        strides[d] = step
        step *= padded[d]
    return strides


def device_shape(shape) -> list[int]:
    """A tensor's shape on the device before padding: a 1-D tensor is one row."""
    shape = list(shape)
    return [1, shape[0]] if len(shape) == 1 else shape


def copy_geometry(copy: tile.CopyOp, kernel, padded: list[int] | None = None) -> CopyGeometry:
    """The geometry of a global↔local copy (``padded``: the tensor's device shape, default
    its logical shape rounded to tiles in the last two dims)."""
    reading = is_global(copy.src, kernel)
    glob, local = (copy.src, copy.dst) if reading else (copy.dst, copy.src)
    gshape = tuple(memref_shape(glob))
    lshape = tuple(memref_shape(local))
    rank = len(gshape)
    dims = copy.local_dims(rank, len(lshape))
    extents = [1] * rank
    for ld, gd in enumerate(dims):
        if gd >= 0:
            extents[gd] = lshape[ld]
    offsets = [affine_of(v) for v in copy.offsets]
    dev = device_shape(gshape)
    if padded is None:
        padded = dev[:-2] + [tiles_for(dev[-2]) * TILE, tiles_for(dev[-1]) * TILE]
    strides = folded_row_strides(list(padded))
    if rank == 1:
        first_row = Affine()
        first_col = offsets[0]
    else:
        first_row = Affine()
        for d in range(rank - 1):
            first_row = first_row + offsets[d].scaled(strides[d])
        first_col = offsets[-1]
    column = False
    if len(lshape) == 1:
        rows, cols = 1, lshape[0]
        row_step = 0
        if dims[0] != rank - 1 and dims[0] >= 0:
            column, row_step = True, strides[dims[0]]
    else:
        rows, cols = lshape
        row_dim = dims[0]
        row_step = strides[row_dim] if row_dim >= 0 and rank > 1 and row_dim < rank - 1 else 0
        if rows > 1 and row_step == 0:
            raise compile_error(copy, f"the rows of {buffer_name(local, kernel)} run along the last dim of "
                                      f"{buffer_name(glob, kernel)}; copies keep the tensor's last dim last")
    return CopyGeometry(copy, reading, glob, local, buffer_name(glob, kernel), buffer_name(local, kernel), gshape,
                        lshape, dims, extents, rows, cols, row_step, first_row, first_col, column)


def reach(geometry: CopyGeometry) -> list[tuple[int, int] | None]:
    """(lowest, highest) element index the block touches in each global dim, when bounded."""
    out = []
    for d, (offset, extent) in enumerate(zip(geometry.copy.offsets, geometry.extents)):
        rng = affine_range(affine_of(offset))
        out.append(None if rng is None else (rng[0], rng[1] + extent - 1))
    return out


def _form(form: Affine) -> str:
    parts = [f"{c}*{v.name_hint or 'x'}" for v, c in form.terms.items()]
    if form.const or not parts:
        parts.append(str(form.const))
    return " + ".join(parts)


__all__ = ["CopyGeometry", "copy_geometry", "reach", "device_shape", "folded_row_strides", "FACE"]
