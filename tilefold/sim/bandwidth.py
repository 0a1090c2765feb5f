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


class BandwidthPool:
    def __init__(self, bytes_per_cycle: float, bucket_cycles: int = 64):
        self.rate = float(bytes_per_cycle)
        self.bucket = int(bucket_cycles)
        self.capacity = self.rate * self.bucket
        # plain lists: the walk reads and writes single buckets, where Python floats are fastest
        self.used: list[float] = [0.0] * 1024
        self.next_room: list[int] = list(range(1024))   # next_room[i] == i while bucket i has room

    def _grow(self, size: int) -> None:
        old = len(self.used)
        new = max(size, 2 * old)
        self.used.extend([0.0] * (new - old))
        self.next_room.extend(range(old, new))

    def _room_from(self, i: int) -> int:
        """The first bucket at or after ``i`` that is not full."""
        if i >= len(self.used):
            self._grow(i + 1)
        nxt = self.next_room
        root = i
        while nxt[root] != root:
            root = nxt[root]
            if root >= len(nxt):
                self._grow(root + 1)
        while nxt[i] != root:          # path compression
            nxt[i], i = root, nxt[i]
        return root

    def transfer(self, start: float, nbytes: float) -> float:
        """Finish time (cycles) of ``nbytes`` entering the pool at cycle ``start``."""
        if nbytes <= 0:
            return start
        cap = self.capacity
        full = cap * (1 - 1e-9)
        i0 = int(start // self.bucket)
        i = self._room_from(i0)
        remaining = float(nbytes)
        fastest = start + remaining / self.rate   # no transfer beats the full bandwidth
        used = self.used
        while True:
            room = cap - used[i]
            if i == i0:   # within the first bucket only the part after `start` is available
                room = min(room, cap * (1.0 - (start - i0 * self.bucket) / self.bucket))
            if room >= remaining:
                used[i] += remaining
                if used[i] >= full:
                    self.next_room[i] = i + 1
                return max(fastest, (i + used[i] / cap) * self.bucket)
            if room > 0:
                used[i] += room
                remaining -= room
            if used[i] >= full:
                self.next_room[i] = i + 1
            i += 1
            if i >= len(used) or self.next_room[i] != i:
                i = self._room_from(i)     # may grow the lists, in place
