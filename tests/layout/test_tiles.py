"""Tiles and faces: face order by hand, tilize / untilize round trips, transposes, errors."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilefold.errors import LayoutError
from tilefold.layout import tiles as tiles_module
from tilefold.layout.tiles import (
    SUPPORTED_TILE_SHAPES,
    TileShape,
    face_order_index,
    num_tiles,
    padded_shape,
    row_major_index,
    rows_to_tiles,
    tile_shape,
    tiles_to_rows,
    tilize,
    transpose_of_faces,
    transpose_within_face,
    untilize,
)

ALL_TILES = [TileShape(h, w) for h, w in SUPPORTED_TILE_SHAPES]


def face_order_offset(r: int, c: int, tile: TileShape) -> int:
    """Offset of (r, c) inside a tile, written out from FACTS.md: faces row-major inside the
    tile, values row-major inside a face."""
    fh = tile.face_height
    face = (r // fh) * (tile.width // 16) + c // 16
    return face * fh * 16 + (r % fh) * 16 + c % 16


# --- face order by hand ------------------------------------------------------------------


def test_32x32_arange_lands_at_face_times_256_plus_r_times_16_plus_c():
    x = np.arange(32 * 32, dtype=np.int32).reshape(32, 32)
    t = tilize(x)
    assert t.shape == (1, 1024)
    for r in range(32):
        for c in range(32):
            face = 2 * (r // 16) + c // 16
            assert t[0, face * 256 + (r % 16) * 16 + c % 16] == x[r, c]
    # the first values of each face, written out
    assert list(t[0, :18]) == list(range(16)) + [32, 33]
    assert list(t[0, 256:258]) == [16, 17]        # face 1 = top-right
    assert list(t[0, 512:514]) == [512, 513]      # face 2 = bottom-left
    assert list(t[0, 768:770]) == [528, 529]      # face 3 = bottom-right


@pytest.mark.parametrize("tile", ALL_TILES, ids=str)
def test_face_order_of_every_tile_shape(tile):
    x = np.arange(tile.elements, dtype=np.int64).reshape(tile.height, tile.width)
    t = tilize(x, tile)[0]
    expected = np.empty(tile.elements, dtype=np.int64)
    for r in range(tile.height):
        for c in range(tile.width):
            expected[face_order_offset(r, c, tile)] = x[r, c]
    np.testing.assert_array_equal(t, expected)
    np.testing.assert_array_equal(face_order_index(tile), expected)
    np.testing.assert_array_equal(face_order_index(tile)[row_major_index(tile)], np.arange(tile.elements))


def test_tile_shapes_faces():
    assert (TileShape(16, 32).faces_r, TileShape(16, 32).faces_c) == (1, 2)
    assert (TileShape(32, 16).faces_r, TileShape(32, 16).faces_c) == (2, 1)
    assert TileShape(8, 32).face_shape == (8, 16) and TileShape(8, 32).num_faces == 2
    assert TileShape(1, 16).num_faces == 1
    assert tile_shape("16x32") == TileShape(16, 32) and tile_shape((32, 16)) == TileShape(32, 16)


def test_32x16_tile_is_row_major():
    x = np.arange(32 * 16).reshape(32, 16)
    np.testing.assert_array_equal(tilize(x, (32, 16))[0], x.reshape(-1))


def test_tiles_in_row_major_tile_order_with_batches_folded():
    x = np.arange(2 * 3 * 64 * 96, dtype=np.int32).reshape(2, 3, 64, 96)
    t = tilize(x)
    assert t.shape == (2 * 3 * 2 * 3, 1024)
    rows = tiles_to_rows(t)
    for b in range(6):
        for tr in range(2):
            for tc in range(3):
                block = x.reshape(6, 64, 96)[b, tr * 32:(tr + 1) * 32, tc * 32:(tc + 1) * 32]
                np.testing.assert_array_equal(rows[b * 6 + tr * 3 + tc], block)


def test_each_slice_is_padded_on_its_own():
    x = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5) + 1
    t = tilize(x, pad_value=-7)
    assert t.shape == (2, 1024)
    rows = tiles_to_rows(t)
    for b in range(2):
        np.testing.assert_array_equal(rows[b, :3, :5], x[b])
        assert (rows[b, 3:, :] == -7).all() and (rows[b, :, 5:] == -7).all()


def test_rank_1_is_one_row():
    x = np.arange(100, dtype=np.float32)
    assert padded_shape(x.shape) == (32, 128)
    assert num_tiles(x.shape) == 4
    t = tilize(x, pad_value=np.nan)
    rows = tiles_to_rows(t)
    np.testing.assert_array_equal(rows[:, 0, :].reshape(-1)[:100], x)
    assert np.isnan(rows[:, 1:, :]).all() and np.isnan(rows[3, 0, 4:]).all()
    np.testing.assert_array_equal(untilize(t, (100,)), x)


def test_padded_shape_and_num_tiles():
    assert padded_shape((2, 33, 47)) == (2, 64, 64)
    assert padded_shape((2, 33, 47), (16, 16)) == (2, 48, 48)
    assert num_tiles((2, 3, 33, 47)) == 6 * 2 * 2
    assert num_tiles((5, 0, 7)) == 0


def test_tiles_to_rows_and_back_match_index():
    rng = np.random.default_rng(3)
    for tile in ALL_TILES:
        rows = rng.standard_normal((5, tile.height, tile.width)).astype(np.float32)
        t = rows_to_tiles(rows, tile)
        np.testing.assert_array_equal(t, rows.reshape(5, -1)[:, face_order_index(tile)])
        np.testing.assert_array_equal(tiles_to_rows(t, tile), rows)
        np.testing.assert_array_equal(t[:, row_major_index(tile)], rows.reshape(5, -1))


def test_large_tilize_split_over_threads_matches_reference():
    h, w = 1024, 2560                                      # 10 MiB of float32: parallel path
    x = np.random.default_rng(0).standard_normal((h, w)).astype(np.float32)
    t = tilize(x)
    reference = x.reshape(h // 32, 32, w // 32, 32).transpose(0, 2, 1, 3).reshape(-1, 1024)[:, face_order_index()]
    np.testing.assert_array_equal(t, reference)
    np.testing.assert_array_equal(untilize(t, (h, w)), x)


def test_large_bfloat16_tilize_with_batches_and_padding():
    x = np.random.default_rng(1).standard_normal((3, 500, 1500)).astype(ml_dtypes.bfloat16)   # > 4 MiB
    t = tilize(x, pad_value=2.0)
    padded = np.full((3, 512, 1504), 2.0, ml_dtypes.bfloat16)
    padded[:, :500, :1500] = x
    reference = padded.reshape(3, 16, 32, 47, 32).transpose(0, 1, 3, 2, 4).reshape(-1, 1024)[:, face_order_index()]
    np.testing.assert_array_equal(t.view(np.uint16), reference.view(np.uint16))
    np.testing.assert_array_equal(untilize(t, x.shape).view(np.uint16), x.view(np.uint16))


def test_out_arrays_receive_the_result():
    x = np.arange(64 * 64, dtype=np.int32).reshape(64, 64)
    out = np.empty((4, 1024), np.int32)
    assert tilize(x, out=out) is out
    back = np.empty((64, 64), np.int32)
    assert untilize(out, (64, 64), out=back) is back
    np.testing.assert_array_equal(back, x)
    with pytest.raises(LayoutError, match="out"):
        tilize(x, out=np.empty((4, 1024), np.float32))


# --- round trips (hypothesis) -------------------------------------------------------------

DTYPES = [np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16), np.dtype(np.int32)]


@settings(max_examples=150, deadline=None)
@given(
    shape=st.lists(st.integers(0, 40), min_size=1, max_size=5).filter(lambda s: np.prod(s) <= 20000),
    tile=st.sampled_from(ALL_TILES),
    dtype=st.sampled_from(DTYPES),
    pad=st.integers(-100, 100),
    seed=st.integers(0, 2**31),
)
def test_untilize_inverts_tilize_and_pads_with_pad_value(shape, tile, dtype, pad, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-1000, 1000, size=shape).astype(dtype)
    t = tilize(x, tile, pad_value=pad)
    assert t.dtype == dtype and t.shape == (num_tiles(shape, tile), tile.elements)
    back = untilize(t, shape, tile)
    assert back.shape == tuple(shape) and back.dtype == dtype
    np.testing.assert_array_equal(back.astype(np.float64), x.astype(np.float64))
    # the padded block: data where the tensor is, pad_value everywhere else
    padded = untilize(t, padded_shape(shape, tile), tile)
    folded = x.reshape((1, 1) + tuple(shape)) if len(shape) == 1 else x
    h, w = folded.shape[-2:]
    assert padded.shape[-2:] == (-(-h // tile.height) * tile.height, -(-w // tile.width) * tile.width)
    mask = np.ones(padded.shape[-2:], dtype=bool)
    mask[:h, :w] = False
    assert (padded.astype(np.float64)[..., mask] == pad).all()


# --- transposes --------------------------------------------------------------------------


def test_transposes_of_a_32x32_tile_compose_to_the_tile_transpose():
    x = np.arange(1024, dtype=np.int32).reshape(32, 32)
    t = tilize(x)
    within = transpose_within_face(t)
    faces = within.reshape(4, 16, 16)
    for f in range(4):
        np.testing.assert_array_equal(faces[f], t.reshape(4, 16, 16)[f].T)
    swapped = transpose_of_faces(t).reshape(4, 256)
    np.testing.assert_array_equal(swapped[[0, 2, 1, 3]], t.reshape(4, 256))
    np.testing.assert_array_equal(transpose_of_faces(transpose_within_face(t)), tilize(x.T))


def test_transpose_within_face_of_16x32_and_32x16():
    for tile in (TileShape(16, 32), TileShape(32, 16), TileShape(16, 16)):
        x = np.arange(tile.elements).reshape(tile.height, tile.width)
        t = transpose_within_face(tilize(x, tile), tile)
        for f in range(tile.num_faces):
            np.testing.assert_array_equal(t[0, f * 256:(f + 1) * 256].reshape(16, 16),
                                          tilize(x, tile)[0, f * 256:(f + 1) * 256].reshape(16, 16).T)


@pytest.mark.parametrize("tile", [TileShape(8, 32), TileShape(1, 16), TileShape(4, 16)], ids=str)
def test_transpose_within_face_needs_height_16_or_32(tile):
    with pytest.raises(LayoutError, match="height 16 or 32"):
        transpose_within_face(np.zeros((1, tile.elements)), tile)


@pytest.mark.parametrize("tile", [TileShape(16, 32), TileShape(32, 16), TileShape(16, 16), TileShape(8, 32)], ids=str)
def test_transpose_of_faces_needs_faces_in_both_directions(tile):
    with pytest.raises(LayoutError, match="more than one face in both directions"):
        transpose_of_faces(np.zeros((1, tile.elements)), tile)


# --- malformed input -----------------------------------------------------------------------


@pytest.mark.parametrize("spec", [(64, 64), (32, 8), "3x32", (0, 32)])
def test_unsupported_tile_shapes(spec):
    with pytest.raises(LayoutError, match="not supported"):
        tilize(np.zeros((32, 32)), spec)


def test_wrong_tile_count_names_tiles_and_expected_count():
    t = tilize(np.zeros((64, 64), np.float32))
    with pytest.raises(LayoutError, match=r"tiles holds 3 tiles but shape \(64, 96\) needs 6"):
        untilize(t[:3], (64, 96))
    with pytest.raises(LayoutError, match=r"tiles holds 4 tiles .* needs 2"):
        untilize(t, (2, 10, 10))
    with pytest.raises(LayoutError, match=r"tiles has shape \(4, 512\)"):
        untilize(t.reshape(4, 2, 512)[:, 0], (64, 64))


def test_wrong_dtype_and_rank():
    with pytest.raises(LayoutError, match="x has dtype"):
        tilize(np.array([["a", "b"]]))
    with pytest.raises(LayoutError, match="x has dtype object"):
        tilize(np.array([[object()]]))
    with pytest.raises(LayoutError, match="rank 0"):
        tilize(np.float32(1.0))
    with pytest.raises(LayoutError, match="pad_value"):
        tilize(np.zeros((3, 3), np.uint8), pad_value=300)
    with pytest.raises(LayoutError, match="pad_value"):
        tilize(np.zeros((3, 3), np.int32), pad_value=0.5)
    with pytest.raises(LayoutError, match="rows has shape"):
        rows_to_tiles(np.zeros((2, 32, 16)))


def test_worker_count_is_positive():
    from tilefold.layout.chunks import worker_count

    assert worker_count() >= 1
