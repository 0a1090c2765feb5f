"""Device memories as byte arrays: DRAM banks and each core's L1.

Reads / writes: numpy ``uint8`` arrays of shape (rows, bytes), one row per DRAM bank or per
core. Every transfer moves equal-size byte ranges at one offset per lane; a sliding-window
view of the array turns that into one fancy-indexing gather or scatter, so a NOC
transfer for 64 cores is one numpy call. :class:`RegionMap` knows which address ranges
are allocated (buffers, CBs, semaphores) so an access outside them is reported.

A memory also keeps *content records*: a writer that knows which rows received identical
bytes over an address range (a batch of page reads from the same DRAM pages) says so, and
a reader asks instead of comparing the bytes. Every write overlapping a record's range, on
any row, deletes the record first, so a record only ever describes bytes as they are.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided


# Memory arrays of finished runs, by shape. Writing into freshly allocated arrays costs a page
# fault per page touched (and with transparent huge pages, zeroing 2 MiB at a time); reusing
# mapped memory and clearing it with one sequential fill is several times cheaper.
_POOL: dict[tuple[int, int], np.ndarray] = {}


def _borrow(shape: tuple[int, int]) -> np.ndarray:
    data = _POOL.pop(shape, None)
    if data is None:
        return np.zeros(shape, dtype=np.uint8)
    data.fill(0)
    return data


class ByteMemory:
    """``rows`` memories of ``size`` bytes each, addressed from ``base``."""

    def __init__(self, rows: int, size: int, base: int = 0):
        self.base = base
        self.size = size
        self.data = _borrow((max(rows, 1), max(size, 1)))
        self._windows: dict[int, np.ndarray] = {}
        # content records: (lo, hi, rows, content id of each of those rows), see the module docstring
        self._records: list[tuple[int, int, np.ndarray, np.ndarray]] = []

    def release(self) -> None:
        """Give the bytes back to the pool for the next run (this memory must not be used again)."""
        _POOL[self.data.shape] = self.data
        self._windows.clear()
        self._records.clear()

    def _forget(self, addr, nbytes: int) -> None:
        """Drop the content records overlapping [addr, addr + nbytes) (per-lane addresses: their span)."""
        if not self._records:
            return
        if addr.__class__ is int:
            lo, hi = addr, addr + nbytes
        else:
            lo, hi = int(np.min(addr)), int(np.max(addr)) + nbytes
        self._records = [r for r in self._records if r[1] <= lo or hi <= r[0]]

    def note_same_content(self, lo: int, hi: int, rows: np.ndarray, content: np.ndarray) -> None:
        """Record that over [lo, hi) row ``rows[i]`` holds the bytes numbered ``content[i]``:
        rows with equal numbers hold identical bytes there (until a write overlaps the range)."""
        self._forget(lo, hi - lo)
        rows = np.asarray(rows)
        order = np.argsort(rows, kind="stable")
        self._records.append((lo, hi, rows[order], np.asarray(content)[order]))

    def same_content(self, rows: np.ndarray, lo: int, hi: int) -> np.ndarray | None:
        """Content numbers of ``rows`` over [lo, hi) from a record covering that range and
        those rows (equal numbers: identical bytes), or None when no record does."""
        for r_lo, r_hi, r_rows, content in self._records:
            if r_lo <= lo and hi <= r_hi:
                where = np.searchsorted(r_rows, rows)
                if (where < len(r_rows)).all() and (r_rows[np.minimum(where, len(r_rows) - 1)] == rows).all():
                    return content[where]
        return None

    def _window(self, nbytes: int) -> np.ndarray:
        win = self._windows.get(nbytes)
        if win is None:
            rows, size = self.data.shape
            win = as_strided(self.data, shape=(rows, max(size - nbytes + 1, 1), nbytes),
                             strides=(self.data.strides[0], 1, 1))
            self._windows[nbytes] = win
        return win

    def read(self, rows, addr, nbytes: int) -> np.ndarray:
        """Bytes [addr, addr + nbytes) of each row: shape (lanes, nbytes)."""
        if addr.__class__ is int:
            off = addr - self.base
            block = self.data[rows, off:off + nbytes]
            return block if block.ndim == 2 else block[None, :]
        off = np.asarray(addr, dtype=np.int64) - self.base
        return self._window(nbytes)[rows, off]

    def view(self, rows, addr, nbytes: int) -> np.ndarray | None:
        """A writable view of bytes [addr, addr + nbytes) of each row (lanes, nbytes), or None
        when the rows or the addresses differ per lane in a way slicing cannot express."""
        if addr.__class__ is not int or rows.__class__ is not slice:
            return None
        self._forget(addr, nbytes)                    # the caller may write through the view
        off = addr - self.base
        return self.data[rows, off:off + nbytes]

    def write(self, rows, addr, data: np.ndarray) -> None:
        """Store ``data`` (lanes, nbytes) at [addr, addr + nbytes) of each row."""
        nbytes = data.shape[-1]
        self._forget(addr, nbytes)
        if addr.__class__ is int:
            off = addr - self.base
            self.data[rows, off:off + nbytes] = data
        else:
            off = np.asarray(addr, dtype=np.int64) - self.base
            self._window(nbytes)[rows, off] = data

    def read_u32(self, rows, addr) -> np.ndarray:
        return self.read(rows, addr, 4).view(np.uint32)[:, 0]

    def write_u32(self, rows, addr, values) -> None:
        n = self.data[rows, 0].size if not isinstance(rows, (int, np.integer)) else 1
        vals = np.broadcast_to(np.asarray(values, dtype=np.uint32), (n,)).copy()
        self.write(rows, addr, vals.view(np.uint8).reshape(n, 4))


    def add_u32(self, rows: np.ndarray, addr: int, values) -> None:
        """Atomically add ``values`` to the uint32 at ``addr`` of each row (rows may repeat)."""
        self._forget(addr, 4)
        off = addr - self.base
        words = np.ascontiguousarray(self.data[:, off:off + 4]).view(np.uint32)[:, 0]
        np.add.at(words, np.asarray(rows, dtype=np.int64), np.asarray(values, dtype=np.uint32))
        self.data[:, off:off + 4] = words.view(np.uint8).reshape(-1, 4)


@dataclass(frozen=True)
class Region:
    start: int
    end: int        # exclusive
    name: str


class RegionMap:
    """Sorted, non-overlapping allocated regions of one address space."""

    def __init__(self):
        self.regions: list[Region] = []
        self._starts: list[int] = []

    def add(self, start: int, size: int, name: str) -> None:
        i = bisect.bisect_left(self._starts, start)
        self._starts.insert(i, start)
        self.regions.insert(i, Region(start, start + size, name))

    def find(self, addr: int, nbytes: int) -> Region | None:
        """The region holding all of [addr, addr + nbytes), or None."""
        i = bisect.bisect_right(self._starts, addr) - 1
        if i >= 0:
            r = self.regions[i]
            if addr + nbytes <= r.end:
                return r
        return None

    def contains_all(self, addr, nbytes: int) -> bool:
        if addr.__class__ is int:
            return self.find(addr, nbytes) is not None
        a = np.asarray(addr, dtype=np.int64).ravel()
        lo, hi = int(a.min()), int(a.max())
        region = self.find(lo, nbytes)
        if region is not None and hi + nbytes <= region.end:
            return True       # every lane inside one region (the usual case: one buffer)
        starts = np.asarray(self._starts, dtype=np.int64)
        ends = np.asarray([r.end for r in self.regions], dtype=np.int64)
        if starts.size == 0:
            return False
        idx = np.searchsorted(starts, a, side="right") - 1
        ok = idx >= 0
        idx = np.maximum(idx, 0)
        return bool(np.all(ok & (a + nbytes <= ends[idx])))

    def first_outside(self, addr, nbytes: int) -> int:
        """One address of ``addr`` (int or array) that is not inside a region."""
        if addr.__class__ is int:
            return addr
        for a in np.asarray(addr).ravel():
            if self.find(int(a), nbytes) is None:
                return int(a)
        return int(np.asarray(addr).ravel()[0])

    def nearest(self, addr: int) -> Region | None:
        i = bisect.bisect_right(self._starts, addr) - 1
        return self.regions[i] if i >= 0 else (self.regions[0] if self.regions else None)
