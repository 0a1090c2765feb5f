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


class _KernelCounts:
    """One kernel's blocks of each buffer, counted in program order: for each reserve / wait /
    push / pop the count before it and how many it adds (None once a count depends on run-time
    values), and the counts at each meeting point it takes part in."""

    KINDS = {ttl.CBReserveOp: "reserve", ttl.CBWaitOp: "wait", ttl.CBPushOp: "push", ttl.CBPopOp: "pop"}

    def __init__(self, kernel: func.FuncOp, point_attr: str):
        self.name = kernel.sym_name.data
        self.ops: dict[tuple[int, str], list] = {}        # (buffer, kind) -> [(count before, count, op)]
        self.at: dict[tuple[str, int], tuple[dict, object]] = {}   # (point, occurrence) -> (counts, op)
        self.unclear: set[str] = set()                     # points met an unknown number of times
        counts: dict[tuple[int, str], int | None] = {}
        seen: dict[str, int] = {}
        for op in kernel.walk():
            kind = self.KINDS.get(type(op))
            if kind is not None and isinstance(op.cb.owner, ttl.BindCBOp):
                key = (op.cb.owner.index, kind)
                runs = executions(op)
                blocks = op.blocks if kind in ("push", "pop") else 1
                before = counts.get(key, 0)
                added = None if runs is None or before is None else runs * blocks
                self.ops.setdefault(key, []).append((before, added, op))
                counts[key] = None if added is None else before + added
            if point_attr in op.attributes and not isinstance(op, ttl.CBDrainedOp):
                point = op.attributes[point_attr].data
                occurrence = seen[point] = seen.get(point, 0) + 1
                if executions(op) != 1:
                    self.unclear.add(point)
                self.at[(point, occurrence - 1)] = (dict(counts), op)

    def uses(self, index: int, kinds: tuple[str, ...]) -> bool:
        return any((index, kind) in self.ops for kind in kinds)

    def first_past(self, index: int, kind: str, limit: int):
        """The op of ``kind`` on buffer ``index`` that takes the count past ``limit``."""
        return next((op for before, added, op in self.ops.get((index, kind), [])
                     if before is not None and added and before + added > limit), None)


def check_meeting_counts(module: ModuleOp, names: dict[int, str], capacities: dict[int, int],
                         restored: dict[str, set[int]], point_attr: str) -> None:
    """Raise at a meeting point of kernels (``ttl.reconfigure_dfbs`` / ``ttl.reset_dfbs``, marked
    with ``point_attr``) that its buffers' blocks cannot pass, when that is known before running:
    every kernel meets there once per node, and the producer and consumer kernel of a buffer count
    its blocks before the point with compile-time trip counts. The kernels wait for one another
    there, so a consumer waiting before the point for more blocks than its producer pushes before
    it, or a producer reserving more than the consumer frees before it plus ``block_count``, waits
    forever; and a buffer that starts over at the point (``restored``: point -> buffer indices)
    would lose a block pushed before it and popped only after. Other programs are left to the
    simulator, which reports the same mistakes when it runs them."""
    kernels = [_KernelCounts(kernel, point_attr) for kernel in module.ops if isinstance(kernel, func.FuncOp)]
    meetings = sorted({at for k in kernels for at in k.at if at[0] not in k.unclear}, key=lambda at: at[1])
    for index, name in names.items():
        producers = [k for k in kernels if k.uses(index, ("reserve", "push"))]
        consumers = [k for k in kernels if k.uses(index, ("wait", "pop"))]
        if len(producers) != 1 or len(consumers) != 1:
            continue
        (producer,), (consumer,) = producers, consumers
        for point, occurrence in meetings:
            if any(point in k.unclear or (point, occurrence) not in k.at for k in (producer, consumer)):
                continue
            (made, made_at), (taken, taken_at) = producer.at[(point, occurrence)], consumer.at[(point, occurrence)]
            pushed, reserved = made.get((index, "push"), 0), made.get((index, "reserve"), 0)
            waited, popped = taken.get((index, "wait"), 0), taken.get((index, "pop"), 0)
            if None in (pushed, reserved, waited, popped):
                continue
            where, there = source_location(made_at), source_location(taken_at)
            line = f" (line {where.line})" if where else ""
            if waited > pushed:
                line = f" (line {there.line})" if there else ""
                raise KernelError(f"{name}: {consumer.name} waits for block {pushed + 1} before the meeting of the "
                                  f"kernels{line}, but {producer.name} pushes only {pushed} before it; the kernels "
                                  "wait for one another there, so this wait waits forever — push the block before "
                                  "the point, or wait for it after the point",
                                  source_location(consumer.first_past(index, "wait", pushed) or taken_at))
            capacity = capacities.get(index, 1)
            if reserved > popped + capacity:
                raise KernelError(f"{name}: {producer.name} reserves block {popped + capacity + 1} before the meeting "
                                  f"of the kernels{line}, but {consumer.name} frees only {popped} before it and the "
                                  f"buffer holds {capacity} (block_count={capacity}); the kernels wait for one another "
                                  "there, so this reserve waits forever — pop the blocks before the point, or raise "
                                  "block_count",
                                  source_location(producer.first_past(index, "reserve", popped + capacity) or made_at))
            if pushed > popped and index in restored.get(point, ()):
                raise KernelError(f"{name}: {producer.name} pushes {pushed} block(s) before the meeting of the "
                                  f"kernels{line} and {consumer.name} pops {popped} before it; the buffer starts over "
                                  "at the point, so the rest are lost and a wait for them after the point waits "
                                  "forever — pop every block pushed before the point before reaching it (or keep the "
                                  "buffer's state: discard_dfb_state=False, or leave it out of the reset)", where)
