"""Whether every use of one dataflow buffer, by every kernel of a node, happens before every use of another.

Reads: the front end's ``ttl`` module of one operation call (every kernel). Writes: nothing.

The kernels of a node run at once, each in program order; a ``cb_wait`` returns only after some
``cb_push`` of its buffer. So a position ``t`` of kernel A happens before a position of kernel B
when a chain links them: program order inside a kernel, and from the pushes of a buffer to the
waits on it — when *every* push of the buffer (in every kernel) comes after the chain so far, any
``cb_wait`` that returns comes after it too. Only waits every node runs (no ``if`` around them, loops
of known trip counts) extend a chain: a wait a node skips orders nothing there.

A buffer's *extent* is, per kernel, the first and last statement (:func:`position`) that
touches it or a block taken from it: the ``reserve`` / ``wait`` / ``push`` / ``pop`` and every
operation reading or writing the block or a value derived from it (a copy and the ``wait`` of its
transfer, a pipe send or receive and its ``wait``, a store). Other nodes write a buffer only
through pipes, which write a receiver's block after its ``reserve`` posted the block's address (the
receive's ``wait`` follows the write), and read a sender's block before the send's ``wait``: the
extent holds those accesses too. Two buffers whose extents are ordered this way, one entirely
before the other, are never in use at once and may share L1 bytes (:func:`.dfb_reuse.l1_arena`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation

from tilefold.frontend.ttl.protocol_check import executions
from tilefold.ir import ttl


@dataclass(frozen=True)
class Extent:
    """Per kernel (a ``func.func``), the positions of the first and last statements using a buffer
    (and whether the first is an operation of its own, not a loop holding it: :func:`_single`)."""
    spans: dict          # kernel op -> (first position, last position, first is single)


class BufferOrder:
    """The happens-before order of one module's kernels, for comparing buffer extents."""

    def __init__(self, module: ModuleOp):
        self.binds: dict[int, list[ttl.BindCBOp]] = {}
        for op in module.walk():
            if isinstance(op, ttl.BindCBOp):
                self.binds.setdefault(op.index, []).append(op)
        # per buffer index: its pushes as (kernel, position, single), and its waits every node runs
        self.pushes: dict[int, list[tuple[Operation, tuple, bool]]] = {}
        self.waits: dict[int, list[tuple[Operation, tuple]]] = {}
        for index, binds in self.binds.items():
            if any(kernel_of(bind) is None for bind in binds):
                continue                # pushes not all counted: its waits order nothing
            for bind in binds:
                kernel = kernel_of(bind)
                body = kernel.body.block
                for use in bind.result.uses:
                    op = use.operation
                    if isinstance(op, ttl.CBPushOp):
                        self.pushes.setdefault(index, []).append((kernel, position(op, body), _single(op, body)))
                    elif isinstance(op, ttl.CBWaitOp) and (executions(op) or 0) >= 1:
                        self.waits.setdefault(index, []).append((kernel, position(op, body)))
        self._reach_cache: dict = {}

    def extent(self, index: int) -> Extent | None:
        """The extent of buffer ``index``, or None when some use is not a statement of a kernel body."""
        uses: dict = {}                                   # kernel -> (position, op) of each use
        for bind in self.binds.get(index, ()):
            kernel = kernel_of(bind)
            if kernel is None:
                return None
            uses.setdefault(kernel, []).extend((position(op, kernel.body.block), op) for op in _touching(bind))
        spans = {}
        for kernel, found in uses.items():
            if found:
                first, op = min(found, key=lambda use: use[0])
                spans[kernel] = (first, max(at for at, _ in found), _single(op, kernel.body.block))
        return Extent(spans) if spans else None

    def before(self, x: Extent, y: Extent) -> bool:
        """Whether every use in ``x`` happens before every use in ``y``."""
        for kernel, (_, last, _) in x.spans.items():
            reached = self._reached(kernel, last)
            for other, (first, _, single) in y.spans.items():
                if not any(before(point, first) or (waited and single and point == first)
                           for point, waited in reached.get(other, ())):
                    return False
        return True

    def _reached(self, kernel: Operation, point: tuple) -> dict:
        """Per kernel, positions everything after which happens after ``point`` of ``kernel``."""
        key = (id(kernel), point)
        if key in self._reach_cache:
            return self._reach_cache[key]
        reached: dict = {kernel: [(point, False)]}       # positions, and whether each is a wait's
        linked: set[int] = set()
        changed = True
        while changed:
            changed = False
            for index, pushes in self.pushes.items():
                if index in linked or index not in self.waits:
                    continue
                if all(any(before(p, at) or (single and p == at) for p, _ in reached.get(k, ()))
                       for k, at, single in pushes):
                    linked.add(index)
                    changed = True
                    for k, at in self.waits[index]:
                        reached.setdefault(k, []).append((at, True))
        self._reach_cache[key] = reached
        return reached


def before(a: tuple, b: tuple) -> bool:
    """Whether position ``a`` is done before position ``b`` starts (neither holds the other)."""
    return a < b and b[:len(a)] != a


def position(op: Operation, body: Block) -> tuple:
    """Where ``op`` runs in the kernel ``body``, as the index of each statement holding it from the
    top: down through ``if`` branches (each runs at most once), and only to a loop, which runs as
    one statement (positions compare in program order; one holds another as its prefix)."""
    chain = []
    while op.parent_block() is not body:
        chain.append(op)
        op = op.parent_op()
    chain.append(op)
    path = []
    for statement in reversed(chain):
        path.append(statement.parent_block().get_operation_index(statement))
        if not isinstance(statement, scf.IfOp) and statement.regions:
            break               # a loop (or another op with a body): all of it, as one statement
    return tuple(path)


def _single(op: Operation, body: Block) -> bool:
    """Whether ``op`` is a statement of ``body`` of its own: inside ``if`` branches only, no loop."""
    parent = op.parent_op()
    while op.parent_block() is not body:
        if not isinstance(parent, scf.IfOp):
            return False
        op, parent = parent, parent.parent_op()
    return True


def kernel_of(bind: ttl.BindCBOp) -> func.FuncOp | None:
    """The kernel whose top level binds the buffer, or None (a bind elsewhere)."""
    kernel = bind.parent_op()
    if not isinstance(kernel, func.FuncOp) or bind.parent_block() is not kernel.body.block:
        return None
    return kernel


def _touching(bind: ttl.BindCBOp) -> list[Operation]:
    """Every operation using the buffer, the blocks taken from it or values derived from those."""
    seen: set[int] = set()
    found: list[Operation] = []
    pending = [bind.result]
    while pending:
        value = pending.pop()
        for use in value.uses:
            op = use.operation
            if id(op) in seen:
                continue
            seen.add(id(op))
            found.append(op)
            pending.extend(op.results)
    return found
