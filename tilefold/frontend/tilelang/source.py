"""The Python source of a ``@T.prim_func`` function: its AST, lines, and the names it sees.

Reads: the function's file (through :mod:`linecache`), its globals and closure. Writes:
nothing. The whole file is parsed so every node keeps its real line; :meth:`location`
turns a node into the user's ``file:line`` and :meth:`loc` into an MLIR ``FileLineColLoc``.
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

MISSING = object()


@lru_cache(maxsize=64)
def _parse(file: str, text: str) -> ast.Module:
    return ast.parse(text, filename=file)


@dataclass
class KernelSource:
    """A parsed kernel function and the scope its free names resolve in."""

    function: object
    file: str
    tree: ast.FunctionDef

    @classmethod
    def of(cls, function) -> KernelSource:
        code = function.__code__
        file = code.co_filename
        where = SourceLocation(file, code.co_firstlineno)
        text = "".join(linecache.getlines(file, function.__globals__))
        if not text:
            raise KernelError(f"cannot read the source of kernel {function.__name__!r}; define it in a .py file",
                              where)
        try:
            module = _parse(file, text)
        except SyntaxError as exc:
            raise KernelError(f"cannot parse {file}: {exc.msg}", SourceLocation(file, exc.lineno or 0)) from None
        for node in ast.walk(module):
            if isinstance(node, ast.FunctionDef) and node.name == function.__name__:
                first = min([d.lineno for d in node.decorator_list] + [node.lineno])
                if code.co_firstlineno in (first, node.lineno):
                    return cls(function, file, node)
        raise KernelError(f"cannot find the source of kernel {function.__name__!r} in {file}; has the file changed "
                          "since it was imported?", where)

    def location(self, node: ast.AST) -> SourceLocation:
        return SourceLocation(self.file, getattr(node, "lineno", self.tree.lineno),
                              getattr(node, "col_offset", -1) + 1)

    def loc(self, node: ast.AST) -> FileLineColLoc:
        where = self.location(node)
        return file_line_loc(where.file, where.line, where.column)

    def error(self, node: ast.AST, message: str) -> KernelError:
        return KernelError(message, self.location(node))

    def lookup(self, name: str):
        """What ``name`` refers to outside the kernel (closure, module, builtins), or :data:`MISSING`."""
        code = self.function.__code__
        if name in code.co_freevars and self.function.__closure__:
            cell = self.function.__closure__[code.co_freevars.index(name)]
            try:
                return cell.cell_contents
            except ValueError:
                return MISSING
        value = self.function.__globals__.get(name, MISSING)
        if value is MISSING:
            value = getattr(builtins, name, MISSING)
        return value
