"""Do the producers and consumers of each dataflow buffer agree on how many blocks pass through it?

Reads: the front end's ``ttl`` module of one operation call (every kernel). Writes: nothing;
raises one :class:`KernelError` at the producer's line when, on every node, the kernels push a
different number of blocks into a buffer than they pop from it — a producer that pushes more than
the consumer takes would block forever once the buffer is full, a consumer that waits for more
would wait forever. A surplus the buffer holds (at most ``block_count`` blocks, such as the last
value of a running maximum nobody reads) only stays behind; the simulator warns of it
(:class:`~tilefold.errors.LeftoverBlocksWarning`). The same counts, taken up to each point where
kernels meet (:func:`check_meeting_counts`), find blocks that cannot pass the point.

Counts are exact where they can be known before running: each ``ttl.cb_push`` / ``ttl.cb_pop``
counts once per iteration of the loops around it when every such loop has compile-time bounds
and no runtime ``if`` encloses it. A buffer whose counts depend on the node or on runtime values
is left to the simulator, which reports the same mistake as a deadlock or as blocks left in the
buffer when the program ends.
"""

from __future__ import annotations

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp

from tilefold.errors import KernelError
from tilefold.ir import ttl
from tilefold.ir.locations import source_location


def constant_of(value) -> int | None:
    """The value of a constant integer (an ``arith.constant``), else None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def trip_count(loop: scf.ForOp) -> int | None:
    """How many iterations ``loop`` runs, or None when its bounds are not compile-time constants."""
    lb, ub, step = (constant_of(v) for v in (loop.lb, loop.ub, loop.step))
    if None in (lb, ub, step) or step == 0:
        return None
    return max(0, -(-(ub - lb) // step))


def executions(op) -> int | None:
    """How many times ``op`` runs on every node, or None when that depends on run-time values."""
    count = 1
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if isinstance(parent, scf.ForOp):
            trips = trip_count(parent)
            if trips is None:
                return None
            count *= trips
        elif isinstance(parent, scf.IfOp):
            return None
        parent = parent.parent_op()
    return count


def _kernel(op) -> func.FuncOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return parent


def check_one_producer_one_consumer(pushes: dict[int, list], pops: dict[int, list], names: dict[int, str]) -> None:
    """Raise when two kernels both push into (or both pop from) one buffer on every node: a circular
    buffer has one producer kernel and one consumer kernel."""
    for ops, role, verb in ((pushes, "producer", "pushes into"), (pops, "consumer", "pops from")):
        for index, found in ops.items():
            kernels: dict[str, object] = {}
            for op in found:
                kernel = _kernel(op)
                if kernel is not None and executions(op):          # runs on every node, unconditionally
                    kernels.setdefault(kernel.sym_name.data, op)
            if len(kernels) > 1:
                acquire = ttl.CBReserveOp if role == "producer" else ttl.CBWaitOp

                def acquired(op):       # the reserve() / wait() of the kernel, else the release
                    return next((o for o in _kernel(op).walk() if isinstance(o, acquire)
                                 and o.cb.owner.index == index), op)

                (first, a), (second, b) = [(k, acquired(op)) for k, op in list(kernels.items())[:2]]
                name = names.get(index, f"c_{index}")
                where = source_location(a)
                raise KernelError(f"{name} has two {role} kernels: {second} {verb} it, as {first} does"
                                  f"{f' (line {where.line})' if where else ''}; a dataflow buffer has one producer "
                                  f"kernel and one consumer kernel — make one buffer per {role}", source_location(b))


def check_block_counts(module: ModuleOp, names: dict[int, str], in_cpp: set[int] = frozenset()) -> None:
    """Raise when a buffer's pushes and pops differ on every node (see the module docstring), or
    when two kernels produce or consume one buffer; ``in_cpp``: buffers whose blocks called C++
    functions also move (their counts are not all in the IR), left out."""
    pushes: dict[int, list] = {}
    pops: dict[int, list] = {}
    for op in module.walk():
        if isinstance(op, (ttl.CBPushOp, ttl.CBPopOp)):
            index = op.cb.owner.index
            (pushes if isinstance(op, ttl.CBPushOp) else pops).setdefault(index, []).append(op)
    check_one_producer_one_consumer(pushes, pops, names)
    for index in (set(pushes) | set(pops)) - set(in_cpp):
        produced = [executions(op) and executions(op) * op.blocks for op in pushes.get(index, [])]
        consumed = [executions(op) and executions(op) * op.blocks for op in pops.get(index, [])]
        if None in produced or None in consumed:
            continue
        p, c = sum(produced), sum(consumed)
        if p == c:
            continue
        name = names.get(index, f"c_{index}")
        bind = (pushes.get(index) or pops[index])[0].cb.owner
        capacity = bind.properties["block_count"].value.data if "block_count" in bind.properties else \
            bind.attributes["block_count"].value.data
        if c == 0 and p <= capacity:
            continue        # a staging buffer nothing waits on: its blocks fit, none is ever freed
        if c == 0:
            raise KernelError(f"{name} is reserved {p} times but nothing waits on it, so no block is ever freed; "
                              f"reserve() number {capacity + 1} would wait forever (block_count={capacity}) — wait "
                              f"on the block ({name}.wait()) after using it, or raise block_count",
                              source_location(next((op for op in module.walk() if isinstance(op, ttl.CBReserveOp)
                                                    and op.cb.owner.index == index), pushes[index][-1])))
        if p > c and p - c <= capacity:
            continue        # the surplus stays in the buffer: the simulator warns of it
        if p > c:
            where = source_location(pushes[index][-1])
            raise KernelError(f"{name} receives {p} blocks from its producer but its consumer takes only {c}; the "
                              "producer would wait for room that never frees (or leave blocks behind) — make both "
                              "sides loop over the same number of blocks", where)
        where = source_location(pops[index][-1]) if pops.get(index) else None
        raise KernelError(f"{name} is waited for {c} times but its producer pushes only {p} blocks; the consumer "
                          "would wait forever — make both sides loop over the same number of blocks", where)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


_BINARY = {arith.AddiOp: lambda a, b: a + b, arith.SubiOp: lambda a, b: a - b, arith.MuliOp: lambda a, b: a * b,
           arith.FloorDivSIOp: lambda a, b: a // b, arith.DivSIOp: _trunc_div, arith.DivUIOp: lambda a, b: a // b,
           arith.CeilDivSIOp: _ceil_div, arith.CeilDivUIOp: _ceil_div,
           arith.RemSIOp: lambda a, b: a - _trunc_div(a, b) * b, arith.RemUIOp: lambda a, b: a % b,
           arith.AndIOp: lambda a, b: a & b, arith.OrIOp: lambda a, b: a | b, arith.XOrIOp: lambda a, b: a ^ b,
           arith.MinSIOp: min, arith.MaxSIOp: max, arith.MinUIOp: min, arith.MaxUIOp: max,
           arith.ShLIOp: lambda a, b: a << b, arith.ShRSIOp: lambda a, b: a >> b, arith.ShRUIOp: lambda a, b: a >> b}
_DIVISIONS = (arith.FloorDivSIOp, arith.DivSIOp, arith.DivUIOp, arith.CeilDivSIOp, arith.CeilDivUIOp, arith.RemSIOp,
              arith.RemUIOp)
# arith.cmpi predicates: eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge
_COMPARE = (lambda a, b: a == b, lambda a, b: a != b, lambda a, b: a < b, lambda a, b: a <= b, lambda a, b: a > b,
            lambda a, b: a >= b, lambda a, b: a < b, lambda a, b: a <= b, lambda a, b: a > b, lambda a, b: a >= b)
_SAME_VALUE = (arith.IndexCastOp, arith.ExtUIOp, arith.ExtSIOp, arith.TruncIOp)
_COUNTED = {ttl.CBReserveOp: "reserve", ttl.CBWaitOp: "wait", ttl.CBPushOp: "push", ttl.CBPopOp: "pop"}
# ops a kernel is followed through, per node, before the meeting check gives up on it
MAX_STEPS = 1 << 17


class _Unknown(Exception):
    """What a kernel does depends on something the count does not evaluate."""


class _NeedsNode(Exception):
    """What a kernel does depends on the node it runs on."""


class _KernelCounts:
    """One kernel followed through its loops and branches (compile-time values, and the node's
    coordinates when ``node`` is given): each reserve / wait / push / pop of a buffer with the count
    before it, and the counts at each meeting point it reaches (in order)."""

    def __init__(self, kernel: func.FuncOp, point_attr: str, node: tuple[int, int] | None):
        self.name = kernel.sym_name.data
        self.node = node
        self.point_attr = point_attr
        self.events: dict[tuple[int, str], list] = {}          # (buffer, kind) -> [(count before, count, op)]
        self.at: dict[tuple[str, int], tuple[dict, object]] = {}   # (point, occurrence) -> (counts, op)
        self.counts: dict[tuple[int, str], int] = {}
        self.seen: dict[str, int] = {}
        self.steps = 0
        self._run(kernel.body.block, {})

    def _value(self, value, env: dict):
        if value in env:
            return env[value]
        owner = value.owner
        if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
            return owner.value.value.data
        if isinstance(owner, ttl.NodeCoordOp) and owner.dim.value.data < 2:
            if self.node is None:
                raise _NeedsNode
            return self.node[owner.dim.value.data]
        raise _Unknown(getattr(owner, "name", "a block argument"))

    def _run(self, block, env: dict) -> list:
        """Follow the ops of ``block``; the values its terminator yields."""
        for op in block.ops:
            self.steps += 1
            if self.steps > MAX_STEPS:
                raise _Unknown("too many steps")
            kind = _COUNTED.get(type(op))
            if kind is not None and isinstance(op.cb.owner, ttl.BindCBOp):
                key = (op.cb.owner.index, kind)
                before = self.counts.get(key, 0)
                added = op.blocks if kind in ("push", "pop") else 1
                self.events.setdefault(key, []).append((before, added, op))
                self.counts[key] = before + added
            if self.point_attr in op.attributes and not isinstance(op, ttl.CBDrainedOp):
                point = op.attributes[self.point_attr].data
                occurrence = self.seen[point] = self.seen.get(point, 0) + 1
                self.at[(point, occurrence - 1)] = (dict(self.counts), op)
            if type(op) in _BINARY:
                a, b = (self._value(v, env) for v in op.operands)
                if b == 0 and isinstance(op, _DIVISIONS):
                    raise _Unknown("division by zero")
                env[op.results[0]] = _BINARY[type(op)](a, b)
            elif isinstance(op, arith.CmpiOp):
                a, b = (self._value(v, env) for v in op.operands)
                env[op.results[0]] = int(_COMPARE[op.predicate.value.data](a, b))
            elif isinstance(op, arith.SelectOp):
                env[op.results[0]] = self._value(op.operands[1 if self._value(op.operands[0], env) else 2], env)
            elif isinstance(op, _SAME_VALUE):
                env[op.results[0]] = self._value(op.operands[0], env)
            elif isinstance(op, scf.ForOp):
                self._loop(op, env)
            elif isinstance(op, scf.IfOp):
                region = op.true_region if self._value(op.cond, env) else op.false_region
                yielded = self._run(region.block, env) if region.blocks else []
                for result, value in zip(op.results, yielded):
                    env[result] = value
            elif isinstance(op, (scf.YieldOp, func.ReturnOp)):
                return [self._value(v, env) if not isinstance(v.type, ttl.CircularBufferType) else None
                        for v in op.operands] if isinstance(op, scf.YieldOp) else []
            elif op.regions and any(self._matters(inner) for region in op.regions for inner in region.walk()):
                raise _Unknown(op.name)
        return []

    def _matters(self, op) -> bool:
        return type(op) in _COUNTED or self.point_attr in op.attributes

    def _loop(self, loop: scf.ForOp, env: dict) -> None:
        lb, ub, step = (self._value(v, env) for v in (loop.lb, loop.ub, loop.step))
        if step <= 0:
            raise _Unknown("a loop step that is not positive")
        block = loop.body.block
        carried = [self._value(v, env) for v in loop.iter_args]
        for i in range(lb, ub, step):
            env[block.args[0]] = i
            for arg, value in zip(block.args[1:], carried):
                env[arg] = value
            carried = self._run(block, env)
        for result, value in zip(loop.results, carried):
            env[result] = value

    def first_past(self, index: int, kind: str, limit: int):
        """The op of ``kind`` on buffer ``index`` that takes the count past ``limit``."""
        return next((op for before, added, op in self.events.get((index, kind), []) if before + added > limit), None)


def _followed(kernels: list, point_attr: str, nodes) -> list[list[_KernelCounts]] | None:
    """Every kernel followed once (the same on every node), or once per node of ``nodes`` when one
    of them depends on the node; None when that cannot be known before running."""
    try:
        try:
            return [[_KernelCounts(k, point_attr, None) for k in kernels]]
        except _NeedsNode:
            if not nodes:
                return None
            return [[_KernelCounts(k, point_attr, node) for k in kernels] for node in nodes]
    except (_Unknown, _NeedsNode):
        return None


def check_meeting_counts(module: ModuleOp, names: dict[int, str], capacities: dict[int, int],
                         restored: dict[str, set[int]], point_attr: str, nodes=None) -> None:
    """Raise at a meeting point of kernels (``ttl.reconfigure_dfbs`` / ``ttl.reset_dfbs``, marked
    with ``point_attr``) that its buffers' blocks cannot pass, when that is known before running:
    the kernels are followed through their loops and branches (compile-time values, and the
    coordinates of each node of ``nodes`` when they depend on them), counting each buffer's blocks
    up to each meeting. The kernels wait for one another there, so a consumer waiting before the
    point for more blocks than its producer pushes before it, or a producer reserving more than the
    consumer frees before it plus ``block_count``, waits forever; and a buffer that starts over at
    the point (``restored``: point -> buffer indices) would lose a block pushed before it and popped
    only after. Other programs are left to the simulator, which reports the same mistakes when it
    runs them."""
    kernels = [kernel for kernel in module.ops if isinstance(kernel, func.FuncOp)]
    if not any(point_attr in op.attributes for op in module.walk()):
        return
    for followed in _followed(kernels, point_attr, nodes) or []:
        _check_node(followed, names, capacities, restored)


def _check_node(kernels: list[_KernelCounts], names, capacities, restored) -> None:
    meetings = sorted({at for k in kernels for at in k.at}, key=lambda at: at[1])
    for index, name in names.items():
        producers = [k for k in kernels if (index, "reserve") in k.events or (index, "push") in k.events]
        consumers = [k for k in kernels if (index, "wait") in k.events or (index, "pop") in k.events]
        if len(producers) != 1 or len(consumers) != 1:
            continue
        (producer,), (consumer,) = producers, consumers
        on = f" on node {producer.node}" if producer.node is not None else ""
        for point, occurrence in meetings:
            if any((point, occurrence) not in k.at for k in (producer, consumer)):
                continue
            (made, made_at), (taken, taken_at) = producer.at[(point, occurrence)], consumer.at[(point, occurrence)]
            pushed, reserved = made.get((index, "push"), 0), made.get((index, "reserve"), 0)
            waited, popped = taken.get((index, "wait"), 0), taken.get((index, "pop"), 0)
            where, there = source_location(made_at), source_location(taken_at)
            if waited > pushed:
                line = f" (line {there.line})" if there else ""
                raise KernelError(f"{name}: {consumer.name} waits for block {pushed + 1} before the meeting of the "
                                  f"kernels{line}{on}, but {producer.name} pushes only {pushed} before it; the kernels "
                                  "wait for one another there, so this wait waits forever — push the block before "
                                  "the point, or wait for it after the point",
                                  source_location(consumer.first_past(index, "wait", pushed) or taken_at))
            line = f" (line {where.line})" if where else ""
            capacity = capacities.get(index, 1)
            if reserved > popped + capacity:
                raise KernelError(f"{name}: {producer.name} reserves block {popped + capacity + 1} before the meeting "
                                  f"of the kernels{line}{on}, but {consumer.name} frees only {popped} before it and the "
                                  f"buffer holds {capacity} (block_count={capacity}); the kernels wait for one another "
                                  "there, so this reserve waits forever — pop the blocks before the point, or raise "
                                  "block_count",
                                  source_location(producer.first_past(index, "reserve", popped + capacity) or made_at))
            if pushed > popped and index in restored.get(point, ()):
                raise KernelError(f"{name}: {producer.name} pushes {pushed} block(s) before the meeting of the "
                                  f"kernels{line}{on} and {consumer.name} pops {popped} before it; the buffer starts "
                                  "over at the point, so the rest are lost and a wait for them after the point waits "
                                  "forever — pop every block pushed before the point before reaching it (or keep the "
                                  "buffer's state: discard_dfb_state=False, or leave it out of the reset)", where)
