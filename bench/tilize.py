"""Tilize, untilize and bfloat8_b packing of a 64 MiB bfloat16 tensor against a plain copy.

Run: ``.venv/bin/python bench/tilize.py``. Every figure is measured in this one run, best of
several repetitions, with the repetitions of all operations interleaved so that a busy
machine slows them alike. Two comparisons are printed:

* new result: ``x.copy()`` against ``tilize(x)``, ``untilize(t, shape)`` and
  ``pack_tiles(values, "bfp8_b")`` — each allocates its result, as a caller uses them;
* into an existing array: ``np.copyto(dst, x)`` against ``tilize(x, out=...)`` and
  ``untilize(t, shape, out=...)``.

The last line is one JSON object with the new-result ratios (throughput of the operation
divided by throughput of the copy of the same 64 MiB; higher is better). The bfp8_b pack
reads the same values as float32 tiles (128 MiB) and its ratio is still taken against the
copy of the 64 MiB of bfloat16 bytes.
"""

from __future__ import annotations

import json
import time

import ml_dtypes
import numpy as np

from tilefold.layout.formats import bfloat16_to_float32, pack_tiles, unpack_tiles
from tilefold.layout.tiles import tilize, untilize

SHAPE = (4096, 8192)
REPEATS = 9


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SHAPE, dtype=np.float32).astype(ml_dtypes.bfloat16)
    nbytes = x.nbytes
    tiles = tilize(x)
    values = bfloat16_to_float32(tiles)                 # the same values, float32, face order
    copy_into = np.empty_like(x)
    tiles_into = np.empty_like(tiles)
    rows_into = np.empty_like(x)

    # correctness of what is timed
    assert np.array_equal(untilize(tiles, SHAPE).view(np.uint16), x.view(np.uint16))
    assert np.array_equal(unpack_tiles(pack_tiles(values, "bfp8_b"), "bfp8_b")[:4].shape, (4, 1024))

    cases = {
        "copy (x.copy())": lambda: x.copy(),
        "tilize": lambda: tilize(x),
        "untilize": lambda: untilize(tiles, SHAPE),
        "bfp8_b pack": lambda: pack_tiles(values, "bfp8_b"),
        "copy into (np.copyto)": lambda: np.copyto(copy_into, x),
        "tilize into (out=)": lambda: tilize(x, out=tiles_into),
        "untilize into (out=)": lambda: untilize(tiles, SHAPE, out=rows_into),
    }
    best = {name: float("inf") for name in cases}
    for _ in range(REPEATS):
        for name, run in cases.items():
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)

    def ratio(name: str, baseline: str) -> float:
        return best[baseline] / best[name]

    print(f"{nbytes / 2**20:.0f} MiB of bfloat16 {SHAPE[0]}x{SHAPE[1]}, best of {REPEATS}")
    print(f"{'operation':28s} {'ms':>8s} {'GB/s':>8s} {'vs copy':>8s}")
    rows = [
        ("copy (x.copy())", "copy (x.copy())"),
        ("tilize", "copy (x.copy())"),
        ("untilize", "copy (x.copy())"),
        ("bfp8_b pack", "copy (x.copy())"),
        ("copy into (np.copyto)", "copy into (np.copyto)"),
        ("tilize into (out=)", "copy into (np.copyto)"),
        ("untilize into (out=)", "copy into (np.copyto)"),
    ]
    for name, baseline in rows:
        seconds = best[name]
        print(f"{name:28s} {seconds * 1e3:8.2f} {nbytes / seconds / 1e9:8.2f} {ratio(name, baseline):8.3f}")
    print(json.dumps({
        "tilize_vs_copy": round(ratio("tilize", "copy (x.copy())"), 3),
        "untilize_vs_copy": round(ratio("untilize", "copy (x.copy())"), 3),
        "bfp8_pack_vs_copy": round(ratio("bfp8_b pack", "copy (x.copy())"), 3),
        "bytes": nbytes,
    }))


if __name__ == "__main__":
    main()
