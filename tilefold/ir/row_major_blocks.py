"""Row-major blocks in L1: the pitch of their rows and the tile-sized pages they take.

Reads: a row-major block's shape in elements. Writes: numbers only. A row-major block sits in L1
with its rows one after another, each starting ROW_PITCH_ELEMENTS-aligned when the block has
several (16 B of bfloat16, 32 B of float32, so every row's NOC transfer lands on an L1-aligned
address and element i sits at the same place in either format), in tile-sized pages: the compute
engine computes on them as tiles of 1024 consecutive elements.
"""

from __future__ import annotations

ROW_PITCH_ELEMENTS = 8
TILE_ELEMENTS = 1024


def row_major_pitch(shape) -> int:
    """Elements from one row of a row-major block of ``shape`` to the next in L1."""
    shape = tuple(shape)
    rows = 1
    for s in shape[:-1]:
        rows *= s
    return shape[-1] if rows == 1 else -(-shape[-1] // ROW_PITCH_ELEMENTS) * ROW_PITCH_ELEMENTS


def row_major_tiles(shape) -> int:
    """Tile-sized pages of a row-major block of ``shape`` (the last one partly don't-care)."""
    shape = tuple(shape)
    rows = 1
    for s in shape[:-1]:
        rows *= s
    return -(-rows * row_major_pitch(shape) // TILE_ELEMENTS)
