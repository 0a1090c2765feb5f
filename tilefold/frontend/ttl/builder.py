"""A TT-Lang kernel function → a ``func.func`` of ``ttl`` ops (the input of the TT-Lang pipeline).

Reads: a :class:`~tilefold.frontend.ttl.kernels.KernelDefinition`, the source of its function, and
the :class:`~tilefold.frontend.ttl.capture.OperationCapture` it belongs to (tensors, dataflow
buffers, pipe nets, grid). Writes: ``func.func @<name>() attributes {ttkernel.thread = "compute" |
"noc", ttl.kernel_role = "compute" | "datamovement"}`` whose ops carry the user's file:line.

The function body is not run; it is walked statement by statement:

* ``for ... in range(...)`` → ``scf.for`` over ``index`` (iterating a Python list or tuple unrolls);
* ``if`` on a compile-time value keeps the branch taken, on a runtime value → ``scf.if``;
* ``with dfb.reserve() as blk`` / ``with dfb.wait() as blk`` → ``ttl.cb_reserve`` / ``ttl.cb_wait``
  and, at the end of the block, ``ttl.cb_push`` / ``ttl.cb_pop`` (``with ttl.signpost(...)`` is a
  plain block);
* names assigned in a loop or branch and needed after it (:mod:`.variables`) are kept in storage:
  runtime integers in a ``memref.alloca``, block expressions in an accumulator buffer;
* a ``def`` inside the kernel is built where it is called: by ``net.if_src`` / ``net.if_dst`` (a
  pipe condition body) or by the kernel itself; a Python helper function called with runtime values
  is built inline too (:mod:`.helpers`).

Expressions are built by the mixins :class:`~.expressions.ExpressionBuilder` (Python values and
runtime integers), :class:`~.block_expressions.BlockExpressionBuilder` (block math, ``store``,
accumulators) and :class:`~.data_movement.DataMovementBuilder` (tensor slices, ``ttl.copy``,
transfers, pipes).

Errors: one :class:`KernelError` at the user's line for anything a TT-Lang kernel cannot do:
unsupported statements, blocks used against their life cycle (:mod:`.block_states`), a
transfer never waited, a block never released, blocks held across loop iterations, ...
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import inspect
import itertools
from collections.abc import Iterator

from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import FunctionType, IndexType, StringAttr
from xdsl.ir import Block as IRBlock
from xdsl.ir import Operation, Region as IRRegion, SSAValue

from tilefold.errors import KernelError, SourceLocation
from tilefold.frontend.source import MISSING, FunctionSource
from tilefold.frontend.ttl.branch_conditions import exclusive, exhaustive
from tilefold.frontend.ttl.block_expressions import BlockExpressionBuilder
from tilefold.frontend.ttl.data_movement import DataMovementBuilder
from tilefold.frontend.ttl.expressions import PYTHON_VALUES, ExpressionBuilder
from tilefold.frontend.ttl.helpers import HelperInliner
from tilefold.frontend.ttl.raw_elements import RawElementBuilder
from tilefold.frontend.ttl.device_calls import SIGNPOST
from tilefold.frontend.ttl.scalars import AffineForm, Scalar, ScalarBuilder, form_of
from tilefold.frontend.ttl.shard_stores import ShardStoreBuilder
from tilefold.frontend.ttl.scopes import MAX_UNROLLED_ITEMS, Region, Scope
from tilefold.frontend.ttl.values import (
    Accumulator,
    Block,
    BlockExpression,
    BlockView,
    ElementValue,
    LocalFunction,
    MutableElement,
    MutableScalar,
    Transfer,
)
from tilefold.frontend.ttl.dfb_boundaries import BoundaryBuilder
from tilefold.frontend.ttl.implicit_kernels import hold_inline_blocks
from tilefold.frontend.ttl.loop_exits import without_loop_exits
from tilefold.frontend.ttl.block_states import joined_state
from tilefold.frontend.ttl.variables import carried_names, live_after, writes
from tilefold.ir import ttl
from tilefold.ir.locations import file_line_loc
from tilefold.ir.ttkernel import THREAD_ATTR


THREADS = {"compute": "compute", "datamovement": "noc"}


# methods by which a kernel's loop puts values into a Python list or dict
_FILLING = {list: ("append", "extend", "insert", "__setitem__"), dict: ("update", "setdefault", "__setitem__")}


def _straight_body(stmt: ast.For) -> list[ast.AST] | None:
    """Every node of a loop's body, or None when it has a ``break`` / ``continue`` (such a loop is
    not unrolled for the values it reads or fills)."""
    body = [n for s in stmt.body for n in ast.walk(s)]
    return None if any(isinstance(n, (ast.Break, ast.Continue)) for n in body) else body


class KernelBuilder(HelperInliner, DataMovementBuilder, RawElementBuilder, BlockExpressionBuilder, ShardStoreBuilder,
                    BoundaryBuilder, ExpressionBuilder):
    """Builds one kernel function; use :func:`build_kernel`."""

    def __init__(self, definition, operation, options: dict):
        self.definition = definition
        self.operation = operation
        self.options = options
        self.kind = definition.kind
        self.source = FunctionSource.of(definition.function, "kernel function")
        self.scalars = ScalarBuilder(self.emit)
        self.node: ast.AST = self.source.tree
        self.block: IRBlock | None = None
        self.prologue: list[Operation] = []
        self.regions: list[Region] = []
        self.cbs: dict[int, SSAValue] = {}            # dataflow buffer index -> ttl.bind_cb result
        self.tensors: dict[int, SSAValue] = {}        # operation tensor index -> ttl.tensor result
        self.node_coords: tuple[Scalar, Scalar] | None = None
        self.node_forms: dict = {}                     # a node expression's key -> its one affine symbol
        # a mutable integer's slot -> the first of its loads since its last store or loop boundary:
        # loads between them read the same value, so they share one affine symbol (a[i:i + 1])
        self.load_symbols: dict[int, SSAValue] = {}
        self.implicit_release = False                  # set by build(): the kernel releases its blocks itself
        # set by build(): of a kernel pushing / popping some named blocks itself, whether each
        # ``name = dfb.reserve() / wait()`` statement's block is one of those (by id of the statement)
        self.explicit_acquisitions: dict[int, bool] | None = None
        self.held: dict[int, dict[str, list[Block]]] = {}
        self.pipe_uses: list = []     # (net, kind, dfb, location, byte_count) for cross-kernel checks
        self.staging: dict = {}                       # (copy site, buffer, format) -> its staging buffer
        self.sending_nets: list[int] = []             # the nets whose net.if_src body is being built
        self.extern_effects: set[int] = set()        # buffers whose blocks a called C++ function moves itself
        self.unread_pushes: list = []     # (dfb, block name, line written, by compute) of blocks pushed unread
        self.releases: list = []          # acquisition.Release of each block leaving its FIFO, in its order
        self.ready_requests: dict = {}                # ttl.wait_any result -> its requests
        self.partly_released: dict = {}               # (buffer, end) -> (block, the if) released on some paths
        self.function_stack: list[ast.FunctionDef] = [self.source.tree]
        self.read_tensors: set[int] = set()
        self.written_tensors: set[int] = set()
        self.stored_shards: dict = {}     # tensor-backed buffer index -> (buffer, twin, first store's line)

    # -- building ---------------------------------------------------------------------------

    def build(self) -> func.FuncOp:
        tree = without_loop_exits(self.source.tree)
        if tree is not self.source.tree:           # break / continue became flags (see loop_exits)
            self.source = dataclasses.replace(self.source, tree=tree)
            self.function_stack = [tree]
        placed = getattr(self.operation, "placements", None)
        if placed is not None and tree.body:       # mesh_program_placements: the other devices run nothing
            tree = _placed_only(tree, placed, self.operation.device_domain)
            self.function_stack = [tree]
        body = IRBlock()
        kernel = func.FuncOp(self.definition.name, FunctionType.from_lists([], []), IRRegion(body))
        kernel.location = self.source.loc(tree)
        kernel.attributes[THREAD_ATTR] = StringAttr(THREADS[self.kind])
        kernel.attributes[ttl.KERNEL_ROLE_ATTR] = StringAttr(self.kind)
        self.block = body
        self.kernel_tree = tree
        self.implicit_release = _releases_implicitly(tree)
        # a kernel that pushes or pops some named blocks itself releases its other named blocks as
        # an implicit kernel does (not when it releases at a buffer: dfb.push())
        self.explicit_acquisitions = _explicit_acquisitions(tree)
        self.inline_blocks = [0]
        scope = Scope(carried=carried_names(tree))
        if placed is not None:
            scope.names[_PLACED_DOMAIN] = self.operation.device_domain
        # parameters with defaults (``def reader(step=2)``): compile-time values, as the call with no arguments binds them
        for name, param in inspect.signature(self.definition.function).parameters.items():
            scope.names[name] = param.default
        self.statements(tree.body, scope, Region("function", tree))
        self.check_all_released(tree.body[-1] if tree.body else tree)
        self.step_twins_with_pops(kernel)
        self.node = tree.body[-1] if tree.body else tree
        self.emit(func.ReturnOp())
        first = body.first_op
        for op in self.prologue:
            body.insert_op_before(op, first)
        return kernel

    # -- emitting -----------------------------------------------------------------------------

    def location(self, node: ast.AST | None = None) -> SourceLocation:
        return self.source.location(node if node is not None else self.node)

    def error(self, message: str, node: ast.AST | None = None) -> KernelError:
        return KernelError(message, self.location(node))

    def emit(self, op: Operation) -> Operation:
        """Append ``op`` at the insertion point, stamped with the current statement's line."""
        where = self.location()
        op.location = file_line_loc(where.file, where.line, where.column)
        self.block.add_op(op)
        return op

    def emit_prologue(self, op: Operation, node: ast.AST | None = None) -> Operation:
        """An op placed at the start of the kernel (it must dominate every use)."""
        where = self.location(node)
        op.location = file_line_loc(where.file, where.line, where.column)
        self.prologue.append(op)
        return op

    def cb_value(self, dfb) -> SSAValue:
        """The ``ttl.bind_cb`` of a dataflow buffer in this kernel."""
        if dfb.index is None:
            raise self.error(f"{dfb.name} was made outside this operation (at {dfb.location}); an operation uses the "
                             "dataflow buffers made in its body: make it there")
        if dfb.index not in self.cbs:
            if dfb.is_tiled or self.kind == "compute":      # a compute kernel sees tiles (row-major: its pages)
                cb_type = ttl.CircularBufferType(dfb.compute_shape, ttl.tile_type(dfb.data_format, *dfb.tile),
                                                 dfb.block_count)
            else:
                cb_type = ttl.CircularBufferType(dfb.ir_shape, ttl.scalar_type(dfb.data_format), dfb.block_count)
            op = self.emit_prologue(ttl.BindCBOp(dfb.index, cb_type, dfb.name), None)
            op.result.name_hint = dfb.ir_name
            self.cbs[dfb.index] = op.result
        return self.cbs[dfb.index]

    # -- statements ---------------------------------------------------------------------------

    def statements(self, stmts: list[ast.stmt], scope: Scope, region: Region) -> None:
        self.regions.append(region)
        outer_scope, self._scope = getattr(self, "_scope", None), scope
        try:
            self._statements(stmts, scope, region)
        finally:
            self._scope = outer_scope

    def _statements(self, stmts: list[ast.stmt], scope: Scope, region: Region) -> None:
        implicit = self.implicit_release
        stmts = _fold_early_returns(stmts)
        for i, written in enumerate(stmts):
            stmt = joined = self.branches_defining(written, stmts[i + 1:], scope)
            if joined is not None:
                written = stmts[-1]         # the rest is built inside both branches; liveness after it
            else:
                stmt = written
            if implicit:            # ttl.copy(dfb.wait(), ...): the block is released after the statement
                stmt = hold_inline_blocks(stmt, self.inline_blocks)
            self.node = stmt
            self._statement = stmt
            handler = getattr(self, f"stmt_{type(stmt).__name__}", None)
            if handler is None:
                raise self.error(_unsupported_statement(stmt), stmt)
            handler(stmt, scope)
            if (implicit or self.explicit_acquisitions is not None) and self.source.tree is self.kernel_tree:
                self.release_dead_blocks(written, scope)        # liveness is of the statement as written
            if joined is not None:
                break
        self.end_region(region, stmts[-1] if stmts else region.node)
        self.regions.pop()

    def end_region(self, region: Region, last: ast.AST) -> None:
        """Checks and releases at the end of a statement list."""
        self.node = last
        if region.kind in ("loop", "branch") and self.implicit_release:
            # a kernel that releases its blocks itself waits for the copies a loop iteration or a
            # branch started into or out of a block that outlives it (a receive into a block
            # reserved before ``net.if_dst``) where they end, before the block's release
            for t in region.transfers:
                if not t.waited and t.group is None and not t.selections and self._dominates(t.value):
                    self.transfer_wait(t, last)
        if region.kind in ("loop", "function", "branch"):
            ends = {"loop": "the end of the loop iteration", "function": "the kernel ends",
                    "branch": "the end of this branch"}
            for t in region.transfers:
                # a receive a ttl.wait_any did not take may stay pending when the kernel ends
                if not t.waited and t.group is None and not (region.kind == "function" and t.selections):
                    if t.kind == "recv":
                        raise KernelError(f"this pipe receive into {t.block.name} is posted but never waited for, so "
                                          f"{t.block.name} never holds the block sent; call .wait() on it (or take "
                                          f"it with ttl.wait_any) before {ends[region.kind]}", t.location)
                    raise KernelError("this transfer is never waited for; call .wait() on it (or add it to a "
                                      f"ttl.GroupTransfer and call wait_all()) before {ends[region.kind]}", t.location)
        if region.kind in ("loop", "function", "branch"):
            for acc in region.accumulators:
                if acc.holds:
                    self.emit(ttl.CBWaitOp(acc.cb))      # a value never read is waited for before its pop
                    self.emit(ttl.CBPopOp(acc.cb))
                    acc.holds = False
        else:
            parent = self.regions[-2] if len(self.regions) > 1 else None
            if parent is not None:
                if region.kind == "with":
                    parent.transfers.extend(region.transfers)
                parent.accumulators.extend(region.accumulators)

    def stmt_Pass(self, stmt, scope) -> None:
        pass

    def stmt_Assert(self, stmt: ast.Assert, scope) -> None:
        """``assert`` on values known when the kernel is built (shapes, constants, loop bounds): checked
        then, failing at its line with its message. On runtime values (the node's coordinates, loop
        indices ...) it is TT-Metal's ``ASSERT``, which the simulator checks on every core."""
        from xdsl.ir import SSAValue

        from tilefold.ir.ttkernel import KernelAssertOp

        value = self.evaluate(stmt.test, scope)
        if isinstance(value, Scalar):
            value = self.scalars.compare("ne", value, 0)
        if isinstance(value, SSAValue):
            parts, values = (self.printed_text([stmt.msg], "", scope, stmt) if stmt.msg is not None
                             else ([ast.unparse(stmt.test)], []))
            self.node = stmt
            self.emit(KernelAssertOp(value, parts, values))
            return
        if not isinstance(value, PYTHON_VALUES):
            raise self.error(f"assert {ast.unparse(stmt.test)[:40]}: the condition is {self.describe(value)}; "
                             "assert on integers and comparisons", stmt)
        if not value:
            raise self.error(f"assertion failed: {self._assert_message(stmt, scope)}", stmt)

    def stmt_Raise(self, stmt: ast.Raise, scope) -> None:
        """``raise SomeError(message)`` in a kernel: an assert that always fails where it is reached
        (TT-Metal's ``ASSERT(false)``; kernels have no exceptions)."""
        from xdsl.dialects import arith
        from xdsl.dialects.builtin import IntegerAttr, i1

        from tilefold.ir.ttkernel import KernelAssertOp

        exc = stmt.exc
        if exc is None:
            raise self.error("a bare raise has nothing to re-raise in a kernel; raise SomeError(message)", stmt)
        message = exc.args[:1] if isinstance(exc, ast.Call) else []
        name = ast.unparse(exc.func if isinstance(exc, ast.Call) else exc)
        parts, values = self.printed_text(message, "", scope, stmt) if message else ([""], [])
        parts[0] = f"{name}: {parts[0]}" if message else name
        self.node = stmt
        never = self.emit(arith.ConstantOp(IntegerAttr(0, i1))).result
        self.emit(KernelAssertOp(never, parts, values))

    def _assert_message(self, stmt: ast.Assert, scope) -> str:
        if stmt.msg is None:
            return ast.unparse(stmt.test)
        text = []
        for value, spec in self.text_pieces(stmt.msg, scope):
            if not isinstance(value, PYTHON_VALUES):
                return ast.unparse(stmt.msg)
            text.append(format(value, spec) if spec else str(value))
        return "".join(text)

    def stmt_Expr(self, stmt: ast.Expr, scope) -> None:
        value = stmt.value
        if isinstance(value, ast.Constant):
            return      # a docstring or a string used as a comment
        if isinstance(value, (ast.Tuple, ast.List)) and value.elts and all(isinstance(e, ast.Call) for e in value.elts):
            for element in value.elts:  # ``lambda pipe: (ttl.copy(pipe, blk).wait(),)``: the calls, in order
                self.evaluate(element, scope)
            return
        if not isinstance(value, ast.Call):
            raise self.error(f"this expression ({ast.unparse(value)[:40]}) has no effect; assign it or remove it",
                             stmt)
        self.evaluate(value, scope)

    def stmt_Return(self, stmt: ast.Return, scope) -> None:
        if isinstance(stmt.value, ast.Constant) and stmt.value.value is not None:
            # ``return 0`` (TT-Lang's simulator runs such kernels): the device has nowhere to put it
            from tilefold.errors import warn_at

            warn_at(f"a kernel function returns nothing: the value {stmt.value.value!r} is dropped; end the kernel "
                    "with a bare return (or none)", self.location(stmt))
        elif stmt.value is not None and not isinstance(stmt.value, ast.Constant):
            raise self.error("a kernel function returns nothing; write results into blocks and copy them to "
                             "tensors instead", stmt)
        if stmt is not self.function_stack[-1].body[-1]:
            raise self.error("return is only allowed as the last statement of a kernel function", stmt)

    def stmt_FunctionDef(self, stmt: ast.FunctionDef, scope) -> None:
        if stmt.decorator_list:
            raise self.error(f"{stmt.name} is decorated; functions inside a kernel are pipe condition bodies and "
                             "take no decorators", stmt)
        params = stmt.args
        positional = [*params.posonlyargs, *params.args]
        named = [p.arg for p in positional][len(positional) - len(params.defaults):]
        defaults = {name: self.evaluate(d, scope) for name, d in zip(named, params.defaults)}
        defaults.update({p.arg: self.evaluate(d, scope) for p, d in zip(params.kwonlyargs, params.kw_defaults)
                         if d is not None})
        scope.names[stmt.name] = LocalFunction(stmt, scope, defaults)

    def stmt_Assign(self, stmt: ast.Assign, scope) -> None:
        value = self.evaluate(stmt.value, scope)
        for target in stmt.targets:
            self.assign(target, value, scope)

    def stmt_AnnAssign(self, stmt: ast.AnnAssign, scope) -> None:
        if stmt.value is None:
            return
        self.assign(stmt.target, self.evaluate(stmt.value, scope), scope)

    def stmt_AugAssign(self, stmt: ast.AugAssign, scope) -> None:
        if not isinstance(stmt.target, ast.Name):
            raise self.error("only a plain name can be the target of an augmented assignment", stmt)
        held = scope.lookup(stmt.target.id)
        if isinstance(held, Accumulator) and held.l1_acc and isinstance(stmt.op, ast.Add):
            self.require_compute(stmt, f"{stmt.target.id} += ...")
            self.accumulator_add(held, self.evaluate(stmt.value, scope), stmt)
            return
        current = self.read_name(stmt.target.id, scope, stmt.target)
        operand = self.evaluate(stmt.value, scope)
        if isinstance(current, Block):
            self.accumulate_into_block(current, type(stmt.op), operand)
            return
        result = self.binary(type(stmt.op), current, operand, stmt)
        self.assign(stmt.target, result, scope)

    def assign(self, target: ast.expr, value, scope: Scope) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, value, scope, target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            starred = [i for i, t in enumerate(target.elts) if isinstance(t, ast.Starred)]
            if len(starred) == 1 and isinstance(value, (tuple, list)) and len(value) >= len(target.elts) - 1:
                i, after = starred[0], len(target.elts) - starred[0] - 1     # a, *rest = ...: rest is a list
                value = [*value[:i], list(value[i:len(value) - after]), *value[len(value) - after:]]
                target = ast.copy_location(ast.Tuple([t.value if isinstance(t, ast.Starred) else t
                                                      for t in target.elts], ast.Store()), target)
            if not isinstance(value, (tuple, list)) or len(value) != len(target.elts):
                raise self.error(f"cannot unpack {self.describe(value)} into {len(target.elts)} names", target)
            value = self.before_parallel_assignment(target.elts, list(value), scope)
            for t, v in zip(target.elts, value):
                self.assign(t, v, scope)
        else:
            raise self.error(f"assignment to {ast.unparse(target)} is not supported in a kernel; assign to a name",
                             target)

    def before_parallel_assignment(self, targets: list, values: list, scope: Scope) -> list:
        """``p, q = q, p + q`` with names that keep block values in buffers of their own: a value
        reading one of the other targets' buffers is kept in a buffer of its own first, as Python
        evaluates the whole right side before it assigns."""
        from tilefold.frontend.ttl.block_expressions import BlockExpression, reads_from

        kept = {t.id: scope.names.get(t.id) for t in targets if isinstance(t, ast.Name)}
        kept = {name: acc for name, acc in kept.items() if isinstance(acc, Accumulator)}
        if len(targets) < 2 or not kept:
            return values
        for i, (t, v) in enumerate(zip(targets, values)):
            own = t.id if isinstance(t, ast.Name) else None
            if isinstance(v, BlockExpression) and any(reads_from(v.value, acc.cb) for name, acc in kept.items()
                                                      if name != own):
                keep = self.make_accumulator(f"{own or 'value'} (new value)", v, t)
                values[i] = self.accumulator_read(keep, t)
        return values

    def bind(self, name: str, value, scope: Scope, node: ast.AST) -> None:
        """``name = value``, through storage when the name is kept in storage."""
        current = scope.names.get(name, MISSING)
        if isinstance(current, Unassigned):
            if _is_int(value) or isinstance(value, Scalar):
                slot = self.emit_prologue(memref.AllocaOp.get(IndexType(), shape=[]), node)
                slot.memref.name_hint = name
                current = scope.names[name] = MutableScalar(slot.memref, name)
            elif isinstance(value, ElementValue):
                current = scope.names[name] = self.mutable_element(name, value.data_format, node)
            else:
                scope.names[name] = value
                return
        if isinstance(current, MutableScalar):
            value = int(value) if isinstance(value, bool) else value      # a carried flag: 0 / 1
            v = self.as_int(value, node, f"{name} holds a runtime integer")
            self.node = node
            self.emit(memref.StoreOp.get(self.scalars.materialize(v), current.slot, []))
            self.load_symbols.pop(id(current.slot), None)
            return
        if isinstance(current, MutableElement):
            if not isinstance(value, ElementValue) or value.data_format is not current.data_format:
                raise self.error(f"{name} holds a {current.data_format.ttnn_name} value read with "
                                 f"ttl.raw_element_read; assign it another such value, not {self.describe(value)}",
                                 node)
            self.node = node
            self.emit(memref.StoreOp.get(value.value, current.slot, []))
            return
        if isinstance(current, Accumulator):
            self.accumulator_assign(current, value, node)
            return
        if isinstance(value, (Scalar,)) and value.value.name_hint is None:
            value.value.name_hint = name
        scope.names[name] = value

    def read_name(self, name: str, scope: Scope, node: ast.AST):
        value = scope.lookup(name)
        if value is MISSING:
            value = self.source.lookup(name)
        if value is MISSING or isinstance(value, Unassigned):
            hint = self.none_idiom_hint(name)
            if not hint and isinstance(value, Unassigned):
                hint = (f": {name} gets its value later in this loop or branch, so here it would hold an earlier "
                        "iteration's; from one iteration to the next a runtime loop carries integers and block "
                        "sums (acc = acc + x), not a block acquired in a with, which its with releases — keep such "
                        "a value in a dataflow buffer")
            raise self.error(f"name {name!r} is not defined here{hint}", node)
        self.check_visible(name, value, node)
        if isinstance(value, MutableScalar):
            self.node = node
            load = self.emit(memref.LoadOp.get(value.slot, []))
            first = self.load_symbols.setdefault(id(value.slot), load.res)
            return Scalar(load.res, AffineForm.symbol(first))
        if isinstance(value, MutableElement):
            self.node = node
            return ElementValue(self.emit(memref.LoadOp.get(value.slot, [])).res, value.data_format)
        if isinstance(value, Accumulator):
            return self.accumulator_read(value, node)
        return value

    def check_visible(self, name: str, value, node: ast.AST) -> None:
        """A runtime value computed inside a loop or branch cannot be used after it."""
        ssa = value.value if isinstance(value, (Scalar, BlockExpression, Block, ElementValue)) else None
        if ssa is None:
            return
        owner = ssa.owner
        owner_block = owner.parent_block() if isinstance(owner, Operation) else owner
        if owner_block is None:          # a prologue op (node coordinates), placed at the kernel's start
            return
        block = self.block
        while block is not None:
            if block is owner_block:
                return
            parent = block.parent_op()
            block = parent.parent_block() if parent is not None else None
        raise self.error(f"{name} gets its value inside a loop or branch that has ended; give {name} a value before "
                         "the loop (or the if) so that it carries over", node)

    def none_idiom_hint(self, name: str) -> str:
        """Why a name of the ``acc = None`` idiom has no value, when the kernel uses that idiom."""
        trees = [n for tree in self.function_stack for n in ast.walk(tree)]
        set_none = any(isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and n.value.value is None
                       and any(isinstance(t, ast.Name) and t.id == name for t in n.targets) for n in trees)
        tested = any(isinstance(n, ast.Compare) and isinstance(n.left, ast.Name) and n.left.id == name
                     and isinstance(n.ops[0], (ast.Is, ast.IsNot)) for n in trees)
        if not (set_none and tested):
            return ""
        return (f": {name} = None then {name} = x if {name} is None else {name} + x needs {name} assigned on every "
                f"path of the first iteration of a loop with a compile-time trip count, not only inside a runtime "
                f"if or loop or after a continue; give {name} its first value before the loop instead "
                f"({name} = ttl.math.fill(x, 0) with a block x of the summed shape, or the first block)")

    # -- promotion of carried names -------------------------------------------------------------

    def promote(self, stmt: ast.stmt, scope: Scope) -> list:
        """Before a runtime loop or branch: give storage to the carried names it assigns."""
        from tilefold.frontend.ttl.variables import accumulated_names, writes

        promoted = []
        names = (writes(stmt) - (writes(stmt.target) if isinstance(stmt, ast.For) else set())) & scope.carried
        for name in sorted(names):
            current = scope.names.get(name, MISSING)
            if isinstance(current, (MutableScalar, Accumulator, MutableElement)):
                continue
            if current is MISSING or isinstance(current, Block) and current.status.released:
                # (a block released before the statement carries nothing: the statement acquires anew)
                scope.names[name] = Unassigned(name)
            elif isinstance(current, (int, Scalar)):
                # (a bool flag, ``done = False`` ... ``done = True``, is carried as 0 / 1)
                slot = self.emit_prologue(memref.AllocaOp.get(IndexType(), shape=[]), stmt)
                slot.memref.name_hint = name
                self.node = stmt
                self.emit(memref.StoreOp.get(self.scalars.materialize(current), slot.memref, []))
                scope.names[name] = MutableScalar(slot.memref, name)
            elif isinstance(current, ElementValue):
                scope.names[name] = slot = self.mutable_element(name, current.data_format, stmt)
                self.node = stmt
                self.emit(memref.StoreOp.get(current.value, slot.slot, []))
            elif isinstance(current, BlockExpression):
                scope.names[name] = self.make_accumulator(name, current, stmt, self._only_summed(stmt, name))
            elif isinstance(current, Block) and current.acquired == "wait" and current.accumulator is None \
                    and self.kind == "compute" and name not in accumulated_names(stmt):
                # ``x = dfb.wait()`` then ``x = x + ...`` in the loop: the name carries the block's value
                scope.names[name] = self.make_accumulator(name, self.operand(current, stmt), stmt,
                                                          self._only_summed(stmt, name))
            elif isinstance(current, Block):
                summed = self._only_summed(stmt, name)
                # a reserved block only added to (``blk += x``) starts at zero: the first step stores
                promoted.append((name, self.promote_block(current, stmt, name in accumulated_names(stmt) or summed,
                                                          summed, name)))
            elif isinstance(current, (float, str, tuple)):
                kind = "loop" if isinstance(stmt, (ast.For, ast.While)) else "branch"
                raise self.error(f"{name} is assigned inside this {kind} and used afterwards, but it holds a Python "
                                 "value that cannot change at run time; compute it before the loop", stmt)
        self.keep_aliases(writes(stmt), stmt, scope)
        return promoted

    def keep_aliases(self, written: set, stmt: ast.stmt, scope: Scope) -> None:
        """Before a loop or branch that gives new values to names kept in buffers of their own:
        other names whose values read those buffers (``old = acc`` before ``for ...: acc += x``) get
        buffers of their own here, so they keep the values from before."""
        kept = [v for n in written if isinstance(v := scope.lookup(n), Accumulator)]
        self.keep_readers_of(kept, written, stmt, scope)

    def _only_summed(self, stmt: ast.stmt, name: str) -> bool:
        from tilefold.frontend.ttl.variables import only_summed

        return self.kind == "compute" and only_summed(stmt, self.source.tree, name)

    # -- loops ----------------------------------------------------------------------------------

    def stmt_For(self, stmt: ast.For, scope: Scope) -> None:
        if stmt.orelse:
            raise self.error("for ... else is supported in a kernel when the loop's break statements are reached "
                             "through if / else and with blocks only", stmt)
        iterable = stmt.iter
        backwards = self.is_builtin_call(iterable, "reversed", scope) and len(iterable.args) == 1 \
            and not iterable.keywords and self.is_builtin_call(iterable.args[0], "range", scope)
        if backwards:
            iterable = iterable.args[0]             # for i in reversed(range(...)): the range counted down
        if self.is_builtin_call(iterable, "range", scope):
            args = [self.as_int(self.evaluate(a, scope), a, "range() bounds") for a in iterable.args]
            if iterable.keywords or not 1 <= len(args) <= 3:
                raise self.error("range() takes 1 to 3 positional arguments", iterable)
            lb, ub, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
            if not isinstance(step, int) or step == 0:
                raise self.error("the step of range() in a kernel must be a nonzero compile-time integer", iterable)
            if backwards:
                lb, ub, step = self.reversed_range(lb, ub, step)
            if (isinstance(lb, int) and isinstance(ub, int) and len(range(lb, ub, step)) <= self.MAX_UNROLLED
                    and (self.indexes_a_sequence(stmt, scope) or self.fills_a_container(stmt, scope))):
                # the loop picks items of a Python list (pipes, tensors, buffers ...) or fills one:
                # unrolled, the index is a compile-time integer in each copy of the body
                for v in range(lb, ub, step):
                    self.assign(stmt.target, v, scope)
                    self.statements(stmt.body, scope, Region("with", stmt))
                return
            behind = self.acquires_behind_held(stmt, scope)
            if behind is not None:
                if not (isinstance(lb, int) and isinstance(ub, int) and len(range(lb, ub, step)) <= self.MAX_UNROLLED):
                    older, call = behind
                    raise self.error(
                        f"{ast.unparse(call)[:40]} in this loop acquires a block of {older.dfb.name} while {older.name}, "
                        f"an older block of it, is held: the loop's blocks leave the buffer only with {older.name}, "
                        f"so each iteration's block sits further back — give the loop a compile-time trip count of "
                        f"at most {self.MAX_UNROLLED} or release {older.name} before the loop", stmt)
                # each iteration's block sits one place further back in the FIFO: unrolled, each
                # copy of the body knows its position
                for v in range(lb, ub, step):
                    self.assign(stmt.target, v, scope)
                    self.statements(stmt.body, scope, Region("with", stmt))
                return
            if isinstance(lb, int) and isinstance(ub, int) and len(range(lb, ub, step)) and \
                    (self.carries_none(stmt, scope) or self.first_iteration_assigns(stmt, scope)):
                # ``acc = None`` before the loop, ``acc = x if acc is None else acc + x`` in it, or no
                # ``acc`` before it and ``if k == 0: acc = x`` / ``else: acc = acc + x``: the first
                # iteration is built on its own (there ``acc`` is None, ``k`` known), the rest loop at
                # runtime (where ``k`` is known not to be the first value)
                self.assign(stmt.target, lb, scope)
                self.statements(stmt.body, scope, Region("with", stmt))
                lb += step
                if not len(range(lb, ub, step)):
                    return
            if step > 0:
                self.runtime_loop(stmt, scope, lb, ub, step)
            else:
                # a loop counting down counts its iterations up: the variable is lb + step * k
                if isinstance(lb, int) and isinstance(ub, int):
                    count = len(range(lb, ub, step))
                else:
                    scalars = self.scalars
                    count = scalars.maximum(scalars.floordiv(scalars.add(scalars.sub(lb, ub), -step - 1), -step), 0)
                self.runtime_loop(stmt, scope, 0, count, 1, start=lb, stride=step)
            return
        values = self.evaluate(iterable, scope)
        if isinstance(values, (dict, set, frozenset, range, enumerate, zip, reversed, type({}.items()),
                               type({}.keys()), type({}.values()))):
            values = list(values)      # compile-time Python collections unroll like lists
        elif isinstance(values, Iterator):       # a generator, map, filter ...: its items when the kernel is built
            values = list(itertools.islice(values, MAX_UNROLLED_ITEMS + 1))
            if len(values) > MAX_UNROLLED_ITEMS:
                raise self.error(f"a kernel loops over {ast.unparse(iterable)[:40]}, an iterator of more than "
                                 f"{MAX_UNROLLED_ITEMS} items, which the kernel would unroll; loop with "
                                 "for ... in range(...)", iterable)
        if not isinstance(values, (list, tuple)):
            raise self.error(f"a kernel loops with for ... in range(...) (or over a Python list); "
                             f"{ast.unparse(iterable)[:40]} is {self.describe(values)}", iterable)
        for v in values:       # unrolled
            self.assign(stmt.target, v, scope)
            self.statements(stmt.body, scope, Region("with", stmt))

    MAX_UNROLLED = 64

    def is_builtin_call(self, node: ast.expr, name: str, scope: Scope) -> bool:
        """Whether ``node`` calls Python's own ``name`` (``range``, ``reversed``), not a name the
        kernel or its module rebinds."""
        import builtins

        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name \
            and self.source.lookup(name) is getattr(builtins, name) and scope.lookup(name) is MISSING

    def reversed_range(self, lb, ub, step: int):
        """``(start, stop, step)`` of ``reversed(range(lb, ub, step))``: the last value down to the
        first; bounds known at run time give a runtime start and stop."""
        if isinstance(lb, int) and isinstance(ub, int):
            r = range(lb, ub, step)[::-1]
            return r.start, r.stop, r.step
        scalars = self.scalars
        span = scalars.sub(ub, lb) if step > 0 else scalars.sub(lb, ub)
        count = scalars.maximum(scalars.floordiv(scalars.add(span, abs(step) - 1), abs(step)), 0)
        last = scalars.add(lb, scalars.mul(scalars.sub(count, 1), step))
        return last, scalars.sub(last, scalars.mul(count, step)), -step

    def carries_none(self, stmt: ast.For, scope: Scope) -> bool:
        """Whether the loop assigns a carried name that holds None before it."""
        names = (writes(stmt) - writes(stmt.target)) & scope.carried
        return any(scope.names.get(name, MISSING) is None for name in names)

    def branches_defining(self, stmt: ast.stmt, rest: list[ast.stmt], scope: Scope) -> ast.If | None:
        """An ``if`` (or ``name = a if c else b``) of a compute kernel that gives a block value its
        first value on each path (``if i == 0: v = exp(x)`` / ``else: v = -x``), with the statements
        after it that read it: the ``if`` with those statements at the end of both branches, where
        the value is known (each path computes what it assigned); a conditional expression of
        blocks always becomes such an ``if``. None for any other statement, and when those
        statements acquire or release blocks (they are built once, after the ``if``)."""
        if self.kind != "compute" or not rest:
            return None
        split = _as_if_statement(stmt)
        if split is None:
            return None
        blocks = (Block, BlockExpression, Accumulator)
        if split is not stmt and not any(isinstance(n, ast.Name) and isinstance(scope.lookup(n.id), blocks)
                                         for n in ast.walk(stmt.value)):
            return None                     # a conditional expression of numbers: evaluated as it is
        from tilefold.frontend.ttl.variables import read_before_assigned

        if any(isinstance(n, (ast.With, ast.AsyncWith)) or isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr in ("wait", "reserve", "push", "pop") for r in rest for n in ast.walk(r)):
            return None                     # (the rest acquires or releases blocks: built once, after the if)
        fresh = {n for n in writes(split) if scope.lookup(n) is MISSING or isinstance(scope.lookup(n), Unassigned)}
        if not fresh & read_before_assigned(rest, self.kernel_tree) and split is stmt:
            return None
        return _if_in_place_of(stmt, split.test, split.body + rest, split.orelse + rest)

    def first_iteration_assigns(self, stmt: ast.For, scope: Scope) -> bool:
        """Whether a compute loop hands a name that has no value before it from one iteration to
        the next and tests its loop variable (``if k == 0: acc = a @ b`` / ``else: acc = acc + a @ b``): the test decides
        on which iteration the name gets its first value."""
        from tilefold.frontend.ttl.variables import carried_across_iterations

        if self.kind != "compute" or not isinstance(stmt.target, ast.Name):
            return False
        names = carried_across_iterations(stmt, self.kernel_tree)
        if not any(scope.lookup(name) is MISSING or isinstance(scope.lookup(name), Unassigned) for name in names):
            return False
        tests = [n.test for n in ast.walk(stmt) if isinstance(n, (ast.If, ast.IfExp))]
        return any(isinstance(m, ast.Name) and m.id == stmt.target.id for test in tests for m in ast.walk(test))

    def indexes_a_sequence(self, stmt: ast.For, scope: Scope) -> bool:
        """Whether the body of a ``range()`` loop with at most :data:`MAX_UNROLLED` iterations
        indexes a Python list or tuple (of anything) of the kernel's surroundings (``items[i]``,
        ``groups["key"][i]``, ``items[j]`` with ``j = i + 1``) by the loop variable or a name
        computed from it (and has no ``break`` / ``continue``)."""
        body = _straight_body(stmt)
        if not isinstance(stmt.target, ast.Name) or body is None:
            return False
        derived = {stmt.target.id}         # the loop variable and the names assigned from it
        assigns = [n for n in body if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and n.value is not None]
        changed = True
        while changed:
            changed = False
            for n in assigns:
                if any(isinstance(m, ast.Name) and m.id in derived for m in ast.walk(n.value)):
                    targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                    for t in targets:
                        for m in ast.walk(t):
                            if isinstance(m, ast.Name) and m.id not in derived:
                                derived.add(m.id)
                                changed = True
        for n in body:
            if not isinstance(n, ast.Subscript):
                continue
            if not any(isinstance(m, ast.Name) and m.id in derived for m in ast.walk(n.slice)):
                continue
            value = self.static_value(n.value, scope)
            if isinstance(value, (list, tuple)):      # (of numbers too: ws[i] with ws a tuple of weights)
                return True
        return False

    def fills_a_container(self, stmt: ast.For, scope: Scope) -> bool:
        """Whether the body of a ``range()`` loop with at most :data:`MAX_UNROLLED` iterations puts
        values into a Python list or dict of its surroundings (``rows.append(n * 2 + i)``,
        ``table[i] = x``): the loop is unrolled, as Python runs it, so each value is the one
        computed for its item (and has no ``break`` / ``continue``)."""
        for n in _straight_body(stmt) or ():
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                base, method = self.static_value(n.func.value, scope), n.func.attr
            elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store):
                base, method = self.static_value(n.value, scope), "__setitem__"
            else:
                continue
            if method in _FILLING.get(type(base), ()):
                return True
        return False

    def static_value(self, expr: ast.expr, scope: Scope):
        """The Python object ``expr`` names when it is a name, or constant subscripts / attributes of
        one (``groups["key"]``), looked up without building anything; :data:`MISSING` otherwise."""
        if isinstance(expr, ast.Name):
            value = scope.lookup(expr.id)
            return self.source.lookup(expr.id) if value is MISSING else value
        if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant):
            base = self.static_value(expr.value, scope)
            if isinstance(base, (list, tuple, dict)):
                try:
                    return base[expr.slice.value]
                except (LookupError, TypeError):
                    return MISSING
        return MISSING

    def acquires_behind_held(self, stmt: ast.stmt, scope: Scope):
        """``(older block, call)`` when ``stmt`` acquires (``dfb.wait()`` / ``dfb.reserve()`` on a
        buffer named in the kernel) from a buffer end that already holds a block, else None."""
        from tilefold.frontend.ttl.dataflow_buffers import DataflowBuffer

        for node in ast.walk(stmt):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("wait", "reserve") and isinstance(node.func.value, ast.Name)):
                continue
            dfb = scope.lookup(node.func.value.id)
            if dfb is MISSING:
                dfb = self.source.lookup(node.func.value.id)
            if isinstance(dfb, DataflowBuffer):
                held = [b for b in self._ends(dfb)[node.func.attr] if not b.status.released]
                if held:
                    return held[0], node
        return None

    def runtime_loop(self, stmt: ast.For, scope: Scope, lb, ub, step: int, start=None, stride: int = 1) -> None:
        """An ``scf.for`` from ``lb`` to ``ub`` by ``step``; its variable is the induction value, or
        ``start + stride * k`` of it when ``start`` is given (a loop counting down)."""
        self.node = stmt
        promoted = self.promote(stmt, scope)
        kept = self.kept_loop_variable(stmt, scope, lb, ub, step)
        held_before = self.held_snapshot()
        lb_v, ub_v = self.scalars.materialize(lb), self.scalars.materialize(ub)
        step_v = self.scalars.constant(step)
        body = IRBlock(arg_types=[IndexType()])
        iv = body.args[0]
        if isinstance(stmt.target, ast.Name) and stmt.target.id != "_":
            iv.name_hint = stmt.target.id
        loop = self.emit(scf.ForOp(lb_v, ub_v, step_v, [], body))
        outer = self.block
        self.block = body
        if isinstance(lb, int) and isinstance(ub, int) and ub > lb:
            self.scalars.ranges[id(iv)] = (lb, lb + (ub - lb - 1) // step * step)
        self.load_symbols.clear()          # each iteration reads what the last one stored
        index = Scalar.opaque(iv)
        if start is not None:
            index = self.scalars.add(start, self.scalars.mul(index, stride))
        if kept is None:
            self.assign(stmt.target, index, scope)
        else:
            # the variable is read after the loop: each iteration stores its value, and the body
            # reads the induction value itself (its indices stay affine) unless it assigns the name
            self.node = stmt
            self.emit(memref.StoreOp.get(self.scalars.materialize(index), kept.slot, []))
            assigned = set().union(*(writes(s) for s in stmt.body))
            scope.names[stmt.target.id] = kept if stmt.target.id in assigned else index
        self.loop_body(stmt, scope, outer, held_before, promoted)
        if kept is not None:
            scope.names[stmt.target.id] = kept
        del loop

    def kept_loop_variable(self, stmt: ast.For, scope: Scope, lb, ub, step: int) -> MutableScalar | None:
        """Storage for a runtime loop's variable that is read after the loop (Python leaves it at
        the last item, or at its value before a loop that did not run), made before the loop; None
        when the variable is not read after it, or has no value before a loop that may not run."""
        target = stmt.target
        if not isinstance(target, ast.Name) or target.id not in scope.carried:
            return None
        name = target.id
        current = scope.names.get(name, MISSING)
        if isinstance(current, MutableScalar):
            return current
        span = form_of(ub) - form_of(lb)          # known also for bounds n and n + 2
        runs = span.is_constant and (span.constant > 0 if step > 0 else span.constant < 0)
        if not (isinstance(current, (int, Scalar)) and not isinstance(current, bool)
                or runs and (current is MISSING or isinstance(current, Unassigned))):
            return None
        slot = self.emit_prologue(memref.AllocaOp.get(IndexType(), shape=[]), stmt)
        slot.memref.name_hint = name
        if not (current is MISSING or isinstance(current, Unassigned)):
            self.node = stmt
            self.emit(memref.StoreOp.get(self.scalars.materialize(current), slot.memref, []))
        return MutableScalar(slot.memref, name)

    def stmt_While(self, stmt: ast.While, scope: Scope) -> None:
        """``while test: body`` as an ``scf.while``: the test is built in the loop's first region and
        read again before each iteration (the names it reads that the body assigns live in memory);
        the body must release what it acquires, as a runtime ``for`` loop's must."""
        if stmt.orelse:
            raise self.error("while ... else is supported in a kernel when the loop's break statements are reached "
                             "through if / else and with blocks only", stmt.orelse[0])
        self.node = stmt
        promoted = self.promote(stmt, scope)
        held_before = self.held_snapshot()
        test, body = IRBlock(), IRBlock()
        loop = self.emit(scf.WhileOp([], [], [test], [body]))
        self.load_symbols.clear()          # each test and iteration reads what the last iteration stored
        outer = self.block
        self.block = test
        cond = self.condition(self.evaluate_test(stmt.test, scope), stmt.test)
        self.block = outer
        if isinstance(cond, bool):
            loop.detach()
            loop.erase()
            if cond:
                raise self.error("this while loop never ends: its condition is always true; give it a condition "
                                 "that changes, or leave it with break", stmt.test)
            return
        self.require_progress(stmt)
        self.node = stmt.test
        self.block = test
        self.emit(scf.ConditionOp(cond))
        self.block = body
        self.loop_body(stmt, scope, outer, held_before, promoted)

    def loop_body(self, stmt: ast.For | ast.While, scope: Scope, outer: IRBlock, held_before, promoted: list) -> None:
        """Build the body of runtime loop ``stmt`` into the loop's IR block (the current one), check that
        each iteration releases what it acquires on every path, end it with its yield, and go back to
        ``outer``, where the blocks accumulated in the loop are finished."""
        partly_before = dict(self.partly_released)
        self.statements(stmt.body, scope, Region("loop", stmt))
        for key, (b, where) in self.partly_released.items():
            if partly_before.get(key, (None,))[0] is not b:
                verb = "pushed" if b.acquired == "reserve" else "popped"
                raise KernelError(f"{b.name} is {verb} by one branch of this if only, inside a loop: the next "
                                  f"iteration's block of {b.dfb.name} would sit where the path decides; release "
                                  f"{b.name} on every path of the iteration", where)
        self.check_held(held_before, stmt, "loop iteration")
        self.node = stmt.body[-1]
        self.emit(scf.YieldOp())
        self.block = outer
        self.load_symbols.clear()          # after the loop: what its last iteration stored
        self.node = stmt
        for name, block in promoted:
            self.finish_block_accumulation(block, stmt)

    def require_progress(self, stmt: ast.While) -> None:
        """A ``while`` loop whose test reads no name its body assigns (and calls nothing) would
        run forever once entered: one error at the test."""
        from tilefold.frontend.ttl.variables import reads, writes

        if any(isinstance(n, (ast.Call, ast.Subscript, ast.Attribute)) for n in ast.walk(stmt.test)):
            return
        if not reads(stmt.test) & writes(stmt):
            raise self.error(f"this while loop never ends once entered: its body changes nothing its condition "
                             f"({ast.unparse(stmt.test)[:40]}) reads; update one of those names in the loop", stmt.test)

    # -- branches -------------------------------------------------------------------------------

    def stmt_If(self, stmt: ast.If, scope: Scope) -> None:
        cond = self.condition(self.evaluate_test(stmt.test, scope), stmt.test)
        if isinstance(cond, bool):
            chosen = stmt.body if cond else stmt.orelse
            if chosen:
                self.statements(chosen, scope, Region("with", stmt))
            return
        self.node = stmt
        promoted = self.promote(stmt, scope)
        if any(block.accumulator is not None for _, block in promoted):     # (one summed in its own L1 needs none)
            raise self.error("a block cannot be accumulated into inside a runtime if; accumulate in a loop or "
                             "store the result of an expression", stmt)
        restored = self.restore_exclusive_releases(cond) if not stmt.orelse else []
        held_before = self.held_snapshot()
        held = [b for ends in self.held.values() for blocks in ends.values() for b in blocks]
        states = {id(b): b.status.snapshot() for b in held}
        selected = self.selected_in_branches(cond)
        pending = self.pending_transfers()
        flags = {id(t): (t.waited, t.implicit) for t in pending}
        then_block, else_block = IRBlock(), IRBlock()
        self.emit(scf.IfOp(cond, [], [then_block], [else_block]))
        outer = self.block
        released, writes, ends = [], [], []
        for branch, stmts, done in ((then_block, stmt.body, selected[0]), (else_block, stmt.orelse, selected[1])):
            self.block = branch
            marked = self.mark_selected(done)
            gone = []
            before = {id(b): b.status.writes for b in held}
            if stmts:
                self.statements(stmts, scope, Region("branch", stmt))
                gone = self.branch_releases(held_before)
                self.check_held(held_before, stmt, "branch of this if")
            writes.append({id(b) for b in held if b.status.writes != before[id(b)]})
            # (a block whose receive the branch's selection completed ends the branch complete: the
            # join keeps it in flight unless the other path completes it too)
            ends.append(({id(t): (t.waited, t.implicit) for t in pending},
                         {id(b): b.status.snapshot() for b in held}))
            self.unmark_selected(marked)
            for t in pending:       # the other branch starts from the state before the if
                t.waited, t.implicit = flags[id(t)]
            for b in held:
                b.status.restore(states[id(b)])
            released.append(gone)
        self.join_transfers(stmt, pending, (then_block, else_block), ends, released)
        self.block = outer
        gone = {id(b) for b in released[0] + released[1]}
        for b in held:              # written by one branch only: on the other path it holds what its pages held
            if id(b) not in gone and states[id(b)][0] == "MW" and (id(b) in writes[0]) != (id(b) in writes[1]):
                b.status.written_on_one_path(self.location(stmt))
        self.merge_branch_releases(*released, stmt, cond)
        for b, partly in restored:          # not released on this path either: as it was before the if
            if not b.status.released:
                self._ends(b.dfb)[b.acquired].remove(b)
                b.status.state, b.status.partly = "OS", partly[1]
                self.partly_released[(b.dfb.index, b.acquired)] = partly
            elif exhaustive(b.status.partly_conds):     # released on every path after all
                b.status.partly, b.status.partly_conds = None, []
                self.partly_released.pop((b.dfb.index, b.acquired), None)

    def pending_transfers(self) -> list:
        """The transfers started before the statement being built and not waited for yet."""
        return [t for region in self.regions for t in region.transfers
                if not t.waited and t.group is None and t.kind != "recv" and not t.selections]

    def join_transfers(self, stmt: ast.If, pending: list, blocks: tuple, ends: list, released: list) -> None:
        """After both branches of an ``if``: a transfer started before it that one branch waited for
        is waited for at the end of the other branch too (a wait the program writes after the ``if``
        then waits for nothing more), and each block held through the ``if`` takes, of its states
        at the two branches' ends, the one a later statement must respect (a copy still in flight
        on one path; else the one not read yet). The ``if`` 's yields close both branches."""
        gone = {id(b) for b in released[0] + released[1]}
        for side in (0, 1):
            flags, states = ends[side]
            late = [t for t in pending if flags[id(t)][0] != ends[1 - side][0][id(t)][0] and not flags[id(t)][0]]
            self.block = blocks[side]
            for t in pending:
                t.waited, t.implicit = flags[id(t)]
            for b in self._held_blocks():
                if id(b) in states and id(b) not in gone:
                    b.status.restore(states[id(b)])
            for t in late:
                if not t.waited:
                    self.transfer_wait(t, stmt)
            ends[side] = ({id(t): (t.waited, t.implicit) for t in pending},
                          {**states, **{id(b): b.status.snapshot() for b in self._held_blocks() if id(b) in states}})
            self.node = stmt
            self.emit(scf.YieldOp())
        (then_flags, then_states), (else_flags, else_states) = ends
        for t in pending:
            t.waited = then_flags[id(t)][0] and else_flags[id(t)][0]
            t.implicit = t.waited and (then_flags[id(t)][1] or else_flags[id(t)][1])
        then_gone, else_gone = {id(b) for b in released[0]}, {id(b) for b in released[1]}
        for b in self._held_blocks():
            if id(b) not in then_states:
                continue
            if id(b) not in gone:
                b.status.restore(joined_state(then_states[id(b)], else_states[id(b)]))
            elif id(b) not in else_gone:        # released by the then-branch only: held as the else left it
                b.status.restore(else_states[id(b)])
            elif id(b) not in then_gone:
                b.status.restore(then_states[id(b)])

    def _held_blocks(self) -> list:
        return [b for ends in self.held.values() for blocks in ends.values() for b in blocks]

    def restore_exclusive_releases(self, cond) -> list:
        """Before an ``if`` without ``else`` on ``cond``: the blocks that earlier ``if`` s released on
        their then-paths only, all of whose conditions exclude ``cond`` (``if selected == 0:`` ...
        ``if selected == 1:`` after ``ttl.wait_any``), are held again — on this if's then-path none of
        those releases happened. Returns them with what they were before. Once the ifs that released
        a block cover every path (``v == k`` and ``v != k``), it is released."""
        restored = []
        for key, partly in list(self.partly_released.items()):
            b = partly[0]
            conds = b.status.partly_conds
            if not conds or not all(exclusive(c, cond) for c in conds):
                continue
            del self.partly_released[key]
            self._ends(b.dfb)[b.acquired].append(b)
            b.status.restore(b.status.partly_state)
            b.status.partly = None
            restored.append((b, partly))
        return restored

    # -- with -----------------------------------------------------------------------------------

    def stmt_With(self, stmt: ast.With, scope: Scope) -> None:
        acquired: list[Block] = []
        for item in stmt.items:
            self.node = item.context_expr
            value = self.evaluate(item.context_expr, scope)
            if value is SIGNPOST:
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, None, scope)
                continue
            if not isinstance(value, Block):
                raise self.error(f"with needs a block from a dataflow buffer — dfb.reserve() or dfb.wait() — or "
                                 f"ttl.signpost(name); {ast.unparse(item.context_expr)[:40]} is "
                                 f"{self.describe(value)}", item.context_expr)
            acquired.append(value)
            if item.optional_vars is not None:
                self.assign(item.optional_vars, value, scope)
        self.statements(stmt.body, scope, Region("with", stmt))
        self.node = stmt.body[-1]
        if getattr(stmt, "inline_blocks", False):       # ttl.copy(t[...], dfb.reserve()): wait for the copy
            for region in self.regions:
                for t in region.transfers:
                    if any(t.touches(b) for b in acquired) and not t.waited and t.group is None \
                            and self._dominates(t.value):
                        self.transfer_wait(t, stmt.body[-1])
        # innermost first, as Python exits them; but blocks of one buffer end leave it in the order
        # they were acquired (with dfb.reserve() as a, dfb.reserve() as b: a is pushed, then b)
        for blk in reversed(acquired):
            if blk.status.released:
                continue
            older = [b for b in acquired if b.dfb is blk.dfb and b.acquired == blk.acquired]
            for b in older[:older.index(blk) + 1]:
                if not b.status.released:
                    self.release(b, stmt.body[-1])

    # -- held blocks ----------------------------------------------------------------------------

    def release_dead_blocks(self, stmt: ast.stmt, scope: Scope) -> None:
        """In a kernel without ``push()`` / ``pop()`` calls: after ``stmt``, push a block reserved by
        ``name = dfb.reserve()`` once it holds its value and its name is no longer live (read by what
        follows before it is assigned again), pop a block obtained by ``name = dfb.wait()`` once its
        name is no longer live — oldest block of a buffer end first — waiting first for the copies
        into or out of it that the kernel did not wait for. A block acquired inside an expression
        (``dfb.reserve().store(x)``, ``ttl.copy(t[0, 0], dfb.reserve())``, ``f(dfb.wait())``) has no
        name: it is released after its statement, once no live value is computed from it."""
        live = live_after(self.kernel_tree, stmt)
        if live is None:
            return
        for ends in self.held.values():
            for end, blocks in ends.items():
                while blocks:
                    b = blocks[0]
                    if not (b.assigned or b.inline) or b.level != self.runtime_level() or \
                            not self.implicit_release and (b.inline or b.explicit) or (
                            b.assigned and b.name in live and scope.lookup(b.name) is b) or (
                            end == "wait" and self._feeds_live_value(b, live, scope)) or \
                            self._live_transfer(b, live, scope) or self._live_view(b, live, scope):
                        break
                    if end == "reserve" and self.kind == "compute" and b.stored is None and not b.summed_in_l1:
                        break
                    for region in self.regions:
                        for t in region.transfers:
                            if t.touches(b) and not t.waited and t.group is None and self._dominates(t.value):
                                self.transfer_wait(t, stmt)
                    self.release(b, stmt)

    @staticmethod
    def _live_value(live: set[str], scope: Scope, holds) -> bool:
        """Whether a live name in ``scope`` or its parents holds a value for which ``holds`` is true."""
        while scope is not None:
            if any(name in live and holds(value) for name, value in scope.names.items()):
                return True
            scope = scope.parent
        return False

    def _live_transfer(self, block, live: set[str], scope: Scope) -> bool:
        """Whether a live name holds a copy into or out of ``block`` not waited for yet (``tx =
        ttl.copy(tx, ...)`` rebinds the block's name; the block stays until ``tx.wait()``)."""
        return self._live_value(live, scope, lambda v: isinstance(v, Transfer) and v.touches(block) and not v.waited)

    def _live_view(self, block, live: set[str], scope: Scope) -> bool:
        """Whether a live name holds a ``ttl.block.subview`` of ``block`` (the block stays with it)."""
        return self._live_value(live, scope, lambda v: isinstance(v, BlockView) and v.parent is block)

    def _feeds_live_value(self, block, live: set[str], scope: Scope) -> bool:
        """Whether a live name holds a block expression computed from ``block`` (the block then
        stays until that value is used, instead of the value being copied out before the pop)."""
        from tilefold.frontend.ttl.block_expressions import _reads

        return self._live_value(live, scope,
                                lambda v: isinstance(v, BlockExpression) and _reads(v.value, block.value))

    def branch_releases(self, before: dict) -> list:
        """The blocks held before an ``if`` that a branch of it released: every block of a buffer end
        (no younger one left behind, whose position would depend on the path). They are put back
        among the held blocks for the other branch; :meth:`merge_branch_releases` settles them."""
        gone = []
        for index, ends in before.items():
            for end, old in ends.items():
                current = self.held[index][end]
                if old and not current and all(b.status.released for b in old):
                    current[:0] = old
                    gone.extend(old)
        return gone

    def merge_branch_releases(self, then_gone: list, else_gone: list, stmt: ast.If, cond=None) -> None:
        """After an ``if``: a block both branches released is released; one released by one branch
        only stays reserved (or waited) on the other path — it can no longer be used, and its buffer
        end cannot be acquired from again, as the position of a next block depends on the path. A
        block the then-branch of ``cond`` released keeps ``cond`` (and its state before the release):
        a later ``if`` whose condition excludes it holds the block again (see
        :meth:`restore_exclusive_releases`)."""
        both = {id(b) for b in then_gone} & {id(b) for b in else_gone}
        then_only = {id(b) for b in then_gone} - both
        states = {id(b): b.status.snapshot() for b in then_gone + else_gone}
        for b in {id(b): b for b in then_gone + else_gone}.values():
            held = self._ends(b.dfb)[b.acquired]
            if any(h is b for h in held):
                held.remove(b)
            b.status.state = "OS"
            if id(b) not in both:
                b.status.partly = self.location(stmt)
                self.partly_released[(b.dfb.index, b.acquired)] = (b, self.location(stmt))
                if id(b) in then_only and cond is not None and not isinstance(cond, bool):
                    b.status.partly_conds = [*b.status.partly_conds, cond]
                    if b.status.partly_state is None:
                        b.status.partly_state = states[id(b)]
                else:
                    b.status.partly_conds = []

    def held_snapshot(self) -> dict:
        return {k: {e: list(v) for e, v in ends.items()} for k, ends in self.held.items()}

    def check_held(self, before: dict, stmt: ast.stmt, what: str) -> None:
        for index, ends in self.held.items():
            for end, blocks in ends.items():
                old = before.get(index, {}).get(end, [])
                if [id(b) for b in blocks] != [id(b) for b in old]:
                    extra = [b for b in blocks if all(b is not o for o in old)]
                    gone = [b for b in old if all(b is not n for n in blocks)]
                    if extra:
                        b = extra[0]
                        verb = "pushed" if b.acquired == "reserve" else "popped"
                        if b.status.released:
                            older = blocks[0]
                            raise self.error(f"{b.name} is {verb} in this {what} while {older.name}, an older block "
                                             f"of {b.dfb.name}, is held: it can leave the buffer only with "
                                             f"{older.name}, which this runtime {what} cannot arrange — release "
                                             f"{older.name} before it, or acquire and release {b.name} outside it",
                                             stmt)
                        raise KernelError(f"{b.name} is acquired in this {what} but not {verb} before it ends; "
                                          f"use 'with {b.dfb.name}.{b.acquired}() as {b.name}:' or call "
                                          f"{b.name}.{'push' if b.acquired == 'reserve' else 'pop'}() in the same "
                                          f"{what}", b.status.location)
                    b = gone[0]
                    raise self.error(f"{b.name} was acquired before this {what} but is released inside it; acquire "
                                     f"and release a block in the same {what}", stmt)

    def check_all_released(self, last: ast.AST) -> None:
        """Every reserved block is pushed by the kernel's end. A waited block may stay unpopped (a
        constant read once, such as a scaler): its pages are left in the buffer, which the
        simulator reports as a warning."""
        for ends in self.held.values():
            for blocks in ends.values():
                blocks = [b for b in blocks if b.acquired == "reserve" and not b.status.released]
                if blocks:
                    b = blocks[0]
                    verb = "push" if b.acquired == "reserve" else "pop"
                    if b.status.state == "MW":      # nothing was written into it either
                        raise KernelError(f"{b.name} is reserved but never written or pushed; store() into it "
                                          f"(compute) or copy into it (data movement), then call {b.name}.push() — "
                                          f"or drop the reserve", b.status.location)
                    raise KernelError(f"{b.name} is never released; call {b.name}.{verb}() or use 'with "
                                      f"{b.dfb.name}.{b.acquired}() as {b.name}:'", b.status.location)



class Unassigned:
    """A carried name that has no value yet; its first value decides how it is stored."""

    def __init__(self, name: str):
        self.name = name


def _releases_implicitly(tree: ast.FunctionDef) -> bool:
    """A kernel that never calls ``push()`` / ``pop()`` releases the blocks it acquires with
    ``name = dfb.reserve()`` / ``dfb.wait()`` itself, as TT-Lang's compiler does (see
    :meth:`KernelBuilder.release_dead_blocks`)."""
    return not any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("push", "pop")
                   for n in ast.walk(tree))


def _explicit_acquisitions(tree: ast.FunctionDef) -> dict[int, bool] | None:
    """In a kernel that calls ``push()`` / ``pop()`` only on names it binds (blocks, not buffers):
    for each ``name = dfb.reserve()`` / ``dfb.wait()`` statement (by id), whether the kernel
    releases that block itself — a ``name.push()`` / ``name.pop()`` follows it in program order
    before ``name`` is bound again. None for a kernel that calls none, or calls one on anything else
    (a buffer, ``dfb.push()``: then it releases every block itself)."""
    events: list = []            # ("bind" | "release", name, statement) in program order

    def expressions(node) -> None:
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("push", "pop"):
                events.append(("release", n.func.value.id if isinstance(n.func.value, ast.Name) else None, None))

    def statements(body) -> None:
        for stmt in body:
            bodies = [getattr(stmt, f) for f in ("body", "orelse", "finalbody") if isinstance(getattr(stmt, f, None), list)]
            headers = [v for f, v in ast.iter_fields(stmt) if f not in ("body", "orelse", "finalbody")]
            for h in headers:
                for n in (h if isinstance(h, list) else [h]):
                    if isinstance(n, ast.AST):
                        expressions(n)
                        for t in ast.walk(n):
                            if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store):
                                events.append(("bind", t.id, stmt))
            for b in bodies:
                statements(b)

    statements(tree.body)
    releases = [e for e in events if e[0] == "release"]
    if not releases or any(name is None for _, name, _ in releases):
        return None
    bound = {name for kind, name, _ in events if kind == "bind"}
    if {name for _, name, _ in releases} - bound:
        return None
    explicit: dict[int, bool] = {}
    for k, (kind, name, stmt) in enumerate(events):
        if kind != "bind" or not isinstance(stmt, ast.Assign):
            continue
        later = next((e for e in events[k + 1:] if e[1] == name), None)
        explicit[id(stmt)] = later is not None and later[0] == "release"
    return explicit


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _unsupported_statement(stmt: ast.stmt) -> str:
    kind = type(stmt).__name__
    hints = {
        "Break": "break is supported in a kernel's loops only through if / else and with blocks (not in try or "
                 "match)",
        "Continue": "continue is supported in a kernel's loops only through if / else and with blocks (not in try "
                    "or match)",
        "Global": "global is not supported in a kernel",
        "Nonlocal": "nonlocal is not supported in a kernel; return nothing from pipe bodies and use blocks",
        "Try": "try is not supported in a kernel",
        "Delete": "del is not supported in a kernel",
        "Import": "import modules in the operation's file, not inside a kernel",
        "ImportFrom": "import modules in the operation's file, not inside a kernel",
        "ClassDef": "classes cannot be defined inside a kernel",
        "AsyncFunctionDef": "async functions are not supported in a kernel",
        "Match": "match is not supported in a kernel; use if / elif",
    }
    return hints.get(kind, f"{kind} statements are not supported in a TT-Lang kernel")


_PLACED_DOMAIN = "__tilefold_placed_domain__"


def _placed_only(tree: ast.FunctionDef, placed: list[int], domain) -> ast.FunctionDef:
    """``tree`` with its body under ``if domain.is_current(d0) or ...`` over the placed devices."""
    tests = [ast.Call(func=ast.Attribute(value=ast.Name(id=_PLACED_DOMAIN, ctx=ast.Load()), attr="is_current",
                                         ctx=ast.Load()),
                      args=[ast.Constant(value=domain.coordinate(i))], keywords=[]) for i in placed]
    test = tests[0] if len(tests) == 1 else ast.BoolOp(op=ast.Or(), values=tests)
    guard = ast.If(test=test, body=tree.body, orelse=[])
    for n in ast.walk(test):
        ast.copy_location(n, tree.body[0])
    ast.copy_location(guard, tree.body[0])
    guard.end_lineno, guard.end_col_offset = tree.body[-1].end_lineno, tree.body[-1].end_col_offset
    new = copy.copy(tree)
    new.body = [guard]
    return new


def build_kernel(definition, operation, options: dict) -> tuple[func.FuncOp, KernelBuilder]:
    """Build one kernel function into ttl IR."""
    builder = KernelBuilder(definition, operation, options)
    return builder.build(), builder


def _ends_with_return(stmts: list[ast.stmt]) -> bool:
    last = stmts[-1] if stmts else None
    return isinstance(last, ast.Return) and (last.value is None or (
        isinstance(last.value, ast.Constant) and last.value.value is None))


def _if_in_place_of(stmt: ast.stmt, test: ast.expr, body: list[ast.stmt], orelse: list[ast.stmt]) -> ast.If:
    """An ``if`` built by the compiler to stand for ``stmt``: its lines are ``stmt``'s."""
    made = ast.copy_location(ast.If(test=test, body=body, orelse=orelse), stmt)
    made.end_lineno, made.end_col_offset = stmt.end_lineno, stmt.end_col_offset
    return made


def _as_if_statement(stmt: ast.stmt) -> ast.If | None:
    """``name = a if c else b`` as ``if c: name = a`` / ``else: name = b``; an ``if`` as it is."""
    if isinstance(stmt, ast.If):
        return stmt
    if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.IfExp) and len(stmt.targets) == 1):
        return None
    choice = stmt.value
    body, orelse = (ast.copy_location(ast.Assign(targets=stmt.targets, value=v), stmt) for v in (choice.body, choice.orelse))
    return _if_in_place_of(stmt, choice.test, [body], [orelse])


def _fold_early_returns(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """``if c: ...; return`` followed by more statements is ``if c: ... else: <the rest>``: a kernel
    that returns early on some nodes (``if not net.is_active(): return``) becomes one branch."""
    for i, stmt in enumerate(stmts):
        if not isinstance(stmt, ast.If):
            continue
        body_returns, else_returns = _ends_with_return(stmt.body), _ends_with_return(stmt.orelse)
        if not (body_returns or else_returns):
            continue
        rest = stmts[i + 1:]
        body = stmt.body[:-1] if body_returns else stmt.body + rest
        orelse = stmt.orelse[:-1] if else_returns else stmt.orelse + rest
        folded = _if_in_place_of(stmt, stmt.test, _fold_early_returns(body), _fold_early_returns(orelse))
        return stmts[:i] + [folded]
    return stmts
