"""Tile numerics of the simulated Tensix engine: unpack, DST precision, FPU / SFPU math, pack.

Reads: tile bytes from L1 (one row of bytes per lane and tile). Writes: float32 DST values
and packed tile bytes. All functions work on whole blocks (lanes × tiles × 1024 values);
nothing loops over elements in Python.

The model, as the hardware does it:

* **Unpack** to float32: bfloat16 and bfloat8_b / bfloat4_b values are exact in float32.
  The FPU's source registers (SRCA / SRCB) hold 19-bit TF32 (sign, 8-bit exponent, 10-bit
  mantissa): float32 tiles unpacked into them lose the low 13 mantissa bits (truncated).
  Every FPU op reads through them, and so do ``copy_tile``, ``transpose_wh_tile``,
  ``tilize_block`` and ``untilize_block`` (a datacopy from SRCA to DST) unless the CB is
  unpacked straight to DST (``UnpackToDestFp32`` in ``ComputeConfig.unpack_to_dest_mode``).
* **DST precision**: with ``fp32_dest_acc_en`` DST holds float32; otherwise every value
  written to DST is rounded to bfloat16 (round to nearest even) — including each matmul
  accumulation step, so K-loops accumulate in bfloat16 unless fp32 accumulation is on.
* **Math fidelity** (matmul, ``mul_tiles``): the multiplier is 5 × 7 bits, so a product of
  source-register values takes up to four phases (see :func:`fidelity_product`). SrcA's
  mantissa (with its hidden bit) is split into a high slice (hidden bit + 4 MSBs) and a low
  slice (the next 5 bits), SrcB's into a high slice (hidden bit + 6 MSBs) and a low slice
  (the rest, 4 bits of TF32). LoFi multiplies high A × high B; HiFi2 adds low A × high B;
  HiFi3 adds high A × low B; HiFi4 adds low A × low B. The phase products of one multiply
  are summed exactly before they reach DST. Matmul feeds in1 to SrcA and in0 to SrcB;
  element-wise ops feed in0 to SrcA and in1 to SrcB.
* **SFPU** functions compute what their row of :mod:`tilefold.ir.sfpu` says, on float32 DST values.
* **Pack** from DST to the CB's format: bfloat16 with round to nearest even, float32 as is,
  bfloat8_b / bfloat4_b with the shared-exponent algorithm of :mod:`tilefold.layout.formats`.
* Values inside a 32×32 tile are kept in face order (the device byte order) except where
  an op needs rows (matmul, transpose, reduce, broadcasts).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from tilefold.ir.sfpu import sfpu_values
from tilefold.layout import formats as _formats
from tilefold.layout.formats import DataFormat
from tilefold.sim import two_threads

TILE_ELEMS = 1024
BF16 = _BF16 = ml_dtypes.bfloat16


_VALUE_DTYPES = {DataFormat.Float16_b: np.dtype(_BF16), DataFormat.Float32: np.dtype(np.float32),
                 DataFormat.Float16: np.dtype(np.float16)}


def tile_value_dtype(fmt: DataFormat):
    """The numpy dtype a tile's bytes are an array of (bfloat16, float32), or None when the
    values must be decoded (block floats, integers)."""
    return _VALUE_DTYPES.get(fmt)


def _cast(values: np.ndarray, dtype) -> np.ndarray:
    """``values`` as a C-contiguous array of ``dtype`` (itself when it is one already); a large
    stack of tiles is cast in two halves at once (:func:`~tilefold.sim.two_threads.in_halves`)."""
    if values.dtype == dtype and values.flags.c_contiguous:
        return values
    if values.ndim < 2 or values.size < two_threads.MIN_VALUES:
        return np.ascontiguousarray(values, dtype=dtype)
    out = np.empty(values.shape, dtype)
    two_threads.in_halves(lambda part: np.copyto(out[part], values[part], casting="unsafe"), len(values),
                          values.size)
    return out


def unpack(raw: np.ndarray, fmt: DataFormat) -> np.ndarray:
    """Tile bytes (..., tile_size) → float32 values (..., 1024) in face order."""
    lead = raw.shape[:-1]
    if fmt is DataFormat.Float16_b:
        return _cast(np.ascontiguousarray(raw).view(_BF16), np.float32).reshape(*lead, TILE_ELEMS)
    if fmt is DataFormat.Float32:
        return np.ascontiguousarray(raw).view(np.float32).reshape(*lead, TILE_ELEMS).copy()
    if fmt.is_block_float:
        flat = raw.reshape(-1, raw.shape[-1])
        return _formats.unpack_tiles(flat, fmt).reshape(*lead, TILE_ELEMS)
    if fmt in (DataFormat.UInt32, DataFormat.Int32, DataFormat.Float16):
        return np.ascontiguousarray(raw).view(fmt.numpy_dtype).astype(np.float32).reshape(*lead, TILE_ELEMS)
    if fmt is DataFormat.UInt16:
        return np.ascontiguousarray(raw).view(np.uint16).astype(np.float32).reshape(*lead, TILE_ELEMS)
    return np.ascontiguousarray(raw).astype(np.float32).reshape(*lead, TILE_ELEMS)


def pack(values: np.ndarray, fmt: DataFormat) -> np.ndarray:
    """float32 (or bfloat16) values (..., 1024) → tile bytes (..., tile_size) of ``fmt``; int64
    values are integers DST holds exactly, written as they are (clipped to an integer format's
    range)."""
    lead = values.shape[:-1]
    if values.dtype == np.int64 and not fmt.is_float:      # integers DST holds exactly
        info = np.iinfo(fmt.numpy_dtype)
        return np.clip(values, info.min, info.max).astype(fmt.numpy_dtype).view(np.uint8).reshape(*lead, -1)
    if values.dtype == np.int64:
        values = values.astype(np.float32)
    if fmt is DataFormat.Float16_b:
        return _cast(values, _BF16).view(np.uint8).reshape(*lead, 2 * TILE_ELEMS)
    if values.dtype != np.float32:
        values = values.astype(np.float32)
    if fmt is DataFormat.Float32:
        return np.ascontiguousarray(values, dtype=np.float32).view(np.uint8).reshape(*lead, 4 * TILE_ELEMS)
    if fmt is DataFormat.Float16:
        return np.ascontiguousarray(values, dtype=np.float16).view(np.uint8).reshape(*lead, 2 * TILE_ELEMS)
    if fmt.is_block_float:
        flat = np.ascontiguousarray(values, dtype=np.float32).reshape(-1, TILE_ELEMS)
        raw = _formats.pack_tiles(flat, fmt)
        return raw.reshape(*lead, raw.shape[-1])
    if fmt in (DataFormat.UInt32, DataFormat.Int32, DataFormat.UInt16, DataFormat.UInt8):
        info = np.iinfo(fmt.numpy_dtype)
        # in float64: float32 cannot hold the largest uint32 / int32, which would wrap around
        ints = np.clip(np.rint(values.astype(np.float64)), info.min, info.max).astype(fmt.numpy_dtype)
        return ints.view(np.uint8).reshape(*lead, -1)
    raise ValueError(f"cannot pack to {fmt}")


def _face_bytes(tile, fmt: DataFormat) -> tuple[int, int]:
    """Bytes of one face of ``tile`` (a :class:`TileShape`) and of a 16x16 face, in ``fmt``."""
    elem = fmt.tile_size() // TILE_ELEMS
    return tile.face_height * 16 * elem, 256 * elem


def whole_tile_bytes(raw: np.ndarray, tile, fmt: DataFormat) -> np.ndarray:
    """Bytes (..., size) of tiles of a smaller ``tile`` shape (a :class:`TileShape`) as the unpacker
    lays them into DST: face ``k`` of the small tile fills the first rows of DST face ``k`` (16x32:
    faces 0 and 1; 32x16: 0 and 1; 16x16: 0), the rest of the 32x32 tile zero. Element-wise math
    on such a tile computes the small tile's elements; :func:`small_tile_bytes` packs them back."""
    face, whole_face = _face_bytes(tile, fmt)
    out = np.zeros((*raw.shape[:-1], 4, whole_face), np.uint8)
    out[..., :tile.num_faces, :face] = raw.reshape(*raw.shape[:-1], tile.num_faces, face)
    return out.reshape(*raw.shape[:-1], 4 * whole_face)


def small_tile_bytes(raw: np.ndarray, tile, fmt: DataFormat) -> np.ndarray:
    """The bytes (..., size) of 32x32 tiles ``raw`` the packer writes into tiles of the smaller
    ``tile`` shape: the first rows of each of its faces (:func:`whole_tile_bytes`'s inverse)."""
    face, whole_face = _face_bytes(tile, fmt)
    faces = raw.reshape(*raw.shape[:-1], 4, whole_face)[..., :tile.num_faces, :face]
    return np.ascontiguousarray(faces).reshape(*raw.shape[:-1], tile.num_faces * face)


def round_bf16(values: np.ndarray) -> np.ndarray:
    """Round float32 values to bfloat16 precision (nearest even), kept as float32."""
    return values.astype(_BF16).astype(np.float32)


def round_dst(values: np.ndarray, fp32_dest: bool) -> np.ndarray:
    return values.astype(np.float32, copy=False) if fp32_dest else round_bf16(values)


TF32_DROPPED = np.uint32(~np.uint32((1 << 13) - 1))


def to_tf32(values: np.ndarray) -> np.ndarray:
    """float32 values as a 19-bit source register holds them: the low 13 mantissa bits dropped."""
    return (np.ascontiguousarray(values, dtype=np.float32).view(np.uint32) & TF32_DROPPED).view(np.float32)


def source_register(values: np.ndarray, fmt: DataFormat) -> np.ndarray:
    """Values as the FPU's source registers hold them (float32 inputs become TF32)."""
    return to_tf32(values) if fmt is DataFormat.Float32 else values


# The multiplier's slices of a source-register value, as float32 bit masks (sign and
# exponent kept): SrcA high = hidden bit + mantissa bits 1-4, SrcA high + low = bits 1-9
# (the 10th TF32 bit is never multiplied), SrcB high = hidden bit + bits 1-6; SrcB low is
# the value minus its high slice.
SRCA_HIGH = np.uint32(0xFFF80000)
SRCA_BOTH = np.uint32(0xFFFFC000)
SRCB_HIGH = np.uint32(0xFFFE0000)

# Per fidelity, the products the phases add up, merged where slices combine:
# (SrcA part, SrcB part) with "high", "both" (high + low) or "all" (SrcB as it is) / "low".
FIDELITY_TERMS = {
    "LoFi": (("high", "high"),),                        # A_hi·B_hi
    "HiFi2": (("both", "high"),),                       # + A_lo·B_hi
    "HiFi3": (("both", "high"), ("high", "low")),       # + A_hi·B_lo
    "HiFi4": (("both", "all"),),                        # + A_lo·B_lo
    "exact": (("all", "all"),),                         # fast numerics: float32 operands as they are
}


def multiplier_slice(values: np.ndarray, register: str, part: str) -> np.ndarray:
    """The part (``"high"``, ``"both"``, ``"low"``, ``"all"``) of source-register ``values``
    (float32) that SrcA or SrcB (``register``: "A" or "B") feeds to the multiplier."""
    if part == "all":
        return values
    if register == "A":
        mask = SRCA_HIGH if part == "high" else SRCA_BOTH
        return (np.ascontiguousarray(values, dtype=np.float32).view(np.uint32) & mask).view(np.float32)
    high = (np.ascontiguousarray(values, dtype=np.float32).view(np.uint32) & SRCB_HIGH).view(np.float32)
    if part == "high":
        return high
    with np.errstate(invalid="ignore"):
        low = values - high                             # exact: the bits below the high slice
    return np.where(np.isfinite(high), low, np.float32(0))


def slice_in_place(values: np.ndarray, register: str, part: str) -> None:
    """:func:`multiplier_slice` of a contiguous float32 array, written over it."""
    if part == "all":
        return
    words = values.view(np.uint32)
    if register == "A":
        words &= SRCA_HIGH if part == "high" else SRCA_BOTH
    elif part == "high":
        words &= SRCB_HIGH
    else:
        values[...] = multiplier_slice(values, register, part)


def fidelity_product(a: np.ndarray, b: np.ndarray, fidelity: str) -> np.ndarray:
    """Element-wise products of SrcA values ``a`` and SrcB values ``b`` as the multiplier
    forms them at ``fidelity`` (each phase product and their sum are exact in float32)."""
    out = None
    for pa, pb in FIDELITY_TERMS[fidelity]:
        term = multiplier_slice(a, "A", pa) * multiplier_slice(b, "B", pb)
        out = term if out is None else out + term
    return out


def faces_to_rows(tiles: np.ndarray) -> np.ndarray:
    """(..., 1024) face order → (..., 32, 32) rows."""
    lead = tiles.shape[:-1]
    return tiles.reshape(*lead, 2, 2, 16, 16).swapaxes(-3, -2).reshape(*lead, 32, 32)


def rows_to_faces(rows: np.ndarray) -> np.ndarray:
    """(..., 32, 32) rows → (..., 1024) face order."""
    lead = rows.shape[:-2]
    return rows.reshape(*lead, 2, 16, 2, 16).swapaxes(-3, -2).reshape(*lead, TILE_ELEMS)


# The reduce's weights: the unpacker reads one row, the first, of each face of the scaler tile and
# pairs it with the same face of the input; the pool multiplies element ``k`` of that row into row
# ``k`` of the face in source register A, which for REDUCE_ROW holds the face transposed.
_R, _C = np.meshgrid(np.arange(32), np.arange(32), indexing="ij")
_ROW_WEIGHT = (16 * (_R // 16), _C)                       # REDUCE_ROW: element c of its face's row
_COL_WEIGHT = (16 * (_R // 16), 16 * (_C // 16) + _R % 16)  # REDUCE_COL: element r % 16


def reduce_values(x: np.ndarray, scaler: np.ndarray, pool: str, dim: str, valid: tuple[int, int] | None = None
                  ) -> np.ndarray:
    """``reduce_tile`` of row-ordered tiles ``x`` (lanes, 32, 32) with the row-ordered scaler tiles:
    per lane, the 32 row results (REDUCE_ROW), 32 column results (REDUCE_COL) or the one result
    (REDUCE_SCALAR: the column pool of all four faces into one 16-wide row, then a pool of that
    row, transposed, with the last face's weights: a uniform scaler ``s`` scales the sum by s²).
    ``valid`` (height, width): a smaller tile's elements, the top-left ones; a MAX pools only
    those (the engine reduces only the faces and rows the tile has)."""
    reduce = np.max if pool == "MAX" else np.sum
    kw = {} if pool == "MAX" else {"dtype": np.float32}
    if dim == "REDUCE_ROW":
        return reduce(_pooled(x * scaler[:, _ROW_WEIGHT[0], _ROW_WEIGHT[1]], pool, valid), axis=2, **kw)
    weighted = _pooled(x * scaler[:, _COL_WEIGHT[0], _COL_WEIGHT[1]], pool, valid)
    if dim == "REDUCE_COL":
        return reduce(weighted, axis=1, **kw)
    columns = reduce(weighted.reshape(-1, 32, 2, 16), axis=(1, 2), **kw)
    return reduce(columns * scaler[:, 16, 16:], axis=1, **kw)


def _pooled(weighted: np.ndarray, pool: str, valid: tuple[int, int] | None) -> np.ndarray:
    """``weighted`` with the elements outside a smaller tile's ``valid`` region out of a MAX."""
    if pool != "MAX" or valid is None:
        return weighted
    weighted = weighted.copy()
    weighted[:, valid[0]:, :] = -np.inf
    weighted[:, :, valid[1]:] = -np.inf
    return weighted


def row_major_to_tiles(block: np.ndarray, ntiles: int) -> np.ndarray:
    """(lanes, 32, ntiles*32) rows → (lanes, ntiles, 1024) tiles in face order (tilize)."""
    lanes = block.shape[0]
    t = block.reshape(lanes, 32, ntiles, 32).transpose(0, 2, 1, 3)
    return rows_to_faces(t)


def tiles_to_row_major(tiles: np.ndarray) -> np.ndarray:
    """(lanes, ntiles, 1024) face order → (lanes, 32, ntiles*32) rows (untilize)."""
    lanes, ntiles = tiles.shape[:2]
    rows = faces_to_rows(tiles)                        # (lanes, ntiles, 32, 32)
    return rows.transpose(0, 2, 1, 3).reshape(lanes, 32, ntiles * 32)


# BroadcastType of the C++ API -> the broadcast of fpu_binary_values
BROADCAST_TYPES = {"ROW": "rows", "COL": "cols", "SCALAR": "scalar"}


def broadcast_values(bcast: str, values: np.ndarray) -> np.ndarray:
    """Tiles (..., 1024) in face order with their first row (``"rows"``), first column
    (``"cols"``) or first value (``"scalar"``) broadcast over each tile."""
    rows = faces_to_rows(values)
    first = {"rows": rows[..., :1, :], "cols": rows[..., :, :1], "scalar": rows[..., :1, :1]}[bcast]
    return rows_to_faces(np.ascontiguousarray(np.broadcast_to(first, rows.shape)))


FPU_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply}   # mul: see fidelity_product


def fpu_binary_values(op: str, bcast: str | None, a: np.ndarray, b: np.ndarray, fidelity: str) -> np.ndarray:
    """An FPU element-wise op on source-register values (..., 1024): ``a`` from SrcA, ``b``
    from SrcB; with ``bcast`` ("rows", "cols", "scalar") ``b``'s first row, first column or
    first value is broadcast over the tile. Multiplication runs the ``fidelity``'s phases."""
    if bcast is not None:
        b = broadcast_values(bcast, b)
    if op == "mul":
        return fidelity_product(a, b, fidelity)
    return FPU_BINARY[op](a, b)


def sfpu_unary_values(name: str, x: np.ndarray, params, fp32_dest: bool = False) -> np.ndarray:
    """SFPU unary function ``name`` (:data:`tilefold.ir.sfpu.SFPU`) on float32 DST values (any
    shape), as float32; ``fp32_dest`` is DST's precision (approximated functions depend on it)."""
    return sfpu_values(name, x, *params, fp32_dest=fp32_dest)


def sfpu_binary_values(name: str, a: np.ndarray, b: np.ndarray, fp32_dest: bool = False) -> np.ndarray:
    """SFPU binary function ``name`` on float32 DST values (any shape), as float32; ``fp32_dest``
    is DST's precision (a function that rounds its result to bfloat16 otherwise depends on it)."""
    return sfpu_values(name, a, b, fp32_dest=fp32_dest)
