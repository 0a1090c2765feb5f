"""Splitting large host-side copies and conversions over a few threads.

Reads / writes: nothing of its own; runs a caller's ``work(start, stop)`` over ranges of items.
numpy releases the GIL inside its copy and arithmetic loops, so tilize / untilize and block-float
packing of large tensors use every CPU this process may use; small ones stay on the calling thread.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

# Copies below this many bytes run on the calling thread.
PARALLEL_MIN_BYTES = 4 << 20
# Bytes each piece of a large copy moves (a few tile rows: stays in the CPU's L2 cache).
CHUNK_BYTES = 2 << 20
_pool: ThreadPoolExecutor | None = None
_pool_pid = 0
_POOL_PREFIX = "tilefold-layout"
_pool_lock = threading.Lock()


def worker_count() -> int:
    """Threads used for large copies and conversions (the CPUs this process may use, ≤ 8)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(8, cpus))


def for_each_chunk(count: int, chunk: int, work: Callable[[int, int], None], nbytes: int) -> None:
    """Call ``work(start, stop)`` for consecutive ranges of ``range(count)`` of ``chunk``
    items. Ranges run on a small thread pool when ``nbytes`` (the data touched) is large
    and more than one CPU is available; ``work`` must only call numpy on disjoint data."""
    starts = range(0, count, max(1, chunk))
    workers = worker_count()
    inside_pool = threading.current_thread().name.startswith(_POOL_PREFIX)
    if workers == 1 or nbytes < PARALLEL_MIN_BYTES or len(starts) == 1 or inside_pool:
        for start in starts:
            work(start, min(start + chunk, count))
        return
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():     # a forked child needs its own threads
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=_POOL_PREFIX)
            _pool_pid = os.getpid()
        pool = _pool
    futures = [pool.submit(work, start, min(start + chunk, count)) for start in starts]
    for future in futures:
        future.result()


