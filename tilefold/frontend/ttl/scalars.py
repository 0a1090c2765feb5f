"""Runtime integers of a TT-Lang kernel: an SSA ``index`` value and, when known, its affine form.

Reads: nothing. Writes: nothing; :class:`ScalarBuilder` asks its owner to emit ``arith`` ops.

A kernel computes slice bounds such as ``a[row * 4:(row + 1) * 4, ...]`` from loop indices and
the node's coordinates. The extent of a slice (``end - start``) must be a compile-time number,
so every runtime integer carries an :class:`AffineForm` — ``constant + Σ coefficient · symbol``
over the opaque runtime values it was built from (loop induction variables, node coordinates,
loads of mutable variables). Sums, differences and products by constants keep the form; other
operations (``//``, ``%``, products of two runtime values, ``min``) make a new symbol — the same
symbol for the same operation on the same forms, so that ``a[(t % g) * n:(t % g) * n + n]``
has the extent ``n``. Python ints stay Python ints: arithmetic on compile-time values is folded,
never emitted.
"""

from __future__ import annotations

import operator

from dataclasses import dataclass, field

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import SSAValue


_BITWISE = {"and": (operator.and_, arith.AndIOp), "or": (operator.or_, arith.OrIOp), "xor": (operator.xor, arith.XOrIOp),
            "shl": (operator.lshift, arith.ShLIOp), "shr": (operator.rshift, arith.ShRSIOp)}


@dataclass(frozen=True)
class AffineForm:
    """``constant + Σ terms[symbol] · symbol``; symbols are SSA values."""

    constant: int = 0
    terms: tuple[tuple[int, int], ...] = ()      # (id of symbol, coefficient), sorted

    @staticmethod
    def symbol(value: SSAValue) -> AffineForm:
        return AffineForm(0, ((id(value), 1),))

    def _combine(self, other: AffineForm, sign: int) -> AffineForm:
        terms = dict(self.terms)
        for key, coeff in other.terms:
            terms[key] = terms.get(key, 0) + sign * coeff
        return AffineForm(self.constant + sign * other.constant,
                          tuple(sorted((k, c) for k, c in terms.items() if c)))

    def __add__(self, other: AffineForm) -> AffineForm:
        return self._combine(other, 1)

    def __sub__(self, other: AffineForm) -> AffineForm:
        return self._combine(other, -1)

    def scale(self, factor: int) -> AffineForm:
        if factor == 0:
            return AffineForm()
        return AffineForm(self.constant * factor, tuple((k, c * factor) for k, c in self.terms))

    @property
    def is_constant(self) -> bool:
        return not self.terms


@dataclass
class Scalar:
    """A runtime integer of a kernel (``index``)."""

    value: SSAValue
    form: AffineForm = field(default_factory=AffineForm)

    @staticmethod
    def opaque(value: SSAValue) -> Scalar:
        return Scalar(value, AffineForm.symbol(value))


IntLike = int | Scalar


def difference(a: IntLike, b: IntLike) -> int | None:
    """``a - b`` when it is a compile-time number (both ints, or equal affine parts), else None."""
    fa = AffineForm(a) if isinstance(a, int) else a.form
    fb = AffineForm(b) if isinstance(b, int) else b.form
    d = fa - fb
    return d.constant if d.is_constant else None


class ScalarBuilder:
    """Integer arithmetic on ints and :class:`Scalar` values; ``emit(op)`` inserts an op."""

    def __init__(self, emit):
        self.emit = emit
        self.ranges: dict[int, tuple[int, int]] = {}   # id of a symbol -> its least and greatest value
        self._derived: dict[tuple, int] = {}      # (operation, operand forms) -> the symbol of its result

    def _derived_symbol(self, kind: str, a: IntLike, b: IntLike, result: SSAValue) -> Scalar:
        """The result of a pure non-affine operation: one symbol for every evaluation of ``kind``
        on operands of the same forms (the same value wherever the builder computes it)."""
        key = self._derived.setdefault((kind, form_of(a), form_of(b)), id(result))
        return Scalar(result, AffineForm(0, ((key, 1),)))

    def bounds(self, v: IntLike) -> tuple[int, int] | None:
        """The least and greatest value of ``v`` over the ranges of its symbols (loop indices with
        compile-time bounds, node coordinates), or None when a symbol's range is unknown."""
        if isinstance(v, int):
            return v, v
        lo = hi = v.form.constant
        for key, coeff in v.form.terms:
            r = self.ranges.get(key)
            if r is None:
                return None
            a, b = coeff * r[0], coeff * r[1]
            lo, hi = lo + min(a, b), hi + max(a, b)
        return lo, hi

    def constant(self, value: int) -> SSAValue:
        return self.emit(arith.ConstantOp(IntegerAttr(int(value), IndexType()))).result

    def materialize(self, v: IntLike) -> SSAValue:
        return v.value if isinstance(v, Scalar) else self.constant(v)

    def add(self, a: IntLike, b: IntLike) -> IntLike:
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if isinstance(b, int) and b == 0:
            return a
        if isinstance(a, int) and a == 0:
            return b
        op = self.emit(arith.AddiOp(self.materialize(a), self.materialize(b)))
        return Scalar(op.result, form_of(a) + form_of(b))

    def sub(self, a: IntLike, b: IntLike) -> IntLike:
        if isinstance(a, int) and isinstance(b, int):
            return a - b
        if isinstance(b, int) and b == 0:
            return a
        op = self.emit(arith.SubiOp(self.materialize(a), self.materialize(b)))
        return Scalar(op.result, form_of(a) - form_of(b))

    def mul(self, a: IntLike, b: IntLike) -> IntLike:
        if isinstance(a, int) and isinstance(b, int):
            return a * b
        if isinstance(a, int):
            a, b = b, a
        if isinstance(b, int):
            if b == 1:
                return a
            if b == 0:
                return 0
            op = self.emit(arith.MuliOp(self.materialize(a), self.constant(b)))
            return Scalar(op.result, a.form.scale(b))
        op = self.emit(arith.MuliOp(a.value, b.value))
        return self._derived_symbol("mul", *sorted((a, b), key=_order), op.result)

    def floordiv(self, a: IntLike, b: IntLike) -> IntLike:
        if isinstance(a, int) and isinstance(b, int):
            return a // b
        if isinstance(b, int) and b == 1:
            return a
        if not (isinstance(b, int) and b > 0):
            return self._derived_symbol("floordiv", a, b, self._floor_divmod(a, b)[0])
        if self._may_be_negative(a, b):
            q = self.emit(arith.DivSIOp(self.materialize(a), self.constant(b))).result
            _, below = self._signed_remainder(a, b)
            return self._derived_symbol("floordiv", a, b, self.emit(arith.SelectOp(
                below, self.emit(arith.SubiOp(q, self.constant(1))).result, q)).result)
        op = self.emit(arith.DivUIOp(self.materialize(a), self.materialize(b)))
        return self._derived_symbol("floordiv", a, b, op.result)

    def _floor_divmod(self, a: IntLike, b: IntLike) -> tuple[SSAValue, SSAValue]:
        """Python's ``a // b`` and ``a % b`` for a divisor of either sign (a runtime one, or a negative
        constant): C's truncating quotient and remainder, moved one step where the remainder is
        nonzero and of the other sign than ``b``."""
        x, y = self.materialize(a), self.materialize(b)
        q = self.emit(arith.DivSIOp(x, y)).result
        r = self.emit(arith.RemSIOp(x, y)).result
        zero = self.constant(0)
        nonzero = self.emit(arith.CmpiOp(r, zero, "ne")).result
        signs = self.emit(arith.XOrIOp(self.emit(arith.CmpiOp(r, zero, "slt")).result,
                                       self.emit(arith.CmpiOp(y, zero, "slt")).result)).result
        step = self.emit(arith.AndIOp(nonzero, signs)).result
        q = self.emit(arith.SelectOp(step, self.emit(arith.SubiOp(q, self.constant(1))).result, q)).result
        r = self.emit(arith.SelectOp(step, self.emit(arith.AddiOp(r, y)).result, r)).result
        return q, r

    def mod(self, a: IntLike, b: IntLike) -> IntLike:
        if isinstance(a, int) and isinstance(b, int):
            return a % b
        if not (isinstance(b, int) and b > 0):
            return self._derived_symbol("mod", a, b, self._floor_divmod(a, b)[1])
        if self._may_be_negative(a, b):
            r, below = self._signed_remainder(a, b)
            op = self.emit(arith.SelectOp(below, self.emit(arith.AddiOp(r, self.constant(b))).result, r))
        else:
            op = self.emit(arith.RemUIOp(self.materialize(a), self.materialize(b)))
        result = self._derived_symbol("mod", a, b, op.result)
        if isinstance(b, int) and b > 0:              # both remainders lie in [0, b)
            self.ranges[result.form.terms[0][0]] = (0, b - 1)
        return result

    def _may_be_negative(self, a: IntLike, b: IntLike) -> bool:
        """Whether ``a // b`` / ``a % b`` need Python's floor semantics on signed values: ``b`` is a
        positive constant and ``a`` can be negative over its symbols' ranges (``(x - 1) % n`` with
        ``x`` a node coordinate or loop index), or its range is not known (a loop-carried counter, a
        ``min``). The device computes on ``uint32_t``: an unsigned division of a wrapped negative
        value gives another number."""
        if not (isinstance(b, int) and b > 0):
            return False
        bounds = self.bounds(a)
        return bounds is None or bounds[0] < 0

    def _signed_remainder(self, a: IntLike, b: int) -> tuple[SSAValue, SSAValue]:
        """C's truncating ``a % b`` on signed values, and whether it is negative (an ``i1``)."""
        r = self.emit(arith.RemSIOp(self.materialize(a), self.constant(b))).result
        return r, self.emit(arith.CmpiOp(r, self.constant(0), "slt")).result

    def bitwise(self, kind: str, a: IntLike, b: IntLike) -> IntLike:
        """``a & b``, ``a | b``, ``a ^ b``, ``a << b``, ``a >> b`` (``kind``: and, or, xor, shl, shr) with
        Python's meaning on the device's integers: a shift by a constant is a product or a floor
        division by its power of two; ``>>`` of a runtime amount is arithmetic."""
        if isinstance(a, int) and isinstance(b, int):
            return _BITWISE[kind][0](a, b)
        if kind in ("shl", "shr") and isinstance(b, int) and b >= 0:
            return self.mul(a, 1 << b) if kind == "shl" else self.floordiv(a, 1 << b)
        op = self.emit(_BITWISE[kind][1](self.materialize(a), self.materialize(b)))
        return self._derived_symbol(kind, a, b, op.result)

    def minimum(self, a: IntLike, b: IntLike) -> IntLike:
        if isinstance(a, int) and isinstance(b, int):
            return min(a, b)
        op = self.emit(arith.MinSIOp(self.materialize(a), self.materialize(b)))
        return self._derived_symbol("min", *sorted((a, b), key=_order), op.result)

    def maximum(self, a: IntLike, b: IntLike) -> IntLike:
        if isinstance(a, int) and isinstance(b, int):
            return max(a, b)
        op = self.emit(arith.MaxSIOp(self.materialize(a), self.materialize(b)))
        return self._derived_symbol("max", *sorted((a, b), key=_order), op.result)

    def decided(self, predicate: str, a: IntLike, b: IntLike) -> bool | None:
        """``a <pred> b`` when the ranges of both sides decide it (a loop index against its first
        value outside the first iteration, a node coordinate against the grid), else None."""
        ra, rb = self.bounds(a), self.bounds(b)
        if ra is None or rb is None or ra[0] > ra[1] or rb[0] > rb[1]:
            return None
        (lo_a, hi_a), (lo_b, hi_b) = ra, rb
        below, above = hi_a < lo_b, lo_a > hi_b            # every a below / above every b
        same = lo_a == hi_a == lo_b == hi_b
        answers = {"eq": False if below or above else True if same else None,
                   "slt": True if below else False if lo_a >= hi_b else None,
                   "sle": True if hi_a <= lo_b else False if above else None}
        answers["ne"] = None if answers["eq"] is None else not answers["eq"]
        answers["sgt"] = None if answers["sle"] is None else not answers["sle"]
        answers["sge"] = None if answers["slt"] is None else not answers["slt"]
        return answers[predicate]

    def compare(self, predicate: str, a: IntLike, b: IntLike):
        """``a <pred> b`` (``slt``, ``sle``, ``sgt``, ``sge``, ``eq``, ``ne``): a bool when both are
        compile-time, else an ``i1`` SSA value."""
        if isinstance(a, int) and isinstance(b, int):
            return {"slt": a < b, "sle": a <= b, "sgt": a > b, "sge": a >= b, "eq": a == b, "ne": a != b}[predicate]
        op = self.emit(arith.CmpiOp(self.materialize(a), self.materialize(b), predicate))
        return op.result


def form_of(v: IntLike) -> AffineForm:
    """The affine form of a compile-time or runtime integer."""
    return AffineForm(v) if isinstance(v, int) else v.form


def _order(v: IntLike) -> tuple:
    """A canonical order of the operands of a commutative operation."""
    form = form_of(v)
    return form.terms, form.constant
