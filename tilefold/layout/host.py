"""Host ↔ device transfers of a tensor as TT-NN does them: the pages a buffer holds.

Reads: a host tensor (numpy array of any rank >= 1) or the pages read back from a device
buffer. Writes: pages ``(num_pages, page_size)`` of uint8 device bytes, or the host tensor.

* ``TILE`` layout: the tensor is tilized (leading dims fold into rows, each H×W slice is
  padded to whole tiles with ``pad_value``) and each tile is packed in the data format;
  one page is one tile (2048 bytes for a 32×32 bfloat16 tile, 1088 for bfloat8_b).
* ``ROW_MAJOR`` layout: one page per row ("stick") of the last dim, leading dims folded;
  a page holds the row's values in the format (bfloat16 with round-to-nearest-even).
  Block-float formats have no row-major form.

Values come back as float32 for the float formats (bfloat16 and the block floats are
exact in float32) and in the integer dtype for integer formats.
"""

from __future__ import annotations

from math import prod

import ml_dtypes
import numpy as np

from tilefold.errors import LayoutError
from tilefold.layout.formats import (
    DataFormat,
    as_float32,
    data_format,
    from_bytes,
    pack_tiles,
    storage_values,
    unpack_tiles,
)
from tilefold.layout.tiles import TILE_32x32, num_tiles, tile_shape, tilize, untilize

LAYOUTS = ("TILE", "ROW_MAJOR")


def tensor_layout(layout) -> str:
    """``"TILE"`` or ``"ROW_MAJOR"`` from any spelling (``"tile"``, ``"ttnn.ROW_MAJOR_LAYOUT"``, ...)."""
    text = str(getattr(layout, "name", layout)).strip().upper().removeprefix("TTNN.").removeprefix("LAYOUT.")
    text = text.removesuffix("_LAYOUT")
    if text not in LAYOUTS:
        raise LayoutError(f"layout {layout!r} is not a tensor layout; use 'TILE' or 'ROW_MAJOR'")
    return text


def _check_rank(shape, name: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise LayoutError(f"{name} {shape!r} is not a sequence of integers") from None
    if any(d < 0 for d in dims):
        raise LayoutError(f"{name} {dims} has a negative dim")
    if not dims:
        raise LayoutError(f"{name} is a scalar (rank 0); device tensors need rank >= 1 — reshape it to (1,)")
    return dims


def page_size(shape, fmt, layout="TILE", tile=TILE_32x32) -> int:
    """Bytes of one page: a tile of ``fmt`` (TILE) or one row of the last dim (ROW_MAJOR)."""
    fmt = data_format(fmt)
    layout = tensor_layout(layout)
    tile = tile_shape(tile)
    if layout == "TILE":
        return fmt.tile_size(tile.height, tile.width)
    _reject_block_float_rows(fmt)
    return _check_rank(shape, "shape")[-1] * fmt.element_size


def num_pages(shape, layout="TILE", tile=TILE_32x32) -> int:
    """Pages of a tensor of ``shape``: its tiles (TILE) or its rows (ROW_MAJOR)."""
    layout = tensor_layout(layout)
    dims = _check_rank(shape, "shape")
    if layout == "TILE":
        return num_tiles(dims, tile)
    return prod(dims[:-1])


def _reject_block_float_rows(fmt: DataFormat) -> None:
    if fmt.is_block_float:
        raise LayoutError(
            f"fmt {fmt.ttnn_name} exists only in tile layout; use layout='TILE' or a row-major format "
            "(bfloat16, float32, ...)"
        )


def _host_array(x, name: str) -> np.ndarray:
    try:
        array = np.asarray(x)
    except (TypeError, ValueError, RuntimeError) as err:
        raise LayoutError(f"{name} is not array-like ({type(x).__name__}): {err}; pass a numpy array") from None
    if array.dtype.hasobject or array.dtype.kind in "USMmc":
        raise LayoutError(f"{name} has dtype {array.dtype}; device tensors hold real numbers — pass a numeric array")
    if array.ndim == 0:
        raise LayoutError(f"{name} is a scalar (rank 0); device tensors need rank >= 1 — reshape it to (1,)")
    return array


def to_device_pages(x, fmt, layout="TILE", tile=TILE_32x32, pad_value=0) -> np.ndarray:
    """A host tensor → the pages of its device buffer, ``(num_pages, page_size)`` uint8.

    ``fmt`` is any :func:`~tilefold.layout.formats.data_format` spelling; ``layout`` is
    ``"TILE"`` (one page per tile, padding filled with ``pad_value``) or ``"ROW_MAJOR"``
    (one page per row of the last dim).
    """
    fmt = data_format(fmt)
    layout = tensor_layout(layout)
    tile = tile_shape(tile)
    x = _host_array(x, "x")
    if layout == "ROW_MAJOR":
        _reject_block_float_rows(fmt)
        stored = np.ascontiguousarray(storage_values(x, fmt, "x"))
        return stored.reshape(-1).view(np.uint8).reshape(prod(x.shape[:-1]), x.shape[-1] * fmt.element_size)
    pad = np.asarray(pad_value)
    if pad.ndim != 0:
        raise LayoutError(f"pad_value {pad_value!r} is not a scalar; pass one number")
    if fmt.is_block_float:
        pad_float = as_float32(pad.reshape(1), "pad_value")[0]
        return pack_tiles(tilize(as_float32(x, "x"), tile, pad_value=pad_float), fmt, tile)
    stored = storage_values(x, fmt, "x")
    pad_stored = storage_values(pad.reshape(1), fmt, "pad_value")[0]
    tiles = tilize(stored, tile, pad_value=pad_stored)
    return tiles.view(np.uint8).reshape(tiles.shape[0], fmt.tile_size(tile.height, tile.width))


def from_device_pages(pages, shape, fmt, layout="TILE", tile=TILE_32x32, *, native: bool = False) -> np.ndarray:
    """The pages of a device buffer → the host tensor of ``shape``.

    The inverse of :func:`to_device_pages`: pages are unpacked, untilized and the padding
    dropped. Returns float32 for float formats, the integer dtype for integer formats; with
    ``native``, a bfloat16 buffer comes back as ``ml_dtypes.bfloat16`` (its stored values,
    not widened). ``pages`` is ``(num_pages, page_size)`` uint8 (or the same bytes flat).
    """
    fmt = data_format(fmt)
    layout = tensor_layout(layout)
    tile = tile_shape(tile)
    dims = _check_rank(shape, "shape")
    if layout == "ROW_MAJOR":
        _reject_block_float_rows(fmt)
    count = num_pages(dims, layout, tile)
    size = page_size(dims, fmt, layout, tile)
    array = np.asarray(pages)
    if array.dtype != np.uint8:
        raise LayoutError(f"pages has dtype {array.dtype}; device pages are uint8 bytes — pass pages.view(np.uint8)")
    if array.size != count * size:
        raise LayoutError(
            f"pages holds {array.size} bytes (shape {array.shape}) but a {layout} {fmt.ttnn_name} tensor of "
            f"shape {dims} is {count} pages of {size} bytes ({count * size} bytes)"
        )
    array = np.ascontiguousarray(array).reshape(count, size)
    if layout == "ROW_MAJOR":
        if native and fmt is DataFormat.Float16_b:
            return array.reshape(-1)[:prod(dims) * 2].view(ml_dtypes.bfloat16).reshape(dims).copy()
        return from_bytes(array, fmt, prod(dims)).reshape(dims)
    if fmt is DataFormat.Float16_b:      # rearrange the 2-byte values, then widen: half the bytes moved
        values = untilize(array.view(ml_dtypes.bfloat16), dims, tile)
        return values if native else values.astype(np.float32)
    values = unpack_tiles(array, fmt, tile)
    return untilize(values, dims, tile)
