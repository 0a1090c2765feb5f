"""Host transfers: the pages TT-NN writes for TILE and ROW_MAJOR tensors, and back."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tilefold.errors import LayoutError
from tilefold.layout.formats import pack_tiles, to_bfloat16, unpack_tiles
from tilefold.layout.host import from_device_pages, num_pages, page_size, tensor_layout, to_device_pages
from tilefold.layout.tiles import face_order_index, tilize

RNG = np.random.default_rng(7)


def test_tile_bfloat16_pages_are_tilized_rounded_values():
    x = RNG.standard_normal((64, 96)).astype(np.float32)
    pages = to_device_pages(x, "bfloat16", "TILE")
    assert pages.shape == (6, 2048) and pages.dtype == np.uint8
    # page 4 = tile row 1, tile column 1; its first 16 values are row 32, columns 32..47
    first_face_row = pages[4, :32].view(np.uint16)
    np.testing.assert_array_equal(first_face_row, to_bfloat16(x[32, 32:48]).view(np.uint16))
    # the whole page against an explicit reference built from the face-order index
    tile = x[32:64, 32:64].reshape(-1)[face_order_index()]
    np.testing.assert_array_equal(pages[4].view(np.uint16), to_bfloat16(tile).view(np.uint16))


def test_tile_padding_is_pad_value():
    x = np.ones((3, 5), np.float32)
    pages = to_device_pages(x, "bfloat16", "TILE", pad_value=-np.inf)
    face0 = pages[0, :512].view(np.uint16).reshape(16, 16)     # face 0: rows 0..15, columns 0..15
    assert (face0[:3, :5] == 0x3F80).all()
    assert (face0[3:, :] == 0xFF80).all() and (face0[:, 5:] == 0xFF80).all()
    assert (pages[0, 512:].view(np.uint16) == 0xFF80).all()   # faces 1..3 are all padding


@pytest.mark.parametrize("fmt", ["float32", "bfloat16", "bfloat8_b", "bfloat4_b"])
@pytest.mark.parametrize("shape", [(2, 3, 33, 47), (100,), (64, 64), (1, 5, 31)])
def test_tile_round_trip_equals_the_format_round_trip(fmt, shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    pages = to_device_pages(x, fmt, "TILE")
    assert pages.shape == (num_pages(shape, "TILE"), page_size(shape, fmt, "TILE"))
    back = from_device_pages(pages, shape, fmt, "TILE")
    assert back.shape == shape and back.dtype == np.float32
    expected = unpack_tiles(pack_tiles(tilize(x), fmt), fmt)          # what the device holds, as values
    np.testing.assert_array_equal(tilize(back), expected)             # (padding is 0 on both sides)


def test_bfp8_pages_match_pack_tiles_and_are_close_to_the_input():
    x = RNG.standard_normal((3, 64, 64)).astype(np.float32)
    pages = to_device_pages(x, "bfloat8_b")
    np.testing.assert_array_equal(pages, pack_tiles(tilize(x), "bfloat8_b"))
    back = from_device_pages(pages, x.shape, "bfloat8_b")
    assert np.abs(back - x).max() <= np.abs(x).max() * 2.0**-6


def test_row_major_pages_are_sticks_of_the_last_dim():
    x = RNG.standard_normal((2, 3, 5)).astype(np.float32)
    pages = to_device_pages(x, "bfloat16", "ROW_MAJOR")
    assert pages.shape == (6, 10)
    for i, row in enumerate(x.reshape(6, 5)):
        np.testing.assert_array_equal(pages[i].view(np.uint16), to_bfloat16(row).view(np.uint16))
    back = from_device_pages(pages, x.shape, "bfloat16", "ROW_MAJOR")
    np.testing.assert_array_equal(back, to_bfloat16(x).astype(np.float32))
    f32 = to_device_pages(x, "float32", "ROW_MAJOR")
    np.testing.assert_array_equal(from_device_pages(f32, x.shape, "float32", "ROW_MAJOR"), x)
    assert to_device_pages(np.arange(7.0), "float32", "ROW_MAJOR").shape == (1, 28)


@pytest.mark.parametrize("layout", ["TILE", "ROW_MAJOR"])
def test_native_bfloat16_comes_back_as_the_stored_bfloat16_values(layout):
    x = RNG.standard_normal((3, 40, 70)).astype(np.float32)
    pages = to_device_pages(x, "bfloat16", layout)
    back = from_device_pages(pages, x.shape, "bfloat16", layout, native=True)
    assert back.dtype == ml_dtypes.bfloat16 and back.shape == x.shape
    np.testing.assert_array_equal(back.view(np.uint16), to_bfloat16(x).view(np.uint16))
    back[0, 0, 0] = 5                                     # a copy: the pages are untouched
    np.testing.assert_array_equal(from_device_pages(pages, x.shape, "bfloat16", layout, native=True)
                                  .view(np.uint16), to_bfloat16(x).view(np.uint16))
    # other formats are as without native
    f32 = to_device_pages(x, "float32", layout)
    assert from_device_pages(f32, x.shape, "float32", layout, native=True).dtype == np.float32


def test_integer_formats_keep_integers():
    x = np.arange(-40, 40, dtype=np.int64).reshape(2, 40)
    for layout in ("TILE", "ROW_MAJOR"):
        back = from_device_pages(to_device_pages(x, "int32", layout), x.shape, "int32", layout)
        assert back.dtype == np.int32
        np.testing.assert_array_equal(back, x)
    u = np.array([[0, 65535]], np.uint16)
    np.testing.assert_array_equal(from_device_pages(to_device_pages(u, "uint16"), u.shape, "uint16"), u)


def test_bfloat16_input_and_layout_spellings():
    x = RNG.standard_normal((32, 32)).astype(ml_dtypes.bfloat16)
    pages = to_device_pages(x, "bf16", "tile")
    np.testing.assert_array_equal(pages[0].view(np.uint16), tilize(x)[0].view(np.uint16))
    assert tensor_layout("ttnn.ROW_MAJOR_LAYOUT") == "ROW_MAJOR" and tensor_layout("Tile") == "TILE"


def test_malformed_input():
    x = np.zeros((4, 4), np.float32)
    with pytest.raises(LayoutError, match="fmt bfloat8_b exists only in tile layout"):
        to_device_pages(x, "bfloat8_b", "ROW_MAJOR")
    with pytest.raises(LayoutError, match="fmt bfloat4_b exists only in tile layout"):
        from_device_pages(np.zeros((4, 8), np.uint8), (4, 4), "bfloat4_b", "ROW_MAJOR")
    with pytest.raises(LayoutError, match="x has dtype <U1"):
        to_device_pages(np.array([["a"]]), "bfloat16")
    with pytest.raises(LayoutError, match="x has dtype complex"):
        to_device_pages(np.zeros((2, 2), np.complex64), "float32")
    with pytest.raises(LayoutError, match="x has dtype float32 with values that are not whole numbers"):
        to_device_pages(np.full((2, 2), 0.5, np.float32), "int32")
    with pytest.raises(LayoutError, match="x holds values in"):
        to_device_pages(np.full((2, 2), 70000), "uint16")
    with pytest.raises(LayoutError, match="x is a scalar"):
        to_device_pages(np.float32(3), "float32")
    with pytest.raises(LayoutError, match="layout 'WIDE'"):
        to_device_pages(x, "float32", "WIDE")
    with pytest.raises(LayoutError, match=r"pages holds 2048 bytes .* is 2 pages of 2048 bytes"):
        from_device_pages(np.zeros((1, 2048), np.uint8), (32, 64), "bfloat16")
    with pytest.raises(LayoutError, match="pages has dtype float32"):
        from_device_pages(np.zeros((1, 1024), np.float32), (32, 32), "bfloat16")
    with pytest.raises(LayoutError, match="pad_value"):
        to_device_pages(np.zeros((3, 3), np.int32), "int32", pad_value=0.5)
