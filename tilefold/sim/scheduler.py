"""Running kernel threads concurrently: greenlets, blocking, wake-ups, deadlock detection.

Reads: kernel contexts and their Python kernels. Writes: nothing but the threads' effects.

Each simulated thread (a reader, writer or compute kernel on a group of cores) is a
greenlet running the emitted Python kernel. A blocking call (``cb_wait_front``,
``cb_reserve_back``, ``noc_semaphore_wait``) that cannot proceed parks its thread on a key
(``("cb", index)``, or for a semaphore ``("sem", row, address)``, ``("sem", address)`` or
``("sem",)``) and switches back to the scheduler; pushes, pops and semaphore writes wake the threads
parked on their key (a write to a semaphore word those waiting on that word, an L1 write that may
hold one every semaphore waiter), which re-check their condition.
When no thread can run and some are parked, that is a deadlock: the error lists every
parked thread, the user's line it stopped at and what it waits for — detected, never a
timeout.
"""

from __future__ import annotations

import sys
import traceback
from collections import deque
from typing import Callable

import numpy as np
from greenlet import greenlet

from tilefold.errors import DeadlockError, SemaphoreError, SimulationError, TilefoldError, WatchdogError
from tilefold.sim.lanes import Divergence

READY, RUNNING, BLOCKED, DONE = "ready", "running", "blocked", "done"


# the wait key of a thread waiting on semaphores at addresses that differ per lane (see semaphore_key)
SEMAPHORE_ANY = ("sem",)


def semaphore_key(rows: np.ndarray, addr) -> tuple:
    """What a thread of cores ``rows`` waiting on the semaphore word at ``addr`` (an int, or one per
    lane) parks on: ("sem", row, address) for one core, ("sem", address) for several,
    :data:`SEMAPHORE_ANY` when the addresses differ per lane."""
    if np.ndim(addr):
        return SEMAPHORE_ANY
    return ("sem", int(rows[0]), int(addr)) if len(rows) == 1 else ("sem", int(addr))


class SimThread:
    def __init__(self, ctx, function: Callable):
        self.ctx = ctx
        self.name = ctx.thread_name
        self.state = READY
        self.wait_key = None
        self.wait_description = ""
        self.running_kernel = False     # the kernel function is on this greenlet's stack
        self.greenlet = greenlet(run=lambda: self._run(function))

    def _run(self, function: Callable):
        self.running_kernel = True
        try:
            # the device raises no floating-point exceptions: infinities and NaN are values like any
            # other (numpy's error state is per greenlet, so it is set here, in the kernel's own)
            with np.errstate(all="ignore"):
                return function(self.ctx)
        finally:
            self.running_kernel = False
            self.ctx.kernel_frame = None

    def location(self):
        """The user's file:line where this thread is parked (or runs)."""
        frame = self.greenlet.gr_frame
        return self.ctx.where(frame) if frame is not None else None

    def describe(self, what: str | None = None) -> str:
        cores = self.ctx.cores
        more = f" and {len(cores) - 1} more cores" if len(cores) > 1 else ""
        loc = self.location()
        at = f"{loc}: " if loc else ""
        return f"{at}{self.name} on core {cores[0]}{more} — {what or self.wait_description}"


class Scheduler:
    def __init__(self, threads: list[SimThread]):
        self.threads = threads
        self.ready: deque[SimThread] = deque(threads)
        self.waiting: dict[object, list[SimThread]] = {}
        self.main = greenlet.getcurrent()
        for t in threads:
            t.greenlet.parent = self.main
            t.ctx.scheduler = self
            t.ctx.thread = t

    # -- called from kernel threads ----------------------------------------------------------

    def block(self, thread: SimThread, key, description: str) -> None:
        thread.state = BLOCKED
        thread.wait_key = key
        thread.wait_description = description
        self.waiting.setdefault(key, []).append(thread)
        self.main.switch()

    def yield_now(self, thread: SimThread) -> None:
        thread.state = READY
        self.ready.append(thread)
        self.main.switch()

    def notify(self, key) -> None:
        parked = self.waiting.pop(key, None)
        if parked:
            for t in parked:
                if t.state == BLOCKED:
                    t.state = READY
                    self.ready.append(t)

    def notify_semaphores(self, rows=None, addr=None) -> None:
        """Wake the threads waiting on semaphore words a write to ``addr`` of cores ``rows`` (each an
        int, or one per lane) may have changed (the keys of :func:`semaphore_key`); every semaphore
        waiter when ``rows`` is None (an L1 write that may land on one)."""
        if not self.waiting:
            return
        if rows is None:
            for key in [k for k in self.waiting if k[0] == "sem"]:
                self.notify(key)
            return
        self.notify(SEMAPHORE_ANY)
        rows, addr = np.broadcast_arrays(np.asarray(rows).reshape(-1), np.asarray(addr).reshape(-1))
        for row, address in set(zip(rows.tolist(), addr.tolist())):
            self.notify(("sem", address))
            self.notify(("sem", row, address))

    # -- the loop ---------------------------------------------------------------------------

    def run(self, on_thread_done: Callable[[SimThread], None]) -> None:
        ready = self.ready
        while ready:
            t = ready.popleft()
            if t.state != READY:
                continue
            t.state = RUNNING
            try:
                t.greenlet.switch()
            except Divergence as err:
                if err.cores is None:
                    err.cores = list(t.ctx.cores)
                raise
            except TilefoldError:
                raise
            except Exception as exc:  # a bug in the kernel code itself (e.g. division by zero)
                raise self._kernel_exception(t, exc) from None
            if t.greenlet.dead:
                t.state = DONE
                on_thread_done(t)
            elif t.state == RUNNING:
                t.state = READY
                ready.append(t)
        parked = [t for t in self.threads if t.state == BLOCKED]
        if parked:
            self._deadlock(parked)

    def _kernel_exception(self, thread: SimThread, exc: Exception) -> SimulationError:
        loc = None
        for frame, lineno in traceback.walk_tb(exc.__traceback__):
            if frame.f_code.co_filename == thread.ctx.pykernel.filename:
                loc = thread.ctx.pykernel.location_of_line(lineno)
        return SimulationError(f"kernel {thread.ctx.kernel.name} ({thread.name} on core {thread.ctx.cores[0]}) "
                               f"failed: {type(exc).__name__}: {exc}", loc)

    def runaway(self, thread: SimThread, what: str | None = None, idle: int | None = None) -> None:
        """``thread`` ran past the watchdog's cycle limit (or, with ``idle``, a while loop iterated that
        many times without a device call): raise, naming every unfinished thread's line."""
        ctx = thread.ctx
        here = ctx.where(sys._getframe(2))
        limit = ctx.max_cycles
        lines = [f"{here}: {thread.name} on core {ctx.cores[0]} — running"
                 + (f", about to start {what}" if what else f", {ctx.busy + ctx.steps:.0f} cycles")]
        for t in self.threads:
            if t is not thread and t.state != DONE:
                started = bool(t.greenlet) or t.greenlet.dead
                lines.append(t.describe(t.wait_description if t.state == BLOCKED else
                                        "running" if started else "not started yet"))
        if idle is not None:
            raise WatchdogError(f"a while loop ran {idle} iterations in a row without calling the device (no "
                                "buffer, NOC, semaphore or tile call, only integer arithmetic): it never ends — "
                                "check its condition against what the body changes", lines, here)
        raise WatchdogError(f"a kernel ran past the watchdog's limit of {limit} cycles: a loop that never ends? "
                            "(raise the limit with max_cycles= / --max-cycles if the program is that long)",
                            lines, here)

    def _deadlock(self, parked: list[SimThread]) -> None:
        lines = [t.describe() for t in parked]
        on_semaphore = [t for t in parked if t.wait_key[0] == "sem"]
        first = parked[0].location()
        cbs = parked[0].ctx.dev.cbs
        culprits = cbs.reserved_by_finished()
        for ctx, line, index, pages in culprits:
            loc = ctx.location_of(line)
            lines.insert(0, f"{loc}: {ctx.thread_name} on core {ctx.cores[0]} — ended with {pages} "
                            f"page{'s' if pages != 1 else ''} of c_{index} reserved here and never pushed "
                            f"(cb_push_back(c_{index}, {pages}) missing?)")
        if culprits:
            first = culprits[0][0].location_of(culprits[0][1])
        shared = _shared_consumers(parked)
        if shared:
            lines.insert(0, shared[0])
            first = shared[1]
        if on_semaphore and len(on_semaphore) == len(parked):
            raise SemaphoreError("semaphore waits that can never be satisfied: every thread that could still set "
                                 "them is finished or blocked\n" + "\n".join(f"  {l}" for l in lines), first)
        raise DeadlockError("Deadlock detected: every running thread is blocked", lines, first)

    def finish_checks(self) -> None:
        for t in self.threads:
            ctx = t.ctx
            for pending, what, fix in ((ctx.pending_reads, "noc_async_read", "noc_async_read_barrier()"),
                                       (ctx.pending_writes, "noc_async_write", "noc_async_write_barrier()")):
                if pending:
                    line = pending[-1][2]
                    loc = ctx.location_of(line)
                    from tilefold.errors import NocHazardError

                    raise NocHazardError(f"kernel {ctx.kernel.name} ({t.name} on core {ctx.cores[0]}) ended with "
                                         f"{what} transfers outstanding (last issued at {loc}); call {fix} before "
                                         "the kernel returns", loc)
            if getattr(ctx, "dst_state", "released") != "released":
                from tilefold.errors import DstError

                line = getattr(ctx, "dst_acquired_at", None)
                loc = ctx.location_of(line) if line else None
                raise DstError(f"compute kernel {ctx.kernel.name} on core {ctx.cores[0]} ended with DST "
                               f"{ctx.dst_state} by the tile_regs_acquire here; every tile_regs_acquire needs a "
                               "tile_regs_release", loc)


def _shared_consumers(parked: list[SimThread]) -> tuple[str, object] | None:
    """(a report line, its location) when a thread waits for the pages of a buffer that another
    kernel of its core pops: each consumer takes pages off one queue here, so the one left waiting
    never sees the blocks the other took (on the device each would read every block). None if not."""
    cbs = parked[0].ctx.dev.cbs
    for t in parked:
        key = t.wait_key
        if key[0] != "cb" or not t.wait_description.startswith("cb_wait_front"):
            continue
        st = cbs.states.get(key[1])
        if st is None:
            continue
        for other in st.pop_sites.values():
            common = np.intersect1d(other.row_idx, t.ctx.row_idx)
            if other.kernel is t.ctx.kernel or not common.size:
                continue
            name = st.name or f"c_{st.index}"
            core = cbs.rows_core[int(common[0])]
            loc = t.location()
            return (f"{loc}: {name} has two consumer kernels on core {core}: {t.ctx.kernel.name} waits for its "
                    f"blocks here, but {other.kernel.name} pops them: each block goes to one consumer. Make one "
                    f"dataflow buffer per consumer and have the producer copy each block into both", loc)
    return None


def lane_summary(values: np.ndarray) -> float:
    return float(np.max(values)) if np.size(values) else 0.0
