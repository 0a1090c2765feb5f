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


def test_fused_chain_example_within_bfloat16_accuracy():
    result, reference = load_example("fused_chain").main(shape=(64, 128))
    assert np.abs(result - reference).max() < 0.02
    np.testing.assert_allclose(result, reference, rtol=0.03, atol=0.01)


def test_softmax_example_rows_sum_to_one():
    result, reference = load_example("softmax").main(shape=(64, 128))
    np.testing.assert_allclose(result, reference, rtol=0.05, atol=0.004)
    np.testing.assert_allclose(result.sum(axis=-1), 1.0, atol=0.02)
