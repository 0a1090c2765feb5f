"""Lanes (cores) whose CB pages hold the same bytes share one unpacked operand matrix, and shared
operands are multiplied as one product over all pairs: the per-lane results must be exactly the
per-lane products, whichever lanes share, and bytes that differ anywhere must never be shared."""

from __future__ import annotations

import numpy as np
import pytest

from tilefold.sim.matmul_blocks import LaneProducts, distinct_lanes


def test_grid_rows_share_and_every_lane_maps_to_its_own_bytes():
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 256, (4, 8, 2048), dtype=np.uint8)
    raw = rows[np.repeat(np.arange(4), 4)]              # 16 lanes, 4 per distinct content
    first, lanes = distinct_lanes(raw)
    assert len(first) == 4
    assert all(np.array_equal(raw[lane], raw[first[lanes[lane]]]) for lane in range(16))


def test_a_single_differing_byte_outside_the_sample_is_not_shared():
    raw = np.zeros((8, 4, 2048), np.uint8)
    raw[5, 3, 2047 - 9] = 1                             # one byte of one lane, between sampled words
    first, lanes = distinct_lanes(raw)
    assert len(first) == 2
    assert lanes[5] != lanes[0] and all(lanes[i] == lanes[0] for i in range(8) if i != 5)


def test_mostly_distinct_lanes_are_not_grouped():
    raw = np.random.default_rng(1).integers(0, 256, (8, 2, 2048), dtype=np.uint8)
    raw[1] = raw[0]
    assert distinct_lanes(raw) is None
    assert distinct_lanes(raw[:2]) is None              # too few lanes to be worth it


def _ints(rng, shape):
    return rng.integers(-8, 8, shape).astype(np.float32)   # exact in float32 whatever the order


@pytest.mark.parametrize("share", ["both", "both_short_k", "both_column_major", "lhs", "rhs", "none", "sparse"])
def test_lane_products_are_the_per_lane_products(share):
    rng = np.random.default_rng(2)
    lanes = 12
    lhs = _ints(rng, (3 if share in ("both", "lhs") else lanes, 64, 96))
    rhs = _ints(rng, (4 if share in ("both", "rhs") else lanes, 96, 32))
    ga = np.arange(lanes) // 4 if share in ("both", "lhs") else None     # rows of a 3×4 grid
    gb = np.arange(lanes) % 4 if share in ("both", "rhs") else None      # columns
    if share == "both_short_k":                         # each lane's product computed in place
        lhs, rhs = _ints(rng, (3, 64, 32)), _ints(rng, (4, 32, 64))
        ga, gb = np.arange(lanes) // 4, np.arange(lanes) % 4
    if share == "both_column_major":                    # lanes walk the grid down its columns
        lhs, rhs = _ints(rng, (3, 64, 96)), _ints(rng, (4, 96, 32))
        ga, gb = np.arange(lanes) % 3, np.arange(lanes) // 3
    if share == "sparse":                               # 12 lanes using few of 144 pairs
        lhs, rhs = _ints(rng, (12, 64, 96)), _ints(rng, (12, 96, 32))
        ga, gb = np.arange(lanes), (np.arange(lanes) * 5) % 12
    products = LaneProducts(lhs, ga, rhs, gb)
    # lanes that are the operand pairs in row-major order get (lhs, rhs, rows, cols) views
    assert products.in_grid == (share == "both")

    def per_lane(block):
        return block.reshape(lanes, *block.shape[-2:])

    out = per_lane(products.block())
    np.testing.assert_array_equal(per_lane(products.block(slice(32, 64), slice(0, 32))), out[:, 32:64, :32])
    for lane in range(lanes):
        a = lhs[lane if ga is None else ga[lane]]
        b = rhs[lane if gb is None else gb[lane]]
        np.testing.assert_array_equal(out[lane], a @ b)
