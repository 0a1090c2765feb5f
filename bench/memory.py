"""Host memory of running built-in ops: peak resident memory over the bytes of the tensors.

Runs each op the way ``tilefold run OP`` does (build, simulate, check against numpy) in a fresh
process and reports its peak RSS above the interpreter's baseline (after imports), divided by the
bytes of the op's tensors on the device (its input and output buffers). Ends with one line of JSON.

Run: ``.venv/bin/python bench/memory.py`` (``--quick`` for small shapes).
"""

from __future__ import annotations

import json
import subprocess
import sys

CASES = {
    "tilize": ("tilize", ["--shape", "16384,8192"], "16384x8192"),
    "eltwise": ("eltwise", ["--shape", "8192,8192"], "8192x8192"),
}
QUICK = {"tilize": ["--shape", "2048,2048"], "eltwise": ["--shape", "2048,2048"]}

CHILD = r"""
import argparse, json, resource, sys
from tilefold.ops import get_factory
from tilefold.sim import Device

def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

op, args = sys.argv[1], sys.argv[2:]
base = rss()
factory = get_factory(op)
parser = argparse.ArgumentParser()
factory.add_arguments(parser)
ns = parser.parse_args(args)
ns.arch = None
instance = factory.build(ns)
result = Device(instance.program.arch).run(instance.program, instance.inputs, progress=False)
ok = all(c.passed for c in instance.check(result.outputs))
tensor_bytes = sum(b.size for b in instance.program.buffers.values())
print(json.dumps({"peak": rss() - base, "tensor_bytes": tensor_bytes, "ok": ok}))
"""


def measure(op: str, args: list[str]) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, op, *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    quick = "--quick" in sys.argv
    report = {}
    for name, (op, args, label) in CASES.items():
        args = QUICK[name] if quick else args
        m = measure(op, args)
        ratio = m["peak"] / m["tensor_bytes"]
        report[name] = {"shape": args[1], "peak_rss_mib": round(m["peak"] / 2**20), "tensor_mib":
                        round(m["tensor_bytes"] / 2**20), "ratio": round(ratio, 2), "correct": m["ok"]}
        print(f"{name} {args[1]}: peak {m['peak'] / 2**20:.0f} MiB over {m['tensor_bytes'] / 2**20:.0f} MiB of "
              f"tensors = {ratio:.2f}x", file=sys.stderr)
    print(json.dumps({"memory": report}))


if __name__ == "__main__":
    main()
