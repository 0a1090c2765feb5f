"""Operations called from an operation's body: each call is replaced by the callee's statements.

An operation whose parameters are dataflow buffers (``def f(inp: ttl.DFB, out: ttl.DFB)``, or
any parameters given buffers, pipe nets or Python values at the call) can be called as a
statement of another operation body without kernel functions, or of another such operation.
The call is inlined before the body is split into kernels (:mod:`.implicit_kernels`): the
callee's parameters become the caller's argument expressions, its own names get fresh names
(so two calls do not share blocks), the names it reads from its module or closure are carried
over as values, and its scratch buffers (``ttl.make_dfb(...)`` statements, with the statements
setting names they read) are made once per call, before the caller's top-level statement holding
the call. Nested calls are inlined first.

Reads: the caller's and callees' sources and scopes. Writes: a new function tree and the values
its carried-over names hold (read again at each call of the operation, :meth:`Inliner.values`).
Errors: a call with the wrong arguments, a device tensor for a ``ttl.DFB`` parameter, an
operation call whose result is used, recursion, a scratch buffer shaped by a name set in the loop
holding the call or by a block the callee acquires — at the call's line; a ``return`` before the
end of a callee — at its line.
"""

from __future__ import annotations

import ast
import builtins
import copy
import inspect
import itertools
import re

from tilefold.errors import KernelError, SourceLocation

MAX_DEPTH = 32
BUFFER_MAKERS = {"make_dfb", "make_dataflow_buffer_like", "make_circular_buffer_like", "make_tensor_backed_dfb"}
_PREFIX = "__tf_call"


def user_name(name: str) -> str:
    """``name`` as the user wrote it (without the prefix an inlined operation's names get)."""
    return re.sub(rf"^{_PREFIX}\d+_", "", name) if name.startswith(_PREFIX) else name


def show_user_names(err):
    """``err`` with the fresh names of inlined statements in its message shown as the callee wrote them."""
    if _PREFIX in err.message:
        err.message = re.sub(rf"{_PREFIX}\d+_", "", err.message)
        err.args = (str(err),)
    return err


def function_scope(function) -> dict:
    """The names ``function`` reads: its module's globals and its closure's values."""
    scope = dict(function.__globals__)
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or ()):
        try:
            scope[name] = cell.cell_contents
        except ValueError:
            continue
    return scope


def _operation_of(node: ast.expr, scope: dict, operation_type):
    """The operation a call's function expression names (``f`` or ``module.f``), else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in scope:
        return None
    value = scope[node.id]
    for attr in reversed(parts):
        try:
            value = inspect.getattr_static(value, attr) if not inspect.ismodule(value) else getattr(value, attr)
        except Exception:       # noqa: BLE001 - a name the module lacks (or refuses) is no operation
            return None
    return value if isinstance(value, operation_type) else None


def is_buffer_annotation(annotation) -> bool:
    from tilefold.frontend.ttl.dataflow_buffers import DataflowBuffer

    if isinstance(annotation, str):
        return annotation.split(".")[-1] in ("DFB", "DataflowBuffer", "CircularBuffer")
    return annotation is DataflowBuffer


def buffer_parameters(function) -> set[str]:
    """The parameters of an operation that are dataflow buffers: annotated ``ttl.DFB``, or whose
    blocks its body acquires (``param.reserve()`` / ``param.wait()``)."""
    from tilefold.frontend.source import FunctionSource

    out = {k for k, v in getattr(function, "__annotations__", {}).items() if is_buffer_annotation(v)}
    try:
        tree = FunctionSource.of(function, "operation").tree
    except KernelError:
        return out
    params = {a.arg for a in tree.args.args + tree.args.kwonlyargs}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("reserve", "wait") \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in params:
            out.add(node.func.value.id)
    return out


class Inliner:
    """Inlines the operation calls of one operation's body (:meth:`expand`)."""

    def __init__(self, function, source, operation_type):
        self.function = function
        self.operation_type = operation_type        # the class of operations (ttl.Operation)
        self.file = source.file
        self.tree = source.tree
        self.scope = function_scope(function)
        self.defaults: dict[str, object] = {}      # carried-over names -> callees' parameter defaults
        self.reads: dict[str, tuple] = {}           # carried-over names -> (callee, the name it reads, line)
        self.counter = itertools.count(1)
        self.inlined = 0
        self.first_call: SourceLocation | None = None
        self.resolved: list[tuple] = []             # (function, call's function expression, operation or None)

    def values(self) -> dict[str, object]:
        """The values of the carried-over names, the names the callees read taken from their modules
        and closures now (a global rebound between two calls of the operation is seen by the second)."""
        out = dict(self.defaults)
        for carried, (function, name, where) in self.reads.items():
            scope = function_scope(function)
            if name not in scope:
                raise KernelError(f"{function.__name__}(): name {name!r} is not defined", where)
            out[carried] = scope[name]
        return out

    def unchanged(self) -> bool:
        """Whether every call statement the expansion looked at still names the same operation (or
        still none): a name rebound to another operation between calls needs a new expansion."""
        scopes: dict[int, dict] = {}
        for function, func, op in self.resolved:
            scope = scopes.get(id(function))
            if scope is None:
                scope = scopes[id(function)] = function_scope(function)
            if _operation_of(func, scope, self.operation_type) is not op:
                return False
        return True

    def expand(self) -> ast.FunctionDef:
        """The body's tree with every operation call inlined (the tree itself when there is none)."""
        params = {a.arg for a in self.tree.args.args + self.tree.args.kwonlyargs}
        body = self._body(self.tree.body, self.function, self.file, self.scope, [], params)
        if not self.inlined:
            return self.tree
        tree = copy.copy(self.tree)
        tree.body = body
        return tree

    # -- statements ----------------------------------------------------------------------------

    def _body(self, stmts, function, file, scope, stack, params) -> list[ast.stmt]:
        """``stmts`` with their operation calls inlined; the scratch buffer statements of a call
        inside a loop, branch or ``with`` go before the statement of ``stmts`` holding it."""
        out = []
        for stmt in stmts:
            hoisted: list[ast.stmt] = []
            new = self._statement(stmt, function, file, scope, stack, params, hoisted, nested=False)
            inner = _stored_names([stmt]) if hoisted else set()
            for made in hoisted:
                late = sorted(_loaded_names([made]) & inner)
                if late:
                    raise KernelError(f"a scratch buffer of an operation called here depends on {late[0]!r}, which "
                                      "is set inside the loop or branch holding the call; an operation's buffers are "
                                      "made once, before it — give them compile-time shapes and formats",
                                      made.called_at)
            out += hoisted + new
        return out

    def _statement(self, stmt, function, file, scope, stack, params, hoisted, nested) -> list[ast.stmt]:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            op = _operation_of(stmt.value.func, scope, self.operation_type)
            self.resolved.append((function, stmt.value.func, op))
            if op is not None:
                scratch, body = self._call(op, stmt.value, function, file, stack, params)
                if nested:
                    hoisted += scratch
                    return body
                return scratch + body
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return [stmt]
        self._check_no_value_use(stmt, file, scope)
        if isinstance(stmt, (ast.For, ast.While, ast.If, ast.With)):
            fields = ("body",) if isinstance(stmt, ast.With) else ("body", "orelse")
            copy_ = copy.copy(stmt)
            for name in fields:
                setattr(copy_, name, [s for inner in getattr(stmt, name)
                                      for s in self._statement(inner, function, file, scope, stack, params,
                                                               hoisted, nested=True)])
            return [copy_]
        return [stmt]

    def _check_no_value_use(self, stmt, file, scope) -> None:
        shallow = [stmt] if not isinstance(stmt, (ast.For, ast.While, ast.If, ast.With)) else \
            [getattr(stmt, f) for f in ("iter", "test") if hasattr(stmt, f)] + \
            [i.context_expr for i in getattr(stmt, "items", [])]
        for part in shallow:
            for node in ast.walk(part):
                op = _operation_of(node.func, scope, self.operation_type) if isinstance(node, ast.Call) else None
                if op is not None:
                    raise KernelError(f"{op.function.__name__}(...) is an operation: call it as a statement of the "
                                      "body (it writes its dataflow buffers and returns nothing)",
                                      SourceLocation(file, node.lineno))

    # -- one call ------------------------------------------------------------------------------

    def _call(self, op, call: ast.Call, function, file, stack, caller_params):
        """``(scratch, statements)``: the callee's statements for one call, its names renamed for
        the call, and its scratch buffer statements apart (see :func:`_scratch_first`)."""
        where = SourceLocation(file, call.lineno)
        name = op.function.__name__
        if op.dispatcher:
            from tilefold.frontend.ttl.dispatch import composition_error

            raise composition_error(name, function.__name__, where)
        source, signature, bound = self._bind(op, call, function, where, stack, caller_params)
        tree = source.tree
        callee_scope = function_scope(op.function)
        callee_params = [a.arg for a in tree.args.args + tree.args.kwonlyargs]
        # the callee's own calls first, in its own scope
        body = self._body(_inlinable_statements(tree, name, source.file), op.function, source.file, callee_scope,
                          stack + [op.function], set(callee_params))
        self.inlined += 1
        self.first_call = self.first_call or where
        prefix = f"{_PREFIX}{next(self.counter)}_"
        stored = _stored_names(body)
        renames = {v: prefix + v for v in stored | set(callee_params)}
        substitute: dict[str, ast.expr] = {}
        bindings: list[ast.stmt] = []
        for param in callee_params:
            if param in bound.arguments:
                value = bound.arguments[param]
            else:
                carried = f"{prefix}default_{param}"
                self.defaults[carried] = signature.parameters[param].default
                value = ast.Name(id=carried, ctx=ast.Load())
            if param in stored:
                bindings.append(ast.copy_location(ast.Assign(targets=[ast.Name(id=renames[param], ctx=ast.Store())],
                                                             value=copy.deepcopy(value)), call))
            else:
                substitute[param] = value
                renames.pop(param)
        body = copy.deepcopy(body)         # this call's own statements: the source's cached tree stays as parsed
        carried = self._carry(op, body, stored | set(callee_params), callee_scope, source.file, prefix)
        body = [_Rename(renames, carried, substitute).visit(s) for s in body]
        if source.file != self.file:       # its lines are of another file: errors name the call's line
            for s in body:
                for node in ast.walk(s):
                    if hasattr(node, "lineno"):
                        node.lineno = node.end_lineno = call.lineno
        scratch, rest = _scratch_first(bindings + body, name, prefix, where)
        for s in scratch:
            s.called_at = where         # the call whose buffer it is (errors about it name that line)
        return scratch, rest or [ast.copy_location(ast.Pass(), call)]

    def _bind(self, op, call: ast.Call, function, where, stack, caller_params):
        """``(callee source, signature, bound arguments)`` of a call (the arguments as the call's
        expressions); errors at the call for recursion, ``*args`` / ``**kwargs``, arguments that do
        not bind, and one of the operation's tensors given for a buffer parameter."""
        from tilefold.frontend.source import FunctionSource

        name = op.function.__name__
        if op.function in stack or op.function is self.function or len(stack) >= MAX_DEPTH:
            raise KernelError(f"{name}() calls itself: an operation called from a body is inlined, so it cannot "
                              "recurse", where)
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            raise KernelError(f"{name}(): give the arguments of an operation called from a body one by one "
                              "(no *args / **kwargs)", where)
        source = FunctionSource.of(op.function, "operation")
        args = source.tree.args
        if args.vararg or args.kwarg or args.posonlyargs:
            raise KernelError(f"{name}(): an operation called from a body takes named parameters only "
                              "(no *args, **kwargs or positional-only parameters)", where)
        signature = inspect.signature(op.function)
        try:
            bound = signature.bind(*call.args, **{k.arg: k.value for k in call.keywords})
        except TypeError as exc:
            raise KernelError(f"{name}(): {exc}", where) from None
        buffers = op.buffer_parameters()
        for param, value in bound.arguments.items():
            if param in buffers and function is self.function:
                base = value.value if isinstance(value, ast.Subscript) else value
                if isinstance(base, ast.Name) and base.id in caller_params:
                    raise KernelError(f"{name}(): parameter {param!r} is a dataflow buffer, but {base.id!r} is an argument "
                                      "of the operation (a device tensor); pass a dataflow buffer, such as "
                                      f"ttl.make_dataflow_buffer_like({base.id}, shape=..., block_count=2)", where)
        return source, signature, bound

    def _carry(self, op, body, local: set[str], callee_scope: dict, file: str, prefix: str) -> dict[str, str]:
        """The names ``body`` reads from its operation's module or closure, each given a carried-over
        name read at each call (:meth:`values`) unless the outermost body names the same object; a
        name neither defines (nor a builtin) is an error at its line."""
        name = op.function.__name__
        carried = {}
        for free in _loaded_names(body) - local:
            if free.startswith(_PREFIX) or free not in callee_scope and hasattr(builtins, free):
                continue            # carried over by an inner call already, or a builtin
            uses = [n for s in body for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == free]
            line = min(n.lineno for n in uses)
            if free not in callee_scope:
                raise KernelError(f"{name}(): name {free!r} is not defined", SourceLocation(file, line))
            if free in self.scope and self.scope[free] is callee_scope[free]:
                for node in uses:   # the same object in the outermost body's scope (ttl, ttnn ...): kept as
                    node.outermost = True       # it is, by the callers it is inlined into too
                continue
            carried[free] = f"{prefix}{free}"
            self.reads[carried[free]] = (op.function, free, SourceLocation(file, line))
        return carried


def _inlinable_statements(tree: ast.FunctionDef, name: str, file: str) -> list[ast.stmt]:
    """The statements of a callee's body to inline: without its docstring and a closing bare
    ``return``; any other ``return`` of the body is an error at its line (inlined, it would leave
    the caller's body)."""
    body = [s for s in tree.body if not _is_docstring(s)]
    if body and isinstance(body[-1], ast.Return) and body[-1].value is None:
        body = body[:-1]
    todo = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return):
            raise KernelError(f"{name}() returns here: an operation called from a body is inlined into it, so it "
                              "cannot return early; put the rest of its body under if / else",
                              SourceLocation(file, node.lineno))
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return body


def _scratch_first(body: list[ast.stmt], name: str, prefix: str, where: SourceLocation):
    """``(scratch, rest)``: the statements of an inlined body that make its scratch buffers, with
    the statements before them that set names they read (``n = rows * 2``, a parameter the body
    assigns), in order; then the rest. A buffer that reads a name set by a statement acquiring or
    copying blocks cannot be made first: an error at the call."""
    needed: set[str] = set()
    first = [False] * len(body)
    for i in reversed(range(len(body))):
        stmt = body[i]
        if _makes_buffer(stmt) or (_stored_names([stmt]) & needed and not _moves_blocks(stmt)):
            first[i] = True
            needed |= _loaded_names([stmt])
    late = sorted(needed & _stored_names([s for s, f in zip(body, first) if not f]))
    if late:
        raise KernelError(f"{name}(): a scratch buffer of this operation depends on {late[0].removeprefix(prefix)!r}, "
                          "which a statement acquiring or copying blocks sets; an operation's buffers are made before "
                          "its statements run — give them compile-time shapes and formats", where)
    return [s for s, f in zip(body, first) if f], [s for s, f in zip(body, first) if not f]


def _moves_blocks(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` acquires, copies or sends / receives blocks (``x.reserve()``, ``x.wait()``,
    ``ttl.copy(...)``, ``net.if_src(f)`` / ``net.if_dst(f)``)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr in ("reserve", "wait", "copy", "if_src", "if_dst") for n in ast.walk(stmt))


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _makes_buffer(stmt) -> bool:
    """A statement making a dataflow buffer (``x = ttl.make_dfb(...)``)."""
    if not isinstance(stmt, ast.Assign):
        return False
    for node in ast.walk(stmt.value):
        if isinstance(node, ast.Call):
            f = node.func
            if (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)) in BUFFER_MAKERS:
                return True
    return False


def _stored_names(body) -> set[str]:
    out = set()
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                out.add(node.id)
            elif isinstance(node, ast.arg):
                out.add(node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                out.add(node.name)
    return out


def _loaded_names(body) -> set[str]:
    """The names ``body`` reads, but those an inlined callee reads from the outermost body's scope."""
    return {node.id for stmt in body for node in ast.walk(stmt)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and not getattr(node, "outermost", False)}


class _Rename(ast.NodeTransformer):
    def __init__(self, renames, carried, substitute):
        self.renames, self.carried, self.substitute = renames, carried, substitute

    def visit_Name(self, node):
        if getattr(node, "outermost", False):
            return node         # a name of the outermost body's scope, not of this callee's
        if node.id in self.substitute and isinstance(node.ctx, ast.Load):
            return ast.copy_location(copy.deepcopy(self.substitute[node.id]), node)
        new = self.renames.get(node.id) or (self.carried.get(node.id) if isinstance(node.ctx, ast.Load) else None)
        if new:
            node.id = new
        return node

    def visit_arg(self, node):
        if node.arg in self.renames:
            node.arg = self.renames[node.arg]
        return node

    def visit_FunctionDef(self, node):
        node.name = self.renames.get(node.name, node.name)
        self.generic_visit(node)
        return node


