"""TT-Lang programs as people write them: block reuse inside one compute kernel, the full
``ttl.math`` surface, plain Python arguments, each run on the simulated device against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import tile_tensor, zeros


def test_unary_op_on_a_block_the_same_compute_kernel_stored_earlier():
    @ttl.operation(grid=(1, 1))
    def op(x, out):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        t_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as xv, t_dfb.reserve() as t:
                t.store(xv)
            with t_dfb.wait() as tv, o_dfb.reserve() as o:
                o.store(ttl.math.exp(tv))

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as b:
                ttl.copy(x[0, 0], b).wait()

        @ttl.datamovement()
        def write():
            with o_dfb.wait() as b:
                ttl.copy(b, out[0, 0]).wait()

    x = tile_tensor((32, 32), seed=11)
    y = zeros((32, 32))
    op(x, y)
    np.testing.assert_allclose(ttnn.to_numpy(y), np.exp(ttnn.to_numpy(x).astype(np.float64)), rtol=0.02, atol=0.02)


def run_block_function(expression, x):
    """``y = expression(x_blk)`` over one block of x's tiles; returns y as float32."""
    rows, cols = x.shape[0] // 32, x.shape[1] // 32

    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(rows, cols))
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(rows, cols))

        @ttl.compute()
        def compute():
            with x_dfb.wait() as x_blk, y_dfb.reserve() as y_blk:
                y_blk.store(expression(x_blk))

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0:rows, 0:cols], blk).wait()

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[0:rows, 0:cols]).wait()

    y = zeros(tuple(x.shape))
    op(x, y)
    return ttnn.to_numpy(y).astype(np.float64)


def _softplus(v, beta, threshold):
    return np.where(beta * v > threshold, v, np.log1p(np.exp(beta * v)) / beta)


SELU_SCALE, SELU_ALPHA = 1.0507009873554805, 1.6732632423543772
# (call, reference on float64 inputs, input range)
MATH_FUNCTIONS = {
    "asin": (lambda b: ttl.math.asin(b), np.arcsin, (-0.95, 0.95)),
    "acos": (lambda b: ttl.math.acos(b), np.arccos, (-0.95, 0.95)),
    "atan": (lambda b: ttl.math.atan(b), np.arctan, (-4, 4)),
    "sinh": (lambda b: ttl.math.sinh(b), np.sinh, (-3, 3)),
    "cosh": (lambda b: ttl.math.cosh(b), np.cosh, (-3, 3)),
    "asinh": (lambda b: ttl.math.asinh(b), np.arcsinh, (-4, 4)),
    "acosh": (lambda b: ttl.math.acosh(b), np.arccosh, (1, 5)),
    "atanh": (lambda b: ttl.math.atanh(b), np.arctanh, (-0.9, 0.9)),
    "tan": (lambda b: ttl.math.tan(b), np.tan, (-1.2, 1.2)),
    "elu": (lambda b: ttl.math.elu(b, 0.5), lambda v: np.where(v > 0, v, 0.5 * np.expm1(v)), (-4, 4)),
    "celu": (lambda b: ttl.math.celu(b, 2.0, 0.5), lambda v: np.maximum(v, 0) + np.minimum(0, 2 * np.expm1(v / 2)),
             (-4, 4)),
    "selu": (lambda b: ttl.math.selu(b), lambda v: SELU_SCALE * np.where(v > 0, v, SELU_ALPHA * np.expm1(v)), (-4, 4)),
    "leaky_relu": (lambda b: ttl.math.leaky_relu(b, 0.1), lambda v: np.where(v < 0, 0.1 * v, v), (-4, 4)),
    "prelu": (lambda b: ttl.math.prelu(b, alpha=0.3), lambda v: np.where(v < 0, 0.3 * v, v), (-4, 4)),
    "softplus": (lambda b: ttl.math.softplus(b, 2.0, 0.5, 4.0), lambda v: _softplus(v, 2.0, 4.0), (-4, 4)),
    "softsign": (lambda b: ttl.math.softsign(b), lambda v: v / (1 + np.abs(v)), (-4, 4)),
    "hardsigmoid": (lambda b: ttl.math.hardsigmoid(b), lambda v: np.clip(v / 6 + 0.5, 0, 1), (-5, 5)),
    "expm1": (lambda b: ttl.math.expm1(b), np.expm1, (-2, 2)),
    "logp1": (lambda b: ttl.math.logp1(b), np.log1p, (-0.5, 4)),
    "round": (lambda b: ttl.math.round(b), np.round, (-6, 6)),
    "round_decimals": (lambda b: ttl.math.round(b, decimals=1), lambda v: np.round(v, 1), (-6, 6)),
    "trunc": (lambda b: ttl.math.trunc(b), np.trunc, (-6, 6)),
    "frac": (lambda b: ttl.math.frac(b), lambda v: v - np.trunc(v), (-6, 6)),
    "signbit": (lambda b: ttl.math.signbit(b), lambda v: np.signbit(v).astype(np.float64), (-2, 2)),
    "threshold": (lambda b: ttl.math.threshold(b, 0.5, -3.0), lambda v: np.where(v > 0.5, -3.0, v), (-2, 2)),
}


@pytest.mark.parametrize("name", MATH_FUNCTIONS)
def test_math_function_against_numpy(name):
    call, reference, (lo, hi) = MATH_FUNCTIONS[name]
    values = np.random.default_rng(len(name)).uniform(lo, hi, (32, 64)).astype(np.float32)
    x = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    v = ttnn.to_numpy(x).astype(np.float64)
    np.testing.assert_allclose(run_block_function(call, x), reference(v), rtol=0.02, atol=0.02)


def test_math_functions_compile_against_the_real_compute_headers(tmp_path, check_kernel):
    import tilefold.frontend.ttl.runner as runner
    from tilefold.codegen.cpp import emit_kernel

    def chain(b):
        for name, (call, _, _) in MATH_FUNCTIONS.items():
            b = call(b)
        return b

    programs = []
    original = runner.run_operation

    def recording(operation, capture, compiled):
        programs.append(compiled.program)
        return original(operation, capture, compiled)

    runner.run_operation = recording
    try:
        run_block_function(chain, tile_tensor((32, 32), seed=3, scale=0.1))
    finally:
        runner.run_operation = original
    compute = next(k for k in programs[0].kernels if k.is_compute)
    path = tmp_path / "compute.cpp"
    text = emit_kernel(compute.function)
    path.write_text(text)
    for call in ("asin_tile(", "softplus_tile(", "round_tile(", "log1p_tile(", "celu_tile(", "where_tile"):
        assert call in text
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))
