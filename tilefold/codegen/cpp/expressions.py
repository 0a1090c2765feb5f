"""C++ expressions for scalar ``arith`` ops, with the parentheses C++ precedence needs.

Reads: an ``arith`` op and the C++ expressions of its operands. Writes: an :class:`Expr`.
An expression remembers its precedence (so it is parenthesised only where needed, and
always where ``g++ -Wparentheses`` would ask for it: shifts and bitwise operators mixed with
others) and the mutable C++ variables it reads (loop-carried variables and local variables),
which the kernel printer uses to decide whether an expression may be printed at its use
instead of being stored in a variable first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.ir import Attribute, Operation

from tilefold.codegen.cpp.cpp_types import bit_width, cpp_type, is_bool, is_float, signed_cpp_type
from tilefold.errors import CompileError

# C++ precedence levels, tighter binding = larger number.
ASSIGN, CONDITIONAL, LOGICAL_OR, LOGICAL_AND = 2, 3, 4, 5
BIT_OR, BIT_XOR, BIT_AND, EQUALITY, RELATIONAL, SHIFT = 6, 7, 8, 9, 10, 11
ADDITIVE, MULTIPLICATIVE, UNARY, POSTFIX = 12, 13, 15, 16
_BITWISE = {BIT_OR, BIT_XOR, BIT_AND, SHIFT}
_LOGICAL = {LOGICAL_OR, LOGICAL_AND}


@dataclass(frozen=True)
class Expr:
    """A C++ expression: its text, precedence and the mutable variables it reads."""

    text: str
    precedence: int = POSTFIX
    reads: frozenset[str] = frozenset()
    is_literal: bool = False
    has_call: bool = False   # holds an API call: it must stay in order with the kernel's other calls
    binary_parts: tuple[str, "Expr", "Expr"] | None = None  # (operator, lhs, rhs) of a binary expression

    def __str__(self) -> str:
        return self.text


def atom(text: str, reads: frozenset[str] = frozenset(), is_literal: bool = False) -> Expr:
    return Expr(text, POSTFIX, reads, is_literal)


def variable(name: str, mutable: bool = False) -> Expr:
    """A named C++ variable; ``mutable`` when it is assigned after its declaration."""
    return Expr(name, POSTFIX, frozenset({name}) if mutable else frozenset())


def _needs_parentheses(child: int, parent: int, right: bool) -> bool:
    if child >= UNARY:
        return False
    if child < parent or (child == parent and right):
        return True
    if child != parent and (child in _BITWISE or parent in _BITWISE):
        return True
    return child != parent and child in _LOGICAL and parent in _LOGICAL


def operand_text(e: Expr, parent: int, right: bool = False) -> str:
    return f"({e.text})" if _needs_parentheses(e.precedence, parent, right) else e.text


def _reads(*exprs: Expr) -> frozenset[str]:
    out: frozenset[str] = frozenset()
    for e in exprs:
        out |= e.reads
    return out


def _calls(*exprs: Expr) -> bool:
    return any(e.has_call for e in exprs)


def binary(symbol: str, precedence: int, lhs: Expr, rhs: Expr) -> Expr:
    text = f"{operand_text(lhs, precedence)} {symbol} {operand_text(rhs, precedence, right=True)}"
    return Expr(text, precedence, _reads(lhs, rhs), has_call=_calls(lhs, rhs), binary_parts=(symbol, lhs, rhs))


_COMPOUND = {"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"}


def assignment(target: str, value: Expr) -> str:
    """``target = value;``, or ``target op= rhs;`` when the value is ``target op rhs``."""
    parts = value.binary_parts
    if parts is not None and parts[0] in _COMPOUND and parts[1].text == target:
        return f"{target} {parts[0]}= {parts[2].text};"
    return f"{target} = {value.text};"


def unary(symbol: str, e: Expr) -> Expr:
    return Expr(f"{symbol}{operand_text(e, UNARY)}", UNARY, e.reads, has_call=e.has_call)


def cast(type_name: str, e: Expr) -> Expr:
    return Expr(f"static_cast<{type_name}>({e.text})", POSTFIX, e.reads, has_call=e.has_call)


def conditional(cond: Expr, a: Expr, b: Expr) -> Expr:
    text = (f"{operand_text(cond, CONDITIONAL + 1)} ? {operand_text(a, CONDITIONAL + 1)} : "
            f"{operand_text(b, CONDITIONAL + 1)}")
    return Expr(text, CONDITIONAL, _reads(cond, a, b), has_call=_calls(cond, a, b))


_SIMPLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[A-Za-z0-9_]+\])*\Z")


def is_simple(e: Expr) -> bool:
    """A literal, a variable or an array element: as cheap to repeat as to name."""
    return not e.has_call and (e.is_literal or bool(_SIMPLE.match(e.text)))


# --- arith ---------------------------------------------------------------------------------

_UNSIGNED_BINARY = {
    arith.AddiOp: ("+", ADDITIVE),
    arith.SubiOp: ("-", ADDITIVE),
    arith.MuliOp: ("*", MULTIPLICATIVE),
    arith.DivUIOp: ("/", MULTIPLICATIVE),
    arith.RemUIOp: ("%", MULTIPLICATIVE),
    arith.ShLIOp: ("<<", SHIFT),
    arith.ShRUIOp: (">>", SHIFT),
    arith.AndIOp: ("&", BIT_AND),
    arith.OrIOp: ("|", BIT_OR),
    arith.XOrIOp: ("^", BIT_XOR),
    arith.AddfOp: ("+", ADDITIVE),
    arith.SubfOp: ("-", ADDITIVE),
    arith.MulfOp: ("*", MULTIPLICATIVE),
    arith.DivfOp: ("/", MULTIPLICATIVE),
}
_BOOL_BINARY = {
    arith.AndIOp: ("&&", LOGICAL_AND),
    arith.OrIOp: ("||", LOGICAL_OR),
    arith.XOrIOp: ("!=", EQUALITY),
}
_SIGNED_BINARY = {
    arith.DivSIOp: ("/", MULTIPLICATIVE),
    arith.RemSIOp: ("%", MULTIPLICATIVE),
    arith.ShRSIOp: (">>", SHIFT),
}
_CMPI = {
    "eq": ("==", EQUALITY, False), "ne": ("!=", EQUALITY, False),
    "slt": ("<", RELATIONAL, True), "sle": ("<=", RELATIONAL, True),
    "sgt": (">", RELATIONAL, True), "sge": (">=", RELATIONAL, True),
    "ult": ("<", RELATIONAL, False), "ule": ("<=", RELATIONAL, False),
    "ugt": (">", RELATIONAL, False), "uge": (">=", RELATIONAL, False),
}
# Ordered float compares are C++'s own (false when either side is NaN); une is C++'s !=.
_CMPF = {
    "oeq": ("==", EQUALITY), "ogt": (">", RELATIONAL), "oge": (">=", RELATIONAL),
    "olt": ("<", RELATIONAL), "ole": ("<=", RELATIONAL), "une": ("!=", EQUALITY),
}
_MIN_MAX = {
    arith.MaxUIOp: (">", False), arith.MinUIOp: ("<", False),
    arith.MaxSIOp: (">", True), arith.MinSIOp: ("<", True),
}


def _signed(e: Expr, t: Attribute) -> Expr:
    if e.is_literal and e.text.rstrip("ul").isdigit():
        width = bit_width(t)
        value = int(e.text.rstrip("ul"))
        value = value - (1 << width) if value >= 1 << (width - 1) else value
        if -(1 << 31) <= value < (1 << 31):
            return Expr(str(value), POSTFIX if value >= 0 else UNARY, is_literal=True)
    return cast(signed_cpp_type(t), e)


def _unsupported(op: Operation) -> CompileError:
    return CompileError(f"the C++ emitter cannot print {op.name}; lower it to simpler arith ops first")


def arith_expression(op: Operation, args: list[Expr]) -> Expr:
    """The C++ expression of the (single) result of ``op`` given its operands' expressions."""
    result_type = op.results[0].type
    kind = type(op)
    if len(args) == 2 and all(a.is_literal for a in args) and not is_float(result_type):
        # Two literals would be computed in int; make the left one carry the unsigned type.
        args = [Expr(_typed_literal(args[0].text, bit_width(op.operands[0].type)), POSTFIX, is_literal=True),
                args[1]]
    if kind in _BOOL_BINARY and is_bool(result_type):
        symbol, precedence = _BOOL_BINARY[kind]
        return binary(symbol, precedence, *args)
    if kind in _UNSIGNED_BINARY:
        symbol, precedence = _UNSIGNED_BINARY[kind]
        if kind in (arith.MuliOp, arith.ShLIOp) and not is_float(result_type) and bit_width(result_type) < 32:
            args = [cast("uint32_t", args[0]), args[1]]  # 8 and 16-bit values would be multiplied as int
        return binary(symbol, precedence, *args)
    if kind in _SIGNED_BINARY:
        symbol, precedence = _SIGNED_BINARY[kind]
        t = op.operands[0].type
        return cast(cpp_type(t), binary(symbol, precedence, _signed(args[0], t), _signed(args[1], t)))
    if kind is arith.CeilDivUIOp:
        a, b = args
        exact = binary("/", MULTIPLICATIVE, a, b)
        rest = binary("!=", EQUALITY, binary("%", MULTIPLICATIVE, a, b), atom("0", is_literal=True))
        return binary("+", ADDITIVE, exact, rest)
    if kind in _MIN_MAX:
        symbol, signed = _MIN_MAX[kind]
        a, b = args
        t = op.operands[0].type
        ca, cb = (_signed(a, t), _signed(b, t)) if signed else (a, b)
        return conditional(binary(symbol, RELATIONAL, ca, cb), a, b)
    if kind is arith.CmpiOp:
        name = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        symbol, precedence, signed = _CMPI[name]
        a, b = args
        if signed:
            t = op.operands[0].type
            a, b = _signed(a, t), _signed(b, t)
        return binary(symbol, precedence, a, b)
    if kind is arith.CmpfOp:
        name = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        if name not in _CMPF:
            raise CompileError(f"the C++ emitter cannot print the float compare predicate {name!r}; "
                               f"use one of {', '.join(_CMPF)}")
        symbol, precedence = _CMPF[name]
        return binary(symbol, precedence, *args)
    if kind is arith.SelectOp:
        return conditional(*args)
    if kind is arith.NegfOp:
        return unary("-", args[0])
    if kind in (arith.ExtUIOp, arith.IndexCastOp, arith.UIToFPOp, arith.FPToUIOp):
        source, target = op.operands[0].type, result_type
        if cpp_type(source) == cpp_type(target):
            return args[0]
        return cast(cpp_type(target), args[0])
    if kind is arith.ExtSIOp:
        source, target = op.operands[0].type, result_type
        if is_bool(source):
            return cast(cpp_type(target), unary("-", cast(signed_cpp_type(target), args[0])))
        return cast(cpp_type(target), _signed(args[0], source))
    if kind is arith.TruncIOp:
        if is_bool(result_type):
            return binary("!=", EQUALITY, binary("&", BIT_AND, args[0], atom("1", is_literal=True)),
                          atom("0", is_literal=True))
        return cast(cpp_type(result_type), args[0])
    if kind is arith.SIToFPOp:
        return cast("float", _signed(args[0], op.operands[0].type))
    if kind is arith.FPToSIOp:
        return cast(cpp_type(result_type), cast(signed_cpp_type(result_type), args[0]))
    if kind is arith.BitcastOp:
        return Expr(f"__builtin_bit_cast({cpp_type(result_type)}, {args[0].text})", POSTFIX, args[0].reads,
                    has_call=args[0].has_call)
    raise _unsupported(op)


def _typed_literal(text: str, width: int) -> str:
    if text in ("true", "false") or text.endswith("u") or text.endswith("ull"):
        return text
    return text + ("ull" if width > 32 else "u")
