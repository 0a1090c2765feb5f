"""tt-mlir's MetalLayout: how a logical tensor is collapsed, aligned and sharded over a grid.

Reads: a logical shape plus collapse intervals, dim alignments, a grid and a tile shape.
Writes: nothing; answers shape questions (physical shape in elements and tiles, host strides
and volume, shard shape per core, which elements are padding) and prints the layout the way
tt-mlir prints it.

Two forms of the same idea live here:

* :class:`MetalLayout` — the current ``#ttcore.metal_layout`` attribute: ``logical_shape``,
  ``dim_alignments``, ``collapsed_intervals``, ``oob_val``, memory space and memory layout. The
  grid is not part of the attribute; it divides the physical shape (``device_shape``).
  Physical extent of an interval, inner dim to outer: ``c = alignUp(shape[j] * c, align[j])``.
* :class:`LinearMetalLayout` — the tt-mlir tensor layout's grid-in-attribute form: an affine ``linear`` map
  from tensor dims to physical dims, ``oob_val``, a grid, and the shard memref
  (``ceilDiv(physical, grid)``, then ``ceilDiv(shard, tile)`` when tilized).

Errors: every malformed attribute raises :class:`~tilefold.errors.LayoutError` naming the
argument (``logical_shape``, ``collapse_intervals``, ``dim_alignments``, ``grid``, ``linear``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Iterable, Sequence

import numpy as np
from xdsl.context import Context
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

from tilefold.errors import LayoutError
from tilefold.layout.formats import DataFormat, data_format
from tilefold.layout.tiles import TileShape, tile_shape

# Per-core padding is computed by enumerating logical elements; beyond this many the
# question is refused rather than exhausting memory.
MAX_ENUMERATED_ELEMENTS = 1 << 27


class MemorySpace(Enum):
    """Where a tensor lives (tt-mlir ``MemorySpace``); the value is tt-mlir's mnemonic."""

    System = "system"          # host memory the device cannot see
    SystemMMIO = "mmio"        # host memory the device can see
    DeviceDRAM = "dram"        # DRAM of the device
    DeviceL1 = "l1"            # SRAM of each core


class OOBVal(Enum):
    """The value that fills padding (tt-mlir ``OOBVal``)."""

    Undef = "undef"
    Zero = "zero"
    One = "one"
    Inf = "inf"
    NegInf = "neginf"


def memory_space(spec) -> MemorySpace:
    """A :class:`MemorySpace` from itself, its mnemonic (``l1``) or its name (``DeviceL1``)."""
    if isinstance(spec, MemorySpace):
        return spec
    key = str(spec).strip()
    for m in MemorySpace:
        if key.lower() in (m.value, m.name.lower()):
            return m
    if key.upper() == "DRAM":
        return MemorySpace.DeviceDRAM
    names = ", ".join(m.value for m in MemorySpace)
    raise LayoutError(f"memory_space {spec!r} is unknown; use one of {names}")


def oob_val(spec) -> OOBVal:
    if isinstance(spec, OOBVal):
        return spec
    key = str(spec).strip().lower()
    for v in OOBVal:
        if key in (v.value, v.name.lower()):
            return v
    raise LayoutError(f"oob_val {spec!r} is unknown; use one of {', '.join(v.value for v in OOBVal)}")


def align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _shape(value, name: str) -> tuple[int, ...]:
    """A tuple of positive ints from a sequence or an ``AxBxC`` / ``A,B,C`` string."""
    if isinstance(value, str):
        parts = [p for p in value.replace("×", "x").replace(",", "x").split("x") if p.strip()]
        value = parts
    try:
        dims = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        raise LayoutError(f"{name} {value!r} is not a list of integers, e.g. 2,3,64,128") from None
    if not dims:
        raise LayoutError(f"{name} is empty; give at least one dimension")
    bad = [d for d in dims if d <= 0]
    if bad:
        raise LayoutError(f"{name} {list(dims)} has a non-positive dimension {bad[0]}; every dimension must be >= 1")
    return dims


def _dims_x(dims: Iterable[int]) -> str:
    return "x".join(str(d) for d in dims)


# --- collapse intervals -----------------------------------------------------------------


def default_collapse_intervals(rank: int) -> tuple[tuple[int, int], ...]:
    """``[[0, r-1], [r-1, r]]``: every dim but the last folds into rows. For rank 1 the
    first interval is empty — the synthetic leading interval of extent 1."""
    return ((0, rank - 1), (rank - 1, rank))


def _interval_pairs(intervals) -> list[tuple[int, int]]:
    """Check that ``intervals`` is an N×2 array of integers and return it as pairs."""
    try:
        arr = np.asarray(intervals, dtype=object)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] == 0:
        shape = "" if arr is None else f" (got an array of shape {tuple(arr.shape)})"
        raise LayoutError(
            f"collapse_intervals {intervals!r} must be an N x 2 list of [start, end) pairs, "
            f"e.g. [[0, 3], [3, 4]]{shape}"
        )
    pairs = []
    for start, end in arr.tolist():
        if isinstance(start, bool) or isinstance(end, bool) or not all(
            isinstance(v, (int, np.integer)) for v in (start, end)
        ):
            raise LayoutError(f"collapse_intervals {intervals!r} must hold integers, got [{start!r}, {end!r}]")
        pairs.append((int(start), int(end)))
    return pairs


def normalize_collapse_intervals(intervals, rank: int) -> tuple[tuple[int, int], ...]:
    """Normalise collapse intervals for a tensor of ``rank`` dims.

    Negative indices count from the end (``-1`` is ``rank - 1``); the result is sorted and
    every dim no interval covers becomes a singleton interval of its own. Raises
    :class:`LayoutError` for intervals that are not N×2, a start or end out of range after
    normalisation, a start after its end, or overlapping intervals.
    """
    pairs = _interval_pairs(intervals)
    normalized = []
    for start, end in pairs:
        s = start + rank if start < 0 else start
        e = end + rank if end < 0 else end
        if not 0 <= s < max(rank, 1):
            raise LayoutError(
                f"collapse_intervals start {start} (normalized: {s}) is out of range for a rank-{rank} "
                f"logical_shape; use a start in [{-rank}, {rank - 1}]"
            )
        if not 0 <= e <= rank:
            raise LayoutError(
                f"collapse_intervals end {end} (normalized: {e}) is out of range for a rank-{rank} "
                f"logical_shape; use an end in [{-rank}, {rank}]"
            )
        if s > e:
            raise LayoutError(f"collapse_intervals [{start}, {end}]: start ({s}) must not exceed end ({e})")
        normalized.append((s, e))
    normalized.sort()
    result: list[tuple[int, int]] = []
    covered = 0
    for s, e in normalized:
        if s < covered:
            raise LayoutError(
                f"collapse_intervals overlap at dim {s}: {list(map(list, normalized))}; "
                f"each dim may belong to at most one interval"
            )
        result.extend((d, d + 1) for d in range(covered, s))
        result.append((s, e))
        covered = max(covered, e)
    result.extend((d, d + 1) for d in range(covered, rank))
    return tuple(result)


def tile_alignments(
    logical_shape: Sequence[int], intervals: Sequence[tuple[int, int]], tile: TileShape
) -> tuple[int, ...]:
    """Tile alignment: the tile height on the last dim of the second-to-last interval and the
    tile width on the last dim of the last interval; 1 elsewhere."""
    alignments = [1] * len(logical_shape)
    for k, tile_dim in ((-1, tile.width), (-2, tile.height)):
        if len(intervals) >= -k:
            s, e = intervals[k]
            if e > s:
                alignments[e - 1] = tile_dim
    return tuple(alignments)


def grid_aware_alignments(
    logical_shape: Sequence[int],
    intervals: Sequence[tuple[int, int]],
    grid: Sequence[int],
    tile: TileShape,
) -> tuple[int, ...]:
    """Grid-aware alignment of tt-mlir: for each of the last two intervals, with ``g`` its grid
    dim and ``t`` its tile dim, the interval's collapsed size (innermost dim tile-aligned) is
    aligned to ``g·t`` when it exceeds ``g·t``, else to ``t``. A single-dim interval carries
    that alignment on its dim; a multi-dim interval carries ``t`` on its innermost dim and
    ``g·t`` on its outermost dim (only when it exceeds ``g·t``).

    Example (8×8 grid): 4×43×7 → 8×1 tiles; 9×43×7 → 24×1 tiles; 31×33×447 → 64×16 tiles.
    """
    if len(grid) != len(intervals):
        raise LayoutError(
            f"grid {_dims_x(grid)} has rank {len(grid)} but the layout has {len(intervals)} collapse "
            f"intervals; give a grid with one dim per interval"
        )
    alignments = [1] * len(logical_shape)
    for k, tile_dim in ((-1, tile.width), (-2, tile.height)):
        if len(intervals) < -k:
            continue
        s, e = intervals[k]
        if e == s:
            continue
        threshold = grid[k] * tile_dim
        collapsed = align_up(logical_shape[e - 1], tile_dim) * math.prod(logical_shape[s : e - 1])
        to_grid = collapsed > threshold
        if e - s == 1:
            alignments[s] = threshold if to_grid else tile_dim
        else:
            alignments[e - 1] = tile_dim
            if to_grid:
                alignments[s] = threshold
    return tuple(alignments)


# --- MLIR affine expression printing -----------------------------------------------------


def format_affine_expr(expr: AffineExpr, strong: bool = False) -> str:
    """Print an affine expression the way MLIR prints it (``d0 * 192 + d1 * 64 + d2``):
    sums left to right without parentheses, ``- x`` for negative terms, parentheses only
    around a sum inside a product, modulo or division."""
    if isinstance(expr, AffineDimExpr):
        return f"d{expr.position}"
    if isinstance(expr, AffineSymExpr):
        return f"s{expr.position}"
    if isinstance(expr, AffineConstantExpr):
        return str(expr.value)
    if not isinstance(expr, AffineBinaryOpExpr):
        raise LayoutError(f"cannot print affine expression {expr!r}")
    kind, lhs, rhs = expr.kind, expr.lhs, expr.rhs
    if kind is AffineBinaryOpKind.Mul:
        if isinstance(rhs, AffineConstantExpr) and rhs.value == -1:
            return "-" + format_affine_expr(lhs, True)
        return f"{format_affine_expr(lhs, True)} * {format_affine_expr(rhs, True)}"
    if kind is not AffineBinaryOpKind.Add:
        op = {
            AffineBinaryOpKind.Mod: "mod",
            AffineBinaryOpKind.FloorDiv: "floordiv",
            AffineBinaryOpKind.CeilDiv: "ceildiv",
        }[kind]
        return f"{format_affine_expr(lhs, True)} {op} {format_affine_expr(rhs, True)}"
    text = format_affine_expr(lhs, False)
    if (
        isinstance(rhs, AffineBinaryOpExpr)
        and rhs.kind is AffineBinaryOpKind.Mul
        and isinstance(rhs.rhs, AffineConstantExpr)
        and rhs.rhs.value < 0
    ):
        factor = -rhs.rhs.value
        term = format_affine_expr(rhs.lhs, True) + ("" if factor == 1 else f" * {factor}")
        text += f" - {term}"
    elif isinstance(rhs, AffineConstantExpr) and rhs.value < 0:
        text += f" - {-rhs.value}"
    else:
        text += f" + {format_affine_expr(rhs, False)}"
    return f"({text})" if strong else text


def format_affine_map(amap: AffineMap) -> str:
    """``(d0, d1, d2, d3) -> (d0 * 192 + d1 * 64 + d2, d3)``."""
    dims = ", ".join(f"d{i}" for i in range(amap.num_dims))
    syms = f"[{', '.join(f's{i}' for i in range(amap.num_symbols))}]" if amap.num_symbols else ""
    results = ", ".join(format_affine_expr(r) for r in amap.results)
    return f"({dims}){syms} -> ({results})"


def parse_affine_map(text: str) -> AffineMap:
    """Parse MLIR affine-map text, with or without the ``affine_map<...>`` wrapper."""
    body = text.strip()
    if body.startswith("affine_map<") and body.endswith(">"):
        body = body[len("affine_map<") : -1]
    try:
        return Parser(Context(), body).parse_affine_map()
    except ParseError as err:
        first = str(err).strip().splitlines()
        detail = first[-1].strip() if first else "syntax error"
        raise LayoutError(
            f"linear map {text!r} is not an affine map ({detail}); write e.g. (d0, d1, d2) -> (d0 * 64 + d1, d2)"
        ) from None


def linear_map(dim_strides: Sequence[Sequence[tuple[int, int]]], num_dims: int) -> AffineMap:
    """An affine map whose result ``i`` is ``Σ d_j * stride_j`` over ``dim_strides[i]``
    (pairs of dim and stride, outer dim first); an empty result is the constant 0."""
    results = []
    for terms in dim_strides:
        expr: AffineExpr | None = None
        for dim, stride in terms:
            term = AffineExpr.dimension(dim) if stride == 1 else AffineExpr.dimension(dim) * stride
            expr = term if expr is None else expr + term
        results.append(expr if expr is not None else AffineExpr.constant(0))
    return AffineMap(num_dims, 0, tuple(results))


def collapse_notation(rank: int, collapse_intervals=None) -> str:
    """The dim-join notation of the tt-mlir tensor layout, ``(d0, d1, d2, d3) -> (d0 <> d1 <> d2, d3)``."""
    intervals = normalize_collapse_intervals(
        default_collapse_intervals(rank) if collapse_intervals is None else collapse_intervals, rank
    )
    dims = ", ".join(f"d{i}" for i in range(rank))
    results = ", ".join(" <> ".join(f"d{j}" for j in range(s, e)) or "0" for s, e in intervals)
    return f"({dims}) -> ({results})"


def _eval_expr(expr: AffineExpr, dims: Sequence[np.ndarray]):
    """Evaluate ``expr`` on numpy index arrays (broadcasting), with MLIR's semantics:
    ``mod`` is non-negative, ``floordiv`` rounds down, ``ceildiv`` rounds up."""
    if isinstance(expr, AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return np.int64(expr.value)
    if isinstance(expr, AffineSymExpr):
        raise LayoutError(f"affine expression {format_affine_expr(expr)} uses a symbol; layouts take dims only")
    lhs, rhs = _eval_expr(expr.lhs, dims), _eval_expr(expr.rhs, dims)
    kind = expr.kind
    if kind is AffineBinaryOpKind.Add:
        return lhs + rhs
    if kind is AffineBinaryOpKind.Mul:
        return lhs * rhs
    if kind is AffineBinaryOpKind.Mod:
        return np.mod(lhs, rhs)
    if kind is AffineBinaryOpKind.FloorDiv:
        return np.floor_divide(lhs, rhs)
    return -np.floor_divide(-lhs, rhs)


def _eval_map_on_grid(amap: AffineMap, shape: Sequence[int]) -> list[np.ndarray]:
    """Every result of ``amap`` for every logical index of ``shape`` (flat, C order)."""
    volume = math.prod(shape)
    if volume > MAX_ENUMERATED_ELEMENTS:
        raise LayoutError(
            f"logical_shape {_dims_x(shape)} has {volume} elements, more than the {MAX_ENUMERATED_ELEMENTS} "
            f"tilefold enumerates to locate padding; ask for a smaller tensor"
        )
    rank = len(shape)
    dims = []
    for d, n in enumerate(shape):
        view = [1] * rank
        view[d] = n
        dims.append(np.arange(n, dtype=np.int64).reshape(view))
    return [np.broadcast_to(_eval_expr(r, dims), tuple(shape)).reshape(-1) for r in amap.results]


# --- padding report shared by both forms -------------------------------------------------


@dataclass(frozen=True)
class CorePadding:
    """Padding of every core of a grid.

    ``elements[g]`` is the number of padding elements in core ``g``'s shard (an array of the
    grid's shape); ``extent[d][i]`` the padding along physical dim ``d`` of the cores at
    position ``i`` of grid dim ``d`` — shard extent minus the rows (columns, ...) that hold
    real data. For the tt-mlir tensor layout's 53×63 on 3×2: scalar rows ``[0, 0, 1]``, columns ``[0, 1]``;
    tilized rows ``[14, 14, 15]``.
    """

    grid: tuple[int, ...]
    shard_shape: tuple[int, ...]
    elements: np.ndarray
    extent: tuple[np.ndarray, ...]

    @property
    def total(self) -> int:
        return int(self.elements.sum())

    def summary(self) -> str:
        names = ["rows", "cols"] if len(self.extent) == 2 else [f"dim{d}" for d in range(len(self.extent))]
        parts = []
        for name, ext in zip(names, self.extent):
            parts.append(f"{name} " + "/".join(str(int(v)) for v in ext))
        shard = math.prod(self.shard_shape)
        return (
            f"{self.total} padding elements of {shard * math.prod(self.grid)} "
            f"({self.elements.min()}..{self.elements.max()} per core); padding per core position: " + ", ".join(parts)
        )


def _padding_from_dim_masks(
    masks: Sequence[np.ndarray], grid: Sequence[int], shard: Sequence[int]
) -> CorePadding:
    """Padding when "real" is an outer product of one mask per physical dim."""
    counts = []
    for mask, g, s in zip(masks, grid, shard):
        padded = np.zeros(g * s, dtype=bool)
        padded[: mask.size] = mask
        counts.append(padded.reshape(g, s).sum(axis=1))
    real = counts[0]
    for c in counts[1:]:
        real = np.multiply.outer(real, c)
    elements = math.prod(shard) - real
    extent = tuple(np.asarray(s - c) for s, c in zip(shard, counts))
    return CorePadding(tuple(grid), tuple(shard), np.asarray(elements), extent)


# --- current tt-mlir semantics -----------------------------------------------------------


@dataclass(frozen=True)
class MetalLayout:
    """tt-mlir's ``#ttcore.metal_layout`` (current semantics).

    Build one with :meth:`create`. ``logical_shape`` is the tensor's shape;
    ``collapsed_intervals`` the [start, end) dim ranges folded into one physical dim each (as
    given; see :attr:`normalized_intervals`); ``dim_alignments`` one alignment per logical dim,
    applied while collapsing inner to outer. ``tile`` is the tile the physical shape is
    counted in; an empty interval (rank 1's synthetic leading interval) is one row aligned to
    the tile height.
    """

    logical_shape: tuple[int, ...]
    dim_alignments: tuple[int, ...]
    collapsed_intervals: tuple[tuple[int, int], ...]
    oob_val: OOBVal = OOBVal.Undef
    memory_space: MemorySpace = MemorySpace.DeviceL1
    memory_layout: str = "sharded"
    tile: TileShape = field(default_factory=TileShape)

    def __post_init__(self):
        shape = _shape(self.logical_shape, "logical_shape")
        object.__setattr__(self, "logical_shape", shape)
        intervals = tuple(_interval_pairs(self.collapsed_intervals))
        object.__setattr__(self, "collapsed_intervals", intervals)
        try:
            alignments = tuple(int(a) for a in self.dim_alignments)
        except (TypeError, ValueError):
            raise LayoutError(f"dim_alignments {self.dim_alignments!r} must be a list of integers") from None
        if len(alignments) != len(shape):
            raise LayoutError(
                f"dim_alignments has {len(alignments)} entries but logical_shape {_dims_x(shape)} has rank "
                f"{len(shape)}; give one alignment per dim"
            )
        for i, a in enumerate(alignments):
            if a <= 0:
                raise LayoutError(f"dim_alignments[{i}] must be positive, got {a}")
        object.__setattr__(self, "dim_alignments", alignments)
        object.__setattr__(self, "oob_val", oob_val(self.oob_val))
        object.__setattr__(self, "memory_space", memory_space(self.memory_space))
        object.__setattr__(self, "tile", tile_shape(self.tile))
        if self.memory_layout not in ("sharded", "interleaved"):
            raise LayoutError(f"memory_layout {self.memory_layout!r} is unknown; use sharded or interleaved")
        normalize_collapse_intervals(intervals, len(shape))  # verifies the intervals

    @classmethod
    def create(
        cls,
        logical_shape,
        grid: Sequence[int] | None = None,
        collapse_intervals=None,
        dim_alignments: Sequence[int] | None = None,
        tile=None,
        oob_val: OOBVal | str = OOBVal.Undef,
        memory_space: MemorySpace | str = MemorySpace.DeviceL1,
        memory_layout: str = "sharded",
    ) -> "MetalLayout":
        """A layout with default intervals ``[[0, r-1], [r-1, r]]`` unless given, and
        alignments computed unless given: grid-aware when ``grid`` is given, tile alignment
        otherwise."""
        shape = _shape(logical_shape, "logical_shape")
        tile = tile_shape(tile)
        intervals = default_collapse_intervals(len(shape)) if collapse_intervals is None else collapse_intervals
        normalized = normalize_collapse_intervals(intervals, len(shape))
        if dim_alignments is None:
            if grid is None:
                dim_alignments = tile_alignments(shape, normalized, tile)
            else:
                dim_alignments = grid_aware_alignments(shape, normalized, _shape(grid, "grid"), tile)
        return cls(shape, tuple(dim_alignments), tuple(map(tuple, _interval_pairs(intervals))),
                   oob_val, memory_space, memory_layout, tile)

    # -- shapes -----------------------------------------------------------------------

    @property
    def rank(self) -> int:
        return len(self.logical_shape)

    @property
    def normalized_intervals(self) -> tuple[tuple[int, int], ...]:
        return normalize_collapse_intervals(self.collapsed_intervals, self.rank)

    def _empty_interval_alignment(self, position: int, count: int) -> int:
        if position == count - 1:
            return self.tile.width
        if position == count - 2:
            return self.tile.height
        return 1

    def _interval_strides(self) -> list[tuple[list[tuple[int, int]], int]]:
        """Per normalised interval: [(dim, stride within the interval)] outer dim first, and
        the interval's physical extent."""
        out = []
        intervals = self.normalized_intervals
        for pos, (s, e) in enumerate(intervals):
            if s == e:
                out.append(([], align_up(1, self._empty_interval_alignment(pos, len(intervals)))))
                continue
            partial = 1
            terms = []
            for j in range(e - 1, s - 1, -1):
                terms.append((j, partial))
                partial = align_up(self.logical_shape[j] * partial, self.dim_alignments[j])
            out.append((terms[::-1], partial))
        return out

    @property
    def physical_shape(self) -> tuple[int, ...]:
        """Physical shape in elements: one extent per normalised interval."""
        return tuple(extent for _, extent in self._interval_strides())

    def physical_shape_in_tiles(self, tile=None) -> tuple[int, ...]:
        """Physical shape with the last two dims counted in tiles."""
        tile = self.tile if tile is None else tile_shape(tile)
        phys = list(self.physical_shape)
        if len(phys) < 2:
            raise LayoutError(f"logical_shape {_dims_x(self.logical_shape)} collapses to rank {len(phys)}; tiles need 2 dims")
        for k, t in ((-2, tile.height), (-1, tile.width)):
            if phys[k] % t:
                raise LayoutError(
                    f"physical shape {_dims_x(self.physical_shape)} is not a whole number of {tile} tiles; "
                    f"align the last dims of the last two intervals (dim_alignments) to the tile"
                )
            phys[k] //= t
        return tuple(phys)

    @property
    def linear(self) -> AffineMap:
        """The affine map from logical index to physical index that this layout implies:
        each physical dim is ``Σ d_j * stride_j`` with strides from the aligned collapse."""
        return linear_map([terms for terms, _ in self._interval_strides()], self.rank)

    def host_strides_and_volume(self) -> tuple[tuple[int, ...], int]:
        """Element strides of the padded host buffer and its volume: 2×33×128 →
        ([8192, 128, 1], 16384)."""
        strides = [0] * self.rank
        outer = 1
        for terms, extent in reversed(self._interval_strides()):
            for dim, stride in terms:
                strides[dim] = outer * stride
            outer *= extent
        return tuple(strides), outer

    @property
    def host_strides(self) -> tuple[int, ...]:
        return self.host_strides_and_volume()[0]

    @property
    def host_volume(self) -> int:
        return self.host_strides_and_volume()[1]

    @property
    def is_padded(self) -> bool:
        return self.host_volume > math.prod(self.logical_shape)

    # -- grid ----------------------------------------------------------------------------

    def _check_grid(self, grid, tiled: bool) -> tuple[tuple[int, ...], tuple[int, ...]]:
        grid = _shape(grid, "grid")
        phys = self.physical_shape_in_tiles() if tiled else self.physical_shape
        if len(grid) != len(phys):
            raise LayoutError(
                f"grid {_dims_x(grid)} has rank {len(grid)} but the physical shape {_dims_x(phys)} has rank "
                f"{len(phys)}; give one grid dim per collapse interval"
            )
        for d, (p, g) in enumerate(zip(phys, grid)):
            if p % g:
                unit = "tiles" if tiled and d >= len(phys) - 2 else "elements"
                raise LayoutError(
                    f"grid {_dims_x(grid)} does not divide the physical shape {_dims_x(phys)} ({unit}) in dim {d}; "
                    f"pick a grid dim dividing {p} (e.g. {self.optimal_grid(grid)[d]}) or create the layout with "
                    f"this grid for grid-aware alignment"
                )
        return grid, phys

    def shard_shape(self, grid, tiled: bool = True) -> tuple[int, ...]:
        """Shape of one core's shard (last two dims in tiles when ``tiled``)."""
        grid, phys = self._check_grid(grid, tiled)
        return tuple(p // g for p, g in zip(phys, grid))

    def device_shape(self, grid, tiled: bool = True) -> tuple[int, ...]:
        """tt-mlir's device shape: the grid followed by the shard shape."""
        grid = _shape(grid, "grid")
        return grid + self.shard_shape(grid, tiled)

    def optimal_grid(self, device_grid) -> tuple[int, ...]:
        """Per physical dim, the largest grid dim not above ``device_grid`` that divides the
        physical shape in tiles (in elements for dims outside the last two)."""
        device_grid = _shape(device_grid, "grid")
        phys = self.physical_shape
        tiles = list(phys)
        if len(tiles) >= 2:
            tiles[-2] = ceil_div(phys[-2], self.tile.height)
            tiles[-1] = ceil_div(phys[-1], self.tile.width)
        if len(device_grid) != len(tiles):
            raise LayoutError(
                f"grid {_dims_x(device_grid)} has rank {len(device_grid)} but the layout collapses to rank "
                f"{len(tiles)}; give one grid dim per collapse interval"
            )
        return tuple(max(g for g in range(1, limit + 1) if t % g == 0) for t, limit in zip(tiles, device_grid))

    # -- padding -------------------------------------------------------------------------

    def real_masks(self) -> tuple[np.ndarray, ...]:
        """One boolean mask per physical dim: True where that physical index holds logical
        data. An element is padding iff it is False in any dim's mask."""
        masks = []
        for terms, extent in self._interval_strides():
            offsets = np.zeros(1, dtype=np.int64)
            for dim, stride in terms:
                offsets = np.add.outer(offsets, np.arange(self.logical_shape[dim], dtype=np.int64) * stride).ravel()
            mask = np.zeros(extent, dtype=bool)
            mask[offsets] = True
            masks.append(mask)
        return tuple(masks)

    def padding_mask(self) -> np.ndarray:
        """Boolean array of the physical shape (elements), True on padding."""
        masks = self.real_masks()
        real = masks[0]
        for m in masks[1:]:
            real = np.logical_and.outer(real, m)
        return ~np.asarray(real)

    def core_padding(self, grid) -> CorePadding:
        """Padding per core for ``grid`` (elements; the physical shape is tile aligned so
        tile padding is included)."""
        grid, _ = self._check_grid(grid, tiled=False)
        shard = tuple(p // g for p, g in zip(self.physical_shape, grid))
        return _padding_from_dim_masks(self.real_masks(), grid, shard)

    # -- printing ------------------------------------------------------------------------

    def __str__(self) -> str:
        n = len(self.collapsed_intervals)
        rows = ", ".join(f"[{s}, {e}]" for s, e in self.collapsed_intervals)
        mem_layout = f", {self.memory_layout}"
        return (
            f"#ttcore.metal_layout<logical_shape = {_dims_x(self.logical_shape)}, "
            f"dim_alignments = {_dims_x(self.dim_alignments)}, "
            f"collapsed_intervals = dense<[{rows}]> : tensor<{n}x2xi64>, "
            f"{self.oob_val.value}, {self.memory_space.value}{mem_layout}>"
        )


# --- tt-mlir tensor layout: grid-in-attribute semantics -------------------------------------------------

_MLIR_SCALAR = {
    DataFormat.Float32: "f32",
    DataFormat.Float16_b: "bf16",
    DataFormat.UInt32: "ui32",
    DataFormat.Int32: "si32",
    DataFormat.UInt16: "ui16",
    DataFormat.UInt8: "ui8",
}

_TT_TILE_DTYPE = {
    DataFormat.Float32: "f32",
    DataFormat.Float16_b: "bf16",
    DataFormat.Bfp8_b: "bfp_bf8",
    DataFormat.Bfp4_b: "bfp_bf4",
    DataFormat.UInt32: "u32",
    DataFormat.Int32: "si32",
    DataFormat.UInt16: "u16",
    DataFormat.UInt8: "u8",
}


def mlir_element_type(fmt: DataFormat) -> str:
    """MLIR scalar type of a data format (``f32``, ``bf16`` ...); block floats have none."""
    try:
        return _MLIR_SCALAR[fmt]
    except KeyError:
        raise LayoutError(f"{fmt.ttnn_name} has no scalar MLIR type; it exists only as a tile element, give a tile") from None


def tt_tile_type(tile: TileShape, fmt: DataFormat) -> str:
    """``!tt.tile<32 x 32, bfp_bf8>``."""
    return f"!tt.tile<{tile.height} x {tile.width}, {_TT_TILE_DTYPE[fmt]}>"


@dataclass(frozen=True)
class LinearMetalLayout:
    """The tt-mlir tensor layout's ``#tt.metal_layout<linear, oob_val, grid, memref>``.

    ``linear`` maps tensor dims to physical dims (one result per grid dim). The physical
    shape is the map applied to the last index plus one; the shard memref is
    ``ceilDiv(physical, grid)``, and when ``tile`` is given its last two dims are
    ``ceilDiv``'d by the tile (grid first, then tilize). ``dtype`` is the tensor's element
    type; ``tile_dtype`` (default ``dtype``) the tile's data format.
    """

    logical_shape: tuple[int, ...]
    linear: AffineMap
    grid: tuple[int, ...]
    dtype: DataFormat = DataFormat.Float32
    tile: TileShape | None = None
    tile_dtype: DataFormat | None = None
    memory_space: MemorySpace = MemorySpace.DeviceL1
    oob_val: OOBVal = OOBVal.Undef

    def __post_init__(self):
        shape = _shape(self.logical_shape, "logical_shape")
        object.__setattr__(self, "logical_shape", shape)
        linear = parse_affine_map(self.linear) if isinstance(self.linear, str) else self.linear
        if not isinstance(linear, AffineMap):
            raise LayoutError(f"linear {self.linear!r} must be an affine map or its MLIR text")
        if linear.num_dims != len(shape):
            raise LayoutError(
                f"linear map {format_affine_map(linear)} has {linear.num_dims} dims but logical_shape "
                f"{_dims_x(shape)} has rank {len(shape)}; the map needs one dim per tensor dim"
            )
        if linear.num_symbols:
            raise LayoutError(f"linear map {format_affine_map(linear)} uses symbols; a layout map takes dims only")
        object.__setattr__(self, "linear", linear)
        grid = _shape(self.grid, "grid")
        if len(grid) != len(linear.results):
            raise LayoutError(
                f"grid {_dims_x(grid)} has rank {len(grid)} but the linear map has {len(linear.results)} results; "
                f"the grid needs one dim per result"
            )
        object.__setattr__(self, "grid", grid)
        object.__setattr__(self, "dtype", data_format(self.dtype))
        if self.tile is not None:
            object.__setattr__(self, "tile", tile_shape(self.tile))
            if len(grid) < 2:
                raise LayoutError(f"grid {_dims_x(grid)} has rank 1; a tilized layout needs at least 2 physical dims")
        object.__setattr__(self, "tile_dtype", self.dtype if self.tile_dtype is None else data_format(self.tile_dtype))
        object.__setattr__(self, "memory_space", memory_space(self.memory_space))
        object.__setattr__(self, "oob_val", oob_val(self.oob_val))
        lows = self.linear.eval([0] * len(shape), [])
        if any(v < 0 for v in self.linear.eval([s - 1 for s in shape], [])) or any(v < 0 for v in lows):
            raise LayoutError(f"linear map {format_affine_map(linear)} gives a negative physical index")

    @classmethod
    def from_collapse_intervals(
        cls,
        logical_shape,
        grid,
        collapse_intervals=((0, -1),),
        **kwargs,
    ) -> "LinearMetalLayout":
        """The map of the tt-mlir tensor layout's ``collapseIntervals`` (default ``[(0, -1)]``): each interval
        folds its dims with multipliers from the logical shape; other dims stay as they are;
        leading constant-0 results fill a grid of higher rank (128 on ``<1x4>``:
        ``(d0) -> (0, d0)``)."""
        shape = _shape(logical_shape, "logical_shape")
        grid = _shape(grid, "grid")
        intervals = normalize_collapse_intervals(collapse_intervals, len(shape))
        terms = []
        for s, e in intervals:
            if s == e:
                continue
            stride, dims = 1, []
            for j in range(e - 1, s - 1, -1):
                dims.append((j, stride))
                stride *= shape[j]
            terms.append(dims[::-1])
        terms = [[]] * max(0, len(grid) - len(terms)) + terms
        return cls(shape, linear_map(terms, len(shape)), grid, **kwargs)

    # -- shapes -------------------------------------------------------------------------

    @property
    def physical_shape(self) -> tuple[int, ...]:
        """The map at the last element plus one: (2, 3, 64, 128) under
        ``(d0 * 192 + d1 * 64 + d2, d3)`` → (384, 128)."""
        return tuple(int(v) + 1 for v in self.linear.eval([s - 1 for s in self.logical_shape], []))

    @property
    def shard_shape(self) -> tuple[int, ...]:
        """Scalar shard per core: ``ceilDiv(physical, grid)``."""
        return tuple(ceil_div(p, g) for p, g in zip(self.physical_shape, self.grid))

    @property
    def memref_shape(self) -> tuple[int, ...]:
        """The shard memref: the scalar shard, or with the last two dims in tiles."""
        shard = list(self.shard_shape)
        if self.tile is not None:
            shard[-2] = ceil_div(shard[-2], self.tile.height)
            shard[-1] = ceil_div(shard[-1], self.tile.width)
        return tuple(shard)

    @property
    def padded_shard_shape(self) -> tuple[int, ...]:
        """The shard in elements as allocated (tile multiples when tilized)."""
        shard = list(self.shard_shape)
        if self.tile is not None:
            shard[-2] = align_up(shard[-2], self.tile.height)
            shard[-1] = align_up(shard[-1], self.tile.width)
        return tuple(shard)

    def memref_type(self) -> str:
        """``memref<192x32xf32, #tt.memory_space<l1>>`` or
        ``memref<2x2x!tt.tile<32 x 32, bfp_bf8>, #tt.memory_space<l1>>``."""
        element = (
            tt_tile_type(self.tile, self.tile_dtype) if self.tile is not None else mlir_element_type(self.dtype)
        )
        return f"memref<{_dims_x(self.memref_shape)}x{element}, #tt.memory_space<{self.memory_space.value}>>"

    def __str__(self) -> str:
        return (
            f"#tt.metal_layout<{format_affine_map(self.linear)}, {self.oob_val.value}, "
            f"<{_dims_x(self.grid)}>, {self.memref_type()}>"
        )

    def tensor_type(self) -> str:
        """``tensor<2x3x64x128xf32, #tt.metal_layout<...>>``."""
        return f"tensor<{_dims_x(self.logical_shape)}x{mlir_element_type(self.dtype)}, {self}>"

    # -- padding -------------------------------------------------------------------------

    def physical_indices(self) -> list[np.ndarray]:
        """Physical index of every logical element (one flat array per physical dim)."""
        return _eval_map_on_grid(self.linear, self.logical_shape)

    def core_padding(self) -> CorePadding:
        """Padding per core: allocated shard (tile padded when tilized) minus the real data
        that lands on the core, counted by enumerating the logical elements."""
        indices = self.physical_indices()
        shard = self.shard_shape
        padded = self.padded_shard_shape
        core = [idx // s for idx, s in zip(indices, shard)]
        flat_core = np.ravel_multi_index(core, self.grid)
        ncores = math.prod(self.grid)
        # Distinct physical positions per core (maps may send two logical indices to one place).
        position = np.ravel_multi_index(indices, self.physical_shape)
        _, first = np.unique(position, return_index=True)
        real = np.bincount(flat_core[first], minlength=ncores).reshape(self.grid)
        elements = math.prod(padded) - real
        extent = []
        for d in range(len(self.grid)):
            used = np.bincount(np.unique(indices[d]) // shard[d], minlength=self.grid[d])
            extent.append(padded[d] - used)
        return CorePadding(self.grid, padded, elements, tuple(extent))

    def real_mask_2d(self) -> np.ndarray:
        """For a 2-D grid: a boolean picture of every core's allocated shard, laid out on the
        grid (shape ``grid * padded shard``), True where real data sits."""
        if len(self.grid) != 2:
            raise LayoutError(f"grid {_dims_x(self.grid)} is not 2-D; the picture needs a 2-D grid")
        indices = self.physical_indices()
        shard, padded = self.shard_shape, self.padded_shard_shape
        rows = indices[0] // shard[0] * padded[0] + indices[0] % shard[0]
        cols = indices[1] // shard[1] * padded[1] + indices[1] % shard[1]
        mask = np.zeros((self.grid[0] * padded[0], self.grid[1] * padded[1]), dtype=bool)
        mask[rows, cols] = True
        return mask


__all__ = [
    "MemorySpace",
    "OOBVal",
    "MetalLayout",
    "LinearMetalLayout",
    "CorePadding",
    "memory_space",
    "oob_val",
    "align_up",
    "ceil_div",
    "default_collapse_intervals",
    "normalize_collapse_intervals",
    "tile_alignments",
    "grid_aware_alignments",
    "format_affine_expr",
    "format_affine_map",
    "parse_affine_map",
    "linear_map",
    "collapse_notation",
    "mlir_element_type",
    "tt_tile_type",
]
