"""``break`` and ``continue`` in a kernel's loops, rewritten as flags before the kernel is built.

A device ``for`` loop has a fixed trip count, so a loop that leaves early becomes one that keeps
counting with the rest of its body skipped: ``break`` sets the loop's break flag, ``continue`` its
continue flag (cleared at the start of each iteration), the statements after one that may set a
flag run under ``if`` the flags are clear, and the whole body under ``if`` the break flag is clear.
A ``while`` loop's break flag joins its test instead (``while not broken and test``), so the loop
ends there. A loop's ``else`` runs after it under ``if`` the break flag is clear (always, without a
``break``). A ``for`` loop that breaks counts with a hidden variable and assigns its own under the
flag, so after the loop it holds the item the loop broke at. The
flags are ordinary runtime integers of the kernel, so the rest of the front end sees plain ``if``
statements. ``break`` / ``continue`` are found through ``if`` / ``else`` and ``with`` blocks; one
inside another construct (``try``, ``match``) is left for the builder to reject.

Reads: a kernel's AST. Writes: a rewritten copy when it has ``break`` / ``continue`` (the parsed
file's tree is not changed); new nodes carry the line of the statement they replace.
"""

from __future__ import annotations

import ast
import copy


def _exits(stmts: list[ast.stmt]) -> tuple[bool, bool]:
    """Whether ``stmts`` (of one loop body, nested loops and functions excluded) break / continue."""
    brk = cont = False
    todo = list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Break):
            brk = True
        elif isinstance(node, ast.Continue):
            cont = True
        elif not isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef,
                                   ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return brk, cont


def _guardable(node: ast.stmt) -> bool:
    """Whether every ``break`` / ``continue`` of ``node`` for the enclosing loop is reached
    through ``if`` and ``with`` only."""
    if isinstance(node, (ast.Break, ast.Continue)):
        return True
    if isinstance(node, ast.If):
        return all(_guardable(s) for s in node.body + node.orelse)
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return all(_guardable(s) for s in node.body)
    return _exits([node]) == (False, False)


class _Loop:
    def __init__(self, loop: ast.For | ast.While, brk: bool, cont: bool):
        n = f"{loop.lineno}_{loop.col_offset}"      # the same names each time the kernel is built
        self.loop = loop
        self.brk = f"_tf_break_{n}" if brk else None
        self.cont = f"_tf_continue_{n}" if cont else None

    @staticmethod
    def _at(node: ast.AST, new: ast.AST, deep: bool = True) -> ast.AST:
        """``new`` (and, when ``deep``, every node under it: all made here) at ``node``'s place."""
        for n in (ast.walk(new) if deep else [new]):
            ast.copy_location(n, node)
            n.end_lineno, n.end_col_offset = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
        return new

    def set(self, name: str, value: int, at: ast.AST) -> ast.stmt:
        return self._at(at, ast.Assign(targets=[ast.Name(name, ast.Store())], value=ast.Constant(value)))

    def clear(self, at: ast.AST) -> ast.expr:
        """``flags == 0``: neither flag of this loop is set."""
        names = [n for n in (self.brk, self.cont) if n]
        total = ast.Name(names[0], ast.Load())
        for name in names[1:]:
            total = ast.BinOp(total, ast.Add(), ast.Name(name, ast.Load()))
        return self._at(at, ast.Compare(total, [ast.Eq()], [ast.Constant(0)]))

    def statements(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for i, stmt in enumerate(stmts):
            if _exits([stmt]) == (False, False) or not _guardable(stmt):
                out.append(stmt)
                continue
            out.extend(self.statement(stmt))
            rest = stmts[i + 1:]
            if rest:
                out.append(self._at(rest[0], ast.If(test=self.clear(rest[0]), body=self.statements(rest), orelse=[]),
                                    deep=False))
            return out
        return out

    def statement(self, stmt: ast.stmt) -> list[ast.stmt]:
        if isinstance(stmt, ast.Break):
            return [self.set(self.brk, 1, stmt)]
        if isinstance(stmt, ast.Continue):
            return [self.set(self.cont, 1, stmt)]
        if isinstance(stmt, ast.If):
            return [self._replace(stmt, body=self.statements(stmt.body) or [self._at(stmt, ast.Pass())],
                                  orelse=self.statements(stmt.orelse))]
        return [self._replace(stmt, body=self.statements(stmt.body))]       # with

    @staticmethod
    def _replace(stmt, **fields):
        new = copy.copy(stmt)
        for k, v in fields.items():
            setattr(new, k, v)
        return new

    def rewrite(self) -> list[ast.stmt]:
        """The statements replacing the loop: the break flag's start, then the loop."""
        loop = self.loop
        body = self.statements(loop.body)
        if self.cont:
            body = [self.set(self.cont, 0, loop.body[0])] + body
        if self.brk and isinstance(loop, ast.While):
            # a while loop ends when its break flag is set: the flag joins its test
            test = self.clear_break(loop.test)
            if not (isinstance(loop.test, ast.Constant) and loop.test.value is True):
                test = self._at(loop.test, ast.BoolOp(ast.And(), [test, loop.test]), deep=False)
            return [self.set(self.brk, 0, loop), self._replace(loop, body=body, test=test)]
        if self.brk:
            # the loop keeps counting after a break: its variable takes each item under the break
            # flag, so after the loop it holds the item the loop broke at, as in Python
            item = f"_tf_item_{loop.lineno}_{loop.col_offset}"
            take = self._at(loop.target, ast.Assign(targets=[loop.target], value=ast.Name(item, ast.Load())),
                            deep=False)
            body = [take] + body
            body = [self._at(loop.body[0], ast.If(test=self.clear_break(loop.body[0]), body=body, orelse=[]),
                             deep=False)]
            loop = self._replace(loop, target=self._at(loop.target, ast.Name(item, ast.Store())))
        new = self._replace(loop, body=body)
        return ([self.set(self.brk, 0, loop)] if self.brk else []) + [new]

    def clear_break(self, at: ast.AST) -> ast.expr:
        return self._at(at, ast.Compare(ast.Name(self.brk, ast.Load()), [ast.Eq()], [ast.Constant(0)]))


def _rewrite_body(stmts: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for stmt in stmts:
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(stmt, field, None), list):
                setattr(stmt, field, _rewrite_body(getattr(stmt, field)))
        if isinstance(stmt, ast.Try):
            for handler in stmt.handlers:
                handler.body = _rewrite_body(handler.body)
        if isinstance(stmt, (ast.For, ast.While)):
            brk, cont = _exits(stmt.body)
            if all(_guardable(s) for s in stmt.body) and (brk or cont or stmt.orelse):
                orelse, stmt = stmt.orelse, _Loop._replace(stmt, orelse=[])
                loop = _Loop(stmt, brk, cont)
                out.extend(loop.rewrite() if brk or cont else [stmt])
                if orelse and brk:          # for ... else: the else runs when no break left the loop
                    out.append(loop._at(orelse[0], ast.If(test=loop.clear_break(orelse[0]), body=orelse, orelse=[]),
                                        deep=False))
                else:
                    out.extend(orelse)
                continue
        out.append(stmt)
    return out


def without_loop_exits(tree: ast.FunctionDef) -> ast.FunctionDef:
    """``tree``, or a copy of it whose loops have no ``break`` / ``continue`` (see the
    module docstring)."""
    if not any(isinstance(n, (ast.Break, ast.Continue)) or isinstance(n, (ast.For, ast.While)) and n.orelse
               for n in ast.walk(tree)):
        return tree
    new = copy.deepcopy(tree)
    new.body = _rewrite_body(new.body)
    return new
