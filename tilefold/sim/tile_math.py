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
* **Math fidelity** (matmul): HiFi4 and HiFi3 multiply full source mantissas; HiFi2 uses
  the top 7 mantissa bits of in1 (srcA) and LoFi additionally the top 5 of in0 (srcB)
  before multiplying. This approximates the phase split of the multiplier and is labelled
  a model.
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

TILE_ELEMS = 1024
BF16 = _BF16 = ml_dtypes.bfloat16


_VALUE_DTYPES = {DataFormat.Float16_b: np.dtype(_BF16), DataFormat.Float32: np.dtype(np.float32),
                 DataFormat.Float16: np.dtype(np.float16)}


def tile_value_dtype(fmt: DataFormat):
    """The numpy dtype a tile's bytes are an array of (bfloat16, float32), or None when the
    values must be decoded (block floats, integers)."""
    return _VALUE_DTYPES.get(fmt)


def unpack(raw: np.ndarray, fmt: DataFormat) -> np.ndarray:
    """Tile bytes (..., tile_size) → float32 values (..., 1024) in face order."""
    lead = raw.shape[:-1]
    if fmt is DataFormat.Float16_b:
        return np.ascontiguousarray(raw).view(_BF16).astype(np.float32).reshape(*lead, TILE_ELEMS)
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
    """float32 (or bfloat16) values (..., 1024) → tile bytes (..., tile_size) of ``fmt``."""
    lead = values.shape[:-1]
    if fmt is DataFormat.Float16_b:
        return np.ascontiguousarray(values, dtype=_BF16).view(np.uint8).reshape(*lead, 2 * TILE_ELEMS)
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
        ints = np.clip(np.rint(values), info.min, info.max).astype(fmt.numpy_dtype)
        return ints.view(np.uint8).reshape(*lead, -1)
    raise ValueError(f"cannot pack to {fmt}")


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


def fidelity_mask(role: str, fidelity: str) -> np.uint32 | None:
    """Bits of a float32 a matmul operand keeps at ``fidelity`` (None: all of them): in0 (srcB)
    keeps 5 mantissa bits with LoFi, in1 (srcA) 7 mantissa bits below HiFi3."""
    bits = {"in0": 5 if fidelity == "LoFi" else None,
            "in1": None if fidelity in ("HiFi4", "HiFi3") else 7}[role]
    return None if bits is None else ~np.uint32((1 << (23 - bits)) - 1)


def faces_to_rows(tiles: np.ndarray) -> np.ndarray:
    """(..., 1024) face order → (..., 32, 32) rows."""
    lead = tiles.shape[:-1]
    return tiles.reshape(*lead, 2, 2, 16, 16).swapaxes(-3, -2).reshape(*lead, 32, 32)


def rows_to_faces(rows: np.ndarray) -> np.ndarray:
    """(..., 32, 32) rows → (..., 1024) face order."""
    lead = rows.shape[:-2]
    return rows.reshape(*lead, 2, 16, 2, 16).swapaxes(-3, -2).reshape(*lead, TILE_ELEMS)


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


FPU_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply}


def fpu_binary_values(op: str, bcast: str | None, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """An FPU element-wise op on source-register values (..., 1024); with ``bcast`` ("rows",
    "cols", "scalar") ``b``'s first row, first column or first value is broadcast over the tile."""
    if bcast is not None:
        rows = faces_to_rows(b)
        first = {"rows": rows[..., :1, :], "cols": rows[..., :, :1], "scalar": rows[..., :1, :1]}[bcast]
        b = rows_to_faces(np.ascontiguousarray(np.broadcast_to(first, rows.shape)))
    return FPU_BINARY[op](a, b)


def sfpu_unary_values(name: str, x: np.ndarray, params) -> np.ndarray:
    """SFPU unary function ``name`` (:data:`tilefold.ir.sfpu.SFPU`) on float32 DST values (any
    shape), as float32."""
    return sfpu_values(name, x, *params)


def sfpu_binary_values(name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """SFPU binary function ``name`` on float32 DST values (any shape), as float32."""
    return sfpu_values(name, a, b)
