"""Host tensors of other tiles than 32x32: ``ttnn.Tile((h, w))`` and ``from_numpy(..., tile=...)``.
The tile's faces and byte size, the padded shape, values that round-trip, a tile moving with the
tensor to a device; TT-Lang operations copy such tensors through buffers of the same tiles
(tests/ttl/test_ttl_tiny_tiles.py has more)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import copy_first_tile
from tilefold.errors import KernelError, LayoutError
from tilefold.layout.host import from_device_pages, to_device_pages


def _next_line() -> int:
    return inspect.currentframe().f_back.f_lineno + 1


@pytest.mark.parametrize("shape, faces, face", [((32, 32), 4, (16, 16)), ((16, 32), 2, (16, 16)),
                                                 ((32, 16), 2, (16, 16)), ((16, 16), 1, (16, 16)),
                                                 ((1, 32), 2, (1, 16)), ((8, 32), 2, (8, 16)), ((4, 16), 1, (4, 16))])
def test_a_tile_has_its_faces_and_byte_size(shape, faces, face):
    tile = ttnn.Tile(shape)
    h, w = shape
    assert tile.tile_shape == shape and tile.num_faces == faces and tile.face_shape == face
    assert tile.get_tile_size(ttnn.bfloat16) == 2 * h * w
    assert tile.get_tile_size(ttnn.float32) == 4 * h * w
    exponents = -(-(h * w // 16) // 16) * 16         # one byte per 16 values, padded to 16 bytes
    assert tile.get_tile_size(ttnn.bfloat8_b) == h * w + exponents


def test_a_tensor_of_16x32_tiles_keeps_its_tile_and_values():
    values = np.random.default_rng(0).standard_normal((20, 64)).astype(np.float32)
    tensor = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, tile=ttnn.Tile((16, 32)))
    assert tensor.tile.tile_shape == (16, 32) and tuple(tensor.padded_shape) == (32, 64)
    assert not tensor.has_full_tiles
    expected = ttnn.to_numpy(ttnn.from_numpy(values, dtype=ttnn.bfloat16))
    np.testing.assert_array_equal(ttnn.to_numpy(tensor), expected)
    small = ttnn.from_numpy(values[:3], dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, tile=(1, 32))
    assert tuple(small.padded_shape) == (3, 64) and small.tile == ttnn.Tile((1, 32))
    device = ttnn.open_device(device_id=0)
    try:
        assert ttnn.to_device(small, device).tile.tile_shape == (1, 32)
    finally:
        ttnn.close_device(device)
    full = ttnn.from_numpy(values, layout=ttnn.TILE_LAYOUT)
    assert full.tile.tile_shape == (32, 32) and full.has_full_tiles
    assert full.get_tile().get_tile_size(ttnn.bfloat8_b) == 1088 and small.get_tile().get_tile_size(ttnn.float32) == 128


def test_block_float_values_of_tiny_tiles_are_those_of_their_pages():
    """bfloat8_b shares an exponent per 16 values of a face row, the same groups in every tile shape:
    the values of a tensor of 1x32 tiles are those its 1x32 device pages hold."""
    values = np.random.default_rng(1).standard_normal((6, 64)).astype(np.float32) * 10.0 ** np.arange(6)[:, None]
    tensor = ttnn.from_numpy(values, dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, tile=ttnn.Tile((1, 32)))
    fmt = ttnn.bfloat8_b.data_format
    pages = to_device_pages(values, fmt, "TILE", (1, 32))
    assert pages.size == 12 * ttnn.Tile((1, 32)).get_tile_size(ttnn.bfloat8_b)
    np.testing.assert_array_equal(ttnn.to_numpy(tensor), from_device_pages(pages, values.shape, fmt, "TILE", (1, 32)))


def test_a_tile_that_does_not_exist_is_one_error_at_its_line():
    with pytest.raises(LayoutError, match=r"ttnn.Tile\(\(3, 32\)\): a tile is \(height, width\), one of") as info:
        line = _next_line()
        ttnn.Tile((3, 32))
    assert info.value.location.line == line and info.value.location.file == __file__
    with pytest.raises(LayoutError, match="transposed tiles are not supported by tilefold yet"):
        ttnn.Tile((16, 32), transpose_tile=True)
    with pytest.raises(LayoutError, match=r"tile='16x32': give a ttnn.Tile\(\(height, width\)\)"):
        ttnn.from_numpy(np.zeros((32, 32), np.float32), tile="16x32")


def test_an_operation_copies_a_tensor_of_16x32_tiles_and_a_tile_mismatch_is_one_error():
    values = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    out = ttnn.from_numpy(np.zeros_like(values), layout=ttnn.TILE_LAYOUT)
    copy_first_tile(ttnn.from_numpy(values, layout=ttnn.TILE_LAYOUT, tile=ttnn.Tile((32, 32))), out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), values)
    small = ttnn.from_numpy(values, layout=ttnn.TILE_LAYOUT, tile=ttnn.Tile((16, 32)))
    small_out = ttnn.from_numpy(np.zeros_like(values), layout=ttnn.TILE_LAYOUT, tile=ttnn.Tile((16, 32)))
    copy_first_tile(small, small_out)                     # tile (0, 0) of 16x32 tiles: the first 16 rows
    expected = np.zeros_like(values)
    expected[:16] = values[:16]
    np.testing.assert_array_equal(ttnn.to_numpy(small_out), expected)
    with pytest.raises(KernelError, match=r"ttl.copy between out \(32x32 tiles\) and block \(16x32 tiles\)") as info:
        copy_first_tile(small, out)
    lines, start = inspect.getsourcelines(copy_first_tile.function)
    assert info.value.location.line == start + next(i for i, line in enumerate(lines) if "copy(block, out" in line)
