"""``cb_reserve_back`` / ``cb_push_back`` / ``cb_wait_front`` / ``cb_pop_front`` for a thread of lanes.

Reads / writes: :class:`tilefold.sim.circular_buffers.CircularBufferState` of the lanes'
cores. Used by data-movement and compute threads alike; a compute thread reserves and
pushes on its packer clock and waits and pops on its unpacker clock (``_producer_clock`` /
``_consumer_clock``). Blocking calls yield to the scheduler on the key ``("cb", index)``;
pushes and pops wake the threads waiting on it.
"""

from __future__ import annotations

import numpy as np

from tilefold.errors import CircularBufferError, NocHazardError
from tilefold.sim.lanes import all_lanes, any_lane, even, uniform


def _named(st) -> str:
    """`` (NAME)``: the program's name for a circular buffer, when it has one."""
    return f" ({st.name})" if st.name else ""


def _pages(n: int) -> str:
    return f"{n} page" if n == 1 else f"{n} pages"


class CircularBufferApi:
    def _producer_clock(self) -> np.ndarray:
        return self.clock

    def _consumer_clock(self) -> np.ndarray:
        return self.clock

    def _cb(self, cb, where: str):
        cb = cb if cb.__class__ is int else uniform(cb, "circular buffer index")
        st = self._cb_cache.get(cb)
        if st is None:
            if not 0 <= cb < self.arch.max_circular_buffers:
                raise self.fail(CircularBufferError, f"{where}: circular buffer index {cb} is outside 0-31")
            st = self.dev.cbs.states.get(cb)
            if st is None or not st.configured[self.rows].all():
                missing = self.dev.cbs._cores_missing(cb, self.rows)
                raise self.fail(CircularBufferError, f"{where}: circular buffer c_{cb} is not configured on core "
                                                     f"{missing}; create it with CreateCircularBuffer on these cores")
            self._cb_cache[cb] = st
        return cb, st

    def _pages(self, n, what: str) -> int:
        n = n if n.__class__ is int else uniform(n, what)
        if n <= 0:
            raise self.fail(CircularBufferError, f"{what} must be positive, got {n}")
        return n

    def _capacity(self, st):
        return st.uniform_capacity if st.uniform_capacity is not None else st.capacity[self.rows]

    def _check_step(self, st, cb: int, pos, n: int, call: str) -> None:
        cap = self._capacity(st)
        if self.L == 1 and cap.__class__ is int and pos.item() + n <= cap:
            return
        over = pos + n > cap
        if any_lane(over):
            capv = int(np.max(cap))
            posv = int(np.max(pos))
            named = f" ({st.name}: several blocks held at once must not straddle its end — acquire its blocks " \
                    f"the same number at a time, or make its block count a multiple of that)" if st.name else ""
            raise self.fail(CircularBufferError,
                            f"{call}(c_{cb}, {n}) at page {posv} of {capv} runs past the end of the circular buffer; "
                            f"make its page count a multiple of {n}{named}", over)

    # -- producer side ------------------------------------------------------------------

    def cb_reserve_back(self, cb, num_pages) -> None:
        st = self._cb_cache.get(cb) if cb.__class__ is int else None
        if st is None:
            cb, st = self._cb(cb, "cb_reserve_back")
        n = num_pages if num_pages.__class__ is int and num_pages > 0 else self._pages(num_pages, "cb_reserve_back page count")
        if st.partners:
            self._check_turn(cb, st, n)
        rows = self.rows
        cap = self._capacity(st)
        if self.L == 1 and cap.__class__ is int and n <= cap and int(st.wr[self.row0]) + n <= cap:
            self._reserve_one(cb, st, n, cap)
            return
        if cap.__class__ is int and n <= cap and self.L > 1:
            wr = st.wr[rows]
            if even(wr) and wr.item(0) + n <= cap:
                self._reserve_even(cb, st, n, cap)
                return
        if any_lane(n > cap):
            raise self.fail(CircularBufferError, f"cb_reserve_back(c_{cb}, {n}) asks for more pages than the circular "
                                                 f"buffer holds ({int(np.min(cap))}); it can never succeed")
        self._check_step(st, cb, st.wr[rows], n, "cb_reserve_back")
        if not all_lanes(cap - (st.received[rows] - st.acked[rows]) >= n):
            self.block(("cb", cb), f"cb_reserve_back(c_{cb}, {n}){_named(st)}: waiting for {_pages(n)} to be freed",
                       lambda: bool(all_lanes(cap - (st.received[rows] - st.acked[rows]) >= n)))
        # The slot of the n-th page was freed when the page `capacity` pages earlier was popped.
        clock = self._producer_clock()
        if self.L == 1 and cap.__class__ is int:
            row = int(self.row_idx[0])
            last = int(st.received[row]) + (n - 1)
            if last >= cap:
                self.sync_to(st.pop_time[row, last % cap], clock)
        else:
            last = st.received[rows] + (n - 1)
            earlier = last - cap
            if any_lane(earlier >= 0):
                slot = last % cap
                freed = st.pop_time[self.row_idx, slot]
                self.sync_to(np.where(earlier >= 0, freed, 0.0), clock)
        st.reserved[rows] = np.maximum(st.reserved[rows], n)
        st.last_reserve = (self, self.line_of())
        self.charge(self.costs.cb_op, clock, "cb_reserve_back")

    def _check_turn(self, cb: int, st, n: int) -> None:
        """A CB taking turns in L1 with others (an allocation group, buffers of disjoint lifetimes)
        reserves its pages only while none of the others holds pages on these cores: their bytes
        are the same."""
        rows = self.rows
        for other in st.partners:
            ost = self.dev.cbs.states[other]
            held = (ost.received[rows] - ost.acked[rows]) + ost.reserved[rows]
            if any_lane(held > 0):
                at = np.flatnonzero(np.broadcast_to(held > 0, np.shape(self.row_idx)))[0]
                core = self.dev.rows_core_name(int(np.asarray(self.row_idx).flat[at]))
                pages = int(np.asarray(held).flat[at] if np.ndim(held) else held)
                raise self.fail(CircularBufferError, f"cb_reserve_back(c_{cb}, {n}){_named(st)}: c_{other}"
                                                     f"{_named(ost)} shares these L1 bytes and still holds {_pages(pages)} "
                                                     f"on core {core}; buffers that take turns in L1 (an allocation "
                                                     "group) must not be in use at once: pop them first")

    def _reserve_one(self, cb: int, st, n: int, cap: int) -> None:
        """``cb_reserve_back`` of a one-lane thread whose checks pass: the same steps on Python ints."""
        row = self.row0
        received = st.received
        if cap - (int(received[row]) - int(st.acked[row])) < n:
            self.block(("cb", cb), f"cb_reserve_back(c_{cb}, {n}){_named(st)}: waiting for {_pages(n)} to be freed",
                       lambda: cap - (int(received[row]) - int(st.acked[row])) >= n)
        clock = self._producer_clock()
        last = int(received[row]) + (n - 1)
        if last >= cap:      # the slot of the n-th page was freed when the page `cap` pages earlier was popped
            self.sync_to(st.pop_time[row, last % cap], clock)
        if st.reserved[row] < n:
            st.reserved[row] = n
        st.last_reserve = (self, self.line_of(3))
        self.charge(self.costs.cb_op, clock, "cb_reserve_back")

    def _reserve_even(self, cb: int, st, n: int, cap: int) -> None:
        """``cb_reserve_back`` of many lanes whose checks pass: what a lane does, done once on
        Python numbers where every lane holds the same counts (and clocks, in ``sync_to``)."""
        rows = self.rows
        received, acked = st.received[rows], st.acked[rows]
        if even(received) and even(acked):
            free = cap - (received.item(0) - acked.item(0)) >= n
        else:
            free = all_lanes(cap - (received - acked) >= n)
        if not free:
            self.block(("cb", cb), f"cb_reserve_back(c_{cb}, {n}){_named(st)}: waiting for {_pages(n)} to be freed",
                       lambda: bool(all_lanes(cap - (st.received[rows] - st.acked[rows]) >= n)))
            received = st.received[rows]
        clock = self._producer_clock()
        if even(received):
            last = received.item(0) + (n - 1)
            if last >= cap:      # the slot of the n-th page was freed when the page `cap` pages earlier was popped
                self.sync_to(st.pop_time[rows, last % cap], clock)
        else:
            last = received + (n - 1)
            earlier = last - cap
            if any_lane(earlier >= 0):
                freed = st.pop_time[self.row_idx, last % cap]
                self.sync_to(np.where(earlier >= 0, freed, 0.0), clock)
        reserved = st.reserved[rows]
        if not even(reserved):
            st.reserved[rows] = np.maximum(reserved, n)
        elif reserved.item(0) < n:
            st.reserved[rows] = n
        st.last_reserve = (self, self.line_of(3))
        self.charge(self.costs.cb_op, clock, "cb_reserve_back")

    def cb_push_back(self, cb, num_pages) -> None:
        st = self._cb_cache.get(cb) if cb.__class__ is int else None
        if st is None:
            cb, st = self._cb(cb, "cb_push_back")
        n = num_pages if num_pages.__class__ is int and num_pages > 0 else self._pages(num_pages, "cb_push_back page count")
        rows = self.rows
        if self.L == 1 and st.uniform_capacity is not None:
            row = self.row0
            wr, cap = int(st.wr[row]), st.uniform_capacity
            if st.reserved[row] >= n and wr + n <= cap:
                self._check_pushed_data(cb, st, wr, n)
                clock = self._producer_clock()
                self.charge(self.costs.cb_op, clock, "cb_push_back")
                if n == 1:
                    st.push_time[row, wr] = clock.item()
                else:
                    st.push_time[row, wr:wr + n] = clock.item()
                st.received[row] += n
                st.reserved[row] -= n
                st.wr[row] = (wr + n) % cap
                st.pack_seq[row] = 0
                st.last_push = st.push_sites[id(self)] = (self, self.line_of())
                self.dev.progress += 1
                self.scheduler.notify(st.key)
                return
        reserved = st.reserved[rows]
        if st.uniform_capacity is not None and self.L > 1:
            wr, cap = st.wr[rows], st.uniform_capacity
            if even(reserved) and even(wr):
                r0, w0 = reserved.item(0), wr.item(0)
                if r0 >= n and w0 + n <= cap:      # every lane's checks pass: their steps once, on ints
                    self._check_pushed_data(cb, st, w0, n)
                    clock = self._producer_clock()
                    self.charge(self.costs.cb_op, clock, "cb_push_back")
                    self._stamp(st.push_time, w0, n, clock)
                    st.received[rows] += n
                    st.reserved[rows] = r0 - n
                    st.wr[rows] = (w0 + n) % cap
                    st.pack_seq[rows] = 0
                    st.last_push = st.push_sites[id(self)] = (self, self.line_of())
                    self.dev.progress += 1
                    self.scheduler.notify(st.key)
                    return
        if any_lane(reserved < n):
            raise self.fail(CircularBufferError,
                            f"cb_push_back(c_{cb}, {n}) pushes pages that were not reserved (only "
                            f"{int(np.min(reserved))} reserved); call cb_reserve_back(c_{cb}, {n}) first",
                            reserved < n)
        wr = st.wr[rows]
        self._check_step(st, cb, wr, n, "cb_push_back")
        self._check_pushed_data(cb, st, wr, n)
        clock = self._producer_clock()
        self.charge(self.costs.cb_op, clock, "cb_push_back")
        self._stamp(st.push_time, wr, n, clock)
        st.received[rows] += n
        st.reserved[rows] -= n
        cap = self._capacity(st)
        st.wr[rows] = (wr + n) % cap
        st.pack_seq[rows] = 0
        st.last_push = st.push_sites[id(self)] = (self, self.line_of())
        self.dev.progress += 1
        self.scheduler.notify(st.key)

    # -- consumer side ------------------------------------------------------------------

    def cb_wait_front(self, cb, num_pages) -> None:
        st = self._cb_cache.get(cb) if cb.__class__ is int else None
        if st is None:
            cb, st = self._cb(cb, "cb_wait_front")
        n = num_pages if num_pages.__class__ is int and num_pages > 0 else self._pages(num_pages, "cb_wait_front page count")
        rows = self.rows
        cap = self._capacity(st)
        if self.L == 1 and cap.__class__ is int and n <= cap and int(st.rd[self.row0]) + n <= cap:
            row = self.row0
            received = st.received
            if int(received[row]) - int(st.acked[row]) < n:
                self.block(("cb", cb), f"cb_wait_front(c_{cb}, {n}){_named(st)}: waiting for {_pages(n)} to be pushed",
                           lambda: int(received[row]) - int(st.acked[row]) >= n)
            clock = self._consumer_clock()
            self.sync_to(st.push_time[row, (int(st.rd[row]) + (n - 1)) % cap], clock)
            if st.waited[row] < n:
                st.waited[row] = n
            self.charge(self.costs.cb_op, clock, "cb_wait_front")
            return
        if cap.__class__ is int and n <= cap and self.L > 1:
            rd = st.rd[rows]
            if even(rd) and rd.item(0) + n <= cap:
                self._wait_even(cb, st, n, cap)
                return
        if any_lane(n > cap):
            raise self.fail(CircularBufferError, f"cb_wait_front(c_{cb}, {n}) waits for more pages than the circular "
                                                 f"buffer holds ({int(np.min(cap))}); it can never succeed")
        self._check_step(st, cb, st.rd[rows], n, "cb_wait_front")
        if not all_lanes(st.received[rows] - st.acked[rows] >= n):
            self.block(("cb", cb), f"cb_wait_front(c_{cb}, {n}){_named(st)}: waiting for {_pages(n)} to be pushed",
                       lambda: bool(all_lanes(st.received[rows] - st.acked[rows] >= n)))
        slot = (st.rd[rows] + (n - 1)) % cap
        clock = self._consumer_clock()
        self.sync_to(st.push_time[self.row_idx, slot], clock)
        waited = st.waited[rows]
        st.waited[rows] = np.maximum(waited, n)
        self.charge(self.costs.cb_op, clock, "cb_wait_front")

    def _wait_even(self, cb: int, st, n: int, cap: int) -> None:
        """``cb_wait_front`` of many lanes whose checks pass, on Python numbers where every lane
        holds the same counts."""
        rows = self.rows
        received, acked = st.received[rows], st.acked[rows]
        if even(received) and even(acked):
            ready = received.item(0) - acked.item(0) >= n
        else:
            ready = all_lanes(received - acked >= n)
        if not ready:
            self.block(("cb", cb), f"cb_wait_front(c_{cb}, {n}){_named(st)}: waiting for {_pages(n)} to be pushed",
                       lambda: bool(all_lanes(st.received[rows] - st.acked[rows] >= n)))
        rd = st.rd[rows]
        clock = self._consumer_clock()
        if even(rd):
            self.sync_to(st.push_time[rows, (rd.item(0) + (n - 1)) % cap], clock)
        else:
            self.sync_to(st.push_time[self.row_idx, (rd + (n - 1)) % cap], clock)
        waited = st.waited[rows]
        if not even(waited):
            st.waited[rows] = np.maximum(waited, n)
        elif waited.item(0) < n:
            st.waited[rows] = n
        self.charge(self.costs.cb_op, clock, "cb_wait_front")

    def cb_pop_front(self, cb, num_pages) -> None:
        st = self._cb_cache.get(cb) if cb.__class__ is int else None
        if st is None:
            cb, st = self._cb(cb, "cb_pop_front")
        n = num_pages if num_pages.__class__ is int and num_pages > 0 else self._pages(num_pages, "cb_pop_front page count")
        rows = self.rows
        if self.L == 1 and st.uniform_capacity is not None:
            row = self.row0
            rd, cap = int(st.rd[row]), st.uniform_capacity
            if st.waited[row] >= n and rd + n <= cap:
                self._check_popped_data(cb, st, rd, n)
                clock = self._consumer_clock()
                self.charge(self.costs.cb_op, clock, "cb_pop_front")
                if n == 1:
                    st.pop_time[row, rd] = clock.item()
                else:
                    st.pop_time[row, rd:rd + n] = clock.item()
                st.acked[row] += n
                st.pops += 1
                st.pop_sites[id(self)] = self
                st.waited[row] -= n
                st.rd[row] = (rd + n) % cap
                self.dev.progress += 1
                self.scheduler.notify(st.key)
                return
        waited = st.waited[rows]
        if st.uniform_capacity is not None and self.L > 1:
            rd, cap = st.rd[rows], st.uniform_capacity
            if even(waited) and even(rd):
                w0, r0 = waited.item(0), rd.item(0)
                if w0 >= n and r0 + n <= cap:      # every lane's checks pass: their steps once, on ints
                    self._check_popped_data(cb, st, r0, n)
                    clock = self._consumer_clock()
                    self.charge(self.costs.cb_op, clock, "cb_pop_front")
                    self._stamp(st.pop_time, r0, n, clock)
                    st.acked[rows] += n
                    st.pops += 1
                    st.pop_sites[id(self)] = self
                    st.waited[rows] = w0 - n
                    st.rd[rows] = (r0 + n) % cap
                    self.dev.progress += 1
                    self.scheduler.notify(st.key)
                    return
        if any_lane(waited < n):
            raise self.fail(CircularBufferError,
                            f"cb_pop_front(c_{cb}, {n}) pops pages that were not waited for (only {int(np.min(waited))} "
                            f"waited); call cb_wait_front(c_{cb}, {n}) first", waited < n)
        rd = st.rd[rows]
        self._check_step(st, cb, rd, n, "cb_pop_front")
        self._check_popped_data(cb, st, rd, n)
        clock = self._consumer_clock()
        self.charge(self.costs.cb_op, clock, "cb_pop_front")
        self._stamp(st.pop_time, rd, n, clock)
        st.acked[rows] += n
        st.pops += 1
        st.pop_sites[id(self)] = self
        st.waited[rows] -= n
        st.rd[rows] = (rd + n) % self._capacity(st)
        self.dev.progress += 1
        self.scheduler.notify(st.key)

    # -- helpers ------------------------------------------------------------------------

    def _stamp(self, times: np.ndarray, pos, n: int, clock: np.ndarray) -> None:
        if self.L == 1:
            p0 = int(pos[0]) if pos.__class__ is np.ndarray else pos
            times[self.row_idx[0], p0:p0 + n] = clock[0]
            return
        if pos.__class__ is int:
            times[self.rows, pos:pos + n] = clock.item(0) if even(clock) else clock[:, None]
            return
        p0 = pos[0] if isinstance(pos, np.ndarray) else pos
        if isinstance(pos, np.ndarray) and not (pos == p0).all():
            cols = pos[:, None] + np.arange(n)
            times[self.row_idx[:, None], cols] = clock[:, None]
        else:
            times[self.rows, int(p0):int(p0) + n] = clock[:, None]

    def _page_range(self, st, pos, n: int):
        """Byte range [lo, hi) of ``n`` pages from page position ``pos`` (int or per-lane)."""
        if st.uniform_base is not None and st.uniform_page_size is not None:
            base, ps = st.uniform_base, st.uniform_page_size
        else:
            base, ps = st.base[self.rows], st.page_size[self.rows]
        p = int(pos[0]) if isinstance(pos, np.ndarray) and (pos == pos[0]).all() else pos
        lo = base + p * ps
        return lo, lo + n * ps

    def _check_pushed_data(self, cb: int, st, wr, n: int) -> None:
        """A push hands data to the consumer: NOC reads into it must have completed."""
        if not self.pending_reads:
            return
        lo, hi = self._page_range(st, wr, n)
        for r_lo, r_hi, line in self.pending_reads:
            if any_lane((r_lo < hi) & (lo < r_hi)):
                issued = self.location_of(line)
                raise self.fail(NocHazardError,
                                f"cb_push_back(c_{cb}, {n}) hands over pages that noc_async_read (at {issued}) may "
                                "still be filling; call noc_async_read_barrier() before cb_push_back")

    def _check_popped_data(self, cb: int, st, rd, n: int) -> None:
        """A pop frees pages: NOC writes reading them must have left L1."""
        if not self.pending_writes:
            return
        lo, hi = self._page_range(st, rd, n)
        for w_lo, w_hi, line in self.pending_writes:
            if any_lane((w_lo < hi) & (lo < w_hi)):
                issued = self.location_of(line)
                raise self.fail(NocHazardError,
                                f"cb_pop_front(c_{cb}, {n}) frees pages that noc_async_write (at {issued}) may still be "
                                "reading; call noc_async_writes_flushed() or noc_async_write_barrier() before "
                                "cb_pop_front")
