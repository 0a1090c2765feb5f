"""Linear forms of ``i32`` index values, their ranges, and building them back as ops.

Reads: ``arith`` integer ops and the block arguments of ``tile.kernel`` (block indices),
``tile.for`` (loop variables) and ``tile.parallel`` (element indices). Writes: ``arith``
ops, through :func:`materialize`.

:func:`affine_of` follows ``arith.constant`` / ``addi`` / ``subi`` / ``muli`` by a constant
back to such block arguments (``divui`` / ``remui`` results count as opaque symbols);
:func:`value_range` bounds a symbol by its grid extent, loop bounds or parallel extent.
Passes use them to check tile alignment, size padded tensors and recognise access patterns.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, i32
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from tilefold.ir import tile


@dataclass
class Affine:
    """``const + Σ coef · symbol`` over SSA values."""

    terms: dict[SSAValue, int] = field(default_factory=dict)
    const: int = 0

    def __add__(self, other: Affine) -> Affine:
        terms = dict(self.terms)
        for v, c in other.terms.items():
            terms[v] = terms.get(v, 0) + c
            if terms[v] == 0:
                del terms[v]
        return Affine(terms, self.const + other.const)

    def scaled(self, k: int) -> Affine:
        if k == 0:
            return Affine()
        return Affine({v: c * k for v, c in self.terms.items()}, self.const * k)

    def __sub__(self, other: Affine) -> Affine:
        return self + other.scaled(-1)

    def coefficient(self, value: SSAValue) -> int:
        return self.terms.get(value, 0)

    def without(self, *values: SSAValue) -> Affine:
        return Affine({v: c for v, c in self.terms.items() if v not in values}, self.const)

    def divisible_by(self, n: int) -> bool:
        return self.const % n == 0 and all(c % n == 0 for c in self.terms.values())

    @property
    def is_constant(self) -> bool:
        return not self.terms

    def same_as(self, other: Affine) -> bool:
        return self.const == other.const and self.terms == other.terms


def _const(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def affine_of(value: SSAValue) -> Affine:
    """The linear form of ``value``; anything not linear is an opaque symbol of its own."""
    c = _const(value)
    if c is not None:
        return Affine({}, c)
    owner = value.owner
    if isinstance(owner, arith.AddiOp):
        return affine_of(owner.lhs) + affine_of(owner.rhs)
    if isinstance(owner, arith.SubiOp):
        return affine_of(owner.lhs) - affine_of(owner.rhs)
    if isinstance(owner, arith.MuliOp):
        lhs, rhs = affine_of(owner.lhs), affine_of(owner.rhs)
        if rhs.is_constant:
            return lhs.scaled(rhs.const)
        if lhs.is_constant:
            return rhs.scaled(lhs.const)
    return Affine({value: 1})


def symbol_owner(value: SSAValue) -> Operation | None:
    """The ``tile.kernel`` / ``tile.for`` / ``tile.parallel`` a block argument belongs to."""
    if isinstance(value, BlockArgument) and isinstance(value.owner, Block):
        return value.owner.parent_op()
    return None


def value_range(value: SSAValue) -> tuple[int, int] | None:
    """Inclusive [lo, hi] of a symbol, when its definition bounds it."""
    c = _const(value)
    if c is not None:
        return c, c
    op = symbol_owner(value)
    if isinstance(op, tile.KernelOp):
        return 0, op.grid_shape[value.index] - 1
    if isinstance(op, tile.ParallelOp):
        return 0, op.shape[value.index] - 1
    if isinstance(op, tile.ForOp):
        lb, ub = _const(op.lb), _const(op.ub)
        if lb is None or ub is None or ub <= lb:
            return None
        step = op.step.value.data
        return lb, lb + ((ub - 1 - lb) // step) * step
    owner = value.owner
    if isinstance(owner, (arith.DivUIOp, arith.RemUIOp)):
        d = _const(owner.rhs)
        inner = affine_range(affine_of(owner.lhs))
        if d is None or d <= 0 or inner is None:
            return None
        if isinstance(owner, arith.RemUIOp):
            return 0, min(d - 1, inner[1])
        return inner[0] // d, inner[1] // d
    if isinstance(owner, Operation) and owner.name == "tile.runtime_arg":
        return None
    return None


def affine_range(form: Affine) -> tuple[int, int] | None:
    lo = hi = form.const
    for v, c in form.terms.items():
        r = value_range(v)
        if r is None:
            return None
        a, b = c * r[0], c * r[1]
        lo += min(a, b)
        hi += max(a, b)
    return lo, hi


def trip_count(loop: tile.ForOp) -> int | None:
    lb, ub = _const(loop.lb), _const(loop.ub)
    if lb is None or ub is None:
        return None
    step = loop.step.value.data
    return max(0, -(-(ub - lb) // step))


def constant_op(value: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(int(value), i32))


def materialize(form: Affine, insert, substitute: dict[SSAValue, SSAValue] | None = None) -> SSAValue:
    """Ops computing ``form``; ``insert(op)`` places each op and returns it. Symbols found in
    ``substitute`` are replaced by their mapped values."""
    substitute = substitute or {}
    total: SSAValue | None = None
    for v, c in form.terms.items():
        term = substitute.get(v, v)
        if c != 1:
            term = insert(arith.MuliOp(term, insert(constant_op(c)).result)).result
        total = term if total is None else insert(arith.AddiOp(total, term)).result
    if total is None:
        return insert(constant_op(form.const)).result
    if form.const:
        total = insert(arith.AddiOp(total, insert(constant_op(form.const)).result)).result
    return total


__all__ = ["Affine", "affine_of", "value_range", "affine_range", "symbol_owner", "trip_count", "constant_op",
           "materialize"]
