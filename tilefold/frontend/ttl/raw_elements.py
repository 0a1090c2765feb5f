"""``ttl.raw_element_read`` / ``ttl.raw_element_write``: float elements of a held block in a data
movement kernel; ``ttl.read_index``: such an element as a runtime integer (truncated toward zero),
for a tensor slice's start.

Reads: nothing. Writes: ``ttl.unsafe_element_read`` / ``_write`` ops (L1 loads and stores) and
``arith`` integer ops. A read element is an :class:`ElementValue` — its bits and its format
(float32 or bfloat16) — that can be written back (converted to the block's format: a float32 value
into a bfloat16 block is truncated, as TT-Lang does) or compared with another element or a number
(IEEE ordered comparisons on sign and magnitude, ``-0 == +0``, NaN unordered). Arithmetic on read
elements is refused.
"""

from __future__ import annotations

import ast
import struct

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, i1, i32

from tilefold.frontend.ttl.values import Block, ElementValue, MutableElement
from tilefold.ir import ttl
from tilefold.layout.formats import DataFormat

_FLOATS = (DataFormat.Float32, DataFormat.Float16_b)


def _f32_bits(number: float) -> int:
    return struct.unpack("<I", struct.pack("<f", number))[0]


class RawElementBuilder:
    """Mixin of :class:`~.builder.KernelBuilder`: raw element reads, writes and comparisons."""

    def raw_element(self, fn, args, kwargs, node):
        """``ttl.raw_element_read(blk, *coords)`` and ``ttl.raw_element_write(blk, *coords, value)``."""
        what = fn.qualname
        self.require_datamovement(node, what)
        if kwargs:
            raise self.error(f"{what} takes positional arguments only", node)
        if not args or not isinstance(args[0], Block):
            given = self.describe(args[0]) if args else "nothing"
            raise self.error(f"{what} reads a block held with reserve() or wait(), not {given}", node)
        block, rest = args[0], list(args[1:])
        writing = fn.name == "raw_element_write"
        if writing:
            if not rest:
                raise self.error(f"{what}(block, *coords, value) needs a value to write", node)
            value = rest.pop()
        fmt = block.dfb.data_format
        if fmt not in _FLOATS:
            raise self.error(f"{what} needs a float32 or bfloat16 block; {block.name} holds {fmt.ttnn_name}", node)
        row, col = self._element_position(block, rest, node, what)
        self.check_position(block, node)
        self.node = node
        if not writing:
            block.status.read(self.location(node))
            element = ElementValue(self.emit(ttl.UnsafeElementReadOp(block.value, row, col)).result, fmt)
            return self._truncated(element) if fn.name == "read_index" else element
        bits = self._element_bits(value, fmt, node, what)
        if block.acquired == "reserve":
            block.status.store(self.location(node))
        self.emit(ttl.UnsafeElementWriteOp(block.value, row, col, bits))
        return None

    def _truncated(self, element: ElementValue):
        """The integer part of an element (toward zero) as a runtime index, computed on its bits:
        the mantissa with its hidden bit shifted by the exponent, then the sign; magnitudes below
        one are 0 (and so are NaNs and infinities past 2**31, which index nothing)."""
        from xdsl.dialects.builtin import IndexType

        from tilefold.frontend.ttl.scalars import Scalar

        bits = element.value
        if element.data_format is DataFormat.Float16_b:
            bits = self._int_op(arith.ShLIOp, bits, 16)
        exponent = self._int_op(arith.SubiOp, self._int_op(arith.AndIOp, self._int_op(arith.ShRUIOp, bits, 23), 0xFF),
                                127)
        mantissa = self._int_op(arith.OrIOp, self._int_op(arith.AndIOp, bits, 0x7FFFFF), 0x800000)
        # exponent in [0, 30]: mantissa << (e - 23) or >> (23 - e); else 0
        up = self._int_op(arith.ShLIOp, mantissa, self.emit(arith.MaxSIOp(self._int_op(arith.SubiOp, exponent, 23),
                                                                          self._i32(0))).result)
        down = self._int_op(arith.ShRUIOp, mantissa, self.emit(arith.MaxSIOp(self._int_op(arith.SubiOp, self._i32(23),
                                                                                           exponent),
                                                                             self._i32(0))).result)
        above = self.emit(arith.CmpiOp(exponent, self._i32(23), "sge")).result
        magnitude = self.emit(arith.SelectOp(above, up, down)).result
        whole = self.emit(arith.AndIOp(self.emit(arith.CmpiOp(exponent, self._i32(0), "sge")).result,
                                       self.emit(arith.CmpiOp(exponent, self._i32(31), "slt")).result)).result
        magnitude = self.emit(arith.SelectOp(whole, magnitude, self._i32(0))).result
        negative = self.emit(arith.CmpiOp(self._int_op(arith.ShRUIOp, bits, 31), self._i32(0), "ne")).result
        signed = self.emit(arith.SelectOp(negative, self._int_op(arith.SubiOp, self._i32(0), magnitude),
                                          magnitude)).result
        return Scalar.opaque(self.emit(arith.IndexCastOp(signed, IndexType())).result)

    def _element_position(self, block: Block, coords: list, node, what: str):
        """The row and column (``index`` values) of the element at ``coords`` — one per dimension of
        the block, in elements — in the block taken as rows: leading dimensions fold into the row."""
        shape = tuple(block.dfb.shape)
        tile = 32 if block.dfb.is_tiled else 1
        extents = list(shape)
        extents[-1] *= tile
        if len(extents) >= 2:
            extents[-2] *= tile
        if len(coords) != len(extents):
            raise self.error(f"{what} takes {len(extents)} coordinate{'s' if len(extents) != 1 else ''} for a "
                             f"block of shape {shape}, not {len(coords)}", node)
        values = []
        for axis, (v, size) in enumerate(zip(coords, extents)):
            v = self.as_int(v, node, f"coordinate {axis} of {what}")
            if isinstance(v, int) and not 0 <= v < size:
                raise self.error(f"{what}: coordinate {axis} is {v}, outside the block ({size} elements)", node)
            values.append(v)
        if len(values) == 1:
            row, col = 0, values[0]
        else:
            row = values[0]
            for v, size in zip(values[1:-1], extents[1:-1]):
                row = self.scalars.add(self.scalars.mul(row, size), v)
            col = values[-1]
        return self.scalars.materialize(row), self.scalars.materialize(col)

    def mutable_element(self, name: str, fmt: DataFormat, node) -> MutableElement:
        """Storage (a local ``i32``) for a name holding a read element across a loop or branch."""
        from xdsl.dialects import memref

        slot = self.emit_prologue(memref.AllocaOp.get(i32, shape=[]), node)
        slot.memref.name_hint = name
        return MutableElement(slot.memref, name, fmt)

    # -- values ---------------------------------------------------------------------------------

    def _i32(self, v: int):
        return self.emit(arith.ConstantOp(IntegerAttr(v, i32))).result

    def _int_op(self, cls, a, b):
        return self.emit(cls(a, b if not isinstance(b, int) else self._i32(b))).result

    def _element_bits(self, value, fmt: DataFormat, node, what: str):
        """The ``i32`` bits, in ``fmt``, of a value written with ``raw_element_write``."""
        if isinstance(value, ElementValue):
            if value.data_format is fmt:
                return value.value
            if fmt is DataFormat.Float32:          # bfloat16 -> float32: exact
                return self._int_op(arith.ShLIOp, value.value, 16)
            # float32 -> bfloat16: truncated; a NaN keeps a mantissa bit so it stays a NaN
            high = self._int_op(arith.ShRUIOp, value.value, 16)
            nan = self._is_nan(self._int_op(arith.AndIOp, value.value, 0x7FFFFFFF), 32)
            quiet = self.emit(arith.SelectOp(nan, self._i32(0x40), self._i32(0))).result
            return self._int_op(arith.OrIOp, high, quiet)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            bits = _f32_bits(float(value))
            if fmt is DataFormat.Float16_b:
                bits = bits >> 16 | (0x40 if value != value else 0)
            return self._i32(bits)
        raise self.error(f"{what} writes a number or a value read with ttl.raw_element_read, not "
                         f"{self.describe(value)}", node)

    def _is_nan(self, magnitude, width: int):
        return self.emit(arith.CmpiOp(magnitude, self._i32(0x7F800000 if width == 32 else 0x7F80), "ugt")).result

    def _sign_magnitude(self, value, width: int):
        """``(negative, magnitude, nan)`` of an element or a number, as an IEEE value of ``width``
        bits: Python bools for a number, ``i1`` / ``i32`` values for an element."""
        if isinstance(value, ElementValue):
            bits = value.value
            if value.data_format is DataFormat.Float16_b and width == 32:
                bits = self._int_op(arith.ShLIOp, bits, 16)
            magnitude = self._int_op(arith.AndIOp, bits, (1 << (width - 1)) - 1)
            sign = self._int_op(arith.ShRUIOp, bits, width - 1)
            negative = self.emit(arith.CmpiOp(sign, self._i32(0), "ne")).result
            return negative, magnitude, self._is_nan(magnitude, width)
        bits = _f32_bits(float(value))
        magnitude = bits & 0x7FFFFFFF
        return bool(bits >> 31), magnitude, magnitude > 0x7F800000

    def unsupported_element_use(self, node):
        return self.error(f"{ast.unparse(node)[:40]}: arithmetic on (or the truth value of) a value read with "
                          "ttl.raw_element_read is not supported by tilefold yet; such values can be written with "
                          "ttl.raw_element_write and compared", node)

    def element_compare(self, op: type, left, right, node):
        """``a < b`` (``<=``, ``>``, ``>=``, ``==``, ``!=``) of read elements and numbers, as IEEE
        compares them: an ``i1``."""
        for v in (left, right):
            if not (isinstance(v, ElementValue) or isinstance(v, (int, float)) and not isinstance(v, bool)):
                raise self.error(f"{ast.unparse(node)[:40]}: a value read with ttl.raw_element_read compares "
                                 f"with another such value or a number, not {self.describe(v)}", node)
        if op not in (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq):
            raise self.error(f"{ast.unparse(node)[:40]}: values read with ttl.raw_element_read compare with "
                             "< <= > >= == !=", node)
        both_bf16 = all(isinstance(v, ElementValue) and v.data_format is DataFormat.Float16_b for v in (left, right))
        width = 16 if both_bf16 else 32
        if op in (ast.Lt, ast.LtE):
            left, right, op = right, left, ast.Gt if op is ast.Lt else ast.GtE
        sa, ma, na = self._sign_magnitude(left, width)
        sb, mb, nb = self._sign_magnitude(right, width)
        L = _Logic(self)
        both_zero = L.cmp(L.or_int(ma, mb), 0, "eq")
        if op in (ast.Eq, ast.NotEq):
            equal = L.or_(L.and_(L.cmp(ma, mb, "eq"), L.eq_flag(sa, sb)), both_zero)
            ordered_equal = L.and_(equal, L.not_(L.or_(na, nb)))
            return ordered_equal if op is ast.Eq else L.not_(ordered_equal)
        strict = op is ast.Gt
        # a > b: a >= 0 > b unless both are zeros; both >= 0: |a| > |b|; both < 0: |a| < |b|
        both_negative = L.cmp(ma, mb, "ult" if strict else "ule")
        both_positive = L.cmp(ma, mb, "ugt" if strict else "uge")
        across = L.not_(both_zero) if strict else True
        result = L.select(sa, L.select(sb, both_negative, L.and_(both_zero, not strict)),
                          L.select(sb, across, both_positive))
        return L.and_(result, L.not_(L.or_(na, nb)))


class _Logic:
    """``i1`` logic on Python bools and runtime ``i1`` values, folding what is known."""

    def __init__(self, builder):
        self.b = builder

    def _v(self, x):
        if isinstance(x, bool):
            return self.b.emit(arith.ConstantOp(IntegerAttr(int(x), i1))).result
        if isinstance(x, int):
            return self.b._i32(x)
        return x

    def cmp(self, a, b, predicate: str):
        if isinstance(a, int) and isinstance(b, int):
            return {"eq": a == b, "ult": a < b, "ule": a <= b, "ugt": a > b, "uge": a >= b}[predicate]
        return self.b.emit(arith.CmpiOp(self._v(a), self._v(b), predicate)).result

    def or_int(self, a, b):
        if isinstance(a, int) and isinstance(b, int):
            return a | b
        return self.b.emit(arith.OrIOp(self._v(a), self._v(b))).result

    def and_(self, a, b):
        return self.b.logical(ast.And, a, b, None)

    def or_(self, a, b):
        return self.b.logical(ast.Or, a, b, None)

    def not_(self, a):
        return self.b.negate(a)

    def eq_flag(self, a, b):
        if isinstance(a, bool) and isinstance(b, bool):
            return a == b
        if isinstance(a, bool):
            a, b = b, a
        if isinstance(b, bool):
            return a if b else self.not_(a)
        return self.not_(self.b.emit(arith.XOrIOp(a, b)).result)

    def select(self, c, a, b):
        if isinstance(c, bool):
            return a if c else b
        if isinstance(a, bool) and isinstance(b, bool):
            return c if a and not b else (self.not_(c) if b and not a else a)
        return self.b.emit(arith.SelectOp(c, self._v(a), self._v(b))).result
