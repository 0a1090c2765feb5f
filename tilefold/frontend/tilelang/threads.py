"""Per-thread kernel bodies (``tx = T.get_thread_binding(0)``) → ``T.Parallel`` over the threads.

Reads: the statements of a ``with T.Kernel(..., threads=...)`` body that binds GPU thread
indices. Writes: the same statements, rewritten (Python AST) before they are built, so that a
kernel written for one thread runs as tile element work over all of them:

- a thread index is the index of a ``T.Parallel`` over the thread extent; each element
  statement (a store, an update, an ``alloc_var`` assignment, ``T.atomic_add`` of one element)
  that depends on thread indices is built inside ``for tx in T.Parallel(threads)`` over the
  threads it uses (a statement that uses none runs once, ``T.Parallel(1)``);
- a per-thread buffer (``T.alloc_local``, ``T.alloc_var``) gets the thread extents as leading
  dimensions, a ``(1,)`` buffer or a scalar becomes one element per thread;
- a name computed from thread indices (``row = bx * 128 + tx``) is substituted where it is used;
- a static serial loop whose body is such statements is split statement by statement; a
  statement that stores its own element per iteration, or folds into a per-thread value
  (``acc[0] += a[k] * b[tx, k]``), becomes a ``T.Parallel`` over the threads and the loop index
  (the fold a ``reduce_tile``); others stay in the serial loop, around their ``T.Parallel``;
- ``if tx == c:`` fixes tx to c in its body; other conditions on threads become element masks;
- ``T.atomic_add(S[tx], v)`` into a local or shared buffer is ``S[tx] += v`` (a fold over the
  threads that share the element).

A Tensix core has no threads: this is the same work written as tile element operations, so the
numbers are those of the per-thread program. What cannot be written this way (a per-thread
buffer or statement needing more than two element dimensions, a thread index in a T.copy
offset) stops at one line naming the statement.
"""

from __future__ import annotations

import ast
import copy

from tilefold.frontend.tilelang import api
from tilefold.frontend.tilelang.thread_vectors import fold_thread_vectors

_LOOPS = ("serial", "Serial", "unroll", "vectorized", "Pipelined")


def _names(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _intrinsic_call(node, builder) -> str | None:
    """The ``T`` intrinsic a call node names (``T.get_thread_binding`` -> ``"get_thread_binding"``)."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Name, ast.Attribute)):
        return None
    fn = node.func
    if isinstance(fn, ast.Attribute) and not isinstance(fn.value, ast.Name):
        return None
    try:
        base = builder.scope[fn.id if isinstance(fn, ast.Name) else fn.value.id] \
            if (fn.id if isinstance(fn, ast.Name) else fn.value.id) in builder.scope else \
            builder.src.lookup(fn.id if isinstance(fn, ast.Name) else fn.value.id)
        value = base if isinstance(fn, ast.Name) else getattr(base, fn.attr, None)
    except Exception:
        return None
    return getattr(value, "__tile_intrinsic__", None)


def _written(stmt: ast.stmt) -> set[str]:
    """The buffers and names a statement stores into."""
    out = set()
    for node in ast.walk(stmt):
        if isinstance(node, (ast.Name, ast.Subscript)) and isinstance(node.ctx, ast.Store):
            base = node
            while isinstance(base, ast.Subscript):
                base = base.value
            if isinstance(base, ast.Name):
                out.add(base.id)
    return out


def _read(stmt: ast.stmt) -> set[str]:
    """The names a statement reads (a stored element's own buffer only when it is updated)."""
    if isinstance(stmt, ast.Assign):
        return _names(stmt.value) | {n for t in stmt.targets if isinstance(t, ast.Subscript) for n in _names(t.slice)}
    return _names(stmt)


def _may_alias(a: ast.expr, b: ast.expr) -> bool:
    """Whether two element indices may name the same element (not when some position holds two
    different constants)."""
    a = a.elts if isinstance(a, ast.Tuple) else [a]
    b = b.elts if isinstance(b, ast.Tuple) else [b]
    return not any(isinstance(x, ast.Constant) and isinstance(y, ast.Constant) and x.value != y.value
                   for x, y in zip(a, b))


class ThreadRules:
    """The per-thread rewrite; mixed into the kernel builder (``self.simt`` is its state)."""

    simt: dict | None = None
    thread_names: set = set()   # the kernel's thread index names (for messages)

    # -- entry ---------------------------------------------------------------------------------------

    def intrinsic_of(self, node) -> str | None:
        return _intrinsic_call(node, self)

    def begin_threads(self, body: list[ast.stmt]) -> list[ast.stmt]:
        """Find the thread indices a kernel body binds (with none, element statements outside T.Parallel
        still run once, as ``T.Parallel(1)``); returns the body to build (split-K per-thread vectors
        folded into the last thread index, see :mod:`thread_vectors`)."""
        self.simt = None
        found: dict[str, int] = {}
        for node in ast.walk(ast.Module(body=body, type_ignores=[])):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and \
                    _intrinsic_call(node.value, self) == "get_thread_binding":
                args = node.value.args
                dim = args[0].value if args and isinstance(args[0], ast.Constant) else 0
                for kw in node.value.keywords:
                    if kw.arg == "dim" and isinstance(kw.value, ast.Constant):
                        dim = kw.value.value
                if not isinstance(dim, int) or isinstance(dim, bool):
                    return body
                found[node.targets[0].id] = dim
        threads = self.threads or [128]
        order = sorted(found, key=lambda n: found[n])
        self.thread_names = set(order)
        self.simt = {"vars": {n: (threads[found[n]] if found[n] < len(threads) else 1) for n in order},
                     "locals": {}, "subst": {}, "pinned": {}, "run": [], "forward": {}}
        if len(order) == 2 and found[order[1]] < len(self.threads):
            body, factor = fold_thread_vectors(self, body, order[1])
            if factor > 1:
                self.simt["vars"][order[1]] *= factor
                self.threads[found[order[1]]] *= factor
        return body

    def thread_dependent(self, node) -> set[str]:
        """The thread indices a statement or expression depends on (locals count as all threads)."""
        simt = self.simt
        out: set[str] = set()
        for name in _names(node):
            if name in simt["pinned"]:
                continue
            if name in simt["vars"]:
                out.add(name)
            elif name in simt["subst"]:
                out |= simt["subst"][name][1]
            elif name in simt["locals"]:
                out |= set(self.live_threads())
        return out

    def live_threads(self) -> list[str]:
        return [n for n in self.simt["vars"] if n not in self.simt["pinned"]]

    # -- statements ----------------------------------------------------------------------------------

    def thread_statement(self, stmt: ast.stmt) -> None:
        simt = self.simt
        if not self.joins_run(stmt):
            self.flush_threads()
            simt["forward"].clear()
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            rule = _intrinsic_call(stmt.value, self)
            if rule == "get_thread_binding":
                self.statement(stmt)   # the name still means "some thread" in block-level conditions
                return
            if rule in ("alloc_local", "alloc_var") and simt["vars"]:
                self.thread_local(stmt, name, rule)
                return
            if name in simt["locals"] and simt["locals"][name]["scalar"]:
                self.thread_element(stmt)
                return
            deps = self.thread_dependent(stmt.value)
            if deps:
                simt["subst"][name] = (self.substitute(stmt.value), deps)
                self.statement(stmt)
                return
            simt["subst"].pop(name, None)
            self.statement(stmt)
            return
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and \
                stmt.target.id in simt["locals"]:
            self.thread_element(stmt)
            return
        if self.is_element_statement(stmt):
            if self.thread_dependent(stmt) or self.stores_element(stmt):
                self.thread_element(stmt)
                return
        if isinstance(stmt, ast.If):
            self.thread_if(stmt)
            return
        if isinstance(stmt, ast.For) and self.thread_loop(stmt):
            return
        self.statement(stmt)

    def joins_run(self, stmt: ast.stmt) -> bool:
        """Whether the statement is an element statement that thread_element takes."""
        if isinstance(stmt, (ast.Assign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                info = self.simt["locals"].get(targets[0].id)
                return info is not None and info["scalar"]
        return self.is_element_statement(stmt) and (bool(self.thread_dependent(stmt)) or self.stores_element(stmt))

    def is_element_statement(self, stmt: ast.stmt) -> bool:
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            return all(isinstance(t, ast.Subscript) for t in targets) and getattr(stmt, "value", None) is not None
        if isinstance(stmt, ast.Expr):
            return _intrinsic_call(stmt.value, self) in ("atomic_add", "atomic_max", "atomic_min")
        return False

    def stores_element(self, stmt: ast.stmt) -> bool:
        return not isinstance(stmt, ast.Expr)

    def element_body(self, stmts: list[ast.stmt]) -> bool:
        """Whether every statement is an element statement (or an ``if`` of them)."""
        for s in stmts:
            if isinstance(s, ast.If):
                if not self.element_body(s.body) or not self.element_body(s.orelse):
                    return False
            elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
                if s.targets[0].id not in self.simt["locals"] and not self.thread_dependent(s.value):
                    return False
            elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
                if s.target.id not in self.simt["locals"]:
                    return False
            elif not self.is_element_statement(s):
                return False
        return True

    def thread_local(self, stmt: ast.Assign, name: str, rule: str) -> None:
        """A per-thread buffer: one copy per thread, as a local buffer with the threads leading."""
        call = stmt.value
        threads = self.live_threads()
        extents = [self.simt["vars"][t] for t in threads]
        if rule == "alloc_var":
            args = self.arguments(call, ("dtype", "init"), {"init": None, "scope": None}, "T.alloc_var")
            shape, dtype, init = (), args["dtype"], args["init"]
        else:
            args = self.arguments(call, ("shape", "dtype", "scope"), {"dtype": "float32", "scope": None},
                                  "T.alloc_local")
            shape, dtype, init = args["shape"], args["dtype"], None
            shape = tuple((shape,) if isinstance(shape, int) else shape)
        scalar = shape in ((), (1,))
        full = tuple(extents) + (() if scalar else shape)
        if not full:
            full = (1,)
        if len(full) > 2:
            raise self.error(stmt, f"{name} is a per-thread buffer of shape {shape} over threads "
                                   f"{', '.join(threads)}: that is a {len(full)}-D local buffer, and tilefold runs "
                                   "a kernel's threads as at most two dimensions of tile elements; give each thread "
                                   "one element (shape (1,)) or use fewer thread dimensions")
        self.scope[name] = self.alloc(self.fake_alloc(call, full, dtype), name, "fragment", f"T.{rule}")
        self.simt["locals"][name] = {"scalar": scalar, "threads": threads, "rank": len(shape)}
        if init is not None:
            init_stmt = ast.Assign([ast.Name(name, ast.Store())], call.keywords[0].value if call.keywords and
                                   call.keywords[0].arg == "init" else call.args[1])
            self.thread_element(ast.copy_location(init_stmt, stmt))

    def fake_alloc(self, call: ast.Call, shape: tuple, dtype) -> ast.Call:
        self.scope["__thread_dtype"] = dtype
        node = ast.Call(call.func, [ast.Constant(shape), ast.Name("__thread_dtype", ast.Load())], [])
        for n in ast.walk(node):
            ast.copy_location(n, call)
        return node

    # -- rewriting -------------------------------------------------------------------------------------

    def substitute(self, node):
        """``node`` with thread-derived names replaced by their expressions and per-thread buffers
        indexed by the threads."""
        simt = self.simt
        builder = self

        class Rewrite(ast.NodeTransformer):
            def visit_Name(self, n):
                if n.id in simt["pinned"]:
                    return ast.copy_location(ast.Constant(simt["pinned"][n.id]), n)
                if n.id in simt["subst"] and isinstance(n.ctx, ast.Load):
                    return copy.deepcopy(simt["subst"][n.id][0])
                if n.id in simt["locals"] and simt["locals"][n.id]["scalar"]:
                    return builder.local_index(n.id, [], n)
                return n

            def visit_Subscript(self, n):
                if isinstance(n.value, ast.Name) and n.value.id in simt["locals"]:
                    info = simt["locals"][n.value.id]
                    index = [self.visit(i) for i in (n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice])]
                    if info["scalar"]:
                        index = []
                    out = builder.local_index(n.value.id, index, n)
                    out.ctx = n.ctx
                    return out
                return self.generic_visit(n)

        return Rewrite().visit(copy.deepcopy(node))

    def local_index(self, name: str, index: list, node) -> ast.Subscript:
        info = self.simt["locals"][name]
        lead = []
        for t in info["threads"]:
            lead.append(ast.Constant(self.simt["pinned"][t]) if t in self.simt["pinned"] else ast.Name(t, ast.Load()))
        full = lead + index or [ast.Constant(0)]
        sub = ast.Subscript(ast.Name(name, ast.Load()),
                            ast.Tuple(full, ast.Load()) if len(full) > 1 else full[0], ast.Load())
        for n in ast.walk(sub):
            ast.copy_location(n, node)
        return sub

    def rewritten(self, stmt: ast.stmt) -> ast.stmt:
        """An element statement in its per-element form."""
        simt = self.simt
        if isinstance(stmt, ast.Expr) and _intrinsic_call(stmt.value, self) == "atomic_add" and \
                len(stmt.value.args) == 2 and isinstance(stmt.value.args[0], ast.Subscript):
            target = stmt.value.args[0]
            buf = self.scope.get(target.value.id) if isinstance(target.value, ast.Name) else None
            if buf is not None and not getattr(buf, "is_global", True):
                stmt = ast.copy_location(ast.AugAssign(ast.Subscript(target.value, target.slice, ast.Store()),
                                                       ast.Add(), stmt.value.args[1]), stmt)
        if isinstance(stmt, (ast.Assign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if any(isinstance(t, ast.Name) and t.id in simt["locals"] for t in targets):
                stmt = copy.copy(stmt)
                new = [self.local_index(t.id, [], t) if isinstance(t, ast.Name) and t.id in simt["locals"] else t
                       for t in targets]
                for t in new:
                    t.ctx = ast.Store()
                if isinstance(stmt, ast.Assign):
                    stmt.targets = new
                else:
                    stmt.target = new[0]
        out = self.substitute(stmt)
        return ast.fix_missing_locations(ast.copy_location(out, stmt))

    def parallel_over(self, body: list[ast.stmt], names: list[str], extents: list[int], where: ast.stmt) -> ast.For:
        if not names:
            names, extents = ["__thread_one"], [1]
        self.scope["__thread_parallel"] = api.Parallel
        loop = ast.For(target=ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store()) if len(names) > 1
                       else ast.Name(names[0], ast.Store()),
                       iter=ast.Call(ast.Name("__thread_parallel", ast.Load()), [ast.Constant(e) for e in extents], []),
                       body=body, orelse=[])
        for n in ast.walk(loop):
            if not hasattr(n, "lineno") or n in (loop, loop.target, loop.iter, loop.iter.func) or \
                    isinstance(n, ast.Constant) and n in loop.iter.args:
                ast.copy_location(n, where)
        ast.fix_missing_locations(loop)
        return loop

    def ordered(self, names: set[str]) -> list[str]:
        return [n for n in self.live_threads() if n in names]

    def thread_element(self, stmt: ast.stmt) -> None:
        """One element statement, for every thread it depends on. A statement over the same threads that
        reads what the pending ones store joins their T.Parallel; an element of a tensor an earlier
        statement stored at the same index is read as the value stored (the tensor is not read back)."""
        new = self.forwarded(self.rewritten(stmt))
        threads = self.ordered(self.thread_dependent(stmt) | _names(new) & set(self.live_threads()))
        if len(threads) > 2:
            raise self.error(stmt, f"this per-thread statement depends on threads {', '.join(threads)}: tilefold runs "
                                   "a kernel's threads as at most two dimensions of tile elements")
        if not threads:
            new = self.once(new)
            if new is None:   # an element of a local buffer at a loop index: no tile form
                self.flush_threads()
                self.statement(stmt)
                return
        run = self.simt["run"]
        if run and (run[0] != threads or not _read(new) & {w for s in run[2:] for w in _written(s)}):
            self.flush_threads()
        if not run:
            run.extend([threads, stmt])
        run.append(new)
        self.remember_store(new)

    def once(self, stmt: ast.stmt) -> ast.stmt | None:
        """A statement no thread index reaches runs in a T.Parallel of one element: its stored
        element's last index becomes ``index + p`` for that T.Parallel's index p (a tensor) or p
        itself for element 0 of a local buffer."""
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
        if len(targets) != 1 or not isinstance(targets[0], ast.Subscript) or \
                not isinstance(targets[0].value, ast.Name):
            return stmt
        target = targets[0]
        buf = self.scope.get(target.value.id)
        index = list(target.slice.elts) if isinstance(target.slice, ast.Tuple) else [target.slice]
        one = ast.Name("__thread_one", ast.Load())
        if getattr(buf, "is_global", False):
            index[-1] = ast.BinOp(index[-1], ast.Add(), one)
        elif buf is not None and all(isinstance(i, ast.Constant) and i.value == 0 for i in index):
            index[-1] = one
        else:
            return None
        target.slice = ast.Tuple(index, ast.Load()) if len(index) > 1 else index[0]
        return ast.fix_missing_locations(ast.copy_location(stmt, stmt))

    def forwarded(self, stmt: ast.stmt) -> ast.stmt:
        forward = self.simt["forward"]
        if not forward:
            return stmt

        class Forward(ast.NodeTransformer):
            def visit_Subscript(self, n):
                if isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name):
                    hit = next((v for k, v in forward.items() if k[:2] == (n.value.id, ast.dump(n.slice))), None)
                    if hit is not None:
                        return ast.copy_location(copy.deepcopy(hit), n)
                return self.generic_visit(n)

        if isinstance(stmt, ast.Assign):
            stmt.value = Forward().visit(stmt.value)
        elif isinstance(stmt, ast.AugAssign):
            stmt.value = Forward().visit(stmt.value)
        return stmt

    def remember_store(self, stmt: ast.stmt) -> None:
        """Record a plain store of a tensor element (its value, cast to the tensor's dtype) for later
        statements; forget records whose value or element another store changes."""
        forward = self.simt["forward"]
        written = _written(stmt)
        slices = [t.slice for t in ast.walk(stmt) if isinstance(t, ast.Subscript) and isinstance(t.ctx, ast.Store)]
        for key in [k for k, v in forward.items()
                    if _names(v) & written or k[0] in written and any(_may_alias(k[2], s) for s in slices)]:
            del forward[key]
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript) \
                and isinstance(stmt.targets[0].value, ast.Name):
            target = stmt.targets[0]
            buf = self.scope.get(target.value.id)
            if getattr(buf, "is_global", False) and not _names(stmt.value) & written:
                self.scope["__thread_cast"] = api.cast
                dtype = f"__thread_dtype_{target.value.id}"
                self.scope[dtype] = buf.dtype_name or "float32"
                value = ast.Call(ast.Name("__thread_cast", ast.Load()), [copy.deepcopy(stmt.value),
                                                                           ast.Name(dtype, ast.Load())], [])
                forward[(target.value.id, ast.dump(target.slice), target.slice)] = ast.fix_missing_locations(
                    ast.copy_location(value, stmt))

    def flush_threads(self) -> None:
        """Build the pending run of element statements."""
        if self.simt is None or not self.simt["run"]:
            return
        threads, first, *body = self.simt["run"]
        self.simt["run"].clear()
        self.build_parallel(self.parallel_over(body, threads, [self.simt["vars"][t] for t in threads], first))

    def build_parallel(self, loop: ast.For) -> None:
        simt, self.simt = self.simt, None
        try:
            self.statement(loop)
        finally:
            self.simt = simt

    def thread_if(self, stmt: ast.If) -> None:
        simt = self.simt
        pin = self.pinned_thread(stmt.test)
        if pin is not None and not stmt.orelse:
            name, value = pin
            simt["pinned"][name] = value
            try:
                self.statements(stmt.body)
            finally:
                del simt["pinned"][name]
            return
        deps = self.thread_dependent(stmt.test)
        if not deps:
            self.statement(stmt)   # builds each branch through statements(), still per-thread
            return
        if not self.element_body(stmt.body) or not self.element_body(stmt.orelse):
            self.statement(stmt)   # block-level work under "some thread" conditions, as without threads
            return
        self.thread_element(stmt)

    def pinned_thread(self, test: ast.expr):
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            for a, b in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
                if isinstance(a, ast.Name) and a.id in self.live_threads():
                    value = self.expr(b)
                    if isinstance(value, int) and not isinstance(value, bool):
                        return a.id, value
        return None

    def thread_loop(self, stmt: ast.For) -> bool:
        """A serial loop around per-thread element statements; returns whether it was built here."""
        if not isinstance(stmt.iter, ast.Call) or not isinstance(stmt.target, ast.Name) or stmt.orelse:
            return False
        rule = _intrinsic_call(stmt.iter, self)
        if not (rule in _LOOPS or isinstance(stmt.iter.func, ast.Name) and stmt.iter.func.id == "range"):
            return False
        if not self.thread_dependent(ast.Module(body=stmt.body, type_ignores=[])):
            return False
        if self.thread_dependent(stmt.iter):
            raise self.error(stmt, "a loop bound depends on a thread index; tilefold runs the threads as one T.Parallel, "
                                   "so every thread must run the same loop")
        args = stmt.iter.args
        extent = self.expr(args[0]) if len(args) == 1 and not stmt.iter.keywords else None
        if not isinstance(extent, int) or isinstance(extent, bool) or not self.element_body(stmt.body) or \
                any(isinstance(s, ast.If) for s in stmt.body) or not self.fissionable(stmt.body):
            return False
        var = stmt.target.id
        for s in stmt.body:
            self.loop_element(stmt, s, var, extent)
        return True

    def fissionable(self, body: list[ast.stmt]) -> bool:
        """Whether the loop can run statement by statement: a buffer one statement writes is touched by
        no other statement, or always at the same index."""
        def written(s):
            targets = s.targets if isinstance(s, ast.Assign) else [getattr(s, "target", None)]
            if isinstance(s, ast.Expr):
                targets = [s.value.args[0]] if s.value.args else []
            out = set()
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                    out.add(t.value.id)
                elif isinstance(t, ast.Name):
                    out.add(t.id)
            return out

        for i, s in enumerate(body):
            for name in written(s):
                for j, other in enumerate(body):
                    if j != i and name in _names(other):
                        return False
        return True

    def loop_element(self, loop: ast.For, stmt: ast.stmt, var: str, extent: int) -> None:
        """One statement of a split serial loop: a T.Parallel over its threads and the loop index when its
        iterations are independent or fold into a per-thread value; else a serial loop around it."""
        new = self.rewritten(stmt)
        threads = self.ordered(self.thread_dependent(stmt) | _names(new) & set(self.live_threads()))
        extents = [self.simt["vars"][t] for t in threads]
        if var in _names(new) and len(threads) < 2 and self.loop_parallel(new, var, threads):
            self.build_parallel(self.parallel_over([new], threads + [var], extents + [extent], stmt))
            return
        if len(threads) > 2:
            raise self.error(stmt, f"this per-thread statement depends on threads {', '.join(threads)}: tilefold runs "
                                   "a kernel's threads as at most two dimensions of tile elements")
        inner = self.parallel_over([new], threads, extents, stmt)
        outer = ast.copy_location(ast.For(loop.target, loop.iter, [inner], [], None), loop)
        self.build_parallel(outer)

    def loop_parallel(self, stmt: ast.stmt, var: str, threads: list[str]) -> bool:
        """The statement's iterations over ``var`` store their own elements, or fold ``+=`` into a 1-D
        per-thread vector indexed by the one thread."""
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
            getattr(stmt, "target", None)
        if not isinstance(target, ast.Subscript):
            return False
        index = _names(target.slice)
        if isinstance(stmt, ast.Assign):
            reads = [n for n in ast.walk(stmt.value) if isinstance(n, ast.Subscript) and
                     isinstance(n.value, ast.Name) and isinstance(target.value, ast.Name) and
                     n.value.id == target.value.id]
            return var in index and all(ast.dump(r.slice) == ast.dump(target.slice) for r in reads)
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) and var not in index:
            buf = self.scope.get(target.value.id) if isinstance(target.value, ast.Name) else None
            return len(threads) == 1 and buf is not None and not buf.is_global and len(buf.shape) == 1 and \
                isinstance(target.slice, ast.Name) and target.slice.id == threads[0]
        return False
