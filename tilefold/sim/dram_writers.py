"""Which core wrote each DRAM granule: two cores writing the same DRAM bytes is a race.

Reads / writes: per DRAM bank, one core row and one write site (kernel thread and line) per
32-byte granule of the range the program uses. Only granules a write covers completely are
recorded, so cores writing neighbouring parts of one page (split rows) never meet; two cores
writing the same bytes do, and the second write is a :class:`~tilefold.errors.NocHazardError`
naming both lines, unless semaphores order the two: the first core released a semaphore after
its write and the second waited for it (:class:`~tilefold.sim.happens_before.SemaphoreOrder`).
Nothing else in TT-Metalium orders NOC writes of different cores to DRAM, so the final bytes
would depend on timing. The writer's epoch per granule is kept only once a program releases a
semaphore; before that every write is in its core's first epoch.

A read by one core and a write by another of the same bytes in one run are a race too, unless
semaphores order them: on the device the read may land before or after the write, while the
simulator runs one of them first. A read checks the granules it covers against the writers
(:meth:`stale_read`; only between the lowest and highest granule ever written, so reading buffers
no kernel writes costs nothing); with more than one core each read records its core, line and
epoch at the granule it starts in (:meth:`note_read`, the last reader of that granule), and a
write checks the granules it covers against those readers (:meth:`read_before`). Pages are read
and written whole, from their first granule, so one granule per read finds them.

Beside the writers it keeps which granules any write touched, even in part (:meth:`untouched`):
a page of an output buffer that no write touched holds whatever DRAM held. A program of one core
keeps only that: no other core's access can race with its own.
"""

from __future__ import annotations

import numpy as np

from tilefold.sim.happens_before import SemaphoreOrder

GRANULE = 32


class DramWriters:
    def __init__(self, banks: int, base: int, size: int, order: SemaphoreOrder):
        self.base = base
        n = max(-(-size // GRANULE), 1)
        self.core = np.full((banks, n), -1, np.int16)
        self.touched = np.zeros((banks, n), bool)
        self.site = np.zeros((banks, n), np.int16)
        self.order = order
        self.epoch: np.ndarray | None = None  # the writer's epoch per granule, once epochs exist
        self.sites: list = [None]            # site id -> (kernel context, generated line)
        self._ids: dict = {}
        self.lo, self.hi = n, 0               # the granules ever recorded lie in [lo, hi) of every bank
        self.reader = self.read_site = self.read_epoch = None      # per granule, with several cores
        # one core: no other core's access to race with; only which granules writes touched is kept
        self.single_core = order.clock.shape[0] == 1
        if not self.single_core:
            self.reader = np.full((banks, n), -1, np.int16)
            self.read_site = np.zeros((banks, n), np.int16)
        self.read_lo, self.read_hi = n, 0

    def site_id(self, ctx, line: int) -> int:
        key = (id(ctx), line)
        sid = self._ids.get(key)
        if sid is None:
            sid = self._ids[key] = len(self.sites) if len(self.sites) < 32767 else 0
            if sid:
                self.sites.append((ctx, line))
        return sid

    def cells(self, bank, local, nbytes: int, cores):
        """(rows, cols, core, keep, spans) of the granules the writes cover completely: arrays
        (writes, k), ``keep`` None when every write covers k granules; ``spans`` is (bank, first
        granule, one past the last) per write and whether every write starts and ends on a granule."""
        shape = np.broadcast_shapes(np.shape(bank), np.shape(local), np.shape(cores))
        bank = np.broadcast_to(np.asarray(bank, dtype=np.int64), shape).ravel()
        local = np.broadcast_to(np.asarray(local, dtype=np.int64), shape).ravel() - self.base
        core = np.broadcast_to(np.asarray(cores, dtype=np.int16), shape).ravel()
        first = -(-local // GRANULE)
        end = (local + nbytes) // GRANULE                   # one past the last complete granule
        k = int((end - first).max()) if end.size else 0
        if k <= 0:
            return None
        cols = first[:, None] + np.arange(k)
        keep = cols < end[:, None]
        if b"\x00" in keep.tobytes():
            cols = np.where(keep, cols, first[:, None])
        else:
            keep = None
        aligned = nbytes % GRANULE == 0 and b"\x00" not in (first * GRANULE == local).tobytes()
        return bank[:, None], cols, core[:, None], keep, (bank, first, end, aligned)

    def clash(self, bank, local, nbytes: int, cores, cells=False):
        """(core, site) of an earlier write by another core to these bytes, (core, 0, writer) when
        two of these writes (of cores ``core`` and ``writer``) meet each other, or None. ``cells``: :meth:`cells` of the
        same arguments when the caller has them (then :meth:`note` can take them too)."""
        if self.single_core:
            return None
        if cells is False:
            cells = self.cells(bank, local, nbytes, cores)
        if cells is None:
            return None
        earlier = self._unordered_writer(cells)
        if earlier is not None:
            return earlier
        rows, cols, core, keep, spans = cells
        if core.size > 1 and (core != core.flat[0]).any() and self._spans_meet(spans):
            keep = np.ones(cols.shape, bool) if keep is None else keep
            key = (np.broadcast_to(rows, cols.shape) * self.core.shape[1] + cols)[keep]
            who = np.broadcast_to(core, cols.shape)[keep]
            order = np.argsort(key, kind="stable")
            key, who = key[order], who[order]
            same = (key[1:] == key[:-1]) & (who[1:] != who[:-1])
            if same.any():
                i = int(np.argmax(same))
                return int(who[i]), 0, int(who[i + 1])
        return None

    def _unordered_writer(self, cells):
        """(core, site) of the first granule of ``cells`` (:meth:`cells`) an earlier write by another
        core covers that semaphores do not order before this access, or None."""
        rows, cols, core, keep, _ = cells
        prev = self.core[rows, cols]
        other = (prev >= 0) & (prev != core)
        if keep is not None:
            other &= keep
        other = self._unordered(other, prev, (rows, cols), core)
        if not other.any():
            return None
        i = np.argwhere(other)[0]
        return int(prev[i[0], i[1]]), int(self.site[rows[i[0], 0], cols[i[0], i[1]]])

    @staticmethod
    def _extent(local) -> tuple[int, int]:
        """The least and greatest of the addresses ``local`` (an int or an array)."""
        if local.__class__ is np.ndarray:
            return int(local.min()), int(local.max())
        return int(local), int(local)

    def stale_read(self, bank, local, nbytes: int, cores):
        """(core, site) of a write by another core to granules these reads cover that semaphores
        do not order before the read, or None (arguments as for :meth:`clash`)."""
        if self.hi <= self.lo or self.single_core:
            return None
        low, high = self._extent(local)
        if (high - self.base + nbytes) // GRANULE <= self.lo or -(-(low - self.base) // GRANULE) >= self.hi:
            return None
        cells = self.cells(bank, local, nbytes, cores)
        return None if cells is None else self._unordered_writer(cells)

    def note_read(self, bank, local, cores, site) -> None:
        """Record reads (arrays broadcast together; ``site`` an id of :meth:`site_id`) at the
        granule each starts in, when the program has several cores."""
        if self.reader is None:
            return
        first = (np.asarray(local, dtype=np.int64) - self.base) // GRANULE
        bank = np.asarray(bank, dtype=np.int64)
        if first.ndim == 0 and bank.ndim == 0 and np.ndim(cores) == 1 and len(cores) == 1:
            b, g, c = int(bank), int(first), int(cores[0])
            self.reader[b, g], self.read_site[b, g] = c, site
            if self.order.any_release:
                self._read_epochs()[b, g] = self.order.clock[c, c]
            lo, hi = g, g + 1
        else:
            bank, first, core = np.broadcast_arrays(bank, first, np.asarray(cores, dtype=np.int16))
            self.reader[bank, first] = core
            self.read_site[bank, first] = site
            if self.order.any_release:
                self._read_epochs()[bank, first] = self.order.epoch(core.ravel()).reshape(core.shape)
            lo, hi = int(first.min()), int(first.max()) + 1
        if lo < self.read_lo:
            self.read_lo = lo
        if hi > self.read_hi:
            self.read_hi = hi

    def read_before(self, bank, local, nbytes: int, cores):
        """(core, site) of a read by another core, at a granule these writes cover, that semaphores
        do not order before the write, or None (arguments as for :meth:`clash`)."""
        if self.read_hi <= self.read_lo:
            return None
        low, high = self._extent(local)
        if -(-(high - self.base + nbytes) // GRANULE) <= self.read_lo or (low - self.base) // GRANULE >= self.read_hi:
            return None
        shape = np.broadcast_shapes(np.shape(bank), np.shape(local), np.shape(cores))
        bank = np.broadcast_to(np.asarray(bank, dtype=np.int64), shape).ravel()[:, None]
        start = np.broadcast_to(np.asarray(local, dtype=np.int64), shape).ravel() - self.base
        core = np.broadcast_to(np.asarray(cores, dtype=np.int16), shape).ravel()[:, None]
        first, count = start // GRANULE, -(-(start % GRANULE + nbytes) // GRANULE)
        cols = first[:, None] + np.minimum(np.arange(int(count.max())), (count - 1)[:, None])
        prev = self.reader[bank, cols]
        other = (prev >= 0) & (prev != core)
        if not other.any():
            return None
        if self.order.any_release:
            epochs = self.read_epoch[bank, cols] if self.read_epoch is not None else 1
            other &= ~self.order.ordered(np.maximum(prev, 0), epochs, np.broadcast_to(core, prev.shape))
            if not other.any():
                return None
        i = np.argwhere(other)[0]
        return int(prev[i[0], i[1]]), int(self.read_site[bank[i[0], 0], cols[i[0], i[1]]])

    def _read_epochs(self) -> np.ndarray:
        if self.read_epoch is None:
            self.read_epoch = np.ones(self.reader.shape, np.int32)
        return self.read_epoch

    def _spans_meet(self, spans) -> bool:
        """Whether two of the writes' granule ranges may overlap (the writes sorted by bank and
        first granule, each range checked against the next; True also for ranges that only look
        like meeting, such as an empty one, so the caller looks at the granules then)."""
        bank, first, end, _ = spans
        width = self.core.shape[1]
        start = bank * width + first
        order = np.argsort(start, kind="stable")
        return bool((start[order[1:]] < (bank * width + end)[order[:-1]]).any())

    def write_one(self, bank: int, local: int, nbytes: int, core: int, ctx, line: int):
        """One write of one core (plain ints): the clash :meth:`clash` would return, or None after
        recording the write as :meth:`note` does — the same result, on slices of one bank's row."""
        self._touch(bank, local, nbytes, core)
        if self.single_core:
            return None
        local -= self.base
        first = -(-local // GRANULE)
        end = (local + nbytes) // GRANULE
        if end <= first:
            return None
        prev = self.core[bank, first:end]
        other = self._unordered((prev >= 0) & (prev != core), prev, (bank, slice(first, end)), core)
        if b"\x01" in other.tobytes():
            i = first + int(other.argmax())
            return int(self.core[bank, i]), int(self.site[bank, i])
        prev[:] = core
        self.site[bank, first:end] = self.site_id(ctx, line)
        if first < self.lo:
            self.lo = first
        if end > self.hi:
            self.hi = end
        if self.order.any_release:
            self._epochs()[bank, first:end] = self.order.clock[core, core]
        return None

    def _unordered(self, other: np.ndarray, prev: np.ndarray, cells, core) -> np.ndarray:
        """``other`` (granules an earlier write of another core covers) without those writes that
        semaphores order before this one; ``cells`` index the granules, ``core`` is the writer."""
        if not self.order.any_release or not other.any():
            return other
        epochs = self.epoch[cells] if self.epoch is not None else 1
        return other & ~self.order.ordered(np.maximum(prev, 0), epochs, np.broadcast_to(core, prev.shape))

    def _epochs(self) -> np.ndarray:
        """The writer's epoch per granule, made when a program first releases a semaphore (every
        write before that was in its core's first epoch)."""
        if self.epoch is None:
            self.epoch = np.ones(self.core.shape, np.int32)
        return self.epoch

    def note(self, bank, local, nbytes: int, cores, sites, cells=False) -> None:
        """Record the writes (site ids broadcast like the addresses); ``cells`` as for :meth:`clash`."""
        if self.single_core:
            self._touch(bank, local, nbytes, cores)
            return
        if cells is False:
            cells = self.cells(bank, local, nbytes, cores)
        if cells is not None and cells[3] is None and cells[4][3]:
            self.touched[cells[0], cells[1]] = True      # whole granules: the ones recorded below
        else:
            self._touch(bank, local, nbytes, cores)
        if cells is None:
            return
        rows, cols, core, keep, spans = cells
        self.lo = min(self.lo, int(spans[1].min()))
        self.hi = max(self.hi, int(spans[2].max()))
        shape = np.broadcast_shapes(np.shape(bank), np.shape(local), np.shape(cores))
        site = np.broadcast_to(np.asarray(sites, dtype=np.int16), shape).ravel()[:, None]
        if keep is None and not self.order.any_release:     # every write covers k whole granules
            self.core[rows, cols] = core
            self.site[rows, cols] = site
            return
        keep = np.ones(cols.shape, bool) if keep is None else keep
        rows = np.broadcast_to(rows, cols.shape)[keep]
        cols = cols[keep]
        writers = np.broadcast_to(core, keep.shape)[keep]
        self.core[rows, cols] = writers
        self.site[rows, cols] = np.broadcast_to(site, keep.shape)[keep]
        if self.order.any_release:
            self._epochs()[rows, cols] = self.order.epoch(writers)

    def _touch(self, bank, local, nbytes: int, cores) -> None:
        if bank.__class__ is int and local.__class__ is int:          # one page on one core
            first = (local - self.base) // GRANULE
            self.touched[bank, first:-(-(local - self.base + nbytes) // GRANULE)] = True
            return
        shape = np.broadcast_shapes(np.shape(bank), np.shape(local), np.shape(cores))
        bank = np.broadcast_to(np.asarray(bank, dtype=np.int64), shape).ravel()
        local = np.broadcast_to(np.asarray(local, dtype=np.int64), shape).ravel() - self.base
        first = local // GRANULE
        count = -(-(local + nbytes) // GRANULE) - first
        if not count.size:
            return
        # every granule of every write in one assignment (a short write repeats its last granule)
        steps = np.minimum(np.arange(int(count.max())), (count - 1)[:, None])
        self.touched[bank[:, None], first[:, None] + steps] = True

    def untouched(self, bank: np.ndarray, local: np.ndarray, nbytes: int) -> np.ndarray:
        """Per page (``bank``, ``local`` arrays, ``nbytes`` each): whether no write touched any of its bytes."""
        first = (np.asarray(local, dtype=np.int64) - self.base) // GRANULE
        count = -(-nbytes // GRANULE)
        hit = np.zeros(first.shape, bool)
        for k in range(count):
            hit |= self.touched[bank, first + k]
        return ~hit
