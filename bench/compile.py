"""Compile time of a TileLang GEMM: 2048×2048×2048 bfloat16 through the whole pipeline and codegen.

Run: ``.venv/bin/python bench/compile.py``. Measures, best of several runs, the time from the
``@T.prim_func`` to the TT-Metalium sources: building the ``tile`` IR from the Python body,
the passes of the TileLang pipeline, the host Program, the three
kernel sources, ``main.cpp`` and ``tt.plan.json`` (the input bytes of ``main.cpp`` are
zeros: no simulation is timed here). Prints a table of the phases, then one JSON line with
``compile_s_gemm2048`` (seconds, lower is better).
"""

import importlib.util
import json
import time
from pathlib import Path

from tilefold.arch import get_arch
from tilefold.codegen.cpp import HostData, emit_host, emit_kernel
from tilefold.codegen.plan import emit_tt_plan
from tilefold.compiler import build_tilelang_program, run_pipeline
from tilefold.ir.attributes import kernel_function

SIZE, BLOCK = 2048, (256, 256, 256)
REPEAT = 5


def gemm(M, N, K, block_M, block_N, block_K):
    """The canonical TileLang GEMM of examples/tilelang/gemm.py, as a ``@T.prim_func``."""
    path = Path(__file__).resolve().parents[1] / "examples" / "tilelang" / "gemm.py"
    spec = importlib.util.spec_from_file_location("tilelang_gemm_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example.matmul.factory(M, N, K, block_M, block_N, block_K)


def compile_once() -> dict[str, float]:
    prim = gemm(SIZE, SIZE, SIZE, *BLOCK)
    times = {}
    start = time.perf_counter()
    module = prim.module()
    times["build tile IR"] = time.perf_counter() - start
    arch = get_arch()
    t = time.perf_counter()
    run_pipeline(module, "tilelang", arch)
    times["pipeline (20 passes)"] = time.perf_counter() - t
    t = time.perf_counter()
    program = build_tilelang_program(module, arch)
    times["host Program"] = time.perf_counter() - t
    t = time.perf_counter()
    sources = [emit_kernel(k.function) for k in program.kernels]
    zeros = HostData({b.name: bytes(b.size) for b in program.buffers.values() if b.role in ("input", "inout")})
    host = emit_host(program, zeros)
    plan = emit_tt_plan(kernel_function(module))
    times["C++ and plan"] = time.perf_counter() - t
    times["total"] = time.perf_counter() - start
    assert len(sources) == 3 and "int main()" in host and len(plan["work_partition"]) == 64
    return times


def main() -> None:
    runs = [compile_once() for _ in range(REPEAT)]
    best = min(runs, key=lambda r: r["total"])
    print(f"TileLang GEMM {SIZE}x{SIZE}x{SIZE}, blocks {BLOCK[0]}x{BLOCK[1]}x{BLOCK[2]}, best of {REPEAT}")
    print(f"{'phase':<24}{'seconds':>10}")
    for phase, seconds in best.items():
        print(f"{phase:<24}{seconds:>10.3f}")
    print(json.dumps({"compile_s_gemm2048": round(best["total"], 4)}))


if __name__ == "__main__":
    main()
