"""Large scratch arrays kept for reuse, across a run and across runs.

Reads / writes: nothing of the device; holds float32 arrays the compute threads no longer use
(unpacked operand matrices, block products). A fresh allocation of tens of MiB is mapped anew by
the OS and costs a page fault for every 4 KiB on first touch — often more than the numpy work
that fills it; an array of the same shape from here is already mapped. The pool is process-wide
(only the simulator's own thread takes and gives arrays; the halves of
:mod:`tilefold.sim.two_threads` write into arrays taken before they start) and bounded by :data:`LIMIT_BYTES`.
"""

from __future__ import annotations

from math import prod

import numpy as np

LIMIT_BYTES = 1 << 30
SMALL = 8 * 1024          # arrays of at most this many values are allocated afresh: that costs them nothing
_free: dict[tuple, list[np.ndarray]] = {}
_held = 0
_F32 = np.dtype(np.float32)


def take(shape: tuple[int, ...], dtype=np.float32) -> np.ndarray:
    """An uninitialised C-contiguous array of ``shape`` (a kept one if there is one)."""
    global _held
    if prod(shape) <= SMALL:
        return np.empty(shape, dtype)
    kept = _free.get((shape, _F32 if dtype is np.float32 else np.dtype(dtype)))
    if kept:
        array = kept.pop()
        _held -= array.nbytes
        return array
    return np.empty(shape, dtype)


def give(array: np.ndarray) -> None:
    """Keep ``array`` for a later :func:`take`; the caller must not use it any more."""
    global _held
    if array.size <= SMALL or not array.flags.c_contiguous or _held + array.nbytes > LIMIT_BYTES:
        return
    _free.setdefault((array.shape, array.dtype), []).append(array)
    _held += array.nbytes
