"""Whether two runtime conditions of a kernel exclude each other: ``v == 0`` and ``v == 1`` (or
``v == k`` and ``v != k``) of one value, as the branches after ``ttl.wait_any`` are written
(``if selected == 0: ... if selected == 1: ...``), and whether a set of them covers every path.

Reads: the ``i1`` SSA values of two ``if`` conditions being built. Writes: nothing. A value is the
same when it is one SSA value or the same pure ``arith`` computation of the same values (a name's
value is materialized again at each use); anything else is not known to exclude.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

_EQ, _NE = 0, 1           # arith.cmpi predicates


def _same_value(a: SSAValue, b: SSAValue, depth: int = 0) -> bool:
    if a is b:
        return True
    oa, ob = a.owner, b.owner
    if depth > 8 or not isinstance(oa, Operation) or not isinstance(ob, Operation):
        return False
    if oa.name != ob.name or not oa.name.startswith("arith.") or oa.regions or ob.regions:
        return False
    if oa.properties != ob.properties or oa.attributes != ob.attributes or len(oa.operands) != len(ob.operands):
        return False
    return all(_same_value(x, y, depth + 1) for x, y in zip(oa.operands, ob.operands))


def _constant(value: SSAValue) -> int | None:
    op = value.owner
    if isinstance(op, arith.ConstantOp) and hasattr(op.value, "value"):
        return op.value.value.data
    return None


def _equality(cond: SSAValue):
    """``(value, constant, equal)`` for ``value == constant`` / ``value != constant``, else None."""
    op = cond.owner
    if not isinstance(op, arith.CmpiOp) or op.predicate.value.data not in (_EQ, _NE):
        return None
    lhs, rhs = op.operands
    for value, other in ((lhs, rhs), (rhs, lhs)):
        k = _constant(other)
        if k is not None and _constant(value) is None:
            return value, k, op.predicate.value.data == _EQ
    return None


def exclusive(a: SSAValue, b: SSAValue) -> bool:
    """Whether conditions ``a`` and ``b`` are never true together."""
    ea, eb = _equality(a), _equality(b)
    if ea is None or eb is None or not _same_value(ea[0], eb[0]):
        return False
    (_, ka, eq_a), (_, kb, eq_b) = ea, eb
    if eq_a and eq_b:
        return ka != kb
    return eq_a != eq_b and ka == kb


def _choices(value: SSAValue) -> int | None:
    """How many values ``value`` takes when it is a ``ttl.wait_any`` index (0 .. requests - 1)."""
    from tilefold.ir import ttl

    op = value.owner
    return len(op.requests) if isinstance(op, ttl.WaitAnyOp) else None


def exhaustive(conds: list) -> bool:
    """Whether one of ``conds`` holds on every path: two of them are ``v == k`` and ``v != k``, or
    ``v == k`` for every value a ``ttl.wait_any`` index ``v`` takes (``if sel == 0`` ... ``if sel == 1``
    after a selection among two receives)."""
    forms = [e for e in map(_equality, conds) if e is not None]
    if any(_same_value(a[0], b[0]) and a[1] == b[1] and a[2] != b[2] for a in forms for b in forms):
        return True
    for value, _, _ in forms:
        n = _choices(value)
        taken = {k for v, k, equal in forms if equal and _same_value(v, value)}
        if n is not None and taken >= set(range(n)):
            return True
    return False
