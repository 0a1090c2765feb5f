"""MetalLayout (current tt-mlir semantics) and LinearMetalLayout (tt-mlir tensor layout) against the
conformance vectors of FACTS.md and the tt-mlir tensor layout, plus numpy cross-checks of padding."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tilefold.errors import LayoutError
from tilefold.layout.metal_layout import (
    LinearMetalLayout,
    MemorySpace,
    MetalLayout,
    collapse_notation,
    default_collapse_intervals,
    format_affine_map,
    normalize_collapse_intervals,
    parse_affine_map,
)

CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance"
FACTS = json.loads((CONFORMANCE / "metal_layout_vectors.json").read_text())
SEED = json.loads((CONFORMANCE / "tensor_layout_vectors.json").read_text())


# --- current semantics: FACTS.md vectors ------------------------------------------------------


@pytest.mark.parametrize("case", FACTS["physical_shape_in_tiles"], ids=lambda c: "x".join(map(str, c["logical_shape"])))
def test_physical_shape_in_tiles(case):
    layout = MetalLayout.create(case["logical_shape"])
    assert list(layout.physical_shape_in_tiles()) == case["tiles"]
    if "physical_shape" in case:
        assert list(layout.physical_shape) == case["physical_shape"]
    # The same tensors under grid-aware alignment for an 8x8 grid do not change.
    assert list(MetalLayout.create(case["logical_shape"], grid=(8, 8)).physical_shape_in_tiles()) == case["tiles"]


@pytest.mark.parametrize("case", FACTS["host_strides_and_volume"], ids=lambda c: "x".join(map(str, c["logical_shape"])))
def test_host_strides_and_volume(case):
    layout = MetalLayout.create(case["logical_shape"])
    strides, volume = layout.host_strides_and_volume()
    assert list(strides) == case["strides"] and volume == case["volume"]
    assert layout.is_padded


@pytest.mark.parametrize("case", FACTS["grid_aware"], ids=lambda c: "x".join(map(str, c["logical_shape"])))
def test_grid_aware_alignment(case):
    layout = MetalLayout.create(case["logical_shape"], grid=case["grid"])
    assert list(layout.physical_shape_in_tiles()) == case["tiles"]
    grid = layout.optimal_grid(case["grid"])
    shard = layout.shard_shape(grid)
    assert [g * s for g, s in zip(grid, shard)] == case["tiles"]


def test_grid_aware_alignment_values():
    # The three FACTS.md tensors: the alignments themselves.
    assert MetalLayout.create((4, 43, 7), grid=(8, 8)).dim_alignments == (1, 32, 32)
    assert MetalLayout.create((9, 43, 7), grid=(8, 8)).dim_alignments == (256, 32, 32)
    assert MetalLayout.create((31, 33, 447), grid=(8, 8)).dim_alignments == (256, 32, 256)
    # Without a grid: plain tile alignment.
    assert MetalLayout.create((9, 43, 7)).dim_alignments == (1, 32, 32)
    assert MetalLayout.create((9, 43, 7)).physical_shape_in_tiles() == (18, 1)


@pytest.mark.parametrize("case", FACTS["default_collapse_intervals"], ids=lambda c: f"rank{c['rank']}")
def test_default_collapse_intervals(case):
    assert [list(p) for p in default_collapse_intervals(case["rank"])] == case["intervals"]


@pytest.mark.parametrize("case", FACTS["normalized_intervals"], ids=lambda c: str(c["intervals"]))
def test_normalized_intervals(case):
    got = normalize_collapse_intervals(case["intervals"], case["rank"])
    assert [list(p) for p in got] == case["normalized"]


@pytest.mark.parametrize("case", FACTS["verifier_errors"], ids=lambda c: c["case"])
def test_verifier_errors(case):
    with pytest.raises(LayoutError, match=case["match"]) as info:
        MetalLayout(case["logical_shape"], case["dim_alignments"], case["collapse_intervals"])
    assert case["argument"] in str(info.value)


def test_rank_one_has_a_synthetic_leading_interval():
    layout = MetalLayout.create((128,))
    assert layout.normalized_intervals == ((0, 0), (0, 1))
    assert layout.physical_shape == (32, 128)
    assert format_affine_map(layout.linear) == "(d0) -> (0, d0)"
    mask = layout.padding_mask()
    assert mask.shape == (32, 128) and (~mask).sum() == 128 and not mask[0].any()


def test_linear_map_of_the_current_layout_is_seed_004s_map():
    assert format_affine_map(MetalLayout.create((2, 3, 64, 128)).linear) == (
        "(d0, d1, d2, d3) -> (d0 * 192 + d1 * 64 + d2, d3)"
    )
    # 2x33x128: rows of each batch are padded to 64, so the batch stride is 64.
    assert format_affine_map(MetalLayout.create((2, 33, 128)).linear) == "(d0, d1, d2) -> (d0 * 64 + d1, d2)"


def test_stride_bumping_with_alignments():
    # Aligning d1 to 32 puts every batch of 2x8x32 on its own tile row (tt-mlir tensor layout).
    layout = MetalLayout((2, 8, 32), (1, 32, 32), ((0, 2), (2, 3)))
    assert format_affine_map(layout.linear) == "(d0, d1, d2) -> (d0 * 32 + d1, d2)"
    assert layout.physical_shape_in_tiles() == (2, 1)


def test_padding_mask_matches_numpy_scatter():
    layout = MetalLayout.create((3, 5, 40), grid=(2, 2))
    strides, volume = layout.host_strides_and_volume()
    real = np.zeros(volume, dtype=bool)
    idx = np.indices((3, 5, 40)).reshape(3, -1)
    real[(idx * np.array(strides)[:, None]).sum(axis=0)] = True
    assert np.array_equal(~layout.padding_mask().reshape(-1), real)


def test_core_padding_counts_and_extents():
    layout = MetalLayout.create((4, 43, 7), grid=(8, 8))
    pad = layout.core_padding((8, 1))
    # Each batch of 43 rows spans two 32-row shards: 32 real rows then 11.
    assert list(pad.extent[0]) == [0, 21] * 4 and list(pad.extent[1]) == [25]
    mask = layout.padding_mask()
    per_core = mask.reshape(8, 32, 1, 32).sum(axis=(1, 3))
    assert np.array_equal(pad.elements, per_core)
    assert pad.total == mask.sum() == 8 * 32 * 32 - 4 * 43 * 7


def test_multi_device_grid():
    # The tt-mlir tensor layout's multi-device example in current semantics: batch on the outer grid dim.
    layout = MetalLayout.create((2, 3, 64, 128), grid=(2, 2, 4), collapse_intervals=[[0, 1], [1, 3]])
    assert layout.physical_shape == (2, 192, 128)
    assert layout.device_shape((2, 2, 4)) == (2, 2, 4, 1, 3, 1)


def test_grid_errors_name_the_grid():
    layout = MetalLayout.create((33, 128))
    with pytest.raises(LayoutError, match="grid 8x8 does not divide"):
        layout.shard_shape((8, 8))
    with pytest.raises(LayoutError, match="grid 2 has rank 1"):
        layout.shard_shape((2,))
    with pytest.raises(LayoutError, match="grid .* rank 3 .* 2 collapse"):
        MetalLayout.create((33, 128), grid=(1, 2, 2))


def test_attribute_printing():
    layout = MetalLayout.create((32, 32), memory_space="l1")
    assert str(layout) == (
        "#ttcore.metal_layout<logical_shape = 32x32, dim_alignments = 32x32, collapsed_intervals = "
        "dense<[[0, 1], [1, 2]]> : tensor<2x2xi64>, undef, l1, sharded>"
    )
    assert MetalLayout.create((8, 8), memory_space="DeviceDRAM").memory_space is MemorySpace.DeviceDRAM
    assert [m.value for m in MemorySpace] == ["system", "mmio", "dram", "l1"]
    assert "zero, system, interleaved>" in str(
        MetalLayout.create((8, 8), oob_val="zero", memory_space="System", memory_layout="interleaved")
    )
    with pytest.raises(LayoutError, match="oob_val 'nan' is unknown"):
        MetalLayout.create((8, 8), oob_val="nan")
    with pytest.raises(LayoutError, match="memory_space 'sram'"):
        MetalLayout.create((8, 8), memory_space="sram")


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 40), min_size=2, max_size=4),
    grid=st.tuples(st.integers(1, 8), st.integers(1, 8)),
)
def test_grid_aware_layout_always_divides_over_some_grid(shape, grid):
    layout = MetalLayout.create(shape, grid=grid)
    tiles = layout.physical_shape_in_tiles()
    g = layout.optimal_grid(grid)
    assert all(t % d == 0 and d <= lim for t, d, lim in zip(tiles, g, grid))
    # Real elements: exactly the logical volume, whatever the alignment.
    assert (~layout.padding_mask()).sum() == math.prod(shape)
    assert layout.host_volume == math.prod(layout.physical_shape)


# --- tt-mlir tensor layout semantics ------------------------------------------------------------------------


def test_index_example():
    case = SEED["index_example"]
    amap = parse_affine_map(case["map"])
    assert list(amap.eval(case["index"], [])) == case["result"]
    layout = LinearMetalLayout((2, 3, 64, 128), amap, (1, 1))
    assert list(layout.physical_shape) == case["last_index_plus_one"]


@pytest.mark.parametrize("case", SEED["join_notation"], ids=lambda c: c["text"])
def test_join_notation(case):
    assert collapse_notation(case["rank"], case["collapse"]) == case["text"]


def _seed_layout(case, from_collapse: bool):
    kwargs = dict(tile=case.get("tile"), tile_dtype=case.get("tile_dtype"))
    if from_collapse:
        return LinearMetalLayout.from_collapse_intervals(case["shape"], case["grid"], case["collapse"], **kwargs)
    return LinearMetalLayout(case["shape"], case["map"], case["grid"], **kwargs)


@pytest.mark.parametrize("case", SEED["layouts"], ids=lambda c: c["memref"])
def test_seed_004_layouts(case):
    layouts = [_seed_layout(case, False)]
    if "collapse" in case:
        derived = _seed_layout(case, True)
        assert format_affine_map(derived.linear) == case["map"]
        layouts.append(derived)
    for layout in layouts:
        assert format_affine_map(layout.linear) == case["map"]
        assert layout.memref_type() == case["memref"]
        if "physical" in case:
            assert list(layout.physical_shape) == case["physical"]
        if "tensor_type" in case:
            assert layout.tensor_type() == case["tensor_type"]


@pytest.mark.parametrize("case", SEED["padding"], ids=lambda c: c["text"])
def test_seed_004_padding(case):
    layout = LinearMetalLayout(case["shape"], case["map"], case["grid"], tile=case["tile"])
    pad = layout.core_padding()
    assert list(pad.extent[0]) == case["rows"]
    assert list(pad.extent[1]) == case["cols"]
    # Cross-check the element counts with a numpy picture of every core's allocation.
    mask = layout.real_mask_2d()
    gr, gc = layout.grid
    pr, pc = layout.padded_shard_shape
    per_core = (~mask).reshape(gr, pr, gc, pc).sum(axis=(1, 3))
    assert np.array_equal(per_core, pad.elements)
    assert (mask).sum() == math.prod(case["shape"])


def test_stride_bumping_puts_each_batch_on_a_tile_boundary():
    packed = LinearMetalLayout((2, 8, 32), "(d0, d1, d2) -> (d0 * 8 + d1, d2)", (1, 2), tile=(32, 32))
    bumped = LinearMetalLayout((2, 8, 32), "(d0, d1, d2) -> (d0 * 32 + d1, d2)", (1, 2), tile=(32, 32))
    rows_packed = packed.physical_indices()[0].reshape(2, 8, 32)[:, :, 0]
    rows_bumped = bumped.physical_indices()[0].reshape(2, 8, 32)[:, :, 0]
    # Packed: both batches share tile row 0. Bumped: batch b starts at row 32·b.
    assert set(np.unique(rows_packed // 32)) == {0}
    assert list(rows_bumped[:, 0]) == [0, 32]
    assert [set(np.unique(r // 32)) for r in rows_bumped] == [{0}, {1}]
    assert packed.memref_shape == (1, 1) and bumped.memref_shape == (2, 1)


def test_affine_map_printing_round_trip():
    for text in [
        "(d0, d1, d2) -> (d0 * 96 + d1, d1, d2)",
        "(d0, d1) -> (d0 - d1 * 2, d1 floordiv 4, -d0 + 3)",
        "(d0, d1) -> ((d0 + d1) floordiv 2, d0 mod 3, (d1 - 1) ceildiv 4)",
    ]:
        assert format_affine_map(parse_affine_map(text)) == text


def test_non_linear_map_is_evaluated_like_xdsl():
    layout = LinearMetalLayout((6, 10), "(d0, d1) -> (d0 floordiv 2, d0 mod 2, d1)", (3, 1, 2))
    idx = layout.physical_indices()
    amap = layout.linear
    for flat in [0, 7, 33, 59]:
        i = np.unravel_index(flat, (6, 10))
        assert tuple(int(r[flat]) for r in idx) == amap.eval([int(v) for v in i], [])
    assert layout.physical_shape == (3, 2, 10) and layout.shard_shape == (1, 2, 5)


def test_seed_004_errors_name_the_argument():
    with pytest.raises(LayoutError, match="linear map .* has 2 dims but logical_shape 2x3x4 has rank 3"):
        LinearMetalLayout((2, 3, 4), "(d0, d1) -> (d0, d1)", (1, 1))
    with pytest.raises(LayoutError, match="grid 1x1x1 has rank 3 but the linear map has 2 results"):
        LinearMetalLayout((2, 3), "(d0, d1) -> (d0, d1)", (1, 1, 1))
    with pytest.raises(LayoutError, match="is not an affine map"):
        LinearMetalLayout((2, 3), "(d0, d1) -> (d0 +, d1)", (1, 1))
    with pytest.raises(LayoutError, match="bfloat8_b has no scalar MLIR type"):
        LinearMetalLayout((2, 3), "(d0, d1) -> (d0, d1)", (1, 1), dtype="bfp8_b").memref_type()
    with pytest.raises(LayoutError, match="logical_shape .* non-positive dimension 0"):
        LinearMetalLayout((2, 0), "(d0, d1) -> (d0, d1)", (1, 1))
