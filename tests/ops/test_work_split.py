"""split_blocks_for_tilize and split_work_to_cores against the factory's and FACTS.md's numbers, and
against a plain core-by-core model of the same rules for many grids and unit counts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilefold.arch.cores import CoreCoord, CoreRange, CoreRangeSet
from tilefold.errors import ProgramError
from tilefold.ops.work_split import (
    compute_grid,
    corerange_to_cores,
    num_cores_to_corerangeset,
    parse_grid,
    split_blocks_for_tilize,
    split_work_to_cores,
)
from tilefold.arch import get_arch


def cores_of(crs: CoreRangeSet) -> set[CoreCoord]:
    return {c for r in crs.ranges for c in r}


# -- split_blocks_for_tilize ----------------------------------------------------------------------


def test_101_blocks_on_8x8_has_a_cliff_core_at_2_6():
    """FACTS.md: per 2, 51 cores, full range {(0,0)-(7,5)} ∪ {(0,6)-(1,6)}, cliff core (2,6) with 1 block."""
    split = split_blocks_for_tilize((8, 8), 101)
    assert (split.ncores, split.nblocks_per_core, split.nblocks_per_core_cliff) == (51, 2, 1)
    assert set(split.core_range.ranges) == {CoreRange((0, 0), (7, 5)), CoreRange((0, 6), (1, 6))}
    assert split.core_range_cliff.ranges == (CoreRange((2, 6), (2, 6)),)
    assert split.cliff_core == CoreCoord(2, 6)
    assert split.all_cores.num_cores == 51
    assert split.blocks()[-1] == (CoreCoord(2, 6), 100, 1)


@pytest.mark.parametrize("shape, blocks, tiles_per_block, cores", [
    ((1, 1, 256, 512), 8, 16, 8),      # TT-Metal tilize factory and FACTS.md: 8 cores, one block of 16 tiles each
    ((1, 1, 128, 256), 4, 8, 4),       # the TT-Metal tilize factory's block example: 4 blocks of 8 tiles
])
def test_seed_examples(shape, blocks, tiles_per_block, cores):
    nblocks = shape[0] * shape[1] * shape[2] // 32
    assert (nblocks, shape[3] // 32) == (blocks, tiles_per_block)
    split = split_blocks_for_tilize((8, 8), nblocks)
    assert (split.ncores, split.nblocks_per_core, split.nblocks_per_core_cliff) == (cores, 1, 0)
    assert split.core_range.ranges == (CoreRange((0, 0), (cores - 1, 0)),)
    assert split.core_range_cliff.num_cores == 0 and split.cliff_core is None


def test_cliff_core_closes_a_full_last_row():
    """127 blocks on 8x8: 2 per core, 64 cores, the cliff core is the grid's last core (7,7)."""
    split = split_blocks_for_tilize((8, 8), 127)
    assert (split.ncores, split.nblocks_per_core, split.nblocks_per_core_cliff) == (64, 2, 1)
    assert set(split.core_range.ranges) == {CoreRange((0, 0), (7, 6)), CoreRange((0, 7), (6, 7))}
    assert split.cliff_core == CoreCoord(7, 7)


def test_single_core_and_no_blocks():
    one = split_blocks_for_tilize((8, 8), 1)
    assert (one.ncores, one.nblocks_per_core, one.core_range.ranges) == (1, 1, (CoreRange((0, 0), (0, 0)),))
    none = split_blocks_for_tilize((8, 8), 0)
    assert none.ncores == 0 and none.all_cores.num_cores == 0 and none.blocks() == []


def tilize_model(gx, gy, nblocks):
    """Core i (row-wise) gets blocks [i·per, min((i+1)·per, nblocks))."""
    per = -(-nblocks // (gx * gy))
    out, start, i = [], 0, 0
    while start < nblocks:
        count = min(per, nblocks - start)
        out.append((CoreCoord(i % gx, i // gx), start, count))
        start += count
        i += 1
    return out


@settings(max_examples=300, deadline=None)
@given(gx=st.integers(1, 13), gy=st.integers(1, 10), nblocks=st.integers(1, 400))
def test_split_blocks_for_tilize_matches_the_core_by_core_model(gx, gy, nblocks):
    split = split_blocks_for_tilize((gx, gy), nblocks)
    model = tilize_model(gx, gy, nblocks)
    assert split.blocks() == model
    assert split.ncores == len(model)
    cliff = [c for c, _, n in model if n < split.nblocks_per_core]
    assert cores_of(split.core_range_cliff) == set(cliff) and len(cliff) <= 1
    if cliff:
        assert cliff[0] == model[-1][0] and split.nblocks_per_core_cliff == model[-1][2]
    assert cores_of(split.core_range) == {c for c, _, _ in model} - set(cliff)
    assert cores_of(split.all_cores) == {c for c, _, _ in model}


# -- split_work_to_cores --------------------------------------------------------------------------


def test_split_work_to_cores_column_major_heavier_group_first():
    """100 tiles on 8x8: 64 cores; the first 36 in column-major order take 2, the other 28 take 1."""
    split = split_work_to_cores((8, 8), 100)
    assert (split.num_cores, split.units_per_core_group_1, split.units_per_core_group_2) == (64, 2, 1)
    assert set(split.core_group_1.ranges) == {CoreRange((0, 0), (3, 7)), CoreRange((4, 0), (4, 3))}
    assert set(split.core_group_2.ranges) == {CoreRange((4, 4), (4, 7)), CoreRange((5, 0), (7, 7))}
    units = split.units()
    assert units[:3] == [(CoreCoord(0, 0), 0, 2), (CoreCoord(0, 1), 2, 2), (CoreCoord(0, 2), 4, 2)]
    assert units[36] == (CoreCoord(4, 4), 72, 1)


def test_split_work_to_cores_even_split_has_empty_group_2():
    split = split_work_to_cores((8, 8), 128)
    assert (split.num_cores, split.units_per_core_group_1, split.units_per_core_group_2) == (64, 2, 0)
    assert split.core_group_1 == split.all_cores and split.core_group_2.num_cores == 0


def test_split_work_to_cores_fewer_units_than_cores():
    split = split_work_to_cores((8, 8), 10)
    assert split.num_cores == 10 and split.units_per_core_group_1 == 1
    assert set(split.all_cores.ranges) == {CoreRange((0, 0), (0, 7)), CoreRange((1, 0), (1, 1))}
    row_wise = split_work_to_cores((8, 8), 10, row_wise=True)
    assert set(row_wise.all_cores.ranges) == {CoreRange((0, 0), (7, 0)), CoreRange((0, 1), (1, 1))}


def work_model(gx, gy, units, row_wise):
    cores = min(units, gx * gy)
    per, extra = divmod(units, cores)
    out, start = [], 0
    for i in range(cores):
        core = CoreCoord(i % gx, i // gx) if row_wise else CoreCoord(i // gy, i % gy)
        count = per + (i < extra)
        out.append((core, start, count))
        start += count
    return out


@settings(max_examples=300, deadline=None)
@given(gx=st.integers(1, 13), gy=st.integers(1, 10), units=st.integers(1, 500), row_wise=st.booleans())
def test_split_work_to_cores_matches_the_core_by_core_model(gx, gy, units, row_wise):
    split = split_work_to_cores((gx, gy), units, row_wise)
    model = work_model(gx, gy, units, row_wise)
    assert split.units() == model
    assert split.num_cores == len(model)
    heavy = {c for c, _, n in model if n == split.units_per_core_group_1}
    if units % len(model):
        assert cores_of(split.core_group_1) == heavy
        assert cores_of(split.core_group_2) == {c for c, _, _ in model} - heavy
        assert split.units_per_core_group_1 == split.units_per_core_group_2 + 1
    else:
        assert split.core_group_2.num_cores == 0 and split.units_per_core_group_2 == 0


def test_corerange_to_cores_orders():
    crs = num_cores_to_corerangeset(5, (2, 3))
    assert corerange_to_cores(crs) == [CoreCoord(0, 0), CoreCoord(0, 1), CoreCoord(0, 2), CoreCoord(1, 0),
                                       CoreCoord(1, 1)]
    assert corerange_to_cores(crs, row_wise=True)[:3] == [CoreCoord(0, 0), CoreCoord(1, 0), CoreCoord(0, 1)]


# -- user mistakes ------------------------------------------------------------------------------


@pytest.mark.parametrize("call, words", [
    (lambda: split_blocks_for_tilize((0, 8), 4), "grid 0x8 has no cores"),
    (lambda: split_blocks_for_tilize((8, 8), -1), "nblocks must be a non-negative integer"),
    (lambda: split_work_to_cores("eight", 4), "is not a core grid"),
    (lambda: num_cores_to_corerangeset(65, (8, 8)), "more than the 8x8 grid holds"),
    (lambda: compute_grid(get_arch("wormhole_b0"), (9, 8)), "does not fit in the 8x8 compute grid of n150"),
    (lambda: parse_grid("8-8"), "--grid '8-8' is not a core grid"),
])
def test_mistakes_raise_program_errors(call, words):
    with pytest.raises(ProgramError, match=words):
        call()


def test_parse_grid():
    assert parse_grid("8,8") == (8, 8) and parse_grid("3x2") == (3, 2) and parse_grid(None) is None
