"""The flagship demo (``make demo``): what tilefold does, end to end, in a minute.

Reads: nothing. Writes: ``build/demo/`` (a layout picture, TT-Metalium projects) and a
report on stdout. Each step is something a Tenstorrent kernel author does daily: look at a
layout, compile an op to C++, run it on the simulated device against numpy, see how close it
runs to the hardware's limit, and find a bug. The centrepiece is row_standardize: a row-major
tensor in DRAM, tilized, standardized per row with reduce_tile, untilized and written back.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

OUT = Path("build/demo")


def heading(text: str) -> None:
    print(f"\n== {text} " + "=" * max(0, 72 - len(text)))


def step_layout() -> None:
    from tilefold.cli.main import main

    heading("1. A tensor layout: 53x63 on a 3x2 grid (the tt-mlir tensor layout's padding example), block-sharded in L1")
    picture = OUT / "layout.png"
    main(["layout", "53,63", "--dtype", "bfloat16", "--grid", "3x2", "--map", "(d0, d1) -> (d0, d1)",
          "--memory-layout", "block_sharded", "--shard-shape", "32,32", "--buffer-type", "l1", "--png", str(picture)])


def step_tilize() -> None:
    from tilefold.codegen.cpp import write_project
    from tilefold.ops import host_data
    from tilefold.ops.tilize import build
    from tilefold.sim import Device

    heading("2. TT-Metal tilize factory, [1,1,3232,64] bfloat16: compile to C++ and simulate")
    instance = build(argparse.Namespace(shape="1,1,3232,64", dtype="bfloat16", grid=None, seed=0, arch=None))
    for line in instance.summary:
        print(line)
    project = OUT / "tilize"
    paths = write_project(instance.program, project, host_data(instance))
    print(f"C++ project: {', '.join(sorted(p.name for p in paths if p.suffix in ('.cpp', '.txt')))} in {project}/")
    start = time.perf_counter()
    result = Device().run(instance.program, instance.inputs)
    wall = time.perf_counter() - start
    for comparison in instance.check(result.outputs):
        print(comparison)
    print(result.perf.summary())
    print(f"(simulated in {wall:.2f} s of host time)")


def step_row_standardize() -> None:
    from tilefold.codegen.cpp import write_project
    from tilefold.ops import host_data
    from tilefold.ops.row_standardize import build, dram_roofline_seconds
    from tilefold.sim import Device

    shape = (8192, 256)
    heading(f"3. row_standardize {shape[0]}x{shape[1]} bfloat16 row-major: (x - mean) / sqrt(var + eps) per row")
    instance = build(argparse.Namespace(shape=f"{shape[0]},{shape[1]}", eps=1e-5, grid=None, seed=0, arch=None))
    for line in instance.summary:
        print(line)
    project = OUT / "row_standardize"
    write_project(instance.program, project, host_data(instance))
    print(f"C++ project in {project}/")
    start = time.perf_counter()
    result = Device().run(instance.program, instance.inputs)
    wall = time.perf_counter() - start
    for comparison in instance.check(result.outputs):
        print(comparison)
    roofline = dram_roofline_seconds(shape)
    print(f"modeled {result.perf.seconds * 1e6:.1f} us; moving the input and output once at peak DRAM bandwidth "
          f"takes {roofline * 1e6:.1f} us: {roofline / result.perf.seconds:.0%} of the DRAM roofline")
    print(f"(simulated in {wall:.2f} s of host time)")


def step_bug() -> None:
    import importlib.util

    import numpy as np

    from tilefold.errors import TilefoldError
    from tilefold.sim import Device

    heading("4. A kernel with a missing read barrier: the simulator names the lines")
    path = Path(__file__).resolve().parents[1] / "examples" / "pykernel" / "missing_barrier.py"
    spec = importlib.util.spec_from_file_location("missing_barrier", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        Device().run(module.copy_program(), {"src": np.ones((64, 64), np.float32)})
        print("no hazard found (unexpected)")
    except TilefoldError as err:
        print(f"{type(err).__name__}: {err}")


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    step_layout()
    step_tilize()
    step_row_standardize()
    step_bug()
    from tilefold.arch import get_arch

    print(f"\nEverything above ran on the simulated {get_arch().describe()}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
