"""A ``@T.prim_func`` body (Python AST) → a ``func.func`` of ``tile`` ops.

Reads: the kernel's :class:`FunctionSource` and parameter types — or, for an eager kernel
(``@tilefold.jit`` on a function whose body declares ``A: T.Tensor(...)``), its compile-time
arguments and the shapes of the tensors it is called with. Writes: a ``builtin.module`` holding
``func.func @<name>(%A: memref<...>, ...)`` with the function attributes ``tile.params``
(parameter names), ``tt.user_layout`` / ``tt.user_schedule`` / ``tt.user_compute`` (annotations, the first two with the
``loc`` of the call), ``tt.use_swizzle`` (the rasterization hint) and ``tile.atomic``
(tensors ``T.atomic_add`` adds into), and every op located at the user's line.

The body is read, not run: Python-level values (constants, shapes, dtypes, helper calls on
them) are computed while building; block indices, loop variables and ``T.Parallel`` indices
are symbolic :class:`Index` values; element expressions inside ``T.Parallel`` become
``tile.load`` / ``arith`` / ``tile.math`` / ``tile.store`` ops. A Python helper called with
buffers, indices or element values is built in place (inlined), its ops at its own lines.
Conditions on indices become ``tile.if`` outside ``T.Parallel`` and element masks
(``arith.select`` of both branches) inside it.

The ``T`` primitives are built by the rules of :mod:`.primitives`, element values by
:mod:`.elements`; this module walks the statements and expressions around them. Errors, each
one :class:`KernelError` at the user's line: unknown ``T`` primitives, unsupported Python
constructs (``while``, ``try`` ...), undefined names, element stores outside ``T.Parallel``.
"""

from __future__ import annotations

import ast
import contextlib
from dataclasses import dataclass
import copy
import math
import builtins
import inspect
import operator

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from xdsl.utils.exceptions import VerifyException

from tilefold.errors import CompileError, KernelError, TilefoldError
from tilefold.frontend.source import MISSING, FunctionSource
from tilefold.frontend.tilelang.threads import ThreadRules
from tilefold.frontend.tilelang import api
from tilefold.frontend.tilelang.names import unknown_primitive
from tilefold.frontend.tilelang.dtypes import DType, canonical_name
from tilefold.frontend.tilelang.elements import _INT_DTYPES, CMPI, ElementRules, Deferred
from tilefold.frontend.tilelang.primitives import USAGE, PrimitiveRules
from tilefold.frontend.tilelang.types import TensorType
from tilefold.ir.tile_types import memref_type
from tilefold.frontend.tilelang.values import (
    BufferRef,
    Cond,
    ConstVar,
    Elem,
    Index,
    Region,
    Symbol,
    constant,
    pop_builder,
    push_builder,
)
from tilefold.ir import tile
from tilefold.ir.attributes import location_of, set_attr
from tilefold.ir.metadata import UserLayoutAttr, UserNdShardAttr, UserScheduleAttr

TILE = 32
_LANGUAGE_MODULES = ("tilefold.language", "tilefold.frontend.tilelang.api")
_PY_BINOP = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
             ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
             ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitAnd: operator.and_,
             ast.BitOr: operator.or_, ast.BitXor: operator.xor}
_PY_CMP = {ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not,
           ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
_UNSUPPORTED = {
    ast.While: "while loops are not supported in a TileLang kernel; use `for k in T.serial(n)`",
    ast.Try: "try statements are not supported in a kernel",
    ast.Raise: "raise is not supported in a kernel",
    ast.Delete: "del is not supported in a kernel",
    ast.Global: "global is not supported in a kernel",
    ast.Nonlocal: "nonlocal is not supported in a kernel",
    ast.ClassDef: "classes are not supported in a kernel",
}


_ELEMENT_CALLS = {"cast", "Cast", "if_then_else", "max", "min", "astype", "float32", "float16", "bfloat16", "int32",
                  *api.UNARY_FUNCTIONS}


class _AsUpdates(ast.NodeTransformer):
    """``x[i] = x[i] + e`` is ``x[i] += e`` (so is ``-``, ``*``, ``/``): one form of an update, which
    reductions and per-thread folds are recognised in (the tree is rewritten once, in place)."""

    def visit_Assign(self, node: ast.Assign):
        value = node.value
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) and isinstance(value, ast.BinOp) \
                and isinstance(value.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)) \
                and ast.dump(value.left) == ast.dump(ast.Subscript(node.targets[0].value, node.targets[0].slice,
                                                                    ast.Load())):
            return ast.copy_location(ast.AugAssign(node.targets[0], value.op, value.right), node)
        return node


@dataclass(frozen=True)
class Unbound:
    """``x = T.int32()``: a variable with no value until ``T.let(x, value)`` binds it."""

    dtype: str
    line: int


@dataclass(frozen=True)
class LoopLocal:
    """A scalar name last assigned inside a loop's body: its value does not exist after the loop."""

    name: str
    line: int


def _without_scalar_declarations(body: list[ast.stmt]) -> list[ast.stmt]:
    """The body without its ``x = T.alloc_var(T.bool)`` (or float32) declarations of a scalar the body
    then assigns: in an element loop such a scalar is a per-element value, a local name."""
    def declared(stmt) -> str | None:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            return None
        call = stmt.value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "alloc_var"
                and len(call.args) == 1 and not call.keywords):
            return None
        dtype = call.args[0]
        text = dtype.value if isinstance(dtype, ast.Constant) else getattr(dtype, "attr", None)
        return stmt.targets[0].id if text in ("bool", "float32") else None

    def assigned_later(name: str, rest: list[ast.stmt]) -> bool:
        return any(isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)
                   for s in rest)

    return [s for k, s in enumerate(body) if (name := declared(s)) is None or not assigned_later(name, body[k + 1:])]


def _independent_elements(body: list[ast.stmt], loop_vars: set[str]) -> bool:
    """Whether a loop body only computes local names, branches, and stores elements at indices that use
    every loop variable, reading any buffer it stores only at the element it stores (its iterations are
    independent)."""
    depends: dict[str, set[str]] = {v: {v} for v in loop_vars}

    def uses(node) -> set[str]:
        out: set[str] = set()
        for n in ast.walk(node):
            if isinstance(n, ast.Name):
                out |= depends.get(n.id, set())
        return out

    stores: dict[str, set[str]] = {}
    for node in body:
        for n in ast.walk(node):
            if isinstance(n, (ast.For, ast.While, ast.With, ast.FunctionDef, ast.Return, ast.AugAssign)):
                if not (isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Subscript)):
                    return False
            if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Attribute) and n.func.attr in _ELEMENT_CALLS):
                return False
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    depends[t.id] = uses(node.value)
                elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                    key = ast.dump(t.slice)
                    if not loop_vars <= uses(t.slice):
                        return False
                    stores.setdefault(t.value.id, set()).add(key)
                else:
                    return False
        elif isinstance(node, ast.AugAssign):
            t = node.target
            if not isinstance(t.value, ast.Name) or not loop_vars <= uses(t.slice):
                return False
            stores.setdefault(t.value.id, set()).add(ast.dump(t.slice))
    if not stores:
        return False
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in stores and \
                isinstance(node.ctx, ast.Load) and ast.dump(node.slice) not in stores[node.value.id]:
            return False
    return True


def _is_language_module(value) -> bool:
    return getattr(value, "__name__", None) in _LANGUAGE_MODULES


def is_static(value) -> bool:
    """A Python value known while compiling (not an index, element, condition or buffer)."""
    return not isinstance(value, (Index, Elem, BufferRef, Region, Symbol, Cond, Deferred, ConstVar))


class PendingParam:
    """A tensor parameter of an eager kernel before its ``A: T.Tensor(...)`` declaration."""

    def __init__(self, name: str):
        self.name = name


class KernelBuilder(PrimitiveRules, ElementRules, ThreadRules):
    """Builds the ``tile`` IR of one kernel; use :func:`build_prim_func`."""

    def __init__(self, prim, eager=None):
        self.prim = prim
        self.eager = eager                   # an EagerBinding, for eager kernels
        self.src = FunctionSource.of(prim.python_function)
        _AsUpdates().visit(self.src.tree)
        self.scope: dict[str, object] = {}
        self.function: func.FuncOp | None = None
        self.block: Block | None = None
        self.node: ast.AST = self.src.tree
        self.kernel_op: tile.KernelOp | None = None
        self.parallel: tile.ParallelOp | None = None
        self.pending_stores: dict | None = None
        self.stored: dict = {}                  # element key -> the value stored in this T.Parallel body
        self.stored_ops: dict = {}              # element key -> its store op (a later store replaces it)
        self.buffer_names: set[str] = set()
        self.layout: dict[str, dict] = {}
        self.schedule: dict = {}
        self.compute: dict = {}
        self.swizzle: dict | None = None
        self.atomic_targets: list[str] = []
        self.inlining: list = []
        self.globals: list[BufferRef] = []      # the kernel's tensors, in parameter order
        self.outputs: list[BufferRef] = []      # eager kernels: T.empty tensors
        self.views: dict[str, tuple] = {}        # view tensor -> (the tensor it views, its shape)
        self.safe_values: dict[str, float] = {}  # T.annotate_safe_value: tensor -> its padding value
        self.exact_parts: dict[str, list[BufferRef]] = {}  # exact float32 maxima: buffer -> its TF32 parts
        self.loaded_from: dict[str, tuple] = {}  # local buffer -> (the tensor region T.copy filled it from, the calls)
        self.returned: list[BufferRef] | None = None
        self.threads: list[int] = []
        self.grid_index = getattr(prim, "grid", None)  # build only this `with T.Kernel` of several
        self.grids_seen = 0
        self.scratch_names: list[str] = []      # T.alloc_global tensors

    # -- entry -------------------------------------------------------------------------------------

    def build(self) -> ModuleOp:
        prim, src = self.prim, self.src
        for position, name, dtype in prim.scalars:
            if name not in prim.scalar_values:
                raise src.error(src.tree, f"kernel {prim.name!r} takes the scalar {name} ({dtype}): tilefold builds it "
                                          "for the values each call passes, so call it with them before asking "
                                          "for its code")
            value = prim.scalar_values[name]
            self.scope[name] = int(value) if dtype in _INT_DTYPES else float(value)
        if self.eager is None:
            for p in prim.params:
                if p.name not in getattr(prim, "scratch", ()):   # those are declared by their T.alloc_global
                    self.declare_global(p.name, p.type)
        else:
            self.scope.update(self.eager.constants)
            for name in self.eager.tensor_names:
                declared = self.eager.annotations.get(name)
                self.scope[name] = PendingParam(name)
                if declared is not None:
                    self.declare_param(name, declared, src.tree)
        for name, (spec, where) in prim.layout.items():
            self.layout[name] = dict(spec, loc=[where.file, where.line] if where else None)
        if prim.schedule:
            where = prim.schedule.get("__loc__")
            self.schedule = {k: v for k, v in prim.schedule.items() if k != "__loc__"}
            self.schedule["loc"] = [where.file, where.line] if where else None
        push_builder(self)
        try:
            self.statements(src.tree.body)
        finally:
            pop_builder()
        if self.kernel_op is None:
            raise src.error(src.tree, f"kernel {prim.name!r} has no `with T.Kernel(...) as (bx, by):` block; put its "
                                      "body inside one")
        self.block = self.function.body.block
        self.insert(func.ReturnOp(), src.tree)
        function = self.function
        set_attr(function, "tile.params", [g.name for g in self.globals])
        if self.layout:
            for name, spec in self.layout.items():
                check_layout_annotation(name, spec)
            annotation(function, "tt.user_layout", self.layout, "annotate_tt_layout")
        if self.schedule:
            check_schedule_annotation(self.schedule)
            annotation(function, "tt.user_schedule", self.schedule, "annotate_tt_schedule")
        if self.compute:
            compute = dict(self.compute)
            if "math_approx_mode" in compute:
                compute["math_approx_mode"] = bool(compute["math_approx_mode"])
            set_attr(function, "tt.user_compute", compute)
        if self.swizzle is not None:
            set_attr(function, "tt.use_swizzle", self.swizzle)
        if self.atomic_targets:
            set_attr(function, "tile.atomic", self.atomic_targets)
        if self.safe_values:
            set_attr(function, "tile.safe_values", dict(self.safe_values))
        if self.views:
            set_attr(function, "tile.views", {name: {"base": base.name, "shape": list(shape)}
                                              for name, (base, shape) in self.views.items()})
        module = ModuleOp([function])
        module.verify()
        return module

    def begin_function(self, node: ast.AST) -> None:
        """Create the kernel function once its tensors are known (eager kernels declare them as
        they go; the function starts at the first ``with T.Kernel``)."""
        if self.function is not None:
            return
        if self.eager is not None:
            for name in self.eager.tensor_names:
                if isinstance(self.scope.get(name), PendingParam):
                    raise self.error(node, f"tensor argument {name!r} has no type; declare it before the kernel "
                                           f"block: {name}: T.Tensor((M, N), dtype)")
            ordered = [g for name in self.eager.tensor_names for g in self.globals if g.name == name]
            self.globals = ordered + [g for g in self.globals if g.name in self.scratch_names] + self.outputs
        types = [memref_type(g.shape, g.dtype) for g in self.globals]
        function = func.FuncOp(self.prim.name, FunctionType.from_lists(types, []))
        function.location = self.src.loc(self.src.tree)
        for arg, g in zip(function.body.block.args, self.globals):
            arg.name_hint = g.name
            g.value = arg
        self.function = function
        self.block = function.body.block

    def declare_global(self, name: str, ttype: TensorType) -> BufferRef:
        ref = BufferRef(name, ttype.shape, ttype.dtype, "global", None, ttype.dtype_name)
        self.scope[name] = ref
        self.buffer_names.add(name)
        self.globals.append(ref)
        return ref

    def declare_param(self, name: str, ttype, node) -> None:
        """``A: T.Tensor(shape, dtype)`` of an eager kernel: bind its T.const names from the
        shape it is called with and make it a kernel parameter."""
        if not isinstance(ttype, TensorType):
            raise self.error(node, f"{name}: the annotation of a tensor argument must be T.Tensor(shape, dtype), not "
                                   f"{ttype!r}")
        given = self.eager.shapes.get(name)
        dims = list(ttype.shape)
        if given is not None and len(given) != len(dims):
            raise self.error(node, f"{name} is declared with {len(dims)} dims {tuple(dims)} but the kernel is called "
                                   f"with an array of shape {tuple(given)}")
        for d, dim in enumerate(dims):
            if isinstance(dim, ConstVar):
                if given is None:
                    raise self.error(node, f"the size of dim {d} of {name} is T.const {dim.name!r}, which has no "
                                           f"value; pass {dim.name}=... to .compile() or call the kernel with arrays")
                self.bind_const(dim.name, given[d])
                dims[d] = given[d]
            elif given is not None and dim != given[d]:
                raise self.error(node, f"{name} is declared with shape {tuple(ttype.shape)} but the kernel is called "
                                       f"with an array of shape {tuple(given)}")
        self.declare_global(name, TensorType(tuple(dims), ttype.dtype, ttype.dtype_name))

    def bind_const(self, name: str, value: int) -> None:
        for key, bound in list(self.scope.items()):
            if isinstance(bound, ConstVar) and bound.name == name:
                self.scope[key] = value
        self.eager.constants[name] = value

    # -- helpers -----------------------------------------------------------------------------------

    def error(self, node: ast.AST, message: str) -> KernelError:
        return self.src.error(node, message)

    def insert(self, op: Operation, node: ast.AST | None = None) -> Operation:
        if self.block is None:
            self.begin_function(node or self.node)
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
            if sym.kind == "thread":
                raise self.error(node or self.node, "a GPU thread index (T.get_thread_binding) is used as a value; a "
                                                    "Tensix core runs a block as one program of tile operations, so "
                                                    "per-thread indexing has no meaning here: write the block's work "
                                                    "with T.Parallel, T.copy and the tile operations")
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
        """``a op b`` for an index operation that is not linear (``//``, ``%``, a product, min / max)."""
        cls = {"muli": arith.MuliOp, "divui": arith.DivUIOp, "remui": arith.RemUIOp, "minsi": arith.MinSIOp,
               "maxsi": arith.MaxSIOp}[opname]
        # a value of the block (no T.Parallel index in it) is computed before the loop
        block_value = not any(s.kind == "parallel" for x in (a, b) for s in x.terms)
        with self.before_parallel() if block_value else contextlib.nullcontext():
            op = self.insert(cls(self.index_value(a), self.index_value(b)))
        if opname == "remui" and b.is_constant:
            multiple = __import__("math").gcd(a.multiple(), b.const)
        elif opname == "divui" and b.is_constant and a.multiple() % max(b.const, 1) == 0:
            multiple = a.multiple() // b.const
        elif opname == "muli":
            multiple = a.multiple() * b.multiple()
        elif opname in ("minsi", "maxsi"):
            multiple = __import__("math").gcd(a.multiple(), b.multiple())
        else:
            multiple = 1
        sym = Symbol(op.result, f"({a!r} {opname} {b!r})", "opaque", multiple=max(multiple, 1))
        return Index({sym: 1})

    def describe(self, value) -> str:
        if isinstance(value, BufferRef):
            return value.describe()
        if isinstance(value, Region):
            return f"a region of {value.buffer.describe()}"
        if isinstance(value, (Index, Symbol)):
            return f"the index {value!r}"
        if isinstance(value, Elem):
            return "an element value"
        if isinstance(value, Cond):
            return "a condition on indices"
        if isinstance(value, Deferred):
            return "a value computed from indices"
        return repr(value)

    # -- statements --------------------------------------------------------------------------------

    def statements(self, stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            saved = self.node
            self.node = stmt
            try:
                if self.simt is not None and self.parallel is None and self.pending_stores is None:
                    self.thread_statement(stmt)
                else:
                    self.statement(stmt)
            except KernelError as err:
                if err.location is None:
                    err.location = self.src.location(stmt)
                raise
            except TilefoldError:
                raise
            self.node = saved
        if self.simt is not None and self.parallel is None and self.pending_stores is None:
            self.flush_threads()
            self.simt["forward"].clear()

    def statement(self, stmt: ast.stmt) -> None:
        handler = getattr(self, f"stmt_{type(stmt).__name__}", None)
        if handler is None:
            message = _UNSUPPORTED.get(type(stmt), f"unsupported construct: {type(stmt).__name__} statements are not "
                                                   "supported in a TileLang kernel")
            raise self.error(stmt, message)
        handler(stmt)

    def stmt_Pass(self, stmt) -> None:
        pass

    def stmt_Import(self, stmt) -> None:
        """``import tilelang.language as T`` in a kernel factory: names the module already seen."""
        for alias in stmt.names:
            value = self.src.lookup(alias.asname or alias.name.split(".")[0])
            if value is MISSING:
                raise self.error(stmt, "import inside a kernel is not supported; import at module level")

    stmt_ImportFrom = stmt_Import

    def stmt_Assert(self, stmt: ast.Assert) -> None:
        test = self.expr(stmt.test)
        if not is_static(test):
            raise self.error(stmt, "assert on a value known only on the device is not supported")
        if not test:
            detail = self.expr(stmt.msg) if stmt.msg is not None else ast.unparse(stmt.test)
            raise self.error(stmt, f"assertion failed: {detail}")

    def stmt_FunctionDef(self, stmt: ast.FunctionDef) -> None:
        if any(ast.unparse(d).split("(")[0].endswith(("macro", "prim_func")) for d in stmt.decorator_list) or \
                not stmt.decorator_list:
            raise self.error(stmt, "functions defined inside a kernel body are not supported; define helpers (or "
                                   "@T.macro functions) at module level")
        raise self.error(stmt, "nested functions are not supported in a kernel; define helpers at module level")

    def stmt_Expr(self, stmt: ast.Expr) -> None:
        value = stmt.value
        if isinstance(value, ast.Constant) and (isinstance(value.value, str) or value.value is Ellipsis):
            return
        if isinstance(value, ast.Call):
            self.call(value)
            return
        raise self.error(stmt, f"this expression ({ast.unparse(value)[:40]}) has no effect; remove it")

    def stmt_Return(self, stmt: ast.Return) -> None:
        if stmt.value is None or (isinstance(stmt.value, ast.Constant) and stmt.value.value is None):
            return
        if self.eager is not None and not self.inlining:
            value = self.expr(stmt.value)
            values = list(value) if isinstance(value, (tuple, list)) else [value]
            if not all(isinstance(v, BufferRef) and v.is_global for v in values):
                raise self.error(stmt, "an eager kernel returns its output tensors (made with T.empty)")
            self.returned = values
            return
        raise self.error(stmt, "a kernel returns nothing; write results into its output tensors with T.copy")

    def stmt_If(self, stmt: ast.If) -> None:
        cond = self.expr(stmt.test)
        if is_static(cond) and not isinstance(cond, Region):
            self.statements(stmt.body if cond else stmt.orelse)
            return
        if isinstance(cond, Region) and (cond.buffer.is_global or self.parallel is None):
            cond = self.index_condition(ast.NotEq, self.index_of(cond, stmt.test), Index.of(0), stmt)
            if is_static(cond):
                self.statements(stmt.body if cond else stmt.orelse)
                return
        if self.parallel is not None or isinstance(cond, Elem):
            self.parallel_if(stmt, cond)
            return
        if not isinstance(cond, Cond):
            raise self.error(stmt, f"`if` needs a condition, not {self.describe(cond)}")
        if self.kernel_op is None:
            raise self.error(stmt, "`if` on indices outside `with T.Kernel(...)`")
        op = self.insert(tile.IfOp(cond.value), stmt)
        outer = self.block
        saved = dict(self.scope)
        for region, body in ((op.then_region, stmt.body), (op.else_region, stmt.orelse)):
            self.block = region.block
            self.statements(body)
            self.scope = {k: v for k, v in self.scope.items() if k in saved or isinstance(v, BufferRef)}
            for k, v in saved.items():
                self.scope[k] = v
        self.block = outer

    def stmt_Assign(self, stmt: ast.Assign) -> None:
        if len(stmt.targets) != 1:
            value = self.expr(stmt.value)
            for target in stmt.targets:
                self.bind(target, value, stmt)
            return
        self.assign(stmt.targets[0], stmt.value, stmt)

    def stmt_AnnAssign(self, stmt: ast.AnnAssign) -> None:
        if stmt.value is None:
            if self.eager is not None and isinstance(stmt.target, ast.Name) and \
                    stmt.target.id in self.eager.tensor_names and isinstance(self.scope.get(stmt.target.id),
                                                                             PendingParam):
                self.declare_param(stmt.target.id, self.expr(stmt.annotation), stmt)
                return
            if isinstance(stmt.target, ast.Name) and stmt.target.id in self.scope:
                return  # a type comment on a name that already has a value
            raise self.error(stmt, "a declaration without a value is not supported; assign a value")
        self.assign(stmt.target, stmt.value, stmt)

    def assign(self, target: ast.expr, value_node: ast.expr, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Subscript):
            self.store(target, self.expr(value_node), stmt)
            return
        name_hint = target.id if isinstance(target, ast.Name) else None
        self.bind(target, self.expr(value_node, name_hint=name_hint), stmt)

    def bind(self, target: ast.expr, value, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            self.scope[target.id] = value
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, (tuple, list)) or len(value) != len(target.elts):
                raise self.error(stmt, f"cannot unpack {self.describe(value)} into {len(target.elts)} names")
            for t, v in zip(target.elts, value):
                self.bind(t, v, stmt)
            return
        if isinstance(target, ast.Subscript):
            self.store(target, value, stmt)
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

    # -- with T.Kernel -----------------------------------------------------------------------------

    def stmt_With(self, stmt: ast.With) -> None:
        if len(stmt.items) != 1 or not isinstance(stmt.items[0].context_expr, ast.Call):
            raise self.error(stmt, "only `with T.Kernel(...) as (bx, by):` is supported in a kernel")
        item = stmt.items[0]
        call = item.context_expr
        if getattr(self.expr(call.func), "__tile_intrinsic__", None) != "Kernel":
            raise self.error(stmt, f"`with {ast.unparse(call.func)}(...)` is not supported; only T.Kernel opens a "
                                   "block")
        index, self.grids_seen = self.grids_seen, self.grids_seen + 1
        if self.grid_index is not None and index != self.grid_index:
            return
        if self.kernel_op is not None:
            raise self.error(stmt, "this kernel has several `with T.Kernel(...)` grids: run it with tilefold.jit or "
                                   "tilefold.compile, which run the grids one after another")
        grid = [self.static_int(a, "T.Kernel grid size") for a in call.args] or [1]    # T.Kernel(threads=n): one block
        for kw in self.keywords(call):
            if kw[0] not in ("threads", "prelude", "is_cpu", "cluster_dims", "is_tma"):
                raise self.error(call, f"T.Kernel has no argument {kw[0]!r}")
            if kw[0] == "threads":
                threads = kw[1]
                self.threads = [int(t) for t in (threads if isinstance(threads, (tuple, list)) else [threads])]
        if not 1 <= len(grid) <= 3:
            raise self.error(call, f"T.Kernel with {len(grid)} grid dimensions; give one, two or three")
        if any(g <= 0 for g in grid):
            raise self.error(call, f"T.Kernel grid {grid} must be positive")
        self.begin_function(stmt)
        if self.block is not self.function.body.block:
            raise self.error(stmt, "`with T.Kernel(...)` must be at the top of the kernel body, not inside a loop or "
                                   "an `if`")
        targets = self.loop_targets(item.optional_vars, len(grid), stmt, "T.Kernel")
        op = self.insert(tile.KernelOp(grid), stmt)
        self.kernel_op = op
        for arg, name, extent in zip(op.body.block.args, targets, grid):
            arg.name_hint = name
            self.scope[name] = Index({Symbol(arg, name, "grid", extent): 1})
        outer = self.block
        self.block = op.body.block
        body = self.begin_threads(stmt.body)
        try:
            self.statements(body)
        finally:
            self.simt = None
        self.block = outer

    def loop_targets(self, target: ast.expr | None, count: int, stmt, what: str) -> list[str]:
        if target is None:
            return [f"_{what.lower().replace('.', '_')}{i}" for i in range(count)]
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
            if rule == "grid":
                self.grid_loop(stmt, it)
                return
            if rule == "Persistent":
                self.persistent_loop(stmt, it)
                return
            if rule in ("serial", "Serial", "unroll", "vectorized", "Pipelined") or fn is builtins.range:
                self.serial_loop(stmt, it, "pipelined" if rule == "Pipelined" else "serial")
                return
            if rule is not None:
                raise self.error(stmt, f"`for ... in T.{rule}(...)` is not supported; loop with T.serial, T.Pipelined, "
                                       "T.Parallel or T.grid")
        values = self.expr(it)
        if isinstance(values, (tuple, list, range)):
            for v in values:
                self.bind_static_target(stmt.target, v, stmt)
                self.statements(stmt.body)
            return
        raise self.error(stmt, f"unsupported loop over {ast.unparse(it)}; use T.serial, T.Pipelined, T.Parallel or "
                               "range")

    def bind_static_target(self, target, value, stmt) -> None:
        if isinstance(target, ast.Name):
            self.scope[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (tuple, list)) \
                and len(value) == len(target.elts):
            for t, v in zip(target.elts, value):
                self.bind_static_target(t, v, stmt)
        else:
            raise self.error(stmt, f"cannot bind {ast.unparse(target)} to {value!r}")

    def loop_bound(self, node: ast.expr, what: str):
        value = self.expr(node)
        if isinstance(value, Region):
            value = self.index_of(value, node)
        if isinstance(value, Index) and value.is_constant:
            value = value.const
        if isinstance(value, Symbol):
            value = Index.of(value)
        if isinstance(value, Index):
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(node, f"{what} must be an integer, not {self.describe(value)}")
        return value

    def serial_loop(self, stmt: ast.For, call: ast.Call, kind: str) -> None:
        what = {"serial": "T.serial", "pipelined": "T.Pipelined"}[kind]
        if self.parallel is not None:
            bounds = [self.expr(a) for a in call.args]
            if not (1 <= len(bounds) <= 3 and all(isinstance(b, int) and not isinstance(b, bool) for b in bounds)
                    and isinstance(stmt.target, ast.Name) and len(range(*bounds)) <= self.UNROLL_LIMIT):
                raise self.error(stmt, f"{what} inside T.Parallel runs once per element: give it constant bounds (up to "
                                       f"{self.UNROLL_LIMIT} iterations), which tilefold unrolls")
            for value in range(*bounds):         # a loop per element: unrolled into the element body
                self.scope[stmt.target.id] = value
                self.statements(stmt.body)
            return
        if self.kernel_op is None:
            raise self.error(stmt, f"{what} outside `with T.Kernel(...)`; put loops inside the kernel block")
        args = [self.loop_bound(a, f"{what} bound") for a in call.args]
        kwargs = dict(self.keywords(call))
        stages = None
        if kind == "pipelined" and "num_stages" in kwargs:
            stages = kwargs.pop("num_stages")
            if not isinstance(stages, int) or stages < 0:
                raise self.error(call, "num_stages must be a non-negative integer")
        for key in ("order", "stage", "sync", "group", "annotations", "explicit", "unroll_factor"):
            kwargs.pop(key, None)
        if kwargs:
            raise self.error(call, f"{what} has no argument {next(iter(kwargs))!r}")
        if not 1 <= len(args) <= 3:
            raise self.error(call, f"{what} takes (stop), (start, stop) or (start, stop, step)")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
        if not isinstance(step, int) or step <= 0:
            raise self.error(call, f"{what} step {step} must be a positive integer constant")
        if not isinstance(stmt.target, ast.Name):
            raise self.error(stmt, f"{what} binds one loop variable")
        if kind == "serial" and start == 0 and step == 1 and isinstance(stop, int) and self.element_nest(stmt, [stop]):
            return
        carried = self.carried_scalars(stmt)
        if carried:
            self.unrolled_loop(stmt, start, stop, step, carried, what)
            return
        lb = self.index_value(start, call)
        ub = self.index_value(stop, call)
        op = self.insert(tile.ForOp(lb, ub, kind, step, max(stages, 1) if stages is not None else None), stmt)
        op.iv.name_hint = stmt.target.id
        trips = max(0, -(-(stop - start) // step)) if isinstance(start, int) and isinstance(stop, int) else None
        bounds = (start, start + (trips - 1) * step) if trips else None
        self.scope[stmt.target.id] = Index({Symbol(op.iv, stmt.target.id, "loop", trips,
                                                   multiple=step if start == 0 else 1, bounds=bounds): 1})
        outer = self.block
        before = dict(self.scope)
        self.block = op.body.block
        self.statements(stmt.body)
        self.block = outer
        for name, value in list(self.scope.items()):
            if value is not before.get(name) and self.defined_in(value, op):
                self.scope[name] = LoopLocal(name, stmt.lineno)

    UNROLL_LIMIT = 64          # trips of a loop carrying a scalar that are unrolled

    def carried_scalars(self, stmt: ast.For) -> list[str]:
        """Scalars (``T.alloc_var`` values, indices) the loop body reads and assigns again: each
        iteration starts from the previous one's value."""
        assigned: list[str] = []
        for node in ast.walk(ast.Module(body=stmt.body, type_ignores=[])):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                if isinstance(t, ast.Name) and t.id not in assigned:
                    assigned.append(t.id)
        read = {n.id for n in ast.walk(ast.Module(body=stmt.body, type_ignores=[]))
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        return [n for n in assigned if n in read and n in self.scope and n != stmt.target.id
                and isinstance(self.scope[n], (int, float, Index, Symbol, Cond)) and not isinstance(self.scope[n], bool)]

    def unrolled_loop(self, stmt: ast.For, start, stop, step: int, carried: list[str], what: str) -> None:
        """A loop carrying scalars from one iteration to the next, unrolled (its trip count must be
        a constant of at most :attr:`UNROLL_LIMIT`)."""
        if not (isinstance(start, int) and isinstance(stop, int)):
            raise self.error(stmt, f"this {what} loop assigns {carried[0]} from its previous value, and its bounds are "
                                   "not constants: tilefold unrolls a loop that carries a scalar, so give it constant "
                                   "bounds (or compute the value without a loop)")
        trips = range(start, stop, step)
        if len(trips) > self.UNROLL_LIMIT:
            raise self.error(stmt, f"this {what} loop assigns {carried[0]} from its previous value over {len(trips)} "
                                   f"iterations: tilefold unrolls a loop that carries a scalar, up to "
                                   f"{self.UNROLL_LIMIT} iterations")
        for value in trips:
            self.scope[stmt.target.id] = value
            self.statements(stmt.body)

    @staticmethod
    def defined_in(value, loop: Operation) -> bool:
        """Whether an index, symbol or condition value is computed inside ``loop``'s body."""
        values = [value.value] if isinstance(value, (Symbol, Cond)) else \
            [s.value for s in value.terms] if isinstance(value, Index) else []
        for v in values:
            owner = v.owner if isinstance(v.owner, Operation) else v.owner.parent_op()
            while owner is not None:
                if owner is loop:
                    return True
                owner = owner.parent_op()
        return False

    def element_nest(self, stmt: ast.For, extents: list[int]) -> bool:
        """A nest of serial loops whose body stores elements of local or global buffers, each iteration its
        own elements (every store's indices use every loop variable, and a stored buffer is read only at
        the element the iteration stores): the iterations are independent, so the nest is built as one
        ``T.Parallel`` over its extents. Returns whether it was."""
        names, body = [stmt.target.id], stmt.body
        while len(body) == 1 and isinstance(body[0], ast.For) and isinstance(body[0].target, ast.Name) and \
                not body[0].orelse and isinstance(body[0].iter, ast.Call):
            inner = body[0]
            fn = self.expr(inner.iter.func)
            rule = getattr(fn, "__tile_intrinsic__", None)
            if not (rule in ("serial", "Serial", "unroll", "vectorized") or fn is builtins.range) or \
                    len(inner.iter.args) != 1 or inner.iter.keywords:
                break
            extent = self.expr(inner.iter.args[0])
            if not isinstance(extent, int) or isinstance(extent, bool):
                return False
            names.append(inner.target.id)
            extents.append(extent)
            body = inner.body
        body = _without_scalar_declarations(body)
        if not _independent_elements(body, set(names)):
            return False
        if self.element_copy(body, names, extents):
            return True
        loop = ast.For(target=ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Store()) for n in names], ctx=ast.Store()),
                       iter=ast.Call(func=ast.Name(id="__element_nest", ctx=ast.Load()),
                                     args=[ast.Constant(e) for e in extents], keywords=[]),
                       body=body, orelse=[])
        for node in (loop, loop.target, *loop.target.elts, loop.iter, loop.iter.func, *loop.iter.args):
            ast.copy_location(node, stmt)
        self.scope["__element_nest"] = api.Parallel
        self.parallel_loop(loop, loop.iter)
        return True

    def element_copy(self, body: list[ast.stmt], names: list[str], extents: list[int]) -> bool:
        """``for i ...: X[i, j] = A[i, j]`` over the whole of a local buffer X and a tensor A, or a
        block of A whose leading indices the loops do not use (``X[i] = M[by, bx, k, i]``):
        ``T.copy(A[..., 0:n], X)``."""
        if len(body) != 1 or not isinstance(body[0], ast.Assign) or len(body[0].targets) != 1:
            return False
        target, value = body[0].targets[0], body[0].value

        def whole(node, is_global):
            if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
                return None
            idx = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            buf = self.scope.get(node.value.id)
            if not isinstance(buf, BufferRef) or buf.is_global != is_global:
                return None
            lead, tail = idx[:len(idx) - len(names)], idx[len(idx) - len(names):]
            if [getattr(i, "id", None) for i in tail] != names or list(buf.shape[len(lead):]) != extents:
                return None
            if not lead:
                return node.value
            if not is_global or any(isinstance(n, ast.Name) and n.id in names for i in lead for n in ast.walk(i)):
                return None
            slices = [ast.Slice(lower=ast.Constant(0), upper=ast.Constant(e)) for e in extents]
            block = ast.Subscript(value=node.value, slice=ast.Tuple(elts=[*lead, *slices], ctx=ast.Load()),
                                  ctx=ast.Load())
            for n in ast.walk(block):
                ast.copy_location(n, node)
            return block

        dst, src = whole(target, False), whole(value, True)
        if dst is None or src is None:
            return False
        call = ast.Call(func=ast.Name(id="__element_copy", ctx=ast.Load()), args=[src, dst], keywords=[])
        ast.copy_location(call, body[0])
        ast.copy_location(call.func, body[0])
        call.origin = body[0]
        self.scope["__element_copy"] = api.copy
        self.statement(ast.copy_location(ast.Expr(value=call), body[0]))
        return True

    def grid_loop(self, stmt: ast.For, call: ast.Call) -> None:
        """``for i, j in T.grid(m, n)``: nested serial loops."""
        names = self.loop_targets(stmt.target, len(call.args), stmt, "T.grid")
        nested = stmt.body
        for name, extent in reversed(list(zip(names, call.args))):
            loop = ast.For(target=ast.Name(id=name, ctx=ast.Store()),
                           iter=ast.Call(func=ast.Name(id="range", ctx=ast.Load()), args=[extent], keywords=[]),
                           body=nested, orelse=[])
            ast.copy_location(loop, stmt)
            ast.copy_location(loop.iter, call)
            ast.copy_location(loop.iter.func, call)
            nested = [loop]
        self.statements(nested)

    def persistent_loop(self, stmt: ast.For, call: ast.Call) -> None:
        """``for v0, v1 in T.Persistent(domain, wave_size, index, group_size)``, as TileLang orders it: a
        serial loop over waves; tile ``w * wave_size + index`` of the domain, the last dim split in groups
        of ``group_size`` that run fastest; each block inside the domain runs the body."""
        args = self.arguments(call, ("domain", "wave_size", "index", "group_size"), {"group_size": 8}, "T.Persistent")
        domain, wave, group = args["domain"], args["wave_size"], args["group_size"]
        if not isinstance(domain, (list, tuple)) or not domain or \
                not all(isinstance(d, int) and not isinstance(d, bool) for d in [*domain, wave, group]):
            raise self.error(call, "T.Persistent takes a list of constant extents, a constant wave size and group "
                                   "size, and the block index: T.Persistent([m_blocks, n_blocks], sm_num, block_id)")
        names = self.loop_targets(stmt.target, len(domain), stmt, "T.Persistent")
        last = domain[-1]
        group = max(1, min(group, last))
        grouped = [-(-last // group), *domain[:-1], group]
        padded = math.prod(grouped)
        waves = -(-padded // wave)
        self.scope["__persistent_index"] = args["index"]
        lines = [f"for __persistent_wave in range({waves}):",
                 f"    __persistent_tile = __persistent_wave * {wave} + __persistent_index",
                 "    __persistent_rest = __persistent_tile"]
        idx = [None] * len(grouped)
        for i in range(len(grouped) - 1, 0, -1):
            idx[i] = f"__persistent_{i}"
            lines.append(f"    {idx[i]} = __persistent_rest % {grouped[i]}")
            lines.append(f"    __persistent_rest = __persistent_rest // {grouped[i]}")
        idx[0] = "__persistent_rest"
        for i, name in enumerate(names[:-1]):
            lines.append(f"    {name} = {idx[i + 1]}")
        lines.append(f"    {names[-1]} = {idx[0]} * {group} + {idx[-1]}")
        lines.append(f"    if __persistent_tile < {padded}:")
        lines.append(f"        if {names[-1]} < {last}:")
        lines.append("            pass")
        loop = ast.parse("\n".join(lines)).body[0]
        for node in ast.walk(loop):
            ast.copy_location(node, stmt)
        inner = loop.body[-1].body[0]
        inner.body = stmt.body
        self.statements([loop])

    def parallel_loop(self, stmt: ast.For, call: ast.Call) -> None:
        if self.parallel is not None:
            raise self.error(stmt, "nested T.Parallel is not supported; use one T.Parallel(m, n) over both dims")
        if self.kernel_op is None:
            raise self.error(stmt, "T.Parallel outside `with T.Kernel(...)`")
        extents = [self.static_int(a, "T.Parallel extent") for a in call.args]
        for key, _ in self.keywords(call):
            if key not in ("coalesced_width", "loop_layout", "prefer_async", "annotations"):
                raise self.error(call, f"T.Parallel has no argument {key!r}")
        if not 1 <= len(extents) <= 2 or any(e <= 0 for e in extents):
            raise self.error(call, f"T.Parallel{tuple(extents)}: give one or two positive extents")
        names = self.loop_targets(stmt.target, len(extents), stmt, "T.Parallel")
        stmt = self.row_reads(stmt, names)
        if self.parallel_reduction(stmt, names, extents):
            return
        if self.element_copy(stmt.body, names, extents):
            return
        op = self.insert(tile.ParallelOp(extents), stmt)
        saved = dict(self.scope)
        for arg, name, extent in zip(op.body.block.args, names, extents):
            arg.name_hint = name
            self.scope[name] = Index({Symbol(arg, name, "parallel", extent): 1})
        outer = self.block
        self.block, self.parallel, self.stored = op.body.block, op, {}
        try:
            self.statements(stmt.body)
        finally:
            self.block, self.parallel, self.stored = outer, None, {}
        # element temporaries do not outlive the body
        self.scope = {k: v for k, v in self.scope.items() if not isinstance(v, Elem) or k in saved}
        for name in names:
            if name in saved:
                self.scope[name] = saved[name]
            else:
                self.scope.pop(name, None)

    def row_reads(self, stmt: ast.For, names: list[str]) -> ast.For:
        """Reads ``L[k, j]`` of a 2-D local buffer at a row ``k`` the T.Parallel does not index (a loop
        index, a block index) read a row vector made before the loop: the rows masked to row k
        (``T.if_then_else(r == k, L[r, c], 0)``) summed over the rows by ``reduce_tile``."""
        made: dict[tuple, str] = {}

        def row_of(node):
            if not (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and
                    isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Tuple) and
                    len(node.slice.elts) == 2):
                return None
            buf = self.scope.get(node.value.id)
            row, col = node.slice.elts
            if not isinstance(buf, BufferRef) or buf.is_global or len(buf.shape) != 2 or \
                    isinstance(row, ast.Constant) or {n.id for n in ast.walk(row) if isinstance(n, ast.Name)} & \
                    set(names) or not (isinstance(col, ast.Name) and col.id in names):
                return None
            try:
                value = self.expr(row)
            except KernelError:
                return None
            if not isinstance(value, Index) or value.is_constant:
                return None
            return buf

        builder = self

        class Rows(ast.NodeTransformer):
            def visit_Subscript(self, node):
                buf = row_of(node)
                if buf is None:
                    return self.generic_visit(node)
                row, col = node.slice.elts
                key = (buf.name, ast.dump(row))
                if key not in made:
                    made[key] = builder.extract_row(buf, row, node)
                return ast.copy_location(ast.Subscript(ast.Name(made[key], ast.Load()), col, ast.Load()), node)

        body = [Rows().visit(copy.deepcopy(s)) for s in stmt.body]
        if not made:
            return stmt
        loop = ast.For(stmt.target, stmt.iter, body, [], None)
        return ast.fix_missing_locations(ast.copy_location(loop, stmt))

    def extract_row(self, buf: BufferRef, row: ast.expr, node) -> str:
        """A row vector holding row ``row`` of the 2-D local buffer ``buf``; its name in scope."""
        rows, cols = buf.shape
        dtype = "float32"
        masked = self.new_buffer((rows, cols), dtype, "fragment", f"{buf.name}_row_mask", node)
        vector = self.new_buffer((cols,), dtype, "fragment", f"{buf.name}_row", node)
        self.scope[masked.name], self.scope[vector.name] = masked, vector
        self.scope["__row_parallel"], self.scope["__row_select"] = api.Parallel, api.if_then_else
        self.scope["__row_reduce"] = api.reduce_sum
        text = (f"for __r, __c in __row_parallel({rows}, {cols}):\n"
                f"    {masked.name}[__r, __c] = __row_select(__r == __ROW, {buf.name}[__r, __c], 0.0)\n"
                f"__row_reduce({masked.name}, {vector.name}, dim=0)\n")
        tree = ast.parse(text).body

        class Put(ast.NodeTransformer):
            def visit_Name(self, n):
                return copy.deepcopy(row) if n.id == "__ROW" else n

        tree = [ast.fix_missing_locations(Put().visit(t)) for t in tree]
        for t in tree:
            for n in ast.walk(t):
                ast.copy_location(n, node)
        outer = self.parallel
        self.statements(tree)
        self.parallel = outer
        return vector.name

    def parallel_reduction(self, stmt: ast.For, names: list[str], extents: list[int]) -> bool:
        """A ``T.Parallel`` body that ends by folding a value into a local vector at an index missing
        a loop variable — ``acc[i] += x[i, j] * y[j]`` or ``acc[i] = T.max(acc[i], e)`` over
        ``T.Parallel(m, n)``, ``s[0] += e`` over ``T.Parallel(n)`` (a ``T.alloc_reducer``'s use) — is a
        reduction: the values go to an (m, n) temporary, ``T.reduce_sum`` / ``reduce_max`` /
        ``reduce_min`` (``clear=False``) folds them into the vector."""
        last = stmt.body[-1]
        if self.contended_atomic(stmt, names, extents):
            return True
        if isinstance(last, ast.AugAssign) and isinstance(last.op, ast.Add):
            target, value, kind = last.target, last.value, "sum"
        elif isinstance(last, ast.Assign) and len(last.targets) == 1 and isinstance(last.value, ast.Call) and \
                isinstance(last.value.func, ast.Attribute) and last.value.func.attr in ("max", "min") and \
                len(last.value.args) == 2 and not last.value.keywords:
            target, kind = last.targets[0], last.value.func.attr
            same = [ast.dump(a) == ast.dump(ast.Subscript(target.value, target.slice, ast.Load()))
                    if isinstance(target, ast.Subscript) else False for a in last.value.args]
            if same.count(True) != 1:
                return False
            value = last.value.args[same.index(False)]
        else:
            return False
        if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
            return False
        buf = self.scope.get(target.value.id)
        if not isinstance(buf, BufferRef) or buf.is_global or len(buf.shape) != 1:
            return False
        index = target.slice
        if len(extents) == 2 and isinstance(index, ast.Name) and index.id in names:
            dim = 1 if index.id == names[0] else 0
            if buf.shape[0] != extents[1 - dim]:
                return False
            shape, store = tuple(extents), ast.Tuple([ast.Name(n, ast.Load()) for n in names], ast.Load())
        elif len(extents) == 1 and buf.shape == (1,) and isinstance(index, ast.Constant) and index.value == 0:
            dim, shape = 1, (1, extents[0])
            store = ast.Tuple([ast.Constant(0), ast.Name(names[0], ast.Load())], ast.Load())
        else:
            return False
        for other in stmt.body[:-1]:
            if any(isinstance(n, ast.Name) and n.id == buf.name for n in ast.walk(other)):
                return False
        temp = self.new_buffer(shape, buf.dtype_name or canonical_name(buf.dtype), "fragment", f"{buf.name}_terms",
                               last)
        self.scope[temp.name] = temp
        assign = ast.Assign([ast.Subscript(ast.Name(temp.name, ast.Load()), store, ast.Store())], value)
        for node in ast.walk(assign):
            ast.copy_location(node, last)
        loop = ast.For(stmt.target, stmt.iter, [*stmt.body[:-1], assign], [], None)
        ast.copy_location(loop, stmt)
        self.parallel_loop(loop, stmt.iter)
        self.reduce_buffers(temp, buf, kind, dim, False, last)
        del self.scope[temp.name]
        return True

    def contended_atomic(self, stmt: ast.For, names: list[str], extents: list[int]) -> bool:
        """A ``T.Parallel`` over one dim whose body ends with ``T.atomic_add(Out[c], e)`` at an element
        no loop variable indexes (every iteration adds into one element): the sum of the ``e`` s, a
        reduction into a one-value buffer, then one atomic add of it into ``Out[c]``."""
        last = stmt.body[-1]
        call = last.value if isinstance(last, ast.Expr) else None
        if len(extents) != 1 or not isinstance(call, ast.Call) or call.keywords or len(call.args) != 2 or \
                getattr(self.expr(call.func), "__tile_intrinsic__", None) != "atomic_add":
            return False
        target = call.args[0]
        if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)) or \
                any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(target.slice)):
            return False
        glob = self.scope.get(target.value.id)
        if not isinstance(glob, BufferRef) or not glob.is_global:
            return False
        total = self.new_buffer((1,), glob.dtype_name or canonical_name(glob.dtype), "fragment", f"{glob.name}_sum",
                                last)
        self.insert(tile.FillOp(total.value, 0.0), last)
        self.scope[total.name] = total
        self.scope["__atomic_add"] = self.expr(call.func)
        fold = ast.AugAssign(ast.Subscript(ast.Name(total.name, ast.Load()), ast.Constant(0), ast.Store()), ast.Add(),
                             call.args[1])
        update = ast.Expr(ast.Call(ast.Name("__atomic_add", ast.Load()),
                                   [ast.Subscript(target.value, target.slice, ast.Load()),
                                    ast.Name(total.name, ast.Load())], []))
        for node in (*ast.walk(fold), *ast.walk(update)):
            ast.copy_location(node, last)
        loop = ast.copy_location(ast.For(stmt.target, stmt.iter, [*stmt.body[:-1], fold], [], None), stmt)
        self.parallel_loop(loop, stmt.iter)
        self.statement(update)
        del self.scope[total.name], self.scope["__atomic_add"]
        return True

    # -- expressions -------------------------------------------------------------------------------

    def static_int(self, node: ast.expr, what: str) -> int:
        value = self.expr(node)
        if isinstance(value, Index) and value.is_constant:
            value = value.const
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, (Index, Symbol)):
                raise self.error(node, f"{what} must be known while compiling, not the index {value!r}; build the "
                                       "kernel for given sizes")
            raise self.error(node, f"{what} must be a Python integer constant, not {self.describe(value)}")
        return value

    def keywords(self, node: ast.Call) -> list[tuple[str, object]]:
        """The keyword arguments of a call, ``**dict`` expanded."""
        out = []
        for kw in node.keywords:
            if kw.arg is None:
                expanded = self.expr(kw.value)
                if not isinstance(expanded, dict):
                    raise self.error(kw, f"**{ast.unparse(kw.value)} must be a dict of keyword arguments")
                out.extend(expanded.items())
            else:
                out.append((kw.arg, self.expr(kw.value)))
        return out

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

    def expr_GeneratorExp(self, node):
        """A comprehension over values known while compiling (``sum((s + 31) // 32 for s in sizes)``
        computing a grid size): evaluated by Python, as the host code it is."""
        bound = {n.id for gen in node.generators for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound
        namespace = {}
        for name in sorted(names):
            value = self.expr_Name(ast.Name(name, ast.Load()))
            if not is_static(value):
                raise self.error(node, f"a comprehension over {self.describe(value)} ({name}) is not supported; "
                                       "comprehensions compute Python values known while compiling — write a "
                                       "T.Parallel or T.serial loop for kernel values")
            namespace[name] = value
        expression = ast.fix_missing_locations(ast.Expression(node))
        try:
            code = compile(expression, getattr(self.src, "filename", "<kernel>"), "eval")
            return eval(code, {"__builtins__": __builtins__, **namespace})     # noqa: S307 - the user's own expression
        except Exception as exc:        # noqa: BLE001 - the user's host expression failed
            raise self.error(node, f"{ast.unparse(node)[:60]}: {type(exc).__name__}: {exc}") from None

    expr_ListComp = expr_SetComp = expr_DictComp = expr_GeneratorExp

    def expr_Name(self, node: ast.Name):
        if node.id in self.scope:
            value = self.scope[node.id]
            if isinstance(value, Unbound):
                raise self.error(node, f"{node.id} = T.{value.dtype}() at line {value.line} has no value here; bind it "
                                       f"with T.let({node.id}, value) first")
            if isinstance(value, LoopLocal):
                raise self.error(node, f"{node.id} is computed inside the loop at line {value.line} and read after it; "
                                       "give it a value before the loop and update it in the body (a loop carrying "
                                       "a scalar is unrolled), or read it inside the loop")
            if isinstance(value, PendingParam):
                raise self.error(node, f"tensor argument {node.id!r} is used before its type is declared; write "
                                       f"{node.id}: T.Tensor(shape, dtype) first")
            return value
        value = self.src.lookup(node.id)
        if value is MISSING:
            raise self.error(node, f"name {node.id!r} is not defined")
        if isinstance(value, ConstVar) and value.name in self.prim.dims:
            return self.prim.dims[value.name]        # a T.dynamic size of a factory, bound by the call
        return value

    def expr_Attribute(self, node: ast.Attribute):
        base = self.expr(node.value)
        if isinstance(base, BufferRef):
            if node.attr in ("shape", "name"):
                return {"shape": base.shape, "name": base.name}[node.attr]
            if node.attr == "dtype":
                return DType(base.dtype_name or canonical_name(base.dtype))
            if node.attr == "data":
                return ("data", base)
            raise self.error(node, f"{base.describe()} has no attribute {node.attr!r} (shape, dtype and name exist)")
        if isinstance(base, (Elem, Index, Deferred)) and node.attr == "astype":
            return lambda dtype: self.cast_value(base, dtype)
        if not is_static(base):
            raise self.error(node, f"{self.describe(base)} has no attribute {node.attr!r}")
        value = getattr(base, node.attr, MISSING)
        if value is MISSING:
            if _is_language_module(base):
                raise self.error(node, unknown_primitive(node.attr, dir(base)))
            raise self.error(node, f"{ast.unparse(node.value)} has no attribute {node.attr!r}")
        return value

    def expr_Tuple(self, node):
        return tuple(self.expr(e) for e in node.elts)

    def expr_List(self, node):
        return [self.expr(e) for e in node.elts]

    def expr_Dict(self, node):
        out = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                out.update(self.expr(v))
                continue
            key = self.expr(k)
            out[key.name if isinstance(key, BufferRef) else key] = self.expr(v)
        return out

    def expr_JoinedStr(self, node):
        return ast.literal_eval(node) if all(isinstance(v, ast.Constant) for v in node.values) else \
            "".join(str(self.expr(v.value)) if isinstance(v, ast.FormattedValue) else v.value for v in node.values)

    def expr_Slice(self, node):
        raise self.error(node, "a slice is only valid as a buffer index, A[a:b, c:d]")

    def expr_Lambda(self, node):
        raise self.error(node, "lambda is not supported in a kernel body; define a helper function")

    def expr_IfExp(self, node: ast.IfExp):
        cond = self.expr(node.test)
        if is_static(cond):
            return self.expr(node.body) if cond else self.expr(node.orelse)
        return self.select(cond, self.expr(node.body), self.expr(node.orelse), node)

    def expr_BoolOp(self, node: ast.BoolOp):
        values = [self.expr(v) for v in node.values]
        result = values[0]
        for v in values[1:]:
            result = self.logical(isinstance(node.op, ast.And), result, v, node)
        return result

    def expr_UnaryOp(self, node: ast.UnaryOp):
        value = self.expr(node.operand)
        if isinstance(node.op, ast.Not) and not is_static(value):
            return self.logical_not(value, node)
        if isinstance(value, (Elem, Deferred)):
            if isinstance(node.op, ast.USub):
                return self.negate(value, node)
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
        if self.is_element(left) or self.is_element(right):
            return self.element_binop(op, left, right, node)
        left, right = (self.index_of(v, node) if isinstance(v, Region) and not v.buffer.dtype.is_float
                       and (v.buffer.is_global or self.parallel is None) else v for v in (left, right))
        if isinstance(op, (ast.BitAnd, ast.BitOr)) and any(isinstance(v, Cond) for v in (left, right)) and \
                all(isinstance(v, (Cond, bool)) for v in (left, right)):
            return self.logical(isinstance(op, ast.BitAnd), left, right, node)      # conditions joined by & / |
        fn = _PY_BINOP.get(type(op))
        if fn is None:
            raise self.error(node, f"unsupported operator {type(op).__name__}")
        if isinstance(left, (Index, Symbol)) or isinstance(right, (Index, Symbol)):
            if isinstance(op, ast.Div) or isinstance(left, float) or isinstance(right, float):
                return self.element_binop(op, left, right, node)
        if not (is_static(left) or isinstance(left, (Index, Symbol, ConstVar))) or \
                not (is_static(right) or isinstance(right, (Index, Symbol, ConstVar))):
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
        operands = [left, *rights]
        if all(is_static(v) or (isinstance(v, Index) and v.is_constant) for v in operands):
            operands = [v.const if isinstance(v, Index) else v for v in operands]
            result = True
            for op, a, b in zip(node.ops, operands, operands[1:]):
                result = result and _PY_CMP[type(op)](a, b)
            return result
        result = None
        for op, a, b in zip(node.ops, operands, operands[1:]):
            if type(op) not in CMPI:
                raise self.error(node, "compare indices and element values with < <= > >= == !=")
            pair = self.compare(type(op), a, b, node)
            result = pair if result is None else self.logical(True, result, pair, node)
        return result

    def expr_Subscript(self, node: ast.Subscript):
        base = self.expr(node.value)
        if isinstance(base, BufferRef):
            if self.parallel is not None:
                return self.load(base, node.slice, node)
            return self.region(base, node.slice, node)
        if not is_static(base):
            raise self.error(node, f"cannot index {self.describe(base)}")
        key = self.expr(node.slice) if not isinstance(node.slice, ast.Slice) else slice(
            *(self.expr(p) if p is not None else None for p in (node.slice.lower, node.slice.upper, node.slice.step)))
        try:
            return base[key]
        except KernelError as err:
            if err.location is None:
                err.location = self.src.location(node)
            raise
        except Exception as exc:
            raise self.error(node, f"{ast.unparse(node)}: {exc}") from None

    def index_nodes(self, slice_node: ast.expr) -> list[ast.expr]:
        return list(slice_node.elts) if isinstance(slice_node, ast.Tuple) else [slice_node]

    def region(self, buffer: BufferRef, slice_node: ast.expr, node) -> Region:
        nodes = self.index_nodes(slice_node)
        if len(nodes) != len(buffer.shape):
            raise self.error(node, f"{buffer.name} has {len(buffer.shape)} dims but the region gives {len(nodes)}")
        starts: list[Index] = []
        extents: list[int | None] = []
        for d, n in enumerate(nodes):
            if isinstance(n, ast.Slice):
                if n.step is not None:
                    raise self.error(n, "region slices take no step")
                lo = Index.of(self.index_of(self.expr(n.lower), n)) if n.lower is not None else Index()
                hi = Index.of(self.index_of(self.expr(n.upper), n)) if n.upper is not None else Index({}, buffer.shape[d])
                extent = hi - lo
                if not extent.is_constant:
                    raise self.error(n, f"slice {ast.unparse(n)} has no constant length; write start:start+length")
                starts.append(lo)
                extents.append(extent.const)
            else:
                starts.append(Index.of(self.index_of(self.expr(n), n)))
                extents.append(None)
        return Region(buffer, starts, extents)

    def index_of(self, value, node):
        """An integer or index of a region start, or a KernelError."""
        if isinstance(value, Symbol):
            return Index.of(value)
        if isinstance(value, Region) and value.buffer.scope == "global":
            return self.global_element(value, node)
        if isinstance(value, Region) and self.parallel is None:
            return self.local_element(value, node)
        if isinstance(value, bool) or not isinstance(value, (int, Index)):
            raise self.error(node, f"index {ast.unparse(node)} is {self.describe(value)}, not an integer")
        return value

    def local_element(self, region: Region, node) -> Index:
        """One element of a local buffer outside T.Parallel as an index or condition (``if
        mask_local[k] != 0:``): when one ``T.copy`` from an integer tensor filled the buffer and
        nothing writes either of them, the element that copy put there is read from the tensor."""
        local = region.buffer
        read = next((n for n in ast.walk(node) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
                     and n.value.id == local.name), node)
        why = (f"{ast.unparse(read)} is a value of {local.describe()} steering an index or a condition: the compute "
               "kernel holds local buffers, which the kernels that move data cannot read, so tilefold branches on "
               "such a value only when one T.copy from an integer tensor filled the buffer and nothing writes either "
               "of them; branch on the tensor's element (if M[k] != 0:), or compute with T.if_then_else inside "
               "T.Parallel")
        loaded = self.loaded_from.get(local.name)
        if loaded is None or any(e is not None for e in region.extents) or len(loaded[1]) != 1:
            raise self.error(node, why)
        source, (copy,) = loaded
        if self.written_anywhere(local.name, copy, getattr(copy, "origin", None)) or \
                self.written_anywhere(source.buffer.name) or source.buffer.dtype.is_float:
            raise self.error(node, why)
        _, dims = self.global_offsets(source, local, node)
        rank, lrank = len(source.buffer.shape), len(self.shape_of(local))
        dims = dims if dims is not None else list(range(rank - lrank, rank))
        starts = list(source.starts)
        for ld, gd in enumerate(dims):
            if gd >= 0:
                starts[gd] = starts[gd] + region.starts[ld]
        if not all(self.available(sym.value) for start in starts for sym in start.terms):
            raise self.error(node, why + f" (the T.copy that filled {local.name} is in a loop or branch this line is "
                                         "not in)")
        return self.global_element(Region(source.buffer, starts, [None] * rank), node)

    def available(self, value: SSAValue) -> bool:
        """Whether ``value`` is defined in the block being built or one around it."""
        home = value.owner if isinstance(value.owner, Block) else value.owner.parent_block()
        block = self.block
        while block is not None:
            if block is home:
                return True
            parent = block.parent_op()
            block = parent.parent_block() if parent is not None else None
        return False

    def global_element(self, region: Region, node) -> Index:
        """One element of an integer or bool global tensor read outside T.Parallel (a block mask
        steering an ``if``, an offset in a table): a ``tile.element`` value, as an index."""
        buffer = region.buffer
        read = next((n for n in ast.walk(node) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
                     and n.value.id == buffer.name), node)
        if any(e is not None for e in region.extents):
            raise self.error(node, f"{ast.unparse(read)} is a region of global tensor {buffer.name}, not one element; "
                                   "an index or a condition takes one element (give an index in every dim)")
        if buffer.dtype.is_float:
            raise self.error(node, f"{ast.unparse(read)} reads an element of the float tensor {buffer.name} as an "
                                   "index or a condition; only integer and bool tensors can steer them (compare "
                                   "float values inside T.Parallel with T.if_then_else)")
        if self.parallel is not None:
            raise self.error(node, f"{ast.unparse(read)}: an element of a global tensor cannot steer an index inside "
                                   "T.Parallel; read it before the T.Parallel loop")
        indices = [self.index_value(start, node) for start in region.starts]
        op = self.insert(tile.ElementOp(buffer.value, indices), node)
        return Index({Symbol(op.result, ast.unparse(read), "opaque"): 1})

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
            args = []
            for a in node.args:
                if isinstance(a, ast.Starred):
                    args.extend(self.expr(a.value))
                else:
                    args.append(self.expr(a))
        else:
            args = [self.expr(a) for a in node.args]
        kwargs = dict(self.keywords(node))
        if isinstance(fn, DType):
            if not args and not kwargs:
                return Unbound(str(fn), node.lineno)       # x = T.int32(): a variable T.let binds later
            if len(args) != 1 or kwargs:
                raise self.error(node, f"T.{fn}(x) takes one value")
            return self.cast_value(args[0], fn, node)
        if inspect.isfunction(fn) and not all(is_static(v) for v in [*args, *kwargs.values()]):
            return self.inline(fn, args, kwargs, node)
        if any(not is_static(a) for a in [*args, *kwargs.values()]):
            if fn in (builtins.max, builtins.min) and len(args) == 2 and not kwargs:
                return self.min_max("max" if fn is builtins.max else "min", args, node)
            if fn is builtins.abs and len(args) == 1:
                return self.unary("abs", args[0], node)
            if fn in (builtins.float, builtins.int) and len(args) == 1:
                return self.cast_value(args[0], "float32" if fn is builtins.float else "int32", node)
            if not inspect.isfunction(fn):
                raise self.error(node, f"{getattr(fn, '__name__', fn)!s} cannot take kernel values; use T functions "
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


def build_prim_func(prim, eager=None) -> ModuleOp:
    """The ``tile`` IR module of a :class:`PrimFunc` (or of an eager kernel, with its binding)."""
    return KernelBuilder(prim, eager).build()


def build_eager(prim, eager) -> tuple[ModuleOp, KernelBuilder]:
    builder = KernelBuilder(prim, eager)
    return builder.build(), builder


def _fields(record) -> list[str]:
    return [f.name for f in record.FIELDS if f.name != "loc"]


def check_layout_annotation(name: str, spec: dict) -> None:
    """The fields of one tensor's ``annotate_tt_layout`` are fields of :class:`UserLayoutAttr`
    (``infer-tt-layout`` checks their values); raise a :class:`CompileError` at the call otherwise."""
    where = location_of(spec)
    for key in spec:
        if key not in _fields(UserLayoutAttr) + ["loc"]:
            raise CompileError(f"annotate_tt_layout for {name}: unknown field {key!r}; use "
                               f"{', '.join(f for f in _fields(UserLayoutAttr) if f != 'halo')}", where)
    shard = spec.get("nd_shard")
    if shard is None:
        return
    if not isinstance(shard, dict):
        raise CompileError(f"annotate_tt_layout for {name}: layout='sharded' needs nd_shard={{'grid': [...]}} "
                           "(or shard_shape_elems)", where)
    for key in shard:
        if key not in _fields(UserNdShardAttr):
            raise CompileError(f"annotate_tt_layout for {name}: unknown nd_shard field {key!r}; use "
                               f"{', '.join(f for f in _fields(UserNdShardAttr) if f != 'halo')}", where)


def check_schedule_annotation(spec: dict) -> None:
    """``annotate_tt_schedule`` sets fields of :class:`UserScheduleAttr` (``apply-tt-defaults``
    checks their values)."""
    for key in spec:
        if key not in _fields(UserScheduleAttr) + ["loc"]:
            raise CompileError(f"annotate_tt_schedule: unknown field {key!r}; use "
                               f"{' and '.join(_fields(UserScheduleAttr))}", location_of(spec))


def annotation(function, key: str, value: dict, what: str) -> None:
    """Store a user annotation as its record; a value no record field can hold is the user's error."""
    try:
        set_attr(function, key, value)
    except VerifyException as exc:
        where = location_of(value) or next((location_of(v) for v in value.values() if isinstance(v, dict)), None)
        raise CompileError(f"{what}: {exc}", where) from None
