"""tt_multicast_reuse (Stage D1½): blocks that several cores read from DRAM are read by one and
multicast to the others.

Reads: the ``@reader`` kernel's ``tile.read_block`` ops (each between the ``produce_begin`` and
``produce_end`` events of its circular buffer), ``tt.core_runtime_args`` / ``tt.runtime_args``
(each core's canonical arguments), ``tt.cb.*`` and ``tt.partition_mode``.

Reuse detection: for every core, the pages each read of a circular buffer starts at, in the
order the core reads them, are computed from the core's runtime arguments (the read's address
arithmetic evaluated over its enclosing loops). Cores whose sequences are equal read the same
blocks. Along each grid row (and each column) such cores form runs; a run of two or more is a
group: its first core (the sender) reads from DRAM and multicasts, the others receive. A buffer
multicasts along the axis whose groups save more reads (a GEMM's A along rows, B down columns);
a buffer no core shares is left alone, so the pass changes nothing unless it reduces DRAM reads.

Protocol per block (TT-Metal's ``matmul_multicore_reuse_mcast``), after ``cb_reserve_back``:

* receiver: set its *receiver* semaphore INVALID; ``noc_semaphore_inc`` the sender's *sender*
  semaphore (its pages are free); ``noc_semaphore_wait`` for VALID; then ``cb_push_back``.
* sender: read the block from DRAM; ``noc_semaphore_wait`` until its *sender* semaphore counts
  every receiver, reset it; ``noc_async_write_multicast`` the block to the same CB address on
  the receivers (every core reserved the same pages); ``noc_semaphore_set_multicast`` VALID into
  their *receiver* semaphores (same NOC, so after the data); then ``cb_push_back``.

Every core of a group reserves the same pages at the same step, so the sender multicasts to its
own write pointer; the reader ends with ``noc_async_write_barrier``.

Writes: ``tt.multicast_groups`` (per buffer: axis, semaphores, groups), ``tt.sync_barriers``
(two semaphores per buffer, on every active core), and per buffer six canonical runtime
arguments: ``<buffer>_mcast_role`` (0 reads alone, 1 sender, 2 receiver), the receivers'
rectangle start / end for a sender or the sender for a receiver as logical cores whose NOC
coordinates the host passes (``<buffer>_mcast_start_noc_x`` ... ``_end_noc_y``, with roles
``noc_x`` / ``noc_y`` of cores ``<buffer>_mcast_start`` / ``_end``), and
``<buffer>_mcast_receivers``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.builder import Builder
from xdsl.rewriter import InsertPoint

from tilefold.ir import tile
from tilefold.ir.attributes import cb_entries, get_attr, kernel_function, set_attr
from tilefold.ir.ttkernel import CBOp, api_call
from tilefold.passes.tilelang.affine import constant_op
from tilefold.passes.tilelang.configure_tensor_accessor import device_kernels

NONE, SENDER, RECEIVER = 0, 1, 2
INVALID, VALID = 0, 1
ARG_SUFFIXES = ("role", "start_noc_x", "start_noc_y", "end_noc_x", "end_noc_y", "receivers")
# the typed role of each argument: a plain value, or the NOC x / y of the start / end core
ARG_ROLES = {"start_noc_x": ("noc_x", "start"), "start_noc_y": ("noc_y", "start"),
             "end_noc_x": ("noc_x", "end"), "end_noc_y": ("noc_y", "end")}
# reads evaluated per core and buffer before the analysis gives up (the pass then changes nothing)
MAX_EVALUATIONS = 1 << 16

_MASK = (1 << 32) - 1
_BINARY: dict[type, Callable[[int, int], int]] = {
    arith.AddiOp: operator.add, arith.SubiOp: operator.sub, arith.MuliOp: operator.mul,
    arith.DivUIOp: operator.floordiv, arith.RemUIOp: operator.mod, arith.AndIOp: operator.and_,
    arith.OrIOp: operator.or_, arith.XOrIOp: operator.xor, arith.ShLIOp: operator.lshift,
    arith.ShRUIOp: operator.rshift, arith.MinUIOp: min, arith.MaxUIOp: max,
}


class _Unknown(Exception):
    """The read's address depends on something the analysis does not evaluate."""


def _evaluate(value: SSAValue, env: dict, args: dict[str, int], memo: dict) -> int:
    """``value`` on one core: ``env`` holds loop induction variables, ``args`` runtime arguments."""
    if value in env:
        return env[value]
    if value in memo:
        return memo[value]
    owner = value.owner
    if isinstance(owner, arith.ConstantOp):
        result = owner.value.value.data
    elif isinstance(owner, tile.RuntimeArgOp):
        if owner.arg_name.data not in args:
            raise _Unknown(owner.arg_name.data)
        result = args[owner.arg_name.data]
    elif type(owner) in _BINARY:
        a, b = (_evaluate(o, env, args, memo) for o in owner.operands)
        if b == 0 and isinstance(owner, (arith.DivUIOp, arith.RemUIOp)):
            raise _Unknown("division by zero")
        result = _BINARY[type(owner)](a, b) & _MASK
    else:
        raise _Unknown(getattr(owner, "name", "a block argument"))
    if not any(isinstance(v, BlockArgument) for v in env):   # loop-invariant only when no loop var is set
        memo[value] = result
    return result


def _loops(op: Operation, kernel: func.FuncOp) -> list[scf.ForOp]:
    """The loops around ``op`` in ``kernel``, outermost first (an ``scf.if`` or other region: unknown)."""
    loops = []
    parent = op.parent_op()
    while parent is not kernel:
        if not isinstance(parent, scf.ForOp):
            raise _Unknown(parent.name)
        loops.append(parent)
        parent = parent.parent_op()
    return loops[::-1]


def read_trace(read: tile.ReadBlockOp, kernel: func.FuncOp, args: dict[str, int]) -> tuple[int, ...]:
    """The first page of every block ``read`` moves on a core with runtime ``args``, in order."""
    loops = _loops(read, kernel)
    trace: list[int] = []

    def walk(depth: int, env: dict) -> None:
        if depth == len(loops):
            trace.append(_evaluate(read.first_page, env, args, {}))
            if len(trace) > MAX_EVALUATIONS:
                raise _Unknown("too many reads")
            return
        loop = loops[depth]
        lb, ub, step = (_evaluate(v, env, args, {}) for v in (loop.lb, loop.ub, loop.step))
        for v in range(lb, ub, max(step, 1)):
            walk(depth + 1, {**env, loop.body.block.args[0]: v})

    walk(0, {})
    return tuple(trace)


def _runs(cores: list[tuple[int, int]], key: dict, axis: str) -> list[list[tuple[int, int]]]:
    """Runs of two or more cores next to each other along ``axis`` with equal ``key``."""
    along = 0 if axis == "row" else 1
    lines: dict[int, list[tuple[int, int]]] = {}
    for core in cores:
        lines.setdefault(core[1 - along], []).append(core)
    runs = []
    for line in lines.values():
        line.sort(key=lambda c: c[along])
        run = [line[0]]
        for core in line[1:]:
            if core[along] == run[-1][along] + 1 and key[core] == key[run[0]]:
                run.append(core)
                continue
            if len(run) > 1:
                runs.append(run)
            run = [core]
        if len(run) > 1:
            runs.append(run)
    return runs


def multicast_groups(kernel: func.FuncOp, reads: list[tile.ReadBlockOp], rows: list[list[int]],
                     names: list[str]) -> tuple[str, list[list[tuple[int, int]]]] | None:
    """The axis and the runs (sender first) of the cores that read the same blocks through
    ``reads`` (all of one buffer), or None when no two neighbouring cores do."""
    key = {}
    for row in rows:
        args = dict(zip(names, row[2:]))
        try:
            key[(row[0], row[1])] = tuple(read_trace(r, kernel, args) for r in reads)
        except _Unknown:
            return None
    cores = list(key)
    best = None
    for axis in ("row", "column"):
        runs = _runs(cores, key, axis)
        saved = sum(len(run) - 1 for run in runs)
        if saved and (best is None or saved > best[0]):
            best = (saved, axis, runs)
    return None if best is None else (best[1], best[2])


def _produce_events(read: tile.ReadBlockOp) -> tuple[tile.CbEventOp, tile.CbEventOp] | None:
    before, after = read.prev_op, read.next_op
    ok = (isinstance(before, tile.CbEventOp) and before.event == "produce_begin" and before.cb_index == read.cb_index
          and isinstance(after, tile.CbEventOp) and after.event == "produce_end" and after.cb_index == read.cb_index)
    return (before, after) if ok else None


class _Ops:
    """Appends ops to a list (an ``scf.if`` branch), located at ``loc``."""

    def __init__(self, loc):
        self.ops: list[Operation] = []
        self.loc = loc

    def __call__(self, op: Operation) -> Operation:
        op.location = self.loc
        self.ops.append(op)
        return op

    def c(self, v: int) -> SSAValue:
        return self(constant_op(v)).result

    def false(self) -> SSAValue:
        return self(arith.ConstantOp.from_int_and_width(0, 1)).result

    def cb(self, index: int) -> SSAValue:
        return self(CBOp(self.c(index))).result

    def call(self, name: str, *operands) -> Operation:
        return self(api_call(name, list(operands)))

    def done(self) -> list[Operation]:
        return [*self.ops, scf.YieldOp()]


class TTMulticastReuse(ModulePass):
    """Read blocks several cores share once and multicast them (see the module docstring)."""

    name = "tt-multicast-reuse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        host = kernel_function(op)
        if get_attr(host, "tt.partition_mode", None) != "global" or "tt.multicast_groups" in host.attributes:
            return
        reader = next((k for k in device_kernels(op) if k.sym_name.data == get_attr(host, "tt.kernels").get("reader")),
                      None)
        if reader is None:
            return
        names = list(get_attr(host, "tt.runtime_args"))      # records, extended below
        rows = [list(r) for r in get_attr(host, "tt.core_runtime_args")]
        by_cb: dict[int, list[tile.ReadBlockOp]] = {}
        for read in reader.walk():
            if isinstance(read, tile.ReadBlockOp):
                by_cb.setdefault(read.cb_index, []).append(read)
        produced = {e.cb_index for e in reader.walk() if isinstance(e, tile.CbEventOp) and e.event == "produce_begin"}
        entries = cb_entries(host)
        buffers = {cb["index"]: name for name, cb in entries.items()}
        groups, barriers, plans = {}, {}, []
        for cb, reads in sorted(by_cb.items()):
            events = [_produce_events(r) for r in reads]
            begins = sum(1 for e in reader.walk() if isinstance(e, tile.CbEventOp) and e.event == "produce_begin"
                         and e.cb_index == cb)
            if cb not in produced or None in events or begins != len(reads):
                continue
            found = multicast_groups(reader, reads, rows, [a["name"] for a in names])
            if found is None:
                continue
            axis, runs = found
            buffer = buffers[cb]
            sender_sem, receiver_sem = 2 * len(groups), 2 * len(groups) + 1
            groups[buffer] = {"cb": cb, "axis": axis, "sender_sem": sender_sem, "receiver_sem": receiver_sem,
                              "groups": [[*run[0], *run[1], *run[-1]] for run in runs]}
            barriers[f"{buffer}_sender"] = {"id": sender_sem, "initial_value": 0, "buffer": buffer, "side": "sender"}
            barriers[f"{buffer}_receiver"] = {"id": receiver_sem, "initial_value": 0, "buffer": buffer,
                                              "side": "receiver"}
            plans.append((buffer, cb, reads, runs, entries[buffer]["page_size"]))
        if not plans:
            return
        set_attr(host, "tt.multicast_groups", groups)
        set_attr(host, "tt.sync_barriers", barriers)
        entry = reader.body.block.first_op
        for buffer, cb, reads, runs, page_size in plans:
            self._add_args(names, rows, buffer, runs)
            self._rewrite(reader, entry, buffer, cb, reads, page_size, groups[buffer])
        set_attr(host, "tt.runtime_args", names)
        set_attr(host, "tt.core_runtime_args", rows)
        ret = reader.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        barrier = api_call("noc_async_write_barrier", [])
        Builder(InsertPoint.before(ret)).insert(barrier)
        barrier.location = ret.location

    @staticmethod
    def _add_args(names: list[dict], rows: list[list[int]], buffer: str, runs) -> None:
        role = {}
        for run in runs:
            role[run[0]] = [SENDER, *run[1], *run[-1], len(run) - 1]
            for core in run[1:]:
                role[core] = [RECEIVER, *run[0], *run[0], 0]
        for s in ARG_SUFFIXES:
            kind, end = ARG_ROLES.get(s, (None, None))
            names.append({"name": f"{buffer}_mcast_{s}"} if kind is None else
                         {"name": f"{buffer}_mcast_{s}", "role": kind, "core": f"{buffer}_mcast_{end}"})
        for row in rows:
            core = (row[0], row[1])
            row += role.get(core, [NONE, *core, *core, 0])

    @staticmethod
    def _rewrite(reader: func.FuncOp, entry: Operation, buffer: str, cb: int, reads, page_size: int,
                 group: dict) -> None:
        head = _Ops(reads[0].location)
        arg = {s: head(tile.RuntimeArgOp(f"{buffer}_mcast_{s}")).result for s in ARG_SUFFIXES}
        for s, v in arg.items():
            v.name_hint = f"{buffer}_{s}"
        sender_sem = head.call("get_semaphore", head.c(group["sender_sem"])).results[0]
        receiver_sem = head.call("get_semaphore", head.c(group["receiver_sem"])).results[0]
        sender_sem.name_hint, receiver_sem.name_hint = f"{buffer}_sender_sem", f"{buffer}_receiver_sem"
        Builder(InsertPoint.before(entry)).insert(head.ops)
        for read in reads:
            pages = read.next_op.num_pages
            at = _Ops(read.location)
            is_receiver = at(arith.CmpiOp(arg["role"], at.c(RECEIVER), "eq")).result
            # receiver: announce free pages to the sender, wait until the block has arrived
            recv = _Ops(read.location)
            recv.call("noc_semaphore_set", receiver_sem, recv.c(INVALID))
            sender_noc = recv.call("get_noc_addr_xy", arg["start_noc_x"], arg["start_noc_y"], sender_sem).results[0]
            recv.call("noc_semaphore_inc", sender_noc, recv.c(1))
            recv.call("noc_semaphore_wait", receiver_sem, recv.c(VALID))
            # sender: once every receiver is ready, multicast the block, then VALID
            send = _Ops(read.location)
            send.call("noc_semaphore_wait", sender_sem, arg["receivers"])
            send.call("noc_semaphore_set", sender_sem, send.c(0))
            l1 = send.call("get_write_ptr", send.cb(cb)).results[0]
            rect = (arg["start_noc_x"], arg["start_noc_y"], arg["end_noc_x"], arg["end_noc_y"])
            data = send.call("get_noc_multicast_addr", *rect, l1).results[0]
            send.call("noc_async_write_multicast", l1, data, send.c(pages * page_size), arg["receivers"], send.false())
            send.call("noc_semaphore_set", receiver_sem, send.c(VALID))
            sem = send.call("get_noc_multicast_addr", *rect, receiver_sem).results[0]
            send.call("noc_semaphore_set_multicast", receiver_sem, sem, arg["receivers"], send.false())
            check = _Ops(read.location)
            is_sender = check(arith.CmpiOp(arg["role"], check.c(SENDER), "eq")).result
            if_send = check(scf.IfOp(is_sender, [], send.done()))
            branch = scf.IfOp(is_receiver, [], recv.done(), [else_end := scf.YieldOp()])
            branch.location = read.location
            Builder(InsertPoint.before(read)).insert([*at.ops, branch])
            read.detach()
            Builder(InsertPoint.before(else_end)).insert([read, *check.ops])


__all__ = ["TTMulticastReuse", "multicast_groups", "read_trace"]
