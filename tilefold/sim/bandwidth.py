"""A shared bandwidth resource over simulated time (the DRAM of a chip).

Reads / writes: bytes placed per time bucket. Time is cut into buckets of ``bucket_cycles``;
each holds at most ``bytes_per_cycle * bucket_cycles`` bytes. A transfer starting at cycle
``t`` fills the spare capacity of the buckets from ``t`` on and finishes when its last byte
is placed. The answer depends on what else uses those buckets, not on the order in which
the simulator happens to run threads: a core simulated later but earlier in device time
finds the early buckets still free, as on the device.

Full buckets are skipped with a "next bucket with room" pointer per bucket, compressed as it
is followed (union-find), so a transfer costs a few steps however much history is full.
"""

from __future__ import annotations

import numpy as np


class BandwidthPool:
    def __init__(self, bytes_per_cycle: float, bucket_cycles: int = 64):
        self.rate = float(bytes_per_cycle)
        self.bucket = int(bucket_cycles)
        self.capacity = self.rate * self.bucket
        self.used = np.zeros(1024)
        self.next_room = np.arange(1024)   # next_room[i] == i while bucket i has room

    def _grow(self, size: int) -> None:
        old = self.used.size
        new = max(size, 2 * old)
        self.used = np.concatenate([self.used, np.zeros(new - old)])
        self.next_room = np.concatenate([self.next_room, np.arange(old, new)])

    def _room_from(self, i: int) -> int:
        """The first bucket at or after ``i`` that is not full."""
        if i >= self.used.size:
            self._grow(i + 1)
        nxt = self.next_room
        root = i
        while nxt[root] != root:
            root = int(nxt[root])
            if root >= nxt.size:
                self._grow(root + 1)
                nxt = self.next_room
        while nxt[i] != root:          # path compression
            nxt[i], i = root, int(nxt[i])
        return root

    def transfer(self, start: float, nbytes: float) -> float:
        """Finish time (cycles) of ``nbytes`` entering the pool at cycle ``start``."""
        if nbytes <= 0:
            return start
        cap = self.capacity
        i0 = int(start // self.bucket)
        i = self._room_from(i0)
        remaining = float(nbytes)
        fastest = start + remaining / self.rate   # no transfer beats the full bandwidth
        while True:
            used = self.used
            room = cap - used[i]
            if i == i0:   # within the first bucket only the part after `start` is available
                room = min(room, cap * (1.0 - (start - i0 * self.bucket) / self.bucket))
            if room >= remaining:
                used[i] += remaining
                if used[i] >= cap * (1 - 1e-9):
                    self.next_room[i] = i + 1
                return max(fastest, (i + used[i] / cap) * self.bucket)
            if room > 0:
                used[i] += room
                remaining -= room
            if used[i] >= cap * (1 - 1e-9):
                self.next_room[i] = i + 1
            i = self._room_from(i + 1)
