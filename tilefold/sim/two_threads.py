"""Large array work in two halves, on two threads at once.

Reads: the arrays of the work given. Writes: only what that work writes — each half a disjoint
part of its output.

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

The passes over a grid's DST blocks that come with such products (the product rounded to
float32, put in face order and added into DST, copied between lane-major and tile-major blocks,
packed to bfloat16) each move megabytes, and numpy releases the lock inside them too:
:func:`in_halves` runs one of them as two halves of its leading axis the same way. Each value is
computed by the same element-wise operation whichever half holds it, so the bits do not depend
on the cores.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from math import prod

import numpy as np

MIN_FLOPS = 1 << 24      # about half a millisecond of one core's float64 BLAS
MIN_VALUES = 1 << 20     # values a pass moves for its halves to pay the hand-over (4 MiB of float32)

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
    return shape[-2] >= 2 and 2 * prod(shape) * left.shape[-1] >= MIN_FLOPS


def _pool() -> ThreadPoolExecutor:
    global _worker
    if _worker is None:
        _worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tilefold-halves")
    return _worker


def matmul_in_halves(left: np.ndarray, right: np.ndarray, out: np.ndarray,
                     rounded: np.ndarray | None = None) -> np.ndarray:
    """``np.matmul(left, right, out=out)`` as two products, the first half of the result's rows
    and the second, on a worker thread and this one at once when two cores may run them; with
    ``rounded`` (an array of the result's shape), each half is also copied into it, cast to its
    dtype."""
    half = out.shape[-2] // 2               # the result's rows are the left operand's

    def rows(part: slice) -> None:
        np.matmul(left[..., part, :], right, out=out[..., part, :])
        if rounded is not None:
            np.copyto(rounded[..., part, :], out[..., part, :], casting="same_kind")

    _both(rows, slice(0, half), slice(half, None))
    return out


def in_halves(work: Callable[[slice], None], n: int, values: int) -> None:
    """``work(slice(0, n))`` — a pass over ``values`` values along a leading axis of ``n`` — as
    ``work`` of the first half on the worker thread and of the second on this one, at once, when
    two cores may run them and the pass is large (``MIN_VALUES``); else in one call. The halves
    must write disjoint parts of the output and touch nothing but numpy arrays."""
    if n < 2 or values < MIN_VALUES or _usable_cores() < 2:
        work(slice(0, n))
        return
    _both(work, slice(0, n // 2), slice(n // 2, n))


def _both(work: Callable[[slice], None], first: slice, second: slice) -> None:
    """``work(first)`` on the worker thread and ``work(second)`` on this one, at once; one after the
    other when this process may use one core only."""
    if _usable_cores() < 2:
        work(first)
        work(second)
        return
    top = _pool().submit(work, first)
    try:
        work(second)
    finally:
        top.result()
