"""The SFPU's approximations of the TT-Lang math functions: programs on the simulated device
against numpy (within the device's error) and where the device's polynomial visibly departs
from the exact function (exp(0) with a float32 DST); asin / acos near 1 with the device's range
reduction."""

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


@ttl.operation(grid=(1, 1))
def _asin_acos(x, y_asin, y_acos):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    s_dfb = ttl.make_dataflow_buffer_like(y_asin, shape=(1, 1), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(y_acos, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with x_dfb.wait() as v, s_dfb.reserve() as s, c_dfb.reserve() as c:
            s.store(ttl.math.asin(v))
            c.store(ttl.math.acos(v))

    @ttl.datamovement()
    def read():
        with x_dfb.reserve() as blk:
            ttl.copy(x[0, 0], blk).wait()

    @ttl.datamovement()
    def write():
        with s_dfb.wait() as blk:
            ttl.copy(blk, y_asin[0, 0]).wait()
        with c_dfb.wait() as blk:
            ttl.copy(blk, y_acos[0, 0]).wait()


@pytest.mark.parametrize("dtype, bound", [("bfloat16", 2.0**-7), ("float32", 4e-6)])
def test_asin_acos_stay_accurate_up_to_one_through_the_devices_range_reduction(dtype, bound):
    """Above |x| = 5/8 the device computes pi/2 - 2 asin(sqrt((1 - |x|) / 2)), so asin(0.996) is
    within one bfloat16 step (a float32 DST: a few 1e-6) of the exact value, not 4% low as a
    plain series would be."""
    values = np.concatenate([np.linspace(-0.9961, -0.001, 512), np.linspace(0.001, 0.9961, 512)])
    x = ttnn.from_numpy(values.reshape(32, 32).astype(np.float32), dtype=getattr(ttnn, dtype),
                        layout=ttnn.TILE_LAYOUT)
    outs = [ttnn.zeros((32, 32), dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT) for _ in range(2)]
    _asin_acos(x, *outs)
    v = ttnn.to_numpy(x).astype(np.float64)
    assert np.abs(ttnn.to_numpy(outs[0]) - np.arcsin(v)).max() <= bound
    assert np.abs(ttnn.to_numpy(outs[1]) - np.arccos(v)).max() <= 2 * bound
    assert np.isnan(sfpu_approx.asin(np.float32([1.5]), dtype == "float32")[0])


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
