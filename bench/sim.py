"""Simulator speed: wall time of a simulated run as a ratio to the same math in numpy.

Run with ``.venv/bin/python bench/sim.py``. Measured in one run, best of a few repetitions:

* eltwise add of two 4096×4096 bfloat16 tensors on the 8×8 Wormhole grid, against numpy adding
  the same bfloat16 values in float32 and rounding to bfloat16 (what the device computes);
* matmul of 2048×2048×2048 bfloat16 on the 8×8 grid (the multi-core factory, float32
  accumulation in DST), against numpy doing the same math: the bfloat16 inputs upcast to float32,
  one matmul, the result rounded to bfloat16;
* for reference, the single-core factory at 512×512×512 (bfloat16 DST), against numpy doing what
  that device does: 32-wide K slices multiplied in float32 and accumulated with a bfloat16
  rounding after each slice.

Inputs are the same bfloat16 arrays numpy starts from. The simulated time includes writing the inputs to the device (tilize, format conversion) and
reading the outputs back. Prints a table, then one JSON line with ``eltwise_vs_numpy``,
``matmul_vs_numpy`` (the multi-core 2048³ matmul) and ``matmul_single_core_512_vs_numpy`` (time
ratios, lower is better).
"""

from __future__ import annotations

import json
import time

import ml_dtypes
import numpy as np

from tilefold.ops.eltwise import eltwise_binary_multi_core
from tilefold.ops.matmul import matmul_config, matmul_single_core
from tilefold.ops.matmul_multicore import matmul_multi_core, multicore_matmul_config
from tilefold.sim import Device

BF16 = ml_dtypes.bfloat16


def best(fn, repeat: int) -> float:
    """Best wall time of ``repeat`` calls after one warm-up call (first-run costs: kernel
    translation, memory pool allocation, BLAS thread start-up)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bf16_values(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32).astype(BF16)


def simulated(program, a, b):
    """(the ``dst`` output, best wall time of 3 runs) of ``program`` on inputs ``src0`` = a, ``src1`` = b."""
    device = Device()
    result = {}

    def simulate():
        result["out"] = device.run(program, {"src0": a, "src1": b}, progress=False).outputs["dst"]

    seconds = best(simulate, 3)
    return result["out"], seconds


def eltwise():
    shape = (4096, 4096)
    a, b = bf16_values(shape, 1), bf16_values(shape, 2)
    program = eltwise_binary_multi_core(shape, "add", "bfloat16")
    out, sim = simulated(program, a, b)

    def numpy_same_math():
        return (a.astype(np.float32) + b.astype(np.float32)).astype(BF16)

    ref = best(numpy_same_math, 5)
    assert np.array_equal(out, numpy_same_math().astype(np.float32)), "simulated eltwise add is wrong"
    return sim, ref


def matmul_multicore():
    n = 2048
    a, b = bf16_values((n, n), 5), bf16_values((n, n), 6)
    program = matmul_multi_core(multicore_matmul_config(n, n, n, "bfloat16", fp32_dest_acc_en=True))
    out, sim = simulated(program, a, b)

    def numpy_same_math():
        return (a.astype(np.float32) @ b.astype(np.float32)).astype(BF16)

    ref = best(numpy_same_math, 3)
    expected = numpy_same_math().astype(np.float32)
    assert np.abs(out - expected).max() <= 2.0 ** -7 * np.abs(expected).max(), "simulated matmul is wrong"
    return sim, ref


def matmul_single_core_512():
    n = 512
    a, b = bf16_values((n, n), 3), bf16_values((n, n), 4)
    program = matmul_single_core(matmul_config(n, n, n, "bfloat16"))
    out, sim = simulated(program, a, b)

    a32, b32 = a.astype(np.float32), b.astype(np.float32)

    def numpy_same_math():
        acc = np.zeros((n, n), np.float32)
        for k in range(0, n, 32):
            acc = (acc + a32[:, k:k + 32] @ b32[k:k + 32]).astype(BF16).astype(np.float32)
        return acc

    ref = best(numpy_same_math, 5)
    exact = a32.astype(np.float64) @ b32.astype(np.float64)
    assert np.corrcoef(out.ravel(), exact.ravel())[0, 1] > 0.9999, "simulated matmul is wrong"
    return sim, ref


def main() -> None:
    e_sim, e_ref = eltwise()
    m_sim, m_ref = matmul_multicore()
    s_sim, s_ref = matmul_single_core_512()
    rows = [
        ("eltwise add 4096x4096 bf16, 8x8 cores", e_sim, e_ref, "bf16 add in numpy"),
        ("matmul 2048^3 bf16, 8x8 cores, fp32 DST", m_sim, m_ref, "float32 a @ b, rounded to bf16"),
        ("matmul 512^3 bf16, 1 core, bf16 DST", s_sim, s_ref, "K-sliced bf16 accumulation"),
    ]
    print(f"{'workload':42} {'simulated s':>12} {'numpy s':>9} {'ratio':>7}  numpy does")
    for name, sim, ref, what in rows:
        print(f"{name:42} {sim:12.3f} {ref:9.4f} {sim / ref:7.1f}  {what}")
    print(json.dumps({"eltwise_vs_numpy": round(e_sim / e_ref, 2), "matmul_vs_numpy": round(m_sim / m_ref, 2),
                      "matmul_single_core_512_vs_numpy": round(s_sim / s_ref, 2)}))


if __name__ == "__main__":
    main()
