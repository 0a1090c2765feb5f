"""The grid of a TT-Lang operation: ``grid=(columns, rows) | "full" | "auto"``, ``ttl.grid_size`` and ``ttl.node``.

Reads: the ``grid`` argument of ``@ttl.operation`` and the device description. Writes: the grid as
``(columns, rows)`` and, at operation scope, symbolic node coordinates.

Coordinates follow TT-Lang: ``x`` is the column, ``y`` the row; ``grid_size(dims=1)`` flattens the
grid (``columns * rows``), ``dims=3`` pads with 1; ``node(dims=1)`` is ``x * rows + y`` (the last
coordinate varies fastest, as in TT-Lang's simulator: a linear index ``i`` is the node
``(i // rows, i % rows)``), ``dims=3`` pads with 0. Inside kernels the front end turns ``ttl.node`` into runtime values; in the
operation's body it returns :class:`NodeExpression` objects, which support integer arithmetic and
become runtime values where a kernel uses them.
"""

from __future__ import annotations

import builtins
import types
from dataclasses import dataclass

from tilefold.arch import Arch
from tilefold.errors import KernelError, SourceLocation
from tilefold.frontend.ttl import capture
from tilefold.caller import user_location

FULL_GRID = ("full", "auto")


def resolve_grid(grid, arch: Arch, location: SourceLocation | None) -> tuple[int, int]:
    """``(columns, rows)`` of a ``grid`` argument on ``arch``."""
    if isinstance(grid, str):
        if grid not in FULL_GRID:
            raise KernelError(f"@ttl.operation(grid={grid!r}): grid is 'full', 'auto' or (columns, rows)", location)
        return tuple(arch.grid)
    try:
        dims = tuple(int(d) for d in grid)
    except (TypeError, ValueError):
        raise KernelError(f"@ttl.operation(grid={grid!r}): grid is 'full', 'auto' or a tuple (columns, rows) of "
                          "positive integers", location) from None
    if len(dims) == 4:
        raise KernelError(f"@ttl.operation(grid={grid!r}) spans several chips; tilefold runs one grid per chip: give "
                          "grid=(columns, rows) and call the operation with mesh tensors (pipes between chips are "
                          "not supported by tilefold yet; combine chips with ttnn.all_gather / ttnn.all_reduce)",
                          location)
    if len(dims) != 2:
        raise KernelError(f"@ttl.operation(grid={grid!r}) has {len(dims)} dimensions; a single-chip grid is "
                          "2-D: give grid=(columns, rows)", location)
    cols, rows = dims
    if cols <= 0 or rows <= 0:
        raise KernelError(f"@ttl.operation(grid={grid!r}): grid sizes must be positive", location)
    gx, gy = arch.grid
    if cols > gx or rows > gy:
        from tilefold.arch import ARCHS

        fits = [k for k, a in ARCHS.items() if a.grid[0] >= cols and a.grid[1] >= rows and ":" not in k]
        other = f", or run on a device with a larger grid ({', '.join(f'--arch {k}' for k in fits)})" if fits else ""
        raise KernelError(f"@ttl.operation(grid={grid!r}) does not fit the {gx}x{gy} compute grid of {arch.board}; "
                          f"use at most ({gx}, {gy}) or grid='full'{other}", location)
    return cols, rows


def grid_shape(grid: tuple[int, int], dims: int, location=None):
    """``ttl.grid_size(dims)`` of a ``(columns, rows)`` grid."""
    if not isinstance(dims, int) or dims < 1:
        raise KernelError(f"grid_size(dims={dims!r}): dims must be a positive integer", location)
    cols, rows = grid
    if dims == 1:
        return cols * rows
    return (cols, rows) + (1,) * (dims - 2)


def grid_size(dims: int = 2):
    """The size of the operation's grid in ``dims`` dimensions."""
    return grid_shape(capture.current("ttl.grid_size").grid, dims, user_location())


# --- node coordinates at operation scope ------------------------------------------------------


@dataclass(frozen=True, eq=False)
class NodeExpression:
    """An integer expression of the node's coordinates, built in an operation's body."""

    op: str                      # "x", "y", "const", "+", "-", "*", "//", "%", "min", "max"
    args: tuple = ()

    def _wrap(self, other):
        if isinstance(other, NodeExpression):
            return other
        if isinstance(other, int) and not isinstance(other, bool):
            return NodeExpression("const", (other,))
        raise KernelError(f"cannot combine the node coordinate with {other!r}; use integers", user_location())

    def __add__(self, o):
        return NodeExpression("+", (self, self._wrap(o)))

    def __radd__(self, o):
        return NodeExpression("+", (self._wrap(o), self))

    def __sub__(self, o):
        return NodeExpression("-", (self, self._wrap(o)))

    def __rsub__(self, o):
        return NodeExpression("-", (self._wrap(o), self))

    def __mul__(self, o):
        return NodeExpression("*", (self, self._wrap(o)))

    def __rmul__(self, o):
        return NodeExpression("*", (self._wrap(o), self))

    def __floordiv__(self, o):
        return NodeExpression("//", (self, self._wrap(o)))

    def __mod__(self, o):
        return NodeExpression("%", (self, self._wrap(o)))

    # A comparison (or truth test, or int()) in the operation's body is a Python value when it
    # comes out the same on every node of the grid (``assert 0 <= x < cols``); else the node's
    # coordinates are only known on the device.

    def _uniform(self, what: str, fn):
        op = capture.active()
        values = set()
        if op is not None:
            cols, rows = op.grid
            for y in range(rows):
                for x in range(cols):
                    values.add(fn(lambda leaf, x=x, y=y: x if leaf == "x" else y))
        if len(values) != 1:
            raise KernelError(f"the node's coordinates are only known on the device, and {what} differs between "
                              "nodes; use it inside a kernel function, not in the operation's body", user_location())
        return values.pop()

    def _compare(self, other, name: str, test):
        other = self._wrap(other)
        return self._uniform("this comparison", lambda leaf: test(self.value(leaf), other.value(leaf)))

    def __lt__(self, other):
        return self._compare(other, "<", lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, "<=", lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, ">", lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, ">=", lambda a, b: a >= b)

    def __eq__(self, other):
        if not isinstance(other, (int, NodeExpression)) or isinstance(other, bool):
            return NotImplemented
        return self._compare(other, "==", lambda a, b: a == b)

    def __ne__(self, other):
        if not isinstance(other, (int, NodeExpression)) or isinstance(other, bool):
            return NotImplemented
        return self._compare(other, "!=", lambda a, b: a != b)

    __hash__ = object.__hash__

    def __bool__(self):
        return self._uniform("this value", lambda leaf: self.value(leaf) != 0)

    def __index__(self):
        return self._uniform("this value", self.value)

    __int__ = __index__

    def value(self, leaf) -> int:
        """The expression on one node (``leaf(name)`` gives its x / y)."""
        python = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
                  "//": lambda a, b: a // b, "%": lambda a, b: a % b, "min": builtins.min, "max": builtins.max}
        return self.evaluate(leaf, lambda op, a, b: python[op](a, b))

    def key(self) -> tuple:
        """The expression as nested tuples (for fingerprints)."""
        return (self.op, *(a.key() if isinstance(a, NodeExpression) else a for a in self.args))

    def evaluate(self, leaf, arithmetic):
        """Fold the expression with ``leaf(name)`` for x / y and ``arithmetic(op, a, b)``."""
        if self.op in ("x", "y"):
            return leaf(self.op)
        if self.op == "const":
            return self.args[0]
        a, b = (arg.evaluate(leaf, arithmetic) for arg in self.args)
        return arithmetic(self.op, a, b)


def _folded(which: str):
    """``min`` / ``max`` for an operation's body: of node expressions, a node expression (the
    kernels compute it); of anything else, Python's."""
    python = builtins.min if which == "min" else builtins.max

    def fold(*args, **kwargs):
        values = list(args[0]) if len(args) == 1 and not isinstance(args[0], NodeExpression) and hasattr(
            args[0], "__iter__") else list(args)
        if kwargs or not any(isinstance(v, NodeExpression) for v in values):
            return python(*args, **kwargs)
        result = values[0]
        for v in values[1:]:
            left = result if isinstance(result, NodeExpression) else NodeExpression("const", (result,))
            result = NodeExpression(which, (left, left._wrap(v)))
        return result

    fold.__name__ = which
    return fold


BODY_BUILTINS = {"min": _folded("min"), "max": _folded("max")}


def with_node_builtins(function):
    """``function`` seeing :data:`BODY_BUILTINS` where its module does not define those names, so
    that ``min(node * n, total)`` in an operation's body is a node expression."""
    extra = {k: v for k, v in BODY_BUILTINS.items() if k not in function.__globals__}
    if not extra:
        return function
    namespace = {**function.__globals__, **extra}
    body = types.FunctionType(function.__code__, namespace, function.__name__, function.__defaults__,
                              function.__closure__)
    body.__kwdefaults__ = function.__kwdefaults__
    return body


def linear_node(index: int, grid: tuple[int, int]) -> tuple[int, int]:
    """The node ``(x, y)`` of linear index ``index`` (see the module's docstring)."""
    return index // grid[1], index % grid[1]


def node_coordinates(grid: tuple[int, int], dims: int, x, y, arithmetic, location=None):
    """``ttl.node(dims)`` from the coordinates ``x`` (column) and ``y`` (row)."""
    if not isinstance(dims, int) or dims < 1:
        raise KernelError(f"node(dims={dims!r}): dims must be a positive integer", location)
    if dims == 1:
        return arithmetic("+", arithmetic("*", x, grid[1]), y)
    return (x, y) + (0,) * (dims - 2)


def node(dims: int = 2):
    """This node's coordinates; in an operation's body, symbolic (see :class:`NodeExpression`)."""
    op = capture.current("ttl.node")
    x, y = NodeExpression("x"), NodeExpression("y")

    def arithmetic(kind, a, b):
        a = a if isinstance(a, NodeExpression) else NodeExpression("const", (a,))
        return NodeExpression(kind, (a, b if isinstance(b, NodeExpression) else NodeExpression("const", (b,))))

    return node_coordinates(op.grid, dims, x, y, arithmetic, user_location())
