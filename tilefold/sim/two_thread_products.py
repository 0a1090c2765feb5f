"""Large matrix products in two halves of rows, on two threads at once.

Reads: the operands of :func:`tilefold.sim.matmul_blocks.exact_matmul`. Writes: their product
into the array given.

The simulator keeps BLAS on one thread (:mod:`tilefold.sim.blas_threads`): most of its products
are a few tiles, and waking BLAS's workers for each costs more than the product. A grid of cores
sharing operand rows and columns multiplies every pair at once (:class:`~.matmul_blocks.LaneProducts`),
a product of milliseconds: its arithmetic is most of a full-grid matmul's simulation. Such a
product (``MIN_FLOPS`` and more, so that the hand-over of tens of microseconds stays under a few
percent) is computed here as two products, the first and the second half of the result's rows:
on a worker thread and the calling one at once when the process may run on two cores or more
(numpy releases the interpreter lock inside a product), one after the other on one core.

The halves are always the same products, so the bits do not depend on the cores: the faithful
float64 products are exact and summed in any order (``exact_matmul`` explains why), and fast
numerics' float32 sums, whose order BLAS chooses by the operands' shapes, see the same shapes
however many cores there are.
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
    """Compute the halves one after the other in this process (a worker of a pool that already
    has one process per core)."""
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


def is_large(left: np.ndarray, shape: tuple[int, ...]) -> bool:
    """Whether the product of ``left`` (its last axis summed) with a result of ``shape`` is
    computed in halves."""
    return shape[-2] >= 2 and 2 * int(np.prod(shape, dtype=np.int64)) * left.shape[-1] >= MIN_FLOPS


def matmul_in_halves(left: np.ndarray, right: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``np.matmul(left, right, out=out)`` as two products, the first half of the result's rows
    and the second, on a worker thread and this one at once when two cores may run them."""
    global _worker
    half = out.shape[-2] // 2               # the result's rows are the left operand's
    if _usable_cores() < 2:
        np.matmul(left[..., :half, :], right, out=out[..., :half, :])
        np.matmul(left[..., half:, :], right, out=out[..., half:, :])
        return out
    if _worker is None:
        _worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tilefold-products")
    top = _worker.submit(np.matmul, left[..., :half, :], right, out=out[..., :half, :])
    np.matmul(left[..., half:, :], right, out=out[..., half:, :])
    top.result()
    return out
