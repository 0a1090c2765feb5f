"""Page addressing: interleaved and sharded page → bank mapping, TensorAccessorArgs."""

import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tilefold.arch import BLACKHOLE_P150, WORMHOLE_B0_N150, get_arch
from tilefold.arch.cores import CoreCoord, CoreRange, CoreRangeSet
from tilefold.errors import LayoutError
from tilefold.layout.addressing import (
    ArgConfig,
    BufferDistributionSpec,
    BufferLayout,
    TensorAccessorArgs,
    accessor_page_location,
    aligned_page_size,
    decode_tensor_accessor_args,
    interleaved_page_address,
    pack_bank_coords,
    page_size,
    sharded_page_location,
    spec_page_location,
    squeeze_shape_ranks,
    tensor_accessor_args,
)

HEADERS = Path.home() / ".cache/tilefold-check/tree/tt_metal"


# --- page sizes and alignment --------------------------------------------------------------------


def test_page_sizes():
    assert page_size("TILE", "bfloat16") == 2048
    assert page_size("TILE", "float32") == 4096
    assert page_size("TILE", "bfloat8_b") == 1088
    assert page_size("TILE", "bfloat4_b") == 576
    assert page_size("TILE", "bfloat16", tile=(16, 32)) == 1024
    assert page_size("ROW_MAJOR", "bfloat16", width=128) == 256
    assert page_size("ROW_MAJOR", "float32", width=7) == 28
    with pytest.raises(LayoutError, match="bfloat8_b exists only in tile layout"):
        page_size("ROW_MAJOR", "bfloat8_b", width=64)
    with pytest.raises(LayoutError, match="width"):
        page_size("ROW_MAJOR", "bfloat16")
    with pytest.raises(LayoutError, match="layout 'CHW'"):
        page_size("CHW", "bfloat16", width=3)


@pytest.mark.parametrize(
    "arch, buffer, size, aligned",
    [
        ("wormhole_b0", "DRAM", 100, 128),
        ("wormhole_b0", "L1", 100, 112),
        ("blackhole", "DRAM", 100, 128),
        ("blackhole", "L1", 100, 112),
        ("wormhole_b0", "DRAM", 1088, 1088),
        ("blackhole", "DRAM", 1088, 1088),
        ("blackhole", "DRAM", 1100, 1152),
        ("wormhole_b0", "DRAM", 1100, 1120),
        ("blackhole", "DRAM", 2048, 2048),
    ],
)
def test_aligned_page_size(arch, buffer, size, aligned):
    assert aligned_page_size(size, arch, buffer) == aligned


# --- interleaved ------------------------------------------------------------------------------------


def test_interleaved_hand_values():
    bank, addr = interleaved_page_address(
        np.array([0, 11, 12, 13, 25]), page_size=2048, num_banks=12, alignment=32, bank_base=0x1000, offset=4
    )
    assert list(bank) == [0, 11, 0, 1, 1]
    assert list(addr) == [0x1004, 0x1004, 0x1004 + 2048, 0x1004 + 2048, 0x1004 + 2 * 2048]
    # Unaligned pages take aligned slots: 100 B pages on Blackhole DRAM sit 128 B apart.
    _, addr = interleaved_page_address([0, 8, 16], page_size=100, num_banks=8, alignment=64)
    assert list(addr) == [0, 128, 256]
    # One base address per bank.
    bases = np.arange(4) * 1000
    bank, addr = interleaved_page_address([1, 5, 6], page_size=16, num_banks=4, alignment=16, bank_base=bases)
    assert list(addr) == [1000, 1016, 2016]
    with pytest.raises(LayoutError, match="bank_base has 3 entries"):
        interleaved_page_address([0], page_size=16, num_banks=4, alignment=16, bank_base=[0, 1, 2])


@settings(max_examples=80, deadline=None)
@given(
    num_pages=st.integers(1, 3000),
    size=st.integers(1, 5000),
    arch=st.sampled_from(["wormhole_b0", "n300", "blackhole"]),
    buffer=st.sampled_from(["DRAM", "L1"]),
)
def test_interleaved_mapping_is_a_bijection_onto_bank_slots(num_pages, size, arch, buffer):
    buf = BufferLayout(buffer, size, num_pages)
    a = get_arch(arch)
    bank, offset = buf.page_location(np.arange(num_pages), a)
    aligned = buf.aligned_page_size(a)
    assert aligned % a.alignment(buffer) == 0 and aligned >= size
    nb = buf.num_banks(a)
    assert nb == (a.dram_banks if buffer == "DRAM" else a.num_cores)
    assert np.all(offset % aligned == 0)
    slot = offset // aligned
    assert slot.max() < buf.pages_per_bank(a)
    # Every (bank, slot) pair is hit exactly once and slots fill each bank from 0 upwards.
    key = bank * buf.pages_per_bank(a) + slot
    assert np.unique(key).size == num_pages
    counts = np.bincount(bank, minlength=nb)
    assert counts.max() - counts.min() <= 1
    for b in range(min(nb, 4)):
        assert sorted(slot[bank == b]) == list(range(counts[b]))


# --- sharded -----------------------------------------------------------------------------------------


def reference_sharded_mapping(tensor, shard, num_banks):
    """Walk the shard grid in row-major order and place each shard's pages (numpy slicing)."""
    ids = np.arange(math.prod(tensor)).reshape(tensor)
    bank = np.empty(ids.size, dtype=np.int64)
    offset = np.empty(ids.size, dtype=np.int64)
    grid = tuple(-(-t // s) for t, s in zip(tensor, shard))
    volume = math.prod(shard)
    for shard_id, corner in enumerate(np.ndindex(*grid)):
        window = tuple(slice(c * s, (c + 1) * s) for c, s in zip(corner, shard))
        pages = ids[window]
        local = np.indices(pages.shape).reshape(len(tensor), -1)
        bank[pages.reshape(-1)] = shard_id % num_banks
        offset[pages.reshape(-1)] = (shard_id // num_banks) * volume + np.ravel_multi_index(local, shard)
    return bank, offset


def test_sharded_hand_values():
    # 4x6 pages in 2x4 shards over 3 banks: shard grid 2x2.
    bank, offset = sharded_page_location([0, 5, 4, 23, 18, 12], (4, 6), (2, 4), 3)
    # page 5 = (0, 5): shard (0, 1) -> id 1, local (0, 1): offset 1; page 23 = (3, 5): shard id 3 -> bank 0,
    # second shard on bank 0: 8 + local (1, 1) = 8 + 5; page 18 = (3, 0): shard id 2, local (1, 0) = 4.
    assert list(bank) == [0, 1, 1, 0, 2, 2]
    assert list(offset) == [0, 1, 0, 13, 4, 0]


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_sharded_mapping_matches_reference_and_is_a_bijection(data):
    rank = data.draw(st.integers(1, 4))
    tensor = tuple(data.draw(st.lists(st.integers(1, 7), min_size=rank, max_size=rank)))
    shard = tuple(data.draw(st.integers(1, t)) for t in tensor)
    num_banks = data.draw(st.integers(1, 10))
    n = math.prod(tensor)
    bank, offset = sharded_page_location(np.arange(n), tensor, shard, num_banks)
    ref_bank, ref_offset = reference_sharded_mapping(tensor, shard, num_banks)
    assert np.array_equal(bank, ref_bank) and np.array_equal(offset, ref_offset)
    assert np.unique(bank * (10**6) + offset).size == n
    # Squeezing ranks does not move any page.
    sq_tensor, sq_shard = squeeze_shape_ranks(tensor, shard)
    sq_bank, sq_offset = sharded_page_location(np.arange(n), sq_tensor, sq_shard, num_banks)
    assert np.array_equal(sq_bank, bank) and np.array_equal(sq_offset, offset)


def test_squeeze_shape_ranks():
    assert squeeze_shape_ranks((12, 4), (2, 4)) == ((48,), (8,))          # full-width shards: one run of pages
    assert squeeze_shape_ranks((2, 3, 2, 4), (1, 2, 2, 2)) == ((2, 6, 4), (1, 4, 2))
    assert squeeze_shape_ranks((5, 7), (2, 3)) == ((5, 7), (2, 3))       # nothing to merge
    assert squeeze_shape_ranks((3, 4, 4), (4, 4)) == ((48,), (16,))      # leading tensor dims fold in


def test_legacy_height_sharding_round_robin():
    grid = CoreRangeSet([CoreRange((0, 0), (3, 1))])
    dist = BufferDistributionSpec.from_shard_spec((384, 128), (64, 128), (32, 32), grid, "ROW_MAJOR")
    assert dist.cores[:5] == (CoreCoord(0, 0), CoreCoord(1, 0), CoreCoord(2, 0), CoreCoord(3, 0), CoreCoord(0, 1))
    bank, offset = dist.page_location(np.arange(48))
    # 2 tile rows x 4 tile columns per shard: pages 0..7 on core 0, 8..15 on core 1, ...
    assert list(bank) == list(np.repeat(np.arange(6), 8))
    assert list(offset[:8]) == list(range(8))
    col = BufferDistributionSpec.from_shard_spec((384, 128), (64, 128), (32, 32), grid, "COL_MAJOR")
    assert col.cores[:3] == (CoreCoord(0, 0), CoreCoord(0, 1), CoreCoord(1, 0))


def test_legacy_block_sharding_grid_2d():
    grid = CoreRangeSet([CoreRange((1, 1), (4, 4))])
    # 4x4 pages in 2x1-page shards: shard grid 2 rows x 4 cols.
    rm = BufferDistributionSpec.from_shard_spec((128, 128), (64, 32), (32, 32), grid, "ROW_MAJOR", "GRID_2D")
    assert rm.num_banks == 8
    # Shard (i, j) -> core (x0 + j, y0 + i).
    assert rm.cores[1 * 4 + 2] == CoreCoord(1 + 2, 1 + 1)
    cm = BufferDistributionSpec.from_shard_spec((128, 128), (64, 32), (32, 32), grid, "COL_MAJOR", "GRID_2D")
    # COL_MAJOR: shard (i, j) -> core (x0 + i, y0 + j).
    assert cm.cores[1 * 4 + 2] == CoreCoord(1 + 1, 1 + 2)
    bank, _ = cm.page_location([2 * 4 + 2])   # page (2, 2) is in shard (1, 2)
    assert cm.cores[int(bank[0])] == CoreCoord(2, 3)
    with pytest.raises(LayoutError, match="too small for 4x4 shards"):
        BufferDistributionSpec.from_shard_spec((128, 128), (32, 32), (32, 32), CoreRange((0, 0), (2, 2)), "ROW_MAJOR", "GRID_2D")
    with pytest.raises(LayoutError, match="one rectangle"):
        two = CoreRangeSet([CoreRange((0, 0), (1, 1)), CoreRange((3, 0), (3, 1))])
        BufferDistributionSpec.from_shard_spec((64, 64), (32, 32), (32, 32), two, "ROW_MAJOR", "GRID_2D")


def test_distribution_errors_name_the_argument():
    with pytest.raises(LayoutError, match="shard_shape .* rank 1 .* rank 2"):
        BufferDistributionSpec.from_shard_spec((64, 64), (32,), (32, 32), CoreRange((0, 0)))
    with pytest.raises(LayoutError, match="shard_shape .* positive"):
        BufferDistributionSpec((4, 4), (0, 2), (CoreCoord(0, 0),))
    with pytest.raises(LayoutError, match="page id 16 is out of range"):
        BufferDistributionSpec((4, 4), (2, 2), (CoreCoord(0, 0),)).page_location([16])
    with pytest.raises(LayoutError, match="page_ids must be integers"):
        BufferLayout("DRAM", 2048, 4).page_location(np.array([0.5]))
    with pytest.raises(LayoutError, match="page_ids must be non-negative"):
        BufferLayout("DRAM", 2048, 4).page_location([-1])
    with pytest.raises(LayoutError, match="buffer_type 'HBM'"):
        BufferLayout("HBM", 2048, 4)


# --- TensorAccessorArgs ------------------------------------------------------------------------------


def _height_sharded_buffer():
    grid = CoreRangeSet([CoreRange((0, 0), (3, 1))])
    dist = BufferDistributionSpec.from_shard_spec((384, 128), (64, 128), (32, 32), grid)
    return BufferLayout("L1", 2048, 48, dist)


def test_interleaved_args_are_two_words():
    assert tensor_accessor_args(BufferLayout("DRAM", 2048, 10), WORMHOLE_B0_N150) == [2, 2048]
    assert tensor_accessor_args(BufferLayout("L1", 2048, 10), WORMHOLE_B0_N150) == [0, 2048]
    assert tensor_accessor_args(BufferLayout("DRAM", 100, 10), BLACKHOLE_P150) == [2, 128]
    # Runtime flags do not apply to interleaved buffers.
    ta = TensorAccessorArgs(BufferLayout("DRAM", 100, 10), WORMHOLE_B0_N150, ArgConfig.Runtime)
    assert ta.compile_time_args() == [2, 128] and ta.common_runtime_args() == []


def test_sharded_args_hand_encoded():
    cta = tensor_accessor_args(_height_sharded_buffer(), WORMHOLE_B0_N150)
    # flags, page, rank, banks, tensor shape (squeezed to 48 pages), shard shape (8), then
    # NOC coords of cores (0,0)..(3,1) = (1,1)..(4,2), two per word, even bank in the low half.
    assert cta == [1, 2048, 1, 8, 48, 8, 0x02010101, 0x04010301, 0x02020102, 0x04020302]
    # The header's count: 2 + rank + banks words + 2 * rank + ceil(banks / 2).
    assert len(cta) == 2 + 1 + 1 + 2 * 1 + 4


def test_odd_bank_count_leaves_high_half_zero():
    assert pack_bank_coords([(1, 1), (2, 1), (3, 1)]) == [0x02010101, 0x0301]
    with pytest.raises(LayoutError, match="does not fit 8 bits"):
        pack_bank_coords([(256, 1)])


def test_dram_sharded_bank_coords_are_dram_noc_coords():
    cores = tuple(CoreCoord(b, 0) for b in range(3))
    buf = BufferLayout("DRAM", 2048, 6, BufferDistributionSpec((6,), (2,), cores))
    spec, n = decode_tensor_accessor_args(tensor_accessor_args(buf, WORMHOLE_B0_N150))
    assert spec.is_dram and spec.is_sharded
    assert spec.bank_coords == tuple(WORMHOLE_B0_N150.dram_noc_coord(b) for b in range(3))
    bad = BufferLayout("DRAM", 2048, 6, BufferDistributionSpec((6,), (2,), (CoreCoord(20, 0),)))
    with pytest.raises(LayoutError, match="not a DRAM bank"):
        tensor_accessor_args(bad, WORMHOLE_B0_N150)
    off_grid = BufferLayout("L1", 2048, 6, BufferDistributionSpec((6,), (2,), (CoreCoord(9, 0),)))
    with pytest.raises(LayoutError, match="grid: core \\(9, 0\\) is outside"):
        tensor_accessor_args(off_grid, WORMHOLE_B0_N150)


VALID_RUNTIME = [
    ArgConfig.NONE,
    ArgConfig.RuntimeBankCoords,
    ArgConfig.RuntimeTensorShape | ArgConfig.RuntimeShardShape,
    ArgConfig.RuntimeNumBanks | ArgConfig.RuntimeBankCoords,
    ArgConfig.Runtime,
]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_encode_decode_round_trip(data):
    rank = data.draw(st.integers(1, 4))
    tensor = tuple(data.draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank)))
    shard = tuple(data.draw(st.integers(1, t)) for t in tensor)
    arch = data.draw(st.sampled_from([WORMHOLE_B0_N150, BLACKHOLE_P150]))
    is_dram = data.draw(st.booleans())
    if is_dram:
        nb = data.draw(st.integers(1, arch.dram_banks))
        cores = tuple(CoreCoord(b, 0) for b in range(nb))
    else:
        cores = tuple(CoreCoord(x, y) for y in range(arch.grid[1]) for x in range(arch.grid[0]))
        cores = cores[: data.draw(st.integers(1, len(cores)))]
    size = data.draw(st.integers(1, 4096))
    config = data.draw(st.sampled_from(VALID_RUNTIME))
    buf = BufferLayout("DRAM" if is_dram else "L1", size, math.prod(tensor), BufferDistributionSpec(tensor, shard, cores))
    ta = TensorAccessorArgs(buf, arch, config)
    prefix = data.draw(st.lists(st.integers(0, 99), max_size=3))
    cta = prefix + ta.compile_time_args()
    crta = [7] + ta.common_runtime_args()
    # A second, interleaved accessor right after the first.
    cta += tensor_accessor_args(BufferLayout("DRAM", 64, 3), arch)
    spec, n = decode_tensor_accessor_args(cta, len(prefix), crta, 1)
    assert n == len(ta.compile_time_args()) and spec.num_common_runtime_args == len(crta) - 1
    assert spec.is_sharded and spec.is_dram == is_dram
    assert spec.aligned_page_size == buf.aligned_page_size(arch)
    dist = buf.distribution
    assert (spec.rank, spec.num_banks) == (dist.rank, dist.num_banks)
    assert spec.tensor_shape == dist.tensor_shape_in_pages and spec.shard_shape == dist.shard_shape_in_pages
    assert spec.bank_coords == buf.bank_noc_coords(arch)
    ids = np.arange(buf.num_pages)
    for got, want in zip(spec.page_location(ids), buf.page_location(ids, arch)):
        assert np.array_equal(got, want)
    nxt, m = decode_tensor_accessor_args(cta, len(prefix) + n)
    assert (m, nxt.is_sharded, nxt.is_dram, nxt.aligned_page_size) == (2, False, True, 64)


def test_decoded_interleaved_spec_maps_like_the_buffer():
    buf = BufferLayout("L1", 1088, 200)
    spec, n = decode_tensor_accessor_args(tensor_accessor_args(buf, WORMHOLE_B0_N150))
    ids = np.arange(200)
    for got, want in zip(spec.page_location(ids, WORMHOLE_B0_N150), buf.page_location(ids, WORMHOLE_B0_N150)):
        assert np.array_equal(got, want)
    x, y = decode_tensor_accessor_args(tensor_accessor_args(_height_sharded_buffer()))[0].bank_noc_coord(np.array([0, 5]))
    assert list(zip(x, y)) == [(1, 1), (2, 2)]


def test_decode_errors_name_the_arguments():
    with pytest.raises(LayoutError, match="cta has 1 words .* word 1 \\(aligned page size\\)"):
        decode_tensor_accessor_args([2])
    with pytest.raises(LayoutError, match="cta has 0 words"):
        decode_tensor_accessor_args([], 0)
    with pytest.raises(LayoutError, match="unknown flag bits"):
        decode_tensor_accessor_args([0x100, 2048])
    with pytest.raises(LayoutError, match="RuntimeRank without RuntimeTensorShape"):
        decode_tensor_accessor_args([1 | 4, 2048])
    with pytest.raises(LayoutError, match="RuntimeNumBanks without RuntimeBankCoords"):
        decode_tensor_accessor_args([1 | 8, 2048])
    with pytest.raises(LayoutError, match="encoded rank 0"):
        decode_tensor_accessor_args([1, 2048, 0, 1])
    with pytest.raises(LayoutError, match="encoded rank 9"):
        decode_tensor_accessor_args([1, 2048, 9, 1])
    with pytest.raises(LayoutError, match="needs word 5 \\(tensor shape\\)"):
        decode_tensor_accessor_args([1, 2048, 2, 1, 4])
    with pytest.raises(LayoutError, match="common_runtime_args has 0 words"):
        decode_tensor_accessor_args([1 | 64, 2048, 1, 1, 4, 2])
    with pytest.raises(LayoutError, match="pass a list for common_runtime_args"):
        TensorAccessorArgs(_height_sharded_buffer(), None, ArgConfig.RuntimeBankCoords).append_to([])


def test_arg_config_matches_the_device_header():
    path = HEADERS / "hostdevcommon/api/hostdevcommon/tensor_accessor/arg_config.hpp"
    if not path.exists():
        pytest.skip("TT-Metalium headers are not unpacked")
    values = dict(re.findall(r"(\w+) = 1 << (\d+)", path.read_text()))
    for name in ("Sharded", "IsDram", "RuntimeRank", "RuntimeNumBanks", "RuntimeTensorShape",
                 "RuntimeShardShape", "RuntimeBankCoords"):
        assert ArgConfig[name] == 1 << int(values[name])
    header = (HEADERS / "hw/inc/api/tensor/tensor_accessor.h").read_text()
    # The device reads x from the high byte and y from the low byte of each 16-bit half.
    assert "(packed_xy_coord >> 8) & 0xFF" in header and "packed_xy_coord & 0xFF" in header
    wrapper = (HEADERS / "hw/inc/internal/tensor/array_wrapper.h").read_text()
    assert "Is % 2 == 0 ? low_part<Is>() : high_part<Is>()" in wrapper


def test_noc_addresses_from_a_decoded_spec():
    arch = WORMHOLE_B0_N150
    dram, _ = decode_tensor_accessor_args(tensor_accessor_args(BufferLayout("DRAM", 2048, 30), arch))
    x, y, addr = dram.noc_address([0, 13], bank_base_address=0x2000, arch=arch, offset=8)
    assert list(zip(x, y)) == [arch.dram_noc_coord(0), arch.dram_noc_coord(1)]
    assert list(addr) == [0x2008, 0x2008 + 2048]
    l1, _ = decode_tensor_accessor_args(tensor_accessor_args(BufferLayout("L1", 64, 100), arch))
    x, y, addr = l1.noc_address([9, 73], bank_base_address=0x10000, arch=arch)
    # L1 bank 9 is worker core (1, 1); page 73 is the second page on that bank.
    assert list(zip(x, y)) == [arch.worker_noc_coord(1, 1)] * 2 and list(addr) == [0x10000, 0x10040]
    sharded, _ = decode_tensor_accessor_args(tensor_accessor_args(_height_sharded_buffer(), arch))
    x, y, addr = sharded.noc_address(np.array([8, 47]), bank_base_address=0, arch=arch)
    # Page 8 opens shard 1 on core (1, 0); page 47 closes shard 5 on core (1, 1).
    assert list(zip(x, y)) == [(2, 1), (2, 2)] and list(addr) == [0, 7 * 2048]
    bank, offset = accessor_page_location(sharded, [47])
    assert (int(bank[0]), int(offset[0])) == (5, 7 * 2048)
    with pytest.raises(LayoutError, match="bank index 8 is out of range"):
        sharded.bank_noc_coord([8])


def test_spec_page_location_and_any_buffer_description():
    from types import SimpleNamespace

    from tilefold.layout.tensor_spec import MemoryConfig, ShardSpec

    buf = _height_sharded_buffer()
    decoded, _ = decode_tensor_accessor_args(tensor_accessor_args(buf, WORMHOLE_B0_N150))
    ids = np.arange(48)
    want = buf.page_location(ids, WORMHOLE_B0_N150)
    for spec, size in [(decoded, None), (decoded, 2048), (buf.distribution, 2048)]:
        got = spec_page_location(spec, ids, size)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    # A runtime page size (TensorAccessor(args, base, page_size)) changes the stride only.
    assert list(spec_page_location(decoded, [1, 2], 4096)[1]) == [4096, 8192]
    with pytest.raises(LayoutError, match="page_size is needed"):
        spec_page_location(buf.distribution, ids)
    # A buffer described by its fields, sharded through a TT-NN memory config.
    mc = MemoryConfig("HEIGHT_SHARDED", "L1", ShardSpec(CoreRangeSet([CoreRange((0, 0), (3, 1))]), (64, 128)))
    described = SimpleNamespace(shape=(2, 3, 64, 128), data_format="bfloat16", layout="TILE", tile=(32, 32),
                                buffer_type="L1", page_size=2048, num_pages=48, memory_config=mc)
    assert tensor_accessor_args(described, WORMHOLE_B0_N150) == tensor_accessor_args(buf, WORMHOLE_B0_N150)
    assert tensor_accessor_args(described, WORMHOLE_B0_N150, aligned_page_size=4096)[1] == 4096
    plain = SimpleNamespace(buffer_type="DRAM", page_size=1088, num_pages=7, memory_config=None)
    assert tensor_accessor_args(plain, BLACKHOLE_P150) == [2, 1088]
    with pytest.raises(LayoutError, match="does not describe a buffer"):
        tensor_accessor_args(object())
