"""Python AST of a kernel -> a ``func.func`` of ``ttkernel``, ``scf``, ``arith`` and ``memref`` ops.

Reads: the :class:`FunctionSource` of a kernel function (and of the ``@inline`` helpers it
calls) and the :class:`VariablePlan` of each body. Writes: a ``builtin.module`` holding
``func.func @<name>() attributes {ttkernel.thread = "noc" | "compute"}``, verified with
:func:`tilefold.ir.verify.verify_kernel_module`.

The IR it produces:

* every op carries the ``FileLineColLoc`` of the Python expression or statement that
  produced it (a helper's ops carry the helper's lines);
* API calls become ``ttkernel.<name>`` ops with every parameter of the table as an operand
  (defaults filled in) and template parameters as properties;
* integer values are ``i32`` (``uint32_t``) or ``i64`` (``uint64_t``, NOC addresses); an
  ``i32`` meeting an ``i64`` is widened with ``arith.extui``; unsigned arithmetic and
  comparisons (``divui``, ``remui``, ``shrui``, ``cmpi ult`` ...);
* a name assigned once is an SSA value named after it; a mutable name is a rank-0
  ``memref.alloca`` named after it, with ``memref.store`` / ``memref.load``;
  ``array(uint64, n)`` is a ``memref.alloca`` of ``memref<n x i64>``;
* ``for i in range(a, b, s)`` is ``scf.for`` with ``i32`` bounds and the block argument
  named ``i``; ``while`` is ``scf.while``; ``if`` is ``scf.if`` (a constant condition keeps
  only the branch taken); ``and`` / ``or`` short-circuit with ``scf.if`` when the right side
  calls a function.

Errors: every unsupported construct or misuse raises one :class:`KernelError` at the
user's line, saying what to write instead.
"""

from __future__ import annotations

import ast
import builtins

from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Region, SSAValue

from tilefold.frontend.pykernel.api import InlineFunction
from tilefold.frontend.pykernel.calls import CallLowering
from tilefold.frontend.pykernel.expressions import NAME_HINT, Frame, Local, Mutable
from tilefold.frontend.source import FunctionSource
from tilefold.frontend.pykernel.unsupported import unsupported
from tilefold.frontend.pykernel.values import U32, U64, Static, describe, int_width, is_int_value
from tilefold.frontend.pykernel.variables import analyse
from tilefold.ir.ttkernel import THREAD_ATTR
from tilefold.ir.verify import verify_kernel_module


class KernelBuilder(CallLowering):
    """Builds one kernel function; use :func:`build_kernel`."""

    def __init__(self, source: FunctionSource):
        self.block: Block | None = None
        self.frames: list[Frame] = []
        self.inlining: list[InlineFunction] = []
        self.root = source

    # -- kernels -----------------------------------------------------------------------------------

    def build(self, name: str, thread: str, attributes: dict[str, Attribute]) -> ModuleOp:
        source = self.root
        tree = source.tree
        params = tree.args
        if params.args or params.posonlyargs or params.kwonlyargs or params.vararg or params.kwarg:
            raise source.error(tree, f"kernel {name!r} takes parameters ({ast.unparse(params)}); kernels take none: "
                                     f"read runtime args with get_arg_val(i) and compile-time args with "
                                     f"get_compile_time_arg_val(i)")
        self.frames.append(Frame(source, analyse(source), is_helper=False))
        body = Block()
        kernel = func.FuncOp(name, FunctionType.from_lists([], []), Region(body))
        kernel.location = source.loc(tree)
        kernel.attributes[THREAD_ATTR] = StringAttr(thread)
        kernel.attributes.update(attributes)
        self.block = body
        self.body(tree.body, ())
        last = tree.body[-1]
        self.emit(func.ReturnOp(), last if isinstance(last, ast.Return) else tree)
        self.frames.pop()
        module = ModuleOp([kernel])
        verify_kernel_module(module)
        return module

    def body(self, stmts: list[ast.stmt], path: tuple) -> None:
        frame = self.frame
        for index, stmt in enumerate(stmts):
            for name in frame.plan.allocas.get((path, index), ()):
                self.declare(name, stmt)
            handler = getattr(self, f"stmt_{type(stmt).__name__}", None)
            if handler is None:
                raise self.error(stmt, unsupported(stmt))
            handler(stmt, path, index, index == len(stmts) - 1)

    def declare(self, name: str, node: ast.AST) -> Mutable:
        t = U64 if self.frame.plan.widths.get(name) == 64 else U32
        op = self.emit(memref.AllocaOp.get(t, shape=[]), node)
        self.name(op.memref, name)
        binding = self.frame.env[name] = Mutable(op.memref, t)
        return binding

    # -- statements --------------------------------------------------------------------------------

    def stmt_Pass(self, stmt, path, index, last) -> None:
        pass

    def stmt_Expr(self, stmt: ast.Expr, path, index, last) -> None:
        value = stmt.value
        if isinstance(value, ast.Constant) and (isinstance(value.value, str) or value.value is Ellipsis):
            return     # a docstring, a string used as a comment, or ``...``
        if isinstance(value, ast.Call):
            self.call(value, want_value=False)
            return
        self.expr(value)
        raise self.error(stmt, f"this expression ({ast.unparse(value)[:40]}) has no effect; assign its value to a "
                               f"variable or remove it")

    def stmt_Return(self, stmt: ast.Return, path, index, last) -> None:
        frame = self.frame
        if stmt.value is not None and not frame.is_helper:
            raise self.error(stmt, "a kernel returns nothing (void kernel_main()); remove the value and write results "
                                   "to a circular buffer or to memory instead")
        if path or not last:
            raise self.error(stmt, "return is only allowed as the last statement of a kernel or @inline helper; "
                                   "restructure the code with if / else (or a while condition)")
        if stmt.value is not None:
            frame.return_value = self.expr(stmt.value)

    def stmt_Assign(self, stmt: ast.Assign, path, index, last) -> None:
        for target in stmt.targets:
            if isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
                raise self.error(target, "unpacking assignments (a, b = ...) are not supported in a kernel; assign "
                                         "one name per statement")
        value = self.expr(stmt.value)
        for target in stmt.targets:
            self.assign(target, value, stmt)

    def stmt_AnnAssign(self, stmt: ast.AnnAssign, path, index, last) -> None:
        if stmt.value is None:
            raise self.error(stmt, "a declaration without a value does nothing in a kernel; assign a value "
                                   "(for example x = 0)")
        self.assign(stmt.target, self.expr(stmt.value), stmt)

    def stmt_AugAssign(self, stmt: ast.AugAssign, path, index, last) -> None:
        target = stmt.target
        if isinstance(target, ast.Name):
            current = self.load_name(target.id, target)
            self.assign(target, self.binop(stmt.op, current, self.expr(stmt.value), stmt), stmt)
        elif isinstance(target, ast.Subscript):
            base, index_value = self.subscript_parts(target)
            current = self.load_element(base, index_value, target)
            self.store_element(base, index_value, self.binop(stmt.op, current, self.expr(stmt.value), stmt), target)
        else:
            raise self.error(target, f"cannot assign to {ast.unparse(target)} in a kernel; assign to a name or an "
                                     f"element (a[i])")

    def assign(self, target: ast.AST, value, stmt: ast.AST) -> None:
        if isinstance(target, ast.Subscript):
            base, index_value = self.subscript_parts(target)
            self.store_element(base, index_value, value, target)
            return
        if isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
            raise self.error(target, "unpacking assignments (a, b = ...) are not supported in a kernel; assign one "
                                     "name per statement")
        if not isinstance(target, ast.Name):
            raise self.error(target, f"cannot assign to {ast.unparse(target)} in a kernel; assign to a name or an "
                                     f"element (a[i])")
        name = target.id
        frame = self.frame
        if value is None:
            raise self.error(stmt, "the right-hand side has no value")
        if isinstance(value, Static):
            raise self.error(target, f"{name} = {value.name}: a kernel variable cannot hold {describe(value)}; "
                                     f"kernel values are integers (module-level int, bool and float constants "
                                     f"are folded in), and functions are called directly")
        if name in frame.plan.mutable:
            binding = frame.env.get(name)
            if not isinstance(binding, Mutable):
                binding = self.declare(name, stmt)
            if not (isinstance(value, int) or is_int_value(value)):
                raise self.error(target, f"{name!r} is assigned more than once (or inside a loop or branch and used "
                                         f"after it), so it is an integer variable; it cannot hold "
                                         f"{describe(value)}. Assign such values to a name exactly once")
            if is_int_value(value) and int_width(value.type) > int_width(binding.type):
                raise self.error(target, f"{name!r} holds 32-bit values but is assigned {describe(value)} here; "
                                         f"start it with a 64-bit value (e.g. {name} = uint64(0)) or convert "
                                         f"this one with uint32(...)")
            stored = self.coerce_int(value, binding.type, stmt, f"variable {name!r}")
            self.emit(memref.StoreOp.get(stored, binding.ref, []), target)
            return
        if isinstance(value, SSAValue):
            self.name(value, name)
        frame.env[name] = Local(value)

    def stmt_For(self, stmt: ast.For, path, index, last) -> None:
        if stmt.orelse:
            raise self.error(stmt.orelse[0], "for ... else is not supported in a kernel; put the code after the loop")
        if not isinstance(stmt.target, ast.Name):
            raise self.error(stmt.target, "the loop variable of a kernel for loop must be one name "
                                          "(for i in range(...))")
        it = stmt.iter
        if not (isinstance(it, ast.Call) and self.static_callee(it.func) is builtins.range):
            raise self.error(it, f"kernel for loops iterate over range(...), not {ast.unparse(it)[:40]}; "
                                 f"for example: for i in range(0, n, step)")
        if it.keywords or any(isinstance(a, ast.Starred) for a in it.args) or not 1 <= len(it.args) <= 3:
            raise self.error(it, "range() takes 1 to 3 positional arguments: range(stop), range(start, stop) or "
                                 "range(start, stop, step)")
        values = [self.expr(a) for a in it.args]
        nodes = list(it.args)
        if len(values) == 1:
            values, nodes = [0, values[0], 1], [it, nodes[0], it]
        elif len(values) == 2:
            values, nodes = [*values, 1], [*nodes, it]
        step = values[2]
        if isinstance(step, int) and step <= 0:
            raise self.error(nodes[2], "range() with a zero or negative step is not supported in a kernel; loop "
                                       "upward and compute the index (for k in range(n): i = n - 1 - k)")
        lb, ub, st = (self.coerce_int(v, U32, n, "a range() bound") for v, n in zip(values, nodes))
        loop_body = Block(arg_types=[U32])
        loop_body.args[0].name_hint = stmt.target.id if NAME_HINT.fullmatch(stmt.target.id) else None
        self.emit(scf.ForOp(lb, ub, st, [], loop_body), stmt)
        with self.inside(loop_body):
            self.frame.env[stmt.target.id] = Local(loop_body.args[0])
            self.body(stmt.body, path + ((index, "body"),))
            self.emit(scf.YieldOp(), stmt)

    def stmt_While(self, stmt: ast.While, path, index, last) -> None:
        if stmt.orelse:
            raise self.error(stmt.orelse[0], "while ... else is not supported in a kernel; put the code after the "
                                             "loop")
        before, after = Block(), Block()
        with self.inside(before):
            cond = self.condition(self.expr(stmt.test), stmt.test)
            if isinstance(cond, bool):
                if cond:
                    raise self.error(stmt.test, "this while loop never ends: kernels have no break, so put the exit "
                                                "test in the while condition")
                return
            self.emit(scf.ConditionOp(cond), stmt.test)
        with self.inside(after):
            self.body(stmt.body, path + ((index, "body"),))
            self.emit(scf.YieldOp(), stmt)
        self.emit(scf.WhileOp([], [], [before], [after]), stmt)

    def stmt_If(self, stmt: ast.If, path, index, last) -> None:
        cond = self.condition(self.expr(stmt.test), stmt.test)
        if isinstance(cond, bool):      # a constant condition keeps only the branch taken
            with self.inside(self.block):
                if cond:
                    self.body(stmt.body, path + ((index, "then"),))
                else:
                    self.body(stmt.orelse, path + ((index, "else"),))
            return
        then_block = Block()
        with self.inside(then_block):
            self.body(stmt.body, path + ((index, "then"),))
            self.emit(scf.YieldOp(), stmt)
        else_blocks = None
        if not all(isinstance(s, ast.Pass) for s in stmt.orelse):
            else_block = Block()
            with self.inside(else_block):
                self.body(stmt.orelse, path + ((index, "else"),))
                self.emit(scf.YieldOp(), stmt.orelse[0])
            else_blocks = [else_block]
        self.emit(scf.IfOp(cond, [], [then_block], else_blocks), stmt)


def build_kernel(function, name: str, thread: str, attributes: dict[str, Attribute] | None = None) -> ModuleOp:
    """Parse ``function`` and build, verify and return ``module { func.func @name ... }``."""
    return KernelBuilder(FunctionSource.of(function)).build(name, thread, attributes or {})
