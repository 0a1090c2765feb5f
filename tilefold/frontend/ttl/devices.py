"""Logical devices and the transfers between them: ``ttl.DeviceDomain`` and ``ttl.TransferGraph``.

Reads: the extents of a device domain and the edges (or structured form) of a transfer graph.
Writes: a :class:`TransferGraph`'s edges as pairs of row-major device indices, which
:class:`tilefold.frontend.ttl.pipes.PipeNet` (``PipeNet(graph=...)``) turns into pipes between the
chips of an operation's mesh.

An operation with ``device_domain=`` runs on a mesh of simulated chips as one device
(:func:`tilefold.arch.mesh_of`): logical device ``i`` (row-major over the domain's extents) is chip
``i``, which runs the operation's grid. Devices are numbered, named by a coordinate tuple of the
domain's rank, by an integer on a 1-D domain, or by :class:`DeviceRef`. A domain is made of named
components (one, ``"device"``, for ``DeviceDomain(extents)``); ``DeviceDomain.product(a=..., b=...)``
concatenates its components' axes in the order given, so its devices are numbered row-major over
those axes, and structured graphs act along one named component (``component=``). ``domain[0, :]`` and
``domain.select([...])`` are :class:`DeviceSelection` objects, whose ``at_node(x, y)`` names the
ends of ``ttl.Pipe.all_to_all``.

Errors (at the user's line): extents that are not positive integers, an edge naming a device outside
the domain, an explicit self edge, an axis outside the domain's (or component's) rank, an unknown
component name, a structured graph of a product domain without ``component=``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import NamedTuple

from tilefold.caller import user_location
from tilefold.errors import KernelError, KernelValueError


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _extents(value) -> tuple[int, ...] | None:
    """``value`` (an integer or a sequence of them) as a tuple of positive extents, else None."""
    shape = (value,) if _is_int(value) else tuple(value) if isinstance(value, (tuple, list)) else None
    return shape if shape and all(_is_int(d) and d >= 1 for d in shape) else None


def _component_coordinate(value):
    """A coordinate of one component (an integer or a sequence of integers) as a tuple, else None."""
    value = (value,) if _is_int(value) else tuple(value) if isinstance(value, (tuple, list)) else None
    return value if value and all(_is_int(v) for v in value) else None


class DomainComponent(NamedTuple):
    """``ttl.DomainComponent(name, extent)``: a named rectangular component of a device domain
    (``domain.components``; a pair ``(name, extent)``)."""

    name: str
    extent: tuple


@dataclass(frozen=True)
class TransferEdge:
    """``ttl.TransferEdge(source, destination)``: one transfer of a graph, from a device to a device
    (or to each device of a :class:`DeviceRange`), as :meth:`TransferGraph.edges` takes them and
    :meth:`TransferGraph.iter_edges` gives them."""

    source: object
    destination: object


@dataclass(frozen=True)
class AxisNeighborTransfer:
    """The descriptor of ``TransferGraph.axis_neighbor``: along ``axis`` of component
    ``component_name``, each device to the one ``offset`` further (modulo the extent with ``wrap``)."""

    component_name: str
    axis: int = 0
    offset: int = 1
    wrap: bool = False


@dataclass(frozen=True)
class StencilTransfer:
    """The descriptor of ``TransferGraph.stencil``: each device to each coordinate offset."""

    component_name: str
    offsets: tuple = ()
    wrap: bool = False


@dataclass(frozen=True)
class GatherTransfer:
    """The descriptor of ``TransferGraph.gather``: every device to ``root`` of the component."""

    component_name: str
    root: object = 0


@dataclass(frozen=True)
class ScatterTransfer:
    """The descriptor of ``TransferGraph.scatter``: ``source`` of the component to every device."""

    component_name: str
    source: object = 0


@dataclass(frozen=True)
class AllToAllTransfer:
    """The descriptor of ``TransferGraph.all_to_all``: every device to every other of the component."""

    component_name: str


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
    """``ttl.DeviceRef(coordinate, ...)``: one logical device of a domain, by one coordinate per
    component of the domain (an integer or a tuple; one for a domain that is no product), or by
    named components: ``ttl.DeviceRef(board=0, device=1)`` on ``DeviceDomain.product(board=...,
    device=...)``."""

    def __init__(self, *coordinates, **components):
        location = user_location()
        if coordinates and components:
            raise KernelValueError("ttl.DeviceRef takes coordinates or named components, not both", location)
        if not coordinates and not components:
            raise KernelValueError("ttl.DeviceRef needs a coordinate (or named components of a product domain)",
                                   location)
        self.names = tuple(components)
        self.coordinates = tuple(components.values()) if components else coordinates
        self.location = location

    def _key(self) -> tuple:
        return self.names, tuple(_component_coordinate(c) or c for c in self.coordinates)

    def __eq__(self, other) -> bool:
        return isinstance(other, DeviceRef) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    @property
    def coordinate(self):
        """The coordinate of a reference to a device of a domain of one component."""
        return self.coordinates[0] if len(self.coordinates) == 1 and not self.names else self.coordinates

    def __repr__(self) -> str:
        if self.names:
            return "ttl.DeviceRef(" + ", ".join(f"{n}={c!r}" for n, c in zip(self.names, self.coordinates)) + ")"
        return "ttl.DeviceRef(" + ", ".join(repr(c) for c in self.coordinates) + ")"


class DeviceRange:
    """``ttl.DeviceRange(lo=ttl.DeviceRef(...), hi=ttl.DeviceRef(...))``: the devices of a half-open
    box of a domain (``lo <= coordinate < hi`` on every axis), a destination of
    ``TransferGraph.edges`` that stands for an edge to each of them. ``lo`` and ``hi`` are devices as
    :meth:`DeviceDomain.index` takes them; ``hi`` may equal an axis's extent."""

    def __init__(self, lo, hi):
        self.lo = lo
        self.hi = hi
        self.location = user_location()

    def indices(self, domain: DeviceDomain, what: str, location) -> list[int]:
        """The row-major indices of the devices of the box in ``domain``; an error naming ``what``
        for corners outside the domain or a box that holds no device."""
        lo = domain.coordinate_of(self.lo, f"{what}: lo", location)
        hi = domain.coordinate_of(self.hi, f"{what}: hi", location)
        if not all(0 <= v < d for v, d in zip(lo, domain.shape)):
            raise KernelValueError(f"{what}: lo {self.lo!r} is outside {domain!r}", location)
        if not all(0 <= v <= d for v, d in zip(hi, domain.shape)):
            raise KernelValueError(f"{what}: hi {self.hi!r} is beyond {domain!r} (an axis's bound may equal its "
                                   "extent, no more)", location)
        if not all(a < b for a, b in zip(lo, hi)):
            raise KernelValueError(f"{what}: {self!r} holds no device; hi must exceed lo on every axis (the range "
                                   "is half-open)", location)
        return [domain.index(c, what, location) for c in itertools.product(*map(range, lo, hi))]

    def __repr__(self) -> str:
        return f"ttl.DeviceRange(lo={self.lo!r}, hi={self.hi!r})"


class DeviceDomain:
    """``ttl.DeviceDomain(extents)``: the logical devices an operation spans, row-major."""

    def __init__(self, extents, topology=None, *, name: str = "device"):
        location = user_location()
        shape = _extents(extents)
        if shape is None:
            raise KernelValueError(f"ttl.DeviceDomain({extents!r}): give the extents as a tuple of positive integers, "
                                   "as (4,) or (2, 4)", location)
        if not isinstance(name, str) or not name:
            raise KernelValueError(f"ttl.DeviceDomain(name={name!r}): a component's name is a non-empty string",
                                   location)
        self.components = (DomainComponent(name, shape),)
        self.shape = shape
        self.topology = topology
        self.location = location

    @classmethod
    def product(cls, **components) -> DeviceDomain:
        """``DeviceDomain.product(board=(2,), device=DeviceDomain((4,)))``: a domain of named components,
        each an extents tuple or a domain of one component; its axes are the components' axes in the
        order given (devices numbered row-major over them)."""
        location = user_location()
        if not components:
            raise KernelValueError("ttl.DeviceDomain.product(name=extents, ...) needs at least one component",
                                   location)
        parts = []
        for name, value in components.items():
            if isinstance(value, DeviceDomain):
                if len(value.components) != 1:
                    raise KernelValueError(f"ttl.DeviceDomain.product({name}=...): a component is extents or a domain "
                                           "of one component, not a product domain; give its components directly",
                                           location)
                shape = value.components[0][1]
            else:
                shape = _extents(value)
                if shape is None:
                    raise KernelValueError(f"ttl.DeviceDomain.product({name}={value!r}): give each component's extents "
                                           "as a tuple of positive integers, as (2,), or a ttl.DeviceDomain", location)
            parts.append(DomainComponent(name, shape))
        domain = cls.__new__(cls)
        domain.components = tuple(parts)
        domain.shape = tuple(d for _, shape in parts for d in shape)
        domain.topology = None
        domain.location = location
        return domain

    @property
    def component_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.components)

    def component_axes(self, name, what: str, location=None) -> tuple[int, tuple[int, ...]]:
        """The first axis (of the domain's axes) and the extents of component ``name``; an error
        naming ``what`` for a name that is no component of the domain."""
        first = 0
        for n, shape in self.components:
            if n == name:
                return first, shape
            first += len(shape)
        names = ", ".join(repr(n) for n in self.component_names)
        raise KernelValueError(f"{what}: {name!r} is no component of {self!r}; its components are {names}",
                               location or user_location())

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

    def coordinate_of(self, device, what: str, location) -> tuple[int, ...]:
        """The coordinate over the domain's axes of ``device`` (an integer on a 1-D domain, a
        coordinate tuple, or a :class:`DeviceRef`), not checked against the extents; an error naming
        ``what`` when it has the wrong form."""
        value = self._flat(device, what, location) if isinstance(device, DeviceRef) else device
        if _is_int(value) and len(self.shape) == 1:
            value = (value,)
        if isinstance(value, list):
            value = tuple(value)
        if not (isinstance(value, tuple) and len(value) == len(self.shape) and all(_is_int(v) for v in value)):
            raise KernelValueError(f"{what} {value!r} is not a device of {self!r}: give a coordinate of "
                                   f"{len(self.shape)} integer{'s' * (len(self.shape) != 1)}", location)
        return value

    def index(self, device, what: str = "device", location=None) -> int:
        """The row-major index of ``device`` (an integer on a 1-D domain, a coordinate tuple of the
        domain's axes, or a :class:`DeviceRef`); an error naming ``what`` when it is no device of the
        domain."""
        location = location or user_location()
        value = self.coordinate_of(device, what, location)
        if not all(0 <= v < d for v, d in zip(value, self.shape)):
            raise KernelValueError(f"{what} {device if isinstance(device, DeviceRef) else value!r} is outside "
                                   f"{self!r}", location)
        index = 0
        for v, d in zip(value, self.shape):
            index = index * d + v
        return index

    def _flat(self, ref: DeviceRef, what: str, location) -> tuple:
        """The coordinate over the domain's axes of a :class:`DeviceRef` (one coordinate per
        component, in order or by name)."""
        names = self.component_names
        if ref.names:
            for n in ref.names:
                self.component_axes(n, f"{what} {ref!r}", location)
            missing = [n for n in names if n not in ref.names]
            if missing:
                raise KernelValueError(f"{what} {ref!r} names no coordinate of component "
                                       f"{', '.join(repr(n) for n in missing)} of {self!r}", location)
            by_name = dict(zip(ref.names, ref.coordinates))
            parts = [by_name[n] for n in names]
        else:
            if len(ref.coordinates) != len(names):
                raise KernelValueError(f"{what} {ref!r} gives {len(ref.coordinates)} coordinate"
                                       f"{'s' * (len(ref.coordinates) != 1)}; {self!r} has {len(names)} "
                                       f"component{'s' * (len(names) != 1)} ({', '.join(names)}), one coordinate each",
                                       location)
            parts = list(ref.coordinates)
        out = []
        for (n, shape), part in zip(self.components, parts):
            c = _component_coordinate(part)
            if c is None or len(c) != len(shape):
                raise KernelValueError(f"{what} {ref!r}: component {n!r} of {self!r} takes {len(shape)} integer"
                                       f"{'s' * (len(shape) != 1)}, not {part!r}", location)
            out += c
        return tuple(out)

    # in a kernel: the builder computes these from the node's device (see data_movement)
    def current_index(self):
        raise KernelError("DeviceDomain.current_index() can only be called inside a kernel function", user_location())

    def is_current(self, device):
        raise KernelError("DeviceDomain.is_current() can only be called inside a kernel function", user_location())

    def same_as(self, other) -> bool:
        """Whether ``other`` has the same devices (the same extents over its axes; the names of the
        components do not matter)."""
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
        if len(self.components) == 1 and self.components[0][0] == "device":
            return f"DeviceDomain({self.shape!r})"
        if len(self.components) == 1:
            return f"DeviceDomain({self.shape!r}, name={self.components[0][0]!r})"
        return "DeviceDomain.product(" + ", ".join(f"{n}={shape!r}" for n, shape in self.components) + ")"


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

    def __init__(self, domain: DeviceDomain, edges=(), kind: str | None = None, location=None, *,
                 structured=None):
        if kind is None:        # TT-Lang's form: TransferGraph(domain, edges=[TransferEdge...]) or structured=
            made = TransferGraph._public(domain, edges, structured)
            edges, kind, location, structured = made.edges, made.kind, made.location, made.structured
        self.domain = domain
        self.edges = edges
        self.kind = kind
        self.location = location
        self.structured = structured      # the descriptor of a structured form (AxisNeighborTransfer ...)

    @staticmethod
    def _public(domain, edges, structured) -> TransferGraph:
        """``ttl.TransferGraph(domain, edges=[ttl.TransferEdge(...)])`` or ``structured=`` one of the
        descriptors (``ttl.AxisNeighborTransfer(...)`` ...): the graph its classmethod makes."""
        location = user_location()
        edges = list(edges)
        if (structured is None) == (not edges):
            raise KernelValueError("ttl.TransferGraph(domain, edges=[ttl.TransferEdge(...), ...]) or "
                                   "ttl.TransferGraph(domain, structured=ttl.AxisNeighborTransfer(...)): give one of "
                                   "them", location)
        if structured is None:
            for i, edge in enumerate(edges):
                if not isinstance(edge, TransferEdge):
                    raise KernelValueError(f"ttl.TransferGraph: edge {i} is {type(edge).__name__}, not a "
                                           "ttl.TransferEdge(source, destination)", location)
            return TransferGraph.edges(domain, [(e.source, e.destination) for e in edges])
        component = structured.component_name if len(getattr(domain, "components", ())) != 1 else None
        if isinstance(structured, AxisNeighborTransfer):
            return TransferGraph.axis_neighbor(domain, structured.axis, structured.offset, structured.wrap,
                                               component=component)
        if isinstance(structured, StencilTransfer):
            return TransferGraph.stencil(domain, structured.offsets, structured.wrap, component=component)
        if isinstance(structured, GatherTransfer):
            return TransferGraph.gather(domain, structured.root, component=component)
        if isinstance(structured, ScatterTransfer):
            return TransferGraph.scatter(domain, structured.source, component=component)
        if isinstance(structured, AllToAllTransfer):
            return TransferGraph.all_to_all(domain, component=component)
        raise KernelValueError(f"ttl.TransferGraph(structured={structured!r}): give a ttl.AxisNeighborTransfer, "
                               "StencilTransfer, GatherTransfer, ScatterTransfer or AllToAllTransfer", location)

    def __repr__(self) -> str:
        return f"TransferGraph.{self.kind}({self.domain!r}, {len(self.edges)} edges)"

    @property
    def is_structured(self) -> bool:
        return self.structured is not None

    @property
    def is_explicit(self) -> bool:
        return self.structured is None

    @property
    def explicit_edge_count(self) -> int | None:
        return len(self.edges) if self.is_explicit else None

    @property
    def transfer_edges(self) -> tuple:
        """The edges of an explicit graph as ``ttl.TransferEdge`` objects (none for a structured one)."""
        return tuple(self.iter_edges()) if self.is_explicit else ()

    def iter_edges(self):
        """Every transfer as a ``ttl.TransferEdge`` of ``ttl.DeviceRef`` (one coordinate per
        component), in the graph's order."""
        for s, d in self.edges:
            yield TransferEdge(self._ref(s), self._ref(d))

    def _ref(self, index: int) -> DeviceRef:
        c, parts = self.domain.coordinate(index), []
        for _, shape in self.domain.components:
            parts.append(c[:len(shape)])
            c = c[len(shape):]
        return DeviceRef(*parts)

    @staticmethod
    def _start(domain, what: str, component=None):
        """The location of a structured graph's call and the component it acts along: ``(name, first
        axis, extents)``; a domain of one component acts along it without ``component=``."""
        location = user_location()
        if not isinstance(domain, DeviceDomain):
            raise KernelValueError(f"TransferGraph.{what}: the first argument is a ttl.DeviceDomain, not "
                                   f"{type(domain).__name__}", location)
        if component is None:
            if len(domain.components) != 1:
                names = " or ".join(repr(n) for n in domain.component_names)
                raise KernelValueError(f"TransferGraph.{what}({domain!r}): a structured graph of a product domain "
                                       f"acts along one component; give component={names}", location)
            component = domain.components[0][0]
        first, shape = domain.component_axes(component, f"TransferGraph.{what}(component={component!r})", location)
        return location, (component, first, shape)

    @staticmethod
    def _point(domain, part, value, what: str, location) -> tuple[int, ...]:
        """A coordinate of component ``part`` (a root or a source): an integer or tuple, or a
        ``DeviceRef`` of that component alone (any device of a domain of one component)."""
        name, first, shape = part
        if len(domain.components) == 1:
            return domain.coordinate(domain.index(value, what, location))
        if isinstance(value, DeviceRef):
            if value.names and value.names != (name,) or not value.names and len(value.coordinates) != 1:
                raise KernelValueError(f"{what} {value!r}: give a coordinate of component {name!r} alone, as "
                                       f"ttl.DeviceRef({name}=...)", location)
            value = value.coordinates[0]
        c = _component_coordinate(value)
        if c is None or len(c) != len(shape):
            raise KernelValueError(f"{what} {value!r} is no coordinate of component {name!r} of {domain!r}: give "
                                   f"{len(shape)} integer{'s' * (len(shape) != 1)}", location)
        if not all(0 <= v < d for v, d in zip(c, shape)):
            raise KernelValueError(f"{what} {value!r} is outside component {name!r} {shape!r} of {domain!r}",
                                   location)
        return c

    @staticmethod
    def _placed(c: tuple, part, point: tuple) -> tuple:
        """Coordinate ``c`` with the axes of component ``part`` set to ``point``."""
        first = part[1]
        return c[:first] + tuple(point) + c[first + len(point):]

    @staticmethod
    def _made(domain, pairs, kind, location, structured=None) -> TransferGraph:
        seen, edges = set(), []
        for s, d in pairs:
            if s != d and (s, d) not in seen:
                seen.add((s, d))
                edges.append((s, d))
        return TransferGraph(domain, edges, kind, location, structured=structured)

    @staticmethod
    def edges(domain, edges=None, *, component=None) -> TransferGraph:
        """``TransferGraph.edges(domain, edges=[(src, dst), ...])``: exactly these transfers; a
        destination :class:`DeviceRange` is an edge to each device of its box (row-major)."""
        location = user_location()
        if not isinstance(domain, DeviceDomain):
            raise KernelValueError(f"TransferGraph.edges: the first argument is a ttl.DeviceDomain, not "
                                   f"{type(domain).__name__}", location)
        if component is not None:
            raise KernelValueError(f"TransferGraph.edges(component={component!r}): an edges graph names whole "
                                   "devices; name them by components with ttl.DeviceRef(name=...)", location)
        if edges is None:
            raise KernelValueError("TransferGraph.edges(domain, edges=[(source, destination), ...]) needs its edges",
                                   location)
        pairs = []
        for i, edge in enumerate(edges):
            if not (isinstance(edge, (tuple, list)) and len(edge) == 2):
                raise KernelValueError(f"TransferGraph.edges: edge {i} is {edge!r}; give (source, destination) pairs "
                                       "of devices", location)
            s = domain.index(edge[0], f"edge {i}: source", location)
            if isinstance(edge[1], DeviceRange):      # an edge to each device of the box
                targets = edge[1].indices(domain, f"edge {i}: destination {edge[1]!r}", location)
                if s in targets:
                    raise KernelValueError(f"TransferGraph.edges: edge {i} {edge!r}: the source lies in its "
                                           "destination range; a device sends to other devices only", location)
                pairs += [(s, d) for d in targets]
                continue
            d = domain.index(edge[1], f"edge {i}: destination", location)
            if s == d:
                raise KernelValueError(f"TransferGraph.edges: edge {i} {edge!r}: the source must differ from the "
                                       "destination", location)
            pairs.append((s, d))
        return TransferGraph._made(domain, pairs, "edges", location)

    @staticmethod
    def axis_neighbor(domain, axis: int = 0, offset: int = 1, wrap: bool = False, *, component=None) -> TransferGraph:
        """Each device to the one ``offset`` further along ``axis`` (of the component, with
        ``component=``; modulo the extent with ``wrap``, else only where that device exists)."""
        location, part = TransferGraph._start(domain, "axis_neighbor", component)
        name, first, shape = part
        rank = len(shape)
        if not (_is_int(axis) and -rank <= axis < rank):
            whose = f"{domain!r}" if len(domain.components) == 1 else f"component {name!r} of {domain!r}"
            raise KernelValueError(f"TransferGraph.axis_neighbor(axis={axis!r}): {whose} has axes 0 to {rank - 1}",
                                   location)
        if not _is_int(offset) or offset == 0:
            raise KernelValueError(f"TransferGraph.axis_neighbor(offset={offset!r}): the offset is a nonzero integer",
                                   location)
        axis = first + axis % rank
        pairs = []
        for c in domain.coordinates():
            target = c[axis] + offset
            if wrap:
                target %= domain.shape[axis]
            elif not 0 <= target < domain.shape[axis]:
                continue
            pairs.append((domain.index(c), domain.index(c[:axis] + (target,) + c[axis + 1:])))
        return TransferGraph._made(domain, pairs, "axis_neighbor", location,
                                   AxisNeighborTransfer(name, axis - first, offset, bool(wrap)))

    @staticmethod
    def all_to_all(domain, *, component=None) -> TransferGraph:
        """Every device to every other device (that differs from it only in ``component``)."""
        location, part = TransferGraph._start(domain, "all_to_all", component)
        points = list(itertools.product(*(range(d) for d in part[2])))
        pairs = [(domain.index(c), domain.index(TransferGraph._placed(c, part, p)))
                 for c in domain.coordinates() for p in points]
        return TransferGraph._made(domain, pairs, "all_to_all", location, AllToAllTransfer(part[0]))

    @staticmethod
    def gather(domain, root=0, *, component=None) -> TransferGraph:
        """Every other device to ``root`` (with ``component=``: to the device whose coordinate of
        that component is ``root``, the others' the same)."""
        return TransferGraph._star(domain, root, "gather", "root", component, inward=True)

    @staticmethod
    def scatter(domain, source=0, *, component=None) -> TransferGraph:
        """``source`` to every other device (with ``component=``: from the device whose coordinate of
        that component is ``source``, the others' the same)."""
        return TransferGraph._star(domain, source, "scatter", "source", component, inward=False)

    @staticmethod
    def _star(domain, center, form: str, argument: str, component, inward: bool) -> TransferGraph:
        """Edges between each device and the one whose coordinate of ``component`` is ``center`` (the
        others' the same): toward it (``inward``, a gather) or from it (a scatter)."""
        location, part = TransferGraph._start(domain, form, component)
        point = TransferGraph._point(domain, part, center, argument, location)
        pairs = []
        for c in domain.coordinates():
            device, hub = domain.index(c), domain.index(TransferGraph._placed(c, part, point))
            pairs.append((device, hub) if inward else (hub, device))
        descriptor = GatherTransfer(part[0], center) if inward else ScatterTransfer(part[0], center)
        return TransferGraph._made(domain, pairs, form, location, descriptor)

    @staticmethod
    def stencil(domain, offsets=(), wrap: bool = False, *, component=None) -> TransferGraph:
        """Each device to the device at each coordinate offset (of the component's axes, with
        ``component=``; modulo the extents with ``wrap``, else only where it exists)."""
        location, part = TransferGraph._start(domain, "stencil", component)
        name, first, shape = part
        rank = len(shape)
        whose = f"{domain!r}" if len(domain.components) == 1 else f"component {name!r} of {domain!r}"
        steps = []
        for offset in offsets:
            offset = (offset,) if _is_int(offset) else tuple(offset)
            if len(offset) != rank or not all(_is_int(o) for o in offset):
                raise KernelValueError(f"TransferGraph.stencil: offset {offset!r} needs {rank} integers (the rank "
                                       f"of {whose})", location)
            steps.append((0,) * first + offset + (0,) * (len(domain.shape) - first - rank))
        pairs = []
        for c in domain.coordinates():
            for offset in steps:
                target = tuple(v + o for v, o in zip(c, offset))
                if wrap:
                    target = tuple(t % d for t, d in zip(target, domain.shape))
                elif not all(0 <= t < d for t, d in zip(target, domain.shape)):
                    continue
                pairs.append((domain.index(c), domain.index(target)))
        return TransferGraph._made(domain, pairs, "stencil", location, StencilTransfer(name, tuple(offsets), bool(wrap)))
