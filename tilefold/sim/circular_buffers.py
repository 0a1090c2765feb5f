"""Circular buffers with TT-Metalium semantics, for every core at once.

Reads: the allocation of a Program's CBs. Writes: CB state arrays (one entry per core).

Per CB index and core: base address, page size, capacity in pages, pages pushed
(``received``) and popped (``acked``), the write and read page positions, pages reserved by
the producer and waited for by the consumer, and the sequential ``pack_tile`` position.
``cb_reserve_back`` may proceed when ``capacity - (received - acked) >= n``;
``cb_wait_front`` when ``received - acked >= n``. Each page slot remembers when it was
pushed and when it was popped, so a consumer's clock after ``cb_wait_front`` is the time
the producer pushed the page it needed, and a producer's after ``cb_reserve_back`` the time
the consumer freed the slot: that is how waits synchronise producer and consumer clocks.

Protocol misuse is a :class:`CircularBufferError`: reserving or waiting for more pages
than the CB holds, pushing pages that were not reserved, popping pages that were not
waited for, a push or pop that would run past the end of the CB (its capacity is not a
multiple of the step), using a CB index not configured on the core, pages left at exit.
"""

from __future__ import annotations

import numpy as np

from tilefold.arch.cores import CoreCoord
from tilefold.errors import CircularBufferError
from tilefold.sim.allocator import Allocation


class CircularBufferState:
    """State of one CB index on all cores of the program (arrays indexed by core row)."""

    def __init__(self, index: int, ncores: int, max_pages: int):
        self.index = index
        self.name = ""                                # the program's name for it (a dataflow buffer's)
        self.key = ("cb", index)                      # what threads waiting on it block on
        n = ncores
        self.configured = np.zeros(n, dtype=bool)
        self.base = np.zeros(n, dtype=np.int64)
        self.page_size = np.zeros(n, dtype=np.int64)
        self.capacity = np.zeros(n, dtype=np.int64)
        self.received = np.zeros(n, dtype=np.int64)
        self.acked = np.zeros(n, dtype=np.int64)
        self.wr = np.zeros(n, dtype=np.int64)        # write position, in pages from base
        self.rd = np.zeros(n, dtype=np.int64)        # read position, in pages from base
        self.reserved = np.zeros(n, dtype=np.int64)  # pages reserved and not yet pushed
        self.waited = np.zeros(n, dtype=np.int64)    # pages waited for and not yet popped
        self.pack_seq = np.zeros(n, dtype=np.int64)  # next tile of a sequential pack_tile
        self.push_time = np.zeros((n, max(max_pages, 1)))
        self.pop_time = np.zeros((n, max(max_pages, 1)))
        # Pops so far on any core: pages already waited for keep their data until the next pop,
        # so unpacked copies of them stay valid while this is unchanged.
        self.pops = 0
        # When every configured core has the same geometry, keep it as plain ints (fast path).
        self.uniform_base: int | None = None
        self.uniform_page_size: int | None = None
        self.uniform_capacity: int | None = None
        # the thread and generated line of the last cb_reserve_back / cb_push_back (for reports)
        self.last_reserve: tuple | None = None
        self.last_push: tuple | None = None
        self.push_sites: dict[int, tuple] = {}     # id of a thread context -> (context, line) of its last push
        self.pop_sites: dict[int, object] = {}     # id of a thread context -> the context, once it popped
        self.partners: list[int] = []                 # CBs of an L1 arena whose bytes overlap its own


class CircularBuffers:
    """All CB indices of a program."""

    def __init__(self, allocation: Allocation, core_rows: dict[CoreCoord, int]):
        self.core_rows = core_rows
        self.rows_core = {r: c for c, r in core_rows.items()}
        ncores = len(core_rows)
        by_index: dict[int, list] = {}
        for cb in allocation.circular_buffers:
            by_index.setdefault(cb.index, []).append(cb)
        self.states: dict[int, CircularBufferState] = {}
        for index, placements in by_index.items():
            max_pages = max(p.num_pages for p in placements)
            st = CircularBufferState(index, ncores, max_pages)
            st.name = next((p.name for p in placements if p.name), "")
            for p in placements:
                rows = [core_rows[c] for c in p.cores if c in core_rows]
                st.configured[rows] = True
                st.base[rows] = p.address
                st.page_size[rows] = p.page_size
                st.capacity[rows] = p.num_pages
            cfg = st.configured
            if cfg.any():
                for attr, uattr in (("base", "uniform_base"), ("page_size", "uniform_page_size"),
                                    ("capacity", "uniform_capacity")):
                    vals = getattr(st, attr)[cfg]
                    if (vals == vals[0]).all():
                        setattr(st, uattr, int(vals[0]))
            self.states[index] = st
        self.backed = {p.index for p in allocation.circular_buffers if p.backed}   # pages left are a tensor's data
        self.regions = sorted((p.address, p.address + p.page_size * p.num_pages, p.index)
                              for p in allocation.circular_buffers)
        self._at: dict[int, int | None] = {}       # cb_at's answers so far
        turns = [p for p in allocation.circular_buffers if p.takes_turns]
        for a in turns:
            end = a.address + a.page_size * a.num_pages
            self.states[a.index].partners = sorted(
                {b.index for b in turns if b.index != a.index and b.address < end
                 and a.address < b.address + b.page_size * b.num_pages and set(a.cores) & set(b.cores)})

    def state(self, index: int, rows, where: str) -> CircularBufferState:
        st = self.states.get(index)
        if st is None or not st.configured[rows].all():
            cores = self._cores_missing(index, rows)
            raise CircularBufferError(f"{where}: circular buffer c_{index} is not configured on core "
                                      f"{cores}; create it with CreateCircularBuffer on these cores")
        return st

    def _cores_missing(self, index: int, rows) -> str:
        st = self.states.get(index)
        idx = np.arange(len(self.core_rows))[rows]
        missing = idx if st is None else idx[~st.configured[rows]]
        return ", ".join(str(self.rows_core[int(r)]) for r in missing[:4])

    def cb_at(self, addr: int) -> int | None:
        """The CB index whose L1 range holds ``addr`` (CB addresses are the same on all cores)."""
        at = self._at
        if addr.__class__ is int and addr in at:
            return at[addr]
        found = [index for start, end, index in self.regions if start <= addr < end]
        if len(found) > 1:          # CBs taking turns in an L1 arena: the one in use now (not remembered)
            return self._in_use(found)
        if addr.__class__ is int and len(at) < 4096:
            at[addr] = found[0] if found else None
        return found[0] if found else None

    def _in_use(self, indices: list[int]) -> int:
        """Of CBs sharing bytes, the one holding reserved pages, else pushed ones, else the first."""
        for held in (lambda st: st.reserved.any(), lambda st: (st.received != st.acked).any()):
            for index in indices:
                if held(self.states[index]):
                    return index
        return indices[0]

    def leftovers(self, quiet=frozenset()) -> list[str]:
        """Descriptions of pages pushed and never popped, per CB and core, with the kernel and
        line that pushed them last on the first such core (not of a CB at a tensor's address: what it holds is the tensor's;
        nor of the CBs of ``quiet``)."""
        out = []
        for index, st in self.states.items():
            if index in self.backed or index in quiet:
                continue
            left = st.received - st.acked
            rows = np.nonzero(left)[0]
            if not len(rows):
                continue
            by = ""
            site = _push_site(st, int(rows[0]))
            if site is not None:
                ctx, line = site
                by = f" (pushed by {ctx.thread_name} at {ctx.location_of(line)})"
            counts = sorted({int(left[r]) for r in rows})
            cores = [str(self.rows_core[int(r)]) for r in rows[:4]]
            where = (f"core {cores[0]}" if len(rows) == 1 else
                     f"{len(rows)} cores ({', '.join(cores)}{', ...' if len(rows) > 4 else ''})")
            pages = f"{counts[0]} pages" if len(counts) == 1 else f"{counts[0]} to {counts[-1]} pages"
            each = " each" if len(rows) > 1 and len(counts) == 1 else ""
            out.append(f"c_{index} on {where}: {pages}{each} pushed and never popped{by}")
        return out

    def first_push_location(self, quiet=frozenset()):
        """The user's line of the last push into a CB that still holds pages (not one of ``quiet``), on
        the first core holding them, or None."""
        for index, st in self.states.items():
            left = np.nonzero(st.received != st.acked)[0]
            if index not in self.backed and index not in quiet and len(left) and st.last_push is not None:
                ctx, line = _push_site(st, int(left[0]))
                return ctx.location_of(line)
        return None

    def reserved_by_finished(self) -> list[tuple]:
        """(thread context, generated line, CB index, pages) of pages reserved and never pushed by
        a thread that has finished."""
        out = []
        for index, st in self.states.items():
            if st.last_reserve is None:
                continue
            ctx, line = st.last_reserve
            thread = ctx.thread
            if thread is None or not thread.greenlet.dead:
                continue
            left = st.reserved[ctx.rows]
            if np.any(left > 0):
                out.append((ctx, line, index, int(np.max(left))))
        return out


def _push_site(st, row: int):
    """(thread context, line) of the last push into ``st`` by a thread running core row ``row``
    (threads of diverged cores push from different lines), else of the last push of all."""
    return next((site for site in reversed(st.push_sites.values()) if row in site[0].row_idx), st.last_push)
