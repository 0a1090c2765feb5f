"""Tile calls of a loop nest executed together: the same effects as one call at a time.

Reads / writes: the compute thread's DST, the CB pages its calls read and pack, its unpack / math /
pack clocks, busy times and the device's tile counters — exactly what ``copy_tile``, ``pack_tile``,
the FPU element-wise calls, the SFPU calls and their ``*_init`` calls change, in the same order.

The Python emitter prints a *tile nest* (:mod:`tilefold.ir.tile_loops`) with ``*_later`` calls,
which queue their arguments and the kernel line, and ``k.flush_tiles()`` after it. Nothing else
runs on the thread in between and no other thread runs (those calls never block), so executing
the queue at the flush is executing the calls. A batch does it in three steps:

* **plan**, call by call in order: the checks the calls make (DST state and range, slots read
  before anything wrote them, CB pages waited for or reserved, formats), the pages and DST slots
  each reads and writes, and what each charges to which engine. A pending matmul block is settled
  into DST at the first call touching its slots, as the call would. Anything the plan does not
  cover — a check that would fail, a per-core argument, L1 accumulation, a pack onto a page the
  nest also reads, a trace being recorded — makes the whole queue run call by call instead
  (``line_override`` names each call's line), so errors and traces are those of the calls;
* **values**: the calls form a dataflow graph over DST slots; calls of one kind at one depth of
  that graph are computed together, as one numpy operation over a stack of tiles (the same
  element-wise functions, so the same numbers), then each slot gets the value of its last write
  and packs write their pages in one scatter;
* **time**: the planned charges are applied in call order with the same arithmetic as the calls
  (the math engine starts each op when its operands are unpacked), so clocks, busy times and
  counters are bit-identical; ``*_init`` calls that the context implements itself run as
  themselves, in order.
"""

from __future__ import annotations

import functools

import numpy as np

from tilefold.errors import TilefoldError
from tilefold.ir.sfpu import SFPU
from tilefold.ir.ttkernel_api import API
from tilefold.ir.tile_loops import (DST_SYNC_CALLS, FPU_ELTWISE_CALLS, INIT_CALLS, MATMUL_CALLS, SFPU_BINARY_CALLS,
                                    SFPU_UNARY_CALLS)
from tilefold.sim import tile_math as tm
from tilefold.sim.matmul_blocks import MATMUL_TILE_FLOPS
from tilefold.sim.two_threads import in_halves

UNPACK, MATH, PACK, INIT, CALL, ACQUIRE, COMMIT, WAIT, RELEASE = range(9)     # kinds of planned charges
# each hand-over call: its kind of charge, the DST state it requires and the state it leaves
_HAND_OVERS = {"tile_regs_acquire": (ACQUIRE, "released", "acquired"),
               "tile_regs_commit": (COMMIT, "acquired", "committed"),
               "tile_regs_wait": (WAIT, "committed", "waited"),
               "tile_regs_release": (RELEASE, "waited", "released")}
INITIAL = -1                                  # a DST slot read before any call of the queue wrote it


class _Fallback(Exception):
    """The queue must run call by call."""


def flush(ctx, queue, key=None) -> None:
    """Execute the queued calls ``(name, args, keyword items, bytecode offset of the call)`` of a
    compute thread. ``key``: a short key standing for this queue among the thread's (a recorded
    tile nest's, :meth:`ComputeApi.replay_tile_nest`), else the queue is its own key."""
    if not queue:
        return
    plan = None
    if not ctx.tracing:
        key = _queue_key(queue) if key is None else key
        plan = _cached_plan(ctx, key)
        if plan is None:
            engines = ctx.engines.snapshot()      # planning applies the queue's inits as it goes
            try:
                plan = _Plan(ctx, queue)
            except (_Fallback, TilefoldError):
                plan = None
                ctx.engines.restore(engines)
            else:
                if key is not None:
                    ctx.tile_plans.setdefault(key, []).append((plan.state(before=True), plan))
    if plan is None:
        _one_by_one(ctx, queue)
        return
    plan.compute_values()
    plan.apply_time()
    if plan.acquires:
        ctx.dst_acquired_at = _line_of_last(ctx, queue, "tile_regs_acquire")


def _queue_key(queue: list):
    """The calls of a queue as a hashable key (the queued tuples themselves: names, arguments,
    keyword items and call sites), or None when an argument differs per core (an array)."""
    key = tuple(queue)
    try:
        hash(key)
    except TypeError:
        return None
    return key


_PLANS_PER_KEY = 8


def _cached_plan(ctx, key):
    """A plan made for the same calls from the same state (DST, pending matmul blocks, the pointers
    and counts of the CBs the calls touch): planning it again would give the same plan. Settles
    pending matmul blocks at the slots the plan touched, as planning did."""
    if key is None:
        return None
    entries = ctx.tile_plans.get(key)
    if not entries:
        return None
    for state, plan in entries:
        if plan.state() == state:
            ctx.engines.restore(plan.engines_after)     # the queue's inits, as planning applied them
            if ctx._pending_matmul:
                for slot in plan.settled:
                    ctx._flush_matmul(slot, slot + 1)
            return plan
    if len(entries) >= _PLANS_PER_KEY:
        entries.pop(0)
    return None


def _one_by_one(ctx, queue: list) -> None:
    lines = _lines_by_offset(ctx.pykernel.function.__code__)
    for name, args, kwargs, offset in queue:
        ctx.line_override = lines[offset // 2]
        try:
            getattr(ctx, name)(*args, **dict(kwargs))
        finally:
            ctx.line_override = None


def _line_of_last(ctx, queue: list, name: str) -> int:
    """The kernel line of the last queued call of ``name``."""
    offset = next(offset for call, _, _, offset in reversed(queue) if call == name)
    return _lines_by_offset(ctx.pykernel.function.__code__)[offset // 2]


@functools.lru_cache(maxsize=64)
def _lines_by_offset(code) -> list[int]:
    """The source line of each instruction of a kernel's code (by bytecode offset / 2)."""
    return [position[0] or 0 for position in code.co_positions()]


class _Node:
    """One DST value or pack the queue produces: ``key`` says how (calls with equal keys at one
    depth are computed together), ``inputs`` are nodes or ``(INITIAL, slot)``."""

    __slots__ = ("key", "inputs", "depth", "address", "value", "origin")

    def __init__(self, key: tuple, inputs: list, address=None):
        self.key = key
        self.inputs = inputs
        self.depth = 1 + max((i.depth for i in inputs if i.__class__ is _Node), default=0)
        self.address = address      # L1 address(es) read or written, ints
        self.value = None
        self.origin = None          # (array, index) with array[index] the value: stacks of values are its views


class _Plan:
    def __init__(self, ctx, queue: list):
        self.ctx = ctx
        self.nodes: list[_Node] = []
        self.packs: list[_Node] = []
        self.charges: list[tuple] = []            # (kind, cycles or (name, args, kwargs))
        self.latest: dict[int, object] = {}       # DST slot -> node that wrote it last
        self.written = ctx.dst_written.copy()
        self.reads: list[tuple[int, int]] = []    # L1 ranges read from CBs
        self.pack_seq: dict[int, tuple] = {}      # cb -> (state, next in-order page)
        self.counts = [0, 0, 0, 0]                # unpack, fpu, sfpu, pack tiles (per lane)
        self.settled: list[int] = []              # DST slots at which the calls settle pending matmul blocks
        self.cbs: dict[int, object] = {}          # CB index -> state, of the CBs the calls touch
        self.groups: list | None = None           # (key, nodes) by depth, made by the first compute_values
        self.dst_state = ctx.dst_state            # DST's hand-over state after the calls so far
        self.runs: dict[int, _Node] = {}          # first DST slot -> the matmul run still taking K steps there
        self.matmul_tiles = 0                     # output tiles of the matmul calls (for the flop counter)
        self.initial = None                       # DST as the queue found it, while matmul runs use DST
        self.acquires = 0                         # tile_regs_acquire calls among them
        self.hand_overs = 0                       # hand-over calls of any kind among them
        self.before = self._state_of_ctx()
        for name, args, kwargs, _ in queue:
            self._call(name, args, dict(kwargs) if kwargs else {})
        self._check_pack_targets()
        self.engines_after = ctx.engines.snapshot()

    def _state_of_ctx(self) -> tuple:
        ctx = self.ctx
        return (ctx.dst_state, ctx.pack_l1_acc, ctx.dst_written.tobytes(),
                tuple((first, block.rt, block.ct) for first, block in ctx._pending_matmul.items()),
                ctx.engines.snapshot(), tuple(ctx.dst_ints) if ctx.dst_ints else ())

    def state(self, before: bool = False) -> tuple:
        """What planning reads of the thread's state: DST's (the slots holding integers too), the pending
        matmul blocks, the engines' configuration (:mod:`tilefold.sim.engine_config`), and the
        pointers and counts of the CBs the calls touch — now, or (``before``) as the plan found it
        (planning settles pending matmul blocks; it changes nothing else)."""
        ctx = self.ctx
        if ctx.L == 1:
            row = ctx.row0
            return (self.before if before else self._state_of_ctx(),
                    tuple((int(st.rd[row]), int(st.wr[row]), int(st.waited[row]), int(st.reserved[row]),
                           int(st.pack_seq[row])) for st in self.cbs.values()))
        rows = ctx.rows
        return (self.before if before else self._state_of_ctx(),
                tuple((st.rd[rows].tobytes(), st.wr[rows].tobytes(), st.waited[rows].tobytes(),
                       st.reserved[rows].tobytes(), st.pack_seq[rows].tobytes()) for st in self.cbs.values()))

    # -- per call -------------------------------------------------------------------------

    def _call(self, name: str, args: tuple, kwargs: dict) -> None:
        if any(a.__class__ not in (int, float, bool, str) for a in (*args, *kwargs.values())):
            raise _Fallback                       # per-core values: the calls decide (strings: template arguments)
        if name in INIT_CALLS:
            self.ctx.engines.apply(name, args, kwargs)
            generic = getattr(getattr(type(self.ctx), name), "configures_only", False)
            self.charges.append((INIT, self.ctx.costs.compute_call) if generic else (CALL, (name, args, kwargs)))
        elif name == "copy_tile":
            self._copy_tile(*args, **kwargs)
        elif name == "unary_bcast":
            self._unary_bcast(*args, **kwargs)
        elif name == "pack_tile":
            self._pack_tile(*args, **kwargs)
        elif name in FPU_ELTWISE_CALLS:
            self._fpu_binary(name, *args, **kwargs)
        elif name in SFPU_UNARY_CALLS:
            self._sfpu_unary(name, *args)
        elif name in SFPU_BINARY_CALLS:
            self._sfpu_binary(name, *args, **kwargs)
        elif name in DST_SYNC_CALLS:
            self._hand_over(name)
        elif name in MATMUL_CALLS and not kwargs:
            self._matmul(name, *args) if name == "matmul_block" else self._matmul(name, *args, 0, 1, 1, 1)
        else:
            raise _Fallback

    def _matmul(self, name: str, in0_cb, in1_cb, t0, t1, first, transpose, ct, rt, kt) -> None:
        """``matmul_block``: K steps into one rt×ct block of DST make a *run*, multiplied as the call
        would when something else touches its slots (:mod:`tilefold.sim.matmul_blocks`); the run
        is one node, and each of its slots a node taking its part."""
        ctx = self.ctx
        tiles = rt * ct
        if self.dst_state != "acquired" or ctx._pending_matmul or first < 0 or first + tiles > ctx.dst_capacity:
            raise _Fallback                       # the call raises the error, or continues a pending block
        cb0, st0 = ctx._cb(in0_cb, name)
        cb1, st1 = ctx._cb(in1_cb, name)
        self._configured(ctx.engines.check_fpu(name, ("matmul",), cb1, cb0))
        ctx._check_waited(cb0, st0, t0 + (rt - 1) * kt + 1, name)
        ctx._check_waited(cb1, st1, t1 + ct, name)
        self.cbs[cb0], self.cbs[cb1] = st0, st1
        for st, tile in ((st0, t0), (st0, t0 + (rt - 1) * kt), (st1, t1), (st1, t1 + ct - 1)):
            ps = ctx._page_bytes(st)
            address = ctx._page_address(st, st.rd, tile, ps)
            if address.__class__ is not int:
                raise _Fallback
            self.reads.append((address, address + ps))
        run = self.runs.get(first)
        if run is None or run.key[2:] != (rt, ct):
            self._end_runs(first, first + tiles)
            starts = [self.latest.get(i, (INITIAL, i)) if self.written[i] else None for i in range(first, first + tiles)]
            run = _Node(("matmul", len(self.nodes), rt, ct), [s for s in starts if s is not None], (first, starts, []))
            self.nodes.append(run)
            self.runs[first] = run
            for k in range(tiles):
                self._write(first + k, _Node(("part", k), [run]))
        run.address[2].append((cb0, cb1, t0, t1, bool(transpose), kt, name))
        unpack, math = ctx.matmul_cycles(cb0, st0, cb1, st1, rt, ct)
        self.charges.append((UNPACK, unpack))
        self.charges.append((MATH, math))
        self.counts[0] += rt + ct
        self.counts[1] += tiles
        self.matmul_tiles += tiles

    def _end_runs(self, lo: int, hi: int) -> None:
        """No later call continues a matmul run over DST slots [lo, hi)."""
        for first, run in list(self.runs.items()):
            if first < hi and lo < first + run.key[2] * run.key[3]:
                del self.runs[first]

    def _hand_over(self, name: str) -> None:
        """``tile_regs_acquire`` / ``commit`` / ``wait`` / ``release``: DST's state moves on; an
        acquire forgets what the slots were written with; each charges one compute call."""
        kind, needed, after = _HAND_OVERS[name]
        if self.dst_state != needed or (name == "tile_regs_commit" and self.ctx._pending_matmul):
            raise _Fallback                       # the call raises the error, or settles a matmul block
        self.dst_state = after
        if name == "tile_regs_commit":
            self.runs.clear()
        if name == "tile_regs_acquire":
            self.written[:] = False
            self.acquires += 1
        self.hand_overs += 1
        self.charges.append((kind, self.ctx.costs.compute_call))

    @staticmethod
    def _configured(message: str | None) -> None:
        if message is not None:
            raise _Fallback                       # the call raises the error, naming its line

    def _slot_value(self, slot: int, call: str):
        i = self._dst_index(slot, call)                # range check; settles a pending matmul there
        if not self.written[i]:
            raise _Fallback
        return self.latest.get(i, (INITIAL, i))

    def _math_slot(self, slot: int, call: str) -> int:
        if self.dst_state != "acquired":
            raise _Fallback
        return self._dst_index(slot, call)

    def _dst_index(self, slot: int, call: str) -> int:
        pending = len(self.ctx._pending_matmul)
        i = self.ctx._dst_index(slot, call)
        if self.runs:
            self._end_runs(i, i + 1)
        if len(self.ctx._pending_matmul) != pending:
            self.settled.append(i)                     # a pending matmul block was settled here
        return i

    def _write(self, slot: int, node: _Node) -> None:
        self.nodes.append(node)
        self.latest[slot] = node
        self.written[slot] = True

    def _cb_tile(self, cb: int, tile: int, call: str, fpu: bool):
        """(L1 address, page size, format) of a waited tile, charging its unpack."""
        ctx = self.ctx
        cbi, st = ctx._cb(cb, call)
        self.cbs[cbi] = st
        ctx._check_waited(cbi, st, tile + 1, call)
        ps = ctx._page_bytes(st)
        address = ctx._page_address(st, st.rd, tile, ps)
        if address.__class__ is not int:
            raise _Fallback
        fmt = ctx._cb_format(cbi)
        if fmt.tile_size() != ps:
            raise _Fallback
        self.reads.append((address, address + ps))
        self.charges.append((UNPACK, ctx._unpack_cycles(ps, fmt, 1)))
        self.counts[0] += 1
        return address, ps, fmt

    def _math(self, cycles: float, fpu: bool) -> None:
        self.charges.append((MATH, cycles))
        self.counts[1 if fpu else 2] += 1

    def _copy_tile(self, in_cb, in_tile_index, dst_index) -> None:
        self._into_dst("copy_tile", ("copy",), in_cb, in_tile_index, dst_index, ("copy",))

    def _unary_bcast(self, in_cb, in_tile_index, dst_index, bcast_type="ROW") -> None:
        self._into_dst("unary_bcast", ("unary_bcast", bcast_type), in_cb, in_tile_index, dst_index,
                       ("bcast", tm.BROADCAST_TYPES[bcast_type]))

    def _into_dst(self, call: str, family: tuple, in_cb, in_tile_index, dst_index, kind: tuple) -> None:
        """A call moving one waited tile into DST as ``copy_tile`` does: a node of ``kind`` (its name,
        then what follows the tile's geometry in its key: a broadcast's direction)."""
        i = self._math_slot(dst_index, call)
        self._configured(self.ctx.engines.check_fpu(call, family, in_cb))
        address, ps, fmt = self._cb_tile(in_cb, in_tile_index, call, fpu=False)
        if not fmt.is_float:
            raise _Fallback                       # the call keeps the integers exactly (ComputeApi.dst_ints)
        to_dest = self.ctx._unpacks_to_dest(self.ctx._cb(in_cb, call)[0], fmt)
        self._math(self.ctx.costs.fpu_eltwise_tile, True)
        self._write(i, _Node((kind[0], ps, fmt, to_dest, *kind[1:]), [], address))

    def _fpu_binary(self, name, in0_cb, in1_cb, in0_tile, in1_tile, dst_index) -> None:
        op, bcast = API[name].eltwise
        i = self._math_slot(dst_index, name)
        self._configured(self.ctx.engines.check_fpu(name, ("binary", op, bcast), in0_cb, in1_cb))
        a = self._cb_tile(in0_cb, in0_tile, name, fpu=True)
        b = self._cb_tile(in1_cb, in1_tile, name, fpu=True)
        self._math(self.ctx.costs.fpu_eltwise_tile, True)
        self._write(i, _Node(("fpu", op, bcast, a[1:], b[1:]), [], (a[0], b[0])))

    def _sfpu_unary(self, name: str, dst_index, *params) -> None:
        base = name[:-5]
        i = self._math_slot(dst_index, name)
        self._configured(self.ctx.engines.check_sfpu(name))
        inputs = [] if base == "fill" else [self._slot_value(i, name)]
        self._math(self.ctx.costs.sfpu(SFPU[base].cost), False)
        params += self.ctx.engines.sfpu_init_values(SFPU[base])      # constants its init programmed
        self._write(i, _Node(("unary", base, params), inputs))

    def _sfpu_binary(self, name: str, d0, d1, out) -> None:
        base = name[:-5]
        self._configured(self.ctx.engines.check_sfpu(name))
        a = self._slot_value(d0, name)
        b = self._slot_value(d1, name)
        o = self._math_slot(out, name)
        self._math(self.ctx.costs.sfpu(SFPU[base].cost), False)
        self._write(o, _Node(("binary", base), [a, b]))

    def _pack_tile(self, dst_index, out_cb, out_tile_index=0, out_of_order_output=False) -> None:
        ctx = self.ctx
        if self.dst_state != "waited" or ctx.pack_l1_acc:
            raise _Fallback
        i = ctx._dst_in_range(dst_index, "pack_tile")
        if ctx.dst_ints and i in ctx.dst_ints:
            raise _Fallback                       # integers the slot holds exactly: the call packs them
        if self.runs:
            self._end_runs(i, i + 1)
        if ctx._pending_matmul:
            pending = len(ctx._pending_matmul)
            ctx._flush_matmul(i, i + 1)
            if len(ctx._pending_matmul) != pending:
                self.settled.append(i)
        if not self.written[i]:
            raise _Fallback
        cbi, st = ctx._cb(out_cb, "pack_tile")
        self._configured(ctx.engines.check_pack("pack_tile", cbi))
        self.cbs[cbi] = st
        if out_of_order_output:
            page = out_tile_index
        else:
            state, page = self.pack_seq.get(cbi) or (st, _uniform(st.pack_seq[ctx.rows]))
            self.pack_seq[cbi] = (state, page + 1)
        if (st.reserved[ctx.rows] < page + 1).any():
            raise _Fallback
        ps = ctx._page_bytes(st)
        fmt = ctx._cb_format(cbi)
        address = ctx._page_address(st, st.wr, page, ps)
        if address.__class__ is not int or fmt.tile_size() != ps:
            raise _Fallback
        cycles = ps / ctx.costs.pack_bytes_per_cycle
        if fmt.is_block_float:
            cycles += ctx.costs.bfp_extra_per_tile
        self.charges.append((PACK, cycles))
        self.counts[3] += 1
        node = _Node(("pack", ps, fmt), [self.latest.get(i, (INITIAL, i))], address)
        self.packs.append(node)

    def _check_pack_targets(self) -> None:
        """Packs land on distinct pages that no call of the queue reads."""
        if not self.packs:
            return
        targets = sorted((p.address, p.address + p.key[1]) for p in self.packs)
        for (lo, hi), (next_lo, _) in zip(targets, targets[1:]):
            if next_lo < hi:
                raise _Fallback
        for lo, hi in self.reads:
            for t_lo, t_hi in targets:
                if lo < t_hi and t_lo < hi:
                    raise _Fallback

    # -- values -----------------------------------------------------------------------------

    def compute_values(self) -> None:
        ctx = self.ctx
        # matmul runs are multiplied in DST itself: what the queue found there is kept aside
        self.initial = ctx.dst[ctx.rows].copy() if self.matmul_tiles else None
        self.initial_slots = None if self.initial is None else self.initial.swapaxes(0, 1)
        self.run_blocks = {}                  # matmul run -> (array of every run's tiles, index of its first)
        if self.matmul_tiles:
            # every run's block, tiles first, one above the other: consecutive tiles of the runs
            # are then a view of one array wherever later calls read them together
            runs = [node for node in self.nodes if node.key[0] == "matmul"]
            blocks = np.empty((sum(run.key[2] * run.key[3] for run in runs), ctx.L, tm.TILE_ELEMS), ctx.dst.dtype)
            first = 0
            for run in runs:
                self.run_blocks[run] = (blocks, first)
                first += run.key[2] * run.key[3]
        if self.groups is None:
            groups: dict[tuple, list[_Node]] = {}
            for node in self.nodes:
                key = self._run_kind(node) if node.key[0] == "matmul" else node.key
                groups.setdefault((node.depth, key), []).append(node)
            self.groups = [(key, nodes) for (_, key), nodes in sorted(groups.items(), key=lambda item: item[0][0])]
        for key, nodes in self.groups:
            values = self._group_values(key, nodes)
            for node, value in zip(nodes, values):
                node.value = value
            if values.__class__ is np.ndarray:
                for i, node in enumerate(nodes):
                    node.origin = (values, i)
        if self.packs:
            self._pack_values()
        for slot, node in self.latest.items():
            if node.value is not None:        # (a run left pending holds its slots)
                ctx.dst[ctx.rows, slot] = node.value
            ctx.dst_ints.pop(slot, None)      # (integers copy_tile unpacked there are overwritten)
        ctx.dst_written[:] = self.written
        ctx.dst_state = self.dst_state
        if self.counts[2]:
            ctx._cumsum_carry = None          # any SFPU op overwrites what cumsum_tile carries
        for cb, (st, page) in self.pack_seq.items():
            st.pack_seq[ctx.rows] = page
        for node in self.nodes:
            node.value = node.origin = None   # the plan may be used again: keep no tiles alive
        for node in self.packs:
            node.value = None
        self.initial = self.initial_slots = self.run_blocks = None

    def _run_kind(self, run: _Node) -> tuple:
        """A matmul run's group key: runs of one key whose in0 tiles are successive row blocks
        (:meth:`_chains`) are multiplied as one taller block. The key holds the block shape, each
        K step's call but its in0 tile, and whether the run starts from DST values; a run left
        open at the end of the queue, or starting from some of its slots only, is its own kind."""
        rt, ct = run.key[2:]
        first, starts, calls = run.address
        written = {s is not None for s in starts}
        if self.runs.get(first) is run or len(written) > 1:
            return run.key
        return ("matmul", None, rt, ct, written.pop(), tuple((c[0], c[1], c[3], c[4], c[5], c[6]) for c in calls))

    def _chains(self, runs: list[_Node]) -> list[list[_Node]]:
        """``runs`` (of one kind, in call order) as chains of runs each reading the next rt rows
        of their in0 block (in0 tiles ``rt * kt`` after the previous run's at every K step)."""
        chains: list[list[_Node]] = []
        for run in runs:
            if chains:
                last = chains[-1][-1]
                rows = run.key[2] * run.address[2][0][5]
                if all(c[2] == p[2] + rows for c, p in zip(run.address[2], last.address[2])):
                    chains[-1].append(run)
                    continue
            chains.append([run])
        return chains

    def _chain_values(self, chain: list[_Node]) -> list:
        """The output blocks of a chain of matmul runs, multiplied as one block of all their rows
        (each element the same sum of the same products as run by run): each run's (lanes, tiles,
        1024) values, a view of the queue's array of run blocks."""
        ctx = self.ctx
        rt, ct = chain[0].key[2:4]
        tiles = rt * ct
        starts = [s for run in chain for s in run.address[1]]
        started = starts[0] is not None
        slots = np.empty((ctx.L, len(starts), tm.TILE_ELEMS), ctx.dst.dtype)
        if started:
            stacked = self._stacked(starts)
            in_halves(lambda lanes: np.copyto(slots[lanes], stacked[:, lanes].swapaxes(0, 1)), ctx.L, slots.size)
        ctx.matmul_values(slots, started, rt * len(chain), ct, chain[0].address[2])     # the first run's K steps
        blocks = []
        for run in chain:
            every, first = self.run_blocks[run]
            blocks.append(every[first:first + tiles])

        def copy_out(lanes: slice) -> None:
            for i, block in enumerate(blocks):
                np.copyto(block[:, lanes], slots[lanes, i * tiles:(i + 1) * tiles].swapaxes(0, 1))

        in_halves(copy_out, ctx.L, slots.size)
        return [block.swapaxes(0, 1) for block in blocks]

    def _initial(self, slot: int) -> np.ndarray:
        """What DST slot ``slot`` held before the queue, (lanes, 1024)."""
        return self.ctx.dst[self.ctx.rows, slot] if self.initial is None else self.initial[:, slot]

    def _run_values(self, run: _Node, out: np.ndarray) -> bool:
        """A matmul run's output block into ``out`` (tiles, lanes, 1024): its calls made on the
        context, onto the values its slots held when it started, and multiplied. False when the
        run is still open at the end of the queue (nothing written)."""
        ctx = self.ctx
        first, starts, calls = run.address
        tiles = run.key[2] * run.key[3]
        written = [s is not None for s in starts]
        if any(written):
            zero = np.zeros((ctx.L, tm.TILE_ELEMS), ctx.dst.dtype)
            ctx.dst[ctx.rows, first:first + tiles] = np.stack(
                [zero if s is None else self._initial(s[1]) if s.__class__ is tuple else s.value for s in starts], axis=1)
        ctx.dst_written[first:first + tiles] = written
        for cb0, cb1, t0, t1, flip, kt, name in calls:
            (cb0, st0), (cb1, st1) = ctx._cb(cb0, name), ctx._cb(cb1, name)
            ctx.matmul_accumulate(cb0, st0, cb1, st1, t0, t1, first, flip, run.key[2], run.key[3], kt, name)
        if self.runs.get(first) is run:
            return False                      # still open when the queue ends: left pending, as the calls leave it
        ctx._flush_matmul(first, first + tiles)
        np.copyto(out, ctx.dst[ctx.rows, first:first + tiles].swapaxes(0, 1))
        return True

    def _inputs(self, nodes: list[_Node], k: int) -> np.ndarray:
        """Input ``k`` of every node as float32 values (nodes, lanes, 1024), read only."""
        return self._stacked([n.inputs[k] for n in nodes]).astype(np.float32, copy=False)

    def _stacked(self, sources: list) -> np.ndarray:
        """The values of ``sources`` (nodes or ``(INITIAL, slot)``) one above the other, (sources,
        lanes, 1024), read only: a view when they are consecutive values of one computed array (a
        group of nodes, a matmul run's block, DST as the queue found it), else a stack."""
        origins = [(self.initial_slots, s[1]) if s.__class__ is tuple else s.origin for s in sources]
        base = origins[0][0] if origins[0] is not None else None
        if base is not None and all(o is not None and o[0] is base for o in origins):
            first = origins[0][1]
            if all(o[1] == first + i for i, o in enumerate(origins)):
                return base[first:first + len(origins)]
            return base[[o[1] for o in origins]]
        return np.stack([self._initial(s[1]) if s.__class__ is tuple else s.value for s in sources])

    def _tiles(self, addresses: list[int], ps: int) -> np.ndarray:
        """Bytes of the L1 pages at ``addresses`` on every lane: (pages, lanes, page size)."""
        ctx = self.ctx
        return ctx.dev.l1.read(ctx.row_idx[None, :], np.asarray(addresses, dtype=np.int64)[:, None], ps)

    def _group_values(self, key: tuple, nodes: list[_Node]) -> np.ndarray:
        ctx = self.ctx
        kind = key[0]
        if kind == "matmul" and key[1] is None:       # runs that chain: one block each chain
            return [value for chain in self._chains(nodes) for value in
                    (self._chain_values(chain) if len(chain) > 1 else self._group_values(chain[0].key, chain))]
        if kind == "matmul":                  # into the queue's array of run blocks (compute_values)
            values = []
            for run in nodes:
                blocks, first = self.run_blocks[run]
                block = blocks[first:first + key[2] * key[3]]
                if self._run_values(run, block):
                    values.append(block.swapaxes(0, 1))
                else:
                    del self.run_blocks[run]
                    values.append(None)
            return values
        if kind == "part":                    # (None: a part of a run left pending, which nothing reads)
            for n in nodes:
                run = self.run_blocks.get(n.inputs[0])
                n.origin = None if run is None else (run[0], run[1] + key[1])
            return [None if n.origin is None else n.origin[0][n.origin[1]] for n in nodes]
        if kind in ("copy", "bcast"):
            ps, fmt, to_dest = key[1:4]
            values = ctx._copied_values(self._tiles([n.address for n in nodes], ps), fmt, to_dest)
            if kind == "bcast":
                values = tm.broadcast_values(key[4], values)
        elif kind == "fpu":
            _, op, bcast, (ps_a, fmt_a), (ps_b, fmt_b) = key
            a = ctx._unpacked_values(self._tiles([n.address[0] for n in nodes], ps_a), fmt_a, fpu=True)
            b = ctx._unpacked_values(self._tiles([n.address[1] for n in nodes], ps_b), fmt_b, fpu=True)
            values = tm.fpu_binary_values(op, bcast, a, b, ctx.value_fidelity)
        elif kind == "unary":
            _, name, params = key
            x = np.zeros((len(nodes), ctx.L, tm.TILE_ELEMS), np.float32) if name == "fill" else self._inputs(nodes, 0)
            values = tm.sfpu_unary_values(name, x, params, ctx.fp32_dest)
        else:
            values = tm.sfpu_binary_values(key[1], self._inputs(nodes, 0), self._inputs(nodes, 1), ctx.fp32_dest)
        return values.astype(ctx.dst.dtype, copy=False)     # DST holds them at its precision

    def _pack_values(self) -> None:
        ctx = self.ctx
        by_format: dict[tuple, list[_Node]] = {}
        for node in self.packs:
            by_format.setdefault(node.key, []).append(node)
        for (_, ps, fmt), nodes in by_format.items():
            values = self._stacked([n.inputs[0] for n in nodes])
            raw = tm.pack(values, fmt).reshape(len(nodes), ctx.L, ps)
            ctx.dev.l1.write(ctx.row_idx[None, :], np.asarray([n.address for n in nodes], dtype=np.int64)[:, None],
                             raw)

    # -- time -------------------------------------------------------------------------------

    def apply_time(self) -> None:
        """The planned charges in call order, with the calls' arithmetic."""
        ctx = self.ctx
        if ctx.L == 1 or (len(self.charges) > 8 and _uniform_clocks(ctx, self.hand_overs > 0)
                          and all(k != CALL for k, _ in self.charges)):
            self._apply_time_one_lane()
            return
        unpack, math, pack = ctx.unpack_clock, ctx.math_clock, ctx.pack_clock
        busy, engine = ctx.busy, ctx.engine_busy
        for kind, cycles in self.charges:
            if kind == CALL:
                ctx.busy, ctx.engine_busy = busy, engine
                name, args, kwargs = cycles
                getattr(ctx, name)(*args, **kwargs)
                busy = ctx.busy
                continue
            if kind == UNPACK:
                unpack += cycles
                engine[0] += cycles
            elif kind == PACK:
                pack += cycles
                engine[2] += cycles
            elif kind >= ACQUIRE:
                if kind == ACQUIRE:
                    ctx.sync_to(ctx.section_free[ctx.section], math)
                elif kind == COMMIT:
                    np.maximum(math, unpack, out=math)
                    ctx.commit_time = math.copy()
                elif kind == WAIT:
                    ctx.sync_to(ctx.commit_time, pack)
                else:
                    ctx.free_section(pack.copy())
                if kind <= COMMIT:
                    math += cycles
                    engine[1] += cycles
                else:
                    pack += cycles
                    engine[2] += cycles
            else:
                if kind == MATH:
                    np.maximum(math, unpack, out=math)
                math += cycles
                engine[1] += cycles
            busy += cycles
        ctx.busy = busy
        self._count()

    def _apply_time_one_lane(self) -> None:
        """:meth:`apply_time` for one lane, or for lanes whose clocks are equal: the same double
        arithmetic on Python floats, once."""
        ctx = self.ctx
        clocks = ctx.unpack_clock, ctx.math_clock, ctx.pack_clock
        unpack, math, pack = (float(c[0]) for c in clocks)
        busy, engine = ctx.busy, ctx.engine_busy
        for kind, cycles in self.charges:
            if kind == CALL:
                for clock, value in zip(clocks, (unpack, math, pack)):
                    clock[0] = value
                ctx.busy, ctx.engine_busy = busy, engine
                name, args, kwargs = cycles
                getattr(ctx, name)(*args, **kwargs)
                unpack, math, pack = (float(c[0]) for c in clocks)
                busy = ctx.busy
                continue
            if kind == UNPACK:
                unpack += cycles
                engine[0] += cycles
            elif kind == PACK:
                pack += cycles
                engine[2] += cycles
            elif kind >= ACQUIRE:
                if kind == ACQUIRE:
                    free = float(ctx.section_free[ctx.section][0])
                    if free > math:
                        gap = free - math
                        _add_stall(ctx, gap)
                        math += gap
                elif kind == COMMIT:
                    if unpack > math:
                        math = unpack
                    ctx.commit_time = np.full(ctx.L, math)
                elif kind == WAIT:
                    committed = float(ctx.commit_time[0])
                    if committed > pack:
                        gap = committed - pack
                        _add_stall(ctx, gap)
                        pack += gap
                else:
                    ctx.free_section(np.full(ctx.L, pack))
                if kind <= COMMIT:
                    math += cycles
                    engine[1] += cycles
                else:
                    pack += cycles
                    engine[2] += cycles
            else:
                if kind == MATH and unpack > math:
                    math = unpack
                math += cycles
                engine[1] += cycles
            busy += cycles
        for clock, value in zip(clocks, (unpack, math, pack)):
            clock[:] = value
        ctx.busy = busy
        self._count()

    def _count(self) -> None:
        ctx = self.ctx
        counters, lanes = ctx.dev.counters, ctx.L
        counters.unpack_tiles += self.counts[0] * lanes
        counters.fpu_tiles += self.counts[1] * lanes
        counters.sfpu_tiles += self.counts[2] * lanes
        counters.pack_tiles += self.counts[3] * lanes
        counters.matmul_flops += MATMUL_TILE_FLOPS * self.matmul_tiles * lanes


def _uniform_clocks(ctx, hand_overs: bool = False) -> bool:
    """Whether every lane's unpack, math and pack clocks are equal (and, with ``hand_overs``, the
    times DST's sections were freed and last committed)."""
    clocks = (ctx.unpack_clock, ctx.math_clock, ctx.pack_clock)
    if hand_overs:
        clocks += (*ctx.section_free, ctx.commit_time)
    return all((c == c[0]).all() for c in clocks)


def _add_stall(ctx, gap: float) -> None:
    """A stall of ``gap`` cycles on every lane, counted as ``sync_to`` counts it."""
    if ctx.L == 1:
        ctx.stall[0] = ctx.stall.item() + gap
    else:
        ctx.stall += gap


def _uniform(values: np.ndarray) -> int:
    first = int(values[0])
    if (values != first).any():
        raise _Fallback
    return first
