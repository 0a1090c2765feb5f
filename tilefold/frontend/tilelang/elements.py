"""Element values of a TileLang kernel: arithmetic, comparisons, masks, casts, loads and stores.

Reads: the values the builder computes (:class:`Elem`, :class:`Index`, :class:`Cond`,
numbers). Writes: ``arith`` / ``tile.load`` / ``tile.store`` / ``tile.math`` /
``tile.index_value`` ops inside ``tile.parallel``, and ``arith`` index ops (``cmpi``,
``select``, ``minsi``) outside it. :class:`ElementRules` is a mixin of
:class:`tilefold.frontend.tilelang.builder.KernelBuilder`.

- Inside ``T.Parallel`` an index is a value too: ``T.if_then_else(i >= j, x, 0)`` compares
  ``i - j`` with 0 (``tile.index_value`` of the difference, then ``cmpf``), and ``x * i``
  multiplies by the index's value. ``and`` / ``or`` / ``not`` combine masks (``arith.andi`` ...
  on ``i1``), ``a if c else b`` and ``if c: ... else: ...`` become ``arith.select`` of both
  sides (a store made in one branch only keeps the old value in the other).
- Outside ``T.Parallel`` a comparison of indices is a :class:`Cond` (``arith.cmpi``, signed)
  for ``if``; ``T.min`` / ``T.max`` / ``a if c else b`` of indices are indices again.
- A value computed from indices and floats outside ``T.Parallel`` (``decay = T.exp2(-1.0 *
  h)``) is a :class:`Deferred`: it is built again inside each ``T.Parallel`` that uses it.
- Casts (``T.Cast``, ``T.cast``, ``x.astype``, ``T.float32(x)``): element values are computed
  in DST's float precision; a cast to an integer dtype rounds toward zero (``trunc``), to
  ``bool`` compares with 0.

Errors (:class:`KernelError` at the user's line): element stores outside ``T.Parallel``,
indices of the wrong rank or kind, element operations with no element meaning.
"""

from __future__ import annotations

from contextlib import contextmanager

import ast
import math

import numpy as np

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, f32, i1, i32
from xdsl.ir import Block, SSAValue

from tilefold.errors import KernelError
from tilefold.frontend.tilelang.dtypes import canonical_name
from tilefold.frontend.tilelang.values import BufferRef, Cond, ConstVar, Elem, Index, Region, Symbol
from tilefold.ir import tile
from tilefold.ir.sfpu import SFPU, TILELANG_LOGARITHMS

_ARITH_F = {ast.Add: arith.AddfOp, ast.Sub: arith.SubfOp, ast.Mult: arith.MulfOp, ast.Div: arith.DivfOp}
# comparison -> (signed integer predicate, ordered float predicate)
CMPI = {ast.Gt: ("sgt", "ogt"), ast.GtE: ("sge", "oge"), ast.Lt: ("slt", "olt"), ast.LtE: ("sle", "ole"),
        ast.Eq: ("eq", "oeq"), ast.NotEq: ("ne", "one")}
def known_comparison(op: type, diff) -> bool | None:
    """``diff <op> 0`` when it holds, or fails, for every value of the index's symbols (a bounds
    check ``bx * block_M + i < M`` with ``M`` a multiple of ``block_M``); None otherwise."""
    r = diff.value_range()
    if r is None:
        return None
    lo, hi = r
    if op in (ast.Eq, ast.NotEq):
        if lo == hi:
            return _PY[op](lo, 0)
        return None if lo <= 0 <= hi else op is ast.NotEq
    at_lo, at_hi = _PY[op](lo, 0), _PY[op](hi, 0)
    return at_lo if at_lo == at_hi else None


_PY = {ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b, ast.Lt: lambda a, b: a < b,
       ast.LtE: lambda a, b: a <= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}
_INT_DTYPES = ("int32", "uint32", "uint16", "uint8", "int8", "int16", "int64")


def _fold(fn: str, value: float) -> float:
    """An element function of a Python number, on the host: Python's ``math`` function of that name,
    else the function of its SFPU row (:mod:`tilefold.ir.sfpu`) in float64."""
    host = getattr(math, fn, None)
    if host is not None:
        return float(host(value))
    with np.errstate(all="ignore"):
        return float(SFPU[fn].values(np.float64(value)))


class Deferred:
    """A value computed from indices and floats outside ``T.Parallel``: the expression, and the
    scope it was written in, built again inside each ``T.Parallel`` that uses it."""

    def __init__(self, node: ast.expr, scope: dict, src):
        self.node, self.scope, self.src = node, scope, src


class ElementRules:
    """Element values (see the module docstring); mixed into the kernel builder."""

    # -- what a value is --------------------------------------------------------------------------

    def is_element(self, value) -> bool:
        return isinstance(value, (Elem, Deferred))

    def deferred(self, node) -> Deferred:
        return Deferred(node, dict(self.scope), self.src)

    def in_parallel(self, node, what: str) -> None:
        if self.parallel is None:
            raise self.error(node, f"{what} is an element operation: use it inside T.Parallel")

    def f32_constant(self, value: float, node) -> SSAValue:
        return self.insert(arith.ConstantOp(FloatAttr(float(value), f32)), node).result

    @contextmanager
    def before_parallel(self):
        """Build a value of the block (no T.Parallel index in it) before the T.Parallel loop being
        built, where the lowering finds it, rather than in its element body (outside one: here)."""
        loop = self.parallel
        if loop is None:
            yield
            return
        staging, body = Block(), self.block
        self.block, self.parallel = staging, None
        try:
            yield
        finally:
            self.block, self.parallel = body, loop
            for op in list(staging.ops):
                op.detach()
                loop.parent_block().insert_op_before(op, loop)

    def float_value(self, value, node) -> SSAValue:
        """The ``f32`` SSA value of an element operand (inside ``T.Parallel``)."""
        if isinstance(value, Elem):
            if value.is_bool:
                return self.insert(arith.SelectOp(value.value, self.f32_constant(1.0, node),
                                                  self.f32_constant(0.0, node)), node).result
            return value.value
        if isinstance(value, Deferred):
            return self.float_value(self.materialize(value), node)
        if isinstance(value, Cond):
            return self.float_value(self.as_mask(value, node), node)
        if isinstance(value, (Index, Symbol)):
            self.in_parallel(node, "using an index as a value")
            index = self.index_value(Index.of(value), node)
            return self.insert(tile.IndexValueOp(index), node).result
        if isinstance(value, bool) or isinstance(value, (int, float)):
            return self.f32_constant(float(value), node)
        if isinstance(value, Region):
            if self.parallel is not None and all(e is None for e in value.extents):
                # one element named outside T.Parallel (``m = Mean[row]``): the same value for
                # every element of the body
                return self.point_load(value, node)
            raise self.error(node, f"a region of {value.buffer.describe()} is used as an element value; read "
                                   "elements of global tensors inside T.Parallel, or copy a block with T.copy")
        raise self.error(node, f"{self.describe(value)} is used as an element value; inside T.Parallel use numbers, "
                               "indices, element loads like A[i, j], or T functions of them")

    def materialize(self, value: Deferred) -> Elem:
        saved = self.scope, self.src
        self.scope, self.src = dict(value.scope), value.src
        try:
            result = self.expr(value.node)
        finally:
            self.scope, self.src = saved
        if isinstance(result, Deferred):
            raise self.error(value.node, "this value is computed from indices; use it inside T.Parallel")
        return result if isinstance(result, Elem) else Elem(self.float_value(result, value.node))

    def as_mask(self, value, node) -> Elem:
        """An ``i1`` element mask of a condition (inside ``T.Parallel``)."""
        if isinstance(value, Elem):
            if value.is_bool:
                return value
            return Elem(self.insert(arith.CmpfOp(value.value, self.f32_constant(0.0, node), "one"), node).result, True)
        if isinstance(value, Cond):
            # the block-level condition as 0 / 1, a value of the block computed before the loop
            with self.before_parallel():
                widen = self.insert(arith.ExtUIOp(value.value, i32), node)
            v = self.insert(tile.IndexValueOp(widen.result), node).result
            return Elem(self.insert(arith.CmpfOp(v, self.f32_constant(0.5, node), "ogt"), node).result, True)
        if isinstance(value, Deferred):
            return self.as_mask(self.materialize(value), node)
        if isinstance(value, bool):
            c = self.insert(arith.ConstantOp(IntegerAttr(int(value), i1)), node).result
            return Elem(c, True)
        raise self.error(node, f"{self.describe(value)} is not a condition")

    # -- arithmetic --------------------------------------------------------------------------------

    def element_binop(self, op: ast.operator, left, right, node):
        if self.parallel is None:
            if isinstance(left, (int, float)) and isinstance(right, (int, float)):
                raise self.error(node, "unexpected element operation on numbers")
            return self.deferred(node)
        if type(op) in _ARITH_F:
            a, b = self.float_value(left, node), self.float_value(right, node)
            return Elem(self.insert(_ARITH_F[type(op)](a, b), node).result)
        if isinstance(op, (ast.BitAnd, ast.BitOr)) and all(
                (isinstance(v, Elem) and v.is_bool) or isinstance(v, (Cond, bool)) for v in (left, right)):
            # conditions joined with & / | (TileLang's spelling of and / or on masks)
            return self.logical(isinstance(op, ast.BitAnd), left, right, node)
        if isinstance(op, ast.Pow):
            if right == 2:
                a = self.float_value(left, node)
                return Elem(self.insert(arith.MulfOp(a, a), node).result)
            a, b = self.float_value(left, node), self.float_value(right, node)
            return Elem(self.insert(tile.MathOp("pow", [a, b]), node).result)
        raise self.error(node, f"operator {type(op).__name__} is not supported on element values "
                               "(use + - * / ** and T functions)")

    def negate(self, value, node):
        if self.parallel is None:
            return self.deferred(node)
        return Elem(self.insert(arith.NegfOp(self.float_value(value, node)), node).result)

    def unary(self, fn: str, value, node):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                return _fold(fn, value)
            except (ValueError, OverflowError, ZeroDivisionError):
                return math.nan
        if self.parallel is None:
            if isinstance(value, (Index, Symbol, Deferred)):
                return self.deferred(node)
            raise self.error(node, f"T.{fn} is an element function: use it inside T.Parallel")
        x = self.float_value(value, node)
        if fn in TILELANG_LOGARITHMS:
            ln = self.insert(tile.MathOp("log", [x]), node).result
            scale = 1 / math.log(TILELANG_LOGARITHMS[fn])
            return Elem(self.insert(arith.MulfOp(ln, self.f32_constant(scale, node)), node).result)
        return Elem(self.insert(tile.MathOp(fn, [x]), node).result)

    def min_max(self, which: str, args, node):
        if all(isinstance(a, (int, float)) and not isinstance(a, bool) for a in args):
            return max(args) if which == "max" else min(args)
        if all(isinstance(a, (int, Index, Symbol)) for a in args) and self.parallel is None:
            result = Index.of(args[0])
            for a in args[1:]:
                result = self.opaque_index("maxsi" if which == "max" else "minsi", result, Index.of(a))
            return result
        if self.parallel is None:
            return self.deferred(node)
        result = self.float_value(args[0], node)
        cls = arith.MaximumfOp if which == "max" else arith.MinimumfOp
        for a in args[1:]:
            result = self.insert(cls(result, self.float_value(a, node)), node).result
        return Elem(result)

    def cast_value(self, value, dtype, node=None):
        node = node or self.node
        name = canonical_name(dtype)
        if isinstance(value, (int, float, bool)) and not isinstance(value, ConstVar):
            if name == "bool":
                return bool(value)
            return int(value) if name in _INT_DTYPES else float(value)
        if isinstance(value, (Index, Symbol)) and name in _INT_DTYPES:
            return value
        if self.parallel is None:
            if isinstance(value, (Index, Symbol, Deferred)):
                return self.deferred(node)
            raise self.error(node, f"cast of {self.describe(value)} outside T.Parallel")
        if name == "bool":
            return self.as_mask(value if isinstance(value, (Elem, Cond)) else Elem(self.float_value(value, node)),
                                node)
        x = self.float_value(value, node)
        if name in _INT_DTYPES:
            return Elem(self.insert(tile.MathOp("trunc", [x]), node).result)
        if name == "bfloat16":
            return Elem(self.insert(tile.MathOp("typecast_fp32_to_bf16", [x]), node).result)
        return Elem(x, narrowed=None if name in ("float32", "float64") else name)

    # -- conditions --------------------------------------------------------------------------------

    def compare(self, op: type, a, b, node):
        signed, ordered = CMPI[op]
        if self.parallel is None and not any(isinstance(v, (Elem, Deferred)) for v in (a, b)):
            if any(isinstance(v, float) for v in (a, b)):
                return self.deferred(node)
            return self.index_condition(op, Index.of(self.index_of(a, node)), Index.of(self.index_of(b, node)), node)
        if self.parallel is None:
            return self.deferred(node)
        if all(isinstance(v, (int, Index, Symbol)) and not isinstance(v, bool) for v in (a, b)):
            known = known_comparison(op, Index.of(a) - Index.of(b))
            if known is not None:
                return known
            diff = self.index_value(Index.of(a) - Index.of(b), node)
            value = self.insert(tile.IndexValueOp(diff), node).result
            return Elem(self.insert(arith.CmpfOp(value, self.f32_constant(0.0, node), ordered), node).result, True)
        narrowed = next((v.narrowed for v in (a, b) if isinstance(v, Elem) and v.narrowed), None)
        if narrowed is not None:
            raise self.error(node, f"comparing a value cast with T.cast(..., {narrowed}) is not supported by tilefold "
                                   f"yet: inside an expression the cast does not round the value to {narrowed}, so "
                                   "the comparison would not see that rounding; compare the values before the cast")
        x, y = self.float_value(a, node), self.float_value(b, node)
        return Elem(self.insert(arith.CmpfOp(x, y, ordered), node).result, True)

    def index_condition(self, op: type, a: Index, b: Index, node):
        """``a <op> b`` on indices outside T.Parallel: a Cond, or a Python bool when it is known.
        A condition on GPU thread indices alone holds when some thread satisfies it: the block
        does its work once."""
        diff = a - b
        threads = [s for s in diff.terms if s.kind == "thread"]
        if threads:
            if len(diff.terms) != len(threads):
                raise self.error(node, "a condition mixes a GPU thread index with block indices; a Tensix core runs "
                                       "a block as one program, so write the condition on block indices only")
            return self.some_thread(op, diff, threads)
        known = known_comparison(op, diff)
        if known is not None:
            return known
        signed, _ = CMPI[op]
        cmp = arith.CmpiOp(self.index_value(a, node), self.index_value(b, node), signed)
        return Cond(self.insert(cmp, node).result)

    def some_thread(self, op: type, diff: Index, threads: list[Symbol]) -> bool:
        import itertools

        ranges = [range(s.extent or 1) for s in threads]
        for values in itertools.product(*ranges):
            total = diff.const + sum(diff.terms[s] * v for s, v in zip(threads, values))
            if _PY[op](total, 0):
                return True
        return False

    def logical(self, is_and: bool, a, b, node):
        for x, y in ((a, b), (b, a)):
            if isinstance(x, bool) or (isinstance(x, (int, float)) and not isinstance(x, Index)):
                if is_and:
                    return y if x else False
                return True if x else y
        if isinstance(a, Cond) and isinstance(b, Cond):
            cls = arith.AndIOp if is_and else arith.OrIOp
            return Cond(self.insert(cls(a.value, b.value), node).result)
        if self.parallel is None:
            return self.deferred(node)
        cls = arith.AndIOp if is_and else arith.OrIOp
        return Elem(self.insert(cls(self.as_mask(a, node).value, self.as_mask(b, node).value), node).result, True)

    def logical_not(self, value, node):
        if isinstance(value, Cond):
            true = self.insert(arith.ConstantOp(IntegerAttr(1, i1)), node).result
            return Cond(self.insert(arith.XOrIOp(value.value, true), node).result)
        if self.parallel is None:
            return self.deferred(node)
        mask = self.as_mask(value, node)
        true = self.insert(arith.ConstantOp(IntegerAttr(1, i1)), node).result
        return Elem(self.insert(arith.XOrIOp(mask.value, true), node).result, True)

    def select(self, cond, a, b, node):
        if self.parallel is None and not any(isinstance(v, (Elem, Deferred)) for v in (cond, a, b)):
            if isinstance(cond, Cond) and all(isinstance(v, (int, Index, Symbol)) and not isinstance(v, bool)
                                              for v in (a, b)):
                op = self.insert(arith.SelectOp(cond.value, self.index_value(a, node), self.index_value(b, node)),
                                 node)
                return Index({Symbol(op.result, "select", "opaque"): 1})
        if self.parallel is None:
            return self.deferred(node)
        mask = self.as_mask(cond, node)
        return Elem(self.insert(arith.SelectOp(mask.value, self.float_value(a, node), self.float_value(b, node)),
                                node).result)

    # -- loads and stores --------------------------------------------------------------------------

    def element_indices(self, buffer: BufferRef, slice_node: ast.expr, node) -> tuple[list[SSAValue], tuple]:
        """The ``i32`` indices of ``buffer[slice_node]`` and a key naming the element."""
        nodes = self.index_nodes(slice_node)
        if len(nodes) != len(buffer.shape):
            raise self.error(node, f"{buffer.name} has {len(buffer.shape)} dims but is indexed with {len(nodes)}")
        indices: list[Index] = []
        for n in nodes:
            if isinstance(n, ast.Slice):
                raise self.error(n, "inside T.Parallel index single elements (A[i, j]), not slices")
            idx = self.expr(n)
            if isinstance(idx, Symbol):
                idx = Index.of(idx)
            if isinstance(idx, bool) or not isinstance(idx, (int, Index)):
                raise self.error(n, f"index {ast.unparse(n)} of {buffer.name} is {self.describe(idx)}, not an integer")
            indices.append(Index.of(idx))
        if not buffer.is_global:
            for dim, (idx, n, extent) in enumerate(zip(indices, nodes, buffer.shape)):
                span = idx.value_range()
                if span is not None and (span[0] < 0 or span[1] >= extent):
                    where = span[1] if span[1] >= extent else span[0]
                    hint = "; the kernel's threads index it: give T.Kernel threads= that fit the buffer" \
                        if {s.name for s in idx.terms} & self.thread_names else ""
                    raise self.error(n, f"{buffer.name}[{', '.join(ast.unparse(x) for x in nodes)}] reaches index {where} of dim "
                                        f"{dim}, outside {buffer.name}'s shape {tuple(buffer.shape)}{hint}")
        indices = self.strip_leading(buffer, indices, node)
        key = (id(buffer.value),) + tuple((tuple(sorted((id(s), c) for s, c in i.terms.items())), i.const)
                                          for i in indices)
        return [self.index_value(i, n) for i, n in zip(indices, nodes[-len(indices):])], key

    def point_load(self, region: Region, node) -> SSAValue:
        buffer = region.buffer
        indices = self.strip_leading(buffer, list(region.starts), node)
        key = (id(buffer.value),) + tuple((tuple(sorted((id(s), c) for s, c in i.terms.items())), i.const)
                                          for i in indices)
        return self.load_key(buffer, [self.index_value(i, node) for i in indices], key, node)

    def load(self, buffer: BufferRef, slice_node, node) -> Elem:
        indices, key = self.element_indices(buffer, slice_node, node)
        return Elem(self.load_key(buffer, indices, key, node))

    def pending_stack(self) -> list[dict]:
        stack, frame = [], self.pending_stores
        while frame is not None:
            stack.append(frame["stores"])
            frame = frame["outer"]
        return list(reversed(stack))

    def store(self, target: ast.Subscript, value, stmt: ast.stmt) -> None:
        buffer = self.expr(target.value)
        if not isinstance(buffer, BufferRef):
            raise self.error(stmt, f"cannot assign into {self.describe(buffer)}")
        if self.parallel is None:
            raise self.error(stmt, f"element store into {buffer.name} outside T.Parallel; write elements inside "
                                   "`for i, j in T.Parallel(...)`, or use T.copy / T.fill for whole blocks (a "
                                   "Tensix core runs a block as tile operations, not per-thread scalar code)")
        indices, key = self.element_indices(buffer, target.slice, stmt)
        self.put(buffer, indices, key, value, stmt)

    def put(self, buffer: BufferRef, indices, key, value, node) -> None:
        v = self.float_value(value, node)
        if canonical_name(buffer.dtype_name or buffer.dtype) in _INT_DTYPES and not self.is_integral(v):
            v = self.insert(tile.MathOp("trunc", [v]), node).result
        if self.pending_stores is not None:
            self.pending_stores["stores"][key] = (buffer, indices, v)
            return
        earlier = self.stored_ops.get(key) if key in self.stored else None
        if earlier is not None and earlier.parent_block() is self.block:
            earlier.detach()        # stored again in this body: only the last value is stored (reads use it)
            earlier.erase()
        self.stored[key] = v
        self.stored_ops[key] = self.insert(tile.StoreOp(v, buffer.value, indices), node)

    def is_integral(self, value: SSAValue) -> bool:
        """Whether an element value is known to hold integers (no rounding needed to store it)."""
        owner = value.owner
        if isinstance(owner, tile.MathOp) and owner.fn.data in ("trunc", "floor", "ceil"):
            return True
        if isinstance(owner, tile.LoadOp):
            from tilefold.ir.tile_types import format_of_memref

            return not format_of_memref(owner.buffer.type).is_float
        return isinstance(owner, tile.IndexValueOp)

    def strip_leading(self, buffer: BufferRef, indices: list[Index], node) -> list[Index]:
        """A 3-D local buffer holds one (rows, cols) block at a time: its leading index must be the
        same expression at every access; it is dropped."""
        lead = len(buffer.shape) - len(buffer.value.type.get_shape())
        if lead <= 0 or buffer.is_global:
            return indices
        first = getattr(buffer, "leading_index", None)
        here = indices[:lead]
        key = [(sorted((id(s), c) for s, c in i.terms.items()), i.const) for i in here]
        if first is None:
            buffer.leading_index = key
        elif first != key:
            raise self.error(node, f"{buffer.name} is a {len(buffer.shape)}-D local buffer indexed with another "
                                   f"leading index here; tilefold keeps one {buffer.shape[-2:]} block of it, so "
                                   "every access must use the same leading index (or use one buffer per block)")
        return indices[lead:]

    # -- if inside T.Parallel ---------------------------------------------------------------------------

    def parallel_if(self, stmt: ast.If, cond) -> None:
        """``if c: ... else: ...`` on elements: both branches are computed and each stored element
        (and each name) becomes ``select(c, then, else)``."""
        mask = self.as_mask(cond, stmt.test)
        saved_scope = dict(self.scope)
        branches = []
        for body in (stmt.body, stmt.orelse):
            self.pending_stores = {"stores": {}, "outer": self.pending_stores}
            self.scope = dict(saved_scope)
            try:
                self.statements(body)
                branches.append((self.pending_stores["stores"], self.scope))
            finally:
                self.pending_stores = self.pending_stores["outer"]
        (then_stores, then_scope), (else_stores, else_scope) = branches
        self.scope = dict(saved_scope)
        for name in set(then_scope) | set(else_scope):
            t, e = then_scope.get(name), else_scope.get(name)
            if t is e:
                if name in then_scope:
                    self.scope[name] = t
                continue
            if isinstance(t, Elem) or isinstance(e, Elem):
                if t is None or e is None:
                    continue  # defined in one branch only: not visible after the if
                self.scope[name] = self.select(mask, t, e, stmt)
        for key in list(dict.fromkeys([*then_stores, *else_stores])):
            buffer, indices, _ = (then_stores.get(key) or else_stores.get(key))
            old = None
            if key not in then_stores or key not in else_stores:
                old = self.load_key(buffer, indices, key, stmt)
            t = then_stores[key][2] if key in then_stores else old
            e = else_stores[key][2] if key in else_stores else old
            merged = self.insert(arith.SelectOp(mask.value, t, e), stmt).result
            self.put(buffer, indices, key, Elem(merged), stmt)

    def load_key(self, buffer: BufferRef, indices, key, node) -> SSAValue:
        """The element's value: one stored earlier in this T.Parallel body (each element's
        statements run in order), else a load of the buffer."""
        for pending in reversed(self.pending_stack()):
            if key in pending:
                return pending[key][2]
        if key in self.stored:
            return self.stored[key]
        parts = self.exact_parts.get(buffer.name)
        if parts:               # an exact float32 maximum: the sum of its TF32 parts (see exact_max)
            value = None
            for part in parts:
                load = self.insert(tile.LoadOp(part.value, indices), node).result
                value = load if value is None else self.insert(arith.AddfOp(value, load), node).result
            return value
        return self.insert(tile.LoadOp(buffer.value, indices), node).result


__all__ = ["ElementRules", "Deferred", "CMPI"]
