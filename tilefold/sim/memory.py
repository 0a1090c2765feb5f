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

A *shared write* (:meth:`ByteMemory.write_shared`: many rows receive one of a few byte
strings) is kept as such a record together with those strings, and copied into the rows only
when anything else touches its range: a reader that understands content records takes the
strings themselves (:meth:`ByteMemory.shared_bytes`), and a later shared write of the same
range to the same rows replaces it without the copy ever being made. Every other read, view
or write overlapping it copies it in first, so the bytes they see are always the written ones.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided


# Memory arrays of finished runs, by shape, with the column span [lo, hi) their run wrote.
# Writing into freshly allocated arrays costs a page fault per page touched (and with
# transparent huge pages, zeroing 2 MiB at a time); reusing mapped memory and clearing what
# was written with one sequential fill is several times cheaper. Arrays above POOL_LIMIT bytes
# are given back to the system instead: for tensors that large the page faults are a small part
# of the run, and holding the memory would double the host's footprint while results are checked.
_I64 = np.dtype(np.int64)
_POOL: dict[tuple[int, int], tuple[np.ndarray, int, int]] = {}
POOL_LIMIT = 256 << 20


def _borrow(shape: tuple[int, int]) -> np.ndarray:
    kept = _POOL.pop(shape, None)
    if kept is None:
        return np.zeros(shape, dtype=np.uint8)
    data, lo, hi = kept
    if lo < hi:
        data[:, lo:hi] = 0
    return data


class ByteMemory:
    """``rows`` memories of ``size`` bytes each, addressed from ``base``."""

    def __init__(self, rows: int, size: int, base: int = 0):
        self.base = base
        self.size = size
        self.data = _borrow((max(rows, 1), max(size, 1)))
        self._written = [self.data.shape[1], 0]     # column span any write touched (to clear on reuse)
        self._windows: dict[int, np.ndarray] = {}
        # content records, see the module docstring; `_unwritten` counts those of shared writes
        # whose bytes are not yet in `data`
        self._records: list[_Record] = []
        self._unwritten = 0

    def release(self) -> None:
        """Give the bytes back to the pool for the next run, or to the system when they are more
        than :data:`POOL_LIMIT` (this memory must not be used again)."""
        if self.data.nbytes <= POOL_LIMIT:
            _POOL[self.data.shape] = (self.data, *self._written)
        self.data = np.zeros((0, 0), np.uint8)
        self._windows.clear()
        self._records.clear()
        self._unwritten = 0

    @staticmethod
    def _span(addr, nbytes: int) -> tuple[int, int]:
        """[lo, hi) covering ``nbytes`` at ``addr`` (per-lane addresses: their span)."""
        if addr.__class__ is int:
            return addr, addr + nbytes
        addr = np.asarray(addr)
        return int(addr.min()), int(addr.max()) + nbytes     # methods: half the dispatch of np.min / np.max

    def _forget(self, addr, nbytes: int) -> None:
        """Before a write to [addr, addr + nbytes): note the span written, and drop the content
        records overlapping it, after copying in the bytes of unwritten shared writes there (the
        caller writes only part of them)."""
        lo, hi = self._span(addr, nbytes)
        written = self._written
        if lo - self.base < written[0]:
            written[0] = lo - self.base
        if hi - self.base > written[1]:
            written[1] = hi - self.base
        if not self._records:
            return
        if self._unwritten:
            self._write_out(lo, hi)
        self._records = [r for r in self._records if r.hi <= lo or hi <= r.lo]

    def _write_out(self, lo: int, hi: int) -> None:
        """Copy the bytes of the unwritten shared writes overlapping [lo, hi) into ``data``."""
        for r in self._records:
            if r.sources is not None and r.lo < hi and lo < r.hi:
                off = r.lo - self.base
                for number, source in enumerate(r.sources):
                    self.data[r.rows[r.content == number], off:off + source.size] = source
                r.sources = None
                self._unwritten -= 1

    def note_same_content(self, lo: int, hi: int, rows: np.ndarray, content: np.ndarray) -> None:
        """Record that over [lo, hi) row ``rows[i]`` holds the bytes numbered ``content[i]``:
        rows with equal numbers hold identical bytes there (until a write overlaps the range)."""
        self._forget(lo, hi - lo)
        self._records.append(_Record(lo, hi, rows, content))

    def write_shared(self, addr: int, rows: np.ndarray, content: np.ndarray, sources: np.ndarray) -> None:
        """Store ``sources[content[i]]`` (``sources``: (contents, nbytes)) at [addr, addr + nbytes)
        of row ``rows[i]``: kept as a content record holding ``sources`` (see the module docstring)."""
        hi = addr + sources.shape[1]
        for r in self._records:                  # earlier shared writes this one overwrites whole
            if r.sources is not None and addr <= r.lo and r.hi <= hi and _all_in(r.rows, rows):
                r.sources = None
                self._unwritten -= 1
        self._forget(addr, hi - addr)
        self._records.append(_Record(addr, hi, rows, content, sources))
        self._unwritten += 1

    def _record_for(self, rows: np.ndarray, lo: int, hi: int) -> tuple[_Record, np.ndarray] | None:
        """A record covering [lo, hi) and ``rows``, and where each of ``rows`` is in it."""
        for r in self._records:
            if r.lo <= lo and hi <= r.hi:
                where = np.searchsorted(r.rows, rows)
                if (where < len(r.rows)).all() and (r.rows[np.minimum(where, len(r.rows) - 1)] == rows).all():
                    return r, where
        return None

    def same_content(self, rows: np.ndarray, lo: int, hi: int) -> np.ndarray | None:
        """Content numbers of ``rows`` over [lo, hi) from a record covering that range and
        those rows (equal numbers: identical bytes), or None when no record does."""
        found = self._record_for(rows, lo, hi)
        return None if found is None else found[0].content[found[1]]

    def shared_bytes(self, rows: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Bytes [lo, hi) of ``rows`` as (distinct byte strings (contents, hi - lo), the index
        of each row's string) when a shared write not yet copied in covers them, else None."""
        found = self._record_for(rows, lo, hi) if self._unwritten else None
        if found is None or found[0].sources is None:
            return None
        r, where = found
        return r.sources[:, lo - r.lo:hi - r.lo], r.content[where]

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
        if self._unwritten:
            self._write_out(*self._span(addr, nbytes))
        if addr.__class__ is int:
            off = addr - self.base
            block = self.data[rows, off:off + nbytes]
            return block if block.ndim == 2 else block[None, :]
        off = np.asarray(addr, dtype=np.int64) - self.base
        return self._window(nbytes)[_lane_rows(rows), off]

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
            self._window(nbytes)[_lane_rows(rows), off] = data

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


def _lane_rows(rows):
    """Rows as an index array: a slice of rows beside per-lane addresses would index every
    row at every lane's address (numpy pairs arrays with arrays, not with slices)."""
    return np.arange(rows.start or 0, rows.stop, rows.step or 1) if rows.__class__ is slice else rows


class _Record:
    """Rows ``rows`` (sorted) hold the bytes numbered ``content`` over [lo, hi); ``sources``:
    the bytes of each number when a shared write has not been copied into the rows yet."""

    __slots__ = ("lo", "hi", "rows", "content", "sources")

    def __init__(self, lo: int, hi: int, rows, content, sources: np.ndarray | None = None):
        rows = np.asarray(rows).reshape(-1)
        order = np.argsort(rows, kind="stable")
        self.lo, self.hi = lo, hi
        self.rows, self.content = rows[order], np.asarray(content).reshape(-1)[order]
        self.sources = sources


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
        a = addr if addr.__class__ is np.ndarray and addr.dtype is _I64 else np.asarray(addr, dtype=np.int64)
        if a.size:      # the usual case: every lane inside the region of the first (one unsigned comparison)
            first = self.find(a.item(0), nbytes)
            if first is not None and not (np.subtract(a, first.start).view(np.uint64) > first.end - nbytes
                                          - first.start).any():
                return True
        lo, hi = int(a.min()), int(a.max())
        a = a.ravel()
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


def _all_in(rows: np.ndarray, among: np.ndarray) -> bool:
    """Whether every row of ``rows`` is one of ``among`` (usually the same cores: one comparison)."""
    if rows is among or (rows.shape == among.shape and np.array_equal(rows, among)):
        return True
    return bool(np.isin(rows, among).all())
