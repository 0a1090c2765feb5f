"""A shared bandwidth resource over simulated time (the DRAM of a chip).

Reads / writes: bytes placed per time bucket. Time is cut into buckets of ``bucket_cycles``;
each holds at most ``bytes_per_cycle * bucket_cycles`` bytes. A transfer starting at cycle
``t`` fills the spare capacity of the buckets from ``t`` on and finishes when its last byte
is placed. The answer depends on what else uses those buckets, not on the order in which
the simulator happens to run threads: a core simulated later but earlier in device time
finds the early buckets still free, as on the device.
"""

from __future__ import annotations

import numpy as np


class BandwidthPool:
    def __init__(self, bytes_per_cycle: float, bucket_cycles: int = 64):
        self.rate = float(bytes_per_cycle)
        self.bucket = int(bucket_cycles)
        self.capacity = self.rate * self.bucket
        self.used = np.zeros(1024)

    def transfer(self, start: float, nbytes: float) -> float:
        """Finish time (cycles) of ``nbytes`` entering the pool at cycle ``start``."""
        if nbytes <= 0:
            return start
        i = int(start // self.bucket)
        used, cap = self.used, self.capacity
        # Within the first bucket only the part after `start` is available.
        first_room = cap * (1.0 - (start - i * self.bucket) / self.bucket)
        remaining = float(nbytes)
        while True:
            if i >= used.size:
                self.used = used = np.concatenate([used, np.zeros(max(used.size, i + 1 - used.size))])
            room = min(cap - used[i], first_room)
            first_room = cap
            if room >= remaining:
                used[i] += remaining
                filled = used[i] / cap
                return max(start, (i + filled) * self.bucket)
            if room > 0:
                used[i] += room
                remaining -= room
            i += 1
