"""split_copied_buffers: a local buffer filled by ``T.copy`` and also computed becomes two buffers.

Reads: ``tile.alloc`` buffers that a global→local ``tile.copy`` fills and that a compute op
(``T.Parallel`` store, ``T.gemm``, ``T.fill``, ``T.cumsum``, a reduction, a local copy ...)
writes too — ``T.copy(A[...], A_s)`` then ``A_s[i, j] *= s``, or a bias copied into the
accumulator a ``T.gemm`` adds onto.

A circular buffer has one producer: the reader fills the first kind, compute the second. So
each such buffer ``X`` gets a twin ``X_c`` (a fragment of the same shape and dtype): every
compute op writes ``X_c`` instead, and every op reads whichever of the two holds ``X``'s
current value at that point of the program (``X`` right after a copy, ``X_c`` after a compute
op). Where the value would come from either (a loop whose body starts with the copied value
and leaves the computed one, an ``if`` one of whose branches computes it and after which it is
read before a copy fills it again), a local ``tile.copy X → X_c`` makes it ``X_c`` on every path; so does a gemm or a reduction that adds
onto ``X`` while ``X`` still holds the copied value.

Writes: the ``X_c`` allocs, the rewired operands, those local copies.
Errors: none.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from tilefold.ir.tile_types import format_of_memref, memref_type
from tilefold.ir import tile
from tilefold.ir.attributes import kernel_function, param_names
from tilefold.passes.tilelang.common import insert_after, insert_before, is_global


class SplitCopiedBuffers(ModulePass):
    """Twin buffers for copied-then-computed buffers (see the module docstring)."""

    name = "split-copied-buffers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = kernel_function(op)
        names = set(param_names(kernel)) | {o.buffer_name.data for o in kernel.walk() if isinstance(o, tile.AllocOp)}
        for alloc in [o for o in kernel.walk() if isinstance(o, tile.AllocOp)]:
            x = alloc.result
            copied = any(isinstance(o, tile.CopyOp) and o.offsets and o.dst == x for o in kernel.walk())
            computed = any(x in defs(o) for o in kernel.walk() if not (isinstance(o, tile.CopyOp) and o.offsets))
            if copied and computed:
                Twin(kernel, alloc, names).run()


def defs(op: Operation) -> list[SSAValue]:
    """Local buffers a compute op writes (a ``tile.parallel``: those its stores write)."""
    if isinstance(op, tile.FillOp):
        return [op.buffer]
    if isinstance(op, tile.GemmOp):
        return [op.c]
    if isinstance(op, tile.ReduceOp):
        return [op.dst]
    if isinstance(op, (tile.TransposeOp, tile.CumsumOp)) or (isinstance(op, tile.CopyOp) and not op.offsets):
        return [op.dst]
    if isinstance(op, tile.IotaOp):
        return [op.buffer]
    if isinstance(op, tile.ParallelOp):
        return list(dict.fromkeys(o.buffer for o in op.walk() if isinstance(o, tile.StoreOp)))
    return []


def reads(op: Operation) -> list[SSAValue]:
    """Local buffers an op reads (an update of C by a gemm, or of a reduction's output, reads it)."""
    if isinstance(op, tile.GemmOp):
        return [op.a, op.b, op.c]
    if isinstance(op, tile.ReduceOp):
        return [op.src] + ([] if op.clear.value.data else [op.dst])
    if isinstance(op, (tile.TransposeOp, tile.CumsumOp)) or (isinstance(op, tile.CopyOp) and not op.offsets):
        return [op.src]
    if isinstance(op, tile.CopyOp) and op.offsets:
        return [op.src]
    if isinstance(op, tile.ParallelOp):
        return list(dict.fromkeys(o.buffer for o in op.walk() if isinstance(o, tile.LoadOp)))
    return []


class Twin:
    """The rewiring of one copied-then-computed buffer."""

    def __init__(self, kernel, alloc: tile.AllocOp, names: set[str]):
        self.kernel = kernel
        self.x = alloc.result
        name, n = f"{alloc.buffer_name.data}_c", 1
        while name in names:
            name, n = f"{alloc.buffer_name.data}_c{n}", n + 1
        names.add(name)
        twin = tile.AllocOp(name, "fragment", memref_type(self.x.type.get_shape(), format_of_memref(self.x.type),
                                                          "fragment"))
        twin.result.name_hint = name
        insert_after(alloc, twin)
        self.xc = twin.result

    def run(self) -> None:
        self.block(self.kernel.body.block, self.x, rewrite=True)

    # -- walking the program ---------------------------------------------------------------------

    def block(self, block: Block, current: SSAValue, rewrite: bool) -> SSAValue:
        """Walk ``block`` with ``current`` holding the buffer's value at its start; returns the one
        holding it at its end (rewiring operands when ``rewrite``)."""
        for op in list(block.ops):
            current = self.op(op, current, rewrite)
        return current

    def op(self, op: Operation, current: SSAValue, rewrite: bool) -> SSAValue:
        x, xc = self.x, self.xc
        if isinstance(op, tile.KernelOp):
            return self.block(op.body.block, current, rewrite)
        if isinstance(op, tile.ForOp):
            return self.loop(op, current, rewrite)
        if isinstance(op, tile.IfOp):
            return self.branch(op, current, rewrite)
        if isinstance(op, tile.CopyOp) and op.offsets and not is_global(op.dst, self.kernel) and op.dst == x:
            return x
        written = x in defs(op) or xc in defs(op)
        read = x in reads(op) or xc in reads(op)
        if not written and not read:
            return current
        if written and read and current is x and isinstance(op, (tile.GemmOp, tile.ReduceOp)):
            if rewrite:
                insert_before(op, tile.CopyOp(x, xc))   # it adds onto the copied value
            current = xc
        if rewrite:
            self.rewire(op, current, written)
        return xc if written else current

    def rewire(self, op: Operation, current: SSAValue, written: bool) -> None:
        x, xc = self.x, self.xc
        targets = [o for o in op.walk() if o is not op] if isinstance(op, tile.ParallelOp) else [op]
        for o in targets:
            for i, operand in enumerate(o.operands):
                if operand is not x and operand is not xc:
                    continue
                role_write = (isinstance(o, tile.StoreOp) and i == 1) or self.is_output(o, i)
                o.operands[i] = xc if role_write else current

    def is_output(self, op: Operation, i: int) -> bool:
        if isinstance(op, tile.GemmOp):
            return i == 2
        if isinstance(op, (tile.ReduceOp, tile.TransposeOp, tile.CumsumOp, tile.CopyOp)):
            return i == 1
        return isinstance(op, (tile.FillOp, tile.IotaOp))

    def loop(self, loop: tile.ForOp, current: SSAValue, rewrite: bool) -> SSAValue:
        after = self.block(loop.body.block, current, rewrite=False)
        if after is not current and self.reads_first(loop.body.block):
            if rewrite:
                insert_before(loop, tile.CopyOp(self.x, self.xc))
            current = self.xc
        end = self.block(loop.body.block, current, rewrite)
        return end

    def branch(self, op: tile.IfOp, current: SSAValue, rewrite: bool) -> SSAValue:
        ends = [self.block(r.block, current, rewrite=False) for r in (op.then_region, op.else_region)]
        if ends[0] is ends[1]:
            for r in (op.then_region, op.else_region):
                self.block(r.block, current, rewrite)
            return ends[0]
        live = self.read_after(op)
        for r, end in zip((op.then_region, op.else_region), ends):
            self.block(r.block, current, rewrite)
            if end is self.x and rewrite and live:
                r.block.add_op(tile.CopyOp(self.x, self.xc))
                r.block.last_op.location = op.location
        return self.xc

    def read_after(self, op: Operation) -> bool:
        """Whether the buffer is read after ``op`` before a copy fills it again: later in its block,
        then after each enclosing statement, and from the start of each enclosing loop's body (the
        next iteration)."""
        while op is not None and not isinstance(op, tile.KernelOp):
            nxt = op.next_op
            while nxt is not None:
                if isinstance(nxt, tile.CopyOp) and nxt.offsets and nxt.dst == self.x:
                    return False
                if any(self.x in reads(o) or self.xc in reads(o) for o in nxt.walk()):
                    return True
                nxt = nxt.next_op
            parent = op.parent_op()
            if isinstance(parent, tile.ForOp) and self.reads_first(parent.body.block):
                return True
            op = parent
        return False

    def reads_first(self, block: Block) -> bool:
        """Whether the block reads the buffer before a copy fills it again."""
        for op in block.walk():
            if isinstance(op, tile.CopyOp) and op.offsets and op.dst == self.x:
                return False
            if self.x in reads(op) or self.xc in reads(op):
                return True
        return False


__all__ = ["SplitCopiedBuffers", "defs", "reads"]
