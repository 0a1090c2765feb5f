"""Comparing a result with its reference: Pearson correlation, closeness, distance in ULPs.

Reads: torch tensors (without importing torch: only when the caller has), tilefold device tensors
or numpy arrays. Writes: nothing; a failed check raises ``AssertionError`` with the numbers.
"""

from __future__ import annotations

import sys

import ml_dtypes
import numpy as np


def values(x) -> np.ndarray:
    """``x``'s values as numpy in its own precision (a bfloat16 tensor as ``ml_dtypes.bfloat16``; a
    torch type numpy lacks, such as a float8, as float32)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        x = x.detach().cpu()
        if x.dtype == torch.bfloat16:
            return x.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        try:
            return x.numpy()
        except TypeError:       # a type numpy has no counterpart of here (torch's float8s): its float32 values
            return x.float().numpy()
    from tilefold import ttnn

    if isinstance(x, ttnn.Tensor):
        return ttnn.to_numpy(x)
    return np.asarray(x)


def assert_pcc(golden, actual, threshold: float = 0.9999) -> None:
    """The Pearson correlation of ``actual`` with ``golden`` is at least ``threshold``."""
    g = values(golden).astype(np.float64).ravel()
    a = values(actual).astype(np.float64).ravel()
    pcc = 1.0 if np.array_equal(g, a) else float(np.corrcoef(g, a)[0, 1])
    assert pcc >= threshold, f"Expected pcc {pcc} >= {threshold}"


def assert_allclose(actual, expected, rtol: float = 1e-5, atol: float = 1e-8, verbose: bool = True) -> None:
    """``|actual - expected| <= atol + rtol * |expected|`` everywhere; the message gives the largest
    absolute and relative errors and where they are."""
    a = values(actual).astype(np.float64)
    e = values(expected).astype(np.float64)
    if a.shape != e.shape:
        raise AssertionError(f"shapes differ: actual {a.shape}, expected {e.shape}")
    diff = np.abs(a - e)
    bad = ~(diff <= atol + rtol * np.abs(e))
    bad &= ~((a == e) | (np.isnan(a) & np.isnan(e)))
    if not bad.any():
        return
    rel = diff / np.maximum(np.abs(e), np.finfo(np.float64).tiny)
    worst_abs = np.unravel_index(int(np.nanargmax(np.where(np.isnan(diff), np.inf, diff))), a.shape)
    worst_rel = np.unravel_index(int(np.nanargmax(np.where(np.isnan(rel), np.inf, rel))), a.shape)
    text = (f"Tensors not close: max_abs_error={np.nanmax(diff):.6e}, max_rel_error={np.nanmax(rel):.6e}, "
            f"rtol={rtol}, atol={atol}")
    if verbose:
        text += (f"; {int(bad.sum())} / {a.size} elements differ; worst absolute at {tuple(map(int, worst_abs))} "
                 f"(actual {a[worst_abs]:.6f}, expected {e[worst_abs]:.6f}), worst relative at "
                 f"{tuple(map(int, worst_rel))} (actual {a[worst_rel]:.6f}, expected {e[worst_rel]:.6f})")
    raise AssertionError(text)


def ulp(x: np.ndarray) -> np.ndarray:
    """The gap from ``|x|`` to the next larger number of ``x``'s type (at the type's largest finite
    value, the gap below it)."""
    magnitude = np.abs(x)
    gap = np.nextafter(magnitude, np.array(np.inf, magnitude.dtype)) - magnitude
    top = ml_dtypes.finfo(x.dtype).max if x.dtype == ml_dtypes.bfloat16 else np.finfo(x.dtype).max
    top = np.array(top, x.dtype)
    below = top - np.nextafter(top, np.array(-np.inf, x.dtype))
    return np.where(magnitude == top, below, gap)


def assert_with_ulp(expected_result, actual_result, ulp_threshold: float = 10, allow_nonfinite: bool = False):
    """``actual_result`` is within ``ulp_threshold`` units of least precision of ``expected_result``,
    the unit measured in ``actual_result``'s type at the expected value. Non-finite values fail
    unless ``allow_nonfinite``; then they must be the same at the same places. Returns ``(passed,
    message)``."""
    expected, actual = values(expected_result), values(actual_result)
    assert list(expected.shape) == list(actual.shape), \
        f"shapes differ: expected {list(expected.shape)}, actual {list(actual.shape)}"
    if expected.size == 0:
        return True, "Both tensors are empty"
    e64, a64 = expected.astype(np.float64), actual.astype(np.float64)
    if not allow_nonfinite and not np.isfinite(a64).all():
        raise AssertionError("Calculated tensor contains non-finite values")
    same_nan = np.array_equal(np.isnan(e64), np.isnan(a64))
    inf = np.isinf(e64)
    if not same_nan or not np.array_equal(inf, np.isinf(a64)) or not np.array_equal(e64[inf], a64[inf]):
        raise AssertionError("Tensors are not finite at the same positions")
    finite = np.isfinite(e64)
    unit = ulp(np.where(finite, e64, 0.0).astype(actual.dtype)).astype(np.float64)
    delta = float(np.max(np.abs(np.where(finite, a64 - e64, 0.0)) / unit))
    message = f"Max ULP Delta: {delta}"
    assert delta <= ulp_threshold, message
    return True, message
