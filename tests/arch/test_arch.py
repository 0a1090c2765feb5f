import pytest

from tilefold.arch import (
    BLACKHOLE_P150,
    BLACKHOLE_P150_FULL,
    WORMHOLE_B0_N150,
    WORMHOLE_B0_N300,
    decode_noc_addr,
    decode_noc_multicast_addr,
    get_arch,
    noc_addr,
    noc_multicast_addr,
)
from tilefold.arch.cores import CoreCoord, CoreRange, CoreRangeSet, grid_range
from tilefold.errors import ArchError, LayoutError


def test_published_figures():
    assert WORMHOLE_B0_N150.grid == (8, 8) and WORMHOLE_B0_N150.dram_banks == 12
    assert WORMHOLE_B0_N150.l1_size == 1_499_136
    assert WORMHOLE_B0_N300.grid == (8, 7) and WORMHOLE_B0_N300.num_chips == 2
    assert BLACKHOLE_P150.grid == (11, 10) and BLACKHOLE_P150_FULL.grid == (13, 10)
    assert BLACKHOLE_P150.l1_size == 1_572_864 and BLACKHOLE_P150.dram_banks == 8
    assert (WORMHOLE_B0_N150.l1_alignment, WORMHOLE_B0_N150.dram_alignment) == (16, 32)
    assert (BLACKHOLE_P150.l1_alignment, BLACKHOLE_P150.dram_alignment) == (16, 64)
    assert WORMHOLE_B0_N150.noc_max_burst == 8192 and BLACKHOLE_P150.noc_max_burst == 16384


@pytest.mark.parametrize(
    "fp32, full, tiles", [(False, False, 8), (True, False, 4), (False, True, 16), (True, True, 8)]
)
def test_dst_capacity(fp32, full, tiles):
    assert WORMHOLE_B0_N150.dst_capacity(fp32, full) == tiles


def test_fpu_rate_by_fidelity():
    assert WORMHOLE_B0_N150.matmul_tile_cycles("LoFi") == 16
    assert WORMHOLE_B0_N150.matmul_tile_cycles("HiFi2") == 32
    assert WORMHOLE_B0_N150.matmul_tile_cycles("HiFi4") == 64
    # 4.096 TFLOP/s per core at LoFi and 1 GHz
    assert WORMHOLE_B0_N150.peak_flops("LoFi") / 64 == pytest.approx(4.096e12)
    with pytest.raises(ArchError, match="math fidelity"):
        WORMHOLE_B0_N150.matmul_tile_cycles("HiFi9")


def test_lookup():
    assert get_arch() is WORMHOLE_B0_N150
    assert get_arch("blackhole") is BLACKHOLE_P150
    assert get_arch("N300") is WORMHOLE_B0_N300
    with pytest.raises(ArchError, match="unknown device 'grayskull'"):
        get_arch("grayskull")


def test_noc_addresses_round_trip():
    a = noc_addr(3, 7, 0x1234)
    assert decode_noc_addr(a) == (3, 7, 0x1234)
    m = noc_multicast_addr(1, 2, 8, 5, 4096)
    assert decode_noc_multicast_addr(m) == (1, 2, 8, 5, 4096)
    # the simulator's wide coordinates (a mesh of chips side by side) and a 4 GiB DRAM bank's last byte
    assert decode_noc_addr(noc_addr(500, 13, (4 << 30) - 1)) == (500, 13, (4 << 30) - 1)
    wide = noc_multicast_addr(300, 1, 511, 31, 0x18000)
    assert wide < 1 << 64 and decode_noc_multicast_addr(wide) == (300, 1, 511, 31, 0x18000)
    x, y = WORMHOLE_B0_N150.worker_noc_coord(2, 6)
    assert WORMHOLE_B0_N150.logical_from_noc_coord(x, y) == (2, 6)
    assert WORMHOLE_B0_N150.dram_bank_from_noc_coord(*WORMHOLE_B0_N150.dram_noc_coord(11)) == 11
    with pytest.raises(ArchError, match="outside the 8x8 grid"):
        WORMHOLE_B0_N150.worker_noc_coord(8, 0)


def test_core_ranges():
    r = CoreRange((0, 0), (7, 5))
    assert r.num_cores == 48 and CoreCoord(7, 5) in r and CoreCoord(0, 6) not in r
    s = CoreRangeSet([r, CoreRange((0, 6), (1, 6))])
    assert s.num_cores == 50
    assert s.cores()[-1] == CoreCoord(1, 6)
    assert CoreRangeSet.from_cores(s.cores()).num_cores == 50
    assert grid_range(8, 8).num_cores == 64
    with pytest.raises(LayoutError, match="overlap"):
        CoreRangeSet([CoreRange((0, 0), (2, 2)), CoreRange((2, 2), (3, 3))])
