"""Which names of a kernel function carry values across loop iterations or out of branches.

Reads: the AST of a kernel function (or of a function nested in it). Writes: the set of names
that may need storage: a name assigned inside a ``for`` body and read in that body before it is
(definitely) assigned again — its value flows from one iteration to the next — or assigned in a
``for`` / ``if`` and live after it (read before it is assigned again). The builder keeps such a
name in storage when it is assigned inside a runtime loop or branch: a runtime integer in a local
variable, a block expression in a dataflow buffer of its own (an accumulator).

Nested ``def``s (pipe condition bodies) are analysed on their own when they are built; where the
kernel uses such a function's name (``net.if_dst(recv)``, ``recv(pipe)``) it reads the names the
function reads, as the body is built there. :func:`live_after` gives the names live after a
statement — what the builder reads to keep a value computed from a block past its pop, and to
release blocks implicitly where their names die.
"""

from __future__ import annotations

import ast


def _names(node: ast.AST, ctx) -> set[str]:
    out = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ctx):
            out.add(sub.id)
    return out


def accumulated_name(node: ast.AST) -> str | None:
    """The block ``node`` accumulates into when it is ``blk.store(expr, acc=...)`` with ``acc``
    not the constant ``False`` (it reads and writes ``blk`` like ``blk += expr``), else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "store"
            and isinstance(node.func.value, ast.Name)):
        return None
    for kw in node.keywords:
        if kw.arg == "acc" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
            return node.func.value.id
    return None


def accumulated_names(node: ast.AST) -> set[str]:
    """Blocks accumulated into by ``store(expr, acc=True)`` anywhere in ``node``."""
    return {n for n in map(accumulated_name, _walk_no_functions(node)) if n is not None}


def _summing_store(node: ast.AST, name: str) -> bool:
    """Whether ``node`` is ``name.store(expr, acc=True)`` (one value, ``acc`` the constant True)."""
    return (accumulated_name(node) == name and len(node.args) == 1
            and any(kw.arg == "acc" and isinstance(kw.value, ast.Constant) and kw.value.value is True
                    for kw in node.keywords) and len(node.keywords) == 1)


def only_summed(loop: ast.AST, function: ast.AST, name: str) -> bool:
    """Whether ``name`` is only added to in ``loop`` — each use there is the target of
    ``name += expr`` or ``name.store(expr, acc=True)`` with ``expr`` not reading ``name`` — and no
    assignment to it anywhere in ``function`` reads it. Such an accumulator needs one block: each
    step adds ``expr`` to the block in L1 without reading it first."""
    def reads_name(value) -> bool:
        return value is not None and name in _names(value, ast.Load)

    summed = set()
    for sub in ast.walk(loop):
        if isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name) and sub.target.id == name:
            if not isinstance(sub.op, ast.Add) or reads_name(sub.value):
                return False
            summed.add(id(sub.target))
        elif accumulated_name(sub) == name:
            if not _summing_store(sub, name) or reads_name(sub.args[0]):
                return False
            summed.add(id(sub.func.value))
    if not summed or any(isinstance(sub, ast.Name) and sub.id == name and id(sub) not in summed
                         for sub in ast.walk(loop)):
        return False
    for sub in ast.walk(function):
        if isinstance(sub, (ast.Assign, ast.AnnAssign)) and name in writes(sub) and reads_name(sub.value):
            return False
        if isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name) and sub.target.id == name \
                and (not isinstance(sub.op, ast.Add) or reads_name(sub.value)):
            return False
    return True


def reads(node: ast.AST) -> set[str]:
    """Names read anywhere in ``node`` (an augmented assignment reads its target)."""
    out = _names(node, ast.Load)
    for sub in ast.walk(node):
        if isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name):
            out.add(sub.target.id)
    return out


def writes(node: ast.AST) -> set[str]:
    """Names assigned anywhere in ``node`` (not inside nested functions), and blocks accumulated
    into by ``blk.store(expr, acc=True)``."""
    out = set()
    for sub in _walk_no_functions(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            out.add(sub.id)
        elif (name := accumulated_name(sub)) is not None:
            out.add(name)
        elif isinstance(sub, ast.FunctionDef) and sub is not node:
            out.add(sub.name)
    return out


def _walk_no_functions(node: ast.AST):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        for child in ast.iter_child_nodes(n):
            if isinstance(child, (ast.FunctionDef, ast.Lambda)):
                yield child
                continue
            stack.append(child)


def nested_functions(function: ast.AST) -> dict[str, set[str]]:
    """For each ``def`` nested in ``function`` (at any depth), the outer names its body reads: those
    read before the body assigns them, less its parameters."""
    out: dict[str, set[str]] = {}
    for sub in ast.walk(function):
        if isinstance(sub, ast.FunctionDef) and sub is not function:
            a = sub.args
            params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
            params |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
            out[sub.name] = _exposed(sub.body, params)
    return out


def _expand(names: set[str], defs: dict[str, set[str]] | None) -> set[str]:
    """``names`` plus what the nested functions among them read (transitively)."""
    if not defs:
        return names
    out, todo = set(names), [n for n in names if n in defs]
    while todo:
        for n in defs[todo.pop()] - out:
            out.add(n)
            if n in defs:
                todo.append(n)
    return out


def _definite(stmts: list[ast.stmt]) -> set[str]:
    """Names certainly assigned when ``stmts`` run to completion."""
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, ast.If):
            out |= _definite(s.body) & _definite(s.orelse)
        elif isinstance(s, (ast.For, ast.While)):
            continue
        elif isinstance(s, ast.With):
            for item in s.items:
                if item.optional_vars is not None:
                    out |= writes(item.optional_vars)
            out |= _definite(s.body)
        elif isinstance(s, ast.FunctionDef):
            out.add(s.name)
        else:
            out |= writes(s)
    return out


def _exposed(stmts: list[ast.stmt], defined: set[str], defs: dict[str, set[str]] | None = None) -> set[str]:
    """Names read by ``stmts`` before they are certainly assigned by them (a use of a nested
    function of ``defs`` reads what it reads)."""
    out: set[str] = set()
    defined = set(defined)
    for s in stmts:
        if isinstance(s, ast.For):
            out |= _expand(reads(s.iter), defs) - defined
            out |= _exposed(s.body, defined | writes(s.target), defs)
            out |= _exposed(s.orelse, defined, defs)
        elif isinstance(s, ast.While):
            out |= _expand(reads(s.test), defs) - defined
            out |= _exposed(s.body, defined, defs)
        elif isinstance(s, ast.If):
            out |= _expand(reads(s.test), defs) - defined
            out |= _exposed(s.body, defined, defs) | _exposed(s.orelse, defined, defs)
            defined |= _definite(s.body) & _definite(s.orelse)
        elif isinstance(s, ast.With):
            for item in s.items:
                out |= _expand(reads(item.context_expr), defs) - defined
                if item.optional_vars is not None:
                    defined |= writes(item.optional_vars)
            out |= _exposed(s.body, defined, defs)
            defined |= _definite(s.body)
        elif isinstance(s, ast.FunctionDef):
            defined.add(s.name)
        else:
            out |= _expand(reads(s), defs) - defined
            defined |= writes(s)
    return out


def _live_after(tail: list[ast.stmt], defs: dict[str, set[str]] | None = None, memo: dict | None = None) -> set[str]:
    """Names the statements ``tail`` (what runs after a statement, to the function's end) may read
    before they certainly assign them. A use of a nested function of ``defs`` reads what the
    function reads (a pipe body reads its kernel's names when it is built where it is called); a
    lambda passed straight to a call (``net.if_dst(lambda pipe: ...)``) reads its names there; any
    other lambda, or a nested ``def`` not in ``defs``, may run later and counts as reading every
    name it reads."""
    # backwards: a statement's exposed reads, and what follows it less what it certainly assigns
    # (``memo`` keeps each statement's three sets, for the tails of one function)
    memo = {} if memo is None else memo
    live: set[str] = set()
    later: set[str] = set()
    for stmt in reversed(tail):
        facts = memo.get(id(stmt))
        if facts is None:
            facts = memo[id(stmt)] = (_exposed([stmt], set(), defs), _definite([stmt]), _later_reads(stmt, defs))
        exposed, assigned, deferred = facts
        live = exposed | (live - assigned)
        later |= deferred
    return live | later


def carried_across_iterations(loop: ast.For, function: ast.FunctionDef) -> set[str]:
    """Names a ``for`` loop of ``function`` assigns and its body may read before assigning them:
    those an iteration hands to the next."""
    start = writes(loop.target)
    return (writes(loop) - start) & _exposed(loop.body, set(start), nested_functions(function))


def read_before_assigned(stmts: list[ast.stmt], function: ast.FunctionDef) -> set[str]:
    """Names the statements ``stmts`` of ``function`` may read before they certainly assign them."""
    return _live_after(stmts, nested_functions(function))


def _later_reads(stmt: ast.stmt, defs: dict[str, set[str]] | None) -> set[str]:
    """What the lambdas and nested functions of ``stmt`` that may run later read (see
    :func:`_live_after`)."""
    called = {id(arg) for call in ast.walk(stmt) if isinstance(call, ast.Call)
              for arg in [*call.args, *(kw.value for kw in call.keywords)] if isinstance(arg, ast.Lambda)}
    out: set[str] = set()
    for sub in ast.walk(stmt):
        if isinstance(sub, ast.Lambda) and id(sub) not in called \
                or isinstance(sub, ast.FunctionDef) and sub.name not in (defs or {}):
            out |= reads(sub)
    return out


def _with_tails(stmts: list[ast.stmt], after: list[ast.stmt]):
    """``(statement, tail)`` for every statement of ``stmts`` and of the blocks nested in them (not
    inside nested functions), in program order; ``tail`` is what runs after the statement up to the
    function's end — a loop body's statements are followed by the body again."""
    for i, stmt in enumerate(stmts):
        tail = list(stmts[i + 1:]) + after
        yield stmt, tail
        if isinstance(stmt, (ast.FunctionDef, ast.Lambda)):
            continue
        for field in ("body", "orelse"):
            block = getattr(stmt, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                again = list(stmt.body) if isinstance(stmt, (ast.For, ast.While)) and field == "body" else []
                yield from _with_tails(block, again + tail)


def carried_names(function: ast.FunctionDef) -> set[str]:
    """The names of ``function`` that may carry a value across a loop iteration or out of a
    loop or branch (see the module docstring): assigned in a loop and read in its body before
    they are certainly assigned again, or assigned in a loop or branch and live after it (read by
    what follows, up to the function's end, before that certainly assigns them)."""
    carried: set[str] = set()
    defs = nested_functions(function)
    for stmt, tail in _with_tails(function.body, []):
        if isinstance(stmt, (ast.For, ast.While)):
            assigned = writes(stmt) - (writes(stmt.target) if isinstance(stmt, ast.For) else set())
            start = writes(stmt.target) if isinstance(stmt, ast.For) else set()
            carried.update(assigned & _exposed(stmt.body, set(start), defs))
            if isinstance(stmt, ast.While):     # the test reads what the last iteration assigned
                carried.update(assigned & _expand(reads(stmt.test), defs))
        if isinstance(stmt, (ast.For, ast.While, ast.If)):
            carried.update(writes(stmt) & _live_after(tail, defs))
    return carried


# id of a function's tree -> (the tree, its statements by node, answers, each statement's facts by
# the outer functions' names): the last few asked about
_LIVE_FACTS: dict[int, tuple] = {}


def live_after(function: ast.FunctionDef, node: ast.AST, defs: dict[str, set[str]] | None = None) -> set[str] | None:
    """Names live after the innermost statement of ``function`` that holds ``node`` (see
    :func:`_live_after`; in a nested ``def``, a pipe body, within that body), or None when ``node``
    is not in ``function``. The statements and answers of the functions asked about last are kept
    (:data:`_LIVE_FACTS`): a kernel asks after each of its statements."""
    facts = _LIVE_FACTS.get(id(function))
    if facts is None or facts[0] is not function:
        innermost = {}            # id of every node -> its innermost statement and that statement's tail
        for stmt, tail in _with_tails(function.body, []):
            for sub in ast.walk(stmt):
                innermost[id(sub)] = stmt, tail
        facts = _LIVE_FACTS[id(function)] = (function, innermost, {}, {})
        while len(_LIVE_FACTS) > 32:
            del _LIVE_FACTS[next(iter(_LIVE_FACTS))]
    _, innermost, answers, memos = facts
    found = innermost.get(id(node))
    if found is None:
        return None
    stmt, tail = found
    if isinstance(stmt, ast.FunctionDef) and stmt is not node:
        return live_after(stmt, node, {**(defs or {}), **nested_functions(function)})
    outer = None if defs is None else tuple(sorted(defs))
    key = (id(stmt), outer)
    if key not in answers:
        answers[key] = frozenset(_live_after(tail, {**(defs or {}), **nested_functions(function)},
                                             memos.setdefault(outer, {})))
    return answers[key]
