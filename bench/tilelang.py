"""A TileLang GEMM on the simulated device against the same math in numpy.

Run: ``.venv/bin/python bench/tilelang.py``. The 2048×2048×2048 bfloat16 GEMM of
``examples/tilelang/gemm.py`` (256×256×256 blocks, one block per core of the 8×8 Wormhole grid,
float32 accumulation) is compiled once, then run on the simulator; "numpy" is the same math:
the bfloat16 inputs upcast to float32, one matmul, the result rounded to bfloat16. Both are
timed in this run in their steady state (one untimed run each first: the first run of either
maps fresh memory), best of the same number of repetitions, interleaved one for one so that a
busy machine slows them alike; the simulated time includes writing the inputs to the device
and reading C back.
Prints a table, then one JSON line with ``tilelang_gemm_vs_numpy`` (simulated wall time ÷
numpy wall time, lower is better).
"""

import importlib.util
import json
import time
from pathlib import Path

import ml_dtypes
import numpy as np

from tilefold.run.jit import jit

SIZE, BLOCK = 2048, (256, 256, 256)
REPEAT = 7


def gemm(M, N, K, block_M, block_N, block_K):
    """The canonical TileLang GEMM of examples/tilelang/gemm.py, as a ``@T.prim_func``."""
    path = Path(__file__).resolve().parents[1] / "examples" / "tilelang" / "gemm.py"
    spec = importlib.util.spec_from_file_location("tilelang_gemm_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example.matmul.factory(M, N, K, block_M, block_N, block_K)


def main() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((SIZE, SIZE)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((SIZE, SIZE)).astype(ml_dtypes.bfloat16)
    kernel = jit(gemm(SIZE, SIZE, SIZE, *BLOCK))
    start = time.perf_counter()
    kernel.compile()
    compile_s = time.perf_counter() - start

    def numpy_gemm():
        return (a.astype(np.float32) @ b.astype(np.float32)).astype(ml_dtypes.bfloat16)

    kernel(a, b)
    numpy_gemm()
    sim_times, numpy_times = [], []
    for _ in range(REPEAT):
        t = time.perf_counter()
        c = kernel(a, b)
        sim_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        ref = numpy_gemm()
        numpy_times.append(time.perf_counter() - t)
    err = np.abs(c.astype(np.float32) - ref.astype(np.float32))
    ulp = np.abs(ref.astype(np.float32)) * 2.0 ** -7
    assert np.all(err <= np.maximum(ulp, 1e-2)), "the simulated GEMM does not match numpy to one bfloat16 ulp"
    perf = kernel.last_result.perf
    sim_s, numpy_s = min(sim_times), min(numpy_times)
    ratio = sim_s / numpy_s
    print(f"TileLang GEMM {SIZE}x{SIZE}x{SIZE} bfloat16, blocks {BLOCK[0]}x{BLOCK[1]}x{BLOCK[2]}, best of {REPEAT}")
    print(f"{'':<34}{'seconds':>10}")
    print(f"{'compile (pipeline + Program)':<34}{compile_s:>10.3f}")
    print(f"{'simulated run':<34}{sim_s:>10.3f}")
    print(f"{'numpy (bf16 -> f32 matmul -> bf16)':<34}{numpy_s:>10.3f}")
    print(f"{'ratio simulated / numpy':<34}{ratio:>10.2f}")
    print(f"max |error| {err.max():.3f} (within one bfloat16 ulp of numpy); estimated device time "
          f"{perf.seconds * 1e3:.3f} ms on {perf.cores_used} cores ({perf.arch_name})")
    print(json.dumps({"tilelang_gemm_vs_numpy": round(ratio, 3), "simulated_s": round(sim_s, 4),
                      "numpy_s": round(numpy_s, 4)}))


if __name__ == "__main__":
    main()
