"""Building ops in order: the emitter the lowering passes append ttkernel calls with.

Reads: nothing. Writes: ops into a block (before its ``scf.yield`` when it has one), all
with the location of one source op, sharing the integer constants they use; ``loop`` /
``when`` / ``section`` open an ``scf.for``, an ``scf.if`` or a ``tile.dst_section`` and
return emitters for their bodies.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import FloatAttr, f32, i32
from xdsl.ir import Block, Operation
from xdsl.rewriter import InsertPoint

from tilefold.ir import tile
from tilefold.passes.builder import LocatedBuilder


class Emitter(LocatedBuilder):
    """An xDSL Builder adding ops to a block (before ``before``, else at its end), all with
    ``loc_from``'s location, sharing integer constants."""

    def __init__(self, block: Block, loc_from: Operation, before: Operation | None = None):
        super().__init__(InsertPoint.before(before) if before is not None else InsertPoint.at_end(block),
                         loc_from=loc_from)
        self.block = block
        self.consts: dict[int, object] = {}

    def c(self, n: int):
        if n not in self.consts:
            self.consts[n] = super().c(n)
        return self.consts[n]

    def f32(self, value: float):
        return self(arith.ConstantOp(FloatAttr(float(value), f32))).result

    def add(self, a, b):
        return self(arith.AddiOp(a, b)).result

    def mul(self, a, b):
        return self(arith.MuliOp(a, b)).result

    def loop(self, count: int, name: str) -> tuple[Emitter, object]:
        """``scf.for %name = 0 to count``: an emitter for its body and the induction variable."""
        body = Block(arg_types=[i32])
        body.args[0].name_hint = name
        yield_ = scf.YieldOp()
        body.add_op(yield_)
        yield_.location = self.loc_from.location
        self(scf.ForOp(self.c(0), self.c(count), self.c(1), [], body))
        return Emitter(body, self.loc_from, before=yield_), body.args[0]

    def when(self, condition) -> Emitter:
        """``scf.if condition``: an emitter for its then-block."""
        then = Block()
        yield_ = scf.YieldOp()
        then.add_op(yield_)
        yield_.location = self.loc_from.location
        self(scf.IfOp(condition, [], [then]))
        return Emitter(then, self.loc_from, before=yield_)

    def section(self, mode: str = "section") -> tuple[Emitter, Emitter]:
        """A ``tile.dst_section``: emitters for its math and pack regions."""
        op = self(tile.DstSectionOp(mode))
        return Emitter(op.math.block, self.loc_from), Emitter(op.pack.block, self.loc_from)
