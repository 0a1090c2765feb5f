"""Result checks: chunked comparison metrics equal the whole-array definitions."""

import ml_dtypes
import numpy as np
import pytest

from tilefold.ops import base
from tilefold.ops.base import EXACT, Tolerance, compare


def reference_metrics(actual, expected):
    finite = np.isfinite(actual) & np.isfinite(expected)
    a, e = actual[finite], expected[finite]
    order = lambda x: (lambda b: np.where(b & 0x8000, 0x8000 - (b & 0x7FFF), b + 0x8000))(  # noqa: E731
        x.astype(ml_dtypes.bfloat16).view(np.uint16).astype(np.int64))
    return float(np.abs(a - e).max()), float(np.abs(order(a) - order(e)).max()), float(np.corrcoef(a, e)[0, 1])


@pytest.mark.parametrize("chunk", [7, 1 << 22])
def test_chunked_metrics_match_the_definitions(monkeypatch, chunk):
    monkeypatch.setattr(base, "CHECK_CHUNK", chunk)
    rng = np.random.default_rng(1)
    expected = rng.standard_normal((40, 33)).astype(np.float32)
    actual = expected + rng.standard_normal(expected.shape).astype(np.float32) * 0.01
    actual[3, 4] = np.nan
    expected[3, 4] = np.nan
    got = compare("y", actual, expected, Tolerance(atol=0.05, min_pcc=0.99))
    max_abs, max_ulp, corr = reference_metrics(actual, expected)
    assert got.passed
    assert got.max_abs_error == pytest.approx(max_abs) and got.max_ulp == max_ulp
    assert got.pcc == pytest.approx(corr, abs=1e-9)
    assert not compare("y", actual, expected, Tolerance(atol=0.001)).passed
    assert not compare("y", actual, expected, Tolerance(max_ulp=1)).passed


def test_bit_identical_and_exact():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    same = compare("y", x, x.copy(), EXACT)
    assert same.passed and same.max_abs_error == 0 and same.pcc == 1.0
    y = x.copy()
    y[0, 0] = -0.0
    assert not compare("y", y, x, EXACT).passed
    assert compare("y", y, x, Tolerance(max_ulp=0)).passed
    z = x.copy()
    z[1, 1] = np.inf
    assert not compare("y", z, x, Tolerance(atol=1e9)).passed


def test_bfloat16_outputs_compare_chunk_by_chunk_like_widened_ones(monkeypatch):
    """Outputs kept as bfloat16 and widened one chunk at a time give the verdict and the numbers
    of the whole float32 arrays, on every chunk boundary."""
    import ml_dtypes

    import tilefold.ops.base as base

    rng = np.random.default_rng(3)
    expected = rng.standard_normal(1000).astype(np.float32)
    actual = (expected * 1.01).astype(ml_dtypes.bfloat16)
    tol = base.Tolerance(rtol=0.02, atol=1e-3)
    whole = base.compare("x", actual.astype(np.float32), expected, tol)
    monkeypatch.setattr(base, "CHECK_CHUNK", 7)
    chunked = base.compare("x", actual, expected, tol)
    assert (chunked.passed, chunked.max_abs_error, chunked.max_ulp) == (whole.passed, whole.max_abs_error, whole.max_ulp)
    assert chunked.pcc == pytest.approx(whole.pcc, abs=1e-12)
    assert base.compare("x", actual, actual.astype(np.float32), base.EXACT).passed


def test_large_device_memories_are_given_back_after_a_run(monkeypatch):
    """A memory above the pool limit is not kept for the next run: checking results must not
    stack on top of the device's DRAM."""
    import tilefold.sim.memory as memory

    monkeypatch.setattr(memory, "_POOL", {})
    monkeypatch.setattr(memory, "POOL_LIMIT", 1 << 10)
    memory.ByteMemory(2, 256).release()
    memory.ByteMemory(2, 4096).release()
    assert list(memory._POOL) == [(2, 256)]
