"""Tiles and faces: tile shapes, face order, tilize and untilize.

Reads: numpy arrays in row-major (logical) form. Writes: numpy arrays of tiles in face
order, and back.

A tensor of any rank is tilized as B×H×W: every leading dim folds into B, each H×W slice is
padded up to whole tiles on its own, tiles are stored in row-major tile order and the
values of one tile in face order (faces row-major inside the tile, values row-major inside
a face). For a 32×32 tile the value at (r, c) lands at ``face * 256 + (r % 16) * 16 + c % 16``
with ``face = 2 * (r // 16) + c // 16``.

Speed: every face row is 16 contiguous values on both sides of a tilize, so tilize and
untilize move whole face rows as single opaque numpy elements (a ``V{16·itemsize}`` view),
one tile-row band at a time, never single values. Large tensors are split over the CPU's
cores (numpy releases the GIL while it copies).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import prod

import numpy as np

from tilefold.errors import LayoutError
from tilefold.layout.chunks import CHUNK_BYTES, for_each_chunk

FACE_WIDTH = 16


@dataclass(frozen=True)
class TileShape:
    """A tile of ``height`` × ``width`` values, stored as faces of ``face_height`` × 16.

    32×32 has four 16×16 faces (0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right);
    16×32 two side by side; 32×16 two stacked; 16×16 one. Host-only tiny tiles 1/2/4/8×32
    have two faces of 1/2/4/8×16 and 1/2/4/8×16 have one.
    """

    height: int = 32
    width: int = 32

    def __post_init__(self):
        if (self.height, self.width) not in SUPPORTED_TILE_SHAPES:
            shapes = ", ".join(f"{h}x{w}" for h, w in SUPPORTED_TILE_SHAPES)
            raise LayoutError(f"tile shape {self.height}x{self.width} is not supported; use one of {shapes}")

    @property
    def face_height(self) -> int:
        return min(self.height, 16)

    @property
    def face_width(self) -> int:
        return FACE_WIDTH

    @property
    def face_shape(self) -> tuple[int, int]:
        return (self.face_height, FACE_WIDTH)

    @property
    def faces_r(self) -> int:
        """Faces stacked vertically."""
        return self.height // self.face_height

    @property
    def faces_c(self) -> int:
        """Faces side by side."""
        return self.width // FACE_WIDTH

    @property
    def num_faces(self) -> int:
        return self.faces_r * self.faces_c

    @property
    def elements(self) -> int:
        return self.height * self.width

    @property
    def face_rows(self) -> int:
        """16-value face rows per tile (the blocks that share one bfp exponent)."""
        return self.elements // FACE_WIDTH

    @property
    def is_device_tile(self) -> bool:
        """True for the shapes the Tensix unpacker and packer handle (16 or 32 high)."""
        return self.height in (16, 32)

    def __str__(self) -> str:
        return f"{self.height}x{self.width}"


SUPPORTED_TILE_SHAPES = (
    (32, 32), (16, 32), (32, 16), (16, 16),
    (1, 32), (2, 32), (4, 32), (8, 32),
    (1, 16), (2, 16), (4, 16), (8, 16),
)

TILE_32x32 = TileShape(32, 32)


def tile_shape(spec=None) -> TileShape:
    """A :class:`TileShape` from ``None`` (32×32), a TileShape, ``(h, w)`` or ``"HxW"``."""
    if spec is None:
        return TILE_32x32
    if isinstance(spec, TileShape):
        return spec
    if isinstance(spec, str):
        try:
            h, w = (int(v) for v in spec.lower().replace("×", "x").split("x"))
        except ValueError:
            raise LayoutError(f"tile shape {spec!r} is not of the form HxW, e.g. 32x32") from None
        return TileShape(h, w)
    try:
        h, w = spec
    except (TypeError, ValueError):
        raise LayoutError(f"tile shape {spec!r} is not (height, width)") from None
    return TileShape(int(h), int(w))


# --- shapes -----------------------------------------------------------------------------


def _check_shape(shape, name: str = "shape") -> tuple[int, ...]:
    try:
        dims = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise LayoutError(f"{name} {shape!r} is not a sequence of integers") from None
    if any(int(d) != d for d in shape):
        raise LayoutError(f"{name} {tuple(shape)} has non-integer dims")
    if not dims:
        raise LayoutError(f"{name} is empty (rank 0); tiles need rank >= 1 — reshape a scalar to (1,)")
    if any(d < 0 for d in dims):
        raise LayoutError(f"{name} {dims} has a negative dim")
    return dims


def _folded(shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(B, H, W) of a logical shape: leading dims fold into B; rank 1 is one row."""
    if len(shape) == 1:
        return 1, 1, shape[0]
    return prod(shape[:-2]), shape[-2], shape[-1]


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def padded_shape(shape, tile=TILE_32x32) -> tuple[int, ...]:
    """The shape after padding the last two dims up to whole tiles.

    Leading dims are kept. A rank-1 shape is one row, so it comes back as rank 2:
    ``padded_shape((100,)) == (32, 128)``.
    """
    tile = tile_shape(tile)
    dims = _check_shape(shape)
    if len(dims) == 1:
        dims = (1,) + dims
    return dims[:-2] + (_round_up(dims[-2], tile.height), _round_up(dims[-1], tile.width))


def num_tiles(shape, tile=TILE_32x32) -> int:
    """Tiles needed to hold a tensor of ``shape`` (each H×W slice padded on its own)."""
    tile = tile_shape(tile)
    b, h, w = _folded(_check_shape(shape))
    return b * (-(-h // tile.height)) * (-(-w // tile.width))


# --- face order of one tile -------------------------------------------------------------


def face_order_index(tile=TILE_32x32) -> np.ndarray:
    """The permutation row-major → face order of one tile.

    ``tile_values_in_face_order = tile_rows.reshape(-1)[face_order_index(tile)]``: entry
    ``i`` is the row-major offset (``r * width + c``) of the value stored at face-order
    offset ``i``. Read-only.
    """
    return _face_order_index(tile_shape(tile))


def row_major_index(tile=TILE_32x32) -> np.ndarray:
    """The inverse of :func:`face_order_index`: entry ``r * width + c`` is the face-order
    offset of the value at (r, c), so ``tile_rows = tile_faces[row_major_index(tile)]``."""
    return _row_major_index(tile_shape(tile))


@lru_cache(maxsize=None)
def _face_order_index(tile: TileShape) -> np.ndarray:
    rows = np.arange(tile.elements, dtype=np.intp).reshape(1, tile.height, tile.width)
    index = rows_to_tiles(rows, tile)[0]
    index.flags.writeable = False
    return index


@lru_cache(maxsize=None)
def _row_major_index(tile: TileShape) -> np.ndarray:
    index = np.empty(tile.elements, dtype=np.intp)
    index[_face_order_index(tile)] = np.arange(tile.elements, dtype=np.intp)
    index.flags.writeable = False
    return index


def _face_row_view(array: np.ndarray) -> np.ndarray:
    """``array`` (C-contiguous, last dim a multiple of 16) with each run of 16 values as one
    opaque element, so transposing copies move whole face rows."""
    return array.view(np.dtype((np.void, array.dtype.itemsize * FACE_WIDTH)))


def _check_tile_block(tiles, tile: TileShape, name: str) -> np.ndarray:
    tiles = np.asarray(tiles)
    if tiles.ndim != 2 or tiles.shape[1] != tile.elements:
        raise LayoutError(
            f"{name} has shape {tiles.shape}; expected (num_tiles, {tile.elements}) for {tile} tiles"
        )
    _check_dtype(tiles, name)
    return np.ascontiguousarray(tiles)


def tiles_to_rows(tiles, tile=TILE_32x32) -> np.ndarray:
    """Tiles in face order ``(n, H·W)`` → the same tiles as rows ``(n, H, W)``."""
    tile = tile_shape(tile)
    tiles = _check_tile_block(tiles, tile, "tiles")
    n = tiles.shape[0]
    rows = np.empty((n, tile.height, tile.width), dtype=tiles.dtype)
    src = _face_row_view(tiles).reshape(n, tile.faces_r, tile.faces_c, tile.face_height)
    dst = _face_row_view(rows).reshape(n, tile.faces_r, tile.face_height, tile.faces_c)
    np.copyto(dst, src.transpose(0, 1, 3, 2))
    return rows


def rows_to_tiles(rows, tile=TILE_32x32) -> np.ndarray:
    """Tiles as rows ``(n, H, W)`` → the same tiles in face order ``(n, H·W)``."""
    tile = tile_shape(tile)
    rows = np.asarray(rows)
    if rows.ndim != 3 or rows.shape[1:] != (tile.height, tile.width):
        raise LayoutError(f"rows has shape {rows.shape}; expected (n, {tile.height}, {tile.width}) for {tile} tiles")
    _check_dtype(rows, "rows")
    rows = np.ascontiguousarray(rows)
    n = rows.shape[0]
    tiles = np.empty((n, tile.elements), dtype=rows.dtype)
    src = _face_row_view(rows).reshape(n, tile.faces_r, tile.face_height, tile.faces_c)
    dst = _face_row_view(tiles).reshape(n, tile.faces_r, tile.faces_c, tile.face_height)
    np.copyto(dst, src.transpose(0, 1, 3, 2))
    return tiles


def transpose_within_face(tiles, tile=TILE_32x32) -> np.ndarray:
    """Each face of each tile transposed in place of itself (faces keep their slots).

    Needs square 16×16 faces: tile height 16 or 32, otherwise :class:`LayoutError`.
    """
    tile = tile_shape(tile)
    if tile.height not in (16, 32):
        raise LayoutError(
            f"transpose_within_face needs a tile of height 16 or 32; tile {tile} has "
            f"{tile.face_height}x16 faces — use a 16x16, 16x32, 32x16 or 32x32 tile"
        )
    tiles = _check_tile_block(tiles, tile, "tiles")
    faces = tiles.reshape(-1, tile.num_faces, 16, 16)
    return np.ascontiguousarray(faces.transpose(0, 1, 3, 2)).reshape(tiles.shape)


def transpose_of_faces(tiles, tile=TILE_32x32) -> np.ndarray:
    """The face order of each tile transposed: face (i, j) moves to slot (j, i), so for a
    32×32 tile faces 1 and 2 swap. Values inside a face are untouched.

    Needs more than one face in both directions (a 32×32 tile), otherwise :class:`LayoutError`.
    """
    tile = tile_shape(tile)
    if tile.faces_r < 2 or tile.faces_c < 2:
        raise LayoutError(
            f"transpose_of_faces needs more than one face in both directions; tile {tile} has "
            f"{tile.faces_r}x{tile.faces_c} faces — use a 32x32 tile"
        )
    tiles = _check_tile_block(tiles, tile, "tiles")
    face_elems = tile.face_height * FACE_WIDTH
    faces = tiles.reshape(-1, tile.faces_r, tile.faces_c, face_elems)
    return np.ascontiguousarray(faces.transpose(0, 2, 1, 3)).reshape(tiles.shape)


# --- tilize / untilize ------------------------------------------------------------------


def _check_dtype(array: np.ndarray, name: str) -> None:
    """Tiles hold numbers: numpy's bool / int / float / complex kinds or an ml_dtypes float
    (bfloat16 has kind 'V' but its own scalar type)."""
    dtype = array.dtype
    numeric = dtype.kind in "biufc" or (dtype.kind == "V" and dtype.type is not np.void and dtype.names is None)
    if not numeric:
        raise LayoutError(
            f"{name} has dtype {dtype}; tiles hold numbers — use a numeric numpy dtype "
            "(float32, bfloat16, int32, ...)"
        )


def _pad_scalar(pad_value, dtype: np.dtype):
    """``pad_value`` as a scalar of ``dtype``; integers must fit, integer dtypes need whole numbers."""
    value = np.asarray(pad_value)
    fits = value.ndim == 0 and value.dtype.kind in "biuf" or (value.ndim == 0 and value.dtype == dtype)
    if fits and dtype.kind in "biu" and value.dtype.kind not in "biu":
        whole = bool(np.isfinite(value)) and float(value) == int(value)
        fits = whole
        value = np.asarray(int(value)) if whole else value
    if fits and dtype.kind in "iu":
        info = np.iinfo(dtype)
        fits = info.min <= int(value) <= info.max
    if not fits:
        raise LayoutError(
            f"pad_value {pad_value!r} cannot be stored as {dtype}; pass a scalar that {dtype} can hold"
        )
    return value.astype(dtype)


def tilize(x, tile=TILE_32x32, pad_value=0, *, out: np.ndarray | None = None) -> np.ndarray:
    """Row-major tensor → tiles ``(num_tiles, tile.height * tile.width)`` in face order.

    ``x`` has any rank >= 1 (rank 1 is one row) and any numeric dtype, which the result
    keeps. The last two dims are padded up to the tile with ``pad_value``; leading dims
    fold into rows, each H×W slice padded on its own (B×Hp×Wp). Tiles come in row-major
    tile order. ``out``, if given, is a C-contiguous array of that shape and dtype that
    receives the tiles (and is returned).
    """
    tile = tile_shape(tile)
    x = np.asarray(x)
    _check_dtype(x, "x")
    if x.ndim == 0:
        raise LayoutError("x is a scalar (rank 0); tilize needs rank >= 1 — reshape it to (1,)")
    b, h, w = _folded(x.shape)
    tiles_r, tiles_c = -(-h // tile.height), -(-w // tile.width)
    hp, wp = tiles_r * tile.height, tiles_c * tile.width
    count = b * tiles_r * tiles_c
    result = _output(out, (count, tile.elements), x.dtype, "out")
    if count == 0:
        return result
    if (h, w) == (hp, wp):
        src = np.ascontiguousarray(x).reshape(b, h, w)
    else:
        src = np.full((b, hp, wp), _pad_scalar(pad_value, x.dtype), dtype=x.dtype)
        src[:, :h, :w] = x.reshape(b, h, w)
    _permute_face_rows(result, src, b * tiles_r, tile, tiles_c, to_tiles=True)
    return result


def untilize(tiles, shape, tile=TILE_32x32, *, out: np.ndarray | None = None) -> np.ndarray:
    """Tiles in face order ``(num_tiles, tile.height * tile.width)`` → the logical ``shape``.

    The inverse of :func:`tilize`: padding is dropped. ``tiles`` must hold exactly
    ``num_tiles(shape, tile)`` tiles (a flat array of that many tiles' values is accepted
    too). ``out``, if given, is a C-contiguous array of ``shape`` that receives the values.
    """
    tile = tile_shape(tile)
    shape = _check_shape(shape)
    tiles = np.asarray(tiles)
    _check_dtype(tiles, "tiles")
    expected = num_tiles(shape, tile)
    if tiles.ndim == 1 and tiles.size == expected * tile.elements:
        tiles = tiles.reshape(expected, tile.elements)
    if tiles.ndim != 2 or tiles.shape[1] != tile.elements:
        raise LayoutError(
            f"tiles has shape {tiles.shape}; expected ({expected}, {tile.elements}): "
            f"{expected} tiles of {tile} for shape {shape}"
        )
    if tiles.shape[0] != expected:
        raise LayoutError(
            f"tiles holds {tiles.shape[0]} tiles but shape {shape} needs {expected} tiles of {tile}; "
            f"pass exactly {expected} tiles or fix shape"
        )
    tiles = np.ascontiguousarray(tiles)
    result = _output(out, shape, tiles.dtype, "out")
    b, h, w = _folded(shape)
    if expected == 0:
        return result
    tiles_r, tiles_c = -(-h // tile.height), -(-w // tile.width)
    hp, wp = tiles_r * tile.height, tiles_c * tile.width
    aligned = (h, w) == (hp, wp)
    dst = result.reshape(b, h, w) if aligned else np.empty((b, hp, wp), dtype=tiles.dtype)
    _permute_face_rows(dst, tiles, b * tiles_r, tile, tiles_c, to_tiles=False)
    if not aligned:
        result.reshape(b, h, w)[...] = dst[:, :h, :w]
    return result


def _output(out, shape, dtype, name: str) -> np.ndarray:
    shape = tuple(shape)
    if out is None:
        return np.empty(shape, dtype=dtype)
    if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != dtype or not out.flags.c_contiguous:
        got = f"{out.shape} {out.dtype}" if isinstance(out, np.ndarray) else type(out).__name__
        raise LayoutError(f"{name} is {got}; expected a C-contiguous array of shape {shape} and dtype {dtype}")
    return out


# --- parallel copies ----------------------------------------------------------------------

def _permute_face_rows(dst: np.ndarray, src: np.ndarray, bands: int, tile: TileShape, tiles_c: int,
                       to_tiles: bool) -> None:
    """Move the face rows of ``bands`` tile-row bands (``tile.height`` rows × ``tiles_c``
    tiles each) between row-major order and tile order (``to_tiles``) or back.

    Both arrays are C-contiguous with the same dtype. Each band is one gather of whole face
    rows: numpy's ``take`` when a face row is 32 bytes (bfloat16; take has an inlined
    32-byte copy, about twice as fast as a strided copy of 32-byte elements), a transposing
    ``copyto`` of face-row elements otherwise (as fast as take for other sizes, and needs
    no index).
    """
    src_rows = _face_row_view(src).reshape(-1)
    dst_rows = _face_row_view(dst).reshape(-1)
    rows = tiles_c * tile.face_rows                     # face rows per band
    band_bytes = rows * src_rows.dtype.itemsize
    per_call = max(1, _GATHER_ROWS // rows)             # bands per take call
    chunk = max(per_call, CHUNK_BYTES // max(1, band_bytes) // per_call * per_call)
    fr, fh, fc = tile.faces_r, tile.face_height, tile.faces_c
    if src_rows.dtype.itemsize == 32:
        index = _band_gather_index(tile, tiles_c, to_tiles, per_call)

        def work(lo: int, hi: int) -> None:
            for start in range(lo, hi, per_call):
                stop = min(start + per_call, hi)
                np.take(src_rows[start * rows:stop * rows], index[: (stop - start) * rows],
                        out=dst_rows[start * rows:stop * rows], mode="clip")
    else:
        row_major = (bands, fr, fh, tiles_c, fc)
        tile_order = (bands, tiles_c, fr, fc, fh)
        if to_tiles:
            dst_view = dst_rows.reshape(tile_order)
            src_view = src_rows.reshape(row_major).transpose(0, 3, 1, 4, 2)
        else:
            dst_view = dst_rows.reshape(row_major)
            src_view = src_rows.reshape(tile_order).transpose(0, 2, 4, 1, 3)

        def work(lo: int, hi: int) -> None:
            np.copyto(dst_view[lo:hi], src_view[lo:hi])

    for_each_chunk(bands, chunk, work, dst.nbytes)


# Face rows gathered per take call (whole bands; the index is reused across calls).
_GATHER_ROWS = 4096


@lru_cache(maxsize=64)
def _band_gather_index(tile: TileShape, tiles_c: int, to_tiles: bool, bands: int) -> np.ndarray:
    """For ``bands`` consecutive bands: entry j is the source face row of destination face
    row j (tilize: row-major → tile order; untilize: the inverse)."""
    fr, fh, fc = tile.faces_r, tile.face_height, tile.faces_c
    rows = tiles_c * tile.face_rows
    positions = np.arange(rows, dtype=np.intp)
    if to_tiles:      # destination (TC, FR, FC, fh) ← source row-major (FR, fh, TC, FC)
        base = positions.reshape(fr, fh, tiles_c, fc).transpose(2, 0, 3, 1).reshape(-1)
    else:             # destination row-major (FR, fh, TC, FC) ← source (TC, FR, FC, fh)
        base = positions.reshape(tiles_c, fr, fc, fh).transpose(1, 3, 0, 2).reshape(-1)
    index = (base[None, :] + rows * np.arange(bands, dtype=np.intp)[:, None]).reshape(-1)
    index.flags.writeable = False
    return index
