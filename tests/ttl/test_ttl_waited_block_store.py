"""Storing into a block obtained with ``wait()``: the block's value is replaced until it is popped
(reads after the store see the new value, a value computed from it outlives the pop); run on
the simulated device against numpy, C++ checked against the real headers."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import compiled, tile_tensor, zeros


@ttl.operation(grid=(1, 1))
def bump_in_place(x, y):
    """y = exp(x) + 1, the sum stored back into x's waited block and read from there; written
    as an operation body without kernel functions."""
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 2), block_count=1)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 2), block_count=2)
    with x_dfb.reserve() as xb:
        ttl.copy(x[0:1, 0:2], xb).wait()
    with x_dfb.wait() as xs:
        xs.store(ttl.math.exp(xs))
        xs.store(xs + ttl.math.fill(1.0, shape=xs.shape))
        with y_dfb.reserve() as yb:
            yb.store(xs)
    with y_dfb.wait() as yb:
        ttl.copy(yb, y[0:1, 0:2]).wait()


@ttl.operation(grid=(1, 1))
def replaced_in_a_loop(x, y):
    """For each of x's tiles: the waited tile is replaced by its square, and a value computed
    from the replacement (twice it) is stored after the tile was popped."""
    n = x.shape[1] // 32
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        for j in range(n):
            with x_dfb.reserve() as xb:
                ttl.copy(x[0, j], xb).wait()

    @ttl.compute()
    def compute():
        for _ in range(n):
            xs = x_dfb.wait()
            xs.store(xs * xs)
            twice = xs + xs
            xs.pop()
            with y_dfb.reserve() as yb:
                yb.store(twice)

    @ttl.datamovement()
    def write():
        for j in range(n):
            with y_dfb.wait() as yb:
                ttl.copy(yb, y[0, j]).wait()


def _bf16(v):
    return ttnn.to_numpy(ttnn.from_numpy(np.asarray(v, np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT))


def test_a_value_stored_into_a_waited_block_is_what_later_reads_see():
    x = tile_tensor((32, 64), seed=1, scale=0.5)
    y = zeros((32, 64))
    bump_in_place(x, y)
    expected = _bf16(np.exp(ttnn.to_numpy(x).astype(np.float64))) + 1
    np.testing.assert_allclose(ttnn.to_numpy(y), expected, rtol=2e-2, atol=2e-2)


def test_a_value_computed_from_a_replaced_block_outlives_its_pop():
    x = tile_tensor((32, 128), seed=2)
    y = zeros((32, 128))
    replaced_in_a_loop(x, y)
    xv = ttnn.to_numpy(x).astype(np.float64)
    np.testing.assert_allclose(ttnn.to_numpy(y), 2 * _bf16(xv * xv), rtol=1e-2, atol=1e-2)


def test_storing_into_a_waited_block_compiles_against_the_real_compute_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    program = compiled(replaced_in_a_loop, tile_tensor((32, 64)), zeros((32, 64))).program
    kernel = next(k for k in program.kernels if k.name == "compute")
    path = tmp_path / "compute.cpp"
    path.write_text(emit_kernel(kernel.function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute",
                                                            check_kernel.accessor_compile_args(program, kernel)))
