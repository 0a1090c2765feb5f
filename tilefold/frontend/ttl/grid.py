"""The grid of a TT-Lang operation: ``grid=(d0, ..., dn) | "full" | "auto"``, ``ttl.grid_size`` and ``ttl.node``.

Reads: the ``grid`` argument of ``@ttl.operation`` and the device description. Writes: the nodes
as ``(columns, rows)`` and the grid's own dimensions, and, at operation scope, symbolic node
coordinates.

Coordinates follow TT-Lang: a node's linear index enumerates the grid with the last coordinate
varying fastest. A 2-D grid is ``(columns, rows)``: ``x`` is the column, ``y`` the row, the linear
node ``x * rows + y``. A grid of more dimensions takes ``d0 * ... * d(n-1)`` columns of ``dn``
rows, which keeps that order; a 1-D grid ``(n,)`` takes columns of up to 8 rows (:func:`core_grid`).
``grid_size(dims)`` with fewer dimensions than the grid flattens the
last ones (``dims=1`` is the node count), with more pads with 1; ``node(dims)`` with fewer
flattens the first ones (``dims=1`` is the linear index), with more pads with 0. Inside kernels
the front end turns ``ttl.node`` into runtime values; in the operation's body it returns
:class:`NodeExpression` objects, which support integer arithmetic and become runtime values where
a kernel uses them.
"""

from __future__ import annotations

import builtins
import math
import operator
import types
from dataclasses import dataclass

from tilefold.arch import NOC_COLUMNS, Arch
from tilefold.errors import KernelArgumentError, KernelError, KernelValueError, SourceLocation, warn_at
from tilefold.frontend.ttl import capture
from tilefold.caller import checked_arguments, user_location

FULL_GRID = ("full", "auto")


ONE_D_ROWS = 8     # a 1-D grid's nodes fill columns of at most this many rows (every device has 8+)


def core_grid(dims: tuple[int, ...]) -> tuple[int, int]:
    """The ``(columns, rows)`` of nodes an n-D grid takes: every dimension but the last as columns,
    the last as rows (so the linear node order is the same). A 1-D grid of ``n`` nodes fills
    columns of ``r`` rows, ``r`` the largest divisor of ``n`` up to :data:`ONE_D_ROWS`, so node
    ``i`` is ``(i // r, i % r)`` as a linear index is on a 2-D grid."""
    if len(dims) == 1:
        rows = max(r for r in range(1, min(dims[0], ONE_D_ROWS) + 1) if dims[0] % r == 0)
        return dims[0] // rows, rows
    return math.prod(dims[:-1]), dims[-1]


def boards_holding(cols: int, rows: int) -> list[tuple[str, Arch]]:
    """``(name, device)`` of each device whose compute grid holds ``cols`` x ``rows`` nodes, by
    every name it has (``blackhole``, ``p150`` ...)."""
    from tilefold.arch import ARCHS

    return [(k, a) for k, a in ARCHS.items() if a.grid[0] >= cols and a.grid[1] >= rows and ":" not in k]


def board_for_grid(grid, arch: Arch, chosen: bool, location: SourceLocation | None) -> Arch:
    """The device a call with ``grid`` runs on: ``arch``, or — when the session did not choose one
    (``chosen`` false: no ``--arch``) and a 2-D grid is too large for it — the smallest board whose
    compute grid holds it (Blackhole's 13x10 for TT-Lang programs written for it), with a warning
    at the operation naming ``--arch``. tt-lang-sim runs any grid; here a node is a core of a real
    board, so such a program runs on the board it was written for."""
    if chosen or isinstance(grid, str):
        return arch
    try:
        dims = tuple(int(d) for d in grid)
    except (TypeError, ValueError):
        return arch
    if len(dims) != 2 or any(d <= 0 for d in dims) or (dims[0] <= arch.grid[0] and dims[1] <= arch.grid[1]):
        return arch
    fits = boards_holding(*dims)
    if not fits:
        return arch
    board = min((a for _, a in fits), key=lambda a: a.grid[0] * a.grid[1])
    name = [k for k, a in fits if a is board][-1]       # its board's own name (p150, p150-full)
    warn_at(f"@ttl.operation(grid={grid!r}) does not fit the {arch.grid[0]}x{arch.grid[1]} compute grid of "
            f"{arch.board}, the default device: this call runs on a {name} ({board.grid[0]}x{board.grid[1]}), "
            f"the smallest board it fits; choose the device with --arch {name} (or a grid of at most "
            f"{tuple(arch.grid)})", location)
    return board


def grid_dimensions(grid, location: SourceLocation | None) -> tuple[int, ...]:
    """The dimensions of a ``grid=(d0, ..., dn)`` argument, each a positive integer (checked when
    the operation is decorated, as TT-Lang does, and at each call)."""
    try:
        if any(isinstance(d, bool) for d in grid):
            raise TypeError("a bool is no grid size")
        dims = tuple(operator.index(d) for d in grid)     # 1.5 or "2" is no size (int() would truncate)
    except (TypeError, ValueError):
        raise KernelValueError(f"@ttl.operation(grid={grid!r}): grid is 'full', 'auto' or a tuple (columns, rows) "
                               "of positive integers", location) from None
    if not dims:
        raise KernelValueError(f"@ttl.operation(grid={grid!r}) has no dimensions; a grid needs at least one "
                               "dimension: give grid=(nodes,), (columns, rows) or more dimensions", location)
    empty = [f"dimension {i} is {d}" for i, d in enumerate(dims) if d <= 0]
    if empty:
        raise KernelValueError(f"@ttl.operation(grid={grid!r}) names no node ({', '.join(empty)}); every dimension "
                               "needs at least one node", location)
    return dims


def resolve_grid(grid, arch: Arch, location: SourceLocation | None) -> tuple[tuple[int, int], tuple[int, ...]]:
    """``(columns, rows)`` of the nodes a ``grid`` argument takes on ``arch``, and the grid's own
    dimensions (``(d0, ..., dn)`` for ``ttl.node`` / ``ttl.grid_size``)."""
    if isinstance(grid, str):
        if grid not in FULL_GRID:
            raise KernelError(f"@ttl.operation(grid={grid!r}): grid is 'full', 'auto' or (columns, rows)", location)
        return tuple(arch.grid), tuple(arch.grid)
    dims = grid_dimensions(grid, location)
    cols, rows = core_grid(dims)
    gx, gy = arch.grid
    if cols <= gx and rows <= gy:
        return (cols, rows), dims
    if len(dims) <= 2:
        fits = [k for k, _ in boards_holding(cols, rows)]
        other = f", or run on a device with a larger grid ({', '.join(f'--arch {k}' for k in fits)})" if fits else ""
        takes = f" (its {dims[0]} nodes take {cols} columns of {rows} row{'s' * (rows != 1)})" if len(dims) == 1 else ""
        raise KernelError(f"@ttl.operation(grid={grid!r}) does not fit the {gx}x{gy} compute grid of {arch.board}"
                          f"{takes}; use at most ({gx}, {gy}) or grid='full'{other}", location)
    if len(dims) >= 3 and dims[-2] <= gx and dims[-1] <= gy and cols + 1 < NOC_COLUMNS:
        from tilefold.frontend.ttl.mesh import num_available_devices

        chips = mesh_chips(dims)
        if chips <= num_available_devices():
            return (cols, rows), dims            # a mesh of chips (operation.capture makes its device)
        raise KernelError(f"@ttl.operation(grid={grid!r}) spans {chips} chips ({'x'.join(map(str, dims[:-2]))}) "
                          f"but {num_available_devices()} are simulated; run with --num-devices {chips} (or "
                          f"ttnn.set_num_devices({chips}))", location)
    lead = " * ".join(f"d{i}" for i in range(len(dims) - 1))
    limit = (f"its nodes take {cols} columns ({lead}) by {rows} rows (d{len(dims) - 1}), and the compute grid of "
             f"{arch.board} is {gx}x{gy}: an n-D grid fits one chip when {lead} <= {gx} and d{len(dims) - 1} <= {gy}")
    raise KernelError(f"@ttl.operation(grid={grid!r}) spans several chips, and a grid (mesh axes..., x, y) runs on "
                      f"a mesh of chips when x <= {gx}, y <= {gy} and the {mesh_chips(dims)} chips take at most "
                      f"{NOC_COLUMNS - 2} node columns together ({limit})", location)


def mesh_chips(dims: tuple[int, ...]) -> int:
    """The chips a grid larger than one chip takes: its leading dimensions are device-mesh axes
    (TT-Lang's), the last two each chip's nodes."""
    return math.prod(dims[:-2])


def grid_shape(grid: tuple[int, ...], dims: int, location=None):
    """``ttl.grid_size(dims)`` of a grid of dimensions ``grid``: fewer dimensions flatten the last
    ones, more pad with 1."""
    if not isinstance(dims, int) or isinstance(dims, bool) or dims < 1:
        raise KernelError(f"grid_size(dims={dims!r}): dims must be a positive integer", location)
    grid = tuple(grid)
    if dims == 1:
        return math.prod(grid)
    if dims >= len(grid):
        return grid + (1,) * (dims - len(grid))
    return grid[:dims - 1] + (math.prod(grid[dims - 1:]),)


def node_shape(grid: tuple[int, ...], dims: int) -> tuple[int, ...]:
    """The sizes of the coordinates ``ttl.node(dims)`` gives on a grid of dimensions ``grid``: fewer
    dimensions flatten the first ones, more pad with 1."""
    n = len(grid)
    if dims >= n:
        return tuple(grid) + (1,) * (dims - n)
    return (math.prod(grid[:n - dims + 1]),) + tuple(grid[n - dims + 1:])


def node_index(coords: tuple[int, ...], grid: tuple[int, ...]) -> int | None:
    """The linear index of node ``coords`` (as ``ttl.node(dims=len(coords))`` gives them), or None
    when it is outside the grid."""
    shape = node_shape(grid, len(coords))
    if not all(0 <= c < s for c, s in zip(coords, shape)):
        return None
    index = 0
    for c, s in zip(coords, shape):
        index = index * s + c
    return index


@checked_arguments("ttl.grid_size")
def grid_size(dims: int = 2):
    """The size of the operation's grid in ``dims`` dimensions (on the host after an operation
    call: the grid that call ran on)."""
    return grid_shape(capture.current_or_last("ttl.grid_size").grid_dims, dims, user_location())


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
            cols, rows = core_grid(op.grid_dims)       # one chip's nodes (of an operation over devices)
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

    def __iter__(self):
        raise KernelArgumentError("this node coordinate is one number (ttl.node(dims=1) is the linear index); "
                                  "unpack coordinates from ttl.node(dims=2) (x, y = ...)", user_location())

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


def with_node_builtins(function, **names):
    """``function`` seeing :data:`BODY_BUILTINS` (so that ``min(node * n, total)`` in an operation's
    body is a node expression) and ``names`` (``grid``: the operation's resolved grid, which TT-Lang's
    simulator gives a body as a global) where its module does not define those names."""
    extra = {k: v for k, v in {**BODY_BUILTINS, **names}.items() if k not in function.__globals__}
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


def node_coordinates(grid: tuple[int, ...], dims: int, x, y, arithmetic, location=None):
    """``ttl.node(dims)`` on a grid of dimensions ``grid`` from the coordinates ``x`` (column) and
    ``y`` (row) of its nodes (:func:`core_grid`): the last coordinate is ``y``, the others are
    ``x`` unflattened; fewer dimensions flatten the first ones, more pad with 0. ``arithmetic(op,
    a, b)`` computes ``+ * // %``."""
    if not isinstance(dims, int) or isinstance(dims, bool) or dims < 1:
        raise KernelError(f"node(dims={dims!r}): dims must be a positive integer", location)
    grid = tuple(grid)
    n = len(grid)
    if dims == 1 or n == 1:
        linear = arithmetic("+", arithmetic("*", x, core_grid(grid)[1]), y)
        return linear if dims == 1 else (linear,) + (0,) * (dims - 1)
    # groups of the grid's dimensions, each one coordinate: the first n - dims + 1 flattened
    first = max(0, n - dims)
    groups = [(0, first)] + [(i, i) for i in range(first + 1, n)]

    def column_part(a: int, b: int):
        """Dimensions a..b (all before the last) flattened, from the column x."""
        size = math.prod(grid[a:b + 1])
        if size == 1:
            return 0
        value = x
        below = math.prod(grid[b + 1:n - 1])
        if below > 1:
            value = arithmetic("//", value, below)
        if a > 0:
            value = arithmetic("%", value, size)
        return value

    coords = tuple(y if b == n - 1 else column_part(a, b) for a, b in groups)
    return coords + (0,) * (dims - len(coords))


@checked_arguments("ttl.node")
def node(dims: int = 2):
    """This node's coordinates; in an operation's body, symbolic (see :class:`NodeExpression`)."""
    op = capture.current("ttl.node")
    x, y = NodeExpression("x"), NodeExpression("y")

    def arithmetic(kind, a, b):
        a = a if isinstance(a, NodeExpression) else NodeExpression("const", (a,))
        return NodeExpression(kind, (a, b if isinstance(b, NodeExpression) else NodeExpression("const", (b,))))

    return node_coordinates(op.grid_dims, dims, x, y, arithmetic, user_location())
