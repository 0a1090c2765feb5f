"""A loop-carried block that starts as ``ttl.block.fill(0, ...)`` and adds float32 products
(``acc += a @ b`` over K, as TT-Lang's matmul examples write it) is kept in a float32 accumulator
buffer, not rounded to bfloat16 between K steps; run on the simulated device against numpy."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.layout.formats import DataFormat
from ttl_helpers import compiled

K_TILES = 8


@ttl.operation(grid=(1, 1))
def k_loop_matmul(a, b, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with o_dfb.reserve() as o:
            acc = ttl.block.fill(0, shape=o.shape)
            for _ in range(K_TILES):
                with a_dfb.wait() as x, b_dfb.wait() as y:
                    acc += x @ y
            o.store(acc)

    @ttl.datamovement()
    def read():
        for k in range(K_TILES):
            with a_dfb.reserve() as x, b_dfb.reserve() as y:
                ttl.copy(a[0, k], x).wait()
                ttl.copy(b[k, 0], y).wait()

    @ttl.datamovement()
    def write():
        with o_dfb.wait() as o:
            ttl.copy(o, out[0, 0]).wait()


def _tensors():
    rng = np.random.default_rng(0)
    a = rng.random((32, 32 * K_TILES), dtype=np.float32)
    b = rng.random((32 * K_TILES, 32), dtype=np.float32)
    out = ttnn.from_numpy(np.zeros((32, 32), np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    return a, b, [ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT) for v in (a, b)] + [out]


def test_the_accumulator_of_a_float32_k_loop_is_float32():
    a, b, tensors = _tensors()
    k_loop_matmul(*tensors)
    exact = a.astype(np.float64) @ b
    error = np.abs(ttnn.to_numpy(tensors[2]) - exact).max() / np.abs(exact).max()
    # the FPU's operand precision (TF32, multiplier slices) bounds it near 2**-11; a bfloat16
    # accumulator would give about 2**-8
    assert error < 1.5e-3, error


def test_the_accumulator_buffer_is_float32_in_the_program():
    _, _, tensors = _tensors()
    program = compiled(k_loop_matmul, *tensors).program
    accumulators = [cb for cb in program.circular_buffers if "accumulator" in (cb.name or "")]
    assert accumulators and all(cb.data_format is DataFormat.Float32 for cb in accumulators)


def test_fast_numerics_multiply_float32_operands_whole():
    """Fast numerics compute as TT-Lang's simulator does: float32 operands are not cut to TF32 nor
    split into fidelity phases, so the product is float32-accurate; cycles stay those of the
    faithful run."""
    from tilefold.frontend.ttl import session
    from tilefold.sim import numerics_mode

    results = {}
    for mode in ("faithful", "fast"):
        a, b, tensors = _tensors()
        with numerics_mode.chosen(mode):
            k_loop_matmul(*tensors)
        exact = a.astype(np.float64) @ b
        results[mode] = (np.abs(ttnn.to_numpy(tensors[2]) - exact).max() / np.abs(exact).max(),
                         session.settings().runs[-1][1].perf.cycles)
    assert results["fast"][0] < 1e-6 < 1e-4 < results["faithful"][0]
    assert results["fast"][1] == results["faithful"][1]
