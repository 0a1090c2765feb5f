"""Static dispatch controllers: ``@ttl.operation(dispatcher=True)`` and ``dispatch_arguments=``.

Reads: a dispatcher's source (its body's calls of other operations and the ``if`` statements around
them, whose conditions are compile-time values of its module or closure), its targets'
``dispatch_arguments`` and the tensors given to ``emit_dispatch_ir`` / ``resolve_dispatch``.
Writes: the dispatcher's schedule — its targets and their invocations in order — as IR
(:mod:`tilefold.ir.dispatch`) and as a :class:`ResolvedDispatcher`.

A dispatcher is control only: each operation its body calls is built as an image of its own (it
must declare its grid) and the device runs the images in the body's order, so the dispatcher itself
is never called (that is one error), nor composed into another operation. Its body, once its
``if`` statements are resolved (``op.dispatcher_ast``, a fresh copy each time), is a straight line
of calls whose arguments are the dispatcher's own parameters.

An argument contract, ``dispatch_arguments={"x": ttl.DispatchArgument("read", "handoff")}`` on a
target, says how the target accesses a parameter (``read``, ``write``, ``read_write``, the default)
and how long its value must live across images: ``ordinary`` (the default: within the image),
``handoff`` (to the next image that reads it), ``persistent_state`` (a named state kept across
images) or ``immutable_image_state`` (read only). Resolving a schedule checks that a value one
image writes and a later one reads crosses images as ``handoff`` or ``persistent_state`` on both sides.

Errors, at the user's line: a body that defines kernel functions, an ``if`` whose condition is not
a compile-time value, a target without a grid, a statement other than a call, a call whose
arguments are not the dispatcher's parameters, a contract that does not hold.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
import types
from dataclasses import dataclass
from enum import Enum

from tilefold.caller import user_location
from tilefold.errors import KernelArgumentError, KernelError, KernelValueError, SourceLocation
from tilefold.layout.formats import data_format

# The IR (xDSL) is imported by the functions that build or read it: ``import tilefold.ttl`` stays light.


class DispatchAccess(str, Enum):
    """How a target accesses one of its arguments."""

    READ = "read"
    WRITE = "write"
    READ_WRITE = "read_write"


class DispatchStorage(str, Enum):
    """How long an argument's value must live across the images of a dispatcher."""

    ORDINARY = "ordinary"
    HANDOFF = "handoff"
    PERSISTENT_STATE = "persistent_state"
    IMMUTABLE_IMAGE_STATE = "immutable_image_state"


@dataclass(frozen=True)
class DispatchArgument:
    """``ttl.DispatchArgument(access="read_write", storage="ordinary", state=None)``: one parameter's
    contract (see the module docstring)."""

    access: DispatchAccess = DispatchAccess.READ_WRITE
    storage: DispatchStorage = DispatchStorage.ORDINARY
    state: str | None = None

    def __post_init__(self) -> None:
        try:
            access = DispatchAccess(self.access)
        except (TypeError, ValueError):
            raise KernelArgumentError(f"ttl.DispatchArgument(access={self.access!r}): the access is 'read', 'write' "
                                      "or 'read_write'", user_location()) from None
        try:
            storage = DispatchStorage(self.storage)
        except (TypeError, ValueError):
            raise KernelArgumentError(f"ttl.DispatchArgument(storage={self.storage!r}): the storage is 'ordinary', "
                                      "'handoff', 'persistent_state' or 'immutable_image_state'",
                                      user_location()) from None
        object.__setattr__(self, "access", access)
        object.__setattr__(self, "storage", storage)
        if storage is DispatchStorage.PERSISTENT_STATE and not (isinstance(self.state, str) and self.state):
            raise KernelValueError("ttl.DispatchArgument(..., 'persistent_state'): persistent_state arguments "
                                   "require a non-empty state name (state='...')", user_location())
        if storage is not DispatchStorage.PERSISTENT_STATE and self.state is not None:
            raise KernelValueError(f"ttl.DispatchArgument(state={self.state!r}): only persistent_state arguments "
                                   "name a state", user_location())
        if storage is DispatchStorage.IMMUTABLE_IMAGE_STATE and access is not DispatchAccess.READ:
            raise KernelValueError("ttl.DispatchArgument: immutable_image_state arguments must be read-only "
                                   "(access='read')", user_location())

    @property
    def text(self) -> str:
        """``access:storage[:state]``, as the IR keeps it."""
        return ":".join([self.access.value, self.storage.value] + ([self.state] if self.state else []))

    @classmethod
    def from_text(cls, text: str) -> DispatchArgument:
        access, storage, *state = text.split(":", 2)
        return cls(access, storage, state[0] if state else None)

    @property
    def crosses_images(self) -> bool:
        return self.storage in (DispatchStorage.HANDOFF, DispatchStorage.PERSISTENT_STATE)


def argument_contracts(function, declarations, location) -> tuple[DispatchArgument, ...]:
    """One contract per parameter of ``function`` from ``dispatch_arguments=`` (default: read_write, ordinary)."""
    parameters = tuple(inspect.signature(function).parameters)
    declarations = {} if declarations is None else declarations
    if not isinstance(declarations, dict):
        raise KernelArgumentError("@ttl.operation(dispatch_arguments=...) takes a dict of parameter name -> "
                                  "ttl.DispatchArgument", location)
    unknown = sorted(set(declarations) - set(parameters))
    if unknown:
        raise KernelValueError(f"@ttl.operation {function.__name__!r}: dispatch_arguments names "
                               f"{', '.join(map(repr, unknown))}, which are not parameters of {function.__name__}",
                               location)
    for name, contract in declarations.items():
        if not isinstance(contract, DispatchArgument):
            raise KernelArgumentError(f"@ttl.operation {function.__name__!r}: dispatch argument {name!r} must be a "
                                      f"ttl.DispatchArgument, not {type(contract).__name__}", location)
    return tuple(declarations.get(name, DispatchArgument()) for name in parameters)


def _scope(function) -> dict:
    """The names ``function``'s body reads: its module's, then its closure's."""
    names = dict(function.__globals__)
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or ()):
        try:
            names[name] = cell.cell_contents
        except ValueError:                  # not bound yet
            pass
    return names


def _is_operation(value) -> bool:
    """Whether ``value`` is a ``@ttl.operation`` (asked of its class: no instance attribute is evaluated)."""
    return getattr(type(value), "is_ttl_operation", False) is True


def dispatcher_operations_named(function) -> list:
    """The dispatchers ``function``'s code (its nested functions' too) names, as it sees them now."""
    scope, found, codes = _scope(function), [], [function.__code__]
    while codes:
        code = codes.pop()
        for name in (*code.co_names, *code.co_freevars):
            value = scope.get(name)
            if _is_operation(value) and value.dispatch is not None and value not in found:
                found.append(value)
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return found


def composition_error(dispatcher: str, caller: str, location) -> KernelValueError:
    """The error of an operation ``caller`` whose body calls the dispatcher ``dispatcher``."""
    return KernelValueError(f"cannot compose dispatcher operation {dispatcher!r} into {caller!r}: a dispatcher only "
                            "schedules operations; call its targets here instead", location)


class DispatcherBody:
    """A dispatcher's body with its static ``if`` statements resolved, and the operations it calls."""

    def __init__(self, function, name: str, location: SourceLocation):
        self.function, self.name = function, name
        self.parameters = list(inspect.signature(function).parameters)
        self.file = function.__code__.co_filename
        try:
            source = textwrap.dedent(inspect.getsource(function))
        except (OSError, TypeError):
            raise KernelError(f"dispatcher {name!r}: its source is not available (a dispatcher is read from its "
                              "file)", location) from None
        tree = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
        self.first_line = function.__code__.co_firstlineno        # line 1 of the source (its first decorator)
        tree.decorator_list = []
        for node in ast.walk(tree):
            if node is not tree and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                                      ast.ClassDef)):
                raise KernelValueError(f"dispatcher=True requires a unified operation body: {name!r} defines "
                                       f"{getattr(node, 'name', 'a lambda')!r}; a dispatcher only calls operations, "
                                       "which define their kernels themselves", self.location(node))
        self.scope = _scope(function)
        tree.body = self._resolved(tree.body)
        self.tree = tree
        self.targets: dict[str, object] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                target = self.scope.get(node.func.id)
                if _is_operation(target) and target.operation_identity not in self.targets:
                    if not target.grid_declared:
                        raise KernelValueError(f"dispatcher target {target.__name__!r} must declare a grid "
                                               f"(@ttl.operation(grid=...)): each target is built as an image of "
                                               "its own", self.location(node))
                    self.targets[target.operation_identity] = target

    def location(self, node: ast.AST) -> SourceLocation:
        return SourceLocation(self.file, self.first_line + node.lineno - 1)

    def _resolved(self, statements: list) -> list:
        """``statements`` with each ``if`` replaced by the branch its compile-time condition takes."""
        out = []
        for stmt in statements:
            if isinstance(stmt, ast.If):
                try:
                    taken = eval(compile(ast.Expression(stmt.test), self.file, "eval"), self.scope)
                except Exception:
                    raise KernelValueError(f"dispatcher {self.name!r}: the condition {ast.unparse(stmt.test)!r} is "
                                           "not a compile-time value; a dispatcher's if statements are resolved "
                                           "when it is defined (use names of its module or closure)",
                                           self.location(stmt)) from None
                out.extend(self._resolved(stmt.body if taken else stmt.orelse))
            else:
                out.append(stmt)
        return out

    # -- the schedule for one call's tensors -------------------------------------------------

    @functools.cached_property
    def invocations(self) -> list[tuple[object, tuple[str, ...], ast.AST]]:
        """(target, the dispatcher parameter bound to each of its parameters, the call) per statement
        (made once: the body is fixed when the dispatcher is defined)."""
        parameters = set(self.parameters)
        found = []
        for stmt in self.tree.body:
            if isinstance(stmt, ast.Pass) or isinstance(stmt, ast.Return) and stmt.value is None:
                continue
            if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
                raise KernelValueError(f"dispatcher {self.name!r} contains unsupported straight-line statement "
                                       f"{type(stmt).__name__}: its body only calls operations on its own "
                                       "parameters", self.location(stmt))
            call = stmt.value
            target = self.scope.get(call.func.id) if isinstance(call.func, ast.Name) else None
            if not _is_operation(target):
                raise KernelValueError(f"dispatcher {self.name!r} calls {ast.unparse(call.func)}, which is not a "
                                       "@ttl.operation; its body only calls operations", self.location(stmt))
            signature = inspect.signature(target.function)
            try:
                bound = signature.bind(*call.args, **{k.arg: k.value for k in call.keywords if k.arg is not None})
            except TypeError as exc:
                raise KernelValueError(f"dispatcher {self.name!r}: the call of {target.__name__!r} does not fit "
                                       f"its parameters: {exc}", self.location(stmt)) from None
            names = []
            for parameter in signature.parameters:
                given = bound.arguments.get(parameter)
                if not (isinstance(given, ast.Name) and given.id in parameters):
                    raise KernelValueError(f"dispatcher {self.name!r}: argument {parameter!r} of {target.__name__!r} "
                                           "must be one of the dispatcher's own parameters, named directly",
                                           self.location(stmt))
                names.append(given.id)
            found.append((target, tuple(names), stmt))
        if not found:
            raise KernelValueError(f"dispatcher {self.name!r} calls no operation", self.location(self.tree))
        return found

    def emit(self, args: tuple, kwargs: dict):
        """The schedule as IR (a ``ModuleOp``) for tensors like ``args`` / ``kwargs``."""
        from xdsl.dialects import func
        from xdsl.dialects.builtin import FunctionType, ModuleOp, UnitAttr

        from tilefold.ir.dispatch import DISPATCHER_ATTR, DispatchInvokeOp, DispatchTargetOp

        location = user_location()
        try:
            values = inspect.signature(self.function).bind(*args, **kwargs).arguments
        except TypeError as exc:
            raise KernelArgumentError(f"dispatcher {self.name!r}: {exc}", location) from None
        invocations = self.invocations
        types_of: dict = {}
        for name in [n for _, names, _ in invocations for n in names]:
            types_of.setdefault(name, _tensor_type(values.get(name), name, self.name, location))
        parameters = self.parameters
        unused = [p for p in parameters if p not in types_of]
        if unused:
            raise KernelValueError(f"dispatcher {self.name!r}: no target uses parameter(s) {', '.join(unused)}",
                                   location)
        symbols: dict[str, str] = {}
        ops = []
        for target, names, _ in invocations:
            identity = target.operation_identity
            if identity in symbols:
                continue
            symbol, n = target.__name__, 0
            while symbol in symbols.values() or symbol == self.name:
                n += 1
                symbol = f"{target.__name__}_{n}"
            symbols[identity] = symbol
            ops.append(DispatchTargetOp(symbol, FunctionType.from_lists([types_of[n] for n in names], []), identity,
                                        list(inspect.signature(target.function).parameters),
                                        [c.text for c in target.dispatch_contracts]))
        function = func.FuncOp(self.name, ([types_of[p] for p in parameters], []))
        function.attributes[DISPATCHER_ATTR] = UnitAttr()
        block = function.body.block
        for i, arg in enumerate(block.args):
            arg.name_hint = f"arg{i}"
        index = {p: i for i, p in enumerate(parameters)}
        for target, names, _ in invocations:
            block.add_op(DispatchInvokeOp(symbols[target.operation_identity], [block.args[index[n]] for n in names]))
        block.add_op(func.ReturnOp())
        return ModuleOp([*ops, function])

    def resolve(self, args: tuple, kwargs: dict):
        """:meth:`emit`, with the contracts checked, marked ``ttl.dispatch.resolved``."""
        from xdsl.dialects.builtin import UnitAttr

        from tilefold.ir.dispatch import RESOLVED_ATTR

        module = self.emit(args, kwargs)
        written: dict[str, tuple] = {}          # parameter -> (target, its contract) of its latest writer
        for target, names, stmt in self.invocations:
            for name, contract in zip(names, target.dispatch_contracts):
                if contract.access is not DispatchAccess.WRITE and name in written:
                    writer, wrote = written[name]
                    if not (wrote.crosses_images and contract.crosses_images):
                        raise KernelError(f"dispatcher {self.name!r}: {name!r} is written by {writer.__name__!r} and "
                                          f"read by {target.__name__!r}, a later image; an ordinary value does not "
                                          "live across images: declare handoff or persistent_state for it in both "
                                          "operations' dispatch_arguments", self.location(stmt))
                if contract.access is not DispatchAccess.READ:
                    written[name] = (target, contract)
        function = module.body.block.last_op
        function.attributes = {RESOLVED_ATTR: UnitAttr(), **function.attributes}
        return module


def _tensor_type(value, name: str, dispatcher: str, location):
    """A tensor argument's type in tiles: ``tensor<rows x cols x !ttcore.tile<h x w, dtype>>``."""
    from xdsl.dialects.builtin import TensorType

    from tilefold.ir import ttl

    if not all(hasattr(value, a) for a in ("padded_shape", "dtype", "tile")):
        raise KernelArgumentError(f"dispatcher {dispatcher!r}: argument {name!r} is {type(value).__name__}; give a "
                                  "ttnn tensor", location)
    h, w = tuple(value.tile.tile_shape)
    shape = list(value.padded_shape)
    shape[-1] //= w
    if len(shape) > 1:
        shape[-2] //= h
    return TensorType(ttl.tile_type(data_format(value.dtype), h, w), shape)


@dataclass(frozen=True)
class DispatchTarget:
    """One operation of a resolved schedule: its symbol, identity, parameters and their contracts."""

    symbol: str
    identity: str
    argument_names: tuple[str, ...]
    argument_contracts: tuple[DispatchArgument, ...]


@dataclass(frozen=True)
class DispatchInvocation:
    """One step of a resolved schedule: the target and the dispatcher argument for each of its parameters."""

    target: DispatchTarget
    dispatcher_argument_indices: tuple[int, ...]

    @property
    def argument_bindings(self) -> tuple[tuple[str, int], ...]:
        return tuple(zip(self.target.argument_names, self.dispatcher_argument_indices))


class ResolvedDispatcher:
    """``ttl.ResolvedDispatcher(module)``: the schedule of resolved dispatch IR — ``name``,
    ``argument_types``, ``targets`` and ``invocations`` (in order)."""

    def __init__(self, module):
        from xdsl.dialects import func

        from tilefold.ir.dispatch import DISPATCHER_ATTR, RESOLVED_ATTR, DispatchInvokeOp, DispatchTargetOp

        function = next((op for op in module.body.block.ops if isinstance(op, func.FuncOp)
                         and DISPATCHER_ATTR in op.attributes), None)
        if function is None:
            raise KernelValueError("ttl.ResolvedDispatcher(module): the module holds no dispatcher", user_location())
        if RESOLVED_ATTR not in function.attributes:
            raise KernelValueError(f"ttl.ResolvedDispatcher: the dispatch IR of {function.sym_name.data!r} has not "
                                   "been resolved; make it with op.resolve_dispatch_ir(...)", user_location())
        self.name = function.sym_name.data
        self.argument_types = tuple(function.function_type.inputs.data)
        by_symbol = {}
        for op in module.body.block.ops:
            if isinstance(op, DispatchTargetOp):
                by_symbol[op.sym_name.data] = DispatchTarget(
                    op.sym_name.data, op.identity.data, tuple(a.data for a in op.arguments.data),
                    tuple(DispatchArgument.from_text(c.data) for c in op.contracts.data))
        self.targets = tuple(by_symbol.values())
        args = list(function.body.block.args)
        self.invocations = tuple(
            DispatchInvocation(by_symbol[op.callee.root_reference.data], tuple(args.index(v) for v in op.inputs))
            for op in function.body.block.ops if isinstance(op, DispatchInvokeOp))

    def __repr__(self) -> str:
        steps = ", ".join(i.target.symbol for i in self.invocations)
        return f"ResolvedDispatcher({self.name}: {steps})"
