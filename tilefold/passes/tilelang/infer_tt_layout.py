"""infer_tt_layout (Stage A1): ``tt.buffer.<name>`` for every global tensor.

Reads: the parameters (shape, dtype), ``tt.padded_shapes`` and ``tt.user_layout``
(``#tt.user_layouts``, from ``annotate_tt_layout``: ``memory`` DRAM | L1, ``layout`` interleaved |
sharded, ``tile_shape``, ``dtype``, ``nd_shard`` = {axes, grid, shard_shape_elems, order,
align_tiles}; the front end has refused unknown fields).
Writes: ``tt.buffer.<name>`` = {memory, layout, tile_shape, dtype, shape, padded_shape
[, nd_shard]}. A sharded buffer's ``nd_shard`` is normalised (axes default to ``M, N``
preceded by ``B``/``H``/``d<i>``; the shard shape is ``ceil(padded / grid)`` when only the
grid is given, the grid ``ceil(padded / shard)`` when only the shard is) and projected
onto the 2-D compute view: every axis but the last folds into rows, so
``projected_grid = [Π grid[:-1], grid[-1]]`` and ``projected_shard_tiles =
[Π shard[:-1] / 32, shard[-1] / 32]``.
Errors: ``halo`` anywhere (*halo unsupported*); unknown values; tile shapes other
than 32×32; a dtype that is not the parameter's; shards that are not whole tiles; an L1
shard grid larger than the core grid; and L1 that does not hold the buffer (L1OverflowError).
All at the line of the annotation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from tilefold.errors import CompileError, L1OverflowError
from tilefold.ir.tile_types import data_format_of, short_name
from tilefold.ir.attributes import get_attr, kernel_function, location_of, set_attr
from tilefold.passes.tilelang.common import TILE, buffers
from tilefold.passes.device_pass import DevicePass



def _default_axes(rank: int) -> list[str]:
    named = {1: ["N"], 2: ["M", "N"], 3: ["B", "M", "N"], 4: ["B", "H", "M", "N"]}
    return named.get(rank, [f"d{i}" for i in range(rank - 2)] + ["M", "N"])


def _ints(value, what: str, rank: int, where) -> list[int]:
    if not isinstance(value, (list, tuple)) or len(value) != rank or \
            not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value):
        raise CompileError(f"{what} must be {rank} positive integers (one per axis), not {value!r}", where)
    return [int(v) for v in value]


def nd_shard(name: str, spec, padded: list[int], where) -> dict:
    """The normalised ``nd_shard`` of tensor ``name`` with its 2-D projection."""
    if not isinstance(spec, dict):
        raise CompileError(f"annotate_tt_layout for {name}: layout='sharded' needs nd_shard={{'grid': [...]}} "
                           "(or shard_shape_elems)", where)
    if spec.get("halo"):
        raise CompileError(f"halo unsupported: annotate_tt_layout for {name} asks for halo {spec['halo']!r}; "
                           "shards must not overlap", where)
    rank = len(padded)
    axes = list(spec.get("axes") or _default_axes(rank))
    if len(axes) != rank or not all(isinstance(a, str) for a in axes):
        raise CompileError(f"annotate_tt_layout for {name}: nd_shard axes {axes!r} must name the {rank} dims of "
                           f"{name} {padded}", where)
    grid = spec.get("grid")
    shard = spec.get("shard_shape_elems")
    if grid is None and shard is None:
        raise CompileError(f"annotate_tt_layout for {name}: nd_shard needs a grid or shard_shape_elems", where)
    if grid is not None:
        grid = _ints(grid, f"nd_shard grid of {name}", rank, where)
    if shard is not None:
        shard = _ints(shard, f"nd_shard shard_shape_elems of {name}", rank, where)
    if shard is None:
        shard = [-(-p // g) for p, g in zip(padded, grid)]
    derived = [-(-p // s) for p, s in zip(padded, shard)]
    if grid is None:
        grid = derived
    elif grid != derived:
        raise CompileError(f"annotate_tt_layout for {name}: shards of {shard} cut {name} {padded} into a "
                           f"{derived} grid, not {grid}; give matching grid and shard_shape_elems", where)
    order = spec.get("order", "row_major")
    if order != "row_major":
        raise CompileError(f"annotate_tt_layout for {name}: nd_shard order {order!r} is not supported; use "
                           "'row_major'", where)
    align_tiles = spec.get("align_tiles", True)
    if shard[-1] % TILE or (rank >= 2 and shard[-2] % TILE):
        raise CompileError(f"annotate_tt_layout for {name}: shard_shape_elems {shard} is not tile-aligned; shards "
                           f"must be whole {TILE}x{TILE} tiles in their last two dims", where)
    rows = math.prod(shard[:-1])
    return {
        "axes": axes, "grid": grid, "shard_shape_elems": shard, "order": order, "align_tiles": bool(align_tiles),
        "projected_grid": [math.prod(grid[:-1]), grid[-1]],
        "projected_shard_tiles": [rows // TILE, shard[-1] // TILE],
    }


@dataclass(frozen=True)
class InferTTLayout(DevicePass):
    """``tt.buffer.<name>`` for each global tensor (see the module docstring)."""

    name = "infer-tt-layout"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        arch = self.arch
        kernel = kernel_function(op)
        user_layout = get_attr(kernel, "tt.user_layout", {})
        padded_shapes = get_attr(kernel, "tt.padded_shapes")
        infos = buffers(kernel)
        for name in user_layout:
            if name not in infos or not infos[name].is_global:
                raise CompileError(f"annotate_tt_layout names {name!r}, which is not a tensor parameter",
                                   location_of(user_layout[name]))
        for name, info in infos.items():
            if not info.is_global:
                continue
            user = user_layout.get(name, {})
            where = location_of(user)
            entry = self._entry(name, info, user, padded_shapes[name], where)
            self._check_capacity(name, entry, arch, where)
            set_attr(kernel, f"tt.buffer.{name}", entry)

    def _entry(self, name, info, user: dict, padded: list[int], where) -> dict:
        if user.get("halo"):
            raise CompileError(f"halo unsupported: annotate_tt_layout for {name} asks for halo {user['halo']!r}; "
                               "shards must not overlap", where)
        memory = str(user.get("memory", "DRAM")).upper()
        if memory not in ("DRAM", "L1"):
            raise CompileError(f"annotate_tt_layout for {name}: memory {user['memory']!r} is not DRAM or L1", where)
        layout = str(user.get("layout", "sharded" if "nd_shard" in user else "interleaved")).lower()
        if layout not in ("interleaved", "sharded"):
            raise CompileError(f"annotate_tt_layout for {name}: layout {user['layout']!r} is not interleaved or "
                               "sharded", where)
        tile_shape = list(user.get("tile_shape", [TILE, TILE]))
        if tile_shape != [TILE, TILE]:
            raise CompileError(f"annotate_tt_layout for {name}: tile_shape {tile_shape} is not supported; the "
                               f"TileLang pipeline uses {TILE}x{TILE} tiles", where)
        dtype = short_name(info.data_format)
        if "dtype" in user and short_name(data_format_of(user["dtype"], where, "dtype")) != dtype:
            raise CompileError(f"annotate_tt_layout for {name}: dtype {user['dtype']!r} differs from the "
                               f"parameter's {dtype}; change the T.Tensor dtype instead", where)
        entry = {"memory": memory, "layout": layout, "tile_shape": tile_shape, "dtype": dtype,
                 "shape": list(info.shape), "padded_shape": list(padded)}
        if layout == "sharded":
            entry["nd_shard"] = nd_shard(name, user.get("nd_shard"), list(padded), where)
        elif "nd_shard" in user:
            raise CompileError(f"annotate_tt_layout for {name}: nd_shard is given but layout is interleaved", where)
        return entry

    def _check_capacity(self, name: str, entry: dict, arch, where) -> None:
        if entry["memory"] != "L1":
            return
        fmt = data_format_of(entry["dtype"])
        page = -(-fmt.tile_size(TILE, TILE) // arch.l1_alignment) * arch.l1_alignment
        padded = entry["padded_shape"]
        if entry["layout"] == "sharded":
            nd = entry["nd_shard"]
            gy, gx = nd["projected_grid"]
            if gx > arch.grid[0] or gy > arch.grid[1]:
                raise CompileError(f"annotate_tt_layout for {name}: the L1 shard grid {gy}x{gx} (rows x columns) "
                                   f"does not fit the {arch.grid[1]}x{arch.grid[0]} core grid of {arch.board}; use "
                                   "bigger shards", where)
            sm, sn = nd["projected_shard_tiles"]
            per_core = sm * sn * page
            what = f"an L1 shard of {name} ({sm}x{sn} tiles)"
        else:
            pages = math.prod(padded[:-2]) * (padded[-2] // TILE) * (padded[-1] // TILE)
            per_core = -(-pages // arch.num_cores) * page
            what = f"the L1 pages of {name} on one core"
        if per_core > arch.l1_free:
            raise L1OverflowError(f"{what} need {per_core} B but a core of {arch.board} has {arch.l1_free} B of L1 "
                                  "free; use smaller shards, more cores or DRAM", where)
