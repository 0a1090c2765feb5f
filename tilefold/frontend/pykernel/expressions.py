"""Lowering Python expressions in a kernel: names, constants, operators, conditions, a[i].

Reads: AST expression nodes, the names bound so far (:class:`Frame`). Writes: ``arith``,
``memref`` and ``ttkernel.l1_load`` / ``l1_store`` ops at the current insertion point, each
with the ``FileLineColLoc`` of the node that produced it.

Integer constants are folded in Python and become an ``arith.constant`` of the type their
use needs (see :mod:`.values`). Values are unsigned: ``//`` is ``arith.divui``, ``%``
``arith.remui``, ``>>`` ``arith.shrui``, comparisons ``arith.cmpi ult / ule / ugt / uge``;
an ``i32`` meeting an ``i64`` is widened with ``arith.extui``. ``and`` / ``or`` give an ``i1``
(``arith.andi`` / ``arith.ori``, or an ``scf.if`` that yields the result when the right side
calls a function, so it only runs when needed).

Errors: float arithmetic, ``/`` and ``**``, strings or other non-integers where an integer is
needed, a 64-bit value where 32 bits are expected, undefined names, names used before they
are assigned, constant indices outside an array, constants that do not fit.
"""

from __future__ import annotations

import ast
import numbers
import operator
import re
from contextlib import contextmanager
from dataclasses import dataclass, field

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, f32, i1, i32
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue

from tilefold.errors import KernelError
from tilefold.frontend.pykernel.api import API_FUNCTIONS, SPECIAL_FUNCTIONS
from tilefold.frontend.pykernel.arguments import suggest
from tilefold.frontend.source import MISSING, FunctionSource
from tilefold.frontend.pykernel.unsupported import unsupported
from tilefold.frontend.pykernel.values import U32, L1Pointer, Static, describe, int_width, is_array, is_int_value, wider
from tilefold.frontend.pykernel.variables import VariablePlan
from tilefold.ir.ttkernel import L1LoadOp, L1StoreOp

_ARITH = {
    ast.Add: arith.AddiOp, ast.Sub: arith.SubiOp, ast.Mult: arith.MuliOp, ast.FloorDiv: arith.DivUIOp,
    ast.Mod: arith.RemUIOp, ast.LShift: arith.ShLIOp, ast.RShift: arith.ShRUIOp, ast.BitAnd: arith.AndIOp,
    ast.BitOr: arith.OrIOp, ast.BitXor: arith.XOrIOp,
}
_FOLD = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod, ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
_SYMBOL = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%", ast.LShift: "<<", ast.RShift: ">>",
    ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.Div: "/", ast.Pow: "**", ast.MatMult: "@",
}
_PREDICATE = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "ult", ast.LtE: "ule", ast.Gt: "ugt", ast.GtE: "uge"}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}
NAME_HINT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FLOAT_USE = ("float values can only be passed to float parameters of the API (for example the value of "
              "fill_tile)")

@dataclass
class Local:
    """A name bound once: an SSA value or a build-time constant."""

    value: object


@dataclass
class Mutable:
    """A name with storage: a rank-0 memref of ``type``."""

    ref: SSAValue
    type: Attribute


@dataclass
class Frame:
    """The kernel body, or one inlined helper body, being built."""

    source: FunctionSource
    plan: VariablePlan
    is_helper: bool
    env: dict[str, Local | Mutable] = field(default_factory=dict)
    return_value: object = None


def contains_call(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


class ExpressionLowering:
    """Expressions of a kernel body; :class:`~.builder.KernelBuilder` adds calls and statements."""

    block: Block
    frames: list[Frame]

    # -- plumbing ----------------------------------------------------------------------------------

    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    def error(self, node: ast.AST, message: str) -> KernelError:
        return self.frame.source.error(node, message)

    def emit(self, op: Operation, node: ast.AST) -> Operation:
        op.location = self.frame.source.loc(node)
        self.block.add_op(op)
        return op

    @contextmanager
    def inside(self, block: Block):
        """Build into ``block``; names bound inside do not outlive it."""
        saved_block, saved_env = self.block, dict(self.frame.env)
        self.block = block
        try:
            yield block
        finally:
            self.block = saved_block
            self.frame.env = saved_env

    def constant(self, value: int | float, t: Attribute, node: ast.AST) -> SSAValue:
        attr = FloatAttr(float(value), t) if t == f32 else IntegerAttr(int(value), t)
        return self.emit(arith.ConstantOp(attr), node).result

    @staticmethod
    def name(value, name: str) -> None:
        if isinstance(value, OpResult) and value.name_hint is None and NAME_HINT.fullmatch(name):
            value.name_hint = name

    # -- conversions -------------------------------------------------------------------------------

    def coerce_int(self, value, t: Attribute, node: ast.AST, what: str) -> SSAValue:
        """``value`` as an SSA value of integer type ``t`` (i1, i32, i64 or index)."""
        if isinstance(value, int):
            v = int(value)
            if t == i1:
                if v not in (0, 1):
                    raise self.error(node, f"{what} takes True or False, not {v}")
                return self.constant(v, t, node)
            width = int_width(t)
            if not -(2 ** (width - 1)) <= v < 2 ** width:
                raise self.error(node, f"{what}: the constant {v} does not fit in {width} bits")
            return self.constant(v, t, node)
        if isinstance(value, float):
            raise self.error(node, f"{what} needs an integer, not the float {value!r}; {_FLOAT_USE}")
        if isinstance(value, str):
            raise self.error(node, f"{what} needs an integer, not the string {value!r}")
        if isinstance(value, L1Pointer):
            raise self.error(node, f"{what} needs an integer, not an l1_ptr; index the pointer (p[i]) to read a "
                                   f"word of L1")
        if not (isinstance(value, SSAValue) and int_width(value.type) is not None):
            raise self.error(node, f"{what} needs an integer, not {describe(value)}")
        src = value.type
        if src == t:
            return value
        if isinstance(t, IndexType):
            if src == i1:
                value = self.emit(arith.ExtUIOp(value, i32), node).result
            return self.emit(arith.IndexCastOp(value, t), node).result
        if t == i1:
            return self.condition_value(value, node)
        if src == i1 or int_width(src) < int_width(t):
            return self.emit(arith.ExtUIOp(value, t), node).result
        raise self.error(node, f"{what} is 32-bit, but this is {describe(value)}; convert it explicitly with "
                               f"uint32(...) if its high bits are not needed")

    def condition_value(self, value: SSAValue, node: ast.AST) -> SSAValue:
        zero = self.constant(0, value.type, node)
        return self.emit(arith.CmpiOp(value, zero, "ne"), node).result

    def condition(self, value, node: ast.AST):
        """A Python bool (constant condition) or an i1 value."""
        if isinstance(value, int):
            return bool(value)
        if isinstance(value, SSAValue) and value.type == i1:
            return value
        if is_int_value(value):
            return self.condition_value(value, node)
        raise self.error(node, f"a condition must be an integer or a comparison, not {describe(value)}")

    def check_arithmetic(self, value, node: ast.AST, symbol: str) -> None:
        if isinstance(value, float):
            raise self.error(node, f"float arithmetic is not supported in a kernel ({symbol} with {value!r}): "
                                   f"kernel values are uint32 (or uint64 NOC addresses); {_FLOAT_USE}")
        if isinstance(value, int) or is_int_value(value):
            return
        raise self.error(node, f"{describe(value)} cannot be used with {symbol}; kernels compute with integers")

    # -- names and constants -----------------------------------------------------------------------

    def expr(self, node: ast.AST):
        handler = getattr(self, f"expr_{type(node).__name__}", None)
        if handler is None:
            raise self.error(node, unsupported(node))
        return handler(node)

    def expr_Constant(self, node: ast.Constant):
        value = node.value
        if isinstance(value, (bool, int, float, str)):
            return value
        raise self.error(node, f"{value!r} is not a kernel value; kernels use integers, True/False and float "
                               f"literals")

    def static_value(self, obj, name: str):
        """A global seen from the kernel: scalars become constants, the rest stays :class:`Static`."""
        if isinstance(obj, bool):
            return obj
        if isinstance(obj, numbers.Integral):
            return int(obj)
        if isinstance(obj, (float, str)):
            return obj
        if isinstance(obj, numbers.Real):
            return float(obj)
        return Static(obj, name)

    def expr_Name(self, node: ast.Name):
        return self.load_name(node.id, node)

    def load_name(self, name: str, node: ast.Name):
        frame = self.frame
        if id(node) in frame.plan.unassigned:
            raise self.error(node, f"{name!r} is used before it is assigned")
        binding = frame.env.get(name)
        if isinstance(binding, Mutable):
            return self.emit(memref.LoadOp.get(binding.ref, []), node).res
        if isinstance(binding, Local):
            return binding.value
        if name in frame.plan.loop_variables:
            loop = frame.plan.loop_variables[name]
            raise self.error(node, f"{name!r} is the loop variable of the for loop at line {loop.lineno} and only "
                                   f"exists inside that loop; copy it to another variable inside the loop")
        if name in frame.plan.locals:
            raise self.error(node, f"{name!r} is not assigned on every path to this use; assign it before")
        obj = frame.source.lookup(name)
        if obj is MISSING:
            candidates = [*frame.plan.locals, *frame.source.visible_names(), *API_FUNCTIONS, *SPECIAL_FUNCTIONS]
            raise self.error(node, f"name {name!r} is not defined{suggest(name, candidates)}; kernels see their own "
                                   f"variables and the module's names (from tilefold.pykernel import * brings the "
                                   f"API)")
        return self.static_value(obj, name)

    def expr_Attribute(self, node: ast.Attribute):
        base = self.expr(node.value)
        if not isinstance(base, Static):
            raise self.error(node, f"attribute .{node.attr} of {describe(base)} is not supported in a kernel")
        obj = getattr(base.obj, node.attr, MISSING)
        if obj is MISSING:
            hint = suggest(node.attr, [n for n in dir(base.obj) if not n.startswith("_")])
            raise self.error(node, f"{base.name} has no attribute {node.attr!r}{hint}")
        return self.static_value(obj, f"{base.name}.{node.attr}")

    # -- operators ---------------------------------------------------------------------------------

    def expr_BinOp(self, node: ast.BinOp):
        return self.binop(node.op, self.expr(node.left), self.expr(node.right), node)

    def binop(self, op: ast.operator, left, right, node: ast.AST):
        kind = type(op)
        symbol = _SYMBOL.get(kind, type(op).__name__)
        if kind is ast.Div:
            raise self.error(node, "/ is true division and gives a float; kernels compute with unsigned integers: "
                                   "use // for integer division")
        if kind is ast.Pow:
            raise self.error(node, "** is not supported in a kernel; use << for powers of two, or multiply")
        if kind not in _ARITH:
            raise self.error(node, f"the operator {symbol} is not supported in a kernel")
        self.check_arithmetic(left, node, symbol)
        self.check_arithmetic(right, node, symbol)
        if isinstance(right, int) and not isinstance(left, int) and kind in (ast.LShift, ast.RShift):
            if not 0 <= right < int_width(left.type if left.type != i1 else i32):
                raise self.error(node, f"shift by {right} is outside 0-{int_width(left.type) - 1} for "
                                       f"{describe(left)}")
        if isinstance(right, int) and kind in (ast.FloorDiv, ast.Mod) and right == 0:
            raise self.error(node, f"{symbol} by zero")
        if isinstance(left, int) and isinstance(right, int):
            folded = self.fold(kind, int(left), int(right), node)
            if folded is not None:
                return folded
        t = wider(*(v.type for v in (left, right) if isinstance(v, SSAValue)))
        lhs = self.coerce_int(left, t, node, f"the left operand of {symbol}")
        rhs = self.coerce_int(right, t, node, f"the right operand of {symbol}")
        return self.emit(_ARITH[kind](lhs, rhs), node).result

    def fold(self, kind: type, a: int, b: int, node: ast.AST) -> int | None:
        """Constant folding; None where unsigned semantics differ from Python's (negative operands)."""
        if kind in (ast.LShift, ast.RShift):
            if not 0 <= b < 64:
                raise self.error(node, f"shift by {b} is outside 0-63")
            if a < 0:
                return None
        if kind in (ast.FloorDiv, ast.Mod) and (a < 0 or b < 0):
            return None
        return _FOLD[kind](a, b)

    def expr_UnaryOp(self, node: ast.UnaryOp):
        value = self.expr(node.operand)
        if isinstance(node.op, ast.Not):
            if is_int_value(value) and value.type != i1:       # not x  ==  x == 0
                zero = self.constant(0, value.type, node)
                return self.emit(arith.CmpiOp(value, zero, "eq"), node).result
            cond = self.condition(value, node.operand)
            if isinstance(cond, bool):
                return not cond
            return self.emit(arith.XOrIOp(cond, self.constant(1, i1, node)), node).result
        if isinstance(value, float) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return -value if isinstance(node.op, ast.USub) else value      # a negative float literal
        symbol = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}[type(node.op)]
        self.check_arithmetic(value, node, symbol)
        if isinstance(value, int):
            return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}[type(node.op)](
                int(value))
        if isinstance(node.op, ast.UAdd):
            return value
        t = wider(value.type)
        operand = self.coerce_int(value, t, node, f"the operand of {symbol}")
        if isinstance(node.op, ast.USub):
            return self.emit(arith.SubiOp(self.constant(0, t, node), operand), node).result
        return self.emit(arith.XOrIOp(operand, self.constant(-1, t, node)), node).result

    def expr_Compare(self, node: ast.Compare):
        left = self.expr(node.left)
        result = None
        for op, comparator in zip(node.ops, node.comparators):
            right = self.expr(comparator)
            result = self.logical(ast.And(), result, self.compare(op, left, right, node), node)
            left = right
        return result

    def compare(self, op: ast.cmpop, left, right, node: ast.AST):
        kind = type(op)
        if kind not in _PREDICATE:
            raise self.error(node, f"{ast.unparse(node)[:40]}: is / in comparisons are not supported in a kernel; "
                                   f"compare integers with == != < <= > >=")
        symbol = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}[kind]
        self.check_arithmetic(left, node, symbol)
        self.check_arithmetic(right, node, symbol)
        if isinstance(left, int) and isinstance(right, int) and left >= 0 and right >= 0:
            return _COMPARE[kind](int(left), int(right))
        t = wider(*(v.type for v in (left, right) if isinstance(v, SSAValue)))
        lhs = self.coerce_int(left, t, node, f"the left side of {symbol}")
        rhs = self.coerce_int(right, t, node, f"the right side of {symbol}")
        return self.emit(arith.CmpiOp(lhs, rhs, _PREDICATE[kind]), node).result

    def logical(self, op: ast.boolop, left, right, node: ast.AST):
        """``left and right`` / ``left or right`` of two conditions, either may be None (absent)."""
        if left is None:
            return right
        is_and = isinstance(op, ast.And)
        for a, b in ((left, right), (right, left)):
            if isinstance(a, bool):
                return b if a == is_and else a
        return self.emit((arith.AndIOp if is_and else arith.OrIOp)(left, right), node).result

    def expr_BoolOp(self, node: ast.BoolOp):
        is_and = isinstance(node.op, ast.And)
        result = self.condition(self.expr(node.values[0]), node.values[0])
        for operand in node.values[1:]:
            if isinstance(result, bool):
                if result != is_and:        # False and ... / True or ...
                    return result
                result = self.condition(self.expr(operand), operand)
            elif contains_call(operand):
                result = self.short_circuit(is_and, result, operand)
            else:
                result = self.logical(node.op, result, self.condition(self.expr(operand), operand), node)
        return result

    def short_circuit(self, is_and: bool, left: SSAValue, operand: ast.AST) -> SSAValue:
        """``left and operand`` evaluating ``operand`` (which calls functions) only when needed."""
        evaluate, skip = Block(), Block()
        with self.inside(evaluate):
            right = self.condition(self.expr(operand), operand)
            right = self.constant(int(right), i1, operand) if isinstance(right, bool) else right
            self.emit(scf.YieldOp(right), operand)
        with self.inside(skip):
            self.emit(scf.YieldOp(self.constant(int(not is_and), i1, operand)), operand)
        blocks = ([evaluate], [skip]) if is_and else ([skip], [evaluate])
        return self.emit(scf.IfOp(left, [i1], *blocks), operand).results[0]

    def expr_IfExp(self, node: ast.IfExp):
        cond = self.condition(self.expr(node.test), node.test)
        if isinstance(cond, bool):
            return self.expr(node.body if cond else node.orelse)
        if contains_call(node.body) or contains_call(node.orelse):
            raise self.error(node, "a conditional expression whose branches call functions is not supported in a "
                                   "kernel; use an if statement")
        a, b = self.expr(node.body), self.expr(node.orelse)
        for v in (a, b):
            self.check_arithmetic(v, node, "if-else")
        t = wider(*(v.type for v in (a, b) if isinstance(v, SSAValue)))
        if all(isinstance(v, SSAValue) and v.type == i1 for v in (a, b)):
            t = i1
        lhs = self.coerce_int(a, t, node, "the value of if-else")
        rhs = self.coerce_int(b, t, node, "the value of if-else")
        return self.emit(arith.SelectOp(cond, lhs, rhs), node).result

    # -- arrays and L1 pointers --------------------------------------------------------------------

    def subscript_parts(self, node: ast.Subscript):
        """The array or L1 pointer of ``a[i]`` and ``i`` converted to its index type."""
        base = self.expr(node.value)
        if isinstance(node.slice, ast.Slice):
            raise self.error(node, unsupported(node.slice))
        if isinstance(node.slice, ast.Tuple):
            raise self.error(node, "arrays and l1_ptr take one index (a[i])")
        if not (is_array(base) or isinstance(base, L1Pointer)):
            raise self.error(node, f"{describe(base)} cannot be indexed; only array(...) and l1_ptr(...) values can")
        value = self.expr(node.slice)
        if isinstance(base, L1Pointer):
            return base, self.coerce_int(value, U32, node.slice, "an l1_ptr index")
        size = base.type.get_shape()[0]
        if isinstance(value, int) and not 0 <= value < size:
            raise self.error(node.slice, f"index {value} is outside the array of {size} elements")
        return base, self.coerce_int(value, IndexType(), node.slice, "an array index")

    def load_element(self, base, index: SSAValue, node: ast.AST) -> SSAValue:
        if isinstance(base, L1Pointer):
            return self.emit(L1LoadOp(base.address, index, base.width), node).result
        return self.emit(memref.LoadOp.get(base, [index]), node).res

    def store_element(self, base, index: SSAValue, value, node: ast.AST) -> None:
        if isinstance(base, L1Pointer):
            v = self.coerce_int(value, U32, node, "a value stored through an l1_ptr")
            self.emit(L1StoreOp(base.address, index, v, base.width), node)
            return
        element = base.type.get_element_type()
        v = self.coerce_int(value, element, node, f"an element of a uint{int_width(element)} array")
        self.emit(memref.StoreOp.get(v, base, [index]), node)

    def expr_Subscript(self, node: ast.Subscript):
        base, index = self.subscript_parts(node)
        return self.load_element(base, index, node)
