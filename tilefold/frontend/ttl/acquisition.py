"""Acquiring and releasing blocks of dataflow buffers in a kernel.

Reads: ``dfb.reserve()``, ``dfb.wait()``, ``blk.push()``, ``blk.pop()`` (and ``dfb.push()`` /
``dfb.pop()``, which release the oldest block). Writes: ``ttl.cb_reserve`` / ``ttl.cb_wait`` (with
the number of blocks of the same buffer end already held, ``depth``) and ``ttl.cb_push`` /
``ttl.cb_pop``. ``dfb.publish()`` of a tensor-backed buffer reserves and pushes its whole capacity
at once: the tensor's pages become ``block_count`` filled blocks, with no copy.

A kernel may hold several blocks of one buffer end at once. The circular buffer's FIFO frees them
oldest first: a younger block released while an older one is held stays in the FIFO (still counted
where later blocks of that end are acquired) and leaves it with the older one — the older block's
release pushes or pops both. A compute kernel addresses tiles relative to the FIFO's
pointers: when an older block is released, each younger block still held is acquired again at its
new position (the FIFO already holds it, so this does not wait), and block-expression variables
computed from it are kept in storage of their own first.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from tilefold.frontend.ttl.block_states import BlockState
from tilefold.frontend.ttl.values import Block
from tilefold.ir import ttl


class Release(NamedTuple):
    """A block leaving its FIFO end: pushed (``filled``: something was written into it) or popped
    (``filled``: it was read, first at ``where``); ``level``: the runtime loops and branches
    around its acquisition."""

    dfb: object
    pushed: bool
    name: str
    where: object            # the push's line, or the first line reading a popped block (None: unread)
    filled: bool
    level: int


class AcquisitionBuilder:
    """Mixin of :class:`~.builder.KernelBuilder`."""

    def _ends(self, dfb) -> dict:
        return self.held.setdefault(dfb.index, {"reserve": [], "wait": []})

    def acquire(self, dfb, kind: str, node: ast.AST, managed: bool = False) -> Block:
        """``dfb.reserve()`` / ``dfb.wait()``; ``managed``: the compiler acquiring a buffer of its own."""
        if dfb.hidden and not managed:
            raise self.error(f"{dfb.name} is managed by the compiler", node)
        held = self._ends(dfb)[kind]
        partly = self.partly_released.get((dfb.index, kind))
        if partly is not None:
            verb = "pushed" if kind == "reserve" else "popped"
            raise self.error(f"{dfb.name}.{kind}() after the if at {partly[1]}, one branch of which {verb} "
                             f"{partly[0].name} and the other not: where the next block sits depends on the path; "
                             f"release {partly[0].name} on every path or in none", node)
        depth = len(held)
        if (depth + 1) * 1 > dfb.block_count:
            raise self.error(f"{dfb.name}.{kind}() would hold {depth + 1} blocks of a buffer with block_count="
                             f"{dfb.block_count}; it could never succeed — release a block first or raise "
                             "block_count", node)
        cb = self.cb_value(dfb)
        self.node = node
        cls = ttl.CBReserveOp if kind == "reserve" else ttl.CBWaitOp
        op = self.emit(cls(cb, depth))
        name = self.pending_name(node) or f"{dfb.name}_blk"
        if name.startswith("__block"):        # acquired inside an expression (``ttl.copy(dfb.wait(), ...)``)
            name = f"{dfb.name}_blk"
        op.result.name_hint = name
        status = BlockState(name, kind, self.kind, self.location(node))
        stmt = self.current_statement()
        assigned = isinstance(stmt, ast.Assign) and stmt.value is node       # name = dfb.reserve() / wait()
        with_item = isinstance(stmt, ast.With) and any(item.context_expr is node for item in stmt.items)
        explicit = self.explicit_acquisitions is not None and self.explicit_acquisitions.get(id(stmt), False)
        block = Block(dfb, op.result, status, depth, assigned=assigned,
                      inline=not assigned and not with_item and not managed, level=self.runtime_level(),
                      explicit=explicit)
        held.append(block)
        return block

    def publish(self, dfb, node: ast.AST) -> None:
        """``dfb.publish()``: hand every block of a tensor-backed buffer, as the tensor holds it, to
        the consumer (``ttl.cb_reserve`` of the whole capacity, then ``ttl.cb_push`` of it)."""
        if dfb.backing is None:
            raise self.error(f"{dfb.name}.publish() needs a tensor-backed buffer (ttl.make_tensor_backed_dfb); "
                             f"{dfb.name} has storage of its own — fill its blocks with reserve() and push()", node)
        if self._ends(dfb)["reserve"]:
            raise self.error(f"{dfb.name}.publish() while a reserved block of {dfb.name} is held; publish() "
                             "hands over the whole buffer — push the block first or drop the reserve()", node)
        if any(r.kind == "loop" for r in self.regions):
            raise self.error(f"{dfb.name}.publish() in a loop; publish() hands the tensor's contents over once "
                             "per operation — call it once, outside loops", node)
        published = getattr(self, "published", None)
        if published is None:
            published = self.published = {}
        if dfb.index in published:
            raise self.error(f"{dfb.name}.publish() a second time (first at line {published[dfb.index]}); the "
                             "tensor's contents are handed over once per operation", node)
        published[dfb.index] = self.location(node).line if self.location(node) else "?"
        cb = self.cb_value(dfb)
        self.node = node
        self.emit(ttl.CBReserveOp(cb, dfb.block_count - 1))
        self.emit(ttl.CBPushOp(cb, dfb.block_count))

    def runtime_level(self) -> int:
        """How many loops and runtime branches the statement being built is in."""
        return sum(1 for r in self.regions if r.kind in ("loop", "branch"))

    def pending_name(self, node: ast.AST) -> str | None:
        """The name a ``with ... as NAME`` or ``NAME = ...`` statement binds the value to."""
        stmt = self.current_statement()
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and stmt.value is node:
            return stmt.targets[0].id
        if isinstance(stmt, ast.With):
            for item in stmt.items:
                if item.context_expr is node and isinstance(item.optional_vars, ast.Name):
                    return item.optional_vars.id
        return None

    def current_statement(self):
        return getattr(self, "_statement", None)

    def check_position(self, block: Block, node: ast.AST) -> None:
        """In a compute kernel a block's tiles are addressed from the FIFO pointer: it must still be
        at the position it was acquired at."""
        if self.kind != "compute":
            return
        held = self._ends(block.dfb)[block.acquired]
        position = next((i for i, b in enumerate(held) if b is block), None)
        if position is not None and position != block.depth:
            raise self.error(f"{block.name} is used after an older block of {block.dfb.name} was released; in a "
                             "compute kernel release blocks of one buffer after you are done with the younger ones",
                             node)

    def release(self, block: Block, node: ast.AST) -> None:
        held = self._ends(block.dfb)[block.acquired]
        verb = "push" if block.acquired == "reserve" else "pop"
        if block.status.released:
            raise self.error(f"{block.name} was already released; each block is {verb}ed once", node)
        if all(b is not block for b in held):
            raise self.error(f"{block.name} is not held; each block is {verb}ed once", node)
        self.before_release(block, node)
        self.wait_unnamed_copies(block, node)
        if block.status.unread:       # pushed as written: unless a kernel waits on the buffer, nothing reads it
            self.unread_pushes.append((block.dfb, block.name, block.status.writer_line or self.location(node),
                                       self.kind == "compute"))
        block.status.release(self.location(node))
        block.released_at = self.location(node)
        if held[0] is not block:
            return          # an older block is held: this one leaves the FIFO with it
        count = 1
        while count < len(held) and held[count].status.released:
            count += 1
        for leaving in held[:count]:        # in the FIFO's order, which is the order consumers get them in
            self.note_released(leaving)
        self.node = node
        cls = ttl.CBPushOp if block.acquired == "reserve" else ttl.CBPopOp
        self.emit(cls(self.cb_value(block.dfb), count))
        del held[:count]
        if self.kind == "compute":
            level = self.runtime_level()
            for position, younger in enumerate(held):
                if younger.depth != position and younger.level == level:
                    self.reacquire(younger, position)

    def note_released(self, block: Block) -> None:
        """Record a block leaving its FIFO end for the operation's token checks."""
        if block.acquired == "reserve":
            self.releases.append(Release(block.dfb, True, block.name, block.released_at,
                                         not block.status.pushed_unwritten, block.level))
        else:
            self.releases.append(Release(block.dfb, False, block.name, block.status.first_read,
                                         block.status.first_read is not None, block.level))

    def reacquire(self, block: Block, position: int) -> None:
        """Acquire the held ``block`` again at ``position`` of its FIFO end (older blocks were
        released): a compute kernel addresses its tiles from there on."""
        cls = ttl.CBReserveOp if block.acquired == "reserve" else ttl.CBWaitOp
        op = self.emit(cls(self.cb_value(block.dfb), position))
        op.result.name_hint = block.value.name_hint
        block.value, block.depth = op.result, position

    def release_oldest(self, dfb, kind: str, node: ast.AST) -> None:
        end = "reserve" if kind == "push" else "wait"
        held = self._ends(dfb)[end]
        if not held:
            raise self.error(f"{dfb.name}.{kind}() but no block of {dfb.name} is held from "
                             f"{end}(); call {dfb.name}.{end}() first", node)
        self.release(held[0], node)

    def wait_unnamed_copies(self, block: Block, node: ast.AST) -> None:
        """Hook: wait for copies into or out of a block, not waited for, before it is released."""

    def before_release(self, block: Block, node: ast.AST) -> None:
        """Hook: materialize pending values into a block before it is released."""
