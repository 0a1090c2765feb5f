"""An element-wise expression of one ``T.Parallel`` body → SFPU ops on DST tiles, with DST slots.

Reads: the ``f32`` ops of a parallel body (``tile.load`` leaves, ``arith.constant`` /
``addf`` / ``subf`` / ``mulf`` / ``divf`` / ``negf`` / ``maximumf`` / ``minimumf`` /
``cmpf`` / ``select``, ``tile.math``) and what each load stands for (:class:`Leaf`).
Writes: ttkernel ops for one tile, through an ``emit`` callback, and the DST slot of each
stored value.

Every value lives in a DST slot from its first use to its last: a block tile is loaded
with ``copy_tile`` (``transpose_wh_tile`` for a block read transposed); a row / column
vector or one value is broadcast into a full tile by an FPU broadcast add onto a zero tile
(``add_tiles_bcast_cols`` / ``_rows`` / ``_scalar``); a constant needed as a tile is
``fill_tile``; an index value is built from the index tiles (``copy_tile``, scaled with
``mul_unary_tile``, summed with ``add_binary_tile``, shifted by ``add_unary_tile`` or a
``fill_tile`` of a value computed at run time). Comparisons with 0 use the SFPU's zero
compares (``gtz_tile`` ...), with another constant ``unary_gt_tile`` ...; masks (1.0 / 0.0)
combine with ``mul_binary_tile`` (and), ``binary_max_tile`` (or), ``rsub_unary_tile`` (not). Operations on a value and a constant use the SFPU's scalar
forms (``add_unary_tile``, ``mul_unary_tile``, ``rsub_unary_tile``, ``unary_max_tile``,
``relu_tile`` for max(x, 0), ``recip_tile`` for 1 / x, ``power_tile`` for integer
powers); two values use the binary SFPU ops (``add_binary_tile``, ``gt_binary_tile``,
``binary_max_tile``, ``where_tile`` ...), writing into an operand's slot at its last use.
A unary op works in place, after ``copy_dest_values`` when the operand is used again.
Slots are reused as soon as a value is dead.

Errors: more values alive at once than DST holds, and element operations with no SFPU form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, f32, i1, i32
from xdsl.ir import Operation, SSAValue

from tilefold.errors import CompileError
from tilefold.ir import tile
from tilefold.ir.locations import source_location
from tilefold.ir.sfpu import SFPU
from tilefold.ir.ttkernel import api_call, float_bits

BINARY_TILE = {"arith.addf": "add_binary_tile", "arith.subf": "sub_binary_tile", "arith.mulf": "mul_binary_tile",
               "arith.divf": "div_binary_tile", "arith.maximumf": "binary_max_tile",
               "arith.minimumf": "binary_min_tile"}
COMPARE_TILE = {"ogt": "gt_binary_tile", "oge": "ge_binary_tile", "olt": "lt_binary_tile", "ole": "le_binary_tile",
                "oeq": "eq_binary_tile", "one": "ne_binary_tile"}
_PREDICATES = {1: "oeq", 2: "ogt", 3: "oge", 4: "olt", 5: "ole", 6: "one"}
ZERO_COMPARE = {"ogt": "gtz_tile", "oge": "gez_tile", "olt": "ltz_tile", "ole": "lez_tile", "oeq": "eqz_tile",
                "one": "nez_tile"}
SCALAR_COMPARE = {"ogt": "unary_gt_tile", "oge": "unary_ge_tile", "olt": "unary_lt_tile", "ole": "unary_le_tile",
                  "oeq": "unary_eq_tile", "one": "unary_ne_tile"}
FLIPPED = {"ogt": "olt", "oge": "ole", "olt": "ogt", "ole": "oge", "oeq": "oeq", "one": "one"}


class DstCapacityError(CompileError):
    """An element expression needs more DST tiles at once than one ``tile_regs_acquire`` gives."""


@dataclass(frozen=True)
class Leaf:
    """What a ``tile.load`` reads: a block tile (``tile``), one read transposed
    (``transposed``), a vector broadcast along rows (``col``: one value per row, indexed by
    i) or columns (``row``: one per column), or one value everywhere (``scalar``). ``grid``:
    the buffer's (rows, cols) of tiles."""

    buffer: str
    cb: int
    kind: str
    grid: tuple[int, int] = (1, 1)


@dataclass(frozen=True)
class IndexTerms:
    """An index value of a tile: ``row_coef · (row in tile) + col_coef · (col in tile) + offset``,
    the offset a run-time ``f32`` value (``offset_value``) or a constant (``offset_const``)."""

    row_coef: int
    col_coef: int
    offset_value: SSAValue | None
    offset_const: float


def _is_element(value: SSAValue) -> bool:
    return value.type in (f32, i1)


def float_constant(value: SSAValue) -> float | None:
    """The value of a constant element (an ``i1`` constant is 1.0 / 0.0)."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr):
        return float(owner.value.value.data)
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr) and value.type == i1:
        return float(bool(owner.value.value.data))
    return None


class SfpuTile:
    """Emits the math of one output tile; see the module docstring."""

    def __init__(self, capacity: int, emit: Callable[[Operation], Operation], leaf_index: Callable[[Leaf], SSAValue],
                 leaves: dict[SSAValue, Leaf], zero_cb: int | None, where: Operation,
                 index_terms: Callable[[SSAValue], IndexTerms] | None = None, index_cbs: dict[int, int] | None = None,
                 dst_format: str = "Float16_b"):
        self.capacity = capacity
        self.emit = emit
        self.leaf_index = leaf_index
        self.leaves = leaves
        self.zero_cb = zero_cb
        self.anchor = where
        self.index_terms = index_terms
        self.index_cbs = index_cbs or {}
        self.dst_format = dst_format       # what DST holds: Float16_b, or Float32 with fp32_dest_acc_en
        self.slot: dict[object, int] = {}
        self.free = list(range(capacity))
        self.uses: dict[object, int] = {}
        self.live_peak = 0
        self._consts: dict[int, SSAValue] = {}

    # -- values -------------------------------------------------------------------------------

    def key(self, value: SSAValue):
        """Loads of the same leaf are one value."""
        leaf = self.leaves.get(value)
        return ("leaf", leaf) if leaf is not None else value

    def i32(self, n: int) -> SSAValue:
        if n not in self._consts:
            self._consts[n] = self.emit(arith.ConstantOp(IntegerAttr(n, i32))).result
        return self._consts[n]

    def allocate(self) -> int:
        if not self.free:
            raise DstCapacityError(f"this T.Parallel body needs more than the {self.capacity} DST tiles one "
                               "tile_regs_acquire gives; split it into several T.Parallel loops",
                               source_location(self.anchor))
        s = self.free.pop(0)
        self.live_peak = max(self.live_peak, self.capacity - len(self.free))
        return s

    def release(self, k) -> None:
        self.uses[k] -= 1
        if self.uses[k] == 0 and k in self.slot:
            self.free.append(self.slot.pop(k))
            self.free.sort()

    def materialize(self, value: SSAValue) -> int:
        """The slot holding ``value``, loading a leaf or filling a constant on first use."""
        k = self.key(value)
        if k in self.slot:
            return self.slot[k]
        const = float_constant(value)
        leaf = self.leaves.get(value)
        if const is None and leaf is None:
            raise CompileError("an element value is used before it is computed", source_location(self.anchor))
        s = self.allocate()
        if const is not None:
            self.emit(api_call("fill_tile", [self.i32(s), self.emit(arith.ConstantOp(FloatAttr(const, f32))).result]))
        else:
            self.load_leaf(leaf, s)
        self.slot[k] = s
        return s

    def load_leaf(self, leaf: Leaf, s: int) -> None:
        index = self.leaf_index(leaf)
        if leaf.kind == "tile":
            self.emit(api_call("copy_tile", [self.i32(leaf.cb), index, self.i32(s)]))
            return
        if leaf.kind == "transposed":
            self.emit(api_call("transpose_wh_tile", [self.i32(leaf.cb), index, self.i32(s)]))
            return
        name = {"col": "add_tiles_bcast_cols", "row": "add_tiles_bcast_rows",
                "scalar": "add_tiles_bcast_scalar"}[leaf.kind]
        self.emit(api_call(name, [self.i32(self.zero_cb), self.i32(leaf.cb), self.i32(0), index, self.i32(s)]))

    def index_value(self, op: tile.IndexValueOp) -> None:
        """An index as a tile of values: the index tiles scaled and summed, then the offset."""
        terms = self.index_terms(op.index)
        slot = None
        for dim, coef in ((0, terms.row_coef), (1, terms.col_coef)):
            if not coef:
                continue
            s = self.allocate()
            self.emit(api_call("copy_tile", [self.i32(self.index_cbs[dim]), self.i32(0), self.i32(s)]))
            if coef != 1:
                self.emit(api_call("mul_unary_tile", [self.i32(s), self.i32(float_bits(coef))]))
            if slot is None:
                slot = s
            else:
                self.emit(api_call("add_binary_tile", [self.i32(slot), self.i32(s), self.i32(slot)]))
                self.free.append(s)
                self.free.sort()
        if terms.offset_value is not None:
            s = self.allocate()
            self.emit(api_call("fill_tile", [self.i32(s), terms.offset_value]))
            if slot is None:
                slot = s
            else:
                self.emit(api_call("add_binary_tile", [self.i32(slot), self.i32(s), self.i32(slot)]))
                self.free.append(s)
                self.free.sort()
        if slot is None:
            slot = self.allocate()
            self.emit(api_call("fill_tile", [self.i32(slot), self.emit(arith.ConstantOp(
                FloatAttr(terms.offset_const, f32))).result]))
        elif terms.offset_const:
            self.emit(api_call("add_unary_tile", [self.i32(slot), self.i32(float_bits(terms.offset_const))]))
        self.slot[self.key(op.result)] = slot

    def writable(self, value: SSAValue) -> int:
        """A slot holding ``value`` that this op may overwrite (a copy when it is used again)."""
        k = self.key(value)
        s = self.materialize(value)
        if self.uses[k] == 1:
            self.uses[k] = 0
            del self.slot[k]
            return s
        d = self.allocate()
        self.emit(api_call("copy_dest_values", [self.i32(s), self.i32(d)]))
        self.release(k)
        return d

    # -- the body --------------------------------------------------------------------------------

    def run(self, ops: list[Operation], stores: list[tuple[SSAValue, object]]) -> list[tuple[int, object]]:
        """Emit the math of ``ops``; return (slot, target) for each stored value."""
        for op in ops:
            for operand in op.operands:
                if _is_element(operand):
                    k = self.key(operand)
                    self.uses[k] = self.uses.get(k, 0) + 1
        for value, _ in stores:
            k = self.key(value)
            self.uses[k] = self.uses.get(k, 0) + 1
        for op in ops:
            if isinstance(op, (tile.LoadOp, arith.ConstantOp)) or not op.results or not _is_element(op.results[0]):
                continue
            if isinstance(op, tile.IndexValueOp):
                if self.uses.get(self.key(op.result)):
                    self.index_value(op)
                continue
            self.operation(op)
        return [(self.materialize(value), target) for value, target in stores]

    def operation(self, op: Operation) -> None:
        result = op.results[0]
        name = op.name
        args = list(op.operands)
        consts = [float_constant(a) for a in args]
        if name in ("arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.maximumf", "arith.minimumf") \
                and (consts[0] is None) != (consts[1] is None):
            self.scalar(op, name, args, consts)
            return
        if name == "arith.negf":
            self.unary("negative_tile", args[0], result)
            return
        if name == "tile.math":
            fn = op.fn.data
            if fn == "pow":
                exponent = consts[1]
                if exponent is not None and float(exponent).is_integer() and exponent >= 0:
                    self.unary("power_tile", args[0], result, [self.i32(int(exponent))])
                else:
                    self.binary("power_binary_tile", args[0], args[1], result)
                return
            sfpu = SFPU.get(fn)
            if sfpu is None or sfpu.arity != "unary" or sfpu.params:
                raise CompileError(f"T.{fn} has no SFPU form inside T.Parallel", source_location(op))
            self.unary(sfpu.call, args[0], result)
            return
        if name == "arith.mulf" and self.key(args[0]) == self.key(args[1]):
            self.release(self.key(args[1]))
            self.unary("square_tile", args[0], result)
            return
        if name in BINARY_TILE:
            self.binary(BINARY_TILE[name], args[0], args[1], result)
            return
        if name == "arith.cmpf":
            predicate = _PREDICATES.get(op.predicate.value.data)
            if predicate is None:
                raise CompileError("this comparison has no SFPU form; use < <= > >= == !=", source_location(op))
            if (consts[0] is None) != (consts[1] is None):
                c = consts[1] if consts[0] is None else consts[0]
                x = args[0] if consts[0] is None else args[1]
                predicate = predicate if consts[0] is None else FLIPPED[predicate]
                self.release(self.key(args[1] if consts[0] is None else args[0]))
                if c == 0.0:
                    self.unary(ZERO_COMPARE[predicate], x, result)
                else:
                    self.unary(SCALAR_COMPARE[predicate], x, result, [self.i32(float_bits(c))])
                return
            self.binary(COMPARE_TILE[predicate], args[0], args[1], result)
            return
        if name in ("arith.andi", "arith.ori", "arith.xori"):
            self.logical(op, name, args, consts, result)
            return
        if name == "arith.select":
            self.where(args, result)
            return
        raise CompileError(f"{name} has no SFPU form inside T.Parallel", source_location(op))

    def unary(self, fn: str, arg: SSAValue, result: SSAValue, extra: list | None = None) -> None:
        s = self.writable(arg)
        self.emit(api_call(fn, [self.i32(s), *(extra or [])]))
        self.slot[self.key(result)] = s

    def binary(self, fn: str, a: SSAValue, b: SSAValue, result: SSAValue) -> None:
        ka, kb = self.key(a), self.key(b)
        sa, sb = self.materialize(a), self.materialize(b)
        self.release(ka)
        self.release(kb)
        dead = [s for k, s in ((ka, sa), (kb, sb)) if k not in self.slot]
        if dead:
            out = dead[0]
            self.free.remove(out)
        else:
            out = self.allocate()
        self.emit(api_call(fn, [self.i32(sa), self.i32(sb), self.i32(out)]))
        self.slot[self.key(result)] = out

    def scalar(self, op: Operation, name: str, args: list[SSAValue], consts: list[float | None]) -> None:
        result = op.results[0]
        const_first = consts[0] is not None
        c = consts[0] if const_first else consts[1]
        x = args[1] if const_first else args[0]
        if name == "arith.addf":
            self.unary("add_unary_tile", x, result, [self.i32(float_bits(c))])
        elif name == "arith.mulf":
            self.unary("mul_unary_tile", x, result, [self.i32(float_bits(c))])
        elif name == "arith.subf":
            fn = "rsub_unary_tile" if const_first else "sub_unary_tile"
            self.unary(fn, x, result, [self.i32(float_bits(c))])
        elif name == "arith.divf":
            if const_first:
                self.unary("recip_tile", x, result)
                if c != 1.0:
                    self.emit(api_call("mul_unary_tile", [self.i32(self.slot[self.key(result)]),
                                                          self.i32(float_bits(c))]))
            else:
                self.unary("div_unary_tile", x, result, [self.i32(float_bits(c))])
        elif name in ("arith.maximumf", "arith.minimumf"):
            if name == "arith.maximumf" and c == 0.0:
                self.unary("relu_tile", x, result)
            else:
                fn = "unary_max_tile" if name == "arith.maximumf" else "unary_min_tile"
                self.unary(fn, x, result, [self.i32(float_bits(c))])

    def logical(self, op, name: str, args, consts, result) -> None:
        """Masks hold 1.0 / 0.0: and is a product, or a maximum, not (xor with true) 1 - x."""
        if name == "arith.xori" and (consts[0] == 1.0 or consts[1] == 1.0):
            x = args[1] if consts[0] == 1.0 else args[0]
            self.release(self.key(args[0] if consts[0] == 1.0 else args[1]))
            self.unary("rsub_unary_tile", x, result, [self.i32(float_bits(1.0))])
            return
        fn = {"arith.andi": "mul_binary_tile", "arith.ori": "binary_max_tile", "arith.xori": "ne_binary_tile"}[name]
        self.binary(fn, args[0], args[1], result)

    def where(self, args: list[SSAValue], result: SSAValue) -> None:
        keys = [self.key(a) for a in args]
        slots = [self.materialize(a) for a in args]
        for k in dict.fromkeys(keys):
            for _ in range(keys.count(k)):
                self.release(k)
        out = next((s for k, s in zip(keys, slots) if k not in self.slot and s in self.free), None)
        if out is not None:
            self.free.remove(out)
        else:
            out = self.allocate()
        self.emit(api_call("where_tile", [*(self.i32(s) for s in slots), self.i32(out)],
                           {"data_format": self.dst_format}))
        self.slot[self.key(result)] = out
