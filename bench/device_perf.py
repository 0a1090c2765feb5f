"""Modeled device time of tilefold's programs against TT-Metal's published measurements.

Run: ``.venv/bin/python bench/device_perf.py [--quick]``. For each row of
``tilefold.arch.published.GEMM_N150`` (1024³ … 4096³, bfloat16 HiFi2 and bfloat8_b LoFi, n150) and
of ``GEMM_P150`` (p150, 13×10 grid) it builds the 2-D multicast matmul
(``tilefold.ops.matmul_mcast``: the board's grid, A, B and C interleaved in DRAM, the factory's
default blocking, packer L1 accumulation, output in the input's format) and runs it on the
simulated board with full numerics (the result is checked against numpy), then reports the
modeled time and FPU utilisation beside the published device time (derived from the published
device-based utilisation) and inference time, and the ratios modeled / published.

The published inference time (e.g. 299 µs for 2048³ bfloat16 HiFi2 on n150) is measured from the
host and includes dispatch; the device time its device-based utilisation implies (197 µs for that
row) is what a kernel cost model estimates, so ``modeled_vs_device`` is the calibration check and
``..._vs_299us`` the comparison with the host-measured figure.

It also runs the TileLang GEMM of ``examples/tilelang/gemm.py`` at 2048³ (256×256×256 blocks; the
pipeline multicasts the A and B blocks and walks the blocks in its rasterization order) at the
published row's math fidelity, HiFi2 (``T.annotate_tt_compute``), and at the TileLang default,
HiFi4, and reports their modeled times; and ``row_standardize`` (8192×1024 bfloat16) in all three
front ends — ``tilefold.ops`` (row-major in DRAM), the TileLang and TT-Lang examples (tile layout) —
each with its modeled time as a fraction of the DRAM roofline (input and output moved once at
peak bandwidth). ``--quick`` runs only the 1024³ and 2048³ n150 rows and the smallest p150 rows.

Prints a table, then one JSON line.
"""

import argparse
import importlib.util
import json
import time
from pathlib import Path

import numpy as np

from tilefold.arch import get_arch
from tilefold.arch.published import GEMM_FLOPS_SOURCE, GEMM_N150, GEMM_P150, GEMM_P150_SOURCE
from tilefold.ops import matmul_mcast as mm
from tilefold.ops.base import pcc, random_input
from tilefold.sim import Device

ROOT = Path(__file__).resolve().parents[1]


def gemm_row(row, arch) -> dict:
    config = mm.mcast_matmul_config(row.M, row.K, row.N, row.dtype, math_fidelity=row.math_fidelity, arch=arch)
    program = mm.matmul_mcast(config, arch=arch)
    a = mm.stored(random_input((row.M, row.K), row.dtype, seed=0), config.in_format)
    b = mm.stored(random_input((row.K, row.N), row.dtype, seed=1), config.in_format)
    start = time.perf_counter()
    result = Device(arch).run(program, {"src0": a, "src1": b})
    wall = time.perf_counter() - start
    out = result.outputs["dst"]
    exact = a.astype(np.float64) @ b.astype(np.float64)
    modeled_us = result.perf.seconds * 1e6
    ideal_us = row.ideal_cycles / row.clock_hz * 1e6
    return {
        "board": row.board, "shape": f"{row.M}x{row.K}x{row.N}", "dtype": row.dtype,
        "math_fidelity": row.math_fidelity,
        "in0_block_w": config.in0_block_w, "out_subblock": [config.out_subblock_h, config.out_subblock_w],
        "modeled_us": round(modeled_us, 1), "modeled_utilization": round(ideal_us / modeled_us, 4),
        "published_device_us": round(row.device_us, 1), "published_inference_us": round(row.inference_us, 1),
        "published_device_utilization": row.device_utilization,
        "modeled_vs_device": round(modeled_us / row.device_us, 3),
        "modeled_vs_inference": round(modeled_us / row.inference_us, 3),
        "pcc": round(float(pcc(out, exact)), 6), "dram_bytes": result.perf.dram_bytes,
        "simulated_s": round(wall, 1),
    }


def load_example(front_end: str, name: str):
    path = ROOT / "examples" / front_end / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{front_end}_{name}_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example


def tilelang_gemm(size: int = 2048, block=(256, 256, 256), math_fidelity: str = "HiFi2") -> dict:
    example = load_example("tilelang", "gemm")
    kernel = example.matmul(size, size, size, *block, math_fidelity=math_fidelity)
    a = random_input((size, size), "bfloat16", seed=0)
    b = random_input((size, size), "bfloat16", seed=1)
    c = kernel(a, b)
    modeled_us = kernel.last_result.perf.seconds * 1e6
    groups = kernel.compiled.function.attributes.get("tt.multicast_groups")
    return {"shape": f"{size}x{size}x{size}", "block": list(block), "math_fidelity": math_fidelity,
            "multicast": sorted(groups.to_dict()) if groups is not None else [],
            "modeled_us": round(modeled_us, 1),
            "pcc": round(float(pcc(np.asarray(c, np.float32), a.astype(np.float64) @ b.astype(np.float64))), 6),
            "dram_bytes": kernel.last_result.perf.dram_bytes}


def _against_roofline(shape, seconds: float, err: float) -> dict:
    from tilefold.ops.row_standardize import dram_roofline_seconds

    roofline = dram_roofline_seconds(shape)
    return {"shape": f"{shape[0]}x{shape[1]}", "modeled_us": round(seconds * 1e6, 1),
            "dram_roofline_us": round(roofline * 1e6, 1), "fraction_of_dram_roofline": round(roofline / seconds, 3),
            "max_abs_error": round(err, 4)}


def row_standardize(shape=(8192, 1024)) -> dict:
    """``tilefold.ops.row_standardize`` (row-major in DRAM, tilized and untilized on the device), the
    TileLang kernel of ``examples/tilelang/row_standardize.py`` and the TT-Lang operation of
    ``examples/ttl/row_standardize.py`` (both on tile-layout tensors), each against the DRAM roofline."""
    from tilefold.ops.row_standardize import reference, row_standardize_program

    program = row_standardize_program(shape)
    x = random_input(shape, "bfloat16", seed=0, low=-3.0, high=5.0)
    result = Device(get_arch("n150")).run(program, {"src": x})
    out = _against_roofline(shape, result.perf.seconds, float(np.abs(result.outputs["dst"] - reference(x)).max()))
    kernel = load_example("tilelang", "row_standardize").row_standardize(*shape)
    y = np.asarray(kernel(x), np.float32)
    out["tilelang"] = _against_roofline(shape, kernel.last_result.perf.seconds,
                                        float(np.abs(y - reference(np.asarray(x, np.float32))).max()))
    y, ref, perf = load_example("ttl", "row_standardize").main(shape=shape)
    out["ttl"] = _against_roofline(shape, perf.seconds, float(np.abs(y - ref).max()))
    return out


def _print_row(r: dict) -> None:
    print(f"{r['board']:>5} {r['shape']:>16} {r['dtype']:>10} {r['math_fidelity']:>6} {r['modeled_us']:>11.1f} "
          f"{r['modeled_utilization']:>6.1%} {r['published_device_us']:>10.1f} {r['published_inference_us']:>10.1f} "
          f"{r['modeled_vs_device']:>8.3f} {r['modeled_vs_inference']:>7.3f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the 1024³ and 2048³ n150 rows, the smallest p150 rows")
    args = parser.parse_args()
    n150, p150 = get_arch("n150"), get_arch("p150-full")
    rows = [(r, n150) for r in GEMM_N150 if not args.quick or r.M <= 2048]
    rows += [(r, p150) for r in GEMM_P150 if not args.quick or r.K <= 1664]
    print(f"{'board':>5} {'shape':>16} {'dtype':>10} {'fid':>6} {'modeled us':>11} {'util':>6} {'device us':>10} "
          f"{'infer us':>10} {'/device':>8} {'/infer':>7}")
    results = []
    for row, arch in rows:
        r = gemm_row(row, arch)
        results.append(r)
        _print_row(r)
    tl = tilelang_gemm()
    tl4 = tilelang_gemm(math_fidelity="HiFi4")
    print(f"TileLang GEMM 2048^3 (examples/tilelang/gemm.py, multicast {', '.join(tl['multicast']) or 'none'}): "
          f"modeled {tl['modeled_us']:.1f} us at HiFi2 ({tl['modeled_us'] / 298.9:.2f}x the published 299 us "
          f"host-measured time), {tl4['modeled_us']:.1f} us at HiFi4")
    rs = row_standardize()
    for label, r in (("tilefold.ops", rs), ("TileLang", rs["tilelang"]), ("TT-Lang", rs["ttl"])):
        print(f"row_standardize {r['shape']} ({label}): modeled {r['modeled_us']:.1f} us, DRAM roofline "
              f"{r['dram_roofline_us']:.1f} us ({r['fraction_of_dram_roofline']:.0%})")
    n150_rows = [r for r in results if r["board"] == "n150"]
    p150_rows = [r for r in results if r["board"] == "p150"]
    mm2048 = next(r for r in n150_rows if r["shape"] == "2048x2048x2048" and r["dtype"] == "bfloat16")

    def span(rs):
        ratios = [r["modeled_vs_device"] for r in rs]
        return [min(ratios), max(ratios)] if ratios else []

    print(json.dumps({
        "device_perf": {
            "arch": "n150", "source": GEMM_FLOPS_SOURCE, "matmul_mcast": n150_rows,
            "modeled_vs_device_range": span(n150_rows),
            "matmul_mcast_2048_bf16_hifi2_vs_299us": round(mm2048["modeled_us"] / 298.9, 3),
            "p150": {"source": GEMM_P150_SOURCE, "matmul_mcast": p150_rows,
                     "modeled_vs_device_range": span(p150_rows)},
            "tilelang_gemm_2048": tl,
            "tilelang_gemm_2048_vs_299us": round(tl["modeled_us"] / 298.9, 3),
            "tilelang_gemm_2048_hifi4": tl4,
            "row_standardize": rs,
        }
    }))


if __name__ == "__main__":
    main()
