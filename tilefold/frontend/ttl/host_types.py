"""The TT-NN host value types that TT-Lang kernels and :mod:`tilefold.ttnn` share.

Reads / writes: nothing. Layouts (``TILE_LAYOUT`` / ``ROW_MAJOR_LAYOUT``, compared by identity)
core coordinates, ranges and semaphore descriptors, as TT-NN spells them; ``ttl.*`` and ``ttnn.*`` re-export them. Also how a
host array given where a ttnn tensor goes is converted (:func:`conversion_hint`).
"""

from __future__ import annotations

import numpy as np

from tilefold.caller import user_location
from tilefold.errors import LayoutError


class Layout:
    """A TT-NN layout (``ttnn.TILE_LAYOUT`` / ``ttnn.ROW_MAJOR_LAYOUT``)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"Layout.{self.name}"


TILE_LAYOUT = Layout("TILE")
ROW_MAJOR_LAYOUT = Layout("ROW_MAJOR")
Layout.TILE, Layout.ROW_MAJOR = TILE_LAYOUT, ROW_MAJOR_LAYOUT      # ttnn.Layout.TILE spells TILE_LAYOUT


class CoreCoord:
    def __init__(self, x: int, y: int):
        self.x, self.y = x, y

    def __repr__(self) -> str:
        return f"CoreCoord(x={self.x}, y={self.y})"


def _core(value, what: str) -> CoreCoord:
    """A core of a ``CoreRange``: a ``CoreCoord`` or an ``(x, y)`` pair of non-negative ints."""
    if isinstance(value, CoreCoord):
        return value
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0 for v in value):
        return CoreCoord(int(value[0]), int(value[1]))
    raise LayoutError(f"ttnn.CoreRange {what} {value!r}: give a ttnn.CoreCoord(x, y) or an (x, y) pair",
                      user_location())


class CoreRange:
    """``ttnn.CoreRange(start, end)``: the cores from ``start`` to ``end`` (inclusive), as TT-NN's."""

    def __init__(self, start, end):
        self.start, self.end = _core(start, "start"), _core(end, "end")
        if self.end.x < self.start.x or self.end.y < self.start.y:
            raise LayoutError(f"ttnn.CoreRange({self.start!r}, {self.end!r}): the end core is before the start",
                              user_location())

    def grid_size(self) -> CoreCoord:
        return CoreCoord(self.end.x - self.start.x + 1, self.end.y - self.start.y + 1)

    def num_cores(self) -> int:
        size = self.grid_size()
        return size.x * size.y

    def __repr__(self) -> str:
        return f"CoreRange(start={self.start!r}, end={self.end!r})"


class CoreRangeSet:
    """``ttnn.CoreRangeSet``: disjoint core ranges; ``ranges()`` lists them."""

    def __init__(self, ranges=()):
        ranges = [ranges] if isinstance(ranges, CoreRange) else list(ranges)
        for r in ranges:
            if not isinstance(r, (CoreRange, tuple, list)) or not isinstance(r, CoreRange) and len(r) != 2:
                raise LayoutError(f"ttnn.CoreRangeSet: {r!r} is not a ttnn.CoreRange", user_location())
        self._ranges = [r if isinstance(r, CoreRange) else CoreRange(*r) for r in ranges]

    def ranges(self) -> list[CoreRange]:
        return list(self._ranges)

    def num_cores(self) -> int:
        return sum(r.num_cores() for r in self._ranges)

    def __repr__(self) -> str:
        return f"CoreRangeSet({self._ranges!r})"


class SemaphoreDescriptor:
    """``ttnn.SemaphoreDescriptor(id, core_ranges=, initial_value=)``: a semaphore a program creates
    on those cores (an operation's ``runtime_resource_factory`` returns them)."""

    def __init__(self, id=None, core_type=None, core_ranges=None, initial_value: int = 0):  # noqa: A002 - TT-NN's name
        if not isinstance(id, int) or isinstance(id, bool) or id < 0:
            raise LayoutError(f"ttnn.SemaphoreDescriptor(id={id!r}): give the semaphore's id, an int >= 0",
                              user_location())
        if core_ranges is not None and not isinstance(core_ranges, CoreRangeSet):
            raise LayoutError(f"ttnn.SemaphoreDescriptor(core_ranges={core_ranges!r}): give a ttnn.CoreRangeSet",
                              user_location())
        if not isinstance(initial_value, int) or not 0 <= initial_value < 2 ** 32:
            raise LayoutError(f"ttnn.SemaphoreDescriptor(initial_value={initial_value!r}): give a uint32",
                              user_location())
        self.id, self.core_type, self.core_ranges, self.initial_value = id, core_type, core_ranges, initial_value

    def __repr__(self) -> str:
        return f"SemaphoreDescriptor(id={self.id}, core_ranges={self.core_ranges!r}, initial_value={self.initial_value})"


def conversion_hint(value) -> str:
    """How to make a ttnn tensor of ``value`` when it is a torch tensor or a numpy array (else "")."""
    return {"torch": "a torch tensor: convert it with ttnn.from_torch(...) first",
            "numpy": "a numpy array: convert it with ttnn.from_numpy(...) first"}.get(
        type(value).__module__.split(".")[0], "")
