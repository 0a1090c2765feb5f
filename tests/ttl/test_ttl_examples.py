"""Every example of examples/ttl runs on the simulated device and matches numpy.

Element-wise examples round like the device (bfloat16 after each operation) and must match
exactly; matmuls accumulate in bfloat16 DST and are compared with a float64 reference within a
tolerance relative to the output's magnitude; transcendental chains within bfloat16 accuracy.
"""

from __future__ import annotations

import numpy as np
import pytest

from ttl_helpers import load_example

EXACT = [
    ("add_multitile", {}),
    ("eltwise_single_tile", {"shape": (64, 96)}),
    ("eltwise_multitile", {"shape": (256, 128)}),
    ("eltwise_grid", {"shape": (256, 256)}),
    ("eltwise_full_grid", {"shape": (320, 192)}),
    ("broadcast", {"n": 128, "m": 64}),
    ("pipe_multicast", {"rows": 64}),
    ("bfp8_inputs", {"shape": (128, 128)}),
    ("height_shard_gather", {}),
    ("eltwise_3d_auto_grid", {"shape": (3, 64, 96)}),
    ("group_transfer", {"shape": (96, 64)}),
]


@pytest.mark.parametrize("name,kwargs", EXACT, ids=[e[0] for e in EXACT])
def test_elementwise_example_matches_numpy_exactly(name, kwargs):
    result, reference = load_example(name).main(**kwargs)
    assert result.shape == reference.shape
    np.testing.assert_array_equal(result, reference)


@pytest.mark.parametrize("name,kwargs", [
    ("matmul_single_node", {"m": 64, "k": 256, "n": 128}),
    ("matmul_multinode", {"m": 192, "k": 128, "n": 128}),
], ids=["single_node", "multinode"])
def test_matmul_example_accumulates_over_k(name, kwargs):
    result, reference = load_example(name).main(**kwargs)
    scale = np.abs(reference).max()
    assert np.abs(result - reference).max() <= 0.02 * scale
    assert np.corrcoef(result.ravel(), reference.ravel())[0, 1] > 0.9999
    assert (result >= 0).all() and (result[reference > 0.05 * scale] > 0).all()   # relu


def test_multicast_matmul_example_reads_each_tile_once_and_reports_its_time():
    result, reference, perf = load_example("matmul_mcast").main(m=256, k=256, n=128)
    scale = np.abs(reference).max()
    assert np.abs(result - reference).max() <= 0.02 * scale
    assert np.corrcoef(result.ravel(), reference.ravel())[0, 1] > 0.9999
    assert perf.counters.dram_read_bytes == (256 * 256 + 256 * 128) * 2      # A and B, each tile once
    assert 0 < perf.seconds < 1e-3


def test_row_standardize_example_matches_numpy():
    result, reference, perf = load_example("row_standardize").main(shape=(2048, 128))
    assert np.abs(result - reference).max() < 0.06
    assert np.abs(result.mean(axis=1)).max() < 0.03
    assert perf.counters.dram_read_bytes == 2048 * 128 * 2 and perf.seconds > 0


def test_row_standardize_example_streams_near_the_dram_roofline():
    """The per-row values are stored once per tile row, not recomputed in every fused tile."""
    result, reference, perf = load_example("row_standardize").main(shape=(8192, 256))
    assert np.abs(result - reference).max() < 0.06
    assert 2 * result.size * 2 / 288e9 / perf.seconds >= 0.8


def test_fused_chain_example_within_bfloat16_accuracy():
    result, reference = load_example("fused_chain").main(shape=(64, 128))
    assert np.abs(result - reference).max() < 0.02
    np.testing.assert_allclose(result, reference, rtol=0.03, atol=0.01)


def test_1d_broadcast_example_matches_numpy():
    """1-D float32 tensors of a length that is not a multiple of 32, a one-element operand broadcast."""
    (hyp, gap), (hyp_ref, gap_ref) = load_example("eltwise_1d_broadcast").main(n=200)
    assert hyp.shape == gap.shape == (200,)
    np.testing.assert_allclose(hyp, hyp_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gap, gap_ref, rtol=1e-5, atol=1e-5)


def test_softmax_example_rows_sum_to_one():
    result, reference = load_example("softmax").main(shape=(64, 128))
    np.testing.assert_allclose(result, reference, rtol=0.05, atol=0.004)
    np.testing.assert_allclose(result.sum(axis=-1), 1.0, atol=0.02)


@pytest.mark.parametrize("name,kwargs", [
    ("multicast_matmul", {"m": 64, "k": 128}),
    ("batched_matmul_bias", {"batches": 3, "m": 64, "k": 64, "n": 64}),
    ("loop_accumulation", {"shape": (128, 128)}),
], ids=["multicast_matmul", "batched_matmul_bias", "loop_accumulation"])
def test_accumulating_example_within_bfloat16_accumulation(name, kwargs):
    result, reference = load_example(name).main(**kwargs)
    assert result.shape == reference.shape
    assert np.abs(result - reference).max() <= 0.02 * np.abs(reference).max()
    assert np.corrcoef(result.ravel(), reference.ravel())[0, 1] > 0.9999


def test_pipe_scatter_gather_example_within_bfloat16_accuracy():
    result, reference = load_example("pipe_scatter_gather").main(cols=2)
    np.testing.assert_allclose(result, reference, rtol=0.01, atol=0.01)


@pytest.mark.parametrize("mesh_shape,k", [((1, 2), 256), ((2, 4), 512)], ids=["n300", "t3k"])
def test_multidevice_matmul_example_sums_the_chips_partial_products(mesh_shape, k):
    from tilefold.frontend.ttl.mesh import TRANSFERS

    result, reference = load_example("multidevice_matmul").main(mesh_shape=mesh_shape, k=k)
    chips = mesh_shape[0] * mesh_shape[1]
    assert result.shape[0] == chips
    assert np.abs(result - reference).max() <= 0.02 * np.abs(reference).max()
    assert np.corrcoef(result.ravel(), reference.ravel())[0, 1] > 0.9999
    record = TRANSFERS[-1]
    assert (record.chips, record.steps) == (chips, 2 * (chips - 1)) and record.seconds > 0


@pytest.mark.parametrize("device_count,grid", [(4, "full"), (2, (2, 2)), (3, (1, 1))])
def test_ring_all_gather_example_gathers_every_shard_on_every_device(device_count, grid):
    result, reference = load_example("ring_all_gather").main(device_count=device_count, shard_shape=(64, 96), grid=grid)
    assert result.shape == (device_count, device_count * 64, 96)
    np.testing.assert_array_equal(result, reference)
