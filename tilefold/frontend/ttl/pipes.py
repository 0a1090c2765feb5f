"""Pipes between nodes: ``ttl.Pipe(src, dst)``, ``ttl.PipeNet([pipes])``, ``ttl.PipeNet(graph=...)`` and
``ttl.PipeNet(mappings=[ttl.PipeMapping(...)])``.

Reads: node coordinates (``(x, y)``, a linear index, or one coordinate per dimension of an n-D
grid) and node ranges (a coordinate or a ``slice`` per dimension).
Writes: a :class:`PipeNet` registered with the running operation, which knows for every node of
the grid the pipes it is the source of and the pipes it receives from, in the net's order.

A pipe's destination is one node (unicast), a rectangle of nodes (multicast), a range of linear
node indices or a box of an n-D grid; destinations that form no rectangle of the grid's columns
and rows take several routes, one multicast rectangle each (:func:`cover`), each with its own
semaphore handshake. The data
movement kernels use a net with ``net.if_src(body)`` / ``net.if_dst(body)``; the front end runs
``body`` once per route the node takes part in (see :mod:`tilefold.frontend.ttl.builder`): a split
pipe's source sends once per rectangle, each destination receives once.

In an operation over a device domain (``device_domain=``, one chip per device) a net made with
``graph=ttl.TransferGraph...`` has, for each edge of the graph, its local pipes (``pipes=``, each
node of ``local_nodes=``, or every node to itself) from the source device's chip to the destination
device's; ``mappings=[ttl.PipeMapping(graph=..., pipes=[...]), ...]`` is the union of several such
graphs with their pipes, in order, as is a list of pipes that name their devices
(``ttl.Pipe(src=domain[d].at_node(x, y), dst=...)``, ``ttl.Pipe.pairwise``, ``ttl.Pipe.all_to_all``).
A net without a graph is repeated on every chip.

Errors: coordinates outside the grid, an empty destination range, slices with a step, a graph net
used by an operation over another device domain or none.
"""

from __future__ import annotations

import functools
import itertools
import weakref
from dataclasses import dataclass, replace

from tilefold.errors import KernelError, KernelValueError, SourceLocation
from tilefold.frontend.ttl import capture
from tilefold.frontend.ttl.grid import core_grid, linear_node, node_index, node_shape
from tilefold.caller import user_location


def _coordinate(value, dims: tuple[int, ...], what: str, location) -> tuple[int, int]:
    """The node ``(x, y)`` of a node given as a linear index or a tuple of coordinates (as
    ``ttl.node(dims=len(value))`` gives them)."""
    grid = core_grid(dims)
    if isinstance(value, tuple) and len(value) == 1:          # (i,): a linear node index
        value = value[0]
    if _is_int(value):
        if not 0 <= value < grid[0] * grid[1]:
            raise KernelError(f"{what} {value} is outside the {grid[0] * grid[1]} nodes of the grid", location)
        return linear_node(value, grid)
    if isinstance(value, tuple) and len(value) == 4 and len(dims) < 4:
        raise KernelError(f"{what} {node_text(value)} names a node on a chip of a mesh; pipes between chips are not "
                          "supported by tilefold yet — give (x, y) on this chip's grid", location)
    if isinstance(value, tuple) and len(value) >= 2 and all(_is_int(v) for v in value):
        if len(value) == 2 and len(dims) == 2:
            return value            # checked against the grid by the caller
        index = node_index(value, dims)
        if index is None:
            raise KernelError(f"{what} {node_text(value)} is outside the grid {dims}", location)
        return linear_node(index, grid)
    raise KernelError(f"{what} {value!r} is not a node coordinate; give (x, y) with integers", location)


def _range(value, size: int, what: str, location) -> tuple[int, int]:
    """Inclusive ``(first, last)`` of one dimension of a node range."""
    if isinstance(value, slice):
        if value.step not in (None, 1):
            raise KernelError(f"{what}: node ranges are contiguous; drop the slice step {value.step}", location)
        first, stop, _ = value.indices(size)
        if stop <= first:
            raise KernelError(f"{what}: the slice {value.start}:{value.stop} selects no node", location)
        return first, stop - 1
    if isinstance(value, int) and not isinstance(value, bool):
        return value, value
    raise KernelError(f"{what}: {value!r} is not an index or a slice", location)


def resolve_routes(pipe: Pipe, i: int, dims: tuple[int, ...], location) -> list[PipeRoute]:
    """Pipe ``i`` of a net with its nodes resolved on an operation's grid of dimensions ``dims``: one
    rectangular route, or several when its destinations (a range of linear node indices, or a box of
    an n-D grid) form no rectangle of nodes."""
    dims = tuple(dims)
    grid = core_grid(dims)
    cols, rows = grid
    if isinstance(pipe.dst, tuple) and len(pipe.dst) == 4 and len(dims) < 4:
        raise KernelError(f"Pipe {i} dst {node_text(pipe.dst)} names nodes on chips of a mesh; pipes between "
                          "chips are not supported by tilefold yet — give (x, y) on this chip's grid", location)
    src = _coordinate(pipe.src, dims, f"Pipe {i} src", location)
    if not (0 <= src[0] < cols and 0 <= src[1] < rows):
        raise KernelError(f"Pipe {i} src {src} is outside the {cols}x{rows} grid", location)
    dst = pipe.dst
    if isinstance(dst, tuple) and len(dst) == 1 and isinstance(dst[0], slice):
        return _linear_routes(src, dst[0], i, grid, location)
    if isinstance(dst, tuple) and len(dst) > 2 and any(isinstance(d, slice) for d in dst):
        return _box_routes(src, dst, i, dims, location)
    if isinstance(dst, tuple) and len(dst) == 2:
        (x0, x1), (y0, y1) = (_range(dst[0], cols, f"Pipe {i} dst", location),
                              _range(dst[1], rows, f"Pipe {i} dst", location))
    else:
        x0, y0 = x1, y1 = _coordinate(dst, dims, f"Pipe {i} dst", location)
    if not (0 <= x0 <= x1 < cols and 0 <= y0 <= y1 < rows):
        raise KernelError(f"Pipe {i} dst {dst!r} reaches outside the {cols}x{rows} grid", location)
    return [PipeRoute(src, x0, y0, x1, y1, pipe=i)]


def cover(nodes) -> list[tuple[int, int, int, int]]:
    """Few rectangles ``(x0, y0, x1, y1)`` that together hold exactly the nodes ``(x, y)`` of a set:
    each column's runs of consecutive rows, a run repeated in consecutive columns made one
    rectangle; ordered by first column, then first row."""
    columns: dict[int, list[int]] = {}
    for x, y in nodes:
        columns.setdefault(x, []).append(y)
    done: list = []
    open_: dict = {}                    # open_: (y0, y1) -> [x0, x1] of a rectangle still growing
    for x in sorted(columns):
        ys = sorted(columns[x])
        runs, start = [], ys[0]
        for a, b in zip(ys, ys[1:] + [None]):
            if b != a + 1:
                runs.append((start, a))
                start = b
        grown = {}
        for run in runs:
            rect = open_.pop(run, None)
            if rect is not None and rect[1] == x - 1:
                rect[1] = x
            else:
                if rect is not None:
                    done.append((rect[0], run[0], rect[1], run[1]))
                rect = [x, x]
            grown[run] = rect
        done += [(r[0], run[0], r[1], run[1]) for run, r in open_.items()]
        open_ = grown
    done += [(r[0], run[0], r[1], run[1]) for run, r in open_.items()]
    return sorted(done)


def active_rectangles(nets, grid: tuple[int, int]) -> list[tuple[int, int, int, int]] | None:
    """TT-Lang's PipeNet active set: the nodes that are a source or a destination of a pipe of the
    operation's nets, as rectangles ``(x0, y0, x1, y1)``, when they are fewer than the grid's nodes;
    None when every node is active (no net, a net over a transfer graph, or pipes reaching every node)."""
    if not nets or any(net.graph is not None for net in nets):
        return None
    nodes = set()
    for net in nets:
        for route in net.routes:
            nodes.add(tuple(route.src))
            nodes.update(route.destinations)
    if len(nodes) >= grid[0] * grid[1]:
        return None
    return cover(nodes)


def _cover_routes(src, nodes: set, i: int, span=None, box=None) -> list[PipeRoute]:
    """The routes of a pipe from ``src`` to a set of nodes: the fewest rectangles of :func:`cover`,
    one of them holding the source but skipping it (a multicast that skips its sender) when that
    saves a rectangle."""
    options = [(cover(nodes), False)]
    if src not in nodes:
        options.append((cover(nodes | {src}), True))
    rects, extended = min(options, key=lambda o: len(o[0]))
    routes = []
    for x0, y0, x1, y1 in rects:
        holds_src = extended and x0 <= src[0] <= x1 and y0 <= src[1] <= y1
        routes.append(PipeRoute(src, x0, y0, x1, y1, exclude_src=holds_src, pipe=i, span=span, box=box))
    return routes


def _linear_routes(src, span: slice, i: int, grid: tuple[int, int], location) -> list[PipeRoute]:
    """A destination given as a range of linear node indices ``(first:stop,)``."""
    first, last = _range(span, grid[0] * grid[1], f"Pipe {i} dst", location)
    nodes = {linear_node(k, grid) for k in range(first, last + 1)}
    return _cover_routes(src, nodes, i, span=(first, last + 1))


def _box_routes(src, dst: tuple, i: int, dims: tuple[int, ...], location) -> list[PipeRoute]:
    """A destination given as a box of node coordinates with slices (``(0:2, 1, 0:4)`` on a 3-D grid),
    read as ``ttl.node(dims=len(dst))`` gives coordinates: its nodes, which need not form a
    rectangle of the grid's columns and rows."""
    shape = node_shape(dims, len(dst))
    axes = []
    for d, size in zip(dst, shape):
        first, last = _range(d, size, f"Pipe {i} dst", location)
        if not 0 <= first <= last < size:
            raise KernelError(f"Pipe {i} dst {node_text(dst)} reaches outside the grid {dims}", location)
        axes.append(range(first, last + 1))
    grid = core_grid(dims)
    indices = [node_index(c, dims) for c in itertools.product(*axes)]
    nodes = {linear_node(k, grid) for k in indices}
    return _cover_routes(src, nodes, i, span=(indices[0], indices[-1] + 1),
                         box=tuple(isinstance(d, slice) for d in dst))


def _per_chip(routes: list[PipeRoute], chip_columns: int) -> list[PipeRoute]:
    """Routes on a mesh of chips run as one device (each chip ``chip_columns`` node columns wide):
    a NOC multicast stays on its chip, so a rectangle across chips becomes one per chip."""
    out = []
    for r in routes:
        x = r.x0
        while x <= r.x1:
            end = min(r.x1, (x // chip_columns + 1) * chip_columns - 1)
            part = replace(r, x0=x, x1=end)
            if part.exclude_src and not (x <= r.src[0] <= end):
                part = replace(part, exclude_src=False)
            if part.destinations:
                out.append(part)
            x = end + 1
    return out


def _graph_pipes(graph, pipes, local_nodes, location):
    """The local pipes of ``PipeNet(graph=...)``: ``pipes`` (node to node on the two devices of each
    edge), ``local_nodes`` (each node to itself), or None for every node to itself."""
    from tilefold.frontend.ttl.devices import TransferGraph

    if graph is None:
        raise KernelValueError("ttl.PipeNet(local_nodes=...) names the nodes of a graph's transfers; give "
                               "graph=ttl.TransferGraph...(domain) too", location)
    if not isinstance(graph, TransferGraph):
        raise KernelValueError(f"ttl.PipeNet(graph={graph!r}): graph is a ttl.TransferGraph (TransferGraph.edges, "
                               ".axis_neighbor, .all_to_all ...)", location)
    if pipes is not None and local_nodes is not None:
        raise KernelValueError("ttl.PipeNet(graph=..., pipes=..., local_nodes=...): give the nodes of the transfers "
                               "either as pipes or as local_nodes, not both", location)
    if local_nodes is not None:
        nodes = list(local_nodes)
        if not nodes:
            raise KernelValueError("ttl.PipeNet(local_nodes=[]) names no node; give at least one", location)
        return [Pipe(n, n) for n in nodes]
    return pipes if pipes is None else list(pipes)


def _graph_mappings(pipes, graph, local_nodes, mappings, location) -> list[tuple] | None:
    """The ``(transfer graph, local pipes)`` pairs of a net over devices, in order — from
    ``mappings=``, from pipes that name devices (``ttl.Pipe(src=domain[d].at_node(x, y), ...)``,
    ``ttl.Pipe.pairwise``, ``ttl.Pipe.all_to_all``) or from ``graph=`` — or None for a net of
    pipes between the nodes of one grid. No local pipes: every node to the same node."""
    if mappings is not None:
        if pipes is not None or graph is not None or local_nodes is not None:
            raise KernelValueError("ttl.PipeNet(mappings=...) takes no pipes, graph= or local_nodes=: give each "
                                   "transfer graph with its pipes as a ttl.PipeMapping", location)
        if not mappings:
            raise KernelValueError("ttl.PipeNet(mappings=[]) has no mapping; give at least one ttl.PipeMapping",
                                   location)
        for i, mapping in enumerate(mappings):
            if not isinstance(mapping, PipeMapping):
                raise KernelValueError(f"ttl.PipeNet(mappings=...): element {i} is {type(mapping).__name__}, not a "
                                       "ttl.PipeMapping(graph=..., pipes=[...])", location)
        pairs = [(m.graph, list(m.pipes)) for m in mappings]
    elif pipes is not None and any(isinstance(p, DevicePipes) or _names_devices(p) for p in pipes):
        if graph is not None or local_nodes is not None:
            raise KernelValueError("pipes that name their devices (domain[d].at_node(x, y), ttl.Pipe.pairwise, "
                                   "ttl.Pipe.all_to_all) carry their own transfer graph; give no graph= or "
                                   "local_nodes= with them", location)
        pairs = []
        for i, p in enumerate(pipes):
            if isinstance(p, DevicePipes):
                pairs.append((p.graph, [p.pipe]))
            elif isinstance(p, Pipe) and _names_devices(p):
                pairs.append(_device_pipe(p, location))
            else:
                raise KernelValueError(f"PipeNet element {i} is {type(p).__name__} between nodes of one grid, but "
                                       "other elements name devices; give each end as domain[d].at_node(x, y), or "
                                       "the devices' pipes a PipeNet of their own", location)
    elif graph is not None or local_nodes is not None:
        pairs = [(graph, _graph_pipes(graph, pipes, local_nodes, location) or [])]
    else:
        return None
    domain = pairs[0][0].domain
    for g, _ in pairs[1:]:
        if not g.domain.same_as(domain):
            raise KernelValueError(f"the transfer graphs of one ttl.PipeNet span {domain!r} and {g.domain!r}; build "
                                   "them over one device domain", location)
    return pairs


def _names_devices(pipe) -> bool:
    from tilefold.frontend.ttl.devices import DeviceEndpoints

    return isinstance(pipe, Pipe) and (isinstance(pipe.src, DeviceEndpoints) or isinstance(pipe.dst, DeviceEndpoints))


def _device_ends(src, dst, what: str, location):
    """``src`` and ``dst`` checked as nodes of devices of one domain (``domain[...].at_node(x, y)``)."""
    from tilefold.frontend.ttl.devices import DeviceEndpoints

    for end, value in (("src", src), ("dst", dst)):
        if not isinstance(value, DeviceEndpoints):
            raise KernelValueError(f"{what}: give both ends as devices at a node (domain[d].at_node(x, y)); {end} is "
                                   f"{type(value).__name__}", location)
    if not src.devices.domain.same_as(dst.devices.domain):
        raise KernelValueError(f"{what}: src devices are of {src.devices.domain!r} but dst devices of "
                               f"{dst.devices.domain!r}; give devices of one domain", location)


def _device_pipe(pipe: Pipe, location) -> tuple:
    """A pipe from a node of one device to a node of another: a one-edge transfer graph and the
    pipe between the two nodes."""
    from tilefold.frontend.ttl.devices import TransferGraph

    _device_ends(pipe.src, pipe.dst, "ttl.Pipe(src=..., dst=...)", location)
    ends = (pipe.src.devices.indices, pipe.dst.devices.indices)
    if len(ends[0]) != 1 or len(ends[1]) != 1:
        raise KernelValueError("ttl.Pipe(src=..., dst=...) joins one device to one device; for several use "
                               "ttl.Pipe.pairwise(src=..., dst=...) or ttl.Pipe.all_to_all", location)
    if ends[0] == ends[1]:
        raise KernelValueError(f"ttl.Pipe(src=..., dst=...): both ends are on device {ends[0][0]}; a transfer "
                               "between devices goes from one device to another", location)
    graph = TransferGraph(pipe.src.devices.domain, [(ends[0][0], ends[1][0])], "edges", location)
    return graph, [Pipe(pipe.src.node, pipe.dst.node)]


def _single_chip(routes: list[PipeRoute]) -> list[PipeRoute]:
    """Routes to be moved to another chip: a rectangle extended over its source (which it skips) is
    split into rectangles of its destinations only, as the source is on another chip."""
    out = []
    for r in routes:
        if not r.exclude_src:
            out.append(r)
            continue
        out += [replace(r, x0=x0, y0=y0, x1=x1, y1=y1, exclude_src=False) for x0, y0, x1, y1 in cover(set(r.destinations))]
    return out


def _shifted(route: PipeRoute, src_columns: int, dst_columns: int) -> PipeRoute:
    """``route`` with its source ``src_columns`` and its destinations ``dst_columns`` node columns
    further (on other chips of a mesh run as one device)."""
    return replace(route, src=(route.src[0] + src_columns, route.src[1]), x0=route.x0 + dst_columns,
                   x1=route.x1 + dst_columns)


# nets made outside any operation, in creation order (weakly held: a net nobody keeps is gone); a
# kernel that names only a pipe of one of them finds the net here
_UNBOUND: list = []


def _unbound_nets() -> list:
    alive = [net for ref in _UNBOUND if (net := ref()) is not None]
    _UNBOUND[:] = [weakref.ref(net) for net in alive]
    return alive


def may_leave_nodes_idle(op) -> bool:
    """Whether operation ``op`` has (or may bind, from its file's module level) a pipe net without a
    transfer graph, whose active set may leave some of its nodes without kernels."""
    return any(net.graph is None for net in op.pipe_nets) or any(
        net.graph is None and _same_file(net, op) for net in _unbound_nets())


def _same_file(net, op) -> bool:
    """Whether ``net`` was made in the file of operation ``op`` (an equal pipe written in one file
    never finds a net of another file)."""
    return net.location is None or op.location is None or net.location.file == op.location.file


def nets_holding(pipe: Pipe, op) -> list[PipeNet]:
    """The nets, resolved on operation ``op``'s grid, that hold this very ``pipe`` object (else an
    equal pipe): the operation's own nets and the nets made outside any operation (for an equal
    pipe, those made in the operation's file)."""
    unbound = _unbound_nets()
    for same in (True, False):
        out = []
        for net in [*op.pipe_nets, *(unbound if same else [n for n in unbound if _same_file(n, op)])]:
            if any((p is pipe) if same else (p == pipe) for p in net.pipes):
                bound = net.bound(op)
                if all(b is not bound for b in out):
                    out.append(bound)
        if out:
            return out
    return []


def node_text(value) -> str:
    """A node coordinate or range as written: ``(0, 1:4)``."""
    if isinstance(value, slice):
        return f"{'' if value.start is None else value.start}:{'' if value.stop is None else value.stop}"
    if isinstance(value, tuple):
        return "(" + ", ".join(node_text(v) for v in value) + ")"
    return repr(value)


def pipe_text(pipe) -> str:
    return f"src={node_text(pipe.src)}, dst={node_text(pipe.dst)}"


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _written_dims(nodes) -> int | None:
    """The common length of nodes written as one (a linear index, ``(i,)``) or 3 or more integer
    coordinates, else None (``(x, y)`` pairs are the nodes' own columns and rows)."""
    lengths = {len(n) if isinstance(n, tuple) and all(_is_int(v) for v in n) else 0 for n in nodes}
    return lengths.pop() if len(lengths) == 1 and lengths.isdisjoint({0, 2}) else None


@dataclass(frozen=True)
class Pipe:
    """``ttl.Pipe(src, dst)``: from node ``src`` to node ``dst`` or a range of nodes."""

    src: object
    dst: object

    def __post_init__(self):
        for end, value in (("src", self.src), ("dst", self.dst)):
            for item in value if isinstance(value, tuple) else (value,):
                if not isinstance(item, slice):
                    continue
                where = f"ttl.Pipe {end} {node_text(value)}"
                if item.step not in (None, 1):
                    raise KernelValueError(f"{where}: a node range's step must be 1 or None "
                                           f"(node ranges are contiguous); drop the step {item.step}",
                                           user_location())
                if not (_is_int(item.start) and _is_int(item.stop)):
                    raise KernelValueError(f"{where}: a node range needs an explicit start and stop, as integers "
                                           f"(slice(first, last + 1))", user_location())
                if item.start >= item.stop:
                    raise KernelValueError(f"{where}: a node range's start must be < stop; "
                                           f"slice({item.start}, {item.stop}) selects no node", user_location())

    def has_current_core(self):
        raise KernelError("Pipe.has_current_core() can only be called inside a kernel function", user_location())

    @staticmethod
    def all_to_all(src=None, dst=None, include_self: bool = False) -> DevicePipes:
        """``ttl.Pipe.all_to_all(src=domain[...].at_node(x, y), dst=..., include_self=False)``: a pipe
        from the node of every source device to the node of every destination device (and from a
        device to itself with ``include_self``); an element of ``ttl.PipeNet([...])``."""
        from tilefold.frontend.ttl.devices import TransferGraph

        location = user_location()
        _device_ends(src, dst, "ttl.Pipe.all_to_all", location)
        pairs = [(s, d) for s in src.devices.indices for d in dst.devices.indices if s != d]
        if include_self:               # a device's transfer to itself comes first
            pairs = [(s, s) for s in src.devices.indices if s in dst.devices.indices] + pairs
        graph = TransferGraph(src.devices.domain, pairs, "all_to_all", location)
        return DevicePipes(graph, Pipe(src.node, dst.node))

    @staticmethod
    def pairwise(*, src=None, dst=None) -> DevicePipes:
        """``ttl.Pipe.pairwise(src=view.at_node(x, y), dst=view2.at_node(u, v))``: a pipe from the
        node of each source device to the node of the destination device in the same place of its
        selection (the i-th to the i-th); an element of ``ttl.PipeNet([...])``."""
        from tilefold.frontend.ttl.devices import TransferGraph

        location = user_location()
        _device_ends(src, dst, "ttl.Pipe.pairwise", location)
        sources, destinations = src.devices.indices, dst.devices.indices
        if len(sources) != len(destinations):
            raise KernelValueError(f"ttl.Pipe.pairwise: {len(sources)} source devices but {len(destinations)} "
                                   "destination devices; pair selections of the same size", location)
        pairs = list(zip(sources, destinations))
        for s, d in pairs:
            if s == d:
                raise KernelValueError(f"ttl.Pipe.pairwise pairs device {s} with itself; a transfer between devices "
                                       "goes from one device to another", location)
        return DevicePipes(TransferGraph(src.devices.domain, pairs, "pairwise", location), Pipe(src.node, dst.node))


@dataclass(frozen=True, init=False)
class PipeMapping:
    """``ttl.PipeMapping(graph=ttl.TransferGraph..., pipes=[ttl.Pipe(src, dst), ...])``: every
    edge of ``graph`` with every one of ``pipes`` (from its source node on the edge's source device
    to its destination node on the edge's destination device); ``ttl.PipeNet(mappings=[...])`` is
    the union of several, in order."""

    graph: object
    pipes: tuple

    def __init__(self, *, graph=None, pipes=()):
        from tilefold.frontend.ttl.devices import TransferGraph

        location = user_location()
        if not isinstance(graph, TransferGraph):
            raise KernelValueError(f"ttl.PipeMapping(graph={graph!r}): graph is a ttl.TransferGraph "
                                   "(TransferGraph.edges, .axis_neighbor, .all_to_all ...)", location)
        pipes = tuple(pipes)
        if not pipes:
            raise KernelValueError("ttl.PipeMapping needs at least one pipe (pipes=[ttl.Pipe(src, dst), ...])",
                                   location)
        for i, pipe in enumerate(pipes):
            if not isinstance(pipe, Pipe) or _names_devices(pipe):
                raise KernelValueError(f"ttl.PipeMapping: pipe {i} is not a ttl.Pipe between two nodes "
                                       "(the graph names the devices)", location)
        object.__setattr__(self, "graph", graph)
        object.__setattr__(self, "pipes", pipes)


@dataclass(frozen=True)
class DevicePipes:
    """What ``ttl.Pipe.all_to_all`` makes: a transfer graph and the pipe between the nodes it names
    on each edge's devices (``ttl.PipeNet([...])`` of it is ``PipeNet(graph=g, pipes=[pipe])``)."""

    graph: object
    pipe: Pipe


@dataclass(frozen=True)
class PipeRoute:
    """A pipe with resolved coordinates: source node and an inclusive destination rectangle."""

    src: tuple[int, int]
    x0: int
    y0: int
    x1: int
    y1: int
    exclude_src: bool = False   # the rectangle holds the source, which is not a destination
    pipe: int = 0               # the index of the pipe in its net (a pipe may take several routes)
    span: tuple[int, int] | None = None   # the pipe's linear destination range first, stop as written
    box: tuple[bool, ...] | None = None   # a box of an n-D grid: per coordinate, whether it is a slice
                                          # (span then holds its first and last node, stop exclusive)

    @property
    def destinations(self) -> list[tuple[int, int]]:
        return [(x, y) for y in range(self.y0, self.y1 + 1) for x in range(self.x0, self.x1 + 1)
                if not (self.exclude_src and (x, y) == self.src)]

    @property
    def loopback(self) -> bool:
        """The source is one of the destinations."""
        return (not self.exclude_src and self.x0 <= self.src[0] <= self.x1
                and self.y0 <= self.src[1] <= self.y1)

    @property
    def remote_receivers(self) -> int:
        return len(self.destinations) - (1 if self.loopback else 0)


class PipeNet:
    """``ttl.PipeNet(pipes)``: the pipes of one communication pattern.

    Made inside an operation's body, the net belongs to that operation. Made outside (at module
    level, as TT-Lang's main branch allows), it is resolved against the grid of each operation
    whose kernels use it (:meth:`bound`)."""

    def __init__(self, pipes=None, *, graph=None, local_nodes=None, local_pipes=None, mappings=None,
                 _operation=None, _location=None, **unknown):
        location = _location or user_location()
        self.location: SourceLocation | None = location
        if unknown:
            raise KernelValueError(f"ttl.PipeNet(... {', '.join(f'{k}=' for k in sorted(unknown))}): "
                                   f"{'these keywords are' if len(unknown) > 1 else 'this keyword is'} not supported "
                                   "by tilefold yet; it takes pipes (or local_pipes= with graph=), graph=, "
                                   "local_nodes= and mappings=", location)
        if local_pipes is not None:     # TT-Lang's name of a graph net's node-to-node pipes
            if pipes is not None:
                raise KernelValueError("ttl.PipeNet(pipes, local_pipes=...): give the pipes once", location)
            if graph is None:
                raise KernelValueError("ttl.PipeNet(local_pipes=...) names the node-to-node pipes of a graph's "
                                       "transfers; give graph=ttl.TransferGraph...(domain) too", location)
            pipes = local_pipes
        if pipes is not None:
            pipes = [pipes] if isinstance(pipes, (Pipe, DevicePipes)) else list(pipes)
        self._given = {"pipes": pipes, "graph": graph, "local_nodes": local_nodes,
                       "mappings": None if mappings is None else list(mappings)}
        # a graph net's (transfer graph, local pipes) pairs in order; None for a net of one grid
        self.mappings = _graph_mappings(pipes, graph, local_nodes, self._given["mappings"], location)
        self.graph = None if self.mappings is None else self.mappings[0][0]
        if self.mappings is not None:
            pipes = [p for _, local in self.mappings for p in local]
        if pipes is None:
            raise KernelValueError("ttl.PipeNet needs its pipes (ttl.PipeNet([ttl.Pipe(src, dst), ...])) or a graph "
                                   "(ttl.PipeNet(graph=ttl.TransferGraph...))", location)
        pipes = list(pipes)
        if not pipes and self.graph is None:
            raise KernelValueError("ttl.PipeNet needs at least one pipe; give it a list of ttl.Pipe", location)
        for i, pipe in enumerate(pipes):
            if not isinstance(pipe, Pipe):
                raise KernelError(f"PipeNet element {i} is {type(pipe).__name__}, not a ttl.Pipe", location)
        self.pipes = pipes
        # how a body sees the other end (pipe.src / pipe.dst): as the pipes were written, a linear
        # node index when every pipe names its nodes by one integer
        self.linear_src = bool(pipes) and all(_is_int(p.src) for p in pipes)
        self.linear_dst = bool(pipes) and all(_is_int(p.dst) for p in pipes)
        # a node written with one coordinate per dimension of an n-D grid (n >= 3): its length
        self.src_dims = _written_dims([p.src for p in pipes]) if pipes else None
        self.dst_dims = _written_dims([p.dst for p in pipes]) if pipes else None
        op = _operation or capture.active()
        self.grid = None
        self.grid_dims = None
        self.routes: list[PipeRoute] = []
        self.pipe_routes: list[list[int]] = []      # per pipe, the indices of its routes
        self.replicas = 1           # a net without a graph in an operation over n devices: n copies, one per chip
        self.chip_columns = None    # node columns of each chip (an operation over a device domain)
        self.index = -1
        if op is None:
            _UNBOUND.append(weakref.ref(self))
            return
        self.grid = op.grid
        self.grid_dims = op.grid_dims
        domain = getattr(op, "device_domain", None)
        if self.graph is not None:
            self._graph_routes(op, domain, location)
        elif domain is not None:
            self._replicated_routes(domain.size, location)
        else:
            chip_columns = getattr(op.arch, "chip_columns", None)
            for i, pipe in enumerate(self.pipes):
                routes = resolve_routes(pipe, i, self.grid_dims, location)
                if chip_columns is not None:
                    routes = _per_chip(routes, chip_columns)
                self.pipe_routes.append(list(range(len(self.routes), len(self.routes) + len(routes))))
                self.routes += routes
        self.index = len(op.pipe_nets)
        op.pipe_nets.append(self)
        op.bound_nets[id(self)] = self

    def _graph_routes(self, op, domain, location) -> None:
        """The routes of a net over a transfer graph: for each edge, each local pipe from its source
        node on the edge's source chip to its destination nodes on the destination chip."""
        if domain is None:
            raise KernelError(f"this PipeNet's graph spans {self.graph.domain!r}, but operation {op.name!r} has no "
                              f"device domain; give it @ttl.operation(..., device_domain=...)", location)
        if not domain.same_as(self.graph.domain):
            raise KernelError(f"this PipeNet's graph spans {self.graph.domain!r}, but operation {op.name!r} runs "
                              f"over {domain!r}; build the graph over the operation's device domain", location)
        cols, rows = core_grid(self.grid_dims)
        self.chip_columns = cols
        first = 0                   # the index in self.pipes of a mapping's first pipe
        for graph, pipes in self.mappings:
            local = [_single_chip(resolve_routes(pipe, first + i, self.grid_dims, location))
                     for i, pipe in enumerate(pipes)]
            if not pipes:           # every node to the same node of the other device
                local = [[PipeRoute((x, y), x, y, x, y) for x in range(cols) for y in range(rows)]]
            own = [[] for _ in local]
            for s, d in graph.edges:
                for i, routes in enumerate(local):
                    for r in routes:
                        own[i].append(len(self.routes))
                        self.routes.append(_shifted(r, s * cols, d * cols))
            self.pipe_routes += own
            first += len(pipes)

    def _replicated_routes(self, chips: int, location) -> None:
        """The routes of a net without a graph in an operation over ``chips`` devices: the same pipes
        on every chip (each pipe's routes chip by chip)."""
        cols = core_grid(self.grid_dims)[0]
        self.chip_columns = cols
        self.replicas = chips
        for i, pipe in enumerate(self.pipes):
            routes = resolve_routes(pipe, i, self.grid_dims, location)
            self.pipe_routes.append(list(range(len(self.routes), len(self.routes) + chips * len(routes))))
            self.routes += [_shifted(r, chip * cols, chip * cols) for chip in range(chips) for r in routes]

    def named_route(self, slot: int, chip: int) -> int:
        """The route on chip ``chip`` of route ``slot`` (a route of chip 0) of a replicated net."""
        if self.replicas == 1:
            return slot
        routes = next(rs for rs in self.pipe_routes if slot in rs)
        per_chip = len(routes) // self.replicas
        return routes[routes.index(slot) % per_chip + chip * per_chip]

    def device_of(self, x: int) -> int:
        """The device (chip) of node column ``x``."""
        return 0 if self.chip_columns is None else x // self.chip_columns

    def bound(self, op) -> PipeNet:
        """This net resolved on the grid of operation ``op`` (itself when made in ``op``'s body)."""
        net = op.bound_nets.get(id(self))
        if net is None:
            net = PipeNet(**self._given, _operation=op, _location=self.location)
            op.bound_nets[id(self)] = net
        return net

    def routes_of(self, pipe: Pipe) -> list[int]:
        """The indices in :attr:`routes` of the routes of ``pipe`` (see :meth:`route_of`)."""
        i = self.route_of(pipe)
        if i is None:
            return []
        routes = self.pipe_routes[i]
        return routes[:len(routes) // self.replicas]      # a replicated net: chip 0's (see named_route)

    def route_of(self, pipe: Pipe) -> int | None:
        """The index of ``pipe`` among the net's pipes (the same object, else an equal pipe)."""
        for i, p in enumerate(self.pipes):
            if p is pipe:
                return i
        for i, p in enumerate(self.pipes):
            if p == pipe:
                return i
        return None

    # -- who does what -------------------------------------------------------------------------

    @functools.cached_property
    def _by_node(self) -> tuple[dict, dict]:
        """Per node, the routes it sends and those it receives, in the net's order (made once, on
        first use: the routes are fixed when the net is resolved)."""
        sends: dict = {}
        receives: dict = {}
        for r in self.routes:
            sends.setdefault(r.src, []).append(r)
            for d in r.destinations:
                receives.setdefault(d, []).append(r)
        return sends, receives

    def sources_of(self, node: tuple[int, int]) -> list[PipeRoute]:
        return list(self._by_node[0].get(tuple(node), ()))

    def destinations_of(self, node: tuple[int, int]) -> list[PipeRoute]:
        return list(self._by_node[1].get(tuple(node), ()))

    def needs_landing(self) -> bool:
        """Whether the net's sends wait on each other in a cycle: nodes that each send on at most one
        pipe, where following "sends to" from node to node (a node's send to itself does not count)
        comes back to where it started (a ring, a scatter-gather among its sources). There a send
        must not wait for its receivers to reach their receive, or every node would wait for the next
        one: the blocks land in a buffer of :meth:`landing_slots` on every node, each slot with a
        semaphore saying its block arrived; a receive copies its slot out and frees it for the
        sender. A multicast whose source also receives it (loopback) is no cycle: it lands straight
        in the receivers' blocks, the source's own reserved before it sends."""
        sources = ([r.src for r in self.routes] if self.graph is not None
                   else [self.routes[rs[0]].src for rs in self.pipe_routes if rs])
        if len(set(sources)) != len(sources):
            return False
        senders = set(sources)
        reaches: dict = {}
        for r in self.routes:
            reaches.setdefault(r.src, set()).update(d for d in r.destinations if d != r.src and d in senders)
        return _has_cycle(reaches)

    def landing_slots(self) -> list[int]:
        """The receive slot of each pipe (route): its slot in a landing buffer, or its ``valid``
        semaphore; pipes that reach a common node get different slots, every receiver of one pipe
        the same (a greedy colouring; a ring needs one slot, a column scatter-gather one per row)."""
        return self._landing

    @functools.cached_property
    def _landing(self) -> list[int]:
        slots: list[int] = []
        used: dict = {}             # node -> the slots of the earlier routes reaching it
        for r in self.routes:
            reach = r.destinations
            taken = set().union(*(used.get(d, ()) for d in reach))
            slot = next(k for k in range(len(self.routes)) if k not in taken)
            slots.append(slot)
            for d in reach:
                used.setdefault(d, set()).add(slot)
        return slots

    def max_sources(self) -> int:
        return max((len(rs) for rs in self._by_node[0].values()), default=0)

    def max_destinations(self) -> int:
        return max((len(rs) for rs in self._by_node[1].values()), default=0)

    # -- used outside a kernel ------------------------------------------------------------------

    def is_src(self):
        raise KernelError("PipeNet.is_src() can only be called inside a kernel function", user_location())

    def is_dst(self):
        raise KernelError("PipeNet.is_dst() can only be called inside a kernel function", user_location())

    def is_active(self):
        raise KernelError("PipeNet.is_active() can only be called inside a kernel function", user_location())

    def destination_count(self):
        raise KernelError("PipeNet.destination_count() can only be called inside a kernel function",
                          user_location())

    def if_src(self, body):
        raise KernelError("PipeNet.if_src can only be called inside a @ttl.datamovement kernel function",
                          user_location())

    def if_dst(self, body):
        raise KernelError("PipeNet.if_dst can only be called inside a @ttl.datamovement kernel function",
                          user_location())


def _has_cycle(edges: dict) -> bool:
    """Whether the directed graph ``edges`` (node -> the nodes it points to) has a cycle."""
    state: dict = {}            # node -> 1 while on the path being walked, 2 once done

    def walk(node) -> bool:
        state[node] = 1
        for nxt in edges.get(node, ()):
            if state.get(nxt) == 1 or (nxt not in state and walk(nxt)):
                return True
        state[node] = 2
        return False

    return any(node not in state and walk(node) for node in list(edges))
