"""Python helper functions called from a kernel with runtime values: built inline.

Reads: a call, in a kernel, of a plain Python function or lambda with at least one runtime value
(a block, a block expression, a runtime integer ...). Writes: the helper's body, built in place
as if it were written at the call (its parameters bound to the arguments, its other names read
from its own module and closure). A ``def`` helper may end with ``return <value>``; a lambda is its
expression. Calls with only compile-time values are made by Python instead (see
:mod:`.expressions`).

Errors: a helper whose source cannot be read, a ``return`` that is not the last statement,
recursion deeper than a few levels, arguments that do not bind to the helper's parameters.
"""

from __future__ import annotations

import ast
import inspect
import linecache

from tilefold.errors import KernelError, SourceLocation
from tilefold.frontend.source import FunctionSource, parse_file
from tilefold.frontend.ttl.variables import carried_names
from tilefold.frontend.ttl.scopes import Region, Scope

MAX_DEPTH = 8


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
        if len(self.function_stack) > MAX_DEPTH:
            raise self.error(f"{fn.__name__}() calls helpers more than {MAX_DEPTH} deep; is it recursive?", node)
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
        scope = Scope(carried=carried_names(tree) if isinstance(tree, ast.FunctionDef) else set())
        scope.names.update(bound.arguments)
        saved_source, saved_node = self.source, self.node
        self.source = source
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
            return result
        finally:
            self.function_stack.pop()
            self.source, self.node = saved_source, saved_node
