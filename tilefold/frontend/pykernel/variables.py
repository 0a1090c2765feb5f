"""Which local variables of a kernel need storage, where it is declared, and how wide it is.

Reads: the AST of a kernel or helper body. Writes: a :class:`VariablePlan`.

A name assigned once and used only where that assignment dominates (the same block or
blocks nested in it) stays a plain SSA value. A name assigned more than once (augmented
assignments count), or assigned inside a loop or branch and used after it, is *mutable*:
the builder gives it a rank-0 ``memref.alloca`` and turns every assignment into a
``memref.store`` and every read into a ``memref.load``.

The alloca goes into the innermost block that holds every use of the name, just before
the first statement that mentions it, the way a C++ programmer would declare the local.
It goes into a loop body only when every iteration starts by assigning the name afresh;
otherwise the value would not survive from one iteration to the next, and the alloca is
declared before the loop.

The width of a mutable variable is 64 bits if any value assigned to it is 64 bits wide
(a NOC address from ``get_noc_addr``, a ``uint64`` array element or cast, or arithmetic
on those), else 32 bits; this is a small fixed-point over the assignments.

Errors: assigning to a ``for`` loop variable, or reusing the loop variable of an
enclosing loop.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from tilefold.errors import KernelError
from tilefold.frontend.pykernel.api import ELEMENT_TYPES, DeviceFunction, InlineFunction
from tilefold.frontend.source import FunctionSource

# A place in the body: the chain of (statement index, field) pairs from the function body
# down to the block holding the statement, then (statement index, None).
Site = tuple[tuple[int, str | None], ...]

_SCOPED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_LOOP_BODY = "body"


@dataclass(frozen=True)
class Reference:
    name: str
    site: Site
    kind: str          # "load", "store" or "fresh_store" (x = expr, expr not reading x)
    node: ast.AST


@dataclass
class VariablePlan:
    """What the builder needs to know about the local names of one function body."""

    mutable: set[str] = field(default_factory=set)
    locals: set[str] = field(default_factory=set)          # every name stored in the body
    loop_variables: dict[str, ast.For] = field(default_factory=dict)
    allocas: dict[tuple[Site, int], list[str]] = field(default_factory=dict)   # (block, index) -> names
    widths: dict[str, int] = field(default_factory=dict)   # mutable name -> 32 or 64
    unassigned: set[int] = field(default_factory=set)      # ids of Name loads no assignment reaches
    value_widths: dict[str, int] = field(default_factory=dict)
    arrays: dict[str, int] = field(default_factory=dict)   # array name -> element width


def _names_in(expr: ast.AST):
    """Name nodes of an expression, not descending into nested scopes."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            yield node
        if isinstance(node, _SCOPED):
            continue
        stack.extend(ast.iter_child_nodes(node))


class _Collector:
    def __init__(self, source: FunctionSource):
        self.source = source
        self.refs: list[Reference] = []
        self.loop_variables: dict[str, ast.For] = {}
        self.active_loops: list[ast.For] = []
        self.assignments: list[tuple[str, ast.AST, ast.AST | None]] = []   # (name, value, augmented op)

    def loads(self, expr: ast.AST | None, site: Site) -> None:
        if expr is None:
            return
        for name in _names_in(expr):
            if isinstance(name.ctx, ast.Load):
                self.refs.append(Reference(name.id, site, "load", name))

    def store(self, target: ast.AST, value: ast.AST | None, site: Site, augmented: ast.AST | None = None) -> None:
        if isinstance(target, ast.Name):
            reads_itself = augmented is not None or (
                value is not None and any(n.id == target.id for n in _names_in(value)))
            kind = "store" if reads_itself else "fresh_store"
            if augmented is not None:
                self.refs.append(Reference(target.id, site, "load", target))
            self.refs.append(Reference(target.id, site, kind, target))
            self.assignments.append((target.id, value, augmented))
        else:
            # a[i] = v reads a and i; tuple targets are rejected by the builder
            self.loads(target, site)

    def block(self, body: list[ast.stmt], path: Site) -> None:
        for index, stmt in enumerate(body):
            self.statement(stmt, path, index)

    def statement(self, stmt: ast.stmt, path: Site, index: int) -> None:
        site = path + ((index, None),)
        if isinstance(stmt, ast.Assign):
            self.loads(stmt.value, site)
            for target in stmt.targets:
                self.store(target, stmt.value, site)
        elif isinstance(stmt, ast.AugAssign):
            self.loads(stmt.value, site)
            self.store(stmt.target, stmt.value, site, augmented=stmt.op)
        elif isinstance(stmt, ast.AnnAssign):
            self.loads(stmt.value, site)
            if stmt.value is not None:
                self.store(stmt.target, stmt.value, site)
        elif isinstance(stmt, ast.For):
            self.loads(stmt.iter, site)
            if isinstance(stmt.target, ast.Name):
                name = stmt.target.id
                for outer in self.active_loops:
                    if isinstance(outer.target, ast.Name) and outer.target.id == name:
                        raise self.source.error(
                            stmt.target, f"this for loop reuses {name!r}, the loop variable of the enclosing loop "
                                         f"at line {outer.lineno}; give the inner loop variable another name")
                self.loop_variables.setdefault(name, stmt)
            self.active_loops.append(stmt)
            self.block(stmt.body, path + ((index, _LOOP_BODY),))
            self.active_loops.pop()
            self.block(stmt.orelse, path + ((index, "orelse"),))
        elif isinstance(stmt, ast.While):
            self.loads(stmt.test, path + ((index, "test"), (0, None)))
            self.block(stmt.body, path + ((index, _LOOP_BODY),))
            self.block(stmt.orelse, path + ((index, "orelse"),))
        elif isinstance(stmt, ast.If):
            self.loads(stmt.test, site)
            self.block(stmt.body, path + ((index, "then"),))
            self.block(stmt.orelse, path + ((index, "else"),))
        elif isinstance(stmt, (ast.Expr, ast.Return)):
            self.loads(stmt.value, site)
        # every other statement is rejected by the builder when it reaches it


def _common_prefix(sites: list[Site]) -> Site:
    prefix: list = []
    for pairs in zip(*sites):
        if any(p != pairs[0] for p in pairs):
            break
        prefix.append(pairs[0])
    return tuple(prefix)


def _declaration_point(refs: list[Reference]) -> tuple[Site, int]:
    """(block, statement index) where the alloca of a mutable name is declared."""
    sites = [r.site for r in refs]
    prefix = _common_prefix(sites)
    # the common prefix may end in a full statement site (all references in one statement)
    if prefix and prefix[-1][1] is None:
        prefix = prefix[:-1]
    for depth, (index, fieldname) in enumerate(prefix):
        if fieldname != _LOOP_BODY:
            continue
        inner = [r for r in refs if len(r.site) > depth + 1]
        first = min(r.site[depth + 1][0] for r in inner)
        first_refs = [r for r in inner if r.site[depth + 1][0] == first]
        if not all(r.kind == "fresh_store" and len(r.site) == depth + 2 for r in first_refs):
            return prefix[:depth], index
    depth = len(prefix)
    return prefix, min(r.site[depth][0] for r in refs)


class _Widths:
    """Bit width of expressions: 0 for a constant (it takes the width of its context),
    1 for a boolean, 32 or 64."""

    def __init__(self, source: FunctionSource, local_names: set[str], widths: dict[str, int] | None = None):
        self.source = source
        self.local_names = local_names
        self.widths: dict[str, int] = dict(widths or {})
        self.arrays: dict[str, int] = {}

    def static(self, node: ast.AST):
        """The object a name or attribute chain refers to outside the function, if any."""
        if isinstance(node, ast.Name):
            return None if node.id in self.local_names else self.source.lookup(node.id)
        if isinstance(node, ast.Attribute):
            base = self.static(node.value)
            return getattr(base, node.attr, None) if base is not None else None
        return None

    def of(self, node: ast.AST, depth: int = 0) -> int:
        if isinstance(node, ast.Constant):
            return 0
        if isinstance(node, ast.Name):
            return self.widths.get(node.id, 0)
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Name) and node.value.id in self.arrays:
                return self.arrays[node.value.id]
            return 32
        if isinstance(node, ast.BinOp):
            return max(self.of(node.left, depth), self.of(node.right, depth))
        if isinstance(node, ast.UnaryOp):
            return 1 if isinstance(node.op, ast.Not) else self.of(node.operand, depth)
        if isinstance(node, (ast.Compare, ast.BoolOp)):
            return 1
        if isinstance(node, ast.IfExp):
            return max(self.of(node.body, depth), self.of(node.orelse, depth))
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        return 32

    def call(self, node: ast.Call, depth: int) -> int:
        callee = self.static(node.func)
        if isinstance(callee, DeviceFunction):
            if callee.kind in ELEMENT_TYPES:
                return ELEMENT_TYPES[callee.kind]
            if callee.api is not None:
                return 64 if callee.api.result == "u64" else 32
            return 32
        if callee in (min, max):
            return max([self.of(a, depth) for a in node.args] or [32])
        if isinstance(callee, InlineFunction) and depth < 8:
            positional = [self.of(a, depth) for a in node.args]
            keywords = {k.arg: self.of(k.value, depth) for k in node.keywords if k.arg}
            return helper_result_width(callee, positional, keywords, depth + 1)
        return 32

    def array_element(self, value: ast.AST) -> int | None:
        """Element width when ``value`` is ``array(uint32|uint64, n)``."""
        if isinstance(value, ast.Call) and value.args:
            callee, dtype = self.static(value.func), self.static(value.args[0])
            if isinstance(callee, DeviceFunction) and callee.kind == "array" and \
                    isinstance(dtype, DeviceFunction) and dtype.kind in ELEMENT_TYPES:
                return ELEMENT_TYPES[dtype.kind]
        return None

    def solve(self, assignments, depth: int) -> None:
        """Fixed point of the widths of the assigned names (widths only grow)."""
        for name, value, _op in assignments:
            element = self.array_element(value) if value is not None else None
            if element is not None:
                self.arrays[name] = element
        for _ in range(16):
            changed = False
            for name, value, _op in assignments:
                old = self.widths.get(name, 0)
                width = max(old, self.of(value, depth) if value is not None else 0)
                if width != old:
                    self.widths[name] = width
                    changed = True
            if not changed:
                break


def helper_result_width(helper: InlineFunction, positional: list[int], keywords: dict[str, int],
                        depth: int = 0) -> int:
    """Width of what an @inline helper returns, given the widths of its arguments."""
    try:
        source = helper.cache.get("source") or FunctionSource.of(helper.python_function, "helper")
        helper.cache["source"] = source
        params = [a.arg for a in (*source.tree.args.args, *source.tree.args.kwonlyargs)]
        widths = {**dict(zip(params, positional)), **{k: w for k, w in keywords.items() if k in params}}
        plan = analyse(source, params, widths, depth)
    except KernelError:
        return 32     # the builder reports the problem when it inlines the helper
    returns = [stmt.value for stmt in ast.walk(source.tree) if isinstance(stmt, ast.Return) and stmt.value]
    widths = _Widths(source, plan.locals, plan.value_widths)
    widths.arrays = plan.arrays
    return max((widths.of(v, depth) for v in returns), default=32)


def _reaches(store: Site, load: Site) -> bool:
    """Can control reach ``load`` after passing ``store``: textually later, or around a loop."""
    in_loop = False
    for a, b in zip(store, load):
        if a == b:
            in_loop = in_loop or a[1] == _LOOP_BODY
            continue
        if a[0] != b[0]:
            return a[0] < b[0] or in_loop
        if {a[1], b[1]} == {_LOOP_BODY, "test"}:      # a while loop: the body runs before the next test
            return True
        return in_loop
    return in_loop


def analyse(source: FunctionSource, params: list[str] = (), param_widths: dict[str, int] | None = None,
            depth: int = 0) -> VariablePlan:
    """The plan for the body of ``source``; ``params`` are assigned on entry (helpers)."""
    collector = _Collector(source)
    collector.block(source.tree.body, ())
    refs_by_name: dict[str, list[Reference]] = {}
    for ref in collector.refs:
        refs_by_name.setdefault(ref.name, []).append(ref)

    plan = VariablePlan(loop_variables=collector.loop_variables)
    for name, refs in refs_by_name.items():
        stores = [r for r in refs if r.kind != "load"]
        loads = [r for r in refs if r.kind == "load"]
        if name in collector.loop_variables and (stores or name in params):
            loop = collector.loop_variables[name]
            node = stores[0].node if stores else loop.target
            raise source.error(node, f"{name!r} is the loop variable of the for loop at line {loop.lineno}; "
                                     f"assign to a variable with another name")
        if name in params:
            plan.locals.add(name)
            if stores:
                plan.mutable.add(name)
            continue
        if not stores:
            continue
        plan.locals.add(name)
        for load in loads:
            if not any(_reaches(s.site, load.site) for s in stores):
                plan.unassigned.add(id(load.node))
        if len(stores) > 1:
            plan.mutable.add(name)
            continue
        block, index = stores[0].site[:-1], stores[0].site[-1][0]
        for load in loads:
            if load.site[:len(block)] != block or load.site[len(block)][0] <= index:
                plan.mutable.add(name)
                break

    for name in sorted(plan.mutable - set(params)):
        block, index = _declaration_point(refs_by_name[name])
        plan.allocas.setdefault((block, index), []).append(name)

    widths = _Widths(source, plan.locals | set(params), param_widths)
    widths.solve(collector.assignments, depth)
    plan.value_widths = widths.widths
    plan.arrays = widths.arrays
    plan.widths = {name: 64 if widths.widths.get(name, 0) == 64 else 32 for name in plan.mutable}
    return plan
