"""Page transfers of a loop nest executed together: the same effects as one call at a time.

Reads / writes: DRAM banks and this thread's L1 (bytes), its NOC port and read / write
completion times, its share of DRAM bandwidth, the device's counters — exactly what
``noc_async_read_page`` / ``noc_async_write_page`` change, in the same order.

The Python emitter prints a loop nest that only computes integers and issues page reads (or
page writes) with ``*_later`` calls, which queue their arguments and the kernel line, and
``k.flush_pages()`` after the nest. Nothing else runs on this thread in between and no other
thread runs (those calls never block), so executing the queue at the flush is executing the
calls. A batch does it with one gather / scatter for all pages and lanes:

* checks (DRAM bounds, reserved CB pages, L1 a write still reads from a pending read) are
  evaluated for every page first; if any page would fail, or two pages land on the same
  bytes, or a trace is being recorded, the calls are replayed one at a time, so errors name
  the exact call and line;
* when every lane reads to the same L1 range and the lanes read few distinct sets of DRAM
  pages (a grid row of cores fetching the same block), each set is gathered once and stored
  as a shared write (see :mod:`tilefold.sim.memory`);
* timing is the per-call cost model in closed form: call ``i`` issues at ``clock + i·issue``
  and its NOC port is free at ``max(port + (i+1)·t, clock + t + i·max(issue, t))`` (``t`` the
  page over the link width); each page is then served at the core's share of DRAM bandwidth after
  the previous one (a running maximum over the calls).
"""

from __future__ import annotations

import numpy as np

from tilefold.sim.lanes import even


NODE_DRAM = 1          # as tilefold.sim.dataflow_api: transfers to / from a DRAM bank

READ, WRITE = "noc_async_read_page", "noc_async_write_page"
# bytes moved per gather / scatter: fresh arrays much larger than this cost page faults
CHUNK_BYTES = 2 << 20


def _lane_matrix(values, lanes: int) -> np.ndarray:
    """Per-call values (ints or per-lane arrays) as an (calls, lanes) int64 array."""
    if all(v.__class__ is int for v in values):
        column = np.asarray(values, dtype=np.int64)[:, None]
        return column if lanes == 1 else np.broadcast_to(column, (len(values), lanes))
    matrix = np.empty((len(values), lanes), dtype=np.int64)
    for row, v in zip(matrix, values):
        row[...] = v
    return matrix


def _distinct_per_lane(addr: np.ndarray) -> bool:
    """Whether no two calls use the same address on any lane."""
    ordered = np.sort(addr, axis=0)
    return not (ordered[1:] == ordered[:-1]).any()


def flush(ctx, queue: list) -> None:
    """Execute the queued calls ``(call, page_id, accessor, l1_addr, nbytes, offset, line)``."""
    start = 0
    while start < len(queue):                  # runs of one call kind on one accessor
        call, accessor, offset = queue[start][0], queue[start][2], queue[start][5]
        end = start + 1
        while end < len(queue) and queue[end][0] == call and queue[end][2] is accessor \
                and _same(queue[end][5], offset):
            end += 1
        run = queue[start:end]
        if not _batch(ctx, run):
            _one_by_one(ctx, run)
        start = end


def _same(a, b) -> bool:
    """Whether two byte offsets are equal (ints, or one per lane when they differ between cores)."""
    if a.__class__ is np.ndarray or b.__class__ is np.ndarray:
        return bool(np.array_equal(a, b))
    return a == b


def _one_by_one(ctx, run: list) -> None:
    for call, page_id, accessor, l1_addr, nbytes, offset, line in run:
        ctx.line_override = line
        try:
            if call == READ:
                ctx.noc_async_read_page(page_id, accessor, l1_addr, offset)
            else:
                ctx.noc_async_write_page(page_id, accessor, l1_addr, nbytes, offset)
        finally:
            ctx.line_override = None


def _batch(ctx, run: list) -> bool:
    """Execute ``run`` as one batch; False (nothing done) when it must go one call at a time."""
    call, _, accessor, _, nbytes, offset, _ = run[0]
    if ctx.tracing or len(run) < 2 or not accessor.args.is_dram:
        return False
    if not all(r[4].__class__ is int and r[4] == nbytes for r in run) or nbytes <= 0:
        return False
    lanes = ctx.L
    pages = _lane_matrix([r[1] for r in run], lanes)
    if accessor.pages_outside(pages) is not None:
        return False
    if accessor.data_format is not None:
        cb = ctx.dev.cbs.cb_at(int(np.asarray(run[0][3]).flat[0]))
        if cb is not None and ctx.dev.cb_formats.get(cb, accessor.data_format) is not accessor.data_format:
            return False
    l1 = _lane_matrix([r[3] for r in run], lanes)
    bank, local = accessor.locate(pages, offset)
    bank, local = (v if v.__class__ is np.ndarray and v.shape == pages.shape
                   else np.broadcast_to(np.asarray(v, dtype=np.int64), pages.shape) for v in (bank, local))
    regions = ctx.dev.allocation.dram_regions
    if not regions.contains_all(local, nbytes) or (local & 15).any():
        return False                                        # outside a buffer, or misaligned: call by call
    if call == READ:
        cbs = ctx.dev.cbs
        writers = ctx.dev.dram_writers
        if (not _distinct_per_lane(l1) or cbs.cb_at(int(l1[0, 0])) != cbs.cb_at(int(l1.min()))
                or not ctx._local_write_fits(l1, nbytes)):
            return False
        if writers.hi > writers.lo and writers.stale_read(bank, local, nbytes, ctx.row_idx[None, :]) is not None:
            return False                                    # a race: reported call by call
        if writers.reader is not None:
            sites = np.array([writers.site_id(ctx, r[6]) for r in run], dtype=np.int16)[:, None]
            writers.note_read(bank, local, ctx.row_idx[None, :], sites)
    elif ctx._pending_read_into(l1, l1 + nbytes) is not None or not _distinct_per_lane(bank * (1 << 40) + local):
        return False
    elif ctx.dev.dram_writers.clash(bank, local, nbytes, ctx.row_idx[None, :]) is not None:
        return False                                        # a race: reported call by call
    elif ctx.dev.dram_writers.read_before(bank, local, nbytes, ctx.row_idx[None, :]) is not None:
        return False                                        # a race unless the bytes are unchanged: call by call
    if call == WRITE:
        writers = ctx.dev.dram_writers
        sites = 0 if writers.single_core else \
            np.array([writers.site_id(ctx, r[6]) for r in run], dtype=np.int16)[:, None]
        writers.note(bank, local, nbytes, ctx.row_idx[None, :], sites)
    shared = _same_content(ctx, bank, local, l1, nbytes) if call == READ else None
    if shared is not None and 2 * (shared[2].max() + 1) <= lanes:
        _read_shared(ctx, bank, local, l1, nbytes, shared)
        shared = None                                       # recorded by the shared write
    else:
        rows = ctx.row_idx[None, :]
        step = max(1, CHUNK_BYTES // (nbytes * lanes))
        for i in range(0, len(run), step):                 # (calls, lanes, nbytes) a few MiB at a time
            chunk = slice(i, i + step)
            if call == READ:
                ctx.dev.l1.write(rows, l1[chunk], ctx.dev.dram.read(bank[chunk], local[chunk], nbytes))
            else:
                ctx.dev.dram.write(bank[chunk], local[chunk], ctx.dev.l1.read(rows, l1[chunk], nbytes))
    _time(ctx, run, call, bank, l1, nbytes)
    if shared is not None:
        ctx.dev.l1.note_same_content(*shared[:2], ctx.row_idx, shared[2])
    return True


def _same_content(ctx, bank: np.ndarray, local: np.ndarray, l1: np.ndarray, nbytes: int):
    """When every lane reads to the same L1 addresses, covering one contiguous range: (its
    start, its end, a content number per lane); lanes reading the same DRAM pages to the same
    addresses get the same number, as they will hold identical bytes there. Else None."""
    if ctx.L < 2 or not (l1 == l1[:, :1]).all():
        return None
    addrs = np.sort(l1[:, 0])
    if not (np.diff(addrs) == nbytes).all():
        return None
    sources = np.ascontiguousarray((bank * (1 << 40) + local).T)     # (lanes, calls)
    numbers: dict[bytes, int] = {}                                     # a lane's pages -> content number
    content = np.array([numbers.setdefault(row.tobytes(), len(numbers)) for row in sources])
    return int(addrs[0]), int(addrs[-1]) + nbytes, content


def _read_shared(ctx, bank: np.ndarray, local: np.ndarray, l1: np.ndarray, nbytes: int, shared) -> None:
    """The reads of a batch whose lanes share few contents (see :func:`_same_content`): the
    pages of each content are gathered from DRAM once, in L1 address order, and stored as one
    shared write of the lanes' contiguous range (see :mod:`tilefold.sim.memory`)."""
    lo, _, content = shared
    order = np.argsort(l1[:, 0])
    first = np.unique(content, return_index=True)[1]                 # a lane of each content
    sources = ctx.dev.dram.read(bank[order][:, first].T, local[order][:, first].T, nbytes)   # (contents, calls, nbytes)
    ctx.dev.l1.write_shared(lo, ctx.row_idx, content, sources.reshape(len(first), -1))


def _time(ctx, run: list, call: str, bank: np.ndarray, l1: np.ndarray, nbytes: int) -> None:
    """The per-call cost model of ``run`` (see the module docstring), counters and pending lists."""
    n, lanes = bank.shape
    dev = ctx.dev
    issue = ctx._issue_cycles(nbytes)
    t = nbytes / ctx.arch.noc_link_bytes_per_cycle
    latency = ctx.costs.noc_latency + ctx.costs.dram_latency
    if lanes == 1 or (even(ctx.clock) and even(ctx.port_free) and even(ctx.dram_free)
                      and even(dev.dram_share[ctx.row_idx])):
        # one lane, or lanes whose clocks and DRAM shares agree: one lane's arithmetic on floats
        last_port, last_done = _time_one_lane(ctx, n, issue, t, nbytes / dev.dram_share[ctx.row0], latency)
    else:
        steps = np.arange(n, dtype=np.float64)[:, None]
        port = np.maximum(ctx.port_free + (steps + 1) * t, ctx.clock + t + steps * max(issue, t))   # (n, lanes)
        # dram_free after call j: max over i <= j of (entry_i + (j - i + 1) * service), entry_-1 = dram_free
        service = nbytes / dev.dram_share[ctx.row_idx]
        entries = np.concatenate([ctx.dram_free[None] - service, port]) - np.arange(-1, n)[:, None] * service
        dram_free = np.maximum.accumulate(entries, axis=0)[1:] + (steps + 1) * service
        ctx.dram_free = dram_free[-1].copy()
        done = np.maximum(port, dram_free) + latency
        ctx.port_free = port[-1].copy()
        last_port, last_done = port.max(axis=0), done.max(axis=0)
    dev.bank_traffic.append((bank, nbytes))
    ctx.charge(issue * n, None, call)
    counters = dev.counters
    counters.noc_bytes += nbytes * lanes * n
    lines = [r[6] for r in run]
    if call == READ:
        counters.dram_read_bytes += nbytes * lanes * n
        dev.core_read_bytes[ctx.row_idx] += nbytes * n
        np.maximum(ctx.read_done, last_done, out=ctx.read_done)
        pending = ctx.pending_reads
    else:
        counters.dram_write_bytes += nbytes * lanes * n
        np.maximum(ctx.write_flushed, last_port, out=ctx.write_flushed)
        np.maximum(ctx.write_done, last_done, out=ctx.write_done)
        dev.note_output_write(NODE_DRAM, None, nbytes * lanes * n)
        pending = ctx.pending_writes
    uniform = lanes == 1 or bool((l1 == l1[:, :1]).all())      # the same address on every lane: ints
    starts = l1[:, 0].tolist() if uniform else list(l1.copy())
    if uniform and n > 1 and starts == list(range(starts[0], starts[0] + n * nbytes, nbytes)):
        # one after another: the pending list would take the first page and extend it by each next one
        if ctx._remember(pending, starts[0], n * nbytes, lines[0]) and call == WRITE:
            dev.progress += 1
        return
    for lo, line in zip(starts, lines):
        added = ctx._remember(pending, lo, nbytes, line)
        if added and call == WRITE:
            dev.progress += 1


def _time_one_lane(ctx, n: int, issue: float, t: float, service: float, latency: float) -> tuple[float, float]:
    """:func:`_time`'s closed form on the first lane, on Python floats (the same operations in the
    same order, so the same values as on many lanes), for every lane when they agree. Moves the
    lanes' port and DRAM clocks on; returns (the last port time, the last completion time)."""
    clock, port_free = float(ctx.clock[0]), float(ctx.port_free[0])
    wait = issue if issue > t else t
    running = (float(ctx.dram_free[0]) - service) - (-1 * service)
    port = dram = done = float("-inf")
    for i in range(n):
        a, b = port_free + (i + 1) * t, clock + t + i * wait
        port = a if a >= b else b
        entry = port - i * service
        running = entry if entry > running else running
        dram = running + (i + 1) * service
        finished = (port if port >= dram else dram) + latency
        done = finished if finished > done else done
    ctx.port_free[:] = port
    ctx.dram_free[:] = dram
    return port, done
