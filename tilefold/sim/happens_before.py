"""What semaphores order between cores: vector clocks of the program's cores.

Reads: the semaphore releases (``noc_semaphore_inc``, ``noc_semaphore_set_remote``, semaphore
multicasts) and waits of data-movement kernels. Writes: nothing on the device; the DRAM race
check (:mod:`tilefold.sim.dram_writers`) asks it whether an earlier write by one core happens
before a later write by another.

Each core counts *epochs*: its own epoch starts at 1 and ends at every release. A core's clock
row says, for every other core, the latest epoch of theirs it has synchronised with. A release
records the sender's clock on the target semaphore; a wait that returns takes the maximum of its
clock and what was recorded on its semaphore. A write in epoch ``e`` of core ``w`` happens before
a later access by core ``c`` exactly when ``clock[c, w] >= e``: ``w`` released after the write and
``c`` waited on a semaphore that release reached (directly or through other cores).
"""

from __future__ import annotations

import numpy as np


class SemaphoreOrder:
    """Vector clocks of ``ncores`` cores and the clocks recorded on their semaphores."""

    def __init__(self, ncores: int):
        self.clock = np.eye(max(ncores, 1), dtype=np.int32)
        self._recorded: dict[int, np.ndarray] = {}      # semaphore address -> (target row, clock)
        self.any_release = False

    def epoch(self, rows) -> np.ndarray:
        """The current epoch of each core in ``rows``."""
        rows = np.asarray(rows, dtype=np.int64)
        return self.clock[rows, rows]

    def release(self, senders, targets, addr: int) -> None:
        """Cores ``senders`` signal the semaphore at ``addr`` of cores ``targets`` (broadcast
        together, one pair per element); each sender then starts a new epoch."""
        if senders.__class__ is int and targets.__class__ is int:        # one core signals one core
            recorded = self._recorded.get(addr)
            if recorded is None:
                recorded = self._recorded[addr] = np.zeros_like(self.clock)
            np.maximum(recorded[targets], self.clock[senders], out=recorded[targets])
            self.clock[senders, senders] += 1
            self.any_release = True
            return
        senders, targets = np.broadcast_arrays(np.asarray(senders, dtype=np.int64), np.asarray(targets, dtype=np.int64))
        if senders.size == 0:
            return
        recorded = self._recorded.get(addr)
        if recorded is None:
            recorded = self._recorded[addr] = np.zeros_like(self.clock)
        np.maximum.at(recorded, targets.ravel(), self.clock[senders.ravel()])
        own = np.unique(senders)
        self.clock[own, own] += 1
        self.any_release = True

    def acquire(self, rows, addr: int) -> None:
        """Cores ``rows`` returned from a wait on their semaphore at ``addr``."""
        recorded = self._recorded.get(addr)
        if recorded is not None:
            rows = np.asarray(rows, dtype=np.int64).ravel()
            self.clock[rows] = np.maximum(self.clock[rows], recorded[rows])

    def ordered(self, writers, epochs, readers) -> np.ndarray:
        """Whether each write (core ``writers`` in epoch ``epochs``) happens before the access by
        the matching core of ``readers`` (arrays broadcast together)."""
        return self.clock[np.asarray(readers, dtype=np.int64), np.asarray(writers, dtype=np.int64)] >= epochs
