"""The integer meaning of xDSL ``arith`` ops, for analyses that evaluate IR on known values.

Reads / writes: nothing; tables only. ``BINARY`` maps an integer op's class to a Python function
of its two operands (signed division truncates toward zero and its remainder takes the dividend's
sign, as in MLIR); ``CMPI`` maps an ``arith.cmpi`` predicate number to its comparison (unsigned
predicates compare the values as given); ``DIVISIONS`` are the ops undefined for a zero divisor.
"""

from __future__ import annotations

import operator

from xdsl.dialects import arith


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


BINARY = {arith.AddiOp: operator.add, arith.SubiOp: operator.sub, arith.MuliOp: operator.mul,
          arith.FloorDivSIOp: operator.floordiv, arith.DivSIOp: _trunc_div, arith.DivUIOp: operator.floordiv,
          arith.CeilDivSIOp: _ceil_div, arith.CeilDivUIOp: _ceil_div,
          arith.RemSIOp: lambda a, b: a - _trunc_div(a, b) * b, arith.RemUIOp: operator.mod,
          arith.AndIOp: operator.and_, arith.OrIOp: operator.or_, arith.XOrIOp: operator.xor,
          arith.MinSIOp: min, arith.MaxSIOp: max, arith.MinUIOp: min, arith.MaxUIOp: max,
          arith.ShLIOp: operator.lshift, arith.ShRSIOp: operator.rshift, arith.ShRUIOp: operator.rshift}
DIVISIONS = (arith.FloorDivSIOp, arith.DivSIOp, arith.DivUIOp, arith.CeilDivSIOp, arith.CeilDivUIOp, arith.RemSIOp,
             arith.RemUIOp)
# eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge
CMPI = {0: operator.eq, 1: operator.ne, 2: operator.lt, 3: operator.le, 4: operator.gt, 5: operator.ge,
        6: operator.lt, 7: operator.le, 8: operator.gt, 9: operator.ge}
