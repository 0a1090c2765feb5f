"""Data formats: bfloat16 rounding, bfp8_b / bfp4_b bytes against hand-derived vectors and an
independent scalar reference, tile byte layout, raw bytes, malformed input."""

from __future__ import annotations

import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilefold.errors import LayoutError
from tilefold.layout import formats
from tilefold.layout.formats import (
    DataFormat,
    block_float_codes,
    data_format,
    from_bytes,
    pack_tiles,
    to_bfloat16,
    to_bytes,
    unpack_tiles,
)
from tilefold.layout.tiles import SUPPORTED_TILE_SHAPES, TileShape, tilize

VECTORS = json.loads((Path(__file__).parents[1] / "conformance" / "bfp8_vectors.json").read_text())
FACE = TileShape(16, 16)            # one face: 16 rows of 16 values, one exponent each
BLOCK_FORMATS = [DataFormat.Bfp8_b, DataFormat.Bfp4_b]


def hex_bits(text: str) -> int:
    return int(text, 16)


def floats(bits) -> np.ndarray:
    return np.array(bits, dtype=np.uint32).view(np.float32)


def codes_of(raw_tile: np.ndarray, fmt: DataFormat, tile: TileShape) -> np.ndarray:
    """Codes of a tile's face rows, read straight from the bytes (element 2i low nibble)."""
    body = raw_tile[fmt.exponent_section_size(tile.height, tile.width):]
    if fmt is DataFormat.Bfp8_b:
        return body.copy()
    codes = np.empty(body.size * 2, np.uint8)
    codes[0::2] = body & 0x0F
    codes[1::2] = body >> 4
    return codes


# --- an independent scalar reference, written from FACTS.md ---------------------------------


def reference_pack_row(bits: list[int], mantissa_bits: int) -> tuple[int, list[int]]:
    exponents = [(b >> 23) & 0xFF for b in bits]
    shared = max(exponents)
    split = 24 - mantissa_bits
    tie = 1 << (split - 1)
    codes = []
    for b, e in zip(bits, exponents):
        if e == 0:
            codes.append(0)
            continue
        significand = (b & 0x7FFFFF) | 0x800000
        shifted = significand >> (shared - e)
        m, rest = shifted >> split, shifted & ((1 << split) - 1)
        if rest > tie or (rest == tie and m % 2 == 1):
            m += 1
        m = min(m, (1 << mantissa_bits) - 1)
        sign = (b >> 31) if m else 0
        codes.append(sign << mantissa_bits | m)
    return shared, codes


def reference_unpack(shared: int, code: int, mantissa_bits: int) -> int:
    mask = (1 << mantissa_bits) - 1
    m, sign = code & mask, code >> mantissa_bits
    if m == 0:
        return 0
    shift = 0
    while not (m << shift) & (1 << (mantissa_bits - 1)):
        shift += 1
    if shift > shared:
        return 0
    fraction = (m << (shift + 1)) & mask
    return sign << 31 | (shared - shift) << 23 | fraction << (23 - mantissa_bits)


# float32 bit patterns that cover every exponent, the special values and rounding ties
float_bits = st.one_of(
    st.integers(0, 2**32 - 1),
    st.builds(lambda s, e, m: s << 31 | e << 23 | m, st.integers(0, 1), st.integers(0, 255),
              st.sampled_from([0, 1, 0x10000, 0x18000, 0x7FFFFF, 0x7F0000, 0x100000, 0x300000])),
    st.builds(lambda s, e, m: s << 31 | e << 23 | m,
              st.integers(0, 1), st.integers(120, 135), st.integers(0, 0x7FFFFF)),
)


# --- bfloat16 ------------------------------------------------------------------------------


@pytest.mark.parametrize("case", VECTORS["bfloat16_rne"], ids=lambda c: c["in"])
def test_bfloat16_round_to_nearest_even_vectors(case):
    out = to_bfloat16(floats([hex_bits(case["in"])]))
    assert out.dtype == np.dtype(ml_dtypes.bfloat16)
    assert int(out.view(np.uint16)[0]) == hex_bits(case["out"]), case["why"]


def test_bfloat16_bytes_are_little_endian_and_exact_back():
    raw = to_bytes(np.array([1.0, -2.5], np.float32), "bfloat16")
    assert list(raw) == [0x80, 0x3F, 0x20, 0xC0]
    np.testing.assert_array_equal(from_bytes(raw, "bf16", 2), [1.0, -2.5])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=64))
def test_bfloat16_matches_the_rounding_formula(bits):
    u = np.array(bits, np.uint32)
    x = u.view(np.float32)
    got = to_bfloat16(x).view(np.uint16)
    nan = np.isnan(x)
    expected = ((u.astype(np.uint64) + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    np.testing.assert_array_equal(got[~nan], expected[~nan])
    assert (got[nan] == 0x7FC0).all()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 2**16 - 1), min_size=1, max_size=64))
def test_bfloat16_input_is_kept_bit_exact_except_nans(bits):
    x = np.array(bits, np.uint16).view(ml_dtypes.bfloat16)
    got = to_bfloat16(x).view(np.uint16)
    nan = (np.array(bits) & 0x7FFF) > 0x7F80
    np.testing.assert_array_equal(got[~nan], np.array(bits, np.uint16)[~nan])
    assert (got[nan] == 0x7FC0).all()
    np.testing.assert_array_equal(x.view(np.uint16), np.array(bits, np.uint16))   # input untouched


# --- block floats: hand-derived vectors ---------------------------------------------------


def _rows(key):
    return [(key, row) for row in VECTORS[key]]


@pytest.mark.parametrize("key,row", _rows("bfp8_b_rows") + _rows("bfp4_b_rows"),
                         ids=lambda v: v if isinstance(v, str) else v["name"])
def test_block_float_vectors(key, row):
    fmt = DataFormat.Bfp8_b if key == "bfp8_b_rows" else DataFormat.Bfp4_b
    values = floats([hex_bits(v["in"]) for v in row["values"]])
    tile = np.zeros((1, FACE.elements), np.float32)
    tile[0, 16:32] = values                       # face row 1; row 0 stays zero
    raw = pack_tiles(tile, fmt, FACE)
    assert raw.shape == (1, fmt.tile_size(16, 16))
    assert raw[0, 0] == 0 and raw[0, 1] == row["shared_exponent"]
    codes = codes_of(raw[0], fmt, FACE)[16:32]
    for got, v in zip(codes, row["values"]):
        assert got == hex_bits(v["code"]), f"{v['in']}: {v['why']}"
    body = raw[0, fmt.exponent_section_size(16, 16):]
    if "bytes" in row:
        assert list(body[8:16]) == [hex_bits(b) for b in row["bytes"]], row["bytes_why"]
    if "first_word" in row:
        assert body[16:20].view("<u4")[0] == hex_bits(row["first_word"]), row["first_word_why"]
    back = unpack_tiles(raw, fmt, FACE)[0, 16:32]
    for got, v in zip(back, row["values"]):
        if "out" in v:
            assert got == np.float32(v["out"]), f"{v['in']}: {v['why']}"
            assert np.signbit(got) == (v["out"] < 0), f"{v['in']}: a zero unpacks to +0"
        else:
            assert int(np.float32(got).view(np.uint32)) == hex_bits(v["out_bits"]), f"{v['in']}: {v['why']}"


@pytest.mark.parametrize("fmt", ["bfp8_b", "bfp4_b"])
def test_tile_sizes(fmt):
    sizes = VECTORS["tile_sizes"][fmt]
    for name, size in sizes.items():
        h, w = (int(v) for v in name.split("x"))
        assert data_format(fmt).tile_size(h, w) == size, VECTORS["tile_sizes"]["why"]
        assert pack_tiles(np.zeros((3, h * w), np.float32), fmt, (h, w)).shape == (3, size)
    assert DataFormat.Float16_b.tile_size() == 2048 and DataFormat.Float32.tile_size() == 4096


# --- block floats: tile byte layout -------------------------------------------------------


def test_exponent_section_is_face_rows_in_face_order():
    r = np.arange(32)[:, None]
    c = np.arange(32)[None, :]
    rows = np.exp2(r + 40 * (c // 16) - 50).astype(np.float32)   # exponent depends on row and face column
    raw = pack_tiles(tilize(rows), "bfp8_b")[0]
    for face in range(4):
        row_block, col_block = divmod(face, 2)
        for i in range(16):
            assert raw[face * 16 + i] == 127 + 16 * row_block + i + 40 * col_block - 50
    assert (raw[64:] == 0x40).all()


def test_mantissa_bytes_are_in_face_order():
    rows = np.ones((32, 32), np.float32)
    rows[17, 18] = 1.5                              # face 3, face row 1, column 2
    rows[3, 20] = -1.0                              # face 1, face row 3, column 4
    raw = pack_tiles(tilize(rows), "bfp8_b")[0]
    assert raw[64 + 3 * 256 + 1 * 16 + 2] == 0x60
    assert raw[64 + 1 * 256 + 3 * 16 + 4] == 0xC0
    assert (np.delete(raw[64:], [3 * 256 + 18, 256 + 52]) == 0x40).all()


def test_tiny_tile_exponent_section_is_padded_to_16_bytes():
    values = np.concatenate([np.ones(16), np.full(16, -2.0)]).astype(np.float32)[None]
    raw = pack_tiles(values, "bfp8_b", (1, 32))[0]
    assert raw.size == 48
    assert list(raw[:2]) == [127, 128] and (raw[2:16] == 0).all()
    assert (raw[16:32] == 0x40).all() and (raw[32:48] == 0xC0).all()
    np.testing.assert_array_equal(unpack_tiles(raw, "bfp8_b", (1, 32))[0], values[0])


# --- block floats: properties --------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.lists(float_bits, min_size=16, max_size=16), min_size=1, max_size=16),
       fmt=st.sampled_from(BLOCK_FORMATS))
def test_pack_and_unpack_match_the_scalar_reference(rows, fmt):
    bits = fmt.mantissa_bits
    tile = np.zeros((1, FACE.elements), np.uint32)
    tile[0, : 16 * len(rows)] = np.array(rows, np.uint32).reshape(-1)
    raw = pack_tiles(tile.view(np.float32), fmt, FACE)[0]
    codes = codes_of(raw, fmt, FACE)
    back = unpack_tiles(raw[None], fmt, FACE)[0].view(np.uint32)
    for i, row in enumerate(rows):
        shared, expected = reference_pack_row(row, bits)
        assert raw[i] == shared
        assert list(codes[16 * i:16 * i + 16]) == expected
        assert list(back[16 * i:16 * i + 16]) == [reference_unpack(shared, c, bits) for c in expected]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), fmt=st.sampled_from(BLOCK_FORMATS))
def test_unpack_of_any_bytes_matches_the_scalar_reference(seed, fmt):
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, (1, fmt.tile_size(16, 16)), dtype=np.uint8)
    raw[0, :16] = rng.choice(np.array([0, 1, 2, 3, 5, 6, 7, 8, 100, 127, 200, 254, 255], np.uint8), 16)
    back = unpack_tiles(raw, fmt, FACE)[0].view(np.uint32)
    codes = codes_of(raw[0], fmt, FACE)
    expected = [reference_unpack(int(raw[0, i // 16]), int(codes[i]), fmt.mantissa_bits) for i in range(256)]
    assert list(back) == expected


def random_float_bits(rng: np.random.Generator, shape) -> np.ndarray:
    """float32 bit patterns: a third fully random (NaN, Inf, denormals included), a third with
    exponents clustered per 16-value row, a third with rounding-sensitive mantissas."""
    n = int(np.prod(shape))
    anything = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    base = np.repeat(rng.integers(0, 256, -(-n // 16)), 16)[:n]
    clustered = np.clip(base - rng.integers(0, 10, n), 0, 255).astype(np.uint32) << 23
    clustered |= rng.integers(0, 1 << 23, n, dtype=np.uint32) | (rng.integers(0, 2, n, dtype=np.uint32) << 31)
    ties = rng.choice(np.array([0, 1, 0x10000, 0x18000, 0x7FFFFF, 0x7F0000, 0x100000, 0x300000], np.uint32), n)
    tied = (rng.integers(115, 140, n).astype(np.uint32) << 23) | ties
    pick = rng.integers(0, 3, n)
    return np.choose(pick, [anything, clustered, tied]).astype(np.uint32).reshape(shape)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), fmt=st.sampled_from(BLOCK_FORMATS), tile=st.sampled_from(SUPPORTED_TILE_SHAPES),
       count=st.integers(1, 4))
def test_unpack_then_pack_is_idempotent_after_one_round(seed, fmt, tile, count):
    t = TileShape(*tile)
    x = random_float_bits(np.random.default_rng(seed), (count, t.elements)).view(np.float32)
    once = pack_tiles(x, fmt, t)
    twice = pack_tiles(unpack_tiles(once, fmt, t), fmt, t)
    np.testing.assert_array_equal(twice, once)


@pytest.mark.parametrize("fmt", BLOCK_FORMATS, ids=str)
def test_large_pack_over_chunks_and_threads_matches_direct_rules(fmt):
    rng = np.random.default_rng(11)
    count = 2 * formats.BLOCK_FLOAT_CHUNK_ROWS // 64 + 3           # several chunks, > 4 MiB of input
    u = random_float_bits(rng, (count * 64, 16))
    x = u.view(np.float32).reshape(count, 1024)
    raw = pack_tiles(x, fmt)
    shared, codes = block_float_codes(x.reshape(-1, 16), fmt.mantissa_bits)
    np.testing.assert_array_equal(raw[:, :64].reshape(-1), shared)
    np.testing.assert_array_equal(np.concatenate([codes_of(t, fmt, TileShape(32, 32)) for t in raw]), codes.reshape(-1))
    for i in rng.integers(0, count * 64, 50):                            # and the scalar reference
        assert reference_pack_row([int(b) for b in u[i]], fmt.mantissa_bits) == (shared[i], list(codes[i]))
    back = unpack_tiles(raw, fmt).reshape(-1, 16).view(np.uint32)
    for i in rng.integers(0, count * 64, 50):
        assert list(back[i]) == [reference_unpack(int(shared[i]), int(c), fmt.mantissa_bits) for c in codes[i]]


def test_bfp8_of_bfloat16_values_is_close_to_numpy():
    x = np.random.default_rng(5).standard_normal((4, 1024)).astype(ml_dtypes.bfloat16)
    back = unpack_tiles(pack_tiles(x, "bfp8_b"), "bfp8_b")
    ref = x.astype(np.float64)
    row_max = np.abs(ref).reshape(-1, 16).max(axis=1, keepdims=True)
    err = np.abs(back.astype(np.float64) - ref).reshape(-1, 16)
    exponent_step = np.exp2(np.floor(np.log2(row_max)))                 # 2^(E-127)
    assert (err <= exponent_step * 2.0**-6 / 2 + 1e-30).all()           # half a code step


# --- raw bytes of the other formats ---------------------------------------------------------


@pytest.mark.parametrize("fmt,values", [
    ("float32", np.array([1.5, -0.0, np.inf], np.float32)),
    ("int32", np.array([-5, 0, 2**31 - 1], np.int32)),
    ("uint32", np.array([0, 2**32 - 1], np.uint32)),
    ("uint16", np.array([7, 65535], np.uint16)),
    ("uint8", np.array([0, 255], np.uint8)),
])
def test_row_major_bytes_round_trip(fmt, values):
    raw = to_bytes(values, fmt)
    assert raw.dtype == np.uint8 and raw.size == values.size * data_format(fmt).element_size
    np.testing.assert_array_equal(raw, values.view(np.uint8))
    back = from_bytes(np.concatenate([raw, np.zeros(8, np.uint8)]), fmt, values.size)
    np.testing.assert_array_equal(back, values)
    assert back.dtype == data_format(fmt).host_dtype


def test_pack_tiles_of_plain_formats_are_their_bytes():
    x = np.arange(2 * 1024, dtype=np.float32).reshape(2, 1024)
    np.testing.assert_array_equal(pack_tiles(x, "float32"), x.view(np.uint8))
    np.testing.assert_array_equal(unpack_tiles(pack_tiles(x, "bfloat16"), "bfloat16"),
                                  to_bfloat16(x).astype(np.float32))
    ints = np.arange(1024, dtype=np.int64)[None] - 500
    np.testing.assert_array_equal(unpack_tiles(pack_tiles(ints, "int32"), "int32"), ints)


# --- malformed input ---------------------------------------------------------------------


def test_malformed_input_raises_layout_errors_naming_the_argument():
    with pytest.raises(LayoutError, match=r"values has shape \(2, 1000\)"):
        pack_tiles(np.zeros((2, 1000), np.float32), "bfp8_b")
    with pytest.raises(LayoutError, match="raw has dtype float32"):
        unpack_tiles(np.zeros((1, 1088), np.float32), "bfp8_b")
    with pytest.raises(LayoutError, match=r"raw has shape \(1, 1024\)"):
        unpack_tiles(np.zeros((1, 1024), np.uint8), "bfp8_b")
    with pytest.raises(LayoutError, match="no row-major bytes"):
        to_bytes(np.zeros(4, np.float32), "bfp8_b")
    with pytest.raises(LayoutError, match="raw holds 3 bytes"):
        from_bytes(np.zeros(3, np.uint8), "float32", 1)
    with pytest.raises(LayoutError, match="values holds values in"):
        to_bytes(np.array([300]), "uint8")
    with pytest.raises(LayoutError, match="not whole numbers"):
        to_bytes(np.array([1.5]), "int32")
    with pytest.raises(LayoutError, match="values has dtype complex"):
        pack_tiles(np.zeros((1, 1024), np.complex64), "bfp8_b")
    with pytest.raises(LayoutError, match="unknown data format 'bfloat7'"):
        data_format("bfloat7")
    with pytest.raises(LayoutError, match="only in tile layout"):
        DataFormat.Bfp4_b.element_size
    with pytest.raises(LayoutError, match="not supported"):
        pack_tiles(np.zeros((1, 64 * 64), np.float32), "bfp8_b", (64, 64))
