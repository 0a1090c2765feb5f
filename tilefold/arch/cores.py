"""Core coordinates, core ranges and core range sets, as TT-Metalium names them.

Reads: nothing. Writes: nothing. ``CoreCoord(x, y)`` is a logical Tensix core (x = column,
y = row); ``CoreRange`` is an inclusive rectangle; ``CoreRangeSet`` is a set of disjoint
rectangles. Iteration order is row-wise (y outer, x inner), the order work splitters use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

from tilefold.errors import LayoutError


@dataclass(frozen=True, order=True)
class CoreCoord:
    x: int
    y: int

    def __str__(self) -> str:
        return f"({self.x},{self.y})"

    def __iter__(self):
        yield self.x
        yield self.y


def _coord(c) -> CoreCoord:
    if isinstance(c, CoreCoord):
        return c
    x, y = c
    return CoreCoord(int(x), int(y))


@dataclass(frozen=True)
class CoreRange:
    """All cores with start.x <= x <= end.x and start.y <= y <= end.y."""

    start: CoreCoord
    end: CoreCoord

    def __init__(self, start, end=None):
        start = _coord(start)
        end = start if end is None else _coord(end)
        if end.x < start.x or end.y < start.y:
            raise LayoutError(f"core range end {end} is before its start {start}")
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "end", end)

    @property
    def grid_size(self) -> tuple[int, int]:
        return (self.end.x - self.start.x + 1, self.end.y - self.start.y + 1)

    @property
    def num_cores(self) -> int:
        w, h = self.grid_size
        return w * h

    def __iter__(self) -> Iterator[CoreCoord]:
        for y in range(self.start.y, self.end.y + 1):
            for x in range(self.start.x, self.end.x + 1):
                yield CoreCoord(x, y)

    def __contains__(self, core) -> bool:
        c = _coord(core)
        return self.start.x <= c.x <= self.end.x and self.start.y <= c.y <= self.end.y

    def intersects(self, other: "CoreRange") -> bool:
        return not (
            other.start.x > self.end.x
            or other.end.x < self.start.x
            or other.start.y > self.end.y
            or other.end.y < self.start.y
        )

    def __str__(self) -> str:
        return f"{{{self.start}-{self.end}}}"


@dataclass(frozen=True)
class CoreRangeSet:
    """A union of disjoint core ranges."""

    ranges: tuple[CoreRange, ...]

    def __init__(self, ranges: Iterable[CoreRange | CoreCoord | tuple] = ()):
        if isinstance(ranges, (CoreRange, CoreCoord)):
            ranges = [ranges]
        rs = []
        for r in ranges:
            if isinstance(r, CoreRange):
                rs.append(r)
            elif isinstance(r, CoreCoord):
                rs.append(CoreRange(r, r))
            else:
                r = tuple(r)
                if len(r) == 2 and all(isinstance(v, int) for v in r):
                    rs.append(CoreRange(r, r))
                else:
                    rs.append(CoreRange(*r))
        for i, a in enumerate(rs):
            for b in rs[i + 1 :]:
                if a.intersects(b):
                    raise LayoutError(f"core ranges {a} and {b} overlap")
        object.__setattr__(self, "ranges", tuple(rs))

    @classmethod
    def from_cores(cls, cores: Iterable) -> "CoreRangeSet":
        """The set holding exactly these cores, as row-wise runs merged into rectangles."""
        pts = sorted({_coord(c) for c in cores}, key=lambda c: (c.y, c.x))
        runs: list[CoreRange] = []
        for c in pts:
            if runs and runs[-1].end.y == c.y and runs[-1].start.y == c.y and runs[-1].end.x + 1 == c.x:
                runs[-1] = CoreRange(runs[-1].start, c)
            else:
                runs.append(CoreRange(c, c))
        merged: list[CoreRange] = []
        for r in runs:
            for i, m in enumerate(merged):
                if m.start.x == r.start.x and m.end.x == r.end.x and m.end.y + 1 == r.start.y:
                    merged[i] = CoreRange(m.start, r.end)
                    break
            else:
                merged.append(r)
        return cls(merged)

    @property
    def num_cores(self) -> int:
        return sum(r.num_cores for r in self.ranges)

    def cores(self) -> list[CoreCoord]:
        """Every core, row-wise over the bounding box order (y outer, x inner)."""
        listed = self.__dict__.get("_cores")            # the set is frozen: list its cores once
        if listed is None:
            listed = tuple(sorted((c for r in self.ranges for c in r), key=lambda c: (c.y, c.x)))
            object.__setattr__(self, "_cores", listed)
        return list(listed)

    def __iter__(self) -> Iterator[CoreCoord]:
        return iter(self.cores())

    def __contains__(self, core) -> bool:
        return any(core in r for r in self.ranges)

    def __len__(self) -> int:
        return self.num_cores

    def intersects(self, other: "CoreRangeSet") -> bool:
        return any(a.intersects(b) for a in self.ranges for b in other.ranges)

    def union(self, other: "CoreRangeSet") -> "CoreRangeSet":
        return CoreRangeSet.from_cores(list(self.cores()) + list(other.cores()))

    def bounding_box(self) -> CoreRange:
        xs = [r.start.x for r in self.ranges] + [r.end.x for r in self.ranges]
        ys = [r.start.y for r in self.ranges] + [r.end.y for r in self.ranges]
        return CoreRange((min(xs), min(ys)), (max(xs), max(ys)))

    def __str__(self) -> str:
        return " ∪ ".join(str(r) for r in self.ranges) if self.ranges else "{}"


def grid_range(gx: int, gy: int) -> CoreRangeSet:
    """All cores of a gx × gy grid starting at (0, 0)."""
    return CoreRangeSet([CoreRange((0, 0), (gx - 1, gy - 1))])


__all__ = ["CoreCoord", "CoreRange", "CoreRangeSet", "grid_range"]
