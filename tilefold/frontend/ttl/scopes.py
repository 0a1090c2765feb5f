"""What a kernel builder is inside: the names of a function (:class:`Scope`) and the statement
list being built (:class:`Region`).

Reads / writes: nothing; shared by :mod:`.builder`, :mod:`.data_movement` and :mod:`.helpers`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from tilefold.frontend.source import MISSING


MAX_UNROLLED_ITEMS = 1 << 16     # a loop over an iterator (a generator ...) or a comprehension unrolls at most this many items


class Scope:
    """Names of a function being built; nested functions read through to their parent."""

    def __init__(self, parent: Scope | None = None, carried: set[str] | None = None):
        self.parent = parent
        self.names: dict[str, object] = {}
        self.carried = carried or set()

    def lookup(self, name: str):
        scope = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        return MISSING


@dataclass
class Region:
    """A statement list being built: the function body, a loop body, a branch or a with body."""

    kind: str                     # "function" | "loop" | "branch" | "with"
    node: ast.AST
    transfers: list = field(default_factory=list)
    accumulators: list = field(default_factory=list)
