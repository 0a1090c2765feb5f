"""Do the producers and consumers of each dataflow buffer agree on how many blocks pass through it?

Reads: the front end's ``ttl`` module of one operation call (every kernel). Writes: nothing;
raises one :class:`KernelError` at the producer's line when, on every node, the kernels push a
different number of blocks into a buffer than they pop from it — a producer that pushes more than
the consumer takes would block forever once the buffer is full, a consumer that waits for more
would wait forever. A surplus the buffer holds (at most ``block_count`` blocks, such as the last
value of a running maximum nobody reads) only stays behind; the simulator warns of it
(:class:`~tilefold.errors.LeftoverBlocksWarning`). Counts up to each point where kernels meet
are :mod:`.meeting_check`'s.

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
from tilefold.frontend.ttl.session import compile_only_or_raise
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


def executions(op, at_most: bool = False) -> int | None:
    """How many times ``op`` runs on every node, or None when that depends on run-time values; with
    ``at_most``, how many times it runs at most on any node (each ``if`` around it taken)."""
    count = 1
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if isinstance(parent, scf.WhileOp):
            return None
        if isinstance(parent, scf.ForOp):
            trips = trip_count(parent)
            if trips is None:
                return None
            count *= trips
        elif isinstance(parent, scf.IfOp) and not at_most:
            return None
        parent = parent.parent_op()
    return count


def block_count_of(cb) -> int:
    """The ``block_count`` of a ``ttl.bind_cb`` value."""
    bind = cb.owner
    attr = bind.properties.get("block_count") or bind.attributes["block_count"]
    return attr.value.data


def _kernel(op) -> func.FuncOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return parent


def check_one_producer_one_consumer(pushes: dict[int, list], pops: dict[int, list], names: dict[int, str]) -> None:
    """Raise when two kernels both push into (or both pop from) one buffer on one node: a circular
    buffer has one producer kernel and one consumer kernel. Kernels may share the role on different
    nodes (each under its own condition on the node); a kernel that takes the role on every node,
    unconditionally, shares it with no other."""
    for ops, role, verb in ((pushes, "producer", "pushes into"), (pops, "consumer", "pops from")):
        for index, found in ops.items():
            kernels: dict[str, object] = {}          # kernels that take the role on every node
            others: dict[str, object] = {}           # kernels that take it on some nodes, or some runs
            for op in found:
                kernel = _kernel(op)
                if kernel is None:
                    continue
                if executions(op):                   # runs on every node, unconditionally
                    kernels.setdefault(kernel.sym_name.data, op)
                else:
                    others.setdefault(kernel.sym_name.data, op)
            if len(kernels) == 1:
                kernels.update((name, op) for name, op in others.items() if name not in kernels)
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
        capacity = block_count_of((pushes.get(index) or pops[index])[0].cb)
        if c == 0 and p <= capacity:
            continue        # a staging buffer nothing waits on: its blocks fit, none is ever freed
        if c == 0:      # a run would stop; a build that runs nothing goes on (TT-Lang builds kernel skeletons)
            compile_only_or_raise(f"{name} is reserved {p} times but nothing waits on it, so no block is ever freed; "
                                  f"reserve() number {capacity + 1} would wait forever (block_count={capacity}) — "
                                  f"wait on the block ({name}.wait()) after using it, or raise block_count",
                                  source_location(next((op for op in module.walk() if isinstance(op, ttl.CBReserveOp)
                                                        and op.cb.owner.index == index), pushes[index][-1])))
            continue
        if p > c and p - c <= capacity:
            continue        # the surplus stays in the buffer: the simulator warns of it
        if p > c:
            raise KernelError(f"{name} receives {p} blocks from its producer but its consumer takes only {c}; the "
                              "producer would wait for room that never frees (or leave blocks behind) — make both "
                              "sides loop over the same number of blocks", source_location(pushes[index][-1]))
        # a consumer waiting for blocks no kernel pushes: a run would stop; a build that runs nothing
        # goes on, as TT-Lang's compiler builds such kernel skeletons (it refuses only the surplus above)
        compile_only_or_raise(f"{name} is waited for {c} time{'' if c == 1 else 's'} but its producer pushes only {p} "
                              f"block{'' if p == 1 else 's'}; the consumer "
                              "would wait forever — make both sides loop over the same number of blocks",
                              source_location(pops[index][-1]) if pops.get(index) else None)
