"""Per-thread vectors of a split-K kernel → one more element of the last thread dimension.

Reads: the statements of a ``with T.Kernel(..., threads=(n, r))`` body with two thread indices
(``tn``, ``tk``). Writes: the same statements (a rewritten copy) and the factor by which the last
thread extent grows, when the body has the split-K form::

    A_local = T.alloc_local((E,), dtype)           # a per-thread vector of E elements
    for k in T.serial(E):                          # (or T.vectorized / T.unroll)
        A_local[k] = A[... tk * E + k ...]         # tk and k only as tk * E + k
    for k in T.serial(E):
        acc[0] += A_local[k] * ...                 # a per-thread sum
    T.atomic_add(S[tn], acc[0])                    # summed over tk

Thread ``tk`` handling elements ``tk * E + k`` for k < E is the same work as ``r * E`` threads
handling one element each: the vectors become one element per thread, ``tk * E + k`` becomes
``tk`` (now of extent ``r * E``) and the loops over k disappear. Each thread's sum ``acc`` then
holds one term instead of E, and since ``acc`` is only ever cleared, added to, and summed over
``tk``, the total is the same sum (in another order). Each per-thread buffer is then at most
two element dims (``tn``, ``tk``), which is how tilefold runs threads.

Anything else (another use of ``tk`` or ``k``, a vector read outside its loops, an ``acc`` that is
read other than by the sum over ``tk``) leaves the body as written, to the per-thread rules.
"""

from __future__ import annotations

import ast
import copy
import itertools

_LOOPS = ("serial", "Serial", "unroll", "vectorized")
_ALLOCS = ("alloc_local", "alloc_var")
_TOKENS = itertools.count(1)


def _is(node, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _indexed(node, names) -> str | None:
    """``V`` when ``node`` is ``V[...]`` or ``V`` of a name in ``names``."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in names:
        return node.value.id
    if isinstance(node, ast.Name) and node.id in names:
        return node.id
    return None


class _Folder:
    def __init__(self, builder, body: list[ast.stmt], tk: str):
        self.builder, self.body, self.tk = builder, body, tk
        self.vectors: dict[str, int] = {}
        self.scalars: set[str] = set()
        self.allocs: dict[str, ast.Assign] = {}
        self.loops: list[ast.For] = []
        self.accs: set[str] = set()

    def value(self, node):
        try:
            return self.builder.expr(node)
        except Exception:   # a name bound only inside the kernel: not a constant of the form
            return None

    def find_locals(self) -> bool:
        call_of = self.builder.intrinsic_of
        for s in self.body:
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
                rule = call_of(s.value)
                if rule not in _ALLOCS:
                    continue
                name = s.targets[0].id
                self.allocs[name] = s
                if rule == "alloc_var":
                    self.scalars.add(name)
                    continue
                call = s.value
                node = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "shape"), None)
                shape = self.value(node) if node is not None else None
                shape = (shape,) if isinstance(shape, int) else shape
                if not isinstance(shape, (tuple, list)) or not all(isinstance(d, int) for d in shape):
                    return False
                if tuple(shape) in ((), (1,)):
                    self.scalars.add(name)
                elif len(shape) == 1:
                    self.vectors[name] = shape[0]
        return bool(self.vectors) and len(set(self.vectors.values())) == 1

    def product(self, node, k: str, e: int) -> bool:
        """``node`` is ``tk * E`` (either order)."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for t, c in ((node.left, node.right), (node.right, node.left)):
                if _is(t, self.tk) and _names_of(c).isdisjoint({self.tk, k}) and self.value(c) == e:
                    return True
        return False

    def split(self, node, k: str, e: int):
        """The other terms of a sum holding ``tk * E`` and ``k`` as terms, else None."""
        terms = _terms(node)
        if len(terms) < 2:
            return None
        ks = [i for i, t in enumerate(terms) if _is(t, k)]
        ps = [i for i, t in enumerate(terms) if self.product(t, k, e)]
        if len(ks) != 1 or len(ps) != 1:
            return None
        return [t for i, t in enumerate(terms) if i not in (ks[0], ps[0])]

    def pattern(self, node, k: str, e: int) -> bool:
        """``node`` is a sum with the terms ``tk * E`` and ``k``."""
        return self.split(node, k, e) is not None

    def vector_loop(self, loop: ast.For, e: int) -> bool:
        """A loop over k < E whose statements store vector elements V[k] or add into a per-thread sum,
        with k and tk only in V[k] and tk * E + k."""
        if not isinstance(loop.target, ast.Name) or loop.orelse or not isinstance(loop.iter, ast.Call):
            return False
        if self.builder.intrinsic_of(loop.iter) not in _LOOPS or len(loop.iter.args) != 1 or loop.iter.keywords:
            return False
        if self.value(loop.iter.args[0]) != e:
            return False
        k = loop.target.id
        for s in loop.body:
            if isinstance(s, ast.Assign) and len(s.targets) == 1:
                target = s.targets[0]
                if not (_indexed(target, self.vectors) and isinstance(target, ast.Subscript) and _is(target.slice, k)):
                    return False
            elif isinstance(s, ast.AugAssign) and isinstance(s.op, ast.Add):
                acc = _indexed(s.target, self.scalars)
                if acc is None or isinstance(s.target, ast.Subscript) and not (
                        isinstance(s.target.slice, ast.Constant) and s.target.slice.value == 0):
                    return False
                self.accs.add(acc)
            else:
                return False
        # every k and tk is inside V[k] or tk * E + k
        allowed = set()
        for node in ast.walk(ast.Module(body=loop.body, type_ignores=[])):
            if self.pattern(node, k, e):
                allowed |= {id(n) for t in _terms(node) if _is(t, k) or self.product(t, k, e) for n in ast.walk(t)}
            elif isinstance(node, ast.Subscript) and _indexed(node, self.vectors) and _is(node.slice, k):
                allowed.add(id(node.slice))
        for node in ast.walk(ast.Module(body=loop.body, type_ignores=[])):
            if (_is(node, k) or _is(node, self.tk)) and id(node) not in allowed:
                return False
        return True

    def find_loops(self, e: int) -> bool:
        names = set(self.vectors)
        for node in ast.walk(ast.Module(body=self.body, type_ignores=[])):
            if isinstance(node, ast.For) and _names_of(ast.Module(body=node.body, type_ignores=[])) & names:
                if any(isinstance(s, (ast.For, ast.If, ast.While, ast.With)) for s in node.body):
                    continue   # an outer loop: its vector loops are found themselves
                if not self.vector_loop(node, e):
                    return False
                self.loops.append(node)
        inside = {id(n) for loop in self.loops for n in ast.walk(loop)}
        inside |= {id(n) for a in self.allocs.values() for n in ast.walk(a)}
        watched = names | self.accs
        for node in ast.walk(ast.Module(body=self.body, type_ignores=[])):
            if isinstance(node, ast.Name) and node.id in names and id(node) not in inside:
                return False   # a vector used outside its loops
        return bool(self.loops) and self.sums_only(inside, watched)

    def sums_only(self, inside: set, watched: set) -> bool:
        """Outside the vector loops, each sum is only cleared or summed over tk, and tk appears only
        in its binding and in ``tk == 0`` conditions."""
        call_of = self.builder.intrinsic_of
        for node in ast.walk(ast.Module(body=self.body, type_ignores=[])):
            if id(node) in inside:
                continue
            if isinstance(node, ast.Assign):
                if any(_indexed(t, self.accs) for t in node.targets):
                    if not (isinstance(node.value, ast.Constant) and node.value.value == 0):
                        return False
                elif _names_of(node.value) & {self.tk} and call_of(node.value) != "get_thread_binding":
                    return False
            elif isinstance(node, ast.Call) and _names_of(node) & self.accs:
                rule = call_of(node)
                if rule == "clear" and len(node.args) == 1 and _indexed(node.args[0], self.accs):
                    continue
                if rule == "atomic_add" and len(node.args) == 2 and _indexed(node.args[1], self.accs) and \
                        self.tk not in _names_of(node.args[0]) and not _names_of(node.args[0]) & self.accs:
                    continue
                return False
            elif isinstance(node, ast.Compare) and self.tk in _names_of(node):
                if not (len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq) and _is(node.left, self.tk) and
                        isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value == 0):
                    return False
        uses = [n for n in ast.walk(ast.Module(body=self.body, type_ignores=[]))
                if isinstance(n, ast.Name) and n.id in self.accs and id(n) not in inside]
        allowed = 0
        for node in ast.walk(ast.Module(body=self.body, type_ignores=[])):
            if id(node) in inside:
                continue
            if isinstance(node, ast.Call) and self.builder.intrinsic_of(node) in ("clear", "atomic_add"):
                allowed += sum(1 for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in self.accs)
            elif isinstance(node, ast.Assign) and any(_indexed(t, self.accs) for t in node.targets):
                allowed += len(node.targets)
        tk_uses = [n for n in ast.walk(ast.Module(body=self.body, type_ignores=[]))
                   if _is(n, self.tk) and id(n) not in inside]
        tk_ok = sum(1 for n in ast.walk(ast.Module(body=self.body, type_ignores=[]))
                    if isinstance(n, ast.Compare) and id(n) not in inside and _is(n.left, self.tk)) + \
            sum(1 for n in ast.walk(ast.Module(body=self.body, type_ignores=[]))
                if isinstance(n, ast.Assign) and call_of(n.value) == "get_thread_binding" and
                any(_is(t, self.tk) for t in n.targets))
        return len(uses) == allowed and len(tk_uses) == tk_ok

    def rewrite(self, e: int) -> list[ast.stmt]:
        folder = self
        token = next(_TOKENS)   # marks the loops and allocations to rewrite in the copy of the body
        for node in self.loops + [a for name, a in self.allocs.items() if name in self.vectors]:
            node._thread_vectors = token

        class Fold(ast.NodeTransformer):
            def visit_For(self, node):
                if getattr(node, "_thread_vectors", None) != token:
                    return self.generic_visit(node)
                k = node.target.id

                class Inner(ast.NodeTransformer):
                    def visit_BinOp(self, n):
                        rest = folder.split(n, k, e)
                        if rest is not None:
                            out = ast.Name(folder.tk, ast.Load())
                            for t in reversed(rest):
                                out = ast.BinOp(self.visit(t), ast.Add(), out)
                            return ast.copy_location(out, n)
                        return self.generic_visit(n)

                    def visit_Subscript(self, n):
                        if _indexed(n, folder.vectors) and _is(n.slice, k):
                            return ast.copy_location(ast.Subscript(n.value, ast.Constant(0), n.ctx), n)
                        return self.generic_visit(n)

                return [Inner().visit(s) for s in node.body]

            def visit_Assign(self, node):
                if getattr(node, "_thread_vectors", None) == token:
                    call = node.value
                    one = ast.Tuple([ast.Constant(1)], ast.Load())
                    if call.args:
                        call.args[0] = one
                    else:
                        for kw in call.keywords:
                            if kw.arg == "shape":
                                kw.value = one
                return node

        body = [Fold().visit(s) for s in copy.deepcopy(self.body)]
        out = []
        for s in body:
            out.extend(s if isinstance(s, list) else [s])
        return [ast.fix_missing_locations(s) for s in out]


def _terms(node) -> list:
    """The terms of a chain of ``+``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _terms(node.left) + _terms(node.right)
    return [node]


def _names_of(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def fold_thread_vectors(builder, body: list[ast.stmt], tk: str) -> tuple[list[ast.stmt], int]:
    """The body with split-K per-thread vectors folded into thread ``tk`` and the factor its extent
    grows by (see the module docstring); ``(body, 1)`` when the body has another form."""
    folder = _Folder(builder, body, tk)
    if not folder.find_locals():
        return body, 1
    e = next(iter(folder.vectors.values()))
    if not folder.find_loops(e):
        return body, 1
    return folder.rewrite(e), e
