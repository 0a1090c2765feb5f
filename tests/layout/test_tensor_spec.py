"""TT-NN TensorSpec: shapes, pages, sharding, placement and validation."""

import math

import numpy as np
import pytest

from tilefold.arch import BLACKHOLE_P150, WORMHOLE_B0_N150
from tilefold.arch.cores import CoreCoord, CoreRange, CoreRangeSet
from tilefold.errors import LayoutError
from tilefold.layout.metal_layout import LinearMetalLayout, MetalLayout
from tilefold.layout.tensor_spec import (
    L1_MEMORY_CONFIG,
    Layout,
    MemoryConfig,
    NdShardSpec,
    ShardMode,
    ShardSpec,
    TensorSpec,
)


def grid(x, y, x0=0, y0=0):
    return CoreRangeSet([CoreRange((x0, y0), (x0 + x - 1, y0 + y - 1))])


def test_tile_interleaved_shapes():
    spec = TensorSpec((2, 33, 128), "bfloat16")
    assert spec.padded_shape == (2, 64, 128)
    assert spec.stride == (8192, 128, 1)
    assert spec.physical_shape == (128, 128)
    assert spec.page_shape == (32, 32) and spec.page_size == 2048
    assert spec.num_pages == 16 and spec.buffer_size == 16 * 2048
    assert spec.shard_shape is None and spec.grid_shape is None
    # The 2-D physical shape is the factory's formula over the stride.
    s, p = spec.stride, spec.padded_shape
    assert spec.physical_shape == (s[0] * p[0] // s[-2], s[-2])
    # Same strides as tt-mlir's host strides for the same tensor.
    assert spec.stride == MetalLayout.create((2, 33, 128)).host_strides
    assert spec.padding_elements() == 128 * 128 - 2 * 33 * 128


def test_row_major_interleaved_pages_are_sticks():
    spec = TensorSpec((2, 33, 100), "bfloat16", Layout.ROW_MAJOR, L1_MEMORY_CONFIG)
    assert spec.padded_shape == (2, 33, 100) and spec.stride == (3300, 100, 1)
    assert spec.physical_shape == (66, 100)
    assert spec.page_shape == (1, 100) and spec.page_size == 200
    assert spec.num_pages == 66
    buf = spec.buffer_layout(WORMHOLE_B0_N150)
    assert buf.aligned_page_size(WORMHOLE_B0_N150) == 208          # L1: 16 B alignment
    bank, offset = spec.page_locations(WORMHOLE_B0_N150)
    assert list(bank[:3]) == [0, 1, 2] and bank[64] == 0 and offset[64] == 208   # 64 L1 banks


def test_rank_one_and_other_tiles():
    spec = TensorSpec((100,), "float32")
    assert spec.padded_shape == (32, 128) and spec.physical_shape == (32, 128) and spec.num_pages == 4
    assert spec.page_size == 4096
    small = TensorSpec((3, 40, 40), "bfloat16", tile=(16, 32))
    assert small.padded_shape == (3, 48, 64) and small.num_pages == 3 * 3 * 2 and small.page_size == 1024
    assert TensorSpec((64, 64), "bfloat8_b").page_size == 1088


def _reference_2d(spec, order):
    """Page ids of the physical 2-D tensor cut into shards with numpy; ``order`` lists the
    core index of each shard (row-major over the shard grid)."""
    rows, cols = spec.tensor_shape_in_pages
    sh, sw = (a // b for a, b in zip(spec.physical_shard_shape, spec.page_shape))
    ids = np.arange(rows * cols).reshape(rows, cols)
    bank = np.empty(ids.size, dtype=int)
    slot = np.empty(ids.size, dtype=int)
    for k, (i, j) in enumerate(np.ndindex(*spec.grid_shape)):
        window = ids[i * sh:(i + 1) * sh, j * sw:(j + 1) * sw]
        local = np.indices(window.shape).reshape(2, -1)
        bank[window.reshape(-1)] = order[k]
        slot[window.reshape(-1)] = np.ravel_multi_index(local, (sh, sw))
    return bank, slot


def test_height_sharded():
    mc = MemoryConfig("HEIGHT_SHARDED", "L1", ShardSpec(grid(4, 2), (64, 128)))
    spec = TensorSpec((2, 3, 64, 128), "bfloat16", memory_config=mc)
    assert spec.shard_shape == (64, 128) and spec.physical_shard_shape == (64, 128)
    assert spec.grid_shape == (6, 1) and spec.num_shards == 6
    buf = spec.buffer_layout(WORMHOLE_B0_N150)
    bank, offset = buf.page_location(np.arange(spec.num_pages), WORMHOLE_B0_N150)
    ref_bank, ref_slot = _reference_2d(spec, list(range(6)))
    assert np.array_equal(bank, ref_bank) and np.array_equal(offset, ref_slot * 2048)
    # Shards go to the cores row by row: shard 4 is on core (0, 1).
    assert spec.distribution_spec().cores[4] == CoreCoord(0, 1)


def test_width_sharded_col_major():
    mc = MemoryConfig("WIDTH_SHARDED", "L1", ShardSpec(grid(2, 2), (64, 64), "COL_MAJOR"))
    spec = TensorSpec((64, 256), "bfloat16", memory_config=mc)
    assert spec.grid_shape == (1, 4)
    cores = spec.distribution_spec().cores
    assert cores == (CoreCoord(0, 0), CoreCoord(0, 1), CoreCoord(1, 0), CoreCoord(1, 1))
    bank, offset = spec.page_locations()
    ref_bank, ref_slot = _reference_2d(spec, list(range(4)))
    assert np.array_equal(bank, ref_bank) and np.array_equal(offset, ref_slot * 2048)


@pytest.mark.parametrize("orientation", ["ROW_MAJOR", "COL_MAJOR"])
def test_block_sharded(orientation):
    mc = MemoryConfig("BLOCK_SHARDED", "L1", ShardSpec(grid(4, 4, 2, 1), (96, 32), orientation))
    spec = TensorSpec((2, 3, 64, 128), "bfloat16", memory_config=mc)
    assert spec.grid_shape == (4, 4)
    dist = spec.distribution_spec()
    for k, (i, j) in enumerate(np.ndindex(4, 4)):
        want = CoreCoord(2 + j, 1 + i) if orientation == "ROW_MAJOR" else CoreCoord(2 + i, 1 + j)
        assert dist.cores[k] == want
    bank, offset = spec.page_locations()
    ref_bank, ref_slot = _reference_2d(spec, list(range(16)))
    assert np.array_equal(bank, ref_bank) and np.array_equal(offset, ref_slot * 2048)


def test_logical_sharding_pads_each_shard_to_the_tile():
    # The tt-mlir tensor layout's 53x63 on 3 rows x 2 columns of cores: 18x32 shards padded to 32x32 tiles.
    mc = MemoryConfig("BLOCK_SHARDED", "L1", ShardSpec(grid(2, 3), (18, 32), mode=ShardMode.LOGICAL))
    spec = TensorSpec((53, 63), "bfloat8_b", memory_config=mc)
    assert spec.physical_shard_shape == (32, 32)
    assert spec.physical_shape == (96, 64) and spec.grid_shape == (3, 2)
    assert spec.num_pages == 6 and spec.buffer_size == 6 * 1088
    rows, cols = spec.real_masks()
    assert list(np.flatnonzero(~rows)) == list(range(18, 32)) + list(range(50, 64)) + list(range(81, 96))
    assert list(np.flatnonzero(~cols)) == list(range(63, 64))
    # Same padding as the tt-mlir tensor layout's tilized form of the same tensor.
    seed = LinearMetalLayout((53, 63), "(d0, d1) -> (d0, d1)", (3, 2), tile=(32, 32))
    assert spec.padding_elements() == seed.core_padding().total == 96 * 64 - 53 * 63


def test_nd_sharding_in_dram():
    banks = CoreRangeSet([CoreRange((0, 0), (5, 0))])
    mc = MemoryConfig("BLOCK_SHARDED", "DRAM", nd_shard_spec=NdShardSpec((1, 2, 64, 64), banks))
    spec = TensorSpec((2, 3, 64, 128), "bfloat16", memory_config=mc)
    assert spec.grid_shape == (2, 2, 1, 2) and spec.num_shards == 8
    buf = spec.buffer_layout(WORMHOLE_B0_N150)
    assert buf.num_banks() == 6 and buf.pages_per_bank() == 2 * 8
    # Reference: pages as a (2, 3, 2, 4) tensor of tiles, shards of (1, 2, 2, 2) tiles.
    ids = np.arange(48).reshape(2, 3, 2, 4)
    bank, offset = buf.page_location(np.arange(48), WORMHOLE_B0_N150)
    for sid, (a, b, c, d) in enumerate(np.ndindex(2, 2, 1, 2)):
        window = ids[a:a + 1, 2 * b:2 * b + 2, 2 * c:2 * c + 2, 2 * d:2 * d + 2]
        local = np.indices(window.shape).reshape(4, -1)
        slots = (sid // 6) * 8 + np.ravel_multi_index(local, (1, 2, 2, 2))
        assert np.all(bank[window.reshape(-1)] == sid % 6)
        assert np.array_equal(offset[window.reshape(-1)], slots * 2048)


def test_row_major_width_sharding_pages_are_shard_wide():
    mc = MemoryConfig("WIDTH_SHARDED", "L1", ShardSpec(grid(3, 1), (10, 40)))
    spec = TensorSpec((10, 100), "float32", Layout.ROW_MAJOR, mc)
    assert spec.padded_shape == (10, 120) and spec.page_shape == (1, 40) and spec.page_size == 160
    assert spec.num_pages == 30 and spec.grid_shape == (1, 3)
    bank, _ = spec.page_locations(BLACKHOLE_P150)
    assert list(bank[:6]) == [0, 1, 2, 0, 1, 2]


# --- validation ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: TensorSpec((64, 64), "bfloat16", memory_config=MemoryConfig(
            "BLOCK_SHARDED", "L1", ShardSpec(grid(2, 2), (30, 32)))),
         "shard_spec.shape 30x32 is not a multiple of the 32x32 tile"),
        (lambda: TensorSpec((64, 128), "bfloat16", memory_config=MemoryConfig(
            "HEIGHT_SHARDED", "L1", ShardSpec(grid(2, 1), (32, 64)))),
         "shard_spec.shape width 64 must equal the tensor's physical width 128"),
        (lambda: TensorSpec((64, 128), "bfloat16", memory_config=MemoryConfig(
            "WIDTH_SHARDED", "L1", ShardSpec(grid(2, 2), (32, 64)))),
         "shard_spec.shape height 32 must equal the tensor's physical height 64"),
        (lambda: TensorSpec((256, 64), "bfloat16", memory_config=MemoryConfig(
            "HEIGHT_SHARDED", "L1", ShardSpec(grid(2, 1), (32, 64)))),
         "shard_spec.grid has 2 cores but the tensor needs 8 shards"),
        (lambda: TensorSpec((256, 256), "bfloat16", memory_config=MemoryConfig(
            "BLOCK_SHARDED", "L1", ShardSpec(grid(2, 2), (64, 64)))),
         "grid .* too small for 4x4 shards"),
        (lambda: MemoryConfig("INTERLEAVED", "L1", ShardSpec(grid(1, 1), (32, 32))),
         "memory_config is INTERLEAVED but has a shard spec"),
        (lambda: MemoryConfig("HEIGHT_SHARDED", "L1"), "memory_config is HEIGHT_SHARDED but has no shard_spec"),
        (lambda: MemoryConfig("HEIGHT_SHARDED", "L1", ShardSpec(grid(1, 1), (32, 32)), NdShardSpec((32, 32), grid(1, 1))),
         "both shard_spec and nd_shard_spec"),
        (lambda: TensorSpec((64, 64), "bfloat8_b", Layout.ROW_MAJOR), "bfloat8_b exists only in tile layout"),
        (lambda: TensorSpec((64, 64), "bfloat16", memory_config=MemoryConfig(
            "BLOCK_SHARDED", "L1", nd_shard_spec=NdShardSpec((16, 32), grid(2, 2)))),
         "nd_shard_spec.shard_shape \\[16, 32\\] is not tile-aligned"),
        (lambda: TensorSpec((64, 64), "bfloat16", memory_config=MemoryConfig(
            "BLOCK_SHARDED", "L1", nd_shard_spec=NdShardSpec((1, 1, 32, 32), grid(2, 2)))),
         "nd_shard_spec.shard_shape .* more dims than the tensor"),
        (lambda: TensorSpec((64, 0), "bfloat16"), "shape \\[64, 0\\] must have positive dims"),
        (lambda: TensorSpec((64, 64), "bfloat16", "NCHW"), "layout 'NCHW' is unknown"),
        (lambda: MemoryConfig("DIAGONAL_SHARDED"), "memory_layout 'DIAGONAL_SHARDED' is unknown"),
        (lambda: ShardSpec(grid(1, 1), (32, 32), "SPIRAL"), "orientation 'SPIRAL' is unknown"),
        (lambda: ShardSpec(grid(1, 1), (32, 32, 1)), "shard_spec.shape \\[32, 32, 1\\] must have 2 dims"),
        (lambda: TensorSpec((64, 64), "int4"), "unknown data format 'int4'"),
    ],
)
def test_malformed_specs_raise_layout_errors(make, match):
    with pytest.raises(LayoutError, match=match):
        make()


def test_placement_errors():
    # A shard grid off the device's 8x8 grid.
    mc = MemoryConfig("HEIGHT_SHARDED", "L1", ShardSpec(grid(1, 1, 9, 0), (32, 32)))
    with pytest.raises(LayoutError, match="grid: core \\(9, 0\\) is outside the 8x8 grid"):
        TensorSpec((32, 32), "bfloat16", memory_config=mc).buffer_layout(WORMHOLE_B0_N150)
    # One core cannot hold a 4096x4096 fp32 shard in L1.
    mc = MemoryConfig("HEIGHT_SHARDED", "L1", ShardSpec(grid(1, 1), (4096, 4096)))
    with pytest.raises(LayoutError, match="needs 67108864 bytes in an L1 bank"):
        TensorSpec((4096, 4096), "float32", memory_config=mc).buffer_layout(WORMHOLE_B0_N150)


def test_page_count_matches_volume_when_unpadded():
    for shape in [(4, 64, 96), (1, 1, 32, 32), (128, 256)]:
        spec = TensorSpec(shape, "float32")
        assert spec.num_pages * 32 * 32 == math.prod(shape) and spec.padding_elements() == 0
