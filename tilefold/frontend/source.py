"""The Python source of a kernel or helper function: its AST, file, lines and the names it sees.

Shared by every front end (PyKernel, TT-Lang, TileLang).

Reads: the function's file (through :mod:`linecache`) and its globals / closure. Writes:
nothing. The whole file is parsed, not just the function's lines, so every AST node keeps
its real line and column; :meth:`FunctionSource.location` turns a node into the user's
``file:line`` for errors and :meth:`FunctionSource.loc` into an MLIR ``FileLineColLoc``.
"""

from __future__ import annotations

import ast
import builtins
import linecache
from dataclasses import dataclass
from functools import lru_cache

from xdsl.dialects.builtin import FileLineColLoc

from tilefold.errors import KernelError, SourceLocation
from tilefold.ir.locations import file_line_loc

_MISSING = object()


@lru_cache(maxsize=64)
def parse_file(file: str, text: str) -> ast.Module:
    return ast.parse(text, filename=file)


def _find_function(tree: ast.Module, name: str, first_line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            if start == first_line or node.lineno == first_line:
                return node
    return None


_TREES: dict[tuple[str, str, int], ast.FunctionDef] = {}


def register_tree(file: str, name: str, first_line: int, tree: ast.FunctionDef) -> None:
    """Give a function made from parts of a file (not written as one ``def``) its parsed tree."""
    _TREES[(file, name, first_line)] = tree


@dataclass
class FunctionSource:
    """A parsed Python function and the scope its names resolve in."""

    function: object
    file: str
    tree: ast.FunctionDef

    @classmethod
    def of(cls, function, what: str = "kernel") -> FunctionSource:
        code = function.__code__
        file = code.co_filename
        made = _TREES.get((file, function.__name__, code.co_firstlineno))
        if made is not None:
            return cls(function, file, made)
        text = "".join(linecache.getlines(file, function.__globals__))
        where = SourceLocation(file, code.co_firstlineno)
        if not text:
            raise KernelError(f"cannot read the source of {what} {function.__name__!r}; define it in a .py file "
                              f"so that tilefold can parse it", where)
        try:
            tree = parse_file(file, text)
        except SyntaxError as exc:
            raise KernelError(f"cannot parse {file}: {exc.msg}", SourceLocation(file, exc.lineno or 0)) from None
        node = _find_function(tree, function.__name__, code.co_firstlineno)
        if node is None:
            raise KernelError(f"cannot find the source of {what} {function.__name__!r} in {file}; has the file "
                              f"changed since it was imported?", where)
        if isinstance(node, ast.AsyncFunctionDef):
            raise KernelError(f"{what} {function.__name__!r} is an async def; kernels and helpers are plain def "
                              f"functions", SourceLocation(file, node.lineno))
        return cls(function, file, node)

    @property
    def name(self) -> str:
        return self.tree.name

    def location(self, node: ast.AST) -> SourceLocation:
        return SourceLocation(self.file, getattr(node, "lineno", self.tree.lineno),
                              getattr(node, "col_offset", -1) + 1)

    def loc(self, node: ast.AST) -> FileLineColLoc:
        where = self.location(node)
        return file_line_loc(where.file, where.line, where.column)

    def error(self, node: ast.AST, message: str) -> KernelError:
        return KernelError(message, self.location(node))

    def lookup(self, name: str):
        """The object ``name`` refers to outside the function (closure, module, builtins), or
        :data:`MISSING`."""
        code = self.function.__code__
        if name in code.co_freevars and self.function.__closure__:
            cell = self.function.__closure__[code.co_freevars.index(name)]
            try:
                return cell.cell_contents
            except ValueError:       # an empty cell: assigned later in the enclosing function
                return _MISSING
        value = self.function.__globals__.get(name, _MISSING)
        if value is _MISSING:
            value = getattr(builtins, name, _MISSING)
        return value

    def visible_names(self) -> list[str]:
        return [*self.function.__code__.co_freevars, *self.function.__globals__]


MISSING = _MISSING
