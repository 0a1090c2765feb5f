"""Tile data formats: names, sizes, and bit-exact conversion to and from device bytes.

Reads: numpy arrays of values (row-major, or tiles in face order). Writes: numpy arrays of
device bytes, and back.

Formats and their numerics, as the hardware and the TT-Metalium host library treat them:

* ``Float32``: IEEE float32, little-endian.
* ``Float16_b`` (bfloat16): the top 16 bits of a float32 after round-to-nearest-even.
  Overflow rounds to ±Inf, ±Inf and ±0 stay, float32 denormals round to the nearest
  bfloat16 denormal (not flushed), and every NaN becomes the canonical quiet NaN 0x7FC0.
* ``Bfp8_b`` / ``Bfp4_b`` (bfloat8_b / bfloat4_b): block floats. Each 16-value face row
  shares one 8-bit exponent E, the largest biased float32 exponent field in the row (a NaN
  or ±Inf gives 255). Each value keeps a sign and 7 (bfp8) or 3 (bfp4) magnitude bits:
  its 24-bit significand ``1.m`` is shifted right by ``E − e`` (truncating), then rounded
  to nearest even down to 7 / 3 bits (split at bit 17 / 21) and clamped to 127 / 7 (no
  exponent bump). A value whose exponent field is 0 (zero or denormal) packs to 0, and a
  value whose magnitude rounds to 0 loses its sign. A bfp8 byte is ``sign << 7 | m7``;
  a bfp4 nibble is ``sign << 3 | m3``, two per byte with element 0 in the low nibble.
  A tile is its exponent section — one byte per face row, faces in order (16 per 16×16
  face), zero-padded to a multiple of 16 bytes (the L1 alignment; only tiny tiles need
  it) — followed by the magnitudes in face order. 32×32: 64 + 1024 = 1088 bytes (bfp8),
  64 + 512 = 576 bytes (bfp4).
* Unpacking a code ``m`` ≠ 0 normalises its leading one (shift ``s``), giving exponent
  ``E − s`` and value ``(−1)^sign · m · 2^(E − 127 − (bits − 1))``; a magnitude 0, or a
  shift ``s > E``, gives +0 (the sign of a zero is dropped, as the packer drops it).

What special values become under those rules (bfp8; bfp4 alike):

* +Inf / −Inf: E = 255 and code 0x40 / 0xC0, which unpacks to ±Inf again; every other
  value of that row is shifted right by at least 128 and packs to 0.
* NaN: E = 255 and the top 7 significand bits ``1.xxxxxx`` rounded, so it unpacks as a
  NaN — except a NaN whose payload lies only in the low 16 mantissa bits, which rounds to
  code 0x40 and unpacks as Inf (as truncating it to bfloat16 would).
* Denormals and ±0 pack to code 0 (+0); a row of only denormals has E = 0.
* A value more than ~8 binades below its row's largest rounds to 0.

Row-major ("stick") bytes of the non-block formats are the values' little-endian bytes.

Speed: the block-float packer works on chunks of tiles that stay in cache, with whole-array
numpy operations and no float64. For rows whose shared exponent is 0 or in [23, 254] it
computes the truncate-then-round of the rules above with exact float32 arithmetic
(``floor(|x|·2^(150−E))``, then a magic-number add that rounds to nearest even at bit 17 /
21); the other rows (values below 2^-104, Inf, NaN) take a direct integer version of the
rules. Large inputs are split over the CPU's cores.
"""

from __future__ import annotations

import threading
from enum import Enum

import ml_dtypes
import numpy as np

from tilefold.errors import LayoutError
from tilefold.layout.chunks import for_each_chunk
from tilefold.layout.tiles import SUPPORTED_TILE_SHAPES, FACE_WIDTH, TILE_32x32, TileShape, tile_shape  # noqa: F401

# The exponent section of a block-float tile is padded to the L1 alignment (16 bytes on
# Wormhole and Blackhole).
EXPONENT_SECTION_ALIGNMENT = 16
# bfloat16's canonical quiet NaN, which every NaN converts to.
BFLOAT16_NAN = 0x7FC0


class DataFormat(Enum):
    """A tile data format, named as TT-Metalium's ``tt::DataFormat`` names it."""

    Float32 = "Float32"
    Float16_b = "Float16_b"   # bfloat16
    Float16 = "Float16"       # IEEE half (float16)
    Bfp8_b = "Bfp8_b"         # block float: 8-bit sign+mantissa, shared exponent per 16 values
    Bfp4_b = "Bfp4_b"         # block float: 4-bit sign+mantissa, shared exponent per 16 values
    UInt32 = "UInt32"
    Int32 = "Int32"
    UInt16 = "UInt16"
    UInt8 = "UInt8"

    @property
    def ttnn_name(self) -> str:
        """The TT-NN dtype name (``bfloat16``, ``float32``, ``bfloat8_b`` ...)."""
        return _TTNN_NAMES[self]

    @property
    def cpp(self) -> str:
        """The C++ spelling, ``tt::DataFormat::Float16_b``."""
        return f"tt::DataFormat::{self.value}"

    @property
    def is_block_float(self) -> bool:
        return self in (DataFormat.Bfp8_b, DataFormat.Bfp4_b)

    @property
    def is_float(self) -> bool:
        """True for the formats that hold real numbers (host values are float32)."""
        return self in (DataFormat.Float32, DataFormat.Float16_b, DataFormat.Float16, DataFormat.Bfp8_b,
                        DataFormat.Bfp4_b)

    @property
    def mantissa_bits(self) -> int:
        """Magnitude bits per value of a block-float format (7 for bfp8_b, 3 for bfp4_b)."""
        if not self.is_block_float:
            raise LayoutError(
                f"{self.ttnn_name} is not a block-float format; mantissa_bits is for bfloat8_b / bfloat4_b"
            )
        return 7 if self is DataFormat.Bfp8_b else 3

    @property
    def element_size(self) -> int:
        """Bytes per element in row-major (stick) layout. Block-float formats have no
        row-major form; asking for one is an error."""
        if self.is_block_float:
            raise LayoutError(f"{self.ttnn_name} exists only in tile layout; use TILE layout for it")
        return _ELEMENT_SIZE[self]

    @property
    def numpy_dtype(self) -> np.dtype:
        """The host numpy dtype that holds values of this format (block floats: float32)."""
        return np.dtype(_NUMPY_DTYPE[self])

    @property
    def host_dtype(self) -> np.dtype:
        """The dtype values come back in from device bytes: float32 for every float format
        (bfloat16 and block floats are exact in float32), the integer dtype otherwise."""
        return np.dtype(np.float32) if self.is_float else self.numpy_dtype

    def exponent_section_size(self, tile_h: int = 32, tile_w: int = 32) -> int:
        """Bytes of a block-float tile's exponent section: one per 16-value face row,
        rounded up to 16 bytes. 0 for the other formats."""
        if not self.is_block_float:
            return 0
        rows = tile_h * tile_w // FACE_WIDTH
        return -(-rows // EXPONENT_SECTION_ALIGNMENT) * EXPONENT_SECTION_ALIGNMENT

    def tile_size(self, tile_h: int = 32, tile_w: int = 32) -> int:
        """Bytes of one tile: 2·H·W for bf16, 4·H·W for fp32, H·W + H·W/16 for bfp8_b,
        H·W/2 + H·W/16 for bfp4_b (one exponent byte per 16-value face row; the exponent
        section is padded to 16 bytes, which only tiny tiles need: 1×32 bfp8_b is 48)."""
        if tile_h == 32 and tile_w == 32:
            size = _FULL_TILE_SIZES.get(self)
            if size is None:
                size = _FULL_TILE_SIZES[self] = self._tile_size(32, 32)
            return size
        return self._tile_size(tile_h, tile_w)

    def _tile_size(self, tile_h: int, tile_w: int) -> int:
        elems = tile_h * tile_w
        if self is DataFormat.Bfp8_b:
            return elems + self.exponent_section_size(tile_h, tile_w)
        if self is DataFormat.Bfp4_b:
            return elems // 2 + self.exponent_section_size(tile_h, tile_w)
        return elems * _ELEMENT_SIZE[self]


_TTNN_NAMES = {
    DataFormat.Float32: "float32",
    DataFormat.Float16_b: "bfloat16",
    DataFormat.Float16: "float16",
    DataFormat.Bfp8_b: "bfloat8_b",
    DataFormat.Bfp4_b: "bfloat4_b",
    DataFormat.UInt32: "uint32",
    DataFormat.Int32: "int32",
    DataFormat.UInt16: "uint16",
    DataFormat.UInt8: "uint8",
}

# tile_size() of 32 x 32 tiles, by format (filled on first use)
_FULL_TILE_SIZES: dict = {}

_ELEMENT_SIZE = {
    DataFormat.Float32: 4,
    DataFormat.Float16_b: 2,
    DataFormat.Float16: 2,
    DataFormat.UInt32: 4,
    DataFormat.Int32: 4,
    DataFormat.UInt16: 2,
    DataFormat.UInt8: 1,
}

_NUMPY_DTYPE = {
    DataFormat.Float32: np.float32,
    DataFormat.Float16_b: ml_dtypes.bfloat16,
    DataFormat.Float16: np.float16,
    DataFormat.Bfp8_b: np.float32,
    DataFormat.Bfp4_b: np.float32,
    DataFormat.UInt32: np.uint32,
    DataFormat.Int32: np.int32,
    DataFormat.UInt16: np.uint16,
    DataFormat.UInt8: np.uint8,
}

_ALIASES = {
    "float32": DataFormat.Float32, "f32": DataFormat.Float32, "fp32": DataFormat.Float32,
    "float": DataFormat.Float32,
    "bfloat16": DataFormat.Float16_b, "bf16": DataFormat.Float16_b, "float16_b": DataFormat.Float16_b,
    "bfloat8_b": DataFormat.Bfp8_b, "bfp8_b": DataFormat.Bfp8_b, "bfp8": DataFormat.Bfp8_b,
    "bfp_bf8": DataFormat.Bfp8_b,
    "bfloat4_b": DataFormat.Bfp4_b, "bfp4_b": DataFormat.Bfp4_b, "bfp4": DataFormat.Bfp4_b,
    "bfp_bf4": DataFormat.Bfp4_b,
    "uint32": DataFormat.UInt32, "int32": DataFormat.Int32, "uint16": DataFormat.UInt16,
    "uint8": DataFormat.UInt8,
    "float16": DataFormat.Float16, "f16": DataFormat.Float16, "fp16": DataFormat.Float16,
}


def data_format(spec) -> DataFormat:
    """The :class:`DataFormat` named by ``spec``: a DataFormat, a name (``"bfloat16"``,
    ``"bf16"``, ``"bfloat8_b"``, ``"Float16_b"`` ...), a numpy / ml_dtypes dtype, or a
    torch dtype. Raises :class:`LayoutError` naming the accepted names otherwise."""
    if isinstance(spec, DataFormat):
        return spec
    if isinstance(spec, str):
        key = spec.strip().lower().removeprefix("ttnn.").removeprefix("torch.").removeprefix("tt::dataformat::")
        if key in _ALIASES:
            return _ALIASES[key]
        for fmt in DataFormat:
            if fmt.value.lower() == key:
                return fmt
        raise LayoutError(
            f"unknown data format {spec!r}; use float32, bfloat16, bfloat8_b, bfloat4_b, uint32, int32, uint16 or uint8"
        )
    name = getattr(spec, "name", None) if not isinstance(spec, (type, np.dtype)) else None
    try:
        dt = np.dtype(spec)
    except TypeError:
        dt = None
    if dt is not None:
        if dt == np.dtype(ml_dtypes.bfloat16):
            return DataFormat.Float16_b
        key = dt.name
        if key in _ALIASES:
            return _ALIASES[key]
    text = str(spec)
    if text.startswith("torch."):
        return data_format(text)
    if name:
        return data_format(name)
    raise LayoutError(f"unsupported dtype {spec!r}; use float32, bfloat16, bfloat8_b or bfloat4_b")


# --- host values -------------------------------------------------------------------------

_BF16 = np.dtype(ml_dtypes.bfloat16)


def _is_numeric(dtype: np.dtype) -> bool:
    return dtype.kind in "biuf" or dtype == _BF16 or (
        dtype.kind == "V" and dtype.type is not np.void and dtype.names is None
    )


def as_float32(values, name: str = "values") -> np.ndarray:
    """``values`` as a float32 array: float32 as is, bfloat16 widened exactly, other real
    dtypes (float64, float16, ints, bool) converted by numpy. Complex or non-numeric input
    raises :class:`LayoutError` naming ``name``."""
    array = np.asarray(values)
    if array.dtype == np.float32:
        return array
    if array.dtype == _BF16:
        return bfloat16_to_float32(array)
    if not _is_numeric(array.dtype):
        raise LayoutError(
            f"{name} has dtype {array.dtype}; float formats take real numbers — pass float32 or bfloat16 values"
        )
    return array.astype(np.float32)


def to_bfloat16(values, name: str = "values") -> np.ndarray:
    """float32 (or any real) values → bfloat16 with round-to-nearest-even.

    Other float dtypes go through float32 first. Overflow gives ±Inf, denormals round to
    bfloat16 denormals, and every NaN becomes the canonical 0x7FC0 (as TT-Metalium's host
    conversion does). ``name`` is the argument named in errors.
    """
    array = np.asarray(values)
    if array.dtype == _BF16:                 # already bfloat16: only NaNs change
        bits = array.view(np.uint16)
        # NaNs are 0x7F81..0x7FFF and 0xFF81..0xFFFF: two fast maxima rule them out
        if bits.size and (bits.max() > 0xFF80 or bits.view(np.int16).max() > 0x7F80):
            nan = (bits & 0x7FFF) > 0x7F80
            array = array.copy()
            array.view(np.uint16)[nan] = BFLOAT16_NAN
        return array
    f32 = as_float32(array, name)
    with np.errstate(invalid="ignore"):     # NaNs are made canonical just below
        out = np.ascontiguousarray(f32).astype(_BF16)
    bits = out.view(np.uint16)
    nan = np.isnan(f32)
    if nan.any():
        bits[nan] = BFLOAT16_NAN
    return out


def bfloat16_to_float32(values) -> np.ndarray:
    """bfloat16 values (or their uint16 bit patterns) → float32, exactly."""
    array = np.ascontiguousarray(values)
    if array.dtype not in (_BF16, np.dtype(np.uint16)):
        raise LayoutError(f"values has dtype {array.dtype}; expected bfloat16 or its uint16 bits")
    wide = array.view(np.uint16).astype(np.uint32)
    wide <<= 16
    return wide.view(np.float32)


def _as_integers(values, fmt: DataFormat, name: str) -> np.ndarray:
    """Values for an integer format: integers (or whole floats) inside the format's range."""
    array = np.asarray(values)
    dtype = fmt.numpy_dtype
    if array.dtype == dtype:
        return array
    if array.dtype.kind == "b":
        return array.astype(dtype)
    if array.dtype.kind in "iu":
        info = np.iinfo(dtype)
        if array.size and (array.min() < info.min or array.max() > info.max):
            raise LayoutError(
                f"{name} holds values in [{array.min()}, {array.max()}], outside {fmt.ttnn_name}'s "
                f"range [{info.min}, {info.max}]; clip or pick a wider format"
            )
        return array.astype(dtype)
    if array.dtype.kind == "f" or array.dtype == _BF16:
        wide = array.astype(np.float64)
        info = np.iinfo(dtype)
        whole = np.isfinite(wide).all() and (wide == np.round(wide)).all()
        if not whole or (wide.size and (wide.min() < info.min or wide.max() > info.max)):
            raise LayoutError(
                f"{name} has dtype {array.dtype} with values that are not whole numbers in "
                f"{fmt.ttnn_name}'s range; round them first (e.g. np.rint(x).astype(np.{dtype.name}))"
            )
        return wide.astype(dtype)
    raise LayoutError(f"{name} has dtype {array.dtype}; {fmt.ttnn_name} takes integers")


def storage_values(values, fmt, name: str = "values") -> np.ndarray:
    """Values of a non-block format in the dtype whose bytes are its device bytes: float32,
    bfloat16 (rounded to nearest even) or the integer dtype (range-checked). ``name`` is the
    argument named in errors."""
    fmt = data_format(fmt)
    if fmt.is_block_float:
        raise LayoutError(f"{name}: {fmt.ttnn_name} values exist only packed in tiles; use pack_tiles")
    if fmt is DataFormat.Float32:
        return as_float32(values, name)
    if fmt is DataFormat.Float16_b:
        return to_bfloat16(values, name)
    if fmt is DataFormat.Float16:
        return as_float32(values, name).astype(np.float16)
    return _as_integers(values, fmt, name)


def to_bytes(values, fmt) -> np.ndarray:
    """Row-major values → their device bytes in ``fmt`` (a flat uint8 array).

    For the non-block formats only; block floats exist only as tiles (use
    :func:`pack_tiles`).
    """
    fmt = data_format(fmt)
    if fmt.is_block_float:
        raise LayoutError(f"to_bytes: {fmt.ttnn_name} has no row-major bytes; use pack_tiles on tiles in face order")
    stored = np.ascontiguousarray(storage_values(values, fmt, "values"))
    return stored.reshape(-1).view(np.uint8)


def from_bytes(raw, fmt, count: int) -> np.ndarray:
    """The first ``count`` values stored in device bytes ``raw`` (row-major, ``fmt``).

    Returns float32 for the float formats, the integer dtype otherwise.
    """
    fmt = data_format(fmt)
    if fmt.is_block_float:
        raise LayoutError(f"from_bytes: {fmt.ttnn_name} has no row-major bytes; use unpack_tiles on tile bytes")
    raw = _as_bytes(raw, "raw")
    count = int(count)
    need = count * fmt.element_size
    if count < 0 or raw.size < need:
        raise LayoutError(f"raw holds {raw.size} bytes but {count} {fmt.ttnn_name} values need {need}")
    stored = np.ascontiguousarray(raw[:need]).view(fmt.numpy_dtype)
    if fmt is DataFormat.Float16_b:
        return bfloat16_to_float32(stored)
    if fmt is DataFormat.Float16:
        return stored.astype(np.float32)
    return stored.copy()


def _as_bytes(raw, name: str) -> np.ndarray:
    array = np.asarray(raw)
    if array.dtype != np.uint8:
        raise LayoutError(f"{name} has dtype {array.dtype}; device bytes are uint8 — pass raw.view(np.uint8)")
    return array.reshape(-1)


# --- tiles ------------------------------------------------------------------------------------


def pack_tiles(values, fmt, tile=TILE_32x32) -> np.ndarray:
    """Tiles of values in face order ``(n, H·W)`` → device bytes ``(n, tile_size)`` uint8.

    Float formats take float32 or bfloat16 values (other real dtypes are converted to
    float32 first); integer formats take integers in range. A flat array of ``n·H·W``
    values is accepted too.
    """
    fmt = data_format(fmt)
    tile = tile_shape(tile)
    array = _tile_block(values, tile.elements, "values")
    if fmt.is_block_float:
        return _pack_block_float(as_float32(array, "values"), fmt, tile)
    stored = np.ascontiguousarray(storage_values(array, fmt, "values"))
    return stored.view(np.uint8).reshape(array.shape[0], fmt.tile_size(tile.height, tile.width))


def unpack_tiles(raw, fmt, tile=TILE_32x32) -> np.ndarray:
    """Device bytes ``(n, tile_size)`` → values in face order ``(n, H·W)``.

    float32 for the float formats (exact for bfloat16 and the block floats), the integer
    dtype for integer formats. A flat array of ``n·tile_size`` bytes is accepted too.
    """
    fmt = data_format(fmt)
    tile = tile_shape(tile)
    size = fmt.tile_size(tile.height, tile.width)
    array = np.asarray(raw)
    if array.dtype != np.uint8:
        raise LayoutError(f"raw has dtype {array.dtype}; device bytes are uint8 — pass raw.view(np.uint8)")
    array = _tile_block(array, size, "raw")
    if fmt.is_block_float:
        return _unpack_block_float(array, fmt, tile)
    stored = array.view(fmt.numpy_dtype)
    if fmt is DataFormat.Float16_b:
        return bfloat16_to_float32(stored)
    if fmt is DataFormat.Float16:
        return stored.astype(np.float32)
    return stored.copy()


def _tile_block(values, width: int, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim == 1 and array.size % width == 0:
        array = array.reshape(-1, width)
    if array.ndim != 2 or array.shape[1] != width:
        raise LayoutError(f"{name} has shape {array.shape}; expected (num_tiles, {width})")
    return np.ascontiguousarray(array)


# --- block floats: pack -------------------------------------------------------------------

# Face rows per chunk of the block-float pack (2 MiB of float32: mostly stays in the L2 cache).
BLOCK_FLOAT_CHUNK_ROWS = 32768


def block_float_codes(rows: np.ndarray, mantissa_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """The rules of the module docstring applied directly, in integers.

    ``rows`` is float32 ``(r, 16)`` (one face row each). Returns the shared exponents
    ``(r,)`` uint8 and the sign+magnitude codes ``(r, 16)`` uint8.
    """
    u = np.ascontiguousarray(rows, dtype=np.float32).view(np.uint32).reshape(-1, FACE_WIDTH)
    exponent = (u >> 23) & 0xFF
    shared = exponent.max(axis=1)
    split = 24 - mantissa_bits                       # 17 for bfp8, 21 for bfp4
    significand = (u & 0x7FFFFF) | 0x800000
    shift = np.minimum(shared[:, None] - exponent, 31)
    shifted = significand >> shift
    rest = shifted & ((1 << split) - 1)
    magnitude = shifted >> split
    tie = 1 << (split - 1)
    magnitude += (rest > tie) | ((rest == tie) & ((magnitude & 1) == 1))
    np.minimum(magnitude, (1 << mantissa_bits) - 1, out=magnitude)
    magnitude[exponent == 0] = 0
    sign = (u >> 31) * (magnitude != 0)
    codes = (sign << mantissa_bits) | magnitude
    return shared.astype(np.uint8), codes.astype(np.uint8)


class _PackWorkspace:
    """Per-thread scratch arrays of the fast block-float packer (allocated once)."""

    def __init__(self, rows: int, mantissa_bits: int):
        n = rows * FACE_WIDTH
        self.rows = rows
        self.magnitude_bits = np.empty(n, np.uint32)
        self.max8 = np.empty(n // 2, np.uint32)
        self.max4 = np.empty(n // 4, np.uint32)
        self.max2 = np.empty(n // 8, np.uint32)
        self.row_max = np.empty(rows, np.uint32)
        self.scale32 = np.empty(rows, np.uint32)
        self.scale64 = np.empty(rows, np.uint64)
        self.magnitude = np.empty(n, np.uint8)
        self.sign = np.empty(n, np.uint8)
        self.keep = np.empty(n, np.uint8)
        self.codes = np.empty(n, np.uint8)
        self.negative = np.empty(n, np.bool_)
        self.code_max = np.full(n, (1 << mantissa_bits) - 1, np.uint8)


_workspaces = threading.local()


def _workspace(rows: int, mantissa_bits: int) -> _PackWorkspace:
    cache = getattr(_workspaces, "pack", None)
    if cache is None:
        cache = _workspaces.pack = {}
    key = (rows, mantissa_bits)
    if key not in cache:
        cache[key] = _PackWorkspace(rows, mantissa_bits)
    return cache[key]


def _codes_fast(u: np.ndarray, shared_out: np.ndarray, codes_out: np.ndarray, mantissa_bits: int,
                ws: _PackWorkspace) -> None:
    """Shared exponents and codes of ``u`` (float32 bits, whole face rows, flat) written to
    ``shared_out`` (rows,) and ``codes_out`` (any shape of rows·16 values). Exact for rows whose
    shared exponent is 0 or in [23, 254]; the caller redoes the others with
    :func:`block_float_codes`.

    With E the row's exponent, ``floor(|x|·2^(150−E))`` is the significand shifted right
    by ``E − e`` with truncation (a power-of-two scaling and a floor, both exact in
    float32 since the result is below 2^24). Adding ``2^(23 + split)`` then rounds it to
    nearest even at bit ``split`` and leaves the code in the low bits of the sum.
    """
    n = u.size
    rows = n // FACE_WIDTH
    magnitude_bits = ws.magnitude_bits[:n]
    np.bitwise_and(u, np.uint32(0x7FFFFFFF), out=magnitude_bits)
    negative, sign, keep = ws.negative[:n], ws.sign[:n], ws.keep[:n]
    np.signbit(u.view(np.float32), out=negative)          # while u is in cache
    np.multiply(negative.view(np.uint8), np.uint8(1 << mantissa_bits), out=sign)
    # row maximum of |x| (its exponent is the row's largest exponent) by halving
    max8, max4, max2, row_max = ws.max8[: n // 2], ws.max4[: n // 4], ws.max2[: n // 8], ws.row_max[:rows]
    np.maximum(magnitude_bits[0::2], magnitude_bits[1::2], out=max8)
    np.maximum(max8[0::2], max8[1::2], out=max4)
    np.maximum(max4[0::2], max4[1::2], out=max2)
    np.maximum(max2[0::2], max2[1::2], out=row_max)
    np.right_shift(row_max, np.uint32(23), out=row_max)
    np.copyto(shared_out, row_max, casting="unsafe")
    # per-row scale 2^(150 − E) as float32 bits, repeated over the row's 16 values
    scale32 = ws.scale32[:rows]
    np.clip(row_max, np.uint32(23), np.uint32(254), out=scale32)
    np.subtract(np.uint32(150 + 127), scale32, out=scale32)
    np.left_shift(scale32, np.uint32(23), out=scale32)
    scale64 = ws.scale64[:rows]
    np.copyto(scale64, scale32)
    np.multiply(scale64, np.uint64(0x1_0000_0001), out=scale64)      # two copies per uint64
    scale = np.repeat(scale64, FACE_WIDTH // 2).view(np.float32)
    values = magnitude_bits.view(np.float32)
    np.multiply(values, scale, out=values)
    np.floor(values, out=values)
    np.add(values, np.float32(2.0 ** (23 + 24 - mantissa_bits)), out=values)
    magnitude = ws.magnitude[:n]
    np.copyto(magnitude, magnitude_bits, casting="unsafe")             # low byte = rounded code
    np.minimum(magnitude, ws.code_max[:n], out=magnitude)
    # sign only where the magnitude is not zero: (m + 2^bits − 1) has bit `bits` set iff m ≥ 1
    np.add(magnitude, np.uint8((1 << mantissa_bits) - 1), out=keep)
    np.bitwise_and(sign, keep, out=sign)
    np.bitwise_or(magnitude.reshape(codes_out.shape), sign.reshape(codes_out.shape), out=codes_out)


def _pack_block_float(values: np.ndarray, fmt: DataFormat, tile: TileShape) -> np.ndarray:
    bits = fmt.mantissa_bits
    count = values.shape[0]
    face_rows = tile.face_rows
    exp_bytes = fmt.exponent_section_size(tile.height, tile.width)
    out = np.empty((count, fmt.tile_size(tile.height, tile.width)), np.uint8)
    if exp_bytes > face_rows:
        out[:, face_rows:exp_bytes] = 0
    if count == 0:
        return out
    u = values.view(np.uint32).reshape(-1)
    chunk_tiles = max(1, BLOCK_FLOAT_CHUNK_ROWS // face_rows)
    shared_all = np.empty(count * face_rows, np.uint8)

    def work(lo: int, hi: int) -> None:
        ws = _workspace(chunk_tiles * face_rows, bits)
        body = out[lo:hi, exp_bytes:]
        codes = body if bits == 7 else ws.codes[: (hi - lo) * tile.elements].reshape(hi - lo, tile.elements)
        with np.errstate(all="ignore"):   # Inf / NaN rows are redone below
            _codes_fast(u[lo * tile.elements:hi * tile.elements], shared_all[lo * face_rows:hi * face_rows],
                        codes, bits, ws)
        if bits != 7:
            _nibbles_into(codes, body)

    for_each_chunk(count, chunk_tiles, work, values.nbytes)
    _fix_special_rows(values, shared_all, out, fmt, tile)
    out[:, :face_rows] = shared_all.reshape(count, face_rows)
    return out


def _nibbles_into(codes: np.ndarray, out: np.ndarray) -> None:
    """4-bit codes (flat) → bytes with element 2i in the low and 2i+1 in the high nibble."""
    pairs = codes.reshape(out.shape[0], -1, 2)
    np.multiply(pairs[..., 1], np.uint8(16), out=out)
    np.bitwise_or(out, pairs[..., 0], out=out)


def _fix_special_rows(values: np.ndarray, shared: np.ndarray, out: np.ndarray, fmt: DataFormat,
                      tile: TileShape) -> None:
    """Redo the rows the fast path cannot (shared exponent in [1, 22] or 255) with the direct
    rules. (A row of zeros and denormals, E = 0, is already right: all its codes are 0.)"""
    special = np.flatnonzero(((shared >= 1) & (shared < 23)) | (shared == 255))
    if special.size == 0:
        return
    rows = values.reshape(-1, FACE_WIDTH)[special]
    exps, codes = block_float_codes(rows, fmt.mantissa_bits)
    shared[special] = exps
    exp_bytes = fmt.exponent_section_size(tile.height, tile.width)
    tile_index, row_in_tile = np.divmod(special, tile.face_rows)
    if fmt is DataFormat.Bfp8_b:
        columns = exp_bytes + row_in_tile[:, None] * FACE_WIDTH + np.arange(FACE_WIDTH)
        out[tile_index[:, None], columns] = codes
    else:
        columns = exp_bytes + row_in_tile[:, None] * (FACE_WIDTH // 2) + np.arange(FACE_WIDTH // 2)
        out[tile_index[:, None], columns] = codes[:, 0::2] | (codes[:, 1::2] << 4)


# --- block floats: unpack -----------------------------------------------------------------


def block_float_values(shared: np.ndarray, codes: np.ndarray, mantissa_bits: int) -> np.ndarray:
    """The unpack rule of the module docstring applied directly to float32 bits.

    ``shared`` ``(r,)`` exponents and ``codes`` ``(r, 16)`` → float32 ``(r, 16)``.
    """
    codes = np.asarray(codes, dtype=np.uint32).reshape(-1, FACE_WIDTH)
    exponent = np.asarray(shared, dtype=np.int64).reshape(-1, 1)
    mask = (1 << mantissa_bits) - 1
    magnitude = codes & mask
    sign = codes >> mantissa_bits
    lead = np.zeros(codes.shape, np.int64)                      # position of the leading one
    for bit in range(1, mantissa_bits):
        lead[magnitude >> bit != 0] = bit
    shift = (mantissa_bits - 1) - lead
    biased = exponent - shift
    fraction = (magnitude << (shift + 1).astype(np.uint32)) & mask
    bits = (sign << 31) | (biased.clip(0, 255).astype(np.uint32) << 23) | (fraction << (23 - mantissa_bits))
    bits[(magnitude == 0) | (shift > exponent)] = 0
    return bits.astype(np.uint32).view(np.float32)


def _unpack_block_float(raw: np.ndarray, fmt: DataFormat, tile: TileShape) -> np.ndarray:
    bits = fmt.mantissa_bits
    count = raw.shape[0]
    face_rows = tile.face_rows
    exp_bytes = fmt.exponent_section_size(tile.height, tile.width)
    values = np.empty((count, tile.elements), np.float32)
    if count == 0:
        return values
    shared = np.ascontiguousarray(raw[:, :face_rows]).reshape(-1)
    sign_bit = 1 << bits
    chunk_tiles = max(1, BLOCK_FLOAT_CHUNK_ROWS // face_rows)

    def work(lo: int, hi: int) -> None:
        body = raw[lo:hi, exp_bytes:]
        if bits == 7:
            codes = np.ascontiguousarray(body).reshape(-1)
        else:
            codes = np.empty((hi - lo, tile.elements), np.uint8)
            np.bitwise_and(body, np.uint8(0x0F), out=codes[:, 0::2])
            np.right_shift(body, np.full(body.shape, 4, np.uint8), out=codes[:, 1::2])
            codes = codes.reshape(-1)
        # value = ±m · 2^(E − 127 − (bits − 1)); exact and normal for bits <= E <= 254
        scale32 = np.clip(shared[lo * face_rows:hi * face_rows], bits, 254).astype(np.uint32)
        scale32 -= np.uint32(bits - 1)
        scale32 <<= np.uint32(23)
        scale64 = scale32.astype(np.uint64)
        scale64 *= np.uint64(0x1_0000_0001)                       # two copies per uint64
        scale = np.repeat(scale64, FACE_WIDTH // 2).view(np.float32)
        # signed magnitude in int8: m, or −m as (m XOR −1) + 1 when the sign bit is set
        negative = np.greater_equal(codes, np.uint8(sign_bit)).view(np.int8)
        signed = np.bitwise_and(codes, np.uint8(sign_bit - 1)).view(np.int8)
        np.bitwise_xor(signed, np.negative(negative), out=signed)
        np.add(signed, negative, out=signed)
        out = values[lo:hi].reshape(-1)
        np.copyto(out, signed, casting="unsafe")
        np.multiply(out, scale, out=out)

    for_each_chunk(count, chunk_tiles, work, values.nbytes)
    # rows the scaling above cannot do: E < bits with a code that is not 0 (a row of zero
    # codes is already +0), and E = 255 (Inf / NaN)
    special = np.flatnonzero((shared < bits) | (shared == 255))
    if special.size:
        codes = _codes_of_rows(raw, special, fmt, tile)
        needed = (shared[special] == 255) | codes.any(axis=1)
        special, codes = special[needed], codes[needed]
        values.reshape(-1, FACE_WIDTH)[special] = block_float_values(shared[special], codes, bits)
    return values


def _codes_of_rows(raw: np.ndarray, rows: np.ndarray, fmt: DataFormat, tile: TileShape) -> np.ndarray:
    """The 16 codes of the given face rows (flat row indices) of block-float tile bytes."""
    exp_bytes = fmt.exponent_section_size(tile.height, tile.width)
    tile_index, row_in_tile = np.divmod(rows, tile.face_rows)
    if fmt is DataFormat.Bfp8_b:
        columns = exp_bytes + row_in_tile[:, None] * FACE_WIDTH + np.arange(FACE_WIDTH)
        return raw[tile_index[:, None], columns]
    columns = exp_bytes + row_in_tile[:, None] * (FACE_WIDTH // 2) + np.arange(FACE_WIDTH // 2)
    packed = raw[tile_index[:, None], columns]
    codes = np.empty((rows.size, FACE_WIDTH), np.uint8)
    codes[:, 0::2] = packed & 0x0F
    codes[:, 1::2] = packed >> 4
    return codes


def tensor_tile(tensor) -> tuple[int, int]:
    """``(height, width)`` of a tiled tensor's tiles (``tensor.tile``; of its first piece for a mesh
    tensor; 32x32 when it names none)."""
    piece = tensor.pieces[0] if hasattr(tensor, "pieces") else tensor
    tile = getattr(piece, "tile", None)
    return tuple(getattr(tile, "tile_shape", None) or (32, 32))
