"""The SFPU's approximations of the TT-Lang math functions: programs on the simulated device
against numpy (within the device's error) and where the device's polynomial visibly departs
from the exact function (asin near 1, exp(0) with a float32 DST)."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.ir import sfpu_approx

from test_ttl_surface import run_block_function

# (call, reference, input range, tolerance (relative to max(1, |reference|)))
FUNCTIONS = {
    "atan": (lambda b: ttl.math.atan(b), np.arctan, (-6, 6), 0.01),
    "tan": (lambda b: ttl.math.tan(b), np.tan, (-1.4, 1.4), 0.02),
    "sinh": (lambda b: ttl.math.sinh(b), np.sinh, (-4, 4), 0.02),
    "cosh": (lambda b: ttl.math.cosh(b), np.cosh, (-4, 4), 0.02),
    "expm1": (lambda b: ttl.math.expm1(b), np.expm1, (-3, 3), 0.02),
    "elu": (lambda b: ttl.math.elu(b, 0.7), lambda v: np.where(v > 0, v, 0.7 * np.expm1(v)), (-5, 5), 0.02),
    "asin": (lambda b: ttl.math.asin(b), np.arcsin, (-0.7, 0.7), 0.01),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_approximated_function_on_the_simulator_against_numpy(name):
    call, reference, (lo, hi), tol = FUNCTIONS[name]
    values = np.random.default_rng(len(name) + 7).uniform(lo, hi, (32, 64)).astype(np.float32)
    x = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    v = ttnn.to_numpy(x).astype(np.float64)
    got, want = run_block_function(call, x), reference(v)
    assert np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want))) < tol


def test_asin_near_one_is_the_devices_maclaurin_series_not_the_exact_value():
    values = np.full((32, 32), 0.9453125, np.float32)         # exact in bfloat16
    x = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    got = run_block_function(lambda b: ttl.math.asin(b), x)[0, 0]
    v = 0.9453125
    series = v + v**3 / 6 + 3 * v**5 / 40 + 5 * v**7 / 112 + 35 * v**9 / 1152 + 63 * v**11 / 2816
    assert abs(np.arcsin(v) - series) > 0.03                  # the series stops at x**11
    assert got == pytest.approx(series, abs=0.008)            # within bfloat16 rounding of the series
    assert abs(got - np.arcsin(v)) > 0.02


def test_exp_21f_keeps_its_polynomial_error_with_a_float32_dest_and_rounds_it_away_in_bfloat16():
    zero = np.zeros(4, np.float32)
    assert sfpu_approx.exp_21f(zero, True)[0] == pytest.approx(1.0017248, rel=1e-7)
    assert sfpu_approx.exp_21f(zero, False)[0] == 1.0
    big = np.array([100.0, -100.0, np.nan], np.float32)
    out = sfpu_approx.exp_21f(big, True)
    assert out[0] == np.inf and out[1] == 0.0 and np.isnan(out[2])


@pytest.mark.parametrize("fp32_dest", [False, True])
def test_polynomials_match_numpy_within_the_devices_error(fp32_dest):
    x = np.linspace(-1.5, 1.5, 4001).astype(np.float32)
    tan_err = np.abs(sfpu_approx.tan(x, fp32_dest) - np.tan(x.astype(np.float64))) / np.maximum(1, np.abs(np.tan(x)))
    atan_err = np.abs(sfpu_approx.atan(x * 4, fp32_dest) - np.arctan(x.astype(np.float64) * 4))
    bound = 1e-6 if fp32_dest else 8e-3
    assert tan_err.max() < bound and atan_err.max() < bound
