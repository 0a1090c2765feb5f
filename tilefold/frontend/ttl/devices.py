"""Logical devices and the transfers between them: ``ttl.DeviceDomain`` and ``ttl.TransferGraph``.

Reads: the extents of a device domain and the edges (or structured form) of a transfer graph.
Writes: a :class:`TransferGraph`'s edges as pairs of row-major device indices, which
:class:`tilefold.frontend.ttl.pipes.PipeNet` (``PipeNet(graph=...)``) turns into pipes between the
chips of an operation's mesh.

An operation with ``device_domain=`` runs on a mesh of simulated chips as one device
(:func:`tilefold.arch.mesh_of`): logical device ``i`` (row-major over the domain's extents) is chip
``i``, which runs the operation's grid. Devices are numbered, named by a coordinate tuple of the
domain's rank, by an integer on a 1-D domain, or by :class:`DeviceRef`. ``domain[0, :]`` and
``domain.select([...])`` are :class:`DeviceSelection` objects, whose ``at_node(x, y)`` names the
ends of ``ttl.Pipe.all_to_all``.

Errors (at the user's line): extents that are not positive integers, an edge naming a device outside
the domain, an explicit self edge, an axis outside the domain's rank, and the parts of the API not
simulated yet (product domains, ``component=``).
"""

from __future__ import annotations

import itertools
import math

from tilefold.caller import user_location
from tilefold.errors import KernelError, KernelValueError


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _unsupported(what: str):
    raise KernelError(f"{what} is not supported by tilefold yet", user_location())


class Fabric1D:
    """``ttl.Fabric1D(axis=...)``: a topology hint of a device domain (the simulated chips reach each
    other over ethernet whatever the hint)."""

    def __init__(self, axis: int = 0):
        self.axis = axis


class Fabric2D:
    """``ttl.Fabric2D()``: a topology hint of a device domain (see :class:`Fabric1D`)."""

    def __init__(self, *args, **kwargs):
        pass


class DeviceRef:
    """``ttl.DeviceRef(coordinate)``: one logical device of a domain (an index or a coordinate tuple)."""

    def __init__(self, coordinate=None, **components):
        if components:
            _unsupported("ttl.DeviceRef with named components (of a DeviceDomain.product)")
        self.coordinate = coordinate

    def __repr__(self) -> str:
        return f"ttl.DeviceRef({self.coordinate!r})"


class DeviceDomain:
    """``ttl.DeviceDomain(extents)``: the logical devices an operation spans, row-major."""

    def __init__(self, extents, topology=None):
        location = user_location()
        shape = (extents,) if _is_int(extents) else tuple(extents) if isinstance(extents, (tuple, list)) else None
        if not shape or not all(_is_int(d) and d >= 1 for d in shape):
            raise KernelValueError(f"ttl.DeviceDomain({extents!r}): give the extents as a tuple of positive integers, "
                                   "as (4,) or (2, 4)", location)
        self.shape = shape
        self.topology = topology
        self.location = location

    @staticmethod
    def product(**components):
        _unsupported("ttl.DeviceDomain.product (a domain of named components)")

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __len__(self) -> int:
        return self.size

    def coordinates(self) -> list[tuple[int, ...]]:
        """Every device's coordinate, in row-major (index) order."""
        return list(itertools.product(*(range(d) for d in self.shape)))

    def coordinate(self, index: int) -> tuple[int, ...]:
        out = []
        for d in reversed(self.shape):
            out.append(index % d)
            index //= d
        return tuple(reversed(out))

    def index(self, device, what: str = "device", location=None) -> int:
        """The row-major index of ``device`` (an integer on a 1-D domain, a coordinate tuple, or a
        :class:`DeviceRef`); an error naming ``what`` when it is no device of the domain."""
        location = location or user_location()
        value = device.coordinate if isinstance(device, DeviceRef) else device
        if _is_int(value) and len(self.shape) == 1:
            value = (value,)
        if not (isinstance(value, tuple) and len(value) == len(self.shape) and all(_is_int(v) for v in value)):
            raise KernelValueError(f"{what} {value!r} is not a device of {self!r}: give a coordinate of "
                                   f"{len(self.shape)} integer{'s' * (len(self.shape) != 1)}", location)
        if not all(0 <= v < d for v, d in zip(value, self.shape)):
            raise KernelValueError(f"{what} {value!r} is outside {self!r}", location)
        index = 0
        for v, d in zip(value, self.shape):
            index = index * d + v
        return index

    # in a kernel: the builder computes these from the node's device (see data_movement)
    def current_index(self):
        raise KernelError("DeviceDomain.current_index() can only be called inside a kernel function", user_location())

    def is_current(self, device):
        raise KernelError("DeviceDomain.is_current() can only be called inside a kernel function", user_location())

    def same_as(self, other) -> bool:
        return isinstance(other, DeviceDomain) and other.shape == self.shape

    def __getitem__(self, key) -> DeviceSelection:
        """``domain[0, :]`` / ``domain[(1, 2)]``: the devices of a coordinate whose entries are
        integers or slices (row-major order)."""
        location = user_location()
        key = key if isinstance(key, tuple) else (key,)
        if len(key) != len(self.shape) or not all(_is_int(k) or isinstance(k, slice) for k in key):
            raise KernelValueError(f"{self!r}[{key!r}]: give {len(self.shape)} integers or slices, one per axis",
                                   location)
        axes = []
        for k, d in zip(key, self.shape):
            if _is_int(k):
                if not -d <= k < d:
                    raise KernelValueError(f"{self!r}[{key!r}]: {k} is outside an axis of extent {d}", location)
                axes.append([k % d])
            else:
                axes.append(list(range(d))[k])
        indices = [self.index(c, location=location) for c in itertools.product(*axes)]
        if not indices:
            raise KernelValueError(f"{self!r}[{key!r}] selects no device", location)
        return DeviceSelection(self, indices)

    def select(self, devices) -> DeviceSelection:
        """``domain.select([domain[a], domain[b], ...])``: the union of selections (or devices), in
        the order given."""
        location = user_location()
        indices: list[int] = []
        for i, item in enumerate(devices):
            if isinstance(item, DeviceSelection):
                if not item.domain.same_as(self):
                    raise KernelValueError(f"{self!r}.select: item {i} selects devices of {item.domain!r}", location)
                found = item.indices
            else:
                found = [self.index(item, f"select: item {i}", location)]
            indices += [d for d in found if d not in indices]
        if not indices:
            raise KernelValueError(f"{self!r}.select([...]) needs at least one device", location)
        return DeviceSelection(self, indices)

    def __repr__(self) -> str:
        return f"DeviceDomain({self.shape!r})"


class DeviceSelection:
    """Some devices of a domain (``domain[0, :]``, ``domain.select([...])``); ``at_node(x, y)``
    names one node on each of them, an end of ``ttl.Pipe.all_to_all``."""

    def __init__(self, domain: DeviceDomain, indices: list[int]):
        self.domain = domain
        self.indices = indices

    def at_node(self, *node) -> DeviceEndpoints:
        node = node[0] if len(node) == 1 and isinstance(node[0], tuple) else node
        if not node or not all(_is_int(v) and v >= 0 for v in node):
            raise KernelValueError(f"at_node{node!r}: give the node's coordinates as non-negative integers",
                                   user_location())
        return DeviceEndpoints(self, tuple(node) if len(node) > 1 else node[0])

    def __repr__(self) -> str:
        return f"<devices {self.indices} of {self.domain!r}>"


class DeviceEndpoints:
    """One node on each device of a :class:`DeviceSelection`."""

    def __init__(self, devices: DeviceSelection, node):
        self.devices = devices
        self.node = node


class TransferGraph:
    """``ttl.TransferGraph``: a directed relation between the logical devices of a domain. Made by
    :meth:`edges`, :meth:`axis_neighbor`, :meth:`all_to_all`, :meth:`gather`, :meth:`scatter` or
    :meth:`stencil`; :attr:`edges` holds ``(source, destination)`` device indices, without duplicates
    or self edges, in the order given (structured forms: by source index)."""

    def __init__(self, domain: DeviceDomain, edges: list[tuple[int, int]], kind: str, location):
        self.domain = domain
        self.edges = edges
        self.kind = kind
        self.location = location

    def __repr__(self) -> str:
        return f"TransferGraph.{self.kind}({self.domain!r}, {len(self.edges)} edges)"

    @staticmethod
    def _start(domain, what: str, component=None):
        location = user_location()
        if not isinstance(domain, DeviceDomain):
            raise KernelValueError(f"TransferGraph.{what}: the first argument is a ttl.DeviceDomain, not "
                                   f"{type(domain).__name__}", location)
        if component is not None:
            _unsupported(f"TransferGraph.{what}(component={component!r}) (components of a DeviceDomain.product)")
        return location

    @staticmethod
    def _made(domain, pairs, kind, location) -> TransferGraph:
        seen, edges = set(), []
        for s, d in pairs:
            if s != d and (s, d) not in seen:
                seen.add((s, d))
                edges.append((s, d))
        return TransferGraph(domain, edges, kind, location)

    @staticmethod
    def edges(domain, edges=None, *, component=None) -> TransferGraph:
        """``TransferGraph.edges(domain, edges=[(src, dst), ...])``: exactly these transfers."""
        location = TransferGraph._start(domain, "edges", component)
        if edges is None:
            raise KernelValueError("TransferGraph.edges(domain, edges=[(source, destination), ...]) needs its edges",
                                   location)
        pairs = []
        for i, edge in enumerate(edges):
            if not (isinstance(edge, (tuple, list)) and len(edge) == 2):
                raise KernelValueError(f"TransferGraph.edges: edge {i} is {edge!r}; give (source, destination) pairs "
                                       "of devices", location)
            s = domain.index(edge[0], f"edge {i}: source", location)
            d = domain.index(edge[1], f"edge {i}: destination", location)
            if s == d:
                raise KernelValueError(f"TransferGraph.edges: edge {i} {edge!r}: the source must differ from the "
                                       "destination", location)
            pairs.append((s, d))
        return TransferGraph._made(domain, pairs, "edges", location)

    @staticmethod
    def axis_neighbor(domain, axis: int = 0, offset: int = 1, wrap: bool = False, *, component=None) -> TransferGraph:
        """Each device to the one ``offset`` further along ``axis`` (modulo the extent with ``wrap``,
        else only where that device exists)."""
        location = TransferGraph._start(domain, "axis_neighbor", component)
        if not (_is_int(axis) and -len(domain.shape) <= axis < len(domain.shape)):
            raise KernelValueError(f"TransferGraph.axis_neighbor(axis={axis!r}): {domain!r} has axes 0 to "
                                   f"{len(domain.shape) - 1}", location)
        if not _is_int(offset) or offset == 0:
            raise KernelValueError(f"TransferGraph.axis_neighbor(offset={offset!r}): the offset is a nonzero integer",
                                   location)
        axis %= len(domain.shape)
        pairs = []
        for c in domain.coordinates():
            target = c[axis] + offset
            if wrap:
                target %= domain.shape[axis]
            elif not 0 <= target < domain.shape[axis]:
                continue
            pairs.append((domain.index(c), domain.index(c[:axis] + (target,) + c[axis + 1:])))
        return TransferGraph._made(domain, pairs, "axis_neighbor", location)

    @staticmethod
    def all_to_all(domain, *, component=None) -> TransferGraph:
        """Every device to every other device."""
        location = TransferGraph._start(domain, "all_to_all", component)
        n = domain.size
        return TransferGraph._made(domain, [(s, d) for s in range(n) for d in range(n)], "all_to_all", location)

    @staticmethod
    def gather(domain, root=0, *, component=None) -> TransferGraph:
        """Every other device to ``root``."""
        location = TransferGraph._start(domain, "gather", component)
        r = domain.index(root, "root", location)
        return TransferGraph._made(domain, [(s, r) for s in range(domain.size)], "gather", location)

    @staticmethod
    def scatter(domain, source=0, *, component=None) -> TransferGraph:
        """``source`` to every other device."""
        location = TransferGraph._start(domain, "scatter", component)
        s = domain.index(source, "source", location)
        return TransferGraph._made(domain, [(s, d) for d in range(domain.size)], "scatter", location)

    @staticmethod
    def stencil(domain, offsets=(), wrap: bool = False, *, component=None) -> TransferGraph:
        """Each device to the device at each coordinate offset (modulo the extents with ``wrap``,
        else only where it exists)."""
        location = TransferGraph._start(domain, "stencil", component)
        rank = len(domain.shape)
        pairs = []
        for c in domain.coordinates():
            for offset in offsets:
                offset = (offset,) if _is_int(offset) else tuple(offset)
                if len(offset) != rank or not all(_is_int(o) for o in offset):
                    raise KernelValueError(f"TransferGraph.stencil: offset {offset!r} needs {rank} integers (the rank "
                                           f"of {domain!r})", location)
                target = tuple(v + o for v, o in zip(c, offset))
                if wrap:
                    target = tuple(t % d for t, d in zip(target, domain.shape))
                elif not all(0 <= t < d for t, d in zip(target, domain.shape)):
                    continue
                pairs.append((domain.index(c), domain.index(target)))
        return TransferGraph._made(domain, pairs, "stencil", location)
