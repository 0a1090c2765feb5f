"""An operation body without kernel functions: its statements are split into three kernels.

TT-Lang lets an operation's body use its dataflow buffers directly (reserve, copy in, store,
copy out) without ``@ttl.datamovement()`` / ``@ttl.compute()`` functions. This module reads the
body's source and writes an equivalent function whose dataflow statements sit in three nested
kernel functions, in the order they appear:

* a statement that copies from a tensor slice into a block goes to the reader;
* a statement that copies a block into a tensor slice goes to the writer;
* a pipe receive (``ttl.copy(pipe, blk)``, ``net.if_dst(f)`` and the function ``f`` it runs) goes
  to the reader, a pipe send (``ttl.copy(blk, pipe)``, ``net.if_src(f)`` and ``f``) to the writer,
  so sends and receives sit in different data movement kernels, as TT-Lang keeps its pipe senders
  apart; a statement that both sends and receives, or a pipe copy of a block another kernel
  holds, is an error at its line;
* a statement that uses a block variable goes to the kernel that acquired it (``blk.push()``), and
  one that reads a name a kernel's statement assigned (a block value, a copy's handle) to that kernel;
* any other statement that acquires, stores or pops a block, or calls a block function
  (``ttl.block.fill(...)``, ``ttl.math.exp(...)``), goes to the compute kernel;
* ``ttl.reset_dataflow_buffers()`` (and ``reset_dfbs`` / ``reconfigure_dfbs``) goes to every kernel;
* ``ttl.call_extern_func(..., kernel=ttl.KernelKind.X)`` (or a name holding a kind or a
  ``ttl.Kernel``) goes to the kernel of that kind (the reader for data movement), with a tuple of
  kinds to each; without ``kernel=`` it is placed as any other statement;
* the remaining statements (buffer creation, shapes, constants) stay in the body.

A block acquired by ``x = dfb.reserve()`` / ``dfb.wait()`` goes to the kernel of the first later
statement that uses ``x``. The nested functions keep the user's lines, so errors point at them.
Reads: the operation function's source (:mod:`tilefold.frontend.source`). Writes: a new function
object (same file; it reads the operation's module and closure as they are at each call,
:func:`rebind`) and the parsed trees of its kernels (:func:`register_tree`).
"""

from __future__ import annotations

import ast
import copy
import re
import types

from tilefold.errors import KernelError, SourceLocation
from tilefold.frontend.source import FunctionSource, register_tree
from tilefold.frontend.ttl.inlining import function_scope, user_name

ACQUIRE = {"reserve", "wait"}
KINDS = (("read", "datamovement"), ("compute", "compute"), ("write", "datamovement"))
_DECORATOR = {"datamovement": "__tilefold_ttl_datamovement__", "compute": "__tilefold_ttl_compute__"}


def is_acquire(node: ast.AST) -> bool:
    """Whether ``node`` is a call ``x.reserve()`` / ``x.wait()``."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ACQUIRE


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _is_kernel_def(node: ast.AST) -> bool:
    if not isinstance(node, ast.FunctionDef):
        return False
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Attribute) and target.attr in ("compute", "datamovement"):
            return True
    return False


PIPE_GUARDS = {"if_src": "write", "if_dst": "read"}
_SIDE = {"write": "send", "read": "receive"}


def _called_name(f: ast.expr) -> str | None:
    """The name a call's function expression ends in (``ttl.copy`` → ``copy``), as its module
    wrote it: a name an inlined operation read from its own module carries the inliner's prefix."""
    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
    return user_name(name) if name is not None else None


def _is_extern_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return _called_name(f) == "call_extern_func"


_SELECTED = {"COMPUTE": "compute", "DATA_MOVEMENT": "read"}


def _kind_of(expr: ast.expr, pipes: Pipes) -> str | None:
    """The ``ttl.KernelKind`` member (``COMPUTE`` / ``DATA_MOVEMENT``) an expression names: written
    out, a name of the operation's scope holding one, or a name the body bound to one."""
    from tilefold.frontend.ttl.kernels import KernelKind

    if isinstance(expr, ast.Attribute) and expr.attr in _SELECTED:
        return expr.attr
    if isinstance(expr, ast.Name):
        if expr.id in pipes.kind_aliases:
            return pipes.kind_aliases[expr.id]
        value = pipes.scope.get(expr.id)
        return value.name if isinstance(value, KernelKind) else None
    return None


def _made_kernel(value: ast.expr, pipes: Pipes) -> str | None:
    """The kind of ``ttl.Kernel(kind)`` (or ``kind=``) written as ``value``, else None."""
    if not (isinstance(value, ast.Call) and _called_name(value.func) == "Kernel"):
        return None
    kinds = list(value.args) + [kw.value for kw in value.keywords if kw.arg == "kind"]
    return _kind_of(kinds[0], pipes) if len(kinds) == 1 else None


def _body_bindings(tree: ast.FunctionDef, pipes: Pipes) -> None:
    """The body's ``name = ttl.Kernel(kind)`` statements (each one a kernel of its own, by the line
    it is made at) and ``name = ttl.KernelKind.X`` aliases, in the order they run."""
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            continue
        name = stmt.targets[0].id
        kind = _made_kernel(stmt.value, pipes)
        if kind is not None:
            pipes.declared_kernels.setdefault(name, []).append((stmt.lineno, kind))
        elif (alias := _kind_of(stmt.value, pipes)) is not None:
            pipes.kind_aliases[name] = alias


def _selection_items(item: ast.expr) -> list[ast.expr]:
    """The selectors of ``kernel=item``: a tuple's, or those ``|`` joins (``COMPUTE | DATA_MOVEMENT``)."""
    if isinstance(item, ast.Tuple):
        return [i for e in item.elts for i in _selection_items(e)]
    if isinstance(item, ast.BinOp) and isinstance(item.op, ast.BitOr):
        return _selection_items(item.left) + _selection_items(item.right)
    return [item]


def _selected(item: ast.expr, pipes: Pipes) -> tuple[str, bool] | None:
    """The kernel one selector of ``kernel=`` names, and whether it names only a kind (any kernel
    of it): ``ttl.KernelKind.X`` (a data movement kind is the reader), or a ``ttl.Kernel`` (of the
    operation's scope, made in the body, or written in the call): the first data movement
    ``ttl.Kernel`` selected is the reader, the second the writer; a third is an error, a node runs
    two data movement kernels."""
    from tilefold.frontend.ttl.kernels import Kernel

    kind = _kind_of(item, pipes)
    if kind is not None:
        return _SELECTED[kind], True
    made = _made_kernel(item, pipes)
    if made is not None:
        kind, identity, label = made, ("call", item.lineno, item.col_offset), "ttl.Kernel(...)"
    elif isinstance(item, ast.Name) and item.id in pipes.declared_kernels:
        line, kind = max((d for d in pipes.declared_kernels[item.id] if d[0] <= item.lineno),
                         default=pipes.declared_kernels[item.id][0])
        identity, label = ("body", item.id, line), item.id
    elif isinstance(item, ast.Name) and isinstance(pipes.scope.get(item.id), Kernel):
        value = pipes.scope[item.id]
        kind, identity, label = value.kind.name, ("object", id(value)), item.id
    else:
        return None
    if kind != "DATA_MOVEMENT":
        return _SELECTED[kind], False
    chosen = pipes.data_movement_kernels
    if identity not in chosen:
        if len(chosen) == 2:
            raise KernelError(f"kernel={label} is the third data movement ttl.Kernel this operation selects, but a "
                              "node runs two data movement kernels (a reader and a writer); select one of the other "
                              "two", SourceLocation(pipes.file, item.lineno))
        chosen.append(identity)
    return ("read", "write")[chosen.index(identity)], False


def _selections(stmt: ast.stmt, pipes: Pipes) -> list[tuple[ast.Call, list[tuple[str, bool]]]]:
    """Each external call of ``stmt`` with ``kernel=``, and the kernels its selectors name (see
    :func:`_selected`)."""
    found = []
    for node in ast.walk(stmt):
        if _is_extern_call(node):
            for kw in node.keywords:
                if kw.arg == "kernel":
                    picked = [k for k in (_selected(i, pipes) for i in _selection_items(kw.value)) if k is not None]
                    found.append((node, picked))
    return found


def _extern_kernels(stmt: ast.stmt, pipes: Pipes) -> frozenset[str] | None:
    """The kernels the external calls of ``stmt`` select with ``kernel=ttl.KernelKind.X``, a
    ``ttl.Kernel`` or a tuple of them (see :func:`_selected`); None when none says."""
    found = {kernel for _, picked in _selections(stmt, pipes) for kernel, _ in picked}
    return frozenset(found) or None


def _uses_dataflow(stmt: ast.stmt) -> bool:
    for node in ast.walk(stmt):
        if is_acquire(node) or _is_extern_call(node) or _computes_block(node):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and (node.func.attr in ("copy", "copy_tensor_page") or node.func.attr in PIPE_GUARDS):
            return True
    return False


def _computes_block(node: ast.AST) -> bool:
    """A call of a block function, ``ttl.block.fill(...)`` / ``ttl.math.exp(...)``: compute work."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and isinstance(node.func.value, ast.Attribute) and node.func.value.attr in ("block", "math")


class Pipes:
    """What the body says about pipes: the functions ``net.if_src`` / ``net.if_dst`` run (name ->
    kernel), and the names that hold pipes or nets (the parameters of those functions, names bound
    to ``ttl.Pipe(...)`` / ``ttl.PipeNet(...)``, and names of the operation's scope holding one);
    and about kernel selectors: the ``ttl.Kernel`` objects and ``ttl.KernelKind`` names it binds,
    and which data movement kernels its calls have selected (see :func:`_selected`)."""

    def __init__(self, tree: ast.FunctionDef, file: str, scope: dict):
        from tilefold.frontend.ttl.pipes import Pipe, PipeNet

        self.file = file
        self.scope = scope
        # ttl.Kernel objects made in the body (name -> [(line, kind)]), names bound to a ttl.KernelKind,
        # and the data movement kernels selected so far
        self.declared_kernels: dict[str, list] = {}
        self.kind_aliases: dict[str, str] = {}
        self.data_movement_kernels: list = []
        _body_bindings(tree, self)
        self.callbacks: dict[str, str] = {}
        self.names = {k for k, v in scope.items() if isinstance(v, (Pipe, PipeNet))
                      or isinstance(v, (list, tuple)) and v and all(isinstance(i, (Pipe, PipeNet)) for i in v)}
        defs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PIPE_GUARDS \
                    and node.args:
                kind, body = PIPE_GUARDS[node.func.attr], node.args[0]
                if isinstance(body, ast.Name):
                    if self.callbacks.get(body.id, kind) != kind:
                        raise KernelError(f"{body.id}() is run both by net.if_src and by net.if_dst; in a body without "
                                          "kernel functions sends go to the writer and receives to the reader kernel: "
                                          "give each its own function", SourceLocation(file, node.lineno))
                    self.callbacks[body.id] = kind
                    if body.id in defs:
                        self.names |= {a.arg for a in defs[body.id].args.args[:1]}
                elif isinstance(body, ast.Lambda):
                    self.names |= {a.arg for a in body.args.args[:1]}
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                f = node.value.func
                if _called_name(f) in ("Pipe", "PipeNet"):
                    self.names |= {t.id for t in node.targets if isinstance(t, ast.Name)}

    def _is_pipe(self, node: ast.expr) -> bool:
        while isinstance(node, (ast.Subscript, ast.Attribute)):
            node = node.value
        return isinstance(node, ast.Name) and node.id in self.names

    def direction(self, stmt: ast.stmt) -> tuple[str, ast.AST] | None:
        """("write", node) for a statement that sends over a pipe, ("read", node) for one that
        receives, None for one that does neither; both is an error at the statement's line."""
        if isinstance(stmt, ast.FunctionDef) and stmt.name in self.callbacks:
            return self.callbacks[stmt.name], stmt
        found: dict[str, ast.AST] = {}
        for node in ast.walk(stmt):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr in PIPE_GUARDS:
                found.setdefault(PIPE_GUARDS[node.func.attr], node)
            elif node.func.attr == "copy" and len(node.args) == 2:
                if self._is_pipe(node.args[1]):
                    found.setdefault("write", node)
                elif self._is_pipe(node.args[0]):
                    found.setdefault("read", node)
        if len(found) > 1:
            raise KernelError("this statement both sends over a pipe (line "
                              f"{found['write'].lineno}) and receives from one (line {found['read'].lineno}); in a body "
                              "without kernel functions sends go to the writer and receives to the reader data movement "
                              "kernel: write them as separate statements", SourceLocation(self.file, stmt.lineno))
        return next(iter(found.items()), None)


def warn_undecorated_kernels(tree: ast.FunctionDef, file: str) -> None:
    """A function of the body that acquires blocks or copies, has no decorator and is never named
    again (so never called, nor passed to a pipe net) looks like a kernel whose decorator was
    forgotten: it never runs. A warning at its ``def``."""
    from tilefold.errors import warn_at

    used = {n.id for s in tree.body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and not stmt.decorator_list and stmt.name not in used \
                and any(_uses_dataflow(s) for s in stmt.body):
            warn_at(f"{stmt.name}() uses dataflow buffers but has no @ttl.compute() / @ttl.datamovement() decorator "
                    "and is never called, so it never runs; decorate it to make it a kernel",
                    SourceLocation(file, stmt.lineno))


def defines_kernels(tree: ast.FunctionDef) -> bool:
    """Whether the body defines a kernel function (``@ttl.compute()`` / ``@ttl.datamovement()``)."""
    return any(_is_kernel_def(n) for n in ast.walk(tree))


def needs_split(tree: ast.FunctionDef) -> bool:
    """True for a body that acquires blocks itself (or marks a point where buffers start over) and
    defines no kernel function."""
    if defines_kernels(tree):
        return False
    return any(_uses_dataflow(s) or _is_boundary(s) for s in tree.body)


def _copy_direction(stmt: ast.stmt, tensors: set[str]) -> str | None:
    """"read" / "write" for a statement holding ttl.copy(tensor[...], blk) / ttl.copy(blk, tensor[...])."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "copy_tensor_page" and node.args and isinstance(node.args[0], ast.Name) \
                and node.args[0].id in tensors:
            return "read"
        for direction, _, _ in _tensor_copy_ends(node, tensors):
            return direction
    return None


def _tensor_copy_ends(node: ast.AST, tensors: set[str]):
    """For a call ``ttl.copy(src, dst)``, each end that slices a tensor: ("read" for the source /
    "write" for the destination, the tensor's name, the subscript)."""
    if not (_is_copy(node) and len(node.args) == 2):
        return
    for direction, arg in zip(("read", "write"), node.args):
        if isinstance(arg, ast.Subscript) and isinstance(arg.value, ast.Name) and arg.value.id in tensors:
            yield direction, arg.value.id, arg


def _bound_block(stmt: ast.stmt) -> str | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and is_acquire(stmt.value):
        return stmt.targets[0].id
    return None


SPLIT = "split"         # a loop or branch whose body holds statements of several kernels
EVERY = "every"         # a point every kernel runs (ttl.reset_dataflow_buffers(), :mod:`.dfb_boundaries`)
_BOUNDARIES = {"reset_dataflow_buffers", "reset_dfbs", "reset_all_dfbs", "reconfigure_dfbs"}


def _is_boundary(stmt: ast.stmt) -> bool:
    """``ttl.reset_dataflow_buffers()`` / ``ttl.reset_dfbs(...)`` / ``ttl.reconfigure_dfbs(...)``."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    f = stmt.value.func
    return _called_name(f) in _BOUNDARIES
_COMPOUND = (ast.For, ast.While, ast.If)


def _assign(body: list[ast.stmt], tensors: set[str], pipes: Pipes, owner: dict | None = None,
            pending: dict | None = None, inner: dict | None = None) -> list[str | None]:
    """The kernel of each statement ("read" / "compute" / "write"), None for the host (or, inside a
    loop or branch, for a statement every kernel that runs the loop repeats), :data:`SPLIT` for a
    loop or branch whose statements go to several kernels (their kinds in ``inner[id(stmt)]``)."""
    top = owner is None
    owner = {} if owner is None else owner
    pending = {} if pending is None else pending
    inner = {} if inner is None else inner
    kinds: list[str | None] = [None] * len(body)
    for i, stmt in enumerate(body):
        bound = _bound_block(stmt)
        if bound is not None:
            pending[bound] = (kinds, i)
            continue
        if _is_boundary(stmt):
            kinds[i] = EVERY
            continue
        if not _uses_dataflow(stmt) and not (_names(stmt) & (owner.keys() | pending.keys())):
            continue
        if isinstance(stmt, _COMPOUND) \
                and not (isinstance(stmt, (ast.For, ast.While)) and stmt.orelse):
            parts = [_assign(stmt.body, tensors, pipes, owner, pending, inner)]
            if isinstance(stmt, ast.If) and stmt.orelse:
                parts.append(_assign(stmt.orelse, tensors, pipes, owner, pending, inner))
            found = {k for part in parts for k in part if k is not None}
            if len(found) > 1 or SPLIT in found or EVERY in found:
                kinds[i] = SPLIT
                inner[id(stmt)] = parts
                continue
            if found:
                kinds[i] = found.pop()
                continue
        used = _names(stmt)
        piped = pipes.direction(stmt)
        kind = piped[0] if piped else _copy_direction(stmt, tensors)
        if not piped and kind in ("read", "write"):      # a block the other data movement kernel holds: copied there
            kind = _data_movement_owner(stmt, used, owner, kind)
        if piped:
            _check_held_elsewhere(stmt, piped, used, owner, pipes.file)
        if kind is None and _uses_raw_elements(stmt):   # element reads and writes run in a data movement kernel
            kind = _data_movement_owner(stmt, used, owner, "read")
        if kind is not None:
            _check_selections_inside(stmt, kind, pipes)
        selected = _extern_kernels(stmt, pipes) if kind is None else None
        if selected is not None:           # ttl.call_extern_func(..., kernel=...): the kernels it names
            kind = next(iter(selected)) if len(selected) == 1 else selected
        if kind is None:
            kind = next((owner[n] for n in used if n in owner), "compute")
        kinds[i] = kind
        if isinstance(stmt, (ast.Assign, ast.AugAssign)) and isinstance(kind, str):
            # a value lives in the kernel that computed it (a block value, a copy's handle, an
            # element read): a statement reading it runs there too
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            owner.update({n.id: kind for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)})
        for name in [n for n in pending if n in used]:
            where, j = pending.pop(name)
            where[j] = kind
            owner[name] = kind
        for node in ast.walk(stmt):
            if isinstance(node, ast.withitem) and isinstance(node.optional_vars, ast.Name):
                owner[node.optional_vars.id] = kind
    if top:
        for where, j in pending.values():
            where[j] = "compute"
    return kinds


def _data_movement_owner(stmt: ast.stmt, used: set[str], owner: dict, default: str) -> str:
    """The data movement kernel holding a name ``stmt`` reads and does not bind itself (the first
    by name), else ``default``."""
    return next((owner[n] for n in sorted(used - _stored(stmt)) if owner.get(n) in ("read", "write")), default)


def _check_selections_inside(stmt: ast.stmt, kind: str, pipes: Pipes) -> None:
    """An external call inside a statement that runs in ``kind`` (a block that kernel acquires,
    ``with dfb.wait() as b: ...``) must select that kernel only (a data movement kind: either data
    movement kernel): it cannot run where else it says."""
    for call, picked in _selections(stmt, pipes):
        other = sorted({k for k, any_of_kind in picked if k != kind and not (any_of_kind and _ROLE[k] == _ROLE[kind])})
        if other:
            names = " and ".join(_KERNEL[k] for k in other)
            raise KernelError(f"this ttl.call_extern_func selects the {names} kernel{'s' if len(other) > 1 else ''}, "
                              f"but it is inside a statement the {_KERNEL[kind]} kernel runs (it acquires or moves "
                              "the block there); in a body without kernel functions it runs where its statement "
                              f"does: move the call out of the with, or select only the {_KERNEL[kind]} kernel",
                              SourceLocation(pipes.file, call.lineno))


_ROLE = {"read": "data movement", "write": "data movement", "compute": "compute"}


_RAW_ELEMENT_CALLS = {"raw_element_read", "raw_element_write", "read_index"}


def _uses_raw_elements(stmt: ast.stmt) -> bool:
    return any(isinstance(n, ast.Call) and _called_name(n.func) in _RAW_ELEMENT_CALLS for n in ast.walk(stmt))


def _is_copy(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "copy"


def _check_held_elsewhere(stmt, piped, used, owner, file) -> None:
    """A pipe copy of a block that another kernel acquired (``p = dfb.reserve()`` stored by the
    compute kernel, then sent) cannot be placed: the copy runs in a data movement kernel."""
    kind, node = piped
    for name in sorted(used):
        if owner.get(name, kind) != kind and name not in _stored(stmt):
            raise KernelError(f"the pipe {_SIDE[kind]} here uses block {name!r}, which the {_KERNEL[owner[name]]} "
                              f"kernel holds; in a body without kernel functions a pipe {_SIDE[kind]} runs in the "
                              f"{_KERNEL[kind]} kernel: {_ADVICE[kind]}", SourceLocation(file, node.lineno))


_KERNEL = {"read": "reader", "write": "writer", "compute": "compute"}
_ADVICE = {"write": "push the block and send a block waited from its buffer (with buf.wait() as b: "
                    "ttl.copy(b, pipe))",
           "read": "receive into a block reserved for the receive and wait for it where it is used"}


def _stored(stmt: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} | \
        {n.arg for n in ast.walk(stmt) if isinstance(n, ast.arg)}


def _has(body: list[ast.stmt], kinds: list[str | None], part: str, inner: dict) -> bool:
    for stmt, k in zip(body, kinds):
        if k == part or k == EVERY or isinstance(k, frozenset) and part in k or k == SPLIT and any(_has(b, ks, part, inner)
                                          for b, ks in zip(_bodies(stmt), inner[id(stmt)])):
            return True
    return False


def _tensor_copies(stmt: ast.stmt, tensors: set[str]) -> list[tuple[str, str, str]]:
    """The ``ttl.copy`` calls of ``stmt`` between a block and a tensor slice: ("read" / "write", the
    tensor, the slice as written — an inlined operation's names as its author wrote them)."""
    out = []
    for node in ast.walk(stmt):
        for direction, tensor, arg in _tensor_copy_ends(node, tensors):
            parts = arg.slice.elts if isinstance(arg.slice, ast.Tuple) else [arg.slice]
            where = re.sub(r"__tf_call\d+_", "", ", ".join(ast.unparse(p) for p in parts))
            out.append((direction, tensor, where))
    return out


def _in_order(body: list[ast.stmt], kinds: list, inner: dict):
    """The data movement statements of ``body`` in program order, with the kernel each goes to."""
    for stmt, kind in zip(body, kinds):
        if kind == SPLIT:
            for part, part_kinds in zip(_bodies(stmt), inner[id(stmt)]):
                yield from _in_order(part, part_kinds, inner)
        elif kind in ("read", "write"):
            yield stmt, kind


def _warn_unordered_rereads(body: list[ast.stmt], kinds: list, inner: dict, tensors: set[str], file: str) -> None:
    """A tensor slice the writer kernel writes and a later statement reads back into the reader
    kernel (an operation composed through a tensor: ``add_one(x, t)`` then ``add_one(t, y)``): the
    two kernels run at once and nothing orders the read after the write, so the read may see the
    tensor as it was — a warning at the read."""
    from tilefold.errors import warn_at

    written: dict[tuple[str, str], ast.stmt] = {}
    for stmt, kind in _in_order(body, kinds, inner):
        for direction, tensor, where in _tensor_copies(stmt, tensors):
            if direction == "write" and kind == "write":
                written.setdefault((tensor, where), stmt)
            elif direction == "read" and kind == "read" and (tensor, where) in written:
                first = written[(tensor, where)]
                warn_at(f"{tensor}[{where}] is read here by the reader kernel after line {first.lineno} wrote it from "
                        "the writer kernel; the two kernels run at once and nothing orders the read after the "
                        "write, so it may read the values from before it — pass the value through a dataflow "
                        "buffer, or call the operations one after another from the host",
                        SourceLocation(file, stmt.lineno))


def _bodies(stmt: ast.stmt) -> list[list[ast.stmt]]:
    return [stmt.body, stmt.orelse] if isinstance(stmt, ast.If) and stmt.orelse else [stmt.body]


def _part_of(body: list[ast.stmt], kinds: list[str | None], part: str, inner: dict, nested: bool) -> list[ast.stmt]:
    """The statements of ``body`` kernel ``part`` runs: its own, the loops and branches holding some
    of its own (with only those inside), and, inside a loop or branch, the statements every kernel
    repeats (scalar work such as ``base = i * rows``)."""
    out = []
    rebound = set() if nested else _stored_names([s for s, k in zip(body, kinds) if k is not None and _has([s], [k],
                                                                                                      part, inner)])
    for stmt, k in zip(body, kinds):
        if k == part or k == EVERY or (k is None and nested) or (isinstance(k, frozenset) and part in k):
            out.append(stmt)
        elif k is None and (_is_alias(stmt) or _is_start_value(stmt)) and stmt.targets[0].id in rebound:
            out.append(stmt)            # ``src = first`` / ``i = 0`` before a loop of this kernel that rebinds it
        elif k == SPLIT and _has([stmt], [k], part, inner):
            copy_ = copy.copy(stmt)
            bodies = [_part_of(b, ks, part, inner, True) or [ast.copy_location(ast.Pass(), stmt)]
                      for b, ks in zip(_bodies(stmt), inner[id(stmt)])]
            copy_.body = bodies[0]
            if len(bodies) > 1:
                copy_.orelse = bodies[1]
            out.append(copy_)
    return out


def _stored_names(stmts: list[ast.stmt]) -> set[str]:
    return {n.id for s in stmts for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _is_start_value(stmt: ast.stmt) -> bool:
    """``name = value`` computing nothing but numbers and names (``i = 0``, ``row = first * 2``): a
    host statement a kernel that changes ``name`` in a loop repeats, as its start."""
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and all(isinstance(n, (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop,
                                   ast.Load)) for n in ast.walk(stmt.value)))


def _is_alias(stmt: ast.stmt) -> bool:
    """``name = other`` or ``name = others[i]``: a host statement that only names a value, which a
    kernel rebinding ``name`` repeats."""
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and _is_buffer_ref(stmt.value))


def _is_buffer_ref(node: ast.expr) -> bool:
    """``dfb`` or an element of a list of buffers, ``buffers[0]``."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Name)


def hold_inline_blocks(stmt: ast.stmt, counter: list[int]) -> ast.stmt:
    """``ttl.copy(dfb.wait(), t[...]).wait()`` → ``with dfb.wait() as blk: ttl.copy(blk, t[...]).wait()``
    (an acquisition that is a call's argument, the object of a method call — ``dfb.reserve().store(x)``
    — or an operand of ``+``, ``-`` ...):
    a block acquired inside an expression is released at the end of its statement, once the copies
    of the statement that were not waited for (``ttl.copy(t[...], dfb.reserve())``) are done."""
    if not isinstance(stmt, ast.Expr):
        return stmt
    items = []

    class Hoist(ast.NodeTransformer):
        # in Python's order of evaluation (a method's object, then the arguments from the left;
        # inner calls before the call holding them), so blocks of one buffer are acquired in the
        # order the program asks for them: ``dfb.reserve().store(ttl.math.fill(dfb.reserve(), 1))``
        # stores into the first block
        def visit_Call(self, node):
            if isinstance(node.func, ast.Attribute):        # dfb.reserve().store(x)
                node.func.value = hoist(self.visit(node.func.value))
            else:
                node.func = self.visit(node.func)
            node.args = [hoist(self.visit(a)) for a in node.args]
            node.keywords = [self.visit(k) for k in node.keywords]
            return node

        def visit_BinOp(self, node):         # d.store(scratch.wait() + 1)
            node.left = hoist(self.visit(node.left))
            node.right = hoist(self.visit(node.right))
            return node

        def visit_UnaryOp(self, node):
            node.operand = hoist(self.visit(node.operand))
            return node

        def visit_Lambda(self, node):
            return node             # a pipe body's acquisitions belong to the body (held when it is built)

    def hoist(arg):
        if not (is_acquire(arg) and _is_buffer_ref(arg.func.value)):
            return arg
        counter[0] += 1
        items.append(ast.withitem(context_expr=arg, optional_vars=ast.copy_location(
            ast.Name(id=f"__block{counter[0]}", ctx=ast.Store()), arg)))
        return ast.copy_location(ast.Name(id=f"__block{counter[0]}", ctx=ast.Load()), arg)

    original = stmt
    stmt = Hoist().visit(copy.deepcopy(stmt))      # the kernel's tree is kept and built again
    if not items:
        return original
    held = ast.With(items=items, body=[stmt])
    held.inline_blocks = True       # the builder waits for the statement's copies before the release
    ast.copy_location(held, stmt)
    held.end_lineno, held.end_col_offset = stmt.end_lineno, stmt.end_col_offset
    return held


def _hold_all(stmt: ast.stmt, counter: list[int]) -> ast.stmt:
    """:func:`hold_inline_blocks` on ``stmt`` and on the statements of the loops, branches and
    ``with`` bodies it holds, so the kernel's tree has the blocks it releases after a statement."""
    if isinstance(stmt, (ast.For, ast.While, ast.If, ast.With)):
        stmt = copy.copy(stmt)
        stmt.body = [_hold_all(s, counter) for s in stmt.body]
        if not isinstance(stmt, ast.With):
            stmt.orelse = [_hold_all(s, counter) for s in stmt.orelse]
        return stmt
    return hold_inline_blocks(stmt, counter)


def split(function, source: FunctionSource, tree: ast.FunctionDef | None = None, values: dict | None = None):
    """A copy of ``function`` whose dataflow statements sit in reader / compute / writer kernels
    (of ``tree``, its body with operation calls inlined, when given; ``values`` are the names the
    inlined statements carry over from the callees' scopes). Call it through :func:`rebind`."""
    tree = source.tree if tree is None else tree
    tensors = {a.arg for a in tree.args.args + tree.args.kwonlyargs}
    inner: dict = {}
    kinds = _assign(tree.body, tensors, Pipes(tree, source.file, split_scope(function, values)), inner=inner)
    _warn_unordered_rereads(tree.body, kinds, inner, tensors, source.file)
    host = [s for s, k in zip(tree.body, kinds) if k is None]
    defs = []
    base = tree.name.lstrip("_") or "operation"
    for part, kind in KINDS:
        counter = [0]
        stmts = [_hold_all(s, counter) for s in _part_of(tree.body, kinds, part, inner, False)]
        if not stmts:
            continue
        name = f"{base}_{part}"
        decorator = ast.Call(func=ast.Name(id=_DECORATOR[kind], ctx=ast.Load()), args=[], keywords=[])
        fn = ast.FunctionDef(name=name, args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                                                             defaults=[]),
                             body=stmts, decorator_list=[decorator], returns=None, type_params=[])
        # inlined statements keep their callee's lines, which may come before the caller's
        first = min(stmts, key=lambda s: (s.lineno, s.col_offset))
        last = max(stmts, key=lambda s: (s.end_lineno, s.end_col_offset))
        for node in (fn, decorator, decorator.func):
            ast.copy_location(node, first)
        fn.end_lineno, fn.end_col_offset = last.end_lineno, last.end_col_offset
        register_tree(source.file, name, first.lineno, fn)
        defs.append(fn)
    outer = ast.FunctionDef(name=tree.name, args=tree.args, body=host + defs, decorator_list=[],
                            returns=None, type_params=[])
    ast.copy_location(outer, tree)
    module = _valid_ranges(ast.fix_missing_locations(ast.Module(body=[outer], type_ignores=[])))
    scope = split_scope(function, values)
    exec(compile(module, source.file, "exec"), scope)
    return scope[tree.name]


def _valid_ranges(module: ast.Module) -> ast.Module:
    """``module`` with every node's source range starting no later than it ends: statements inlined
    from another module keep their own lines, which may mix with the caller's in one node."""
    for node in ast.walk(module):
        end = (getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None))
        if None in end or not hasattr(node, "lineno"):
            continue
        if end < (node.lineno, node.col_offset):
            node.end_lineno, node.end_col_offset = node.lineno, node.col_offset
    return module


def split_scope(function, values: dict | None = None) -> dict:
    """The names a split body reads: ``function``'s module and closure as they are now, ``values``
    (the names inlined statements carry over) and the kernel decorators."""
    from tilefold.frontend.ttl import kernels

    scope = function_scope(function)
    scope.update(values or {})
    scope[_DECORATOR["datamovement"]] = lambda: lambda fn: kernels.datamovement(fn, __implicit__=True)
    scope[_DECORATOR["compute"]] = lambda: lambda fn: kernels.compute(fn, __implicit__=True)
    return scope


def rebind(body, function, values: dict | None = None):
    """The split ``body`` reading the names of ``function``'s module and closure, and ``values``,
    as they are at this call (a split is made once; a global rebound between calls is seen, as an
    operation with kernel functions sees it)."""
    new = types.FunctionType(body.__code__, split_scope(function, values), body.__name__, function.__defaults__,
                             body.__closure__)
    new.__kwdefaults__ = function.__kwdefaults__
    return new
