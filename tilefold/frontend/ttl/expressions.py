"""Python expressions in a kernel function: compile-time values, runtime integers, calls.

Reads: AST expressions and the names they see. Writes: ``arith`` ops for runtime integer
arithmetic and comparisons (through :class:`~.scalars.ScalarBuilder`); everything that is known
when the kernel is compiled is folded in Python (sizes, block counts, ``ttl.grid_size()``,
attributes of the operation's tensors). Calls are dispatched here: methods of dataflow buffers,
blocks, transfers and pipe nets, the ``ttl`` functions, the block functions, and a few builtins
(``min``, ``max``, ``abs``, ``slice``, ``len``, ``int``, ``float``, ``print``). A call of any
other Python function is made at compile time when all its arguments are compile-time values.

Integers in a kernel are unsigned 32-bit on the device: ``//`` and ``%`` are unsigned,
comparisons signed (so that a small negative difference compares as negative).
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import math
import operator
import sys
import types

from tilefold.errors import TilefoldError
from tilefold.frontend.source import MISSING
from tilefold.frontend.ttl import device_calls, extern_calls
from tilefold.frontend.ttl.dataflow_buffers import (DataflowBuffer, make_dataflow_buffer_like, make_dfb,
                                                   make_tensor_backed_dfb)
from tilefold.frontend.ttl.devices import DeviceDomain
from tilefold.frontend.ttl.semaphores import MulticastSemaphore, RemoteSemaphore, Semaphore
from tilefold.frontend.ttl.grid import BODY_BUILTINS, NodeExpression, core_grid, grid_shape, grid_size, node_coordinates
from tilefold.frontend.ttl.grid import node as ttl_node
from tilefold.frontend.ttl.kernels import KernelDefinition
from tilefold.frontend.ttl.math_api import BlockFunction
from tilefold.frontend.ttl.pipes import Pipe, PipeNet
from tilefold.frontend.ttl.scalars import Scalar
from tilefold.frontend.ttl.scopes import MAX_UNROLLED_ITEMS, Scope
from tilefold.frontend.ttl.values import (
    Accumulator,
    Block,
    BlockExpression,
    ElementValue,
    GroupTransfer,
    LocalFunction,
    PipeIdentity,
    RaisedValue,
    ReadyReceive,
    TensorSlice,
    Transfer,
)
from tilefold.ir import ttl

_PY_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
              ast.MatMult: operator.matmul, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
              ast.BitXor: operator.xor, ast.LShift: operator.lshift, ast.RShift: operator.rshift}
_COMPARE = {ast.Lt: "slt", ast.LtE: "sle", ast.Gt: "sgt", ast.GtE: "sge", ast.Eq: "eq", ast.NotEq: "ne"}


def _holds_runtime(values) -> bool:
    """Whether a tuple or list holds (at any depth) a runtime integer or node expression."""
    return any(isinstance(v, (Scalar, NodeExpression)) or isinstance(v, (tuple, list)) and _holds_runtime(v)
               for v in values)


_PY_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
               ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not,
               ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


# values a kernel holds as Python values, known when it is built (printed or asserted as Python would)
PYTHON_VALUES = (bool, int, float, str, tuple, list, type(None))


# methods of Python lists and dicts that store runtime values without looking at them
_CONTAINER_METHODS = {list: ("append", "extend", "insert", "copy"),
                      dict: ("update", "setdefault", "get", "copy", "pop")}


def _block_function_for(name: str) -> str:
    """What computes ``name`` on blocks: ``ttl.math.name`` when ttl.math has it, else block arithmetic."""
    from tilefold.frontend.ttl.math_api import math as ttl_math

    if isinstance(getattr(ttl_math, name, None), BlockFunction):
        return f"ttl.math.{name}"
    return "+ - * / @ and ttl.math functions"


class BoundMethod:
    """``obj.method`` of a kernel value, called later."""

    def __init__(self, obj, name: str):
        self.obj = obj
        self.name = name


def _kernel_methods(value) -> tuple[str, ...]:
    """The methods a kernel may call on ``value`` (those :meth:`ExpressionBuilder.call_method` builds)."""
    if isinstance(value, (Semaphore, RemoteSemaphore, MulticastSemaphore)):
        return {Semaphore: ("wait_eq", "wait_min", "wait_ge", "set", "get_remote", "get_remote_multicast"),
                RemoteSemaphore: ("inc", "set"), MulticastSemaphore: ("set",)}[type(value)]
    for kind, names in ((DataflowBuffer, ("reserve", "wait", "push", "pop", "publish")),
                        (Block, ("push", "pop", "store", "store_rows", "accumulate_rows")),
                        (Transfer, ("wait", "can_wait")), (ReadyReceive, ("index",)), (GroupTransfer, ("add", "wait_all")),
                        (PipeNet, ("if_src", "if_dst", "is_src", "is_dst", "is_active", "destination_count")),
                        (DeviceDomain, ("current_index", "is_current"))):
        if isinstance(value, kind):
            return names
    return ()


class ExpressionBuilder:
    """Mixin of :class:`~.builder.KernelBuilder`: expressions and calls."""

    # -- helpers --------------------------------------------------------------------------------

    @staticmethod
    def describe(value) -> str:
        if isinstance(value, Scalar):
            return "a runtime integer"
        if isinstance(value, Block):
            return f"block {value.name}"
        if isinstance(value, ElementValue):
            return f"a {value.data_format.ttnn_name} value read with ttl.raw_element_read"
        if isinstance(value, BlockExpression):
            return "a block expression"
        if isinstance(value, DataflowBuffer):
            return f"dataflow buffer {value.name}"
        if isinstance(value, Transfer):
            return {"send": "a pipe send handle", "recv": "a pipe receive request"}.get(value.kind,
                                                                                      "a transfer handle")
        if isinstance(value, ReadyReceive):
            return "the result of ttl.wait_any"
        if isinstance(value, TensorSlice):
            return "a tensor slice"
        if value is None:
            return "None"
        if isinstance(value, RaisedValue):
            return (f"the value of {value.helper}(), which has none: it ends in raise {value.raised} (at "
                    f"{value.location}), an assert that fails where a kernel reaches it,")
        if isinstance(value, PipeNet):
            return "a ttl.PipeNet"
        if isinstance(value, KernelDefinition):
            return f"kernel function {getattr(value.function, '__name__', '?')}"
        if isinstance(value, PipeIdentity):
            return f"the pipe given to net.if_{value.role}'s body"
        if isinstance(value, types.ModuleType):        # tilefold.ttl as the user imports it: ttl
            return f"module {value.__name__.removeprefix('tilefold.')}"
        if isinstance(value, (tuple, list)) and not all(isinstance(v, (bool, int, float, str)) for v in value):
            shown = ", ".join(ExpressionBuilder.describe(v) for v in value[:3]) + (", ..." if len(value) > 3 else "")
            return f"a {type(value).__name__} of {len(value)} values ({shown})"
        public = _public_ttl_name(value)
        if public is not None:
            return public
        if isinstance(value, type):
            return f"class {value.__name__}"
        kind = type(value).__module__.split(".")[0]
        if kind in ("numpy", "torch") and hasattr(value, "shape") and getattr(value, "ndim", 0):
            # an array's repr is many lines of its values: its shape and data type say what it is
            return (f"a {'numpy array' if kind == 'numpy' else 'torch tensor'} of shape {tuple(value.shape)} "
                    f"({value.dtype})")
        shown = " ".join(repr(value).split())
        if " object at 0x" in shown:        # no repr of its own: the type says what it is
            return f"a {type(value).__name__} object"
        return f"{type(value).__name__} {shown}"[:80]

    def as_int(self, value, node: ast.AST, what: str):
        """An int or a :class:`Scalar`, or an error naming ``what``."""
        if isinstance(value, NodeExpression):
            value = self.node_expression(value, node)
        if _is_int(value) or isinstance(value, Scalar):
            return value
        raise self.error(f"{what} must be an integer, not {self.describe(value)}", node)

    def condition(self, value, node: ast.AST):
        """A Python bool or an ``i1`` SSA value."""
        if isinstance(value, (bool, int, float, str, tuple, list)) or value is None:
            return bool(value)
        if hasattr(value, "type") and str(value.type) == "i1":
            return value
        if isinstance(value, Scalar):
            return self.scalar_compare("ne", value, 0)
        if isinstance(value, ElementValue):
            raise self.unsupported_element_use(node)
        raise self.error(f"{ast.unparse(node)[:40]} ({self.describe(value)}) cannot be used as a condition", node)

    def scalar_compare(self, predicate: str, a, b):
        """A comparison of the program's integers: a bool when it is known when the kernel is built
        (both compile-time, or, in a compute kernel, decided by the ranges of loop indices and node
        coordinates — ``if k == 0`` past a loop's first iteration), else an ``i1`` SSA value. (Data
        movement kernels keep such tests at run time: their guards and asserts are checked there.)"""
        known = self.scalars.decided(predicate, a, b) if self.kind == "compute" else None
        return known if known is not None else self.scalars.compare(predicate, a, b)

    def evaluate_test(self, test: ast.expr, scope):
        """The value of a condition (of an ``if``, a conditional expression, ``and`` / ``or``).
        ``a == b`` / ``a != b`` of two names holding blocks or block expressions asks whether they
        are the same block (a compile-time bool), as blocks compare in TT-Lang's simulator:
        ``x if c_expr != c_blk else c_blk`` after ``c_expr`` may have been rebound. Anything else
        is evaluated (an element-wise comparison of blocks is no condition)."""
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq)) \
                and isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Name):
            from tilefold.frontend.ttl.block_expressions import PendingBroadcast

            blocks = (Block, BlockExpression, PendingBroadcast)
            a, b = scope.lookup(test.left.id), scope.lookup(test.comparators[0].id)
            if isinstance(a, blocks) and isinstance(b, blocks):
                return (a is b) == isinstance(test.ops[0], ast.Eq)
        return self.evaluate(test, scope)

    def node_values(self, node: ast.AST):
        """The node's runtime coordinates ``(x, y)`` (emitted once, at the kernel's start)."""
        if self.node_coords is None:
            coords = []
            chip = self.operation.mesh_chip        # one chip of a grid with mesh axes: its nodes' columns follow
            for dim, name in ((0, "node_x"), (1, "node_y")):          # the columns of the chips before it
                op = self.emit_prologue(ttl.NodeCoordOp(dim), node)
                op.result.name_hint = name
                extent = self.operation.grid[dim] if chip is not None else core_grid(self.operation.grid_dims)[dim]
                self.scalars.ranges[id(op.result)] = (0, extent - 1)
                coords.append(Scalar.opaque(op.result))
            if chip:
                coords[0] = self.scalars.add(coords[0], chip * self.operation.grid[0])
            self.node_coords = tuple(coords)
        return self.node_coords

    def domain_method(self, domain: DeviceDomain, name: str, args, kwargs, node: ast.AST):
        """``domain.current_index()`` (this node's device, row-major in the domain) and
        ``domain.is_current(device)`` (whether it is that device) — runtime values, as one kernel
        serves every device."""
        own = self.operation.device_domain
        if own is None or not own.same_as(domain):
            raise self.error(f"{domain!r}.{name}(): this operation runs over "
                             f"{'no device domain' if own is None else repr(own)}; give it "
                             f"@ttl.operation(..., device_domain=...) with this domain", node)
        self.node = node
        op = self.emit_prologue(ttl.NodeCoordOp(2), node)
        op.result.name_hint = "device_index"
        self.scalars.ranges[id(op.result)] = (0, domain.size - 1)
        index = Scalar.opaque(op.result)
        if name == "current_index":
            self.no_arguments(args, kwargs, node, "DeviceDomain.current_index()")
            return index
        if len(args) != 1 or kwargs:
            raise self.error("DeviceDomain.is_current(device) takes one device (a coordinate or ttl.DeviceRef)", node)
        try:
            wanted = domain.index(args[0], "is_current:", self.location(node))
        except TilefoldError as exc:
            raise self.error(exc.message, node) from None
        self.node = node
        return self.scalars.compare("eq", index, wanted)

    def known_node(self, value, node: ast.AST):
        """``value``, a node expression (``ttl.node()`` arithmetic) as its runtime integer."""
        return self.node_expression(value, node) if isinstance(value, NodeExpression) else value

    def node_expression(self, expr: NodeExpression, node: ast.AST):
        x, y = self.node_values(node)
        ops = {"+": self.scalars.add, "-": self.scalars.sub, "*": self.scalars.mul, "//": self.scalars.floordiv,
               "%": self.scalars.mod, "min": self.scalars.minimum, "max": self.scalars.maximum}
        # ``n = x % cols`` used twice (``t[n * 2:n * 2 + 2]``) is one symbol of the affine forms, so
        # the extent of a slice whose bounds both use it is a compile-time number.
        forms = self.node_forms

        def fold(e: NodeExpression):
            if e.op in ("x", "y"):
                return x if e.op == "x" else y
            if e.op == "const":
                return e.args[0]
            result = ops[e.op](fold(e.args[0]), fold(e.args[1]))
            if isinstance(result, Scalar) and e.op in ("//", "%", "min", "max"):
                result = Scalar(result.value, forms.setdefault(e.key(), result.form))
            return result

        return fold(expr)

    # -- evaluation -----------------------------------------------------------------------------

    def evaluate(self, node: ast.expr, scope):
        self.node = node
        handler = getattr(self, f"expr_{type(node).__name__}", None)
        if handler is None:
            raise self.error(f"{type(node).__name__} expressions ({ast.unparse(node)[:40]}) are not supported in a "
                             "kernel", node)
        return handler(node, scope)

    def expr_Constant(self, node: ast.Constant, scope):
        return node.value

    def expr_ListComp(self, node: ast.ListComp, scope):
        """``[f(x) for x in items if c(x)]`` over values known when the kernel is built (its items may
        be runtime values: ``[n + i for i in range(3)]``)."""
        inner, out = Scope(parent=scope), []

        def walk(generators) -> None:
            if not generators:
                out.append(self.evaluate(node.elt, inner))
                return
            gen = generators[0]
            if self.is_builtin_call(gen.iter, "range", inner) and not gen.iter.keywords:
                bounds = [self.evaluate(a, inner) for a in gen.iter.args]
                if not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
                    raise self.error("a comprehension in a kernel takes its items when the kernel is built: its "
                                     "range() bounds must be compile-time integers", gen.iter)
                items = range(*bounds)
            else:
                items = self.evaluate(gen.iter, inner)
            if isinstance(items, (range, dict, set, frozenset, type({}.keys()), type({}.values()), type({}.items()),
                                  enumerate, zip, reversed)):
                items = list(items)
            if not isinstance(items, (list, tuple)) or len(items) > MAX_UNROLLED_ITEMS:
                raise self.error(f"a comprehension in a kernel takes its items when the kernel is built: "
                                 f"{ast.unparse(gen.iter)[:40]} must be a range, list or tuple of known length "
                                 f"(at most {MAX_UNROLLED_ITEMS} items)", gen.iter)
            for item in items:
                self.assign(gen.target, item, inner)
                tests = [self.condition(self.evaluate_test(t, inner), t) for t in gen.ifs]
                if not all(isinstance(t, bool) for t in tests):
                    raise self.error("a comprehension's condition in a kernel must be known when the kernel is "
                                     "built; use an if statement in a loop", gen.ifs[0])
                if all(tests):
                    walk(generators[1:])

        walk(node.generators)
        return out

    def expr_Lambda(self, node: ast.Lambda, scope):
        """``lambda pipe: ttl.copy(blk, pipe).wait()`` given to ``net.if_src`` / ``if_dst``: a pipe
        condition body of one expression statement."""
        body = ast.copy_location(ast.Expr(value=node.body), node.body)
        fn = ast.copy_location(ast.FunctionDef(name="lambda", args=node.args, body=[body], decorator_list=[],
                                               returns=None, type_params=[]), node)
        fn.end_lineno, fn.end_col_offset = node.end_lineno, node.end_col_offset
        return LocalFunction(fn, scope)

    def expr_Name(self, node: ast.Name, scope):
        value = self.read_name(node.id, scope, node)
        if isinstance(value, NodeExpression):
            return self.node_expression(value, node)
        return value

    def expr_Tuple(self, node: ast.Tuple, scope):
        return tuple(self.elements(node, scope))

    def expr_List(self, node: ast.List, scope):
        return self.elements(node, scope)

    def expr_Dict(self, node: ast.Dict, scope):
        """A dict display: keys known when the kernel is built, values of any kind; ``**d`` spreads
        a dict."""
        out = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                spread = self.evaluate(value, scope)
                if not isinstance(spread, dict):
                    raise self.error(f"**{ast.unparse(value)[:40]} in a dict needs a dict, not {self.describe(spread)}",
                                     value)
                out.update(spread)
                continue
            k = self.evaluate(key, scope)
            if not isinstance(k, PYTHON_VALUES) or isinstance(k, list) or isinstance(k, tuple) and _holds_runtime(k):
                raise self.error(f"a dict's key in a kernel must be known when the kernel is built; "
                                 f"{ast.unparse(key)[:40]} is {self.describe(k)}", key)
            out[k] = self.evaluate(value, scope)
        return out

    def elements(self, node: ast.Tuple | ast.List, scope) -> list:
        """The items of a tuple or list display; ``*xs`` spreads a compile-time tuple or list."""
        out = []
        for e in node.elts:
            if isinstance(e, ast.Starred):
                value = self.evaluate(e.value, scope)
                if not isinstance(value, (tuple, list)):
                    raise self.error(f"*{ast.unparse(e.value)[:40]} spreads a tuple or list known when the kernel "
                                     f"is built, not {self.describe(value)}", e)
                out.extend(value)
            else:
                out.append(self.evaluate(e, scope))
        return out

    def expr_Slice(self, node: ast.Slice, scope):
        parts = [self.evaluate(p, scope) if p is not None else None for p in (node.lower, node.upper, node.step)]
        return slice(*parts)

    def expr_IfExp(self, node: ast.IfExp, scope):
        cond = self.condition(self.evaluate_test(node.test, scope), node.test)
        if isinstance(cond, bool):
            return self.evaluate(node.body if cond else node.orelse, scope)
        body, orelse = self.evaluate(node.body, scope), self.evaluate(node.orelse, scope)
        if isinstance(body, tuple) and isinstance(orelse, tuple) and len(body) == len(orelse):
            return tuple(self.select(cond, a, b, node) for a, b in zip(body, orelse))     # (n, k) if c else (k, n)
        return self.select(cond, body, orelse, node)

    def select(self, cond, a, b, node, what: str = "a runtime conditional expression"):
        """The runtime integer ``a if cond else b`` (``cond`` an ``i1``; ``what`` names the operands
        in the error when one is no integer)."""
        from xdsl.dialects import arith

        a = self.as_int(self.flag_integer(a), node, what)
        b = self.as_int(self.flag_integer(b), node, what)
        self.node = node
        op = self.emit(arith.SelectOp(cond, self.scalars.materialize(a), self.scalars.materialize(b)))
        return Scalar.opaque(op.result)

    def expr_Attribute(self, node: ast.Attribute, scope):
        base = self.evaluate(node.value, scope)
        name = node.attr
        if isinstance(base, (Block, DataflowBuffer, Transfer, GroupTransfer, PipeNet, Accumulator, Semaphore,
                             RemoteSemaphore, MulticastSemaphore, ReadyReceive, DeviceDomain)):
            if name == "shape" and isinstance(base, (Block, DataflowBuffer)):
                return tuple(base.shape)
            if name == "dtype" and isinstance(base, (Block, DataflowBuffer)):
                return (base.dfb if isinstance(base, Block) else base).data_format
            if name == "tile" and isinstance(base, (Block, DataflowBuffer)):
                return tuple((base.dfb if isinstance(base, Block) else base).tile)     # (height, width)
            if name in ("block_count", "buffer_factor") and isinstance(base, DataflowBuffer):
                return base.block_count          # buffer_factor: its pre-1.0 name
            if name == "is_completed" and isinstance(base, Transfer):
                return self.transfer_completed(base, node)
            methods = _kernel_methods(base)
            if name not in methods:
                attributes = ("shape", "dtype", "tile") + (("block_count",) if isinstance(base, DataflowBuffer) else ())
                known = [f"{m}()" for m in methods] + (list(attributes) if isinstance(base, (Block, DataflowBuffer))
                                                         else [])
                has = f"; in a kernel it has {', '.join(known)}" if known else ""
                raise self.error(f"{self.describe(base)} has no attribute {name!r}{has}", node)
            return BoundMethod(base, name)
        if isinstance(base, Pipe) and name in ("has_current_core", "has_current_node"):
            return BoundMethod(base, name)
        if isinstance(base, BlockExpression):
            if name == "shape":
                return tuple(base.shape)
            what = ast.unparse(node.value)[:40]
            hint = ""
            if name in ("pop", "push", "store", "store_rows", "accumulate_rows"):
                hint = (f"; {name}() takes a block acquired with dfb.wait() or dfb.reserve() (a name bound to "
                        "blocks of different buffers before and inside a loop holds a computed value there: keep "
                        "one name per buffer)")
            raise self.error(f"{what} is a value computed in the kernel, not a block of a dataflow buffer, so it has "
                             f"no {name!r}{hint}", node)
        if isinstance(base, PipeIdentity):
            return self.pipe_attribute(base, name, node)
        if isinstance(base, Scalar):
            raise self.error(f"a runtime integer has no attribute {name!r}", node)
        try:
            return getattr(base, name)
        except AttributeError as exc:
            if isinstance(exc, TilefoldError):
                raise self.error(exc.message, node) from None
            if base is None and isinstance(node.value, ast.Call):
                call = ast.unparse(node.value)[:60]
                func = node.value.func
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):     # x(...).m().n
                    raise self.error(f"{call} returns no value, so .{name} cannot be used on its result; keep "
                                     f"{ast.unparse(func.value)[:40]} in a name and use its methods one per "
                                     "statement", node) from None
                obj = ast.unparse(func.value)[:30] if isinstance(func, ast.Attribute) else None
                then = f"{obj}.{name}" if obj else f".{name} on the object you meant"
                raise self.error(f"{call} returns no value, so .{name} cannot be used on its result; write {call} "
                                 f"and {then} as two statements", node) from None
            public = _public_ttl_name(base)
            if public is not None:
                raise self.error(f"{public}.{name} is not supported by tilefold yet", node) from None
            raise self.error(f"{self.describe(base)} has no attribute {name!r}", node) from None

    def argument_of(self, value):
        """The operation's tensor argument ``value`` is, or None."""
        if not hasattr(value, "shape") or isinstance(value, (Block, BlockExpression, tuple, list)):
            return None
        return self.operation.tensor_argument(value)

    def expr_Subscript(self, node: ast.Subscript, scope):
        base = self.evaluate(node.value, scope)
        index = self.evaluate(node.slice, scope)
        argument = self.argument_of(base)
        if argument is not None:
            return self.tensor_slice(argument, index, node)
        if isinstance(base, (tuple, list, str, dict)):
            if isinstance(index, Scalar):
                raise self.error("a Python sequence can only be indexed with a compile-time integer; a for loop over "
                                 "range() runs on the device, so loop over the sequence itself (for i, item in "
                                 "enumerate(items)) to unroll it", node)
            try:
                return base[index]
            except (IndexError, KeyError, TypeError) as exc:
                raise self.error(f"{ast.unparse(node)[:40]}: {exc}", node) from None
        name = node.value.id if isinstance(node.value, ast.Name) else None
        hint = self.operation.not_a_tensor_hint(base, name) if name else ""
        raise self.error(f"{self.describe(base)} cannot be indexed in a kernel; index the operation's tensors to "
                         f"make tensor slices{hint}", node)

    def expr_UnaryOp(self, node: ast.UnaryOp, scope):
        value = self.evaluate(node.operand, scope)
        op = type(node.op)
        if isinstance(value, (Block, BlockExpression)):
            if op is ast.USub:
                return self.block_unary("neg", value, node)
            if op is ast.UAdd:
                return value
            raise self.error(f"{ast.unparse(node)[:40]}: this operator does not apply to blocks", node)
        if isinstance(value, ElementValue):
            raise self.unsupported_element_use(node)
        if isinstance(value, Scalar):
            if op is ast.USub:
                return self.scalars.sub(0, value)
            if op is ast.Invert:                   # ~x is -x - 1 on Python's (and two's complement) integers
                return self.scalars.sub(-1, value)
            if op is ast.UAdd:
                return value
            if op is ast.Not:
                return self.scalar_compare("eq", value, 0)
            raise self.error(f"{ast.unparse(node)[:40]}: unsupported on runtime integers", node)
        if self.is_flag(value) and op is ast.Not:
            return self.negate(value)
        python = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_, ast.Invert: operator.invert}
        try:
            return python[op](value)
        except TypeError as exc:
            raise self.error(f"{ast.unparse(node)[:40]}: {exc}", node) from None

    def expr_BinOp(self, node: ast.BinOp, scope):
        left = self.evaluate(node.left, scope)
        right = self.evaluate(node.right, scope)
        self.node = node
        return self.binary(type(node.op), left, right, node)

    def binary(self, op: type, left, right, node: ast.AST):
        """``left <op> right`` for any pair of kernel values."""
        if isinstance(left, NodeExpression):
            left = self.node_expression(left, node)
        if isinstance(right, NodeExpression):
            right = self.node_expression(right, node)
        if isinstance(left, ElementValue) or isinstance(right, ElementValue):
            raise self.unsupported_element_use(node)
        if isinstance(left, (Block, BlockExpression)) or isinstance(right, (Block, BlockExpression)):
            return self.block_binary(op, left, right, node)
        if self.is_flag(left) or self.is_flag(right) or (isinstance(left, bool) and isinstance(right, Scalar)) \
                or (isinstance(right, bool) and isinstance(left, Scalar)):
            left, right = self.flag_integer(left), self.flag_integer(right)    # (n > 1) + True: 0 / 1
        if isinstance(left, Scalar) or isinstance(right, Scalar):
            a = self.as_int(left, node, "an operand of runtime integer arithmetic")
            b = self.as_int(right, node, "an operand of runtime integer arithmetic")
            table = {ast.Add: self.scalars.add, ast.Sub: self.scalars.sub, ast.Mult: self.scalars.mul,
                     ast.FloorDiv: self.scalars.floordiv, ast.Mod: self.scalars.mod}
            bitwise = {ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor", ast.LShift: "shl", ast.RShift: "shr"}
            if op in bitwise:
                return self.scalars.bitwise(bitwise[op], a, b)
            if op is ast.Pow and isinstance(a, int) and a > 0 and a & (a - 1) == 0:
                # 2 ** e (a power of two to a runtime exponent): a shift, 1 << (e * log2(base))
                return self.scalars.bitwise("shl", 1, self.scalars.mul(b, a.bit_length() - 1))
            if op not in table:
                raise self.error(f"{ast.unparse(node)[:40]}: runtime integers support + - * // % & | ^ << >> only (/ "
                                 "is true division; use //)", node)
            return table[op](a, b)
        try:
            return _PY_BINARY[op](left, right)
        except (TypeError, ZeroDivisionError, ValueError) as exc:
            raise self.error(f"{ast.unparse(node)[:40]}: {exc}", node) from None

    def expr_Compare(self, node: ast.Compare, scope):
        left = self.evaluate(node.left, scope)
        result = None
        for op, comparator in zip(node.ops, node.comparators):
            right = self.evaluate(comparator, scope)
            piece = self.compare(type(op), left, right, node)
            result = piece if result is None else self.logical(ast.And, result, piece, node)
            left = right
        return result

    def compare(self, op: type, left, right, node):
        if isinstance(left, NodeExpression):
            left = self.node_expression(left, node)
        if isinstance(right, NodeExpression):
            right = self.node_expression(right, node)
        if op in (ast.Is, ast.IsNot) and (left is None) != (right is None) and not isinstance(
                left if right is None else right, (bool, int, float, str, tuple, list, dict)):
            return op is ast.IsNot      # a device value (a block, an accumulator, a runtime integer) is never None
        if isinstance(left, (Block, BlockExpression)) or isinstance(right, (Block, BlockExpression)):
            names = {ast.Gt: "gt", ast.Lt: "lt", ast.GtE: "ge", ast.LtE: "le", ast.Eq: "eq", ast.NotEq: "ne"}
            if op not in names:
                raise self.error(f"{ast.unparse(node)[:40]}: blocks compare with < <= > >= == !=", node)
            return self.block_binary_named(names[op], left, right, node)
        if isinstance(left, ElementValue) or isinstance(right, ElementValue):
            return self.element_compare(op, left, right, node)
        if op in (ast.In, ast.NotIn) and isinstance(left, Scalar) and isinstance(right, (tuple, list, range)):
            return self.membership(op, left, right, node)
        if op in (ast.Is, ast.IsNot) and isinstance(right, bool) and self.is_flag(left):
            return left if (op is ast.Is) == right else self.negate(left)
        if op in (ast.Eq, ast.NotEq) and (isinstance(left, Scalar) or isinstance(right, Scalar)) and any(
                other is None or isinstance(other, str) for other in (left, right)):
            return op is ast.NotEq      # a runtime integer is never None or a string
        if isinstance(left, Scalar) or isinstance(right, Scalar):
            if op not in _COMPARE:
                raise self.error(f"{ast.unparse(node)[:40]}: runtime integers compare with < <= > >= == !=", node)
            return self.scalar_compare(_COMPARE[op], self.as_int(left, node, "a compared value"),
                                       self.as_int(right, node, "a compared value"))
        if type(left) is type(right) and isinstance(left, (tuple, list)) and _holds_runtime(left + right):
            return self.sequence_compare(op, left, right, node)
        try:
            return _PY_COMPARE[op](left, right)
        except TypeError as exc:
            raise self.error(f"{ast.unparse(node)[:40]}: {exc}", node) from None

    def sequence_compare(self, op: type, left, right, node):
        """``ttl.node(dims=2) == (1, 0)`` and other tuple / list comparisons holding runtime integers, as
        Python compares them: element by element, the first unequal pair deciding an ordering."""
        if op in (ast.Eq, ast.NotEq):
            equal = len(left) == len(right)
            for a, b in zip(left, right) if equal else ():
                equal = self.logical(ast.And, equal, self.compare(ast.Eq, a, b, node), node)
            return equal if op is ast.Eq else self.negate(equal)
        if op not in (ast.Lt, ast.LtE, ast.Gt, ast.GtE):
            raise self.error(f"{ast.unparse(node)[:40]}: tuples holding runtime integers compare with "
                             "< <= > >= == !=", node)
        strict = ast.Lt if op in (ast.Lt, ast.LtE) else ast.Gt
        result = _PY_COMPARE[op](len(left), len(right))     # decides when the common part is equal
        for a, b in reversed(list(zip(left, right))):
            tie = self.logical(ast.And, self.compare(ast.Eq, a, b, node), result, node)
            result = self.logical(ast.Or, self.compare(strict, a, b, node), tie, node)
        return result

    def membership(self, op: type, value: Scalar, options, node):
        """``i in (1, 2)`` on a runtime integer: ``i == 1 or i == 2`` (``not in``: none equal)."""
        found = False
        for option in options:
            if not _is_int(option):
                raise self.error(f"{ast.unparse(node)[:40]}: a runtime integer is looked up among integers", node)
            found = self.logical(ast.Or, found, self.scalars.compare("eq", value, option), node)
        return found if op is ast.In else self.negate(found)

    @staticmethod
    def is_flag(value) -> bool:
        """Whether ``value`` is a runtime truth value (an ``i1``, such as ``net.is_src()``)."""
        return str(getattr(value, "type", "")) == "i1"

    def negate(self, value):
        """``not value`` of a bool or a runtime ``i1``."""
        if isinstance(value, bool):
            return not value
        from xdsl.dialects import arith
        from xdsl.dialects.builtin import IntegerAttr, i1

        one = self.emit(arith.ConstantOp(IntegerAttr(1, i1)))
        return self.emit(arith.XOrIOp(value, one.result)).result

    def expr_BoolOp(self, node: ast.BoolOp, scope):
        """``a and b`` / ``a or b`` as Python computes them: the operand that decides, not its truth
        (``(0 or 2)`` is 2), evaluated left to right and no further than a compile-time operand that
        decides. From the first runtime operand on the rest are combined on the device: truth values
        (comparisons, flags) by ``and`` / ``or``, integers by Python's pick (``x or y`` is ``x`` where
        ``x != 0``, else ``y``)."""
        is_and = isinstance(node.op, ast.And)
        result = None
        for i, value_node in enumerate(node.values):
            value = self.evaluate_test(value_node, scope)
            if result is None:
                truth = self.condition(value, value_node)
                if isinstance(truth, bool):
                    if truth != is_and or i == len(node.values) - 1:
                        return value                # this operand decides (or is the last)
                    continue
                result = value
                continue
            result = self.runtime_pick(is_and, result, value, value_node)
        return result

    def runtime_pick(self, is_and: bool, a, b, node):
        """``a and b`` / ``a or b`` of a runtime ``a``: ``and`` / ``or`` of two truth values, else
        the integer Python would give (``b if a else a`` / ``a if a else b``)."""
        op = ast.And if is_and else ast.Or
        if (self.is_flag(a) or isinstance(a, bool)) and (self.is_flag(b) or isinstance(b, bool)):
            return self.logical(op, a, b, node)
        truth = self.condition(a, node)
        what = f"an operand of {'and' if is_and else 'or'}"
        a = self.as_int(self.flag_integer(a), node, what)
        b = self.as_int(self.flag_integer(b), node, what)
        return self.select(truth, b, a, node, what) if is_and else self.select(truth, a, b, node, what)

    def flag_integer(self, value):
        """A truth value as the integer 0 / 1 (Python's ``True + 1``); anything else as it is."""
        if isinstance(value, bool):
            return int(value)
        if not self.is_flag(value):
            return value
        from xdsl.dialects import arith
        from xdsl.dialects.builtin import IndexType, i32

        wide = self.emit(arith.ExtUIOp(value, i32)).result
        return Scalar.opaque(self.emit(arith.IndexCastOp(wide, IndexType())).result)

    def logical(self, op: type, a, b, node):
        from xdsl.dialects import arith

        if isinstance(a, bool) and isinstance(b, bool):
            return (a and b) if op is ast.And else (a or b)
        if isinstance(a, bool):
            a, b = b, a
        if isinstance(b, bool):
            if op is ast.And:
                return a if b else False
            return True if b else a
        cls = arith.AndIOp if op is ast.And else arith.OrIOp
        return self.emit(cls(a, b)).result

    def expr_JoinedStr(self, node, scope):
        return ""

    # -- calls ----------------------------------------------------------------------------------

    def expr_Call(self, node: ast.Call, scope):
        callee = self.evaluate(node.func, scope)
        if callee is print:
            if any(isinstance(a, ast.Starred) for a in node.args):
                raise self.error("print(*items) in a kernel: print the items one by one", node)
            return self.kernel_print(node, scope)
        args, kwargs = self.call_arguments(node, scope)
        while isinstance(callee, functools.partial):     # its arguments first, as Python calls it
            args, kwargs = [*callee.args, *args], {**callee.keywords, **kwargs}
            callee = callee.func
        if callee is slice and not kwargs and 1 <= len(args) <= 3:
            return slice(*args)  # bounds may be runtime indices; a tensor subscript checks them
        self.node = node
        if isinstance(callee, BoundMethod):
            return self.call_method(callee, args, kwargs, node, scope)
        if isinstance(callee, BlockFunction):
            return self.block_function(callee, args, kwargs, node)
        if isinstance(callee, LocalFunction):
            return self.inline_local(callee, args, kwargs, node)
        handler = self._call_handlers().get(id(callee))
        if handler is not None:
            return handler(args, kwargs, node)
        return self.compile_time_call(callee, args, kwargs, node)

    def call_arguments(self, node: ast.Call, scope) -> tuple[list, dict]:
        """A call's positional and keyword arguments; ``*items`` and ``**mapping`` spread a tuple,
        list or dict known when the kernel is built (whose items may be runtime values)."""
        args: list = []
        for a in node.args:
            if not isinstance(a, ast.Starred):
                args.append(self.evaluate(a, scope))
                continue
            items = self.evaluate(a.value, scope)
            if not isinstance(items, (tuple, list, range)):
                raise self.error(f"*{ast.unparse(a.value)[:40]} in a kernel call needs a tuple or list known when "
                                 f"the kernel is built, not {self.describe(items)}", a)
            args.extend(items)
        kwargs: dict = {}
        for k in node.keywords:
            value = self.evaluate(k.value, scope)
            if k.arg is not None:
                kwargs[k.arg] = value
            elif isinstance(value, dict) and all(isinstance(key, str) for key in value):
                kwargs.update(value)
            else:
                raise self.error(f"**{ast.unparse(k.value)[:40]} in a kernel call needs a dict of names known "
                                 f"when the kernel is built, not {self.describe(value)}", k.value)
        return args, kwargs

    def kernel_print(self, node: ast.Call, scope) -> None:
        """``print(...)`` in a kernel: TT-Metal's ``DPRINT`` (``ttkernel.dprint``) of its texts and its
        runtime integers (f-strings included); values known when the kernel is built are printed as
        Python prints them, blocks, buffers and tensors as their description, followed, for each
        block held from a tiled buffer, by its tiles' rows and, for each buffer, by its circular
        buffer's state. ``sep`` is honoured, TT-Lang's ``num_pages=n`` (a block prints its first n
        tiles) and ``dst=True, label=...`` (the DST dump's header); other keywords (``end``, ``flush``,
        ``thread`` ...) are accepted and ignored."""
        from tilefold.ir.ttkernel import DPrintCBOp, DPrintOp, DPrintTilesOp

        keywords = {k.arg: k.value for k in node.keywords}
        sep = self.evaluate(keywords["sep"], scope) if "sep" in keywords else " "
        dump = next((k for k in ("dst", "_dump_dst_registers") if k in keywords), None)
        if dump is not None and self.evaluate(keywords[dump], scope) is True:
            # TT-Lang's dump of the DST slots live here (``dst=True``; ``_dump_dst_registers=True`` in
            # TT-Lang 1.1): its header line. Block values are computed where they are stored, so no
            # slot holds one between statements (TT-Lang's compiler finds none there either and
            # prints the header alone)
            from tilefold.errors import warn_at

            warn_at(f"print({dump}=True) prints its label only: values are computed in DST where "
                    "they are stored, so no slot holds one at a print; print the block a value is stored into "
                    "to see it", self.location(node))
            label = self.evaluate(keywords["label"], scope) if "label" in keywords else ""
            self.node = node
            self.emit(DPrintOp([f"=== {label} ==="], [], "math" if self.kind == "compute" else None))
            return None
        parts, values = self.printed_text(node.args, str(sep), scope, node)
        # TT-Lang's ``num_pages=n``: a block prints its first n tiles
        pages = self.evaluate(keywords["num_pages"], scope) if "num_pages" in keywords else None
        if pages is not None and (not isinstance(pages, int) or isinstance(pages, bool) or pages < 1):
            raise self.error(f"print(..., num_pages={pages!r}): num_pages is a positive integer known when the "
                             "kernel is built", node)
        # after the line, the contents of the blocks and the state of the buffers it names, as
        # TT-Lang prints them; in a compute kernel the line comes from the thread printing them
        contents, threads = [], []
        for arg in node.args:
            value = self.static_value(arg, scope)       # a name, looked up without building anything
            if type(value) is Block and value.dfb.is_tiled and tuple(value.dfb.tile) == (32, 32) \
                    and not value.status.released and value.dfb.index is not None:
                tiles = value.dfb.block_pages
                front = value.acquired == "wait"
                contents.append(DPrintTilesOp(self.cb_value(value.dfb), value.depth * tiles,
                                              tiles if pages is None else min(pages, tiles),
                                              "front" if front else "back"))
                threads.append("unpack" if front else "pack")
            elif isinstance(value, DataflowBuffer) and value.index is not None:
                contents.append(DPrintCBOp(self.cb_value(value)))
                threads.append("unpack")
            elif self.argument_of(value) is not None:
                from tilefold.errors import warn_at

                warn_at(f"print({ast.unparse(arg)[:30]}) prints the tensor's description, not its pages: tilefold does "
                        "not print a tensor's pages yet; copy them into a block and print the block", self.location(node))
        self.node = node
        self.emit(DPrintOp(parts, values, threads[0] if threads and self.kind == "compute" else None))
        for op in contents:
            self.emit(op)
        return None

    def printed_text(self, args: list[ast.expr], sep: str, scope, where: ast.AST) -> tuple[list[str], list]:
        """The texts and runtime integers that print ``args`` (f-strings included) separated by
        ``sep``: one more text than values, as ``ttkernel.dprint`` and ``ttkernel.assert`` take them.
        Values known when the kernel is built are printed as Python prints them, blocks, buffers and
        tensors as their description."""
        from xdsl.ir import SSAValue

        parts, values = [""], []

        def show(value, spec: str = "") -> None:
            if isinstance(value, NodeExpression):
                value = self.node_expression(value, where)
            if spec and isinstance(value, (Scalar, SSAValue)):
                from tilefold.errors import warn_at

                warn_at(f"the format spec :{spec} of a runtime value is not applied: the device's DPRINT prints it "
                        "as a plain integer", self.location(where))
            if isinstance(value, Scalar):
                values.append(self.scalars.materialize(value))
                parts.append("")
            elif isinstance(value, SSAValue):
                values.append(value)
                parts.append("")
            elif isinstance(value, PYTHON_VALUES):
                parts[-1] += format(value, spec) if spec else str(value)
            else:
                parts[-1] += f"<{self.describe(value)}>"

        for i, arg in enumerate(args):
            if i:
                parts[-1] += sep
            for value, spec in self.text_pieces(arg, scope):
                show(value, spec)
        return parts, values

    def text_pieces(self, arg: ast.expr, scope):
        """``(value, format spec)`` of each piece an argument of ``print`` or an ``assert`` message
        shows: an f-string's texts and formatted values (``!r`` applied to values known when the
        kernel is built), else the argument's value."""
        if not isinstance(arg, ast.JoinedStr):
            yield self.evaluate(arg, scope), ""
            return
        for piece in arg.values:
            if isinstance(piece, ast.Constant):
                yield str(piece.value), ""
                continue
            spec = "".join(str(v.value) for v in piece.format_spec.values
                           if isinstance(v, ast.Constant)) if piece.format_spec is not None else ""
            value = self.evaluate(piece.value, scope)
            if piece.conversion == ord("r") and isinstance(value, PYTHON_VALUES):
                value = repr(value)
            yield value, spec

    def semaphore_call(self, obj, name: str, args, kwargs, node):
        """``sem.wait_eq(n)`` / ``wait_ge(n)`` (``wait_min``) / ``set(n)``, ``remote.inc(n)`` / ``set(n)``,
        ``multicast.set(n)``; ``sem.get_remote(node)`` / ``get_remote_multicast(nodes)`` of nodes known
        when the kernel is built give their handles, as in the operation's body."""
        if isinstance(obj, Semaphore) and name in ("get_remote", "get_remote_multicast"):
            if _holds_runtime(list(args) + list(kwargs.values())):
                raise self.error(f"{name}() in a kernel takes nodes known when the kernel is built, not the node's "
                                 "own coordinates; name each target node with integers", node)
            return getattr(obj, name)(*args, **kwargs)
        actions = {Semaphore: {"wait_eq": "wait_eq", "wait_min": "wait_min", "wait_ge": "wait_min", "set": "set"},
                   RemoteSemaphore: {"inc": "inc_remote", "set": "set_remote"},
                   MulticastSemaphore: {"set": "set_multicast"}}[type(obj)]
        what = {Semaphore: "a semaphore", RemoteSemaphore: "a remote semaphore (get_remote)",
                MulticastSemaphore: "a multicast semaphore (get_remote_multicast)"}[type(obj)]
        if name not in actions:
            raise self.error(f"{what} has {', '.join(f'{a}()' for a in actions)}, not {name}()", node)
        self.require_datamovement(node, f"{name}() of a semaphore")
        values = list(args) + [kwargs.pop("value")] if "value" in kwargs else list(args)
        if kwargs or len(values) > 1 or (not values and name != "inc"):
            raise self.error(f"{name}(value) takes one integer", node)
        value = self.as_int(values[0] if values else 1, node, f"the value of {name}()")
        if isinstance(value, int) and not 0 <= value < 1 << 32:
            raise self.error(f"{name}({value}): a semaphore holds a non-negative integer of 32 bits "
                             "(0..4294967295)", node)
        semaphore = obj if isinstance(obj, Semaphore) else obj.semaphore
        remote = obj.node if isinstance(obj, RemoteSemaphore) else obj.rect_index if isinstance(
            obj, MulticastSemaphore) else None
        self.node = node
        self.emit(ttl.SemaphoreOp(semaphore.index, actions[name], self.scalars.materialize(value), remote))
        return None

    def _call_handlers(self):
        return {
            id(device_calls.copy): self.call_copy,
            id(device_calls.copy_tensor_page): self.call_copy_tensor_page,
            id(device_calls.wait_any): self.call_wait_any,
            id(ttl_node): self.call_node,
            id(grid_size): self.call_grid_size,
            id(device_calls.GroupTransfer): self.call_group_transfer,
            id(device_calls.signpost): self.call_signpost,
            id(extern_calls.call_extern_func): lambda args, kwargs, node: extern_calls.build_call(self, args, kwargs, node),
            id(extern_calls.get_dfb_id): lambda a, k, n: extern_calls.dfb_marker(extern_calls.DFBId)(self, a, k, n),
            id(extern_calls.raw_addr): lambda args, kwargs, node: extern_calls.raw_address(self, args, kwargs, node),
            id(extern_calls.dfb_descriptor): lambda a, k, n: extern_calls.dfb_marker(extern_calls.DFBDescriptor)(self, a, k, n),
            **extern_calls.note_handlers(self),
            id(builtins.min): lambda args, kwargs, node: self.call_min_max(args, node, "min", kwargs),
            id(builtins.max): lambda args, kwargs, node: self.call_min_max(args, node, "max", kwargs),
            id(BODY_BUILTINS["min"]): lambda args, kwargs, node: self.call_min_max(args, node, "min", kwargs),
            id(BODY_BUILTINS["max"]): lambda args, kwargs, node: self.call_min_max(args, node, "max", kwargs),
            id(builtins.abs): self.call_abs,
            id(builtins.int): self.call_int,
            id(builtins.sum): self.call_sum,
            id(builtins.bool): self.call_bool,
            id(builtins.divmod): self.call_divmod,
            id(builtins.range): self.call_range,
            id(device_calls.static_range): self.call_static_range,
            id(builtins.isinstance): self.call_isinstance,
            id(builtins.len): self.call_len,
            **self.boundary_handlers(),
        }

    def call_method(self, bound: BoundMethod, args, kwargs, node, scope):
        obj, name = bound.obj, bound.name
        if isinstance(obj, (Semaphore, RemoteSemaphore, MulticastSemaphore)):
            return self.semaphore_call(obj, name, args, kwargs, node)
        if isinstance(obj, DataflowBuffer):
            if name in ("reserve", "wait"):
                self.no_arguments(args, kwargs, node, f"{obj.name}.{name}()")
                return self.acquire(obj, name, node)
            if name in ("push", "pop"):
                self.release_selector(kwargs, node, f"{obj.name}.{name}()")
                self.no_arguments(args, kwargs, node, f"{obj.name}.{name}()")
                return self.release_oldest(obj, name, node)
            if name == "publish":
                self.no_arguments(args, kwargs, node, f"{obj.name}.publish()")
                return self.publish(obj, node)
        elif isinstance(obj, Block):
            if name in ("push", "pop") and getattr(obj, "parent", None) is not None:
                raise self.error(f"{name}() of a ttl.block.subview: release the block it views, "
                                 f"{obj.parent.name}.{name}()", node)
            if name in ("push", "pop"):
                self.release_selector(kwargs, node, f"{obj.name}.{name}()")
                self.no_arguments(args, kwargs, node, f"{obj.name}.{name}()")
                expected = "push" if obj.acquired == "reserve" else "pop"
                if name != expected:
                    raise self.error(f"{obj.name} was obtained with {obj.acquired}(); release it with "
                                     f"{obj.name}.{expected}()", node)
                self.release(obj, node)
                return None
            if name == "store":
                acc = kwargs.pop("acc", False)
                if len(args) != 1 or kwargs:
                    raise self.error(f"{obj.name}.store(expr) takes one block expression (and acc=True to add it to "
                                     "what the block holds)", node)
                if not isinstance(acc, bool):
                    raise self.error(f"{obj.name}.store(expr, acc=...) takes True or False, not "
                                     f"{self.describe(acc)}", node)
                (self.store_accumulating if acc else self.store)(obj, args[0], node)
                return None
            if name in ("store_rows", "accumulate_rows"):
                if len(args) != 1 or kwargs:
                    raise self.error(f"{obj.name}.{name}(block) takes one block of one 32x32 tile", node)
                self.store_row_prefix(obj, args[0], node, accumulate=name == "accumulate_rows")
                return None
        elif isinstance(obj, Transfer) and name == "wait":
            self.no_arguments(args, kwargs, node, "wait()")
            self.transfer_wait(obj, node, explicit=True)
            return None
        elif isinstance(obj, Transfer) and name == "can_wait":
            self.no_arguments(args, kwargs, node, "can_wait()")
            if obj.kind == "recv":
                raise self.error("can_wait() of a pipe receive is known only at run time, and tilefold does not "
                                 "support it yet; wait for one of several receives with ttl.wait_any", node)
            return True          # a copy, or a pipe send: wait() completes it without waiting on another node
        elif isinstance(obj, ReadyReceive) and name == "index":
            self.no_arguments(args, kwargs, node, "index()")
            return obj.index
        elif isinstance(obj, GroupTransfer):
            if name == "add" and len(args) == 1 and not kwargs:
                self.group_add(obj, args[0], node)
                return None
            if name == "wait_all":
                self.no_arguments(args, kwargs, node, "wait_all()")
                self.group_wait(obj, node)
                return None
        elif isinstance(obj, PipeNet) and name in ("if_src", "if_dst"):
            if len(args) != 1 or kwargs:
                raise self.error(f"net.{name}(body) takes one function", node)
            self.pipe_condition(self.bound_net(obj), name.removeprefix("if_"), args[0], node, scope)
            return None
        elif isinstance(obj, Pipe) and name in ("has_current_core", "has_current_node"):
            self.no_arguments(args, kwargs, node, f"pipe.{name}()")
            return self.pipe_has_node(obj, node)
        elif isinstance(obj, PipeNet) and name in ("is_src", "is_dst", "is_active"):
            self.no_arguments(args, kwargs, node, f"net.{name}()")
            return self.pipe_role(self.bound_net(obj), name.removeprefix("is_"), node)
        elif isinstance(obj, DeviceDomain) and name in ("current_index", "is_current"):
            return self.domain_method(obj, name, args, kwargs, node)
        elif isinstance(obj, PipeNet) and name == "destination_count":
            self.no_arguments(args, kwargs, node, "net.destination_count()")
            return self.pipe_destination_count(self.bound_net(obj), node)
        raise self.error(f"{self.describe(obj)} has no method {name}() usable in a kernel", node)

    def release_selector(self, kwargs: dict, node, what: str) -> None:
        """``blk.push(kernel=...)`` / ``pop(kernel=...)``: the kernel that releases the block, which
        must be this one (its kind, or the ``ttl.Kernel`` this kernel function selects)."""
        from tilefold.frontend.ttl.kernels import Kernel, check_selector

        if "kernel" not in kwargs:
            return
        selector = kwargs.pop("kernel")
        location = self.location(node)
        check_selector(selector, self.kind, what, location)
        own = getattr(self.definition, "selector", None)
        # a kernel the split of a body without kernel functions made runs the statements its blocks
        # go to: a ttl.Kernel of the right kind names it
        implicit = getattr(self.definition, "implicit", False)
        if isinstance(selector, Kernel) and selector is not own and not implicit:
            raise self.error(f"{what}: kernel= names a ttl.Kernel that this kernel function "
                             f"({self.definition.name}) does not select; give the one of its decorator or "
                             "the kernel kind", node)

    def no_arguments(self, args, kwargs, node, what: str) -> None:
        if args or kwargs:
            raise self.error(f"{what} takes no arguments", node)

    def bound_arguments(self, function, args, kwargs, node, what: str) -> dict:
        """The arguments of a kernel's call of the API function ``function`` by parameter name
        (defaults filled in); arguments its signature cannot take are one error at the line."""
        import inspect

        signature = inspect.signature(function)
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            from tilefold.caller import argument_mismatch

            raise self.error(argument_mismatch(what, signature, kwargs, exc), node) from None
        bound.apply_defaults()
        return bound.arguments

    def call_node(self, args, kwargs, node):
        dims = self.bound_arguments(ttl_node, args, kwargs, node, "ttl.node")["dims"]
        x, y = self.node_values(node)
        arithmetic = {"+": self.scalars.add, "*": self.scalars.mul, "//": self.scalars.floordiv,
                      "%": self.scalars.mod}
        return node_coordinates(self.operation.grid_dims, dims, x, y, lambda op, a, b: arithmetic[op](a, b),
                                self.location(node))

    def call_signpost(self, args, kwargs, node):
        """``ttl.signpost(name)``: a profiling marker, named by a string known when the kernel is built."""
        name = self.bound_arguments(device_calls.signpost, args, kwargs, node, "ttl.signpost")["name"]
        if not isinstance(name, str):
            raise self.error(f"ttl.signpost(name) takes the region's name as a string, not {self.describe(name)}",
                             node)
        return device_calls.SIGNPOST

    def call_grid_size(self, args, kwargs, node):
        dims = self.bound_arguments(grid_size, args, kwargs, node, "ttl.grid_size")["dims"]
        return grid_shape(self.operation.grid_dims, dims, self.location(node))

    def call_min_max(self, args, node, which: str, kwargs=None):
        if kwargs:
            raise self.error(f"{which}() in a kernel takes values only, not {', '.join(f'{k}=' for k in kwargs)}",
                             node)
        values = list(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else list(args)
        if any(isinstance(v, (Block, BlockExpression)) for v in values):
            raise self.error(f"{which}() of blocks: use ttl.math.{which}(a, b)", node)
        if not values:
            raise self.error(f"{which}() needs at least one value", node)
        result = self.as_int(values[0], node, f"an argument of {which}()") if isinstance(
            values[0], (Scalar, NodeExpression)) else values[0]
        for v in values[1:]:
            if isinstance(result, Scalar) or isinstance(v, (Scalar, NodeExpression)):
                a = self.as_int(result, node, f"an argument of {which}()")
                b = self.as_int(v, node, f"an argument of {which}()")
                result = (self.scalars.minimum if which == "min" else self.scalars.maximum)(a, b)
            else:
                result = (builtins.min if which == "min" else builtins.max)(result, v)
        return result

    def call_abs(self, args, kwargs, node):
        if len(args) != 1 or kwargs:
            raise self.error("abs() takes one argument", node)
        if isinstance(args[0], (Block, BlockExpression)):
            return self.block_unary("abs", args[0], node)
        value = self.flag_integer(self.known_node(args[0], node))
        if isinstance(value, Scalar):             # the device's integers are signed for this: -x where x < 0
            return self.select(self.scalars.compare("slt", value, 0), self.scalars.sub(0, value), value, node)
        return builtins.abs(value)

    def call_sum(self, args, kwargs, node):
        """``sum(items, start=0)`` of a tuple or list holding runtime integers: their ``+``."""
        items = args[0] if args else kwargs.get("iterable")
        start = args[1] if len(args) > 1 else kwargs.get("start", 0)
        if not isinstance(items, (tuple, list)):
            try:
                return builtins.sum(*args, **kwargs)
            except TypeError as exc:
                raise self.error(f"sum(): {exc}", node) from None
        total = start
        for item in items:
            total = self.binary(ast.Add, total, item, node)
        return total

    def call_int(self, args, kwargs, node):
        """``int(x)``: a runtime integer as it is, a runtime truth value as 0 / 1, else Python's."""
        if len(args) == 1 and not kwargs:
            value = self.known_node(args[0], node)
            if isinstance(value, Scalar) or self.is_flag(value):
                return self.flag_integer(value)
        try:
            return builtins.int(*args, **kwargs)
        except (TypeError, ValueError) as exc:
            raise self.error(f"int(): {exc}", node) from None

    def call_bool(self, args, kwargs, node):
        """``bool(x)``: a runtime value's truth (an ``i1``), else Python's."""
        if len(args) == 1 and not kwargs:
            value = self.known_node(args[0], node)
            if isinstance(value, Scalar) or self.is_flag(value):
                return self.condition(value, node)
        return builtins.bool(*args, **kwargs)

    def call_divmod(self, args, kwargs, node):
        """``divmod(a, b)`` of integers, runtime ones too: ``(a // b, a % b)``."""
        if len(args) != 2 or kwargs:
            raise self.error("divmod() takes two arguments", node)
        return self.binary(ast.FloorDiv, args[0], args[1], node), self.binary(ast.Mod, args[0], args[1], node)

    def call_isinstance(self, args, kwargs, node):
        """``isinstance(value, types)`` answered when the kernel is built: a runtime integer is an
        ``int``; blocks, transfers and other kernel objects are none of Python's types."""
        if len(args) != 2 or kwargs:
            raise self.error("isinstance() takes two arguments", node)
        value, types = args
        if isinstance(value, (Scalar, NodeExpression)):
            value = 0
        try:
            return builtins.isinstance(value, types)
        except TypeError as exc:
            raise self.error(f"isinstance(): {exc}", node) from None

    def transfer_completed(self, transfer: Transfer, node) -> bool:
        """``handle.is_completed``: whether ``wait()`` was called on the handle here, as TT-Lang's
        handles answer it (known when the kernel is built, unless only some paths waited)."""
        if transfer.done_slot is not None:
            raise self.error(f"{self.describe(transfer)} is waited for on some paths through an if only, so whether "
                             "it is completed is known only at run time; wait() on it on every path first", node)
        return bool(transfer.waited)

    def call_len(self, args, kwargs, node):
        """``len()`` of a tuple or list, which may hold runtime values (``len(ttl.node(dims=2))``), or
        of a block or a block expression: its number of tiles, as TT-Lang's blocks answer it."""
        if len(args) != 1 or kwargs:
            raise self.error("len() takes one argument", node)
        if isinstance(args[0], (tuple, list, dict, str)):
            return builtins.len(args[0])
        if isinstance(args[0], (Block, BlockExpression)):
            return math.prod(args[0].shape)
        raise self.error(f"len() of {self.describe(args[0])} is not known when the kernel is built", node)

    def call_range(self, args, kwargs, node):
        raise self.error("range() can only be used as the iterable of a for loop in a kernel", node)

    def call_static_range(self, args, kwargs, node):
        """``ttl.static_range(...)``: the loop's values as a list, so the ``for`` unrolls."""
        if kwargs:
            raise self.error("ttl.static_range() takes positional integers only", node)
        return list(range(*device_calls.static_range_bounds(args, lambda m: self.error(m, node))))

    def call_group_transfer(self, args, kwargs, node):
        if args or kwargs:
            raise self.error("ttl.GroupTransfer() takes no arguments", node)
        if self.kind != "datamovement":
            raise self.error("ttl.GroupTransfer is for data movement kernels", node)
        return GroupTransfer(self.location(node))

    def compile_time_call(self, callee, args, kwargs, node):
        runtime_kinds = (Scalar, Block, BlockExpression, Transfer, TensorSlice, NodeExpression)
        # a function given a buffer, pipe or semaphore, which only kernel code acquires from, copies
        # through or signals (a helper posting receives, say), is inlined too
        kernel_kinds = (DataflowBuffer, Pipe, PipeNet, PipeIdentity, GroupTransfer, ReadyReceive, Semaphore,
                        RemoteSemaphore, MulticastSemaphore)

        def values_of(value, kinds):
            """``value`` if it is one of ``kinds``, or those a tuple / list / dict holds."""
            if isinstance(value, kinds):
                return [value]
            if isinstance(value, (tuple, list)):
                return [r for v in value for r in values_of(v, kinds)]
            if isinstance(value, dict):
                return [r for v in value.values() for r in values_of(v, kinds)]
            return []

        runtime = [r for v in (*args, *kwargs.values()) for r in values_of(v, runtime_kinds)]
        name = getattr(callee, "__name__", type(callee).__name__)
        if inspect.getattr_static(callee, "is_ttl_operation", False) is True:
            raise self.error(f"{name}() is an operation: call it from an operation body without kernel functions "
                             "(where it is inlined), not from a kernel function", node)
        host_module = getattr(callee, "__module__", None) or ""
        if not isinstance(callee, type) and (host_module.split(".")[0] == "torch"
                                             or host_module.startswith("tilefold.ttnn")):
            library = "torch" if host_module.startswith("torch") else "ttnn"
            raise self.error(f"{library}.{name}() runs on the host, on whole tensors between operations; inside a "
                             f"kernel compute on blocks with {_block_function_for(name)}", node)
        kernel_objects = inspect.isfunction(callee) and any(values_of(v, kernel_kinds)
                                                            for v in (*args, *kwargs.values()))
        if (runtime or kernel_objects) and inspect.isfunction(callee):
            return self.inline_call(callee, args, kwargs, node)
        if runtime and name in _CONTAINER_METHODS.get(type(getattr(callee, "__self__", None)), ()):
            return callee(*args, **kwargs)        # a Python list or dict holding runtime values
        if runtime:
            if callee in (str, repr, format):
                raise self.error(f"{name}() of {self.describe(runtime[0])} is not known when the kernel is built; to "
                                 "print it, give it to print() as an argument of its own (print('row', r)) or in an "
                                 "f-string", node)
            if host_module == "math" and any(isinstance(v, (Block, BlockExpression)) for v in runtime):
                raise self.error(f"math.{name}() computes on Python numbers; on blocks use "
                                 f"{_block_function_for(name)}", node)
            raise self.error(f"{name}() is called with {self.describe(runtime[0])}; in a kernel only ttl "
                             "functions, min, max, abs and divmod take runtime values — compute it with + - * // % "
                             "& | ^ << >>", node)
        if not callable(callee):
            if isinstance(callee, KernelDefinition):
                raise self.error(f"{self.describe(callee)} is called from a kernel; kernel functions run side by "
                                 "side on their own threads and never call each other — move the shared code into "
                                 "a plain helper function (without a ttl decorator) and call that", node)
            raise self.error(f"{self.describe(callee)} is not callable", node)
        self.check_build_time_call(callee, name, node)
        try:
            return callee(*args, **kwargs)
        except Exception as exc:   # noqa: BLE001 - a user's helper failing at compile time
            from tilefold.errors import TilefoldError

            if isinstance(exc, TilefoldError):
                raise
            raise self.error(f"{name}() failed while compiling the kernel: {type(exc).__name__}: {exc}", node) \
                from None

    def check_build_time_call(self, callee, name: str, node: ast.Call) -> None:
        """A call in a kernel without runtime values runs once, while the kernel is built: an error for
        what belongs to the operation body (dataflow buffers) and for calls whose result or effect
        cannot be built into a kernel (random numbers, clocks, files, other processes)."""
        if callee in (make_dfb, make_dataflow_buffer_like, make_tensor_backed_dfb):
            raise self.error(f"ttl.{name}() in a kernel function: make dataflow buffers in the operation body, "
                             "before the kernel functions, and use them from the kernels", node)
        module = (getattr(callee, "__module__", None) or "").split(".")[0]
        if callee in (open, input) or module in _HOST_ONLY_MODULES:
            raise self.error(f"{'' if callee in (open, input) else module + '.'}{name}() in a kernel would run "
                             "once, while the kernel is built, not on the device; compute such values on the host "
                             "and pass them to the operation (or print with print())", node)


# modules whose functions give a different answer or effect on every call: never folded into a kernel
_HOST_ONLY_MODULES = {"random", "time", "io", "subprocess", "socket", "shutil", "datetime"}


__all__ = ["ExpressionBuilder", "BoundMethod", "MISSING", "PYTHON_VALUES"]


def _public_ttl_name(value) -> str | None:
    """``ttl.NAME`` when ``value`` is a class of tilefold's TT-Lang names (``ttl.DFBAccess``), else None."""
    if not isinstance(value, type) or not value.__module__.startswith("tilefold."):
        return None
    public = sys.modules.get("tilefold.frontend.ttl.api")      # the names ``tilefold.ttl`` exports (loaded with it)
    return f"ttl.{value.__name__}" if getattr(public, value.__name__, None) is value else None
