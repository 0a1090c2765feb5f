"""Python helper functions called from a kernel with runtime values: built inline.

Reads: a call, in a kernel, of a plain Python function or lambda with at least one runtime value
(a block, a block expression, a runtime integer ...). Writes: the helper's body, built in place
as if it were written at the call (its parameters bound to the arguments, its other names read
from its own module and closure). A lambda is its expression. A ``def`` helper returns a value
from its end or from inside ``if`` / ``elif`` / ``else`` branches (``if i < n: return a`` ...): its
body is first rewritten to have one exit (:func:`single_exit`), each ``return v`` becoming an
assignment to a result name, the statements after an ``if`` whose branch returned moved into its
other branch; a runtime condition then carries the result out of the ``scf.if`` like any name
assigned in a branch. Calls with only compile-time values are made by Python instead (see
:mod:`.expressions`).

Errors: a helper whose source cannot be read, a ``return`` inside a loop or ``with`` block,
returns of tuples of different lengths, recursion deeper than a few levels, arguments that do not
bind to the helper's parameters.
"""

from __future__ import annotations

import ast
import copy
import inspect
import linecache

from tilefold.errors import KernelError, SourceLocation
from tilefold.frontend.source import FunctionSource, parse_file
from tilefold.frontend.ttl.loop_exits import without_loop_exits
from tilefold.frontend.ttl.variables import carried_names
from tilefold.frontend.ttl.scopes import Region, Scope

MAX_DEPTH = 8
RESULT = "__helper_result"


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _own_nodes(node: ast.AST):
    """``node`` and the nodes under it, not entering functions or classes defined inside it (their
    ``return`` statements are theirs)."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, _SCOPES):
            yield from _own_nodes(child)


def _own_returns(stmts) -> list[ast.Return]:
    return [n for s in stmts if not isinstance(s, _SCOPES) for n in _own_nodes(s) if isinstance(n, ast.Return)]


def _returns_inside(stmts) -> bool:
    return bool(_own_returns(stmts))


def _loop_returns(stmts: list[ast.stmt], counter: list[int]) -> list[ast.stmt]:
    """``stmts`` with each loop that returns from inside rewritten so that it breaks instead: a
    ``return v`` reached through ``if`` / ``with`` becomes ``rv = v; returned = 1; break``, and after
    the loop ``if returned == 1: return rv`` (itself a return inside an enclosing loop, rewritten in
    turn); ``rv`` (one name an item, when the loop returns tuples) starts as 0."""
    out: list[ast.stmt] = []
    for stmt in stmts:
        for name in ("body", "orelse"):
            if isinstance(getattr(stmt, name, None), list) and not isinstance(stmt, _SCOPES):
                setattr(stmt, name, _loop_returns(getattr(stmt, name), counter))
        if isinstance(stmt, (ast.For, ast.While)) and _returns_inside(stmt.body):
            counter[0] += 1
            value, flag = f"_tf_return_value_{counter[0]}", f"_tf_returned_{counter[0]}"
            returns = _own_returns(stmt.body)
            widths = {len(r.value.elts) if isinstance(r.value, ast.Tuple) else None for r in returns}
            width = widths.pop() if len(widths) == 1 else None
            names = [f"{value}_{i}" for i in range(width)] if width else [value]     # one carried name an item

            def target(ctx):
                return ast.Tuple([ast.Name(n, ctx()) for n in names], ctx()) if width else ast.Name(value, ctx())

            def replaced(body):
                new = []
                for s in body:
                    if isinstance(s, ast.Return):
                        new += [ast.Assign([target(ast.Store)], s.value or ast.Constant(None)),
                                ast.Assign([ast.Name(flag, ast.Store())], ast.Constant(1)), ast.Break()]
                        continue
                    if isinstance(s, ast.If):
                        s = ast.If(s.test, replaced(s.body), replaced(s.orelse))
                    elif isinstance(s, (ast.With, ast.AsyncWith)):
                        s = type(s)(s.items, replaced(s.body))
                    new.append(s)
                return new

            loop = copy.copy(stmt)
            loop.body = replaced(stmt.body)
            done = ast.If(ast.Compare(ast.Name(flag, ast.Load()), [ast.Eq()], [ast.Constant(1)]),
                          [ast.Return(target(ast.Load))], [])
            new = [*(ast.Assign([ast.Name(n, ast.Store())], ast.Constant(0)) for n in names),
                   ast.Assign([ast.Name(flag, ast.Store())], ast.Constant(0)), loop, done]
            out += [ast.fix_missing_locations(ast.copy_location(n, stmt)) for n in new]
            continue
        out.append(stmt)
    return out


def single_exit(fn: ast.FunctionDef, where) -> ast.FunctionDef:
    """``fn`` with every ``return v`` made an assignment to :data:`RESULT` (names ``RESULT_i`` for
    the items of a returned tuple) and one ``return`` at its end; ``where(node)`` locates errors."""
    widths = {len(r.value.elts) if isinstance(r.value, ast.Tuple) else None
              for r in _own_returns(fn.body) if r.value is not None}
    tuples = widths - {None}
    if len(tuples) > 1:
        raise KernelError(f"the helper {fn.name}() returns tuples of different lengths; return the same "
                          "number of values everywhere", where(fn))
    # (a return of a name holding a tuple, beside tuple returns, unpacks into the same names)
    width = tuples.pop() if tuples else None

    def target(i=None):
        return ast.Name(RESULT if i is None else f"{RESULT}_{i}", ast.Store())

    def assign(ret: ast.Return) -> list[ast.stmt]:
        if ret.value is None:
            return []
        if width is None:
            return [ast.copy_location(ast.Assign([target()], ret.value), ret)]
        if not isinstance(ret.value, ast.Tuple):
            names = ast.Tuple([target(i) for i in range(width)], ast.Store())
            return [ast.copy_location(ast.Assign([names], ret.value), ret)]
        return [ast.copy_location(ast.Assign([target(i)], item), ret) for i, item in enumerate(ret.value.elts)]

    def rewrite(stmts) -> tuple[list[ast.stmt], bool]:
        """(the statements, whether every path through them returned). An ``if`` that returns on
        some path takes the statements after it into each of its branches (where a branch returns
        first they are dropped), so they run only on the paths that did not return — also from a
        nested ``if`` / ``elif``."""
        out: list[ast.stmt] = []
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, ast.Return):
                return out + assign(stmt), True
            if isinstance(stmt, ast.If) and _returns_inside([stmt]):
                after = list(stmts[i + 1:])
                body, body_returns = rewrite(stmt.body + after)
                orelse, else_returns = rewrite(stmt.orelse + after)
                out.append(ast.copy_location(ast.If(stmt.test, body or [ast.Pass()], orelse), stmt))
                return out, body_returns and else_returns
            if _returns_inside([stmt]):
                inner = _own_returns([stmt])[0]
                raise KernelError(f"the helper {fn.name}() returns from inside a {type(stmt).__name__.lower()} "
                                  "statement; set a variable there and return it after", where(inner))
            out.append(stmt)
        return out, False

    body, _ = rewrite(fn.body)
    if width is None:
        value = ast.Name(RESULT, ast.Load())
    else:
        value = ast.Tuple([ast.Name(f"{RESULT}_{i}", ast.Load()) for i in range(width)], ast.Load())
    last = ast.copy_location(ast.Return(value if widths or width is not None or _has_value(fn) else None), fn)
    new = ast.FunctionDef(fn.name, fn.args, body + [last], [], fn.returns, getattr(fn, "type_comment", None),
                          **({"type_params": []} if hasattr(fn, "type_params") else {}))
    return ast.fix_missing_locations(ast.copy_location(new, fn))


def _has_value(fn: ast.FunctionDef) -> bool:
    return any(r.value is not None for r in _own_returns(fn.body))


def _needs_single_exit(fn: ast.FunctionDef) -> bool:
    """Whether ``fn`` returns anywhere but at its very end."""
    last = fn.body[-1] if fn.body else None
    return any(r is not last for r in _own_returns(fn.body))


def _lambda_node(fn) -> tuple[FunctionSource, ast.Lambda]:
    code = fn.__code__
    text = "".join(linecache.getlines(code.co_filename, fn.__globals__))
    where = SourceLocation(code.co_filename, code.co_firstlineno)
    if not text:
        raise KernelError("cannot read the source of this lambda; define the helper in a .py file", where)
    tree = parse_file(code.co_filename, text)
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno]
    names = [tuple(a.arg for a in n.args.args) for n in found]
    wanted = code.co_varnames[:code.co_argcount]
    found = [n for n, params in zip(found, names) if params == wanted]
    if len(found) > 1:     # several lambdas on one line: the one whose body holds the code's first position
        spots = [(p[0], p[2]) for p in code.co_positions() if None not in p and p[3] > p[2]]
        if spots:
            first = min(spots)
            found = [n for n in found if (n.body.lineno, n.body.col_offset) <= first
                     <= (n.body.end_lineno, n.body.end_col_offset)]
    if len(found) != 1:
        raise KernelError("cannot tell this lambda from others on its line; write it as a def helper", where)
    source = FunctionSource(fn, code.co_filename, found[0])
    return source, found[0]


class HelperInliner:
    """Mixin of :class:`~.builder.KernelBuilder`."""

    def inline_call(self, fn, args, kwargs, node):
        self._check_depth(fn.__name__, node)
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as exc:
            raise self.error(f"{fn.__name__}(): {exc}", node) from None
        bound.apply_defaults()
        if fn.__name__ == "<lambda>":
            source, tree = _lambda_node(fn)
        else:
            source = FunctionSource.of(fn, "helper function")
            tree = source.tree
        return self._inline(tree, source, bound.arguments, None)

    def inline_local(self, fn, args, kwargs, node):
        """A ``def`` written inside the kernel (:class:`~.values.LocalFunction`) called there: built
        inline like a helper, its other names read from the kernel's names where it was defined; a
        lambda's value is its expression (``sq = lambda v: v * v``, then ``sq(x)``)."""
        tree = fn.node
        if tree.name == "lambda" and len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr):
            body = ast.copy_location(ast.Return(value=tree.body[0].value), tree.body[0])
            tree = ast.copy_location(ast.FunctionDef(name=tree.name, args=tree.args, body=[body], decorator_list=[],
                                                     returns=None, type_params=[]), tree)
            tree.end_lineno, tree.end_col_offset = fn.node.end_lineno, fn.node.end_col_offset
        self._check_depth(tree.name, node)
        params = tree.args
        if params.vararg or params.kwarg:
            raise self.error(f"{tree.name}(): *args and **kwargs parameters are not supported in a kernel", tree)
        positional = [*params.posonlyargs, *params.args]
        defaults = dict(zip([p.arg for p in positional][len(positional) - len(params.defaults):], params.defaults))
        defaults.update({p.arg: d for p, d in zip(params.kwonlyargs, params.kw_defaults) if d is not None})
        kind = inspect.Parameter
        signature = inspect.Signature(
            [kind(p.arg, kind.POSITIONAL_ONLY, default=defaults.get(p.arg, kind.empty)) for p in params.posonlyargs]
            + [kind(p.arg, kind.POSITIONAL_OR_KEYWORD, default=defaults.get(p.arg, kind.empty)) for p in params.args]
            + [kind(p.arg, kind.KEYWORD_ONLY, default=defaults.get(p.arg, kind.empty)) for p in params.kwonlyargs])
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise self.error(f"{tree.name}(): {exc}", node) from None
        arguments = dict(bound.arguments)
        for name, default in defaults.items():      # defaults are evaluated where the def is
            if name not in arguments:
                arguments[name] = fn.defaults[name] if fn.defaults is not None else self.evaluate(default, fn.scope)
        return self._inline(tree, self.source, arguments, fn.scope)

    def _check_depth(self, name: str, node) -> None:
        if len(self.function_stack) > MAX_DEPTH:
            raise self.error(f"{name}() calls helpers more than {MAX_DEPTH} deep; is it recursive?", node)

    def _inline(self, tree, source, arguments: dict, parent: Scope | None):
        """Build ``tree`` (a def or a lambda) in place with its parameters bound to ``arguments``;
        its value is what it returns."""
        if isinstance(tree, ast.FunctionDef):
            if any(isinstance(s, (ast.For, ast.While)) and _returns_inside(s.body) for s in _own_nodes(tree)
                   if s is not tree):
                tree = copy.deepcopy(tree)
                tree.body = _loop_returns(tree.body, [0])      # a return inside a loop: a break and a flag
            tree = without_loop_exits(tree)       # break / continue (and loops' else) as flags, as in kernels
        scope = Scope(parent=parent, carried=carried_names(tree) if isinstance(tree, ast.FunctionDef) else set())
        scope.names.update(arguments)
        saved_source, saved_node = self.source, self.node
        self.source = source
        if isinstance(tree, ast.FunctionDef) and _needs_single_exit(tree):
            try:
                tree = single_exit(tree, self.location)
            except KernelError:
                self.source, self.node = saved_source, saved_node
                raise
            scope.carried = carried_names(tree)
        self.function_stack.append(tree)
        try:
            if isinstance(tree, ast.Lambda):
                return self.evaluate(tree.body, scope)
            body = tree.body
            result = None
            if body and isinstance(body[-1], ast.Return):
                *body, last = body
            else:
                last = None
            if body:
                self.statements(body, scope, Region("with", tree))
            if last is not None and last.value is not None:
                result = self.evaluate(last.value, scope)
            elif last is None and body and isinstance(body[-1], ast.Raise) and body[-1].exc is not None \
                    and isinstance(tree, ast.FunctionDef):
                from tilefold.frontend.ttl.values import RaisedValue

                exc = body[-1].exc
                result = RaisedValue(tree.name, ast.unparse(exc)[:60], self.location(body[-1]))
            return result
        finally:
            self.function_stack.pop()
            self.source, self.node = saved_source, saved_node
