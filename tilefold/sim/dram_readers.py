"""Which cores of a data-movement kernel issue NOC reads.

Reads: a kernel's ttkernel function and one core's runtime arguments. Writes: nothing.

A read counts on a core unless every path to it passes an ``scf.if`` whose condition the core's
runtime arguments decide against it — a condition made of ``get_arg_val``, constants and integer
arithmetic / comparisons (a multicast receiver's branch that skips the DRAM reads its sender
makes). Anything else (L1 contents, loop variables, buffer addresses) counts as taken, so the
answer errs towards "reads".
"""

from __future__ import annotations

from xdsl.dialects import arith, func, scf
from xdsl.ir import Operation, SSAValue

from tilefold.ir.integer_arith import BINARY, CMPI
from tilefold.ir.ttkernel import constant_int

NOC_READS = frozenset({"ttkernel.noc_async_read_page", "ttkernel.noc_async_read"})

# the integer arithmetic a condition is evaluated through (other ops leave it undecided)
_BINARY = {op: BINARY[op] for op in (arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.AndIOp, arith.OrIOp,
                                     arith.XOrIOp)}


def _value(v: SSAValue, args: list) -> int | None:
    """``v`` on a core with runtime ``args``, or None when it is not decided by them."""
    known = constant_int(v)
    if known is not None:
        return known
    owner = v.owner
    if isinstance(owner, Operation) and owner.name == "ttkernel.get_arg_val":
        index = constant_int(owner.operands[0])
        value = args[index] if index is not None and index < len(args) else None
        return value if isinstance(value, int) else None
    if isinstance(owner, arith.CmpiOp):
        a, b = _value(owner.lhs, args), _value(owner.rhs, args)
        if a is None or b is None:
            return None
        return int(CMPI[owner.predicate.value.data](a, b))
    if type(owner) in _BINARY:
        a, b = _value(owner.operands[0], args), _value(owner.operands[1], args)
        return None if a is None or b is None else _BINARY[type(owner)](a, b)
    return None


def _reachable(op: Operation, kernel: func.FuncOp, args: list) -> bool:
    child, parent = op, op.parent_op()
    while parent is not None and parent is not kernel:
        if isinstance(parent, scf.IfOp):
            cond = _value(parent.cond, args)
            in_then = child.parent_region() is parent.true_region
            if cond is not None and bool(cond) != in_then:
                return False
        child, parent = parent, parent.parent_op()
    return True


def issues_reads(kernel: func.FuncOp, args: list) -> bool:
    """Whether ``kernel`` can issue a NOC read on a core with runtime ``args``."""
    return any(op.name in NOC_READS and _reachable(op, kernel, args) for op in kernel.walk())


def has_reads(kernel: func.FuncOp) -> bool:
    return any(op.name in NOC_READS for op in kernel.walk())


__all__ = ["NOC_READS", "issues_reads", "has_reads"]
