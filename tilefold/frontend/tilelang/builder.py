"""A ``@T.prim_func`` body (Python AST) → a ``func.func`` of ``tile`` ops.

Reads: the kernel's :class:`FunctionSource` and parameter types. Writes: a ``builtin.module``
holding ``func.func @<name>(%A: memref<...>, ...)`` with the function attributes
``tile.params`` (parameter names), ``tt.user_layout`` / ``tt.user_schedule`` (annotations,
each with the ``loc`` of the call) and every op located at the user's line.

The body is read, not run: Python-level values (constants, shapes, dtypes, helper calls on
them) are computed while building; block indices, loop variables and ``T.Parallel`` indices
are symbolic :class:`Index` values; element expressions inside ``T.Parallel`` become
``tile.load`` / ``arith`` / ``tile.math`` / ``tile.store`` ops. A Python helper called with
buffers, indices or element values is built in place (inlined), its ops at its own lines.

The ``T`` primitives are built by the rules of :mod:`.primitives`; this module walks the
statements and expressions around them. Errors, each one :class:`KernelError` at the user's
line: unknown ``T`` primitives, unsupported Python constructs (``while``, ``if`` on a device
value, non-constant loop bounds ...), undefined names, element stores outside ``T.Parallel``.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import operator

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FloatAttr, FunctionType, ModuleOp, f32
from xdsl.ir import Block, Operation, SSAValue

from tilefold.errors import KernelError, TilefoldError
from tilefold.frontend.tilelang.primitives import USAGE, PrimitiveRules
from tilefold.frontend.source import MISSING, FunctionSource
from tilefold.frontend.tilelang.types import memref_type
from tilefold.frontend.tilelang.values import (
    BufferRef,
    Elem,
    Index,
    Region,
    Symbol,
    constant,
    pop_builder,
    push_builder,
)
from tilefold.ir import tile
from tilefold.passes.tilelang.attributes import set_attr

TILE = 32
_LANGUAGE_MODULES = ("tilefold.language", "tilefold.frontend.tilelang.api")
_ARITH_F = {ast.Add: arith.AddfOp, ast.Sub: arith.SubfOp, ast.Mult: arith.MulfOp, ast.Div: arith.DivfOp}
_CMP = {ast.Gt: "ogt", ast.GtE: "oge", ast.Lt: "olt", ast.LtE: "ole", ast.Eq: "oeq", ast.NotEq: "one"}
_PY_BINOP = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
             ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
             ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitAnd: operator.and_,
             ast.BitOr: operator.or_, ast.BitXor: operator.xor}
_PY_CMP = {ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not,
           ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
_UNSUPPORTED = {
    ast.While: "while loops are not supported in a TileLang kernel; use `for k in T.serial(n)` with a constant n",
    ast.Try: "try statements are not supported in a kernel",
    ast.Raise: "raise is not supported in a kernel",
    ast.Delete: "del is not supported in a kernel",
    ast.Global: "global is not supported in a kernel",
    ast.Nonlocal: "nonlocal is not supported in a kernel",
    ast.Import: "import inside a kernel is not supported; import at module level",
    ast.ImportFrom: "import inside a kernel is not supported; import at module level",
    ast.FunctionDef: "nested functions are not supported in a kernel; define helpers at module level",
    ast.ClassDef: "classes are not supported in a kernel",
    ast.Assert: "assert is not supported in a kernel",
}


def _is_language_module(value) -> bool:
    return getattr(value, "__name__", None) in _LANGUAGE_MODULES


def _is_static(value) -> bool:
    return not isinstance(value, (Index, Elem, BufferRef, Region, Symbol))


class KernelBuilder(PrimitiveRules):
    """Builds the ``tile`` IR of one :class:`PrimFunc`; use :func:`build_prim_func`."""

    def __init__(self, prim):
        self.prim = prim
        self.src = FunctionSource.of(prim.python_function)
        self.scope: dict[str, object] = {}
        self.block: Block | None = None
        self.node: ast.AST = self.src.tree
        self.kernel_op: tile.KernelOp | None = None
        self.parallel: tile.ParallelOp | None = None
        self.buffer_names: set[str] = set()
        self.layout: dict[str, dict] = {}
        self.schedule: dict = {}
        self.inlining: list = []

    # -- entry -------------------------------------------------------------------------------------

    def build(self) -> ModuleOp:
        prim, src = self.prim, self.src
        types = [memref_type(p.type.shape, p.type.dtype) for p in prim.params]
        function = func.FuncOp(prim.name, FunctionType.from_lists(types, []))
        function.location = src.loc(src.tree)
        for arg, p in zip(function.body.block.args, prim.params):
            arg.name_hint = p.name
            self.scope[p.name] = BufferRef(p.name, p.type.shape, p.type.dtype, "global", arg)
            self.buffer_names.add(p.name)
        for name, (spec, where) in prim.layout.items():
            self.layout[name] = dict(spec, loc=[where.file, where.line] if where else None)
        if prim.schedule:
            where = prim.schedule.get("__loc__")
            self.schedule = {k: v for k, v in prim.schedule.items() if k != "__loc__"}
            self.schedule["loc"] = [where.file, where.line] if where else None
        self.block = function.body.block
        push_builder(self)
        try:
            self.statements(src.tree.body)
        finally:
            pop_builder()
        if self.kernel_op is None:
            raise src.error(src.tree, f"kernel {prim.name!r} has no `with T.Kernel(...) as (bx, by):` block; put its "
                                      "body inside one")
        self.insert(func.ReturnOp(), src.tree)
        set_attr(function, "tile.params", [p.name for p in prim.params])
        if self.layout:
            set_attr(function, "tt.user_layout", self.layout)
        if self.schedule:
            set_attr(function, "tt.user_schedule", self.schedule)
        module = ModuleOp([function])
        module.verify()
        return module

    # -- helpers -----------------------------------------------------------------------------------

    def error(self, node: ast.AST, message: str) -> KernelError:
        return self.src.error(node, message)

    def insert(self, op: Operation, node: ast.AST | None = None) -> Operation:
        op.location = self.src.loc(node or self.node)
        self.block.add_op(op)
        return op

    def unique_buffer_name(self, hint: str) -> str:
        name, n = hint, 1
        while name in self.buffer_names:
            name, n = f"{hint}_{n}", n + 1
        self.buffer_names.add(name)
        return name

    def index_value(self, idx, node: ast.AST | None = None) -> SSAValue:
        """An ``i32`` SSA value computing ``idx``."""
        idx = Index.of(idx)
        total: SSAValue | None = None
        for sym, coef in idx.terms.items():
            term = sym.value
            if coef != 1:
                term = self.insert(arith.MuliOp(term, self.insert(constant(coef), node)), node).result
            total = term if total is None else self.insert(arith.AddiOp(total, term), node).result
        if total is None:
            return self.insert(constant(idx.const), node).result
        if idx.const:
            total = self.insert(arith.AddiOp(total, self.insert(constant(idx.const), node)), node).result
        return total

    def opaque_index(self, opname: str, a: Index, b: Index) -> Index:
        """``a op b`` for an index operation that is not linear (``//``, ``%``, a product)."""
        cls = {"muli": arith.MuliOp, "divui": arith.DivUIOp, "remui": arith.RemUIOp}[opname]
        op = self.insert(cls(self.index_value(a), self.index_value(b)))
        sym = Symbol(op.result, f"({a!r} {opname} {b!r})", "opaque")
        return Index({sym: 1})

    def float_value(self, value, node) -> SSAValue:
        if isinstance(value, Elem):
            if value.is_bool:
                raise self.error(node, "a comparison result is used as a number; use T.if_then_else(cond, a, b)")
            return value.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(node, f"{self.describe(value)} is used as an element value; inside T.Parallel use "
                                   "numbers, element loads like A[i, j], or T functions of them")
        return self.insert(arith.ConstantOp(FloatAttr(float(value), f32)), node).result

    def describe(self, value) -> str:
        if isinstance(value, BufferRef):
            return value.describe()
        if isinstance(value, Region):
            return f"a region of {value.buffer.describe()}"
        if isinstance(value, (Index, Symbol)):
            return f"the index {value!r}"
        if isinstance(value, Elem):
            return "an element value"
        return repr(value)

    # -- statements --------------------------------------------------------------------------------

    def statements(self, stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            saved = self.node
            self.node = stmt
            try:
                self.statement(stmt)
            except KernelError as err:
                if err.location is None:
                    err.location = self.src.location(stmt)
                raise
            except TilefoldError:
                raise
            self.node = saved

    def statement(self, stmt: ast.stmt) -> None:
        handler = getattr(self, f"stmt_{type(stmt).__name__}", None)
        if handler is None:
            message = _UNSUPPORTED.get(type(stmt), f"unsupported construct: {type(stmt).__name__} statements are not "
                                                   "supported in a TileLang kernel")
            raise self.error(stmt, message)
        handler(stmt)

    def stmt_Pass(self, stmt) -> None:
        pass

    def stmt_Expr(self, stmt: ast.Expr) -> None:
        value = stmt.value
        if isinstance(value, ast.Constant) and (isinstance(value.value, str) or value.value is Ellipsis):
            return
        if isinstance(value, ast.Call):
            self.call(value)
            return
        raise self.error(stmt, f"this expression ({ast.unparse(value)[:40]}) has no effect; remove it")

    def stmt_Return(self, stmt: ast.Return) -> None:
        if stmt.value is not None and not (isinstance(stmt.value, ast.Constant) and stmt.value.value is None):
            raise self.error(stmt, "a kernel returns nothing; write results into its output tensors with T.copy")

    def stmt_If(self, stmt: ast.If) -> None:
        cond = self.expr(stmt.test)
        if isinstance(cond, (Index, Elem)) and not (isinstance(cond, Index) and cond.is_constant):
            raise self.error(stmt, "unsupported construct: `if` on a value known only on the device; the condition "
                                   "must be a Python constant (inside T.Parallel use T.if_then_else)")
        self.statements(stmt.body if cond else stmt.orelse)

    def stmt_Assign(self, stmt: ast.Assign) -> None:
        if len(stmt.targets) != 1:
            raise self.error(stmt, "chained assignment (a = b = ...) is not supported; assign one name at a time")
        self.assign(stmt.targets[0], stmt.value, stmt)

    def stmt_AnnAssign(self, stmt: ast.AnnAssign) -> None:
        if stmt.value is None:
            raise self.error(stmt, "a declaration without a value is not supported; assign a value")
        self.assign(stmt.target, stmt.value, stmt)

    def assign(self, target: ast.expr, value_node: ast.expr, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Subscript):
            self.store(target, self.expr(value_node), stmt)
            return
        if isinstance(target, ast.Name):
            value = self.expr(value_node, name_hint=target.id)
            self.scope[target.id] = value
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            value = self.expr(value_node)
            if not isinstance(value, (tuple, list)) or len(value) != len(target.elts):
                raise self.error(stmt, f"cannot unpack {self.describe(value)} into {len(target.elts)} names")
            for t, v in zip(target.elts, value):
                if not isinstance(t, ast.Name):
                    raise self.error(stmt, "unpack into plain names only")
                self.scope[t.id] = v
            return
        raise self.error(stmt, f"cannot assign to {ast.unparse(target)}")

    def stmt_AugAssign(self, stmt: ast.AugAssign) -> None:
        if isinstance(stmt.target, ast.Subscript):
            current = self.expr(stmt.target)
            value = self.binop(stmt.op, current, self.expr(stmt.value), stmt)
            self.store(stmt.target, value, stmt)
            return
        if isinstance(stmt.target, ast.Name):
            current = self.expr(stmt.target)
            self.scope[stmt.target.id] = self.binop(stmt.op, current, self.expr(stmt.value), stmt)
            return
        raise self.error(stmt, f"cannot update {ast.unparse(stmt.target)}")

    def store(self, target: ast.Subscript, value, stmt: ast.stmt) -> None:
        buffer = self.expr(target.value)
        if not isinstance(buffer, BufferRef):
            raise self.error(stmt, f"cannot assign into {self.describe(buffer)}")
        if self.parallel is None:
            raise self.error(stmt, f"element store into {buffer.name} outside T.Parallel; write elements inside "
                                   "`for i, j in T.Parallel(...)`, or use T.copy / T.fill for whole blocks")
        indices = self.element_indices(buffer, target.slice, stmt)
        self.insert(tile.StoreOp(self.float_value(value, stmt), buffer.value, indices), stmt)

    # -- with T.Kernel -----------------------------------------------------------------------------

    def stmt_With(self, stmt: ast.With) -> None:
        if len(stmt.items) != 1 or not isinstance(stmt.items[0].context_expr, ast.Call):
            raise self.error(stmt, "only `with T.Kernel(...) as (bx, by):` is supported in a kernel")
        item = stmt.items[0]
        call = item.context_expr
        if getattr(self.expr(call.func), "__tile_intrinsic__", None) != "Kernel":
            raise self.error(stmt, f"`with {ast.unparse(call.func)}(...)` is not supported; only T.Kernel opens a "
                                   "block")
        if self.kernel_op is not None or not isinstance(self.block.parent_op(), func.FuncOp):
            raise self.error(stmt, "a kernel has one `with T.Kernel(...)` block, at the top of its body")
        grid = [self.static_int(a, "T.Kernel grid size") for a in call.args]
        for kw in call.keywords:
            if kw.arg not in ("threads", "prelude", "is_cpu"):
                raise self.error(kw, f"T.Kernel has no argument {kw.arg!r}")
            self.expr(kw.value)
        if not 1 <= len(grid) <= 2:
            raise self.error(call, f"T.Kernel with {len(grid)} grid dimensions; tilefold supports 1-D and 2-D grids")
        if any(g <= 0 for g in grid):
            raise self.error(call, f"T.Kernel grid {grid} must be positive")
        targets = self.loop_targets(item.optional_vars, len(grid), stmt, "T.Kernel")
        op = self.insert(tile.KernelOp(grid), stmt)
        self.kernel_op = op
        for arg, name, extent in zip(op.body.block.args, targets, grid):
            arg.name_hint = name
            self.scope[name] = Index({Symbol(arg, name, "grid", extent): 1})
        outer = self.block
        self.block = op.body.block
        self.statements(stmt.body)
        self.block = outer

    def loop_targets(self, target: ast.expr | None, count: int, stmt, what: str) -> list[str]:
        if target is None:
            return [f"_{what.lower()}{i}" for i in range(count)]
        names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        if len(names) != count or not all(isinstance(n, ast.Name) for n in names):
            raise self.error(stmt, f"{what} has {count} dimension(s); bind as many plain names "
                                   f"(got {ast.unparse(target)})")
        return [n.id for n in names]

    # -- loops -------------------------------------------------------------------------------------

    def stmt_For(self, stmt: ast.For) -> None:
        if stmt.orelse:
            raise self.error(stmt, "for ... else is not supported in a kernel")
        it = stmt.iter
        if isinstance(it, ast.Call):
            fn = self.expr(it.func)
            rule = getattr(fn, "__tile_intrinsic__", None)
            if rule == "Parallel":
                self.parallel_loop(stmt, it)
                return
            if rule in ("serial", "Pipelined") or fn is builtins.range:
                self.serial_loop(stmt, it, "pipelined" if rule == "Pipelined" else "serial")
                return
        values = self.expr(it)
        if isinstance(values, (tuple, list, range)):
            for v in values:
                self.bind_static_target(stmt.target, v, stmt)
                self.statements(stmt.body)
            return
        raise self.error(stmt, f"unsupported loop over {ast.unparse(it)}; use T.serial, T.Pipelined, T.Parallel or "
                               "range with constant bounds")

    def bind_static_target(self, target, value, stmt) -> None:
        if isinstance(target, ast.Name):
            self.scope[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (tuple, list)) \
                and len(value) == len(target.elts):
            for t, v in zip(target.elts, value):
                self.bind_static_target(t, v, stmt)
        else:
            raise self.error(stmt, f"cannot bind {ast.unparse(target)} to {value!r}")

    def serial_loop(self, stmt: ast.For, call: ast.Call, kind: str) -> None:
        what = {"serial": "T.serial", "pipelined": "T.Pipelined"}[kind]
        if self.parallel is not None:
            raise self.error(stmt, f"{what} inside T.Parallel is not supported; a T.Parallel body is element-wise")
        if self.kernel_op is None:
            raise self.error(stmt, f"{what} outside `with T.Kernel(...)`; put loops inside the kernel block")
        args = [self.static_int(a, f"{what} bound") for a in call.args]
        kwargs = {kw.arg: kw for kw in call.keywords}
        stages = None
        if kind == "pipelined":
            if "num_stages" in kwargs:
                stages = self.static_int(kwargs.pop("num_stages").value, "num_stages")
                if stages < 0:
                    raise self.error(call, "num_stages must be at least 0")
            for key in ("order", "stage", "sync", "group", "num_stages"):
                kwargs.pop(key, None)
        if kwargs:
            raise self.error(call, f"{what} has no argument {next(iter(kwargs))!r}")
        if not 1 <= len(args) <= 3:
            raise self.error(call, f"{what} takes (stop), (start, stop) or (start, stop, step)")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
        if step <= 0:
            raise self.error(call, f"{what} step {step} must be positive")
        if not isinstance(stmt.target, ast.Name):
            raise self.error(stmt, f"{what} binds one loop variable")
        lb = self.insert(constant(start), call).result
        ub = self.insert(constant(stop), call).result
        op = self.insert(tile.ForOp(lb, ub, kind, step, max(stages, 1) if stages is not None else None), stmt)
        op.iv.name_hint = stmt.target.id
        trips = max(0, -(-(stop - start) // step))
        self.scope[stmt.target.id] = Index({Symbol(op.iv, stmt.target.id, "loop", trips): 1})
        outer = self.block
        self.block = op.body.block
        self.statements(stmt.body)
        self.block = outer

    def parallel_loop(self, stmt: ast.For, call: ast.Call) -> None:
        if self.parallel is not None:
            raise self.error(stmt, "nested T.Parallel is not supported; use one T.Parallel(m, n) over both dims")
        if self.kernel_op is None:
            raise self.error(stmt, "T.Parallel outside `with T.Kernel(...)`")
        extents = [self.static_int(a, "T.Parallel extent") for a in call.args]
        if call.keywords:
            raise self.error(call, f"T.Parallel has no argument {call.keywords[0].arg!r}")
        if not 1 <= len(extents) <= 2 or any(e <= 0 for e in extents):
            raise self.error(call, f"T.Parallel{tuple(extents)}: give one or two positive extents")
        names = self.loop_targets(stmt.target, len(extents), stmt, "T.Parallel")
        op = self.insert(tile.ParallelOp(extents), stmt)
        saved = dict(self.scope)
        for arg, name, extent in zip(op.body.block.args, names, extents):
            arg.name_hint = name
            self.scope[name] = Index({Symbol(arg, name, "parallel", extent): 1})
        outer = self.block
        self.block, self.parallel = op.body.block, op
        try:
            self.statements(stmt.body)
        finally:
            self.block, self.parallel = outer, None
        # element temporaries do not outlive the body
        self.scope = {k: v for k, v in self.scope.items() if not isinstance(v, Elem) or k in saved}
        for name in names:
            if name in saved:
                self.scope[name] = saved[name]
            else:
                self.scope.pop(name, None)

    # -- expressions -------------------------------------------------------------------------------

    def static_int(self, node: ast.expr, what: str) -> int:
        value = self.expr(node)
        if isinstance(value, Index) and value.is_constant:
            value = value.const
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(node, f"{what} must be a Python integer constant, not {self.describe(value)}")
        return value

    def expr(self, node: ast.expr, name_hint: str | None = None):
        handler = self.call if isinstance(node, ast.Call) else getattr(self, f"expr_{type(node).__name__}", None)
        if handler is None:
            raise self.error(node, f"unsupported construct: {type(node).__name__} expressions are not supported in a "
                                   "TileLang kernel")
        saved = self.node
        self.node = node
        try:
            if isinstance(node, ast.Call):
                return self.call(node, name_hint)
            return handler(node)
        finally:
            self.node = saved

    def expr_Constant(self, node: ast.Constant):
        return node.value

    def expr_Name(self, node: ast.Name):
        if node.id in self.scope:
            return self.scope[node.id]
        value = self.src.lookup(node.id)
        if value is MISSING:
            raise self.error(node, f"name {node.id!r} is not defined")
        return value

    def expr_Attribute(self, node: ast.Attribute):
        base = self.expr(node.value)
        if isinstance(base, BufferRef):
            if node.attr in ("shape", "dtype", "name"):
                return {"shape": base.shape, "dtype": base.dtype, "name": base.name}[node.attr]
            raise self.error(node, f"{base.describe()} has no attribute {node.attr!r} (shape, dtype and name exist)")
        if not _is_static(base):
            raise self.error(node, f"{self.describe(base)} has no attribute {node.attr!r}")
        value = getattr(base, node.attr, MISSING)
        if value is MISSING:
            if _is_language_module(base):
                known = ", ".join(sorted(n for n in dir(base) if not n.startswith("_")))
                raise self.error(node, f"unknown TileLang primitive T.{node.attr}; tilefold.language provides: {known}")
            raise self.error(node, f"{ast.unparse(node.value)} has no attribute {node.attr!r}")
        return value

    def expr_Tuple(self, node):
        return tuple(self.expr(e) for e in node.elts)

    def expr_List(self, node):
        return [self.expr(e) for e in node.elts]

    def expr_Dict(self, node):
        out = {}
        for k, v in zip(node.keys, node.values):
            key = self.expr(k)
            out[key.name if isinstance(key, BufferRef) else key] = self.expr(v)
        return out

    def expr_JoinedStr(self, node):
        return ast.literal_eval(node) if all(isinstance(v, ast.Constant) for v in node.values) else \
            "".join(str(self.expr(v.value)) if isinstance(v, ast.FormattedValue) else v.value for v in node.values)

    def expr_Slice(self, node):
        raise self.error(node, "a slice is only valid as a buffer index, A[a:b, c:d]")

    def expr_IfExp(self, node: ast.IfExp):
        cond = self.expr(node.test)
        if not _is_static(cond):
            raise self.error(node, "`a if c else b` needs a Python constant condition; inside T.Parallel use "
                                   "T.if_then_else(c, a, b)")
        return self.expr(node.body) if cond else self.expr(node.orelse)

    def expr_BoolOp(self, node: ast.BoolOp):
        values = [self.expr(v) for v in node.values]
        if not all(_is_static(v) for v in values):
            raise self.error(node, "`and` / `or` of device values is not supported; combine conditions with "
                                   "nested T.if_then_else")
        result = values[0]
        for v in values[1:]:
            result = (result and v) if isinstance(node.op, ast.And) else (result or v)
        return result

    def expr_UnaryOp(self, node: ast.UnaryOp):
        value = self.expr(node.operand)
        if isinstance(value, Elem):
            if isinstance(node.op, ast.USub):
                return Elem(self.insert(arith.NegfOp(self.float_value(value, node)), node).result)
            if isinstance(node.op, ast.UAdd):
                return value
            raise self.error(node, f"{type(node.op).__name__} of an element value is not supported")
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.UAdd):
            return +value
        if isinstance(node.op, ast.Not):
            return not value
        if isinstance(node.op, ast.Invert):
            return ~value
        raise self.error(node, f"unsupported operator {type(node.op).__name__}")

    def expr_BinOp(self, node: ast.BinOp):
        return self.binop(node.op, self.expr(node.left), self.expr(node.right), node)

    def binop(self, op: ast.operator, left, right, node):
        if isinstance(left, Elem) or isinstance(right, Elem):
            if type(op) in _ARITH_F:
                a, b = self.float_value(left, node), self.float_value(right, node)
                return Elem(self.insert(_ARITH_F[type(op)](a, b), node).result)
            if isinstance(op, ast.Pow):
                if right == 2:
                    a = self.float_value(left, node)
                    return Elem(self.insert(arith.MulfOp(a, a), node).result)
                a, b = self.float_value(left, node), self.float_value(right, node)
                return Elem(self.insert(tile.MathOp("pow", [a, b]), node).result)
            raise self.error(node, f"operator {type(op).__name__} is not supported on element values "
                                   "(use + - * / ** and T functions)")
        fn = _PY_BINOP.get(type(op))
        if fn is None:
            raise self.error(node, f"unsupported operator {type(op).__name__}")
        if isinstance(left, (Index, Symbol)) or isinstance(right, (Index, Symbol)):
            if isinstance(op, ast.Div):
                raise self.error(node, "`/` of an index gives a float; use `//` for integer division")
            if isinstance(left, float) or isinstance(right, float):
                raise self.error(node, "an index cannot be combined with a float")
        if not (_is_static(left) or isinstance(left, (Index, Symbol))) or \
                not (_is_static(right) or isinstance(right, (Index, Symbol))):
            raise self.error(node, f"cannot apply {type(op).__name__} to {self.describe(left)} and "
                                   f"{self.describe(right)}")
        try:
            result = fn(left, right)
        except KernelError as err:
            if err.location is None:
                err.location = self.src.location(node)
            raise
        except Exception as exc:
            raise self.error(node, f"{ast.unparse(node)} failed while compiling the kernel: {exc}") from None
        if result is NotImplemented:
            raise self.error(node, f"cannot apply {type(op).__name__} to {self.describe(left)} and "
                                   f"{self.describe(right)}")
        return result

    def expr_Compare(self, node: ast.Compare):
        left = self.expr(node.left)
        rights = [self.expr(c) for c in node.comparators]
        if isinstance(left, Elem) or any(isinstance(r, Elem) for r in rights):
            if len(rights) != 1 or type(node.ops[0]) not in _CMP:
                raise self.error(node, "compare two element values with one of < <= > >= == !=")
            a, b = self.float_value(left, node), self.float_value(rights[0], node)
            return Elem(self.insert(arith.CmpfOp(a, b, _CMP[type(node.ops[0])]), node).result, is_bool=True)
        if any(isinstance(v, (Index, Symbol)) and not Index.of(v).is_constant for v in [left, *rights]):
            raise self.error(node, "comparing block indices or loop variables is not supported; conditions must be "
                                   "Python constants")
        result = True
        for op, right in zip(node.ops, rights):
            result = result and _PY_CMP[type(op)](left, right)
            left = right
        return result

    def expr_Subscript(self, node: ast.Subscript):
        base = self.expr(node.value)
        if isinstance(base, BufferRef):
            if self.parallel is not None:
                indices = self.element_indices(base, node.slice, node)
                return Elem(self.insert(tile.LoadOp(base.value, indices), node).result)
            return self.region(base, node.slice, node)
        if not _is_static(base):
            raise self.error(node, f"cannot index {self.describe(base)}")
        key = self.expr(node.slice) if not isinstance(node.slice, ast.Slice) else slice(
            *(self.expr(p) if p is not None else None for p in (node.slice.lower, node.slice.upper, node.slice.step)))
        try:
            return base[key]
        except Exception as exc:
            raise self.error(node, f"{ast.unparse(node)}: {exc}") from None

    def index_nodes(self, slice_node: ast.expr) -> list[ast.expr]:
        return list(slice_node.elts) if isinstance(slice_node, ast.Tuple) else [slice_node]

    def element_indices(self, buffer: BufferRef, slice_node: ast.expr, node) -> list[SSAValue]:
        nodes = self.index_nodes(slice_node)
        if len(nodes) != len(buffer.shape):
            raise self.error(node, f"{buffer.name} has {len(buffer.shape)} dims but is indexed with {len(nodes)}")
        values = []
        for n in nodes:
            if isinstance(n, ast.Slice):
                raise self.error(n, "inside T.Parallel index single elements (A[i, j]), not slices")
            idx = self.expr(n)
            if isinstance(idx, Symbol):
                idx = Index.of(idx)
            if isinstance(idx, bool) or not isinstance(idx, (int, Index)):
                raise self.error(n, f"index {ast.unparse(n)} of {buffer.name} is {self.describe(idx)}, not an integer")
            values.append(self.index_value(idx, n))
        return values

    def region(self, buffer: BufferRef, slice_node: ast.expr, node) -> Region:
        nodes = self.index_nodes(slice_node)
        if len(nodes) != len(buffer.shape):
            raise self.error(node, f"{buffer.name} has {len(buffer.shape)} dims but the region gives {len(nodes)}")
        starts: list[Index] = []
        extents: list[int | None] = []
        for n in nodes:
            if isinstance(n, ast.Slice):
                if n.step is not None:
                    raise self.error(n, "region slices take no step")
                lo = Index.of(self.expr(n.lower)) if n.lower is not None else Index()
                if n.upper is None:
                    raise self.error(n, f"give the end of the slice ({ast.unparse(n)})")
                hi = Index.of(self.expr(n.upper))
                extent = hi - lo
                if not extent.is_constant:
                    raise self.error(n, f"slice {ast.unparse(n)} has no constant length; write start:start+length")
                starts.append(lo)
                extents.append(extent.const)
            else:
                value = self.expr(n)
                if isinstance(value, bool) or not isinstance(value, (int, Index, Symbol)):
                    raise self.error(n, f"region start {ast.unparse(n)} is {self.describe(value)}, not an integer")
                starts.append(Index.of(value))
                extents.append(None)
        return Region(buffer, starts, extents)

    # -- calls -------------------------------------------------------------------------------------

    def call(self, node: ast.Call, name_hint: str | None = None):
        fn = self.expr(node.func)
        rule = getattr(fn, "__tile_intrinsic__", None)
        if rule is not None:
            handler = getattr(self, f"rule_{rule}", None)
            if handler is None:
                raise self.error(node, f"T.{rule} can only be used as `{USAGE.get(rule, rule)}`")
            return handler(node, name_hint)
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise self.error(node, "*args in a kernel call is not supported")
        args = [self.expr(a) for a in node.args]
        kwargs = {kw.arg: self.expr(kw.value) for kw in node.keywords}
        if inspect.isfunction(fn) and not all(_is_static(v) for v in [*args, *kwargs.values()]):
            return self.inline(fn, args, kwargs, node)
        if any(isinstance(a, Elem) for a in [*args, *kwargs.values()]):
            if fn in (builtins.max, builtins.min) and len(args) == 2 and not kwargs:
                return self.min_max("max" if fn is builtins.max else "min", args, node)
            if fn is builtins.abs and len(args) == 1:
                return self.unary("abs", args[0], node)
            raise self.error(node, f"{getattr(fn, '__name__', fn)!s} cannot take element values; use T functions "
                                   "(T.exp, T.max, T.if_then_else, ...)")
        if not callable(fn):
            raise self.error(node, f"{ast.unparse(node.func)} is not callable")
        try:
            return fn(*args, **kwargs)
        except KernelError as err:
            if err.location is None:
                err.location = self.src.location(node)
            raise
        except TilefoldError:
            raise
        except Exception as exc:
            raise self.error(node, f"{ast.unparse(node)[:60]} failed while compiling the kernel: {exc}") from None

    def inline(self, fn, args: list, kwargs: dict, node: ast.Call):
        """Build the body of a Python helper called with kernel values (buffers, indices,
        element values) in place, as if it were written at the call: its statements run in a
        scope of its own, and a final ``return`` gives the call's value."""
        if len(self.inlining) >= 32:
            raise self.error(node, f"helper {fn.__name__} calls itself too deeply; kernels cannot recurse")
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as exc:
            raise self.error(node, f"{fn.__name__}(...): {exc}") from None
        bound.apply_defaults()
        source = FunctionSource.of(fn)
        saved = self.scope, self.src
        self.scope, self.src = dict(bound.arguments), source
        self.inlining.append(fn)
        try:
            body = source.tree.body
            for i, stmt in enumerate(body):
                if isinstance(stmt, ast.Return):
                    if i != len(body) - 1:
                        raise self.error(stmt, "a helper used in a kernel returns only at its end")
                    return self.expr(stmt.value) if stmt.value is not None else None
                self.statements([stmt])
            return None
        finally:
            self.inlining.pop()
            self.scope, self.src = saved


def build_prim_func(prim) -> ModuleOp:
    """The ``tile`` IR module of a :class:`PrimFunc`."""
    return KernelBuilder(prim).build()
