"""TT-Lang's tutorials at their shipped sizes: tilefold's whole-process wall time, and tt-lang-sim's beside it.

The tutorials ship inside the ``tt-lang-sim`` wheel (``ttl.tutorials``); tilefold does not depend on
it. Point the bench at a Python that has it installed (``--peer /path/to/venv/bin/python`` or the
``TILEFOLD_PEER_PYTHON`` variable) and it reads each tutorial from that installation, runs it there
with the ``tt-lang-sim`` command and here with the ``tilefold sim`` command, with only its imports
changed (``import ttl`` → ``import tilefold.ttl as ttl``, ``import ttnn`` → ``import tilefold.ttnn as
ttnn``; the rewritten copy goes to a temporary folder), alternating the two, each as its own process,
``--repeat`` times. Both sides must exit 0 (every tutorial checks its own result).

tilefold's modules are byte-compiled first (``compileall``, untimed), as pip does for an installed
package such as the peer: with ``PYTHONDONTWRITEBYTECODE`` set, every process would otherwise
compile them from source again.

The tutorials import torch, whose import alone takes about a second on either side: a floor that
whole-process times cannot go below. The bench measures it (``python -c "import torch"``) and also
reports the ratio of the times above that floor.

Each run's CPU time (user + system, of the process and its children) is reported beside its wall
time, with the load average at the start and the end: on a shared machine the wall times of the two
sides move with the load, their CPU times much less.

Without a peer the bench runs the project's own TT-Lang examples (``examples/ttl``) at the tutorials'
sizes instead, says so, and prints tilefold's times only.

The matmul tutorials (8192³) also get their *product floors*: the time numpy takes for the
products alone, at the simulator's rate on one BLAS thread, measured here on the one-node
tutorial's product shape (a 4×4-tile block, one K tile a step: 128×32 @ 32×128). Faithful numerics
need float64 products (a bfloat16 DST rounds after every K tile, and the hardware sums each K tile's
32 products exactly before that); fast numerics need float32 ones. A run cannot be faster than its
floor, so where the floor is above half of tt-lang-sim's time, the 2× target is out of reach in that
mode: the bench prints both floors beside half the peer's time.

Run: ``.venv/bin/python bench/tutorials.py --peer /path/to/venv/bin/python [--only elementwise]
[--repeat 3] [--with-step-1] [--numerics fast]``. Prints a table and, as its last line, one JSON
object. ``--numerics fast`` runs tilefold with float32 accumulation (as tt-lang-sim computes; see
``tilefold.sim.numerics_mode``); the default is the device's own rounding.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# name -> (tutorial module under ttl.tutorials, the project's example standing in without a peer, its call)
TUTORIALS = {
    "elementwise_1": ("elementwise/step_1_single_node_single_tile_block", "eltwise_single_tile", "main((2048, 2048))"),
    "elementwise_2": ("elementwise/step_2_single_node_multitile_block", "eltwise_multitile", "main((2048, 2048))"),
    "elementwise_3": ("elementwise/step_3_multinode", "eltwise_grid", "main((2048, 2048))"),
    "elementwise_4": ("elementwise/step_4_multinode_grid_full", "eltwise_full_grid", "main((2048, 2048))"),
    "broadcast_1": ("broadcast/single_node_broadcast_single_tile_block", "broadcast", "main(2048, 2048)"),
    "broadcast_2": ("broadcast/single_node_broadcast_multitile_blocks", "broadcast", "main(2048, 2048)"),
    "matmul_2": ("matmul/step_2_single_node_multitile_block", "matmul_single_node", "main(8192, 8192, 8192)"),
    "matmul_3": ("matmul/step_3_multinode", "matmul_multinode", "main(8192, 8192, 8192)"),
    "matmul_4": ("matmul/step_4_multinode_grid_full", "matmul_multinode", "main(8192, 8192, 8192)"),
    "matmul_1": ("matmul/step_1_single_node_single_tile_block", None, None),
}
SLOW = {"matmul_1"}          # over ten minutes: only with --with-step-1 or --only
IMPORTS = (
    (re.compile(r"^(\s*)import ttnn\s*$", re.M), r"\1import tilefold.ttnn as ttnn"),
    (re.compile(r"^(\s*)import ttl\s*$", re.M), r"\1import tilefold.ttl as ttl"),
)


def peer_tutorials(peer: str) -> Path:
    """The folder of ``ttl.tutorials`` in the peer's installation."""
    out = subprocess.run([peer, "-c", "import os, ttl.tutorials as t; print(os.path.dirname(t.__file__))"],
                         capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"--peer {peer}: cannot import ttl.tutorials there (is tt-lang-sim installed?)\n{out.stderr}")
    return Path(out.stdout.strip())


def with_tilefold_imports(source: str) -> str:
    for pattern, replacement in IMPORTS:
        source, n = pattern.subn(replacement, source)
        if not n:
            raise ValueError(f"the tutorial has no line matching {pattern.pattern!r}")
    return source


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], timeout: float, cpu: list[float] | None = None,
          env: dict | None = None) -> tuple[float | None, str]:
    """Wall seconds of ``command`` as a fresh process (None when it failed or timed out); its CPU
    seconds (user + system) are appended to ``cpu`` when given."""
    start, cpu_start = time.perf_counter(), _children_cpu()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)
    except subprocess.TimeoutExpired:
        return None, f"killed after {timeout:.0f} s"
    wall = time.perf_counter() - start
    if done.returncode:
        return None, (done.stderr.strip().splitlines() or ["exit status %d" % done.returncode])[-1]
    if cpu is not None:
        cpu.append(_children_cpu() - cpu_start)
    return wall, ""


def product_floors(flops: float, repeat: int = 400) -> dict:
    """Seconds numpy needs for ``flops`` of products in float64 (faithful numerics) and float32
    (fast), on one BLAS thread, at the one-node matmul tutorial's per-step shape."""
    import numpy as np

    from tilefold.sim.blas_threads import one_blas_thread

    floors = {}
    rng = np.random.default_rng(0)
    with one_blas_thread():
        for name, dtype in (("faithful_float64_s", np.float64), ("fast_float32_s", np.float32)):
            left, right = rng.standard_normal((128, 32)).astype(dtype), rng.standard_normal((32, 128)).astype(dtype)
            out = np.empty((128, 128), dtype)
            best = float("inf")
            for _ in range(3):
                start = time.perf_counter()
                for _ in range(repeat):
                    np.matmul(left, right, out=out)
                best = min(best, time.perf_counter() - start)
            floors[name] = round(flops / (repeat * 2 * 128 * 32 * 128 / best), 1)
    return floors


def summary(times: list[float]) -> dict:
    return {"min": round(min(times), 3), "median": round(statistics.median(times), 3)} if times else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", default=os.environ.get("TILEFOLD_PEER_PYTHON"),
                        help="a Python with tt-lang-sim installed (default: $TILEFOLD_PEER_PYTHON)")
    parser.add_argument("--only", action="append", default=[], help="run tutorials whose name starts with this")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each side per tutorial")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds before a run is killed")
    parser.add_argument("--with-step-1", action="store_true", help="also run matmul step 1 (over ten minutes)")
    parser.add_argument("--numerics", choices=("faithful", "fast"), default="faithful",
                        help="tilefold's numerics mode (TILEFOLD_NUMERICS) for its runs")
    args = parser.parse_args()
    our_env = dict(os.environ, TILEFOLD_NUMERICS=args.numerics)

    names = [n for n in TUTORIALS if (any(n.startswith(o) for o in args.only) if args.only
                                      else args.with_step_1 or n not in SLOW)]
    here = sys.executable
    workdir = Path(tempfile.mkdtemp(prefix="tilefold-tutorials-"))
    commands: dict[str, tuple[list[str], list[str] | None]] = {}
    if args.peer:
        source_dir = peer_tutorials(args.peer)
        peer_sim = [args.peer, "-c", "import sys; from ttl.sim.ttlang_sim import main; sys.argv[0] = 'tt-lang-sim'; "
                                     "sys.exit(main())"]
        for name in names:
            path = source_dir / f"{TUTORIALS[name][0]}.py"
            ours = workdir / f"{name}.py"
            ours.write_text(with_tilefold_imports(path.read_text()))
            commands[name] = ([here, "-m", "tilefold", "sim", "--quiet", str(ours)], peer_sim + [str(path)])
        print(f"tutorials from {source_dir}; peer: tt-lang-sim under {args.peer}")
    else:
        print("no peer given (--peer or TILEFOLD_PEER_PYTHON): running the project's own examples at the "
              "tutorials' sizes, tilefold only")
        for name in names:
            _, example, call = TUTORIALS[name]
            if example is None:
                continue
            script = (f"import runpy; runpy.run_path({str(ROOT / 'examples/ttl' / (example + '.py'))!r})"
                      f"['{call.split('(')[0]}']{call[call.index('('):]}")
            commands[name] = ([here, "-c", script], None)

    subprocess.run([here, "-m", "compileall", "-q", str(ROOT / "tilefold")], check=True, capture_output=True)
    floor = {"tilefold": summary([t for t, _ in (timed([here, "-c", "import torch"], 60) for _ in range(args.repeat))
                                  if t is not None])}
    if args.peer:
        floor["peer"] = summary([t for t, _ in (timed([args.peer, "-c", "import torch"], 60)
                                                for _ in range(args.repeat)) if t is not None])
    results: dict[str, dict] = {}
    load_before = [round(x, 2) for x in os.getloadavg()]
    print(f"load average {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f} on {os.cpu_count()} CPUs")
    print(f"{'tutorial':16} {'tilefold s':>11} {'tt-lang-sim s':>14} {'speed-up':>9} {'above torch':>12} "
          f"{'CPU s (ours / peer)':>20}")
    for name, (ours, theirs) in commands.items():
        mine, peers, errors = [], [], []
        mine_cpu, peers_cpu = [], []
        for _ in range(args.repeat):
            for side, command, into, cpu, env in (("tilefold", ours, mine, mine_cpu, our_env),
                                                  ("tt-lang-sim", theirs, peers, peers_cpu, None)):
                if command is None:
                    continue
                wall, error = timed(command, args.timeout, cpu, env)
                if wall is None:
                    errors.append(f"{side}: {error}")
                else:
                    into.append(wall)
        row = {"tilefold_s": summary(mine), "tilefold_cpu_s": summary(mine_cpu)}
        if theirs is not None:
            row["tt_lang_sim_s"] = summary(peers)
            row["tt_lang_sim_cpu_s"] = summary(peers_cpu)
            if mine and peers:
                row["speedup"] = round(min(peers) / min(mine), 3)
                row["cpu_speedup"] = round(min(peers_cpu) / min(mine_cpu), 3)
                base = min(floor["tilefold"].get("min", 0.0), floor.get("peer", {}).get("min", 0.0))
                row["speedup_above_torch_import"] = round((min(peers) - base) / max(min(mine) - base, 1e-3), 3)
        if name.startswith("matmul") and args.peer:
            row["product_floors"] = product_floors(2.0 * 8192 ** 3)
            if peers:
                row["product_floors"]["half_of_peer_s"] = round(min(peers) / 2, 1)
        if errors:
            row["errors"] = errors
        results[name] = row
        fmt = lambda s: f"{s['min']:.2f}" if s else "failed"     # noqa: E731
        cpu_text = f"{fmt(row['tilefold_cpu_s'])} / {fmt(row.get('tt_lang_sim_cpu_s', {})) if theirs else '-'}"
        print(f"{name:16} {fmt(row['tilefold_s']):>11} {fmt(row.get('tt_lang_sim_s', {})) if theirs else '-':>14} "
              f"{row.get('speedup', '-'):>9} {row.get('speedup_above_torch_import', '-'):>12} {cpu_text:>20}"
              + (f"   {'; '.join(errors)}" if errors else ""))
        if "product_floors" in row:
            print(f"{'':16} products alone: {row['product_floors']}")
    load_after = [round(x, 2) for x in os.getloadavg()]
    print(f"torch import alone: tilefold's Python {floor['tilefold']}, peer's {floor.get('peer', '-')}")
    print(f"load average {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f} at the end")
    print(json.dumps({"bench": "tutorials", "peer": bool(args.peer), "repeat": args.repeat, "numerics": args.numerics,
                      "load_average": {"start": load_before, "end": load_after, "cpus": os.cpu_count()},
                      "torch_import_s": floor, "tutorials": results}))


if __name__ == "__main__":
    main()
