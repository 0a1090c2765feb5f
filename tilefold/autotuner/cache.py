"""The on-disk cache of tuning results: a configuration that lowers to IR already simulated is not
simulated again.

Reads and writes: one JSON file per result under the cache folder (``TILEFOLD_CACHE_DIR``, or
``~/.cache/tilefold/autotune``), named by a SHA-256 key of everything the result depends on:
the lowered ``ttkernel`` IR (with the program's buffers and circular buffers), the device, the
input shapes, dtypes and values, and the reference outputs and tolerances of the numerical check.
A configuration that changes none of these (a parameter the kernel ignores, a re-run of the same
sweep) reuses the stored result; anything else misses. Writes are atomic (a temporary file
renamed into place), so parallel workers and interrupted sweeps never leave a torn entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np

FORMAT = 1     # bump when what a stored result means changes


def default_directory() -> Path:
    env = os.environ.get("TILEFOLD_CACHE_DIR")
    if env:
        return Path(env) / "autotune"
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tilefold" / "autotune"


def array_digest(arrays) -> str:
    """A digest of arrays' shapes, dtypes and bytes."""
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.shape}{a.dtype.str}".encode())
        h.update(a.view(np.uint8).tobytes())
    return h.hexdigest()


def key(*parts: str) -> str:
    h = hashlib.sha256(f"tilefold-autotune-{FORMAT}".encode())
    for part in parts:
        h.update(b"\0")
        h.update(part.encode())
    return h.hexdigest()


class ResultCache:
    """``get(key)`` / ``put(key, record)`` over JSON records in ``directory``."""

    def __init__(self, directory: str | Path | None = None):
        self.directory = Path(directory) if directory is not None else default_directory()

    def _path(self, k: str) -> Path:
        return self.directory / k[:2] / f"{k}.json"

    def get(self, k: str) -> dict | None:
        try:
            return json.loads(self._path(k).read_text())
        except (OSError, ValueError):
            return None

    def put(self, k: str, record: dict) -> None:
        path = self._path(k)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                json.dump(record, f)
            os.replace(tmp, path)
        except OSError:
            pass   # a cache that cannot be written only costs a re-run


__all__ = ["ResultCache", "array_digest", "default_directory", "key"]
