"""Can each dataflow buffer's blocks pass the points where kernels meet?

Reads: the front end's ``ttl`` module of one operation call, with the meeting points of
``ttl.reconfigure_dfbs`` / ``ttl.reset_dfbs`` still marked (:mod:`.dfb_boundaries`). Writes:
nothing; raises one :class:`KernelError` at the user's reserve, wait or point line when blocks
cannot pass a point. The kernels wait for one another there, so a consumer waiting before the
point for more blocks than its producer pushes before it, or a producer reserving more than the
consumer frees before it plus ``block_count``, waits forever; and a buffer that starts over at the
point loses a block pushed before it and popped only after.

Each kernel is followed through its loops and branches on compile-time values (once, or on each
node when what it does depends on the node's coordinates), counting each buffer's reserves,
waits, pushes and pops up to each meeting. A kernel whose path depends on anything else, or more
than :data:`MAX_STEPS` ops to follow (all kernels on all nodes together), leaves the operation to
the simulator, which reports the same mistakes when it runs it.
"""

from __future__ import annotations

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp

from tilefold.errors import KernelError
from tilefold.ir import ttl
from tilefold.ir.integer_arith import BINARY, CMPI, DIVISIONS
from tilefold.ir.locations import source_location


_SAME_VALUE = (arith.IndexCastOp, arith.ExtUIOp, arith.ExtSIOp, arith.TruncIOp)
_COUNTED = {ttl.CBReserveOp: "reserve", ttl.CBWaitOp: "wait", ttl.CBPushOp: "push", ttl.CBPopOp: "pop"}
# ops the kernels are followed through (all of them, on every node) before the meeting check gives up
MAX_STEPS = 1 << 18


class _Unknown(Exception):
    """What a kernel does depends on something the count does not evaluate."""


class _NeedsNode(Exception):
    """What a kernel does depends on the node it runs on."""


class _KernelCounts:
    """One kernel followed through its loops and branches (compile-time values, and the node's
    coordinates when ``node`` is given): each reserve / wait / push / pop of a buffer with the count
    before it, and the counts at each meeting point it reaches (in order)."""

    def __init__(self, kernel: func.FuncOp, point_attr: str, node: tuple[int, int] | None, steps: list):
        self.name = kernel.sym_name.data
        self.node = node
        self.point_attr = point_attr
        self.events: dict[tuple[int, str], list] = {}          # (buffer, kind) -> [(count before, count, op)]
        self.at: dict[tuple[str, int], tuple[dict, object]] = {}   # (point, occurrence) -> (counts, op)
        self.counts: dict[tuple[int, str], int] = {}
        self.seen: dict[str, int] = {}
        self.steps = steps              # [ops followed so far], shared by every kernel and node of the check
        self._run(kernel.body.block, {})

    def _value(self, value, env: dict):
        if value in env:
            known = env[value]
            if known is None:               # carried by a loop or an if, and not an integer we follow
                raise _Unknown("a value the count does not follow")
            return known
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
            self.steps[0] += 1
            if self.steps[0] > MAX_STEPS:
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
            if type(op) in BINARY:
                a, b = (self._value(v, env) for v in op.operands)
                if b == 0 and isinstance(op, DIVISIONS):
                    raise _Unknown("division by zero")
                env[op.results[0]] = BINARY[type(op)](a, b)
            elif isinstance(op, arith.CmpiOp):
                a, b = (self._value(v, env) for v in op.operands)
                env[op.results[0]] = int(CMPI[op.predicate.value.data](a, b))
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
                return [self._known(v, env) for v in op.operands] if isinstance(op, scf.YieldOp) else []
            elif op.regions and any(self._matters(inner) for region in op.regions for inner in region.walk()):
                raise _Unknown(op.name)
        return []

    def _known(self, value, env: dict):
        """``value`` when the count follows it, else None (a block, a float, a run-time value)."""
        try:
            return self._value(value, env)
        except _Unknown:
            return None

    def _matters(self, op) -> bool:
        return type(op) in _COUNTED or self.point_attr in op.attributes

    def _loop(self, loop: scf.ForOp, env: dict) -> None:
        lb, ub, step = (self._value(v, env) for v in (loop.lb, loop.ub, loop.step))
        if step <= 0:
            raise _Unknown("a loop step that is not positive")
        block = loop.body.block
        carried = [self._known(v, env) for v in loop.iter_args]
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
    steps = [0]
    try:
        try:
            return [[_KernelCounts(k, point_attr, None, steps) for k in kernels]]
        except _NeedsNode:
            if not nodes:
                return None
            return [[_KernelCounts(k, point_attr, node, steps) for k in kernels] for node in nodes]
    except (_Unknown, _NeedsNode, ArithmeticError, ValueError):     # (a negative shift, say): left to the run
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
                                  f"of the kernels{line}{on}, but {consumer.name} frees only {popped} before it and "
                                  f"the buffer holds {capacity} (block_count={capacity}); the kernels wait for one another "
                                  "there, so this reserve waits forever — pop the blocks before the point, or raise "
                                  "block_count",
                                  source_location(producer.first_past(index, "reserve", popped + capacity) or made_at))
            if pushed > popped and index in restored.get(point, ()):
                raise KernelError(f"{name}: {producer.name} pushes {pushed} block(s) before the meeting of the "
                                  f"kernels{line}{on} and {consumer.name} pops {popped} before it; the buffer starts "
                                  "over at the point, so the rest are lost and a wait for them after the point waits "
                                  "forever — pop every block pushed before the point before reaching it (or keep the "
                                  "buffer's state: discard_dfb_state=False, or leave it out of the reset)", where)
