"""The data-movement kernel API: NOC transfers, accessors, semaphores, L1 pointers.

Reads / writes: the device's DRAM banks and cores' L1 (:class:`ByteMemory`), CB state,
semaphore words. Every transfer copies real bytes at once, one numpy gather / scatter for
all lanes, and is remembered as outstanding until the matching barrier: data from a
``noc_async_read`` handed to a consumer before ``noc_async_read_barrier`` and L1 that an
unflushed ``noc_async_write`` still reads being freed are hazards (see
:mod:`tilefold.sim.cb_api`). Accesses outside every allocated DRAM or L1 region are
:class:`DramAccessError`; writes into CB pages the producer did not reserve are
:class:`CircularBufferError`.

Cost model (cycles, from :mod:`tilefold.arch.costs`): issuing a transfer costs ``noc_issue``
per packet of at most ``noc_max_burst`` bytes on the issuing thread; the data lands after
the NOC latency plus the bytes over the link width, and for DRAM after the bank delivers it
at its share of the board bandwidth (banks busy with other transfers delay it). Barriers
advance the thread to the completion of its outstanding transfers.
"""

from __future__ import annotations

import numpy as np

from tilefold.arch import (ETHERNET_BYTES_PER_CYCLE, ETHERNET_LATENCY_CYCLES, NOC_ADDR_LOCAL_BITS, NOC_ADDR_NODE_BITS,
                           NOC_ADDR_X_BITS, NOC_ROWS, decode_noc_addr, decode_noc_multicast_addr, noc_addr,
                           noc_multicast_addr)
from tilefold.errors import CircularBufferError, DramAccessError, NocHazardError, ProgramError, SemaphoreError
from tilefold.layout.addressing import aligned_page_size
from tilefold.sim import page_batches
from tilefold.sim.scheduler import BLOCKED, semaphore_key
from tilefold.sim.accessor import Accessor, AccessorArgs, decode_accessor_args
from tilefold.sim.cb_api import _named
from tilefold.sim.lanes import all_lanes, any_lane, even, uniform

_LOCAL_MASK = (1 << NOC_ADDR_LOCAL_BITS) - 1
_X_MASK = (1 << NOC_ADDR_X_BITS) - 1
_Y_MASK = NOC_ROWS - 1
_NODE_XY_MASK = (1 << NOC_ADDR_NODE_BITS) - 1
_MCAST_BIT = 1 << 63
_I64 = np.dtype(np.int64)
NODE_DRAM, NODE_CORE = 1, 2


def _first(v):
    return v if v.__class__ is int else int(np.asarray(v).flat[0])


def _page_write_size(size, accessor: Accessor):
    """Bytes a page write sends: ``size``, or the accessor's page size when ``size`` is 0."""
    return size if (size.__class__ is int and size) or (size.__class__ is not int) else accessor.page_size


class DataflowApi:
    """Mixed into the kernel context of reader and writer threads."""

    def _dataflow_init(self) -> None:
        self.read_done = np.zeros(self.L)
        self.write_flushed = np.zeros(self.L)
        self.write_done = np.zeros(self.L)
        self.port_free = np.zeros(self.L)
        self.dram_free = np.zeros(self.L)   # when this thread's share of DRAM bandwidth is free again
        self.noc_index = getattr(self.kernel.config, "noc_index", 0)
        self._spins = 0
        self._spin_progress = -1
        self.page_queue: list = []       # page transfers queued by *_later calls until flush_pages()
        self._issue_cost: dict[int, float] = {}   # bytes of a transfer -> cycles to issue it
        self._done1 = np.zeros(1)         # what _dram_done returns on one lane (read before the next call)
        self._dram_cost: dict[int, np.ndarray] = {}   # bytes of a DRAM transfer -> cycles per lane at its share
        self._noc_decoded = None          # (address array get_noc_addr returned last, its kind, rows, local)

    # -- CB pointers --------------------------------------------------------------------

    def _cb_pointer(self, cb, pos_attr: str, call: str):
        cb, st = self._cb(cb, call)
        if self.L == 1 and st.uniform_base is not None and st.uniform_page_size is not None:
            self.charge(self.costs.riscv_call, None, call)
            return st.uniform_base + int(getattr(st, pos_attr)[self.row0]) * st.uniform_page_size
        pos = getattr(st, pos_attr)[self.rows]
        if st.uniform_base is not None and st.uniform_page_size is not None:
            p0 = pos[0]
            if (pos == p0).all():
                value = st.uniform_base + int(p0) * st.uniform_page_size
            else:
                value = st.uniform_base + pos * st.uniform_page_size
        else:
            value = st.base[self.rows] + pos * st.page_size[self.rows]
            value = uniform(value) if (value == value[0]).all() else value
        self.charge(self.costs.riscv_call, None, call)
        return value

    def cb_pages_available_at_front(self, cb, num_pages):
        """1 on each lane whose CB holds ``num_pages`` pushed pages not yet popped, else 0."""
        cb, st = self._cb(cb, "cb_pages_available_at_front")
        n = self._pages(num_pages, "cb_pages_available_at_front page count")
        self.charge(self.costs.riscv_call, None, "cb_pages_available_at_front")
        if self.L == 1:
            return int(int(st.received[self.row0]) - int(st.acked[self.row0]) >= n)
        return (st.received[self.rows] - st.acked[self.rows] >= n).astype(np.int64)

    def get_write_ptr(self, cb):
        return self._cb_pointer(cb, "wr", "get_write_ptr")

    def get_read_ptr(self, cb):
        return self._cb_pointer(cb, "rd", "get_read_ptr")

    def get_tile_size(self, cb):
        cb, st = self._cb(cb, "get_tile_size")
        return st.uniform_page_size if st.uniform_page_size is not None else st.page_size[self.rows]

    # -- accessors and NOC addresses -----------------------------------------------------

    def tensor_accessor_args(self, cta_offset=None, prev: AccessorArgs | None = None) -> AccessorArgs:
        offset = prev.next_compile_time_args_offset if prev is not None else cta_offset
        try:
            return decode_accessor_args(self.compile_args, offset)
        except Exception as exc:
            from tilefold.errors import TilefoldError

            if isinstance(exc, TilefoldError):
                exc.location = exc.location or self.where()
                raise
            raise ProgramError(f"TensorAccessorArgs<{offset}>(): {exc}", self.where()) from None

    def tensor_accessor(self, args: AccessorArgs, bank_base_address, page_size) -> Accessor:
        page_size = page_size if page_size.__class__ is int else uniform(page_size, "accessor page size")
        nbanks = self.arch.dram_banks if args.is_dram else self.arch.num_cores
        if args.is_sharded and args.sharded_spec is not None:
            nbanks = getattr(args.sharded_spec, "num_banks", nbanks)
        memory = "DRAM" if args.is_dram else "L1"
        stride = page_size if args.is_sharded else aligned_page_size(page_size, self.arch, memory)
        place = self._buffer_of(bank_base_address, args.is_dram)
        if place is None:
            return Accessor(args, bank_base_address, page_size, nbanks, stride=stride)
        buf = place.buffer
        if page_size not in (buf.page_size, place.aligned_page_size):
            raise self.fail(ProgramError, f"TensorAccessor of buffer {buf.name!r} has page size {page_size} B but the "
                                          f"buffer's pages are {buf.page_size} B; pass the buffer's page size "
                                          "(the tile size of a CB of its data format)")
        return Accessor(args, bank_base_address, page_size, nbanks, buf.name, buf.num_pages, buf.data_format,
                        stride=stride)

    def _buffer_of(self, base, is_dram: bool):
        """The placement of the buffer at ``base`` (the same on every lane), or None."""
        if base.__class__ is not int:
            b = np.asarray(base)
            if b.size == 0 or not (b == b.flat[0]).all():
                return None
            base = int(b.flat[0])
        return self.dev.allocation.buffer_at(base, is_dram)

    def _check_format(self, accessor: Accessor, l1_addr, call: str, reading: bool) -> None:
        """Pages of a buffer moving into (or out of) a circular buffer of another data format whose
        elements differ in size or layout: the consumer would read them as garbage."""
        fmt = accessor.data_format
        if fmt is None:
            return
        cb = self.dev.cbs.cb_at(_first(l1_addr))
        if cb is None:
            return
        cb_fmt = self.dev.cb_formats.get(cb)
        if cb_fmt is None or cb_fmt is fmt:
            return
        if fmt.is_block_float or cb_fmt.is_block_float or fmt.element_size != cb_fmt.element_size:
            what = (f"reads {fmt.ttnn_name} pages of buffer {accessor.buffer!r} into c_{cb}" if reading else
                    f"writes c_{cb} into buffer {accessor.buffer!r} of {fmt.ttnn_name} pages")
            raise self.fail(ProgramError, f"{call} {what}, a {cb_fmt.ttnn_name} circular buffer; a transfer does not "
                                          "convert formats: give the circular buffer the buffer's data format")

    def _same_bytes(self, banks, local, data: np.ndarray, within_call: bool) -> bool:
        """Whether racing writes all store the same bytes, so that their order cannot change DRAM:
        every lane's bytes are what DRAM already holds (an earlier core wrote them), or, for lanes of
        this call meeting each other, the lanes writing one address write the same bytes."""
        existing = self.dev.dram.read(banks, local, data.shape[-1])
        if np.array_equal(np.broadcast_to(existing, data.shape), data):
            return True
        if not within_call:
            return False
        lanes = data.shape[0]
        # one int64 key per lane's address (a bank's local addresses stay below 2^40)
        addr = (np.broadcast_to(np.asarray(banks, dtype=np.int64), (lanes,)) << 40) \
            + np.broadcast_to(np.asarray(local, dtype=np.int64), (lanes,))
        _, leader, first = np.unique(addr, return_index=True, return_inverse=True)
        return bool(np.array_equal(data, data[leader[first.ravel()]]))   # each lane vs the first lane of its address

    def _check_race(self, banks, local, nbytes: int, call: str, line: int, data: np.ndarray) -> None:
        """A DRAM write to bytes another core wrote (or writes in the same call): a race, unless
        every racing write stores the same bytes (cores writing one result redundantly)."""
        writers = self.dev.dram_writers
        if writers.single_core:                  # no other core to race with: the touched bytes only
            writers.note(banks, local, nbytes, self.row_idx, 0)
            return
        if self.row_idx.size == 1 and banks.__class__ is not np.ndarray and local.__class__ is not np.ndarray:
            cells = False
            clash = writers.write_one(int(banks), int(local), nbytes, int(self.row_idx[0]), self, line)
        else:
            cells = writers.cells(banks, local, nbytes, self.row_idx)      # shared by clash and note
            clash = writers.clash(banks, local, nbytes, self.row_idx, cells)
            if clash is None:
                writers.note(banks, local, nbytes, self.row_idx, writers.site_id(self, line), cells)
        if clash is not None:
            row, site, *writer = clash
            if not self._same_bytes(banks, local, data, site == 0):
                other, what = self._race_parties(row, site, local, nbytes)
                raise self.fail(NocHazardError, f"race: {call} writes bytes of {what} that core {other} also writes, "
                                                "and nothing orders the two writes; give every page one writer",
                                lanes=self.row_idx == writer[0] if writer else None)
            writers.note(banks, local, nbytes, self.row_idx, writers.site_id(self, line), cells)
        self._check_read_before(banks, local, nbytes, call, data)

    def _race_parties(self, row: int, site: int, local, nbytes: int) -> tuple[str, str]:
        """The other core of a race (with its kernel and line when ``site`` names them) and what the
        bytes are (``buffer 'y'``, or ``DRAM``)."""
        other = self.dev.rows_core_name(row)
        if site:
            ctx, at = self.dev.dram_writers.sites[site]
            other += f" ({ctx.thread_name} at {ctx.location_of(at)})"
        region = self.dev.allocation.dram_regions.find(_first(local), nbytes)
        return other, f"buffer {region.name!r}" if region is not None else "DRAM"

    def _check_read_before(self, banks, local, nbytes: int, call: str, data: np.ndarray) -> None:
        """A DRAM write of bytes another core read in this run, with nothing ordering that read
        before the write: a race, unless the write stores the bytes already there."""
        writers = self.dev.dram_writers
        if writers.read_hi <= writers.read_lo:
            return
        earlier = writers.read_before(banks, local, nbytes, self.row_idx)
        if earlier is None or self._same_bytes(banks, local, data, False):
            return
        other, what = self._race_parties(*earlier, local, nbytes)
        raise self.fail(NocHazardError, f"race: {call} writes bytes of {what} that core {other} reads in the same run, "
                                        "and nothing orders that read before this write; have the reader release a "
                                        "semaphore after its read barrier and wait for it before writing")

    def _note_dram_read(self, banks, local, line: int) -> None:
        writers = self.dev.dram_writers
        if writers.reader is not None:
            writers.note_read(banks, local, self.row_idx, writers.site_id(self, line))

    def _check_stale_read(self, banks, local, nbytes: int, call: str) -> None:
        """A DRAM read of bytes another core wrote in this run, with nothing ordering that write
        before the read: a race (on the device the read may see the bytes before the write)."""
        writers = self.dev.dram_writers
        if writers.hi <= writers.lo:
            return
        stale = writers.stale_read(banks, local, nbytes, self.row_idx)
        if stale is None:
            return
        other, what = self._race_parties(*stale, local, nbytes)
        raise self.fail(NocHazardError, f"race: {call} reads bytes of {what} that core {other} writes in the same run, "
                                        "and nothing orders that write before this read; have the writer release a "
                                        "semaphore after its write barrier and wait for it before reading")

    def _check_pages(self, page_id, accessor: Accessor, call: str) -> None:
        """Page ids outside the accessor's buffer have no address: an error, as the watcher would report."""
        bad = accessor.pages_outside(page_id)
        if bad is None:
            return
        p = page_id if page_id.__class__ is int else int(np.asarray(page_id)[np.broadcast_to(bad, np.shape(page_id))].flat[0])
        raise self.fail(DramAccessError, f"{call} of page {p} of buffer {accessor.buffer!r}, which has pages "
                                         f"0-{accessor.num_pages - 1}", None if bad is True else bad)

    def _bank_coords(self, accessor: Accessor, bank):
        """NOC (x, y) of bank indices (DRAM banks, or worker cores for L1 banks)."""
        table = self.dev.dram_coords if accessor.args.is_dram else self.dev.l1_bank_coords
        if accessor.args.is_sharded and hasattr(accessor.args.sharded_spec, "bank_coords"):
            table = np.asarray(accessor.args.sharded_spec.bank_coords, dtype=np.int64)
        if bank.__class__ is int:
            x, y = table[bank]
            return int(x), int(y)
        return table[bank, 0], table[bank, 1]

    def _l1_bank_rows(self, accessor: Accessor):
        """The core row of each L1 bank of ``accessor`` (a sharded buffer's banks are its shard
        cores), kept on the accessor."""
        rows = accessor.l1_rows
        if rows is None:
            if not accessor.args.is_sharded or not hasattr(accessor.args.sharded_spec, "bank_coords"):
                rows = self.dev.l1_bank_rows
            else:
                coords = np.asarray(accessor.args.sharded_spec.bank_coords, dtype=np.int64)
                rows = self.dev.node_row[coords[:, 1], coords[:, 0]]
            accessor.l1_rows = rows
        return rows

    def _bank_nodes(self, accessor: Accessor):
        """(node bits of each bank's NOC address, ``(y << 9 | x) << 33``; the node kind all banks
        share, or 0; each bank's row in the node tables), kept on the accessor."""
        nodes = accessor.bank_nodes
        if nodes is None:
            table = self.dev.dram_coords if accessor.args.is_dram else self.dev.l1_bank_coords
            bits = noc_addr(table[:, 0], table[:, 1], 0)
            index = (bits >> NOC_ADDR_LOCAL_BITS) & _NODE_XY_MASK
            kinds = self.dev.node_kind_flat[index]
            kind = int(kinds[0]) if kinds.size and (kinds == kinds[0]).all() else 0
            nodes = accessor.bank_nodes = (bits, kind, self.dev.node_row_flat[index])
        return nodes

    @staticmethod
    def _locate_lanes(page_id, accessor: Accessor, offset):
        """(bank, local address) of per-lane pages of an interleaved buffer when all lie inside it
        (what ``accessor.locate`` gives, with one divmod and one unsigned comparison as the
        check); None otherwise: the caller checks and locates them the general way."""
        if page_id.__class__ is np.ndarray and page_id.dtype is _I64 and not accessor.args.is_sharded:
            n = accessor.num_pages
            if n is None or not any_lane(page_id.view(np.uint64) >= n):    # negative ids are huge unsigned
                q, bank = np.divmod(page_id, accessor.num_banks)
                return bank, accessor.base + q * accessor.stride + offset
        return None

    def get_noc_addr(self, page_id, accessor: Accessor, offset=0):
        located = self._locate_lanes(page_id, accessor, offset)
        if located is not None:
            bank, local = located
            bits, kind, rows = self._bank_nodes(accessor)
            addr = bits[bank] | local
            if kind and local.dtype is _I64 and not any_lane(local.view(np.uint64) > _LOCAL_MASK):
                self._noc_decoded = (addr, kind, rows[bank], local)   # what _decode(addr) gives
            self.charge(self.costs.riscv_call, None, "get_noc_addr")
            return addr
        self._check_pages(page_id, accessor, "get_noc_addr")
        bank, local = accessor.locate(page_id, offset)
        x, y = self._bank_coords(accessor, bank)
        self.charge(self.costs.riscv_call, None, "get_noc_addr")
        return noc_addr(x, y, local)

    def get_noc_addr_xy(self, noc_x, noc_y, addr):
        self.charge(self.costs.riscv_call, None, "get_noc_addr")
        return noc_addr(noc_x, noc_y, addr)

    def get_noc_multicast_addr(self, noc_x_start, noc_y_start, noc_x_end, noc_y_end, addr):
        self.charge(self.costs.riscv_call, None, "get_noc_multicast_addr")
        if all(v.__class__ is int for v in (noc_x_start, noc_y_start, noc_x_end, noc_y_end, addr)):
            return noc_multicast_addr(noc_x_start, noc_y_start, noc_x_end, noc_y_end, addr)
        node = (((noc_y_end << NOC_ADDR_X_BITS | noc_x_end) << NOC_ADDR_NODE_BITS)
                | (noc_y_start << NOC_ADDR_X_BITS) | noc_x_start)
        # per-lane addresses: bit 63 needs unsigned 64-bit lanes
        node = np.asarray(node).astype(np.uint64)
        return (node << np.uint64(NOC_ADDR_LOCAL_BITS)) | np.asarray(addr).astype(np.uint64) | np.uint64(_MCAST_BIT)

    def my_x(self):
        return self.dev.lane_noc_x(self)

    def my_y(self):
        return self.dev.lane_noc_y(self)

    def _decode(self, noc_addr, call: str):
        """(kind, rows, local) of a unicast NOC address; kind is NODE_DRAM or NODE_CORE."""
        if noc_addr.__class__ is int:
            if noc_addr & _MCAST_BIT:
                raise self.fail(NocHazardError, f"{call} was given a multicast NOC address; use "
                                                "noc_async_write_multicast")
            x, y, local = decode_noc_addr(noc_addr)
            kind, row = self.dev.node_kind[y & _Y_MASK, x], self.dev.node_row[y & _Y_MASK, x]
            if kind == 0:
                raise self.fail(DramAccessError, f"{call}: NOC address 0x{noc_addr:x} names node ({x}, {y}), which "
                                                 "is neither a DRAM bank nor a worker core")
            return int(kind), int(row), local
        known = self._noc_decoded
        if known is not None and noc_addr is known[0]:     # straight from get_noc_addr (never changed in place)
            return known[1], known[2], known[3]
        a = np.asarray(noc_addr, dtype=np.int64)
        node = (a >> NOC_ADDR_LOCAL_BITS) & _NODE_XY_MASK      # y << 9 | x, the index into the flat tables
        kinds = self.dev.node_kind_flat[node]
        kind = kinds.item(0)
        if kind and a.ndim == 1 and even(kinds):         # every lane names a node of one kind
            return kind, self.dev.node_row_flat[node], a & _LOCAL_MASK
        node = a >> NOC_ADDR_LOCAL_BITS
        x, y = node & _X_MASK, (node >> NOC_ADDR_X_BITS) & _Y_MASK
        kinds = self.dev.node_kind[y, x]
        if any_lane(kinds == 0) or any_lane(kinds != kinds[0]):
            bad = kinds == 0
            raise self.fail(DramAccessError, f"{call}: NOC addresses of the lanes name nodes that are not all DRAM "
                                             "banks or all worker cores", bad if bad.any() else None)
        rows = self.dev.node_row[y, x]
        return int(kinds[0]), rows, a & _LOCAL_MASK

    # -- bounds and CB-window checks ------------------------------------------------------

    def _check_dram(self, local, nbytes: int, call: str) -> None:
        misaligned = local & 15 if local.__class__ is int else int(np.bitwise_or.reduce(np.asarray(local) & 15, None))
        if misaligned:
            a = local if local.__class__ is int else int(np.asarray(local).flat[np.argmax(np.asarray(local) & 15)])
            raise self.fail(DramAccessError, f"{call} accesses DRAM at 0x{a:x}, {a & 15} bytes past a 16-byte "
                                             "boundary; the NOC moves 16-byte aligned ranges, so on the device the "
                                             "bytes would arrive shifted — start the transfer (a row slice's first "
                                             "element) at a multiple of 16 bytes")
        regions = self.dev.allocation.dram_regions
        if not regions.contains_all(local, nbytes):
            bad = regions.first_outside(local, nbytes)
            near = regions.nearest(bad)
            hint = f"; the nearest buffer {near.name!r} spans 0x{near.start:x}-0x{near.end:x}" if near else ""
            raise self.fail(DramAccessError, f"{call} accesses DRAM bytes 0x{bad:x}-0x{bad + nbytes:x}, outside "
                                             f"every buffer{hint}")

    def _check_remote_l1(self, rows, local, nbytes: int, call: str) -> None:
        lo, hi = self.dev.allocation.semaphore_base, self.dev.allocation.l1_top
        if any_lane(np.asarray(local) < lo) or any_lane(np.asarray(local) + nbytes > hi):
            bad = _first(local)
            raise self.fail(DramAccessError, f"{call} accesses L1 bytes 0x{bad:x}-0x{bad + nbytes:x} of another core, "
                                             "outside its circular buffers, L1 buffers and semaphores")

    def _check_remote_cb(self, rows: np.ndarray, local: int, nbytes: int, call: str) -> None:
        """A write landing in circular-buffer pages of other cores: each destination must hold
        those pages reserved and not yet pushed, or its consumer may already be reading them
        (a receiver that pushes before the sender's data has arrived, e.g. without waiting on
        the semaphore the sender sets after the data)."""
        cb = self.dev.cbs.cb_at(local)
        if cb is None or not rows.size:
            return
        st = self.dev.cbs.states[cb]
        if not st.configured[rows].all():
            return
        base, ps, cap = st.base[rows], st.page_size[rows], st.capacity[rows]
        first = ((local - base) // ps - st.wr[rows]) % cap
        last = ((local + nbytes - 1 - base) // ps - st.wr[rows]) % cap
        bad = (first >= st.reserved[rows]) | (last >= st.reserved[rows])
        if bad.any():
            row = int(rows[np.argmax(bad)])
            core = self.dev.rows_core_name(row)
            if "multicast" in call:
                self._check_multicast_address(st, row, core, call, local)
            raise self.fail(NocHazardError, f"{call} writes pages of c_{cb} on core {core} that core does not hold "
                                            "reserved (it pushed them already or never reserved them): the receiver "
                                            "must wait for the data, e.g. noc_semaphore_wait on the semaphore the "
                                            "sender sets after it, before cb_push_back")

    def _check_multicast_address(self, st, row: int, core: str, call: str, local) -> None:
        """A multicast writes one L1 address on every core it reaches: name the receiver on
        ``core`` whose block lies elsewhere — in another buffer, or at another position of ``st``."""
        here = f"c_{st.index}{_named(st)}"
        held = [other for other in self.dev.cbs.states.values()
                if other is not st and other.configured[row] and other.reserved[row] > 0]
        if held and st.received[row] == 0 and st.reserved[row] == 0:     # it took its block in another buffer
            where = (f"holds its reserved block in c_{held[0].index}{_named(held[0])}, not in the pages of {here} "
                     "that address lies in")
            remedy = "receive into the same dataflow buffer on every receiver"
        elif st.reserved[row] > 0:                                        # at another position of the buffer
            at = int(st.base[row] + st.wr[row] * st.page_size[row])
            where = (f"reserved its block of {here} at another position of the buffer (0x{at:x}, not "
                     f"0x{int(local):x})")
            remedy = "keep them in step (each having taken as many blocks of the buffer before)"
        else:
            return
        raise self.fail(NocHazardError, f"{call} writes one L1 address on every core it reaches, but core {core} "
                                        f"{where}: the receivers of a multicast pipe must take their blocks at one "
                                        f"address; {remedy}")

    def _local_write_fits(self, addr, nbytes: int) -> bool:
        """Whether NOC reads landing at ``addr`` (per-lane addresses of any shape, in the CB that
        holds the first one, if any) end in that CB's reserved pages, or lie in one L1 buffer."""
        cbs = self.dev.cbs
        cb = cbs.cb_at(addr if addr.__class__ is int else _first(addr))
        # Python ints: one address, or a few on one lane
        few = addr.__class__ is int or (self.L == 1 and addr.size <= 64)
        if cb is not None and few:
            st = cbs.states[cb]
            if st.uniform_capacity is not None and st.uniform_base is not None and st.uniform_page_size is not None:
                base, ps, cap, row = st.uniform_base, st.uniform_page_size, st.uniform_capacity, self.row0
                if self.L == 1:
                    wr, reserved = int(st.wr[row]), int(st.reserved[row])
                else:       # many lanes: one check on Python ints when their pointers and counts agree
                    wr, reserved = st.wr[self.rows], st.reserved[self.rows]
                    wr, reserved = (wr.item(0), reserved.item(0)) if even(wr) and even(reserved) else (None, None)
                if wr is not None:
                    end = base + cap * ps
                    for a in ((addr,) if addr.__class__ is int else addr.ravel().tolist()):
                        if a + nbytes > end or ((a + nbytes - 1 - base) // ps - wr) % cap >= reserved:
                            return False
                    return True
        a = np.asarray(addr)
        if cb is None:
            region = self.dev.allocation.l1_regions[self.cores[0]].find(int(a.min()), nbytes)
            return region is not None and int(a.max()) + nbytes <= region.end
        st = cbs.states[cb]
        rows = self.rows
        base = st.uniform_base if st.uniform_base is not None else st.base[rows]
        ps = st.uniform_page_size if st.uniform_page_size is not None else st.page_size[rows]
        cap = self._capacity(st)
        if any_lane(a + nbytes > base + cap * ps):
            return False
        return not any_lane(((a + nbytes - 1 - base) // ps - st.wr[rows]) % cap >= st.reserved[rows])

    def _check_local_write(self, addr, nbytes: int, call: str) -> None:
        """A NOC read landing in this core's L1: inside the producer's reserved CB pages or an L1 buffer."""
        if self._local_write_fits(addr, nbytes):
            return
        first = _first(addr)
        cb = self.dev.cbs.cb_at(first)
        if cb is None:
            region = self.dev.allocation.l1_regions[self.cores[0]].find(first, nbytes)
            if region is None:
                raise self.fail(DramAccessError, f"{call} writes L1 bytes 0x{first:x}-0x{first + nbytes:x}, which "
                                                 "hold no circular buffer, L1 buffer or semaphore")
            return
        st = self.dev.cbs.states[cb]
        rows = self.rows
        base = st.uniform_base if st.uniform_base is not None else st.base[rows]
        ps = st.uniform_page_size if st.uniform_page_size is not None else st.page_size[rows]
        cap = self._capacity(st)
        end = base + cap * ps
        if any_lane(np.asarray(addr) + nbytes > end):
            raise self.fail(CircularBufferError, f"{call} writes {nbytes} B at 0x{first:x}, past the end of "
                                                 f"circular buffer c_{cb}")
        last_rel = ((np.asarray(addr) + nbytes - 1 - base) // ps - st.wr[rows]) % cap
        if any_lane(last_rel >= st.reserved[rows]):
            raise self.fail(CircularBufferError,
                            f"{call} writes page {int(np.max(last_rel))} after the write pointer of c_{cb} but only "
                            f"{int(np.min(st.reserved[rows]))} pages are reserved; call cb_reserve_back first",
                            last_rel >= st.reserved[rows])

    def _pending_read_into(self, lo, hi) -> int | None:
        """The line of a NOC read not yet barriered that fills bytes of [lo, hi) (per-lane
        bounds of any shape) on some lane, or None."""
        for r_lo, r_hi, line in self.pending_reads:
            if any_lane((r_lo < hi) & (lo < r_hi)):
                return line
        return None

    def _check_local_source(self, addr, nbytes: int, call: str) -> None:
        """L1 a NOC write reads from: must not still be filling from a NOC read."""
        line = self._pending_read_into(addr, addr + nbytes)
        if line is not None:
            raise self.fail(NocHazardError, f"{call} sends L1 data that noc_async_read (at {self.location_of(line)}) "
                                            "may still be filling; call noc_async_read_barrier() first")

    # -- timing -------------------------------------------------------------------------

    def _issue_cycles(self, nbytes: int) -> float:
        """Cycles the issuing thread spends on one transfer: ``noc_issue`` per packet."""
        return self.costs.noc_issue * max(-(-nbytes // self.arch.noc_max_burst), 1)

    def _issue(self, nbytes: int, call: str) -> None:
        cycles = self._issue_cost.get(nbytes)
        if cycles is None:
            cycles = self._issue_cost[nbytes] = self._issue_cycles(nbytes)
        self.charge(cycles, None, call)

    def _dram_done(self, banks, nbytes: int) -> np.ndarray:
        """Completion times of one transfer per lane to / from DRAM.

        Each core's transfers are served at its share of the chip's DRAM bandwidth (its row of
        the device's ``dram_share``, :mod:`tilefold.sim.dram_shares`), one after another, from
        when its NOC port pushed the request; each bank's bytes are also counted, so a bank that
        serves more than its share, or the chip's total, bounds the run's estimate (see the
        device's perf report). A transfer's time depends only on its own core's earlier
        transfers: never on how cores are grouped into threads or in which order the simulator
        runs them."""
        dev = self.dev
        dev.bank_traffic.append((banks, nbytes if banks.__class__ is np.ndarray else nbytes * self.L))
        port = self._port(nbytes)
        if self.L == 1:                     # the same arithmetic on Python floats
            p, d = port.item(), self.dram_free.item()
            d = (d if d > p else p) + nbytes / dev.dram_share[self.row0]
            self.dram_free[0] = d
            done = self._done1                # (a fresh array would cost more than the arithmetic)
            done[0] = (p if p > d else d) + (self.costs.noc_latency + self.costs.dram_latency)
            return done
        cost = self._dram_cost.get(nbytes)      # the run's shares are fixed: one division per size
        if cost is None:
            cost = self._dram_cost[nbytes] = nbytes / dev.dram_share[self.row_idx]
        free = self.dram_free          # this thread's own array (page batches store a copy)
        np.maximum(free, port, out=free)
        free += cost
        done = np.maximum(port, free)
        done += self.costs.noc_latency + self.costs.dram_latency
        return done

    def _port(self, nbytes: int) -> np.ndarray:
        """When each lane's NOC port has pushed ``nbytes`` (transfers from one core queue on its port)."""
        if self.L == 1:                     # the same arithmetic on Python floats
            c, p = self.clock.item(), self.port_free.item()
            self.port_free[0] = (c if c > p else p) + nbytes / self.arch.noc_link_bytes_per_cycle
            return self.port_free
        start = np.maximum(self.clock, self.port_free)
        self.port_free = start + nbytes / self.arch.noc_link_bytes_per_cycle
        return self.port_free

    def _core_done(self, nbytes: int, rows=None) -> np.ndarray:
        done = self._port(nbytes) + self.costs.noc_latency
        return done if rows is None else done + self._ethernet(rows, nbytes)

    def _ethernet(self, rows, nbytes: int):
        """Extra cycles per lane for a transfer of ``nbytes`` to core rows ``rows`` (one per lane, or a
        list of rows per lane for a multicast) that lie on another chip of a mesh run as one device:
        an ethernet hop's latency and the bytes at one link's rate. 0 on one chip."""
        chips = self.dev.row_chip
        if chips is None:
            return 0.0
        if isinstance(rows, list):              # per lane, the rows of a multicast
            return np.array([self._hop(me, r, nbytes) for me, r in zip(np.atleast_1d(self.row_idx), rows)])
        away = chips[np.broadcast_to(np.asarray(rows, dtype=np.int64), (self.L,))] != chips[self.row_idx]
        return np.where(away, ETHERNET_LATENCY_CYCLES + nbytes / ETHERNET_BYTES_PER_CYCLE, 0.0)

    def _hop(self, me: int, rows: np.ndarray, nbytes: int) -> float:
        """The ethernet cycles of one lane's multicast from core row ``me`` to core rows ``rows``:
        one hop when any of them is on another chip (see :meth:`_ethernet`), else 0."""
        chips = self.dev.row_chip
        if chips is None or not len(rows) or not (chips[np.asarray(rows, dtype=np.int64)] != chips[me]).any():
            return 0.0
        return ETHERNET_LATENCY_CYCLES + nbytes / ETHERNET_BYTES_PER_CYCLE

    def _mcast_done(self, nbytes: int) -> np.ndarray:
        """A multicast occupies the port at the measured one-to-all rate, below the link's width
        (``OpCosts.noc_mcast_bytes_per_cycle``)."""
        rate = min(self.costs.noc_mcast_bytes_per_cycle, self.arch.noc_link_bytes_per_cycle)
        start = np.maximum(self.clock, self.port_free)
        self.port_free = start + nbytes / rate
        return self.port_free + self.costs.noc_latency

    @staticmethod
    def _remember(pending: list, lo, nbytes: int, line: int) -> bool:
        """Add [lo, lo + nbytes) to a pending list, extending the last range when it ends at
        ``lo`` on every lane; True if a new range was added."""
        if pending and lo.__class__ is int:
            p_lo, p_hi, p_line = pending[-1]
            if p_hi.__class__ is int and p_hi == lo:
                pending[-1] = (p_lo, lo + nbytes, p_line)
                return False
        pending.append((lo, lo + nbytes, line))
        return True

    def _note_read(self, dst, nbytes: int, done: np.ndarray, line: int) -> None:
        if self.L == 1:
            d = done.item()
            if d > self.read_done.item():
                self.read_done[0] = d
        else:
            np.maximum(self.read_done, done, out=self.read_done)
        self._remember(self.pending_reads, dst, nbytes, line)

    def _note_write(self, src, nbytes: int, line: int, flushed: np.ndarray, done: np.ndarray) -> None:
        np.maximum(self.write_flushed, flushed, out=self.write_flushed)
        np.maximum(self.write_done, done, out=self.write_done)
        if self._remember(self.pending_writes, src, nbytes, line):
            self.dev.progress += 1

    # -- reads ----------------------------------------------------------------------------

    def _read(self, kind: int, rows, local, dst, nbytes: int, call: str, line: int) -> None:
        nbytes = nbytes if nbytes.__class__ is int else uniform(nbytes, "transfer size")
        if nbytes <= 0:
            return
        if (self.L == 1 and kind == NODE_DRAM and rows.__class__ is int and local.__class__ is int
                and dst.__class__ is int):
            self._read_dram_one(rows, local, dst, nbytes, call, line)
            return
        self._check_local_write(dst, nbytes, call)
        counters = self.dev.counters
        if kind == NODE_DRAM:
            self._check_dram(local, nbytes, call)
            self._check_stale_read(rows, local, nbytes, call)
            self._note_dram_read(rows, local, line)
            data = self.dev.dram.read(rows, local, nbytes)
            counters.dram_read_bytes += nbytes * self.L
            if self.L == 1:
                self.dev.core_read_bytes[self.row0] += nbytes
            else:
                self.dev.core_read_bytes[self.rows] += nbytes     # a slice when the rows are consecutive
            done = self._dram_done(rows, nbytes)
        else:
            self._check_remote_l1(rows, local, nbytes, call)
            data = self.dev.l1.read(rows, local, nbytes)
            done = self._core_done(nbytes)
        self.dev.l1.write(self.rows, dst, data)
        counters.noc_bytes += nbytes * self.L
        self._issue(nbytes, call)
        self._note_read(dst, nbytes, done, line)

    def _read_dram_one(self, bank: int, local: int, dst: int, nbytes: int, call: str, line: int) -> None:
        """:meth:`_read` of one lane from one DRAM bank into its L1: the same steps, in the same
        order, on Python numbers (the one-lane paths of :meth:`_dram_done` and :meth:`_port`,
        :meth:`_note_read` inlined)."""
        self._check_local_write(dst, nbytes, call)
        self._check_dram(local, nbytes, call)
        self._check_stale_read(bank, local, nbytes, call)
        self._note_dram_read(bank, local, line)
        dev = self.dev
        counters = dev.counters
        data = dev.dram.read(bank, local, nbytes)
        counters.dram_read_bytes += nbytes
        dev.core_read_bytes[self.row0] += nbytes
        done = self._dram_done(bank, nbytes).item()
        dev.l1.write(self.rows, dst, data)
        counters.noc_bytes += nbytes
        self._issue(nbytes, call)
        if done > self.read_done.item():
            self.read_done[0] = done
        self._remember(self.pending_reads, dst, nbytes, line)

    def noc_async_read(self, src_noc_addr, dst_local_l1_addr, size) -> None:
        kind, rows, local = self._decode(src_noc_addr, "noc_async_read")
        self._read(kind, rows, local, dst_local_l1_addr, size, "noc_async_read", self.line_of())

    def noc_async_read_page(self, page_id, accessor: Accessor, dst_local_l1_addr, offset=0) -> None:
        located = self._locate_lanes(page_id, accessor, offset)
        if located is None:
            self._check_pages(page_id, accessor, "noc_async_read_page")
        self._check_format(accessor, dst_local_l1_addr, "noc_async_read_page", True)
        bank, local = located if located is not None else accessor.locate(page_id, offset)
        kind = NODE_DRAM if accessor.args.is_dram else NODE_CORE
        rows = bank if kind == NODE_DRAM else self._l1_bank_rows(accessor)[bank]
        self._read(kind, rows, local, dst_local_l1_addr, accessor.page_size, "noc_async_read_page", self.line_of())

    # -- page transfers of a loop nest, executed together (tilefold.sim.page_batches) -------

    def noc_async_read_page_later(self, page_id, accessor: Accessor, dst_local_l1_addr, offset=0) -> None:
        self.page_queue.append((page_batches.READ, page_id, accessor, dst_local_l1_addr, accessor.page_size,
                                offset, self.line_of()))

    def noc_async_write_page_later(self, page_id, accessor: Accessor, src_local_l1_addr, size=0, offset=0) -> None:
        self.page_queue.append((page_batches.WRITE, page_id, accessor, src_local_l1_addr,
                                _page_write_size(size, accessor), offset,
                                self.line_of()))

    def flush_pages(self) -> None:
        queue, self.page_queue = self.page_queue, []
        page_batches.flush(self, queue)

    # -- writes ---------------------------------------------------------------------------

    def _write(self, kind: int, rows, local, src, nbytes: int, call: str, line: int) -> None:
        nbytes = nbytes if nbytes.__class__ is int else uniform(nbytes, "transfer size")
        if nbytes <= 0:
            return
        self._check_local_source(src, nbytes, call)
        data = self.dev.l1.read(self.rows, src, nbytes)
        counters = self.dev.counters
        if kind == NODE_DRAM:
            self._check_dram(local, nbytes, call)
            self._check_race(rows, local, nbytes, call, line, data)
            if rows.__class__ is not np.ndarray and local.__class__ is not np.ndarray and len(data) > 1:
                data = data[-1:]                # lanes writing the same bytes to one address
            self.dev.dram.write(rows, local, data)
            counters.dram_write_bytes += nbytes * self.L
            done = self._dram_done(rows, nbytes)
        else:
            self._check_remote_l1(rows, local, nbytes, call)
            if rows.__class__ is not np.ndarray and local.__class__ is not np.ndarray and len(data) > 1:
                data = self._one_l1_writer(rows, local, data, call)
            self.dev.l1.write(rows, local, data)
            done = self._core_done(nbytes, rows)
            self.scheduler.notify_semaphores()
        flushed = self.port_free.copy()
        counters.noc_bytes += nbytes * self.L
        self._issue(nbytes, call)
        self._note_write(src, nbytes, line, flushed, done)
        self.dev.note_output_write(kind, local, nbytes * self.L)

    def _one_l1_writer(self, row, local, data: np.ndarray, call: str) -> np.ndarray:
        """Lanes writing the same bytes of one core's L1 in one call (an L1 tensor's page every core
        writes): fine when they all store the same bytes, else a race."""
        differ = (data != data[0]).any(axis=1)
        if differ.any():
            other = self.dev.rows_core_name(int(self.row_idx[int(np.argmax(differ))]))
            raise self.fail(NocHazardError, f"race: {call} writes bytes at L1 address {int(local):#x} of core "
                                            f"{self.dev.rows_core_name(int(row))} that core {other} also writes, "
                                            "with other bytes, and nothing orders the writes; give every page one "
                                            "writer", differ)
        return data[:1]

    def noc_async_write(self, src_local_l1_addr, dst_noc_addr, size) -> None:
        kind, rows, local = self._decode(dst_noc_addr, "noc_async_write")
        self._write(kind, rows, local, src_local_l1_addr, size, "noc_async_write", self.line_of())

    def noc_async_write_page(self, page_id, accessor: Accessor, src_local_l1_addr, size=0, offset=0) -> None:
        located = self._locate_lanes(page_id, accessor, offset)
        if located is None:
            self._check_pages(page_id, accessor, "noc_async_write_page")
        self._check_format(accessor, src_local_l1_addr, "noc_async_write_page", False)
        bank, local = located if located is not None else accessor.locate(page_id, offset)
        kind = NODE_DRAM if accessor.args.is_dram else NODE_CORE
        rows = bank if kind == NODE_DRAM else self._l1_bank_rows(accessor)[bank]
        self._write(kind, rows, local, src_local_l1_addr, _page_write_size(size, accessor), "noc_async_write_page",
                    self.line_of())

    def _multicast(self, src, dst_mcast, nbytes, num_dests, loopback: bool, call: str, words: bool = False) -> None:
        nbytes = nbytes if nbytes.__class__ is int else uniform(nbytes, "transfer size")
        line = self.line_of(3)
        if not words:
            self._check_local_source(src, nbytes, call)
        reached = []
        for lane in range(self.L):
            a = _first(dst_mcast) if dst_mcast.__class__ is int else int(np.asarray(dst_mcast)[lane])
            if not a & _MCAST_BIT:
                raise self.fail(NocHazardError, f"{call} needs a multicast address from get_noc_multicast_addr")
            x0, y0, x1, y1, local = decode_noc_multicast_addr(a)
            me = self.dev.core_row(self.cores[lane])
            self._check_rectangle(x0, y0, x1, y1, call)
            targets = [self.dev.node_row[y, x] for y in range(min(y0, y1), max(y0, y1) + 1)
                       for x in range(min(x0, x1), max(x0, x1) + 1)]
            if not loopback:
                targets = [t for t in targets if t != me]
            want = num_dests if num_dests.__class__ is int else int(np.asarray(num_dests)[lane])
            if want != len(targets):
                raise self.fail(NocHazardError,
                                f"{call}: num_dests is {want} but the rectangle ({x0},{y0})-({x1},{y1}) holds "
                                f"{len(targets)} destination cores{'' if loopback else ' besides the sender'}")
            s = _first(src) if src.__class__ is int else int(np.asarray(src)[lane])
            data = self.dev.l1.read(np.array([me]), s, nbytes)
            rows = np.array(targets, dtype=np.int64)
            reached.append(rows)
            self._check_remote_l1(rows, local, nbytes, call)
            if not words:
                self._check_remote_cb(rows, local, nbytes, call)
            before = self.dev.l1.read_u32(rows, local).astype(np.int64) if words and rows.size else None
            if rows.size:
                self.dev.l1.write(rows, local, np.repeat(data, rows.size, axis=0))
            self.dev.counters.noc_bytes += nbytes * max(len(targets), 1)
            if words:
                hop = self._hop(me, rows, nbytes)
                self.dev.sem_time_note(rows, local, float(self.clock[lane] + self.costs.noc_latency + hop), before)
                self.dev.order.release(me, rows, local)
        done = self._mcast_done(nbytes) + self._ethernet(reached, nbytes)
        self._issue(nbytes, call)
        if not words:
            self._note_write(src, nbytes, line, self.clock + nbytes / self.arch.noc_link_bytes_per_cycle, done)
        self.dev.progress += 1
        self.scheduler.notify_semaphores()

    def _check_rectangle(self, x0: int, y0: int, x1: int, y1: int, call: str) -> None:
        """What the watcher checks of a multicast rectangle: its start is the corner nearest the
        NOC's origin (top-left on NOC 0, bottom-right on NOC 1) and every node in it is a worker
        core (of this program) — not DRAM, Ethernet, a harvested row or a node off the chip."""
        noc1 = self.noc_index == 1
        if (x0 < x1 or y0 < y1) if noc1 else (x0 > x1 or y0 > y1):
            order = "bottom-right, end top-left" if noc1 else "top-left, end bottom-right"
            raise self.fail(NocHazardError, f"{call}: the multicast rectangle starts at ({x0},{y0}) and ends at "
                                            f"({x1},{y1}); on NOC {int(noc1)} the start is the {order}")
        lx, hx, ly, hy = min(x0, x1), max(x0, x1), min(y0, y1), max(y0, y1)
        kinds = self.dev.node_kind[ly:hy + 1, lx:hx + 1]
        if hx >= self.dev.node_kind.shape[1] or hy >= self.dev.node_kind.shape[0] or (kinds != NODE_CORE).any():
            bad = np.argwhere(kinds != NODE_CORE)
            y, x = (int(bad[0][0]) + ly, int(bad[0][1]) + lx) if bad.size else (hy, hx)
            raise self.fail(DramAccessError, f"{call}: the multicast rectangle ({x0},{y0})-({x1},{y1}) covers node "
                                             f"({x},{y}), which is not a worker core of this program (DRAM, Ethernet, "
                                             "an idle or harvested core, or off the chip)")

    def noc_async_write_multicast(self, src_local_l1_addr, dst_noc_addr_multicast, size, num_dests,
                                  linked=False) -> None:
        self._multicast(src_local_l1_addr, dst_noc_addr_multicast, size, num_dests, False,
                        "noc_async_write_multicast")

    def noc_async_write_multicast_loopback_src(self, src_local_l1_addr, dst_noc_addr_multicast, size, num_dests,
                                               linked=False) -> None:
        self._multicast(src_local_l1_addr, dst_noc_addr_multicast, size, num_dests, True,
                        "noc_async_write_multicast_loopback_src")

    # -- barriers -------------------------------------------------------------------------

    def noc_async_read_barrier(self) -> None:
        self.sync_to(self.read_done)
        self.pending_reads.clear()
        self.charge(self.costs.barrier, None, "noc_async_read_barrier")

    def noc_async_write_barrier(self) -> None:
        self.sync_to(self.write_done)
        self.pending_writes.clear()
        self.charge(self.costs.barrier, None, "noc_async_write_barrier")

    def noc_async_writes_flushed(self) -> None:
        self.sync_to(self.write_flushed)
        self.pending_writes.clear()
        self.charge(self.costs.barrier, None, "noc_async_writes_flushed")

    def noc_async_atomic_barrier(self) -> None:
        self.sync_to(self.write_done)
        self.charge(self.costs.barrier, None, "noc_async_atomic_barrier")

    # -- semaphores -----------------------------------------------------------------------

    def get_semaphore(self, semaphore_id):
        sid = semaphore_id if semaphore_id.__class__ is int else uniform(semaphore_id, "semaphore id")
        sems = self.dev.program.semaphores
        if not 0 <= sid < len(sems):
            raise self.fail(SemaphoreError, f"get_semaphore({sid}) but the program created {len(sems)} semaphores; "
                                            "create it with CreateSemaphore")
        missing = [c for c in self.cores if c not in sems[sid].cores]
        if missing:
            raise self.fail(SemaphoreError, f"semaphore {sid} does not exist on core {missing[0]}; create it on the "
                                            "cores of this kernel")
        self.charge(self.costs.riscv_call, None, "get_semaphore")
        return self.dev.allocation.semaphore_address(sid)

    def _sem_check(self, addr, call: str) -> None:
        a = _first(addr)
        base = self.dev.allocation.semaphore_base
        if not (base <= a < base + 16 * max(len(self.dev.program.semaphores), 1)) or (a - base) % 16:
            raise self.fail(SemaphoreError, f"{call} is given address 0x{a:x}, which is not a semaphore; use "
                                            "get_semaphore(id)")

    def noc_semaphore_set(self, sem_addr, value) -> None:
        self._sem_check(sem_addr, "noc_semaphore_set")
        before = self.dev.l1.read_u32(self.rows, sem_addr).astype(np.int64)
        self.dev.l1.write_u32(self.rows, sem_addr, value)
        self.dev.sem_time_note(self.row_idx, sem_addr, self.clock, before)
        self.charge(self.costs.riscv_call, None, "noc_semaphore_set")
        self.dev.progress += 1
        self.scheduler.notify_semaphores(self.row_idx, sem_addr)

    def _sem_wait(self, sem_addr, value, call: str, at_least: bool) -> None:
        self._sem_check(sem_addr, call)
        l1 = self.dev.l1
        rows = self.rows

        def ready():
            cur = l1.read_u32(rows, sem_addr).astype(np.int64)
            return bool(all_lanes(cur >= value) if at_least else all_lanes(cur == value))

        self.block(semaphore_key(self.row_idx, sem_addr), self._sem_wait_description(sem_addr, value, call, at_least),
                   ready)
        self.sync_to(self.dev.sem_time(self.row_idx, sem_addr))
        self.dev.order.acquire(self.row_idx, _first(sem_addr))
        self.charge(self.costs.riscv_call, None, call)

    def _sem_wait_description(self, sem_addr, value, call: str, at_least: bool) -> str:
        """What a blocked semaphore wait waits for, with what the program says the semaphore is."""
        addr = _first(sem_addr)
        semaphores = self.dev.program.semaphores
        index = (addr - self.dev.allocation.semaphore_base) // 16
        purpose = semaphores[index].purpose if 0 <= index < len(semaphores) else ""
        until = f"to {'reach' if at_least else 'equal'} {value}"
        if purpose.startswith("the ttl.Semaphore"):
            what = f"{purpose} {until}"
        else:
            what = f"{purpose} (the semaphore {until})" if purpose else f"the semaphore {until}"
        return f"{call}(semaphore at 0x{addr:x}, {value}): waiting for {what}"

    def noc_semaphore_wait(self, sem_addr, value) -> None:
        self._sem_wait(sem_addr, value, "noc_semaphore_wait", False)

    def noc_semaphore_wait_min(self, sem_addr, value) -> None:
        self._sem_wait(sem_addr, value, "noc_semaphore_wait_min", True)

    def noc_semaphore_inc(self, addr, incr) -> None:
        self._remote_semaphore(addr, lambda: np.asarray(incr, dtype=np.int64), self.dev.l1.add_u32,
                               "noc_semaphore_inc")

    def noc_inline_dw_write(self, addr, val) -> None:
        self._remote_semaphore(addr, lambda: np.asarray(val, dtype=np.int64), self.dev.l1.write_u32,
                               "noc_inline_dw_write")

    def noc_semaphore_set_remote(self, src_local_l1_addr, dst_noc_addr) -> None:
        self._remote_semaphore(dst_noc_addr, lambda: np.asarray(self.dev.l1.read_u32(self.rows, src_local_l1_addr)),
                               self.dev.l1.write_u32, "noc_semaphore_set_remote")

    def _remote_semaphore(self, addr, values, store, call: str) -> None:
        """A semaphore update of (possibly) another core: ``store(rows, local, values)`` of each
        lane's ``values()`` at the semaphore ``addr`` names, then the wake-ups and ordering a
        semaphore release makes (``noc_semaphore_inc`` adds, ``noc_semaphore_set_remote`` writes)."""
        kind, rows, local = self._decode(addr, call)
        if kind != NODE_CORE:
            raise self.fail(SemaphoreError, f"{call} must target a semaphore in a worker core's L1")
        self._sem_check(local, call)
        rows = np.broadcast_to(np.asarray(rows, dtype=np.int64), (self.L,))
        values = np.broadcast_to(values(), (self.L,))
        before = None
        if np.ndim(local) == 0:
            before = self.dev.l1.read_u32(rows, int(local)).astype(np.int64)
            store(rows, int(local), values)
        else:
            # each lane's word as it was before this call (lanes may share a word: the value before all)
            before = self.dev.l1.read_u32(rows, np.asarray(local, dtype=np.int64)).astype(np.int64)
            for lane in range(self.L):
                store(rows[lane:lane + 1], int(local[lane]), values[lane:lane + 1])
        self.dev.sem_time_note(rows, local, self.clock + self.costs.noc_latency + self._ethernet(rows, 4), before)
        self._release(rows, local)
        self._issue(4, call)
        self.dev.progress += 1
        self.scheduler.notify_semaphores(rows, local)

    def _release(self, rows, local) -> None:
        """This thread's cores signal the semaphores at ``local`` of cores ``rows`` (per lane)."""
        if self.L == 1 and np.ndim(local) == 0:
            self.dev.order.release(self.row0, int(np.asarray(rows).reshape(-1)[0]), int(local))
            return
        rows = np.broadcast_to(np.asarray(rows, dtype=np.int64), (self.L,))
        if np.ndim(local) == 0:
            self.dev.order.release(self.row_idx, rows, int(local))
        else:
            local = np.broadcast_to(np.asarray(local, dtype=np.int64), (self.L,))
            for addr in np.unique(local):
                lanes = local == addr
                self.dev.order.release(self.row_idx[lanes], rows[lanes], int(addr))

    def noc_semaphore_set_multicast(self, src_local_l1_addr, dst_noc_addr_multicast, num_dests, linked=False):
        self._multicast(src_local_l1_addr, dst_noc_addr_multicast, 4, num_dests, False,
                        "noc_semaphore_set_multicast", words=True)

    def noc_semaphore_set_multicast_loopback_src(self, src_local_l1_addr, dst_noc_addr_multicast, num_dests,
                                                 linked=False):
        self._multicast(src_local_l1_addr, dst_noc_addr_multicast, 4, num_dests, True,
                        "noc_semaphore_set_multicast_loopback_src", words=True)

    # -- L1 through pointers ----------------------------------------------------------------

    def l1_load(self, addr, index, width: int):
        index = index if index.__class__ is int else uniform(index, "L1 pointer index")
        nbytes = width // 8
        a = addr + index * nbytes
        for r_lo, r_hi, line in self.pending_reads:
            if any_lane((r_lo < a + nbytes) & (a < r_hi)):
                raise self.fail(NocHazardError, f"reading L1 at 0x{_first(a):x} that noc_async_read (at "
                                                f"{self.location_of(line)}) may still be filling; call "
                                                "noc_async_read_barrier() first")
        raw = self.dev.l1.read(self.rows, a, nbytes)
        dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32}[nbytes]
        values = raw.view(dtype)[:, 0].astype(np.int64)
        if nbytes == 4 and np.ndim(a) == 0 and self.dev.allocation.semaphore_base <= a < self.arch.l1_unreserved_base:
            # a semaphore word as of this thread's time: a write landing later is not seen yet
            values = self.dev.sem_visible(self.row_idx, int(a), values, self.clock)
        self.charge(self.costs.riscv_call, None, "l1_load")
        self._maybe_yield_spin()
        first = values[0]
        return int(first) if (values == first).all() else values

    def l1_store(self, addr, index, value, width: int) -> None:
        index = index if index.__class__ is int else uniform(index, "L1 pointer index")
        nbytes = width // 8
        a = addr + index * nbytes
        for w_lo, w_hi, line in self.pending_writes:
            if any_lane((w_lo < a + nbytes) & (a < w_hi)):
                raise self.fail(NocHazardError, f"writing L1 at 0x{_first(a):x} that noc_async_write (at "
                                                f"{self.location_of(line)}) may still be reading; call "
                                                "noc_async_writes_flushed() first")
        dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32}[nbytes]
        vals = np.broadcast_to(np.asarray(value, dtype=np.int64) & ((1 << width) - 1), (self.L,)).astype(dtype)
        base = self.dev.allocation.semaphore_base
        semaphore = base <= _first(a) < self.arch.l1_unreserved_base
        before = (self.dev.l1.read_u32(self.rows, a).astype(np.int64)
                  if semaphore and nbytes == 4 and np.ndim(a) == 0 else None)
        self.dev.l1.write(self.rows, a, vals.view(np.uint8).reshape(self.L, nbytes))
        self.charge(self.costs.riscv_call, None, "l1_store")
        if semaphore:
            self.dev.sem_time_note(self.row_idx, a, self.clock, before)
            self.dev.progress += 1
            if nbytes == 4:                 # a semaphore word
                self.scheduler.notify_semaphores(self.row_idx, a)
            else:                           # a store that may cover one
                self.scheduler.notify_semaphores()

    def _maybe_yield_spin(self) -> None:
        """Let other threads run while this one polls L1; a poll that never sees progress is a hang."""
        self._spins += 1
        if self._spins % 64:
            return
        if self.dev.progress == self._spin_progress and self._spins > 200_000:
            blocked = [t.describe() for t in self.scheduler.threads if t.state == BLOCKED]
            why = "" if not blocked else ("; the other threads that could change it are blocked:\n" +
                                          "\n".join(f"  {line}" for line in blocked))
            raise self.fail(SemaphoreError, "this kernel polls L1 in a loop that no other thread will ever change"
                            + why)
        if self.dev.progress != self._spin_progress:
            self._spin_progress = self.dev.progress
            self._spins = 64
        self.scheduler.yield_now(self.thread)
