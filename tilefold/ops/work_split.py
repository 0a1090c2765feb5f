"""How program factories split work over a grid of cores, as TT-Metalium and TT-NN do it.

Reads: a compute grid size (x columns × y rows) and a count of work units. Writes: named
splits holding core range sets and per-core counts; nothing else.

* :func:`split_blocks_for_tilize` (TT-NN ``work_split_tilize.hpp``) — used by tilize and
  untilize. ``nblocks_per_core = ceil(nblocks / grid_area)``, ``ncores = ceil(nblocks /
  nblocks_per_core)``, ``nblocks_per_core_cliff = nblocks % nblocks_per_core``. Cores are taken
  row-wise (core i is ``(i % grid_x, i // grid_x)``); when there is a remainder the last core is
  the single *cliff* core, with fewer blocks, and is not in the full-core range.
* :func:`split_work_to_cores` (TT-Metalium ``work_split.hpp``) — used by element-wise ops.
  Cores are taken column-major by default (core i is ``(i // grid_y, i % grid_y)``), row-wise
  with ``row_wise=True``; the first ``units % num_cores`` cores (group 1) take one unit more
  than the others (group 2). When the units divide evenly group 2 is empty.
* :func:`split_work_to_core_set` — the same over a core range set of any shape, its ranges one
  after another.
* :func:`num_cores_to_corerangeset` and :func:`corerange_to_cores` — the first ``n`` cores of a
  grid as a core range set, and a core range set back as an ordered list of cores.

Errors: :class:`~tilefold.errors.ProgramError` for an empty grid or a negative unit count.
"""

from __future__ import annotations

from typing import NamedTuple

from tilefold.arch.cores import CoreCoord, CoreRange, CoreRangeSet
from tilefold.errors import ProgramError


def grid_size(grid) -> tuple[int, int]:
    """``(x, y)`` from a ``CoreCoord``, an ``(x, y)`` pair or an :class:`~tilefold.arch.Arch`."""
    if hasattr(grid, "grid") and not isinstance(grid, (tuple, list, CoreCoord)):
        grid = grid.grid
    try:
        gx, gy = (int(v) for v in grid)
    except (TypeError, ValueError):
        raise ProgramError(f"grid {grid!r} is not a core grid; pass (x, y), e.g. (8, 8)") from None
    if gx <= 0 or gy <= 0:
        raise ProgramError(f"grid {gx}x{gy} has no cores; pass a grid of at least 1x1")
    return gx, gy


def compute_grid(arch, grid=None) -> tuple[int, int]:
    """The grid a factory splits work over: ``grid`` (x, y) when given — it must fit in the
    device's compute grid, starting at core (0, 0) — else the whole compute grid of ``arch``."""
    ax, ay = arch.grid
    if grid is None:
        return ax, ay
    gx, gy = grid_size(grid)
    if gx > ax or gy > ay:
        raise ProgramError(f"grid {gx}x{gy} does not fit in the {ax}x{ay} compute grid of {arch.board}; "
                           f"use at most {ax}x{ay}")
    return gx, gy


def parse_grid(text) -> tuple[int, int] | None:
    """``--grid`` text (``8,8`` or ``8x8``) as ``(x, y)``; ``None`` stays ``None``."""
    if text is None:
        return None
    parts = [p for p in str(text).lower().replace("x", ",").split(",") if p.strip()]
    try:
        gx, gy = (int(p) for p in parts)
    except ValueError:
        raise ProgramError(f"--grid {text!r} is not a core grid; write columns,rows, e.g. 8,8") from None
    return grid_size((gx, gy))


def _check_units(units, what: str) -> int:
    if not isinstance(units, int) or isinstance(units, bool) or units < 0:
        raise ProgramError(f"{what} must be a non-negative integer, not {units!r}")
    return units


def num_cores_to_corerangeset(target_num_cores: int, grid, row_wise: bool = False) -> CoreRangeSet:
    """The first ``target_num_cores`` cores of ``grid`` as full columns (rows with ``row_wise``)
    plus one partial column (row)."""
    gx, gy = grid_size(grid)
    n = _check_units(target_num_cores, "target_num_cores")
    if n > gx * gy:
        raise ProgramError(f"target_num_cores {n} is more than the {gx}x{gy} grid holds ({gx * gy})")
    ranges: list[CoreRange] = []
    if row_wise:
        full, rest = divmod(n, gx)
        if full:
            ranges.append(CoreRange((0, 0), (gx - 1, full - 1)))
        if rest:
            ranges.append(CoreRange((0, full), (rest - 1, full)))
    else:
        full, rest = divmod(n, gy)
        if full:
            ranges.append(CoreRange((0, 0), (full - 1, gy - 1)))
        if rest:
            ranges.append(CoreRange((full, 0), (full, rest - 1)))
    return CoreRangeSet(ranges)


def corerange_to_cores(cores: CoreRangeSet, row_wise: bool = False) -> list[CoreCoord]:
    """Every core of ``cores`` in work order: column-major (x outer, y inner) unless ``row_wise``."""
    key = (lambda c: (c.y, c.x)) if row_wise else (lambda c: (c.x, c.y))
    return sorted((c for r in cores.ranges for c in r), key=key)


class BlockSplit(NamedTuple):
    """``split_blocks_for_tilize``: full cores with ``nblocks_per_core`` blocks each and at most
    one cliff core with ``nblocks_per_core_cliff`` blocks."""

    ncores: int                      # cores used, the cliff core included
    all_cores: CoreRangeSet
    core_range: CoreRangeSet         # full cores
    core_range_cliff: CoreRangeSet   # the cliff core, or empty
    nblocks_per_core: int
    nblocks_per_core_cliff: int      # 0 when there is no cliff core

    @property
    def cliff_core(self) -> CoreCoord | None:
        return self.core_range_cliff.ranges[0].start if self.core_range_cliff.ranges else None

    def cores(self) -> list[CoreCoord]:
        """Cores in the order blocks are handed out (row-wise; the cliff core last)."""
        return corerange_to_cores(self.all_cores, row_wise=True)

    def blocks(self) -> list[tuple[CoreCoord, int, int]]:
        """``(core, first block, block count)`` for every core, in order."""
        out = []
        for i, core in enumerate(self.cores()):
            count = self.nblocks_per_core_cliff if core == self.cliff_core else self.nblocks_per_core
            out.append((core, i * self.nblocks_per_core, count))
        return out


def split_blocks_for_tilize(grid, nblocks: int) -> BlockSplit:
    """Split ``nblocks`` blocks over ``grid`` (x, y) row-wise, remainder on one cliff core."""
    gx, gy = grid_size(grid)
    nblocks = _check_units(nblocks, "nblocks")
    if nblocks == 0:
        empty = CoreRangeSet()
        return BlockSplit(0, empty, empty, empty, 0, 0)
    per_core = -(-nblocks // (gx * gy))
    ncores = -(-nblocks // per_core)
    cliff = nblocks % per_core
    rows = -(-ncores // gx)
    last_row_cores = ncores - (rows - 1) * gx
    full_rows = rows - (1 if (last_row_cores < gx or cliff > 0) else 0)
    full: list[CoreRange] = []
    if full_rows > 0:
        full.append(CoreRange((0, 0), (gx - 1, full_rows - 1)))
    cliff_range: list[CoreRange] = []
    if cliff > 0:
        if last_row_cores > 1:
            full.append(CoreRange((0, rows - 1), (last_row_cores - 2, rows - 1)))
        cliff_range.append(CoreRange((last_row_cores - 1, rows - 1)))
    elif last_row_cores < gx:
        full.append(CoreRange((0, rows - 1), (last_row_cores - 1, rows - 1)))
    all_cores = CoreRangeSet(full + cliff_range)
    return BlockSplit(ncores, all_cores, CoreRangeSet(full), CoreRangeSet(cliff_range), per_core, cliff)


class WorkSplit(NamedTuple):
    """``split_work_to_cores``: group 1 takes ``units_per_core_group_1`` units per core, group 2
    (possibly empty) ``units_per_core_group_2``."""

    num_cores: int
    all_cores: CoreRangeSet
    core_group_1: CoreRangeSet
    core_group_2: CoreRangeSet
    units_per_core_group_1: int
    units_per_core_group_2: int
    row_wise: bool = False

    def cores(self) -> list[CoreCoord]:
        """Cores in the order units are handed out (column-major unless row-wise)."""
        return corerange_to_cores(self.all_cores, self.row_wise)

    def units(self) -> list[tuple[CoreCoord, int, int]]:
        """``(core, first unit, unit count)`` for every core, in order."""
        out, start = [], 0
        for core in self.cores():
            count = self.units_per_core_group_1 if core in self.core_group_1 else self.units_per_core_group_2
            out.append((core, start, count))
            start += count
        return out


def split_work_to_cores(grid, units: int, row_wise: bool = False) -> WorkSplit:
    """Split ``units`` over at most every core of ``grid``; the first ``units % num_cores`` cores
    take one more."""
    gx, gy = grid_size(grid)
    units = _check_units(units, "units")
    num_cores = min(units, gx * gy)
    all_cores = num_cores_to_corerangeset(num_cores, (gx, gy), row_wise)
    if num_cores == 0:
        return WorkSplit(0, all_cores, CoreRangeSet(), CoreRangeSet(), 0, 0, row_wise)
    return _grouped(all_cores, corerange_to_cores(all_cores, row_wise), units, row_wise,
                    CoreRangeSet.from_cores if row_wise else _column_major_set)


def split_work_to_core_set(cores: CoreRangeSet, units: int, row_wise: bool = False) -> WorkSplit:
    """``split_work_to_cores`` over a core range set of any shape (TT-Metalium's
    ``CoreRangeSet`` overload): its cores are taken range after range, each range column-major
    (row-wise with ``row_wise``); at most ``units`` of them are used and the first
    ``units % num_cores`` take one unit more."""
    units = _check_units(units, "units")
    order = [c for r in cores.ranges for c in sorted(r, key=(lambda c: (c.y, c.x)) if row_wise
                                                      else (lambda c: (c.x, c.y)))]
    if not order:
        raise ProgramError("split_work_to_cores over an empty set of cores; give at least one core")
    used = order[:units]
    if not used:
        return WorkSplit(0, CoreRangeSet(), CoreRangeSet(), CoreRangeSet(), 0, 0, row_wise)
    return _grouped(CoreRangeSet.from_cores(used), used, units, row_wise, CoreRangeSet.from_cores)


def _grouped(all_cores: CoreRangeSet, order: list[CoreCoord], units: int, row_wise: bool,
             as_set) -> WorkSplit:
    """``units`` over the cores of ``all_cores``, taken in work ``order``: the first
    ``units % len(order)`` (group 1, made a core range set by ``as_set``) take one unit more."""
    per_core, extra = divmod(units, len(order))
    if extra == 0:
        return WorkSplit(len(order), all_cores, all_cores, CoreRangeSet(), per_core, 0, row_wise)
    return WorkSplit(len(order), all_cores, as_set(order[:extra]), as_set(order[extra:]), per_core + 1,
                     per_core, row_wise)


def _column_major_set(cores: list[CoreCoord]) -> CoreRangeSet:
    """Column-major runs of cores merged into rectangles (full columns side by side)."""
    runs: list[CoreRange] = []
    for c in cores:
        last = runs[-1] if runs else None
        if last is not None and last.start.x == last.end.x == c.x and last.end.y + 1 == c.y:
            runs[-1] = CoreRange(last.start, c)
        else:
            runs.append(CoreRange(c))
    merged: list[CoreRange] = []
    for r in runs:
        prev = merged[-1] if merged else None
        if prev is not None and prev.start.y == r.start.y and prev.end.y == r.end.y and prev.end.x + 1 == r.start.x:
            merged[-1] = CoreRange(prev.start, r.end)
        else:
            merged.append(r)
    return CoreRangeSet(merged)


__all__ = [
    "BlockSplit", "WorkSplit", "split_blocks_for_tilize", "split_work_to_cores", "split_work_to_core_set",
    "num_cores_to_corerangeset", "corerange_to_cores", "grid_size", "compute_grid", "parse_grid",
]
