"""``ttl.Semaphore``: a semaphore of an operation, one copy on every node of its grid.

Reads: the operation's body (``ttl.Semaphore(initial_value)``, ``get_remote((x, y))``,
``get_remote_multicast()``; nodes as ``(x, y)``, a linear index or one coordinate per dimension
of the grid). Writes: the semaphore's entry in the operation's capture (its
number among the operation's semaphores, its initial value) and the nodes and rectangles its
remote handles name. Data movement kernels use them (:mod:`.expressions` builds
``ttl.semaphore`` ops): ``wait_eq(n)`` / ``wait_ge(n)`` (``wait_min``) / ``set(n)`` on this node's
copy, ``remote.inc(n)`` / ``remote.set(n)`` on another node's, ``multicast.set(n)`` on every node of
a rectangle; the handles may be made in a kernel too, of nodes known when it is built.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilefold.caller import user_location
from tilefold.errors import KernelError
from tilefold.frontend.ttl import capture
from tilefold.frontend.ttl.grid import NodeExpression, core_grid, linear_node, node_index


def _node(value, dims, what: str, location) -> tuple[int, int]:
    """The node ``(x, y)`` of a linear index or a tuple of coordinates (as ``ttl.node(dims=len(value))``
    gives them) on a grid of dimensions ``dims``."""
    grid = core_grid(dims)
    cols, rows = grid
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    if (not isinstance(value, tuple) or not value
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        kind = "the node's own coordinates" if isinstance(value, NodeExpression) or (
            isinstance(value, tuple) and any(isinstance(v, NodeExpression) for v in value)) else repr(value)
        raise KernelError(f"{what}: give a node as (x, y) integers or a linear index, not {kind}", location)
    index = node_index(value, dims)
    if index is None:
        where = f"{cols}x{rows} grid" if len(value) == 2 else f"grid {tuple(dims)}"
        raise KernelError(f"{what}: node {value[0] if len(value) == 1 else value} is outside the {where}", location)
    return linear_node(index, grid)


class Semaphore:
    """``ttl.Semaphore(initial_value=0)`` in an operation's body."""

    def __init__(self, initial_value: int = 0):
        location = user_location()
        op = capture.current("ttl.Semaphore")
        if not isinstance(initial_value, int) or isinstance(initial_value, bool) or initial_value < 0:
            raise KernelError(f"ttl.Semaphore(initial_value={initial_value!r}): the initial value is a "
                              "non-negative integer", location)
        if initial_value >= 1 << 32:         # a semaphore is one 32-bit word of L1
            raise KernelError(f"ttl.Semaphore(initial_value={initial_value!r}): a semaphore is a 32-bit word; its "
                              "initial value is at most 4294967295", location)
        self.grid = op.grid
        self.grid_dims = op.grid_dims
        self.initial_value = initial_value
        self.location = location
        self.index = len(op.semaphores)
        op.semaphores.append(self)

    def get_remote(self, node) -> RemoteSemaphore:
        """This semaphore's copy on ``node`` ((x, y) or a linear index): ``inc(n)`` from a kernel."""
        x, y = _node(node, self.grid_dims, "Semaphore.get_remote", user_location())
        return RemoteSemaphore(self, y * self.grid[0] + x)

    def get_remote_multicast(self, nodes=None) -> MulticastSemaphore:
        """This semaphore's copies on a rectangle of nodes (``(x, y)`` with slices; the whole grid by
        default): ``set(n)`` from a kernel sets this node's copy and all of them."""
        location = user_location()
        cols, rows = core_grid(self.grid_dims)      # one chip's nodes (of an operation over devices)
        if nodes is None:
            rect = (0, 0, cols - 1, rows - 1)
        else:
            from tilefold.frontend.ttl.pipes import Pipe, resolve_routes

            if not isinstance(nodes, tuple) or len(nodes) < 2:
                raise KernelError(f"Semaphore.get_remote_multicast({nodes!r}): give (x, y) with slices of nodes",
                                  location)
            try:
                routes = resolve_routes(Pipe(0, nodes), 0, self.grid_dims, location)
            except KernelError as exc:
                raise KernelError(f"Semaphore.get_remote_multicast: {exc.message.removeprefix('Pipe 0 ')}",
                                  location) from None
            if len(routes) != 1 or routes[0].exclude_src:
                raise KernelError(f"Semaphore.get_remote_multicast({nodes!r}): these nodes form no rectangle of the "
                                  f"grid's {cols} columns and {rows} rows; multicast to each rectangle separately",
                                  location)
            r = routes[0]
            rect = (r.x0, r.y0, r.x1, r.y1)
        op = capture.current("Semaphore.get_remote_multicast")
        op.semaphore_rects.append(rect)
        return MulticastSemaphore(self, len(op.semaphore_rects) - 1, rect)

    def _kernel_only(self, *args, **kwargs):
        raise KernelError("this semaphore call runs outside every kernel function; a semaphore is waited on and set "
                          "by the kernels themselves — move the call into a @ttl.datamovement kernel function",
                          user_location())

    wait_eq = wait_min = wait_ge = set = inc = _kernel_only


@dataclass(frozen=True)
class RemoteSemaphore:
    """A semaphore's copy on another node (``Semaphore.get_remote``)."""

    semaphore: Semaphore
    node: int                   # y * columns + x (not the user's linear index)

    def inc(self, value=1):
        Semaphore._kernel_only(self)

    def set(self, value):
        Semaphore._kernel_only(self)


@dataclass(frozen=True)
class MulticastSemaphore:
    """A semaphore's copies on a rectangle of nodes (``Semaphore.get_remote_multicast``)."""

    semaphore: Semaphore
    rect_index: int
    rect: tuple[int, int, int, int]

    def set(self, value):
        Semaphore._kernel_only(self)
