"""Large float64 matrix products on two threads: the halves of the rows at once.

Reads: two float64 operands of :func:`tilefold.sim.matmul_blocks.exact_matmul`. Writes: their
product into the array given.

The simulator keeps BLAS on one thread (:mod:`tilefold.sim.blas_threads`): most of its products
are a few tiles, and waking BLAS's workers for each costs more than the product. A grid of cores
sharing operand rows and columns multiplies every pair at once (:class:`~.matmul_blocks.LaneProducts`),
a product of milliseconds: with the faithful numerics its float64 arithmetic is most of a full-grid
matmul's simulation. Such a product is split here by rows of the result, one half on a worker
thread while the calling thread computes the other (numpy releases the interpreter lock inside a
product). Each half is an exact float64 product summed in any order (``exact_matmul`` explains
why), so the result is the same bits however the rows are split. Only products of at least
``MIN_FLOPS`` are split, so the thread hand-over (tens of microseconds) stays under a few percent,
and only when the process may run on two or more cores.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

MIN_FLOPS = 1 << 24      # about half a millisecond of one core's float64 BLAS

_worker: ThreadPoolExecutor | None = None
_cores: int | None = None


def _forget_worker() -> None:
    """In a forked child the worker thread does not exist: a later product starts its own."""
    global _worker, _cores
    _worker = _cores = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_worker)


def keep_to_one_thread() -> None:
    """Split no product in this process (a worker of a pool that already has one process per core)."""
    global _cores
    _cores = 1


def _usable_cores() -> int:
    global _cores
    if _cores is None:
        try:
            _cores = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            _cores = os.cpu_count() or 1
    return _cores


def worth_splitting(left: np.ndarray, right: np.ndarray, shape: tuple[int, ...]) -> bool:
    """Whether ``left @ right`` (of result ``shape``) is large enough to split over two threads."""
    rows = shape[-2]
    if rows < 2 or _usable_cores() < 2:
        return False
    return 2 * int(np.prod(shape, dtype=np.int64)) * left.shape[-1] >= MIN_FLOPS


def matmul_in_halves(left: np.ndarray, right: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``np.matmul(left, right, out=out)`` with the first half of the result's rows computed on a
    worker thread and the second on this one."""
    global _worker
    if _worker is None:
        _worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tilefold-products")
    half = out.shape[-2] // 2               # the result's rows are the left operand's
    top = _worker.submit(np.matmul, left[..., :half, :], right, out=out[..., :half, :])
    np.matmul(left[..., half:, :], right, out=out[..., half:, :])
    top.result()
    return out
