"""``ttl.math.exp``'s keywords of TT-Lang main: ``scale=`` (exp(scale * x), the scale a bfloat16
multiplied in on the SFPU: ``exp_tile<false, true>(slot, VectorMode::RC, scale)``), ``skip_clamp_check``
and ``iterations=8`` accepted, ``approx=True`` the SFPU's approximate exp (``exp_tile<true>``), with a
scale the float32 that ``exp_tile_init<true, scale>()`` folds into its constants; other iteration
counts, and a scale of the approximate exp that is not positive, one error at the line.
Against numpy on the simulated device; the compute kernel's C++ passes check-kernel."""

from __future__ import annotations

import numpy as np
import pytest
from checkkernel import check_kernels, compiled_kernel_jobs, require_accepted

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import compiled, expect_error, zeros


def _exp_of(expression):
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 2), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 2), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as b:
                b.store(expression(a))

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0:1, 0:2], blk).wait()

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[0:1, 0:2]).wait()

    return op


def _x():
    v = np.random.default_rng(15).uniform(-3, 3, (32, 64)).astype(np.float32)
    return ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


def test_exp_with_a_scale_and_the_other_keywords(tmp_path):
    op = _exp_of(lambda a: ttl.math.exp(a, scale=0.3, skip_clamp_check=True, iterations=8, approx=False))
    x, y = _x(), zeros((32, 64))
    op(x, y)
    scale = np.float32(0.30078125)                  # 0.3 as a bfloat16
    np.testing.assert_allclose(ttnn.to_numpy(y), np.exp(scale * ttnn.to_numpy(x)), rtol=1e-2)
    jobs = compiled_kernel_jobs(compiled(op, _x(), zeros((32, 64))), tmp_path)
    assert "exp_tile<false, true>" in next(path.read_text() for path, role, _ in jobs if role == "compute")
    for result in check_kernels(jobs):
        require_accepted(result)


def _schraudolph(x: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """The SFPU's approximate exp of scale * x, written out independently: 2^(t / 256 - 127) read
    from the bits of round(t) << 15, t = (256/ln 2 · scale) · max(x, -88.5 / scale) + 32500.818359375,
    the init's two constants rounded to float32."""
    s = np.float32(scale)
    a = np.float32(np.float32(256 / np.log(2)) * s)
    floor = np.float32(np.float32(-88.5) / s)
    t = a.astype(np.float64) * np.maximum(x, floor).astype(np.float64) + 32500.818359375
    bits = np.clip(np.rint(t.astype(np.float32)), 0, 65535).astype(np.uint32) << 15
    return bits.view(np.float32)


def test_the_approximate_exp(tmp_path):
    values = np.linspace(-100, 6, 32 * 64).astype(np.float32).reshape(32, 64)
    x = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    op = _exp_of(lambda a: ttl.math.exp(a, approx=True))
    y = zeros((32, 64))
    op(x, y)
    held = ttnn.to_numpy(x).astype(np.float32)
    got = ttnn.to_numpy(y).astype(np.float32)
    expected = _schraudolph(held)
    np.testing.assert_allclose(got, expected, rtol=8e-3, atol=0)        # (the bfloat16 store)
    near = held > -80                                                   # within 4 % of exp
    np.testing.assert_allclose(got[near], np.exp(held[near]), rtol=4e-2)
    assert (got[held < -88.5] == 0).all()
    jobs = compiled_kernel_jobs(compiled(op, _x(), zeros((32, 64))), tmp_path)
    text = next(path.read_text() for path, role, _ in jobs if role == "compute")
    assert "exp_tile_init<true>();" in text and "exp_tile<true>(" in text
    for result in check_kernels(jobs):
        require_accepted(result)


def _compute_text(op, tmp_path) -> tuple[str, list]:
    jobs = compiled_kernel_jobs(compiled(op, _x(), zeros((32, 64))), tmp_path)
    return next(path.read_text() for path, role, _ in jobs if role == "compute"), jobs


def test_the_approximate_exp_of_a_scale(tmp_path):
    values = np.linspace(-120, 10, 32 * 64).astype(np.float32).reshape(32, 64)
    x = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    op = _exp_of(lambda a: ttl.math.exp(a, approx=True, scale=0.3))
    y = zeros((32, 64))
    op(x, y)
    held = ttnn.to_numpy(x).astype(np.float32)
    got = ttnn.to_numpy(y).astype(np.float32)
    np.testing.assert_allclose(got, _schraudolph(held, 0.3), rtol=8e-3, atol=0)
    scaled = np.float32(0.3) * held                     # the scale as a float32, not rounded to bfloat16
    near = scaled > -80
    np.testing.assert_allclose(got[near], np.exp(scaled[near]), rtol=4e-2)
    assert (got[scaled < -88.5] == 0).all()             # clamped at -88.5 / scale
    text, jobs = _compute_text(op, tmp_path)
    assert "exp_tile_init<true, 0x3E99999A>();" in text and "exp_tile<true>(" in text   # 0.3f's bits
    for result in check_kernels(jobs):
        require_accepted(result)


def test_two_scales_of_the_approximate_exp_in_one_kernel(tmp_path):
    """Each call runs after its own init: the simulated SFPU keeps the latest init's scale."""
    x = ttnn.from_numpy(np.linspace(-6, 3, 32 * 64).astype(np.float32).reshape(32, 64), dtype=ttnn.bfloat16,
                        layout=ttnn.TILE_LAYOUT)
    op = _exp_of(lambda a: ttl.math.exp(a, approx=True, scale=2.0) - ttl.math.exp(a, approx=True, scale=0.5))
    y = zeros((32, 64))
    op(x, y)
    held = ttnn.to_numpy(x).astype(np.float32)
    expected = _schraudolph(held, 2.0) - _schraudolph(held, 0.5)
    np.testing.assert_allclose(ttnn.to_numpy(y).astype(np.float32), expected, rtol=2e-2, atol=1e-2)
    text, jobs = _compute_text(op, tmp_path)
    assert "exp_tile_init<true, 0x40000000>();" in text and "exp_tile_init<true, 0x3F000000>();" in text
    for result in check_kernels(jobs):
        require_accepted(result)


def test_exp_options_tilefold_does_not_build():
    negative = _exp_of(lambda a: ttl.math.exp(a, approx=True, scale=-0.5))  # error
    expect_error(lambda: negative(_x(), zeros((32, 64))), test_exp_options_tilefold_does_not_build,
                 KernelError, "approx=True, scale=-0.5", "positive", "ttl.math.exp(x * s, approx=True)")
    fewer = _exp_of(lambda a: ttl.math.exp(a, iterations=4))
    with pytest.raises(KernelError, match="iterations must be 8, got 4"):
        fewer(_x(), zeros((32, 64)))
