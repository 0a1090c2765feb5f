"""Building ops with xDSL's :class:`~xdsl.builder.Builder`, each at the source location of what it lowers.

Reads / writes: the IR it inserts into. :class:`LocatedBuilder` is an xDSL ``Builder`` (an
insertion point, ``insert``) whose inserted ops take the location of one source op, so a
lowering's ops keep pointing at the user's line. :func:`located` gives the same to the
``PatternRewriter`` a ``RewritePattern`` receives, and :func:`rewrite_once` runs patterns
under xDSL's ``PatternRewriteWalker``. Passes build with these; none keeps an inserter of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, i32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker, RewritePattern
from xdsl.rewriter import InsertPoint


def _locate(loc_from: Operation):
    def handler(op: Operation) -> None:
        op.location = loc_from.location
    return handler


@dataclass
class LocatedBuilder(Builder):
    """An xDSL Builder whose inserted ops take ``loc_from``'s location (none: they keep theirs)."""

    loc_from: Operation | None = None

    def __post_init__(self) -> None:
        if self.loc_from is not None:
            self.operation_insertion_handler.append(_locate(self.loc_from))

    @staticmethod
    def before(anchor: Operation, loc_from: Operation | None = None) -> LocatedBuilder:
        """Inserting before ``anchor``, at ``loc_from``'s location (default: the anchor's)."""
        return LocatedBuilder(InsertPoint.before(anchor), loc_from=loc_from or anchor)

    @staticmethod
    def after(anchor: Operation, loc_from: Operation | None = None) -> LocatedBuilder:
        return LocatedBuilder(InsertPoint.after(anchor), loc_from=loc_from or anchor)

    @staticmethod
    def at_end(block: Block, loc_from: Operation | None = None) -> LocatedBuilder:
        return LocatedBuilder(InsertPoint.at_end(block), loc_from=loc_from)

    def __call__(self, op: Operation) -> Operation:
        """``insert(op)``, as a function to build with (``b(arith.AddiOp(x, y)).result``)."""
        return self.insert(op)

    def c(self, n: int) -> SSAValue:
        """An i32 constant."""
        return self.insert(arith.ConstantOp(IntegerAttr(int(n), i32))).result

    def loop(self, count: int, name: str) -> tuple[LocatedBuilder, SSAValue]:
        """``scf.for %name = 0 to count`` (i32): a builder for its body and the induction variable."""
        body = Block(arg_types=[i32])
        body.args[0].name_hint = name
        yield_ = scf.YieldOp()
        body.add_op(yield_)
        if self.loc_from is not None:
            yield_.location = self.loc_from.location
        self.insert(scf.ForOp(self.c(0), self.c(count), self.c(1), [], body))
        return LocatedBuilder(InsertPoint.before(yield_), loc_from=self.loc_from), body.args[0]


def located(builder: Builder, loc_from: Operation) -> Builder:
    """``builder`` (e.g. a pattern's ``PatternRewriter``) giving the ops it inserts from now on
    ``loc_from``'s location."""
    builder.operation_insertion_handler.append(_locate(loc_from))
    return builder


def rewrite_once(region: Region, *patterns: RewritePattern) -> None:
    """Apply ``patterns`` (the first that matches) to every op of ``region`` once, in order, under a
    ``PatternRewriteWalker``: ops the patterns insert are not matched again, and nothing is
    removed but what a pattern erases (dead-code elimination is a pass of its own)."""
    applier = GreedyRewritePatternApplier(list(patterns), dce_enabled=False)
    PatternRewriteWalker(applier, apply_recursively=False).rewrite_region(region)


__all__ = ["LocatedBuilder", "located", "rewrite_once"]
