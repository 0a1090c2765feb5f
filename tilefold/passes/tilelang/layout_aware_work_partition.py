"""layout_aware_work_partition (Stage B1): which blocks each core computes, from buffer residency.

Reads: the ``tile.kernel`` grid; the kernel's output writes (``tile.copy`` to a global
tensor, or ``tile.store`` into one), whose row / column offsets say which block index
walks the output's rows (M) and which its columns (N); the K loop (the top-level
``tile.for`` holding a ``tile.gemm``, else the first top-level loop); ``tt.buffer.*``;
``tt.schedule``.

Writes, with work counted in output blocks (one block = ``tt.block_tiles`` tiles; a block
of one tile is the TileLang-TT architecture's "tile"):

- ``tt.partition_mode``: ``local_shard`` when a tensor is sharded in L1 — each core then
  computes the blocks of its own shard, the cores are the shard grid, and runtime args
  carry the shard geometry — else ``global``: blocks in row-major order split into
  contiguous runs over the cores in row-major order (the first ``blocks % cores`` cores
  take one more).
- ``tt.grid_tiles`` [Mt, Nt], ``tt.block_tiles`` [rows, cols], ``tt.grid_axes``
  {m, n, others} (which ``T.Kernel`` dimension indexes M / N, -1 for none; the other grid
  dims, outermost first: a block id counts through them before M and N), ``tt.shard_grid``
  [Gy, Gx], ``tt.local_shape_tiles`` [Sm, Sn] (in blocks; [1, 1] and [Mt, Nt] in global
  mode), ``tt.core_ranges`` [[x0, y0, x1, y1] ...], ``tt.runtime_args`` (``#tt.runtime_arg`` records of plain values:
  ``start_id, count, Mt, Kt, Nt`` and in local_shard mode ``Sm, Sn, Gy, Gx, sy, sx``) and
  ``tt.core_runtime_args`` [[x, y, value...] ...] in that order; ``tt.k_elems``, the K
  extent in elements of a matmul (for the plan).

Errors: an L1-sharded tensor whose shards are not whole output blocks or do not tile the
block grid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from tilefold.arch.cores import CoreCoord, CoreRangeSet
from tilefold.errors import CompileError
from tilefold.ir import tile
from tilefold.passes.tilelang.affine import affine_of, trip_count
from tilefold.ir.attributes import get_attr, kernel_function, location_of, param_names, set_attr
from tilefold.passes.tilelang.common import TILE, buffer_name, compile_error, is_global, kernel_op, memref_shape, tiles_for
from tilefold.passes.tilelang.copy_geometry import copy_geometry
from tilefold.passes.device_pass import DevicePass

GLOBAL_ARGS = ["start_id", "count", "Mt", "Kt", "Nt"]
SHARD_ARGS = ["Sm", "Sn", "Gy", "Gx", "sy", "sx"]


def output_writes(kernel, grid_op: tile.KernelOp) -> list[tuple]:
    """(op, global name, row offset, col offset, block rows, block cols) of every output write
    (the offsets along the global dims the block's rows and columns run along; a vector has no
    row offset)."""
    writes = []
    for op in grid_op.walk():
        if isinstance(op, tile.CopyOp) and op.offsets and is_global(op.dst, kernel):
            g = copy_geometry(op, kernel)
            row_dim = g.dims[0] if len(g.local_shape) == 2 else -1
            row = op.offsets[row_dim] if row_dim >= 0 else None
            writes.append((op, g.gname, row, op.offsets[-1], g.rows, g.cols))
        elif isinstance(op, tile.StoreOp) and is_global(op.buffer, kernel) and len(op.indices) >= 2:
            par = op.parent_op()
            shape = par.shape if isinstance(par, tile.ParallelOp) and len(par.shape) == 2 else [TILE, TILE]
            writes.append((op, buffer_name(op.buffer, kernel), op.indices[-2], op.indices[-1], shape[0], shape[1]))
    return writes


def grid_axes(grid_op: tile.KernelOp, writes) -> tuple[int, int]:
    """(m_dim, n_dim): the grid dimension indexing output rows / columns (-1: none)."""
    args = list(grid_op.body.block.args)
    m_dim = n_dim = -1
    if writes:
        _, _, row, col, _, _ = writes[0]
        for d, arg in enumerate(args):
            in_row = row is not None and affine_of(row).coefficient(arg) != 0
            in_col = affine_of(col).coefficient(arg) != 0
            if in_row and in_col:
                raise compile_error(writes[0][0], f"block index {arg.name_hint or d} offsets both the rows and the "
                                                  "columns of the output; use one block index per output axis")
            if in_row and m_dim < 0:
                m_dim = d
            elif in_col and n_dim < 0:
                n_dim = d
    unused = [d for d in range(len(args)) if d not in (m_dim, n_dim)]
    if len(args) == 2:
        if m_dim < 0 and n_dim < 0:
            m_dim, n_dim = 1, 0            # TileLang's convention: bx walks columns, by rows
        elif m_dim < 0:
            m_dim = unused[0]
        elif n_dim < 0:
            n_dim = unused[0]
    elif m_dim < 0 and n_dim < 0:
        m_dim = 0
    return m_dim, n_dim


def k_extent(grid_op: tile.KernelOp) -> tuple[int, int | None]:
    """(K-loop trips, K in elements of the matmul) of the block body; (1, None) without a K loop."""
    loops = [op for op in grid_op.body.block.ops if isinstance(op, tile.ForOp)]
    for loop in loops:
        gemms = [o for o in loop.walk() if isinstance(o, tile.GemmOp)]
        if gemms:
            trips = trip_count(loop) or 1
            return trips, trips * memref_shape(gemms[0].a)[1]
    gemms = [o for o in grid_op.walk() if isinstance(o, tile.GemmOp)]
    k_elems = memref_shape(gemms[0].a)[1] if gemms else None
    return ((trip_count(loops[0]) or 1) if loops else 1), k_elems


def split_contiguous(units: int, cores: int, grain: int = 1) -> list[tuple[int, int]]:
    """(start, count) per core: contiguous runs of whole groups of ``grain`` units, the first
    ``groups % cores`` cores one group longer."""
    groups = -(-units // grain)
    cores = min(cores, groups)
    base, extra = divmod(groups, cores)
    out, start = [], 0
    for i in range(cores):
        count = min((base + (1 if i < extra else 0)) * grain, units - start)
        out.append((start, count))
        start += count
    return out


def shared_face_rows_grain(kernel, writes, grid: list[int], order: list[int], args) -> int:
    """How many consecutive blocks one core must take so that no two cores write into the same
    16-value face row: an output written element by element (a vector of one value per block,
    a column) shares face rows between blocks next to each other along a grid dim; those
    blocks stay on one core, which writes them in turn. Blocks next to each other along the
    innermost dim are consecutive; along another dim they are not, and one core takes all."""
    total = math.prod(grid)
    grain = 1
    for op, *_ in writes:
        if not isinstance(op, tile.CopyOp):
            continue
        g = copy_geometry(op, kernel)
        if g.face_rows() and g.cols_aligned() or g.moves_whole_tiles():
            continue
        for d, arg in enumerate(args):
            c = abs(g.first_col.coefficient(arg))
            if not c:
                continue
            share = 16 // math.gcd(16, c)
            if share == 1:
                continue
            if order and d == order[-1]:
                need = share if grid[d] % share == 0 else grid[d]
            else:
                need = total
            grain = min(total, grain * need // math.gcd(grain, need))
    return grain


@dataclass(frozen=True)
class LayoutAwareWorkPartition(DevicePass):
    """Per-core work assignment and runtime args (see the module docstring)."""

    name = "layout-aware-work-partition"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        arch = self.arch
        kernel = kernel_function(op)
        grid_op = kernel_op(kernel)
        if grid_op is None:
            raise CompileError("layout_aware_work_partition needs the tile.kernel grid; run it before "
                               "grid-to-core-grid")
        grid = grid_op.grid_shape
        writes = output_writes(kernel, grid_op)
        m_dim, n_dim = grid_axes(grid_op, writes)
        mt = grid[m_dim] if m_dim >= 0 else 1
        nt = grid[n_dim] if n_dim >= 0 else 1
        others = [d for d in reversed(range(len(grid))) if d not in (m_dim, n_dim)]
        total = mt * nt * math.prod(grid[d] for d in others)
        block = [tiles_for(writes[0][4]), tiles_for(writes[0][5])] if writes else [1, 1]
        kt, k_elems = k_extent(grid_op)
        sharded = self._l1_sharded(kernel, writes)
        if sharded is not None and math.prod(grid[d] for d in others) > 1:
            raise CompileError(f"{sharded} is sharded in L1, so each core computes the blocks of its own shard; a "
                               f"grid with more block indices than the output's rows and columns ({grid}) has no "
                               "such blocks: interleave it, or use a 2-D grid")
        if sharded is None:
            mode = "global"
            order = others + [d for d in (m_dim, n_dim) if d >= 0]
            grain = shared_face_rows_grain(kernel, writes, grid, order, list(grid_op.body.block.args))
            runs = split_contiguous(total, min(total, arch.num_cores), grain)
            gx = arch.grid[0]
            cores = [CoreCoord(i % gx, i // gx) for i in range(len(runs))]
            args = [[start, count, mt, kt, nt] for start, count in runs]
            names = list(GLOBAL_ARGS)
            shard_grid, local = [1, 1], [mt, nt]
        else:
            mode = "local_shard"
            (gy, gx_s), (sm, sn) = self._shard_geometry(kernel, sharded, mt, nt, block)
            cores = [CoreCoord(sx, sy) for sy in range(gy) for sx in range(gx_s)]
            args = [[0, sm * sn, mt, kt, nt, sm, sn, gy, gx_s, c.y, c.x] for c in cores]
            names = GLOBAL_ARGS + SHARD_ARGS
            shard_grid, local = [gy, gx_s], [sm, sn]
        ranges = CoreRangeSet.from_cores(cores)
        set_attr(kernel, "tt.partition_mode", mode)
        set_attr(kernel, "tt.grid_tiles", [mt, nt])
        set_attr(kernel, "tt.block_tiles", block)
        set_attr(kernel, "tt.grid_axes", {"m": m_dim, "n": n_dim, **({"others": others} if others else {})})
        set_attr(kernel, "tt.shard_grid", shard_grid)
        set_attr(kernel, "tt.local_shape_tiles", local)
        set_attr(kernel, "tt.core_ranges", [[r.start.x, r.start.y, r.end.x, r.end.y] for r in ranges.ranges])
        set_attr(kernel, "tt.runtime_args", [{"name": n} for n in names])
        set_attr(kernel, "tt.core_runtime_args", [[c.x, c.y, *a] for c, a in zip(cores, args)])
        if k_elems is not None:
            set_attr(kernel, "tt.k_elems", k_elems)

    def _l1_sharded(self, kernel, writes) -> str | None:
        written = [w[1] for w in writes]
        candidates = [n for n in param_names(kernel)
                      if get_attr(kernel, f"tt.buffer.{n}")["memory"] == "L1"
                      and get_attr(kernel, f"tt.buffer.{n}")["layout"] == "sharded"]
        if not candidates:
            return None
        outputs = [n for n in candidates if n in written]
        return (outputs or candidates)[0]

    def _shard_geometry(self, kernel, name: str, mt: int, nt: int, block: list[int]):
        entry = get_attr(kernel, f"tt.buffer.{name}")
        where = location_of(get_attr(kernel, "tt.user_layout", {}).get(name))
        nd = entry["nd_shard"]
        gy, gx = nd["projected_grid"]
        st_m, st_n = nd["projected_shard_tiles"]
        padded = entry["padded_shape"]
        rows_t = 1
        for d in padded[:-1]:
            rows_t *= d
        rows_t //= TILE
        cols_t = padded[-1] // TILE
        if rows_t != mt * block[0] or cols_t != nt * block[1]:
            raise CompileError(f"{name} is sharded in L1, so each core computes its own shard, but its "
                               f"{rows_t}x{cols_t} tiles are not the {mt}x{nt} grid of {block[0]}x{block[1]}-tile "
                               "output blocks; shard the output (or a tensor of the output's shape)", where)
        if st_m % block[0] or st_n % block[1]:
            raise CompileError(f"the L1 shards of {name} ({st_m}x{st_n} tiles) are not whole {block[0]}x{block[1]}-"
                               "tile output blocks; make each shard a multiple of the block", where)
        sm, sn = st_m // block[0], st_n // block[1]
        if gy * sm != mt or gx * sn != nt:
            raise CompileError(f"the {gy}x{gx} L1 shards of {name} do not tile its {mt}x{nt} output blocks evenly; "
                               "choose a grid that divides the tensor", where)
        return (gy, gx), (sm, sn)
