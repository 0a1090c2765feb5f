"""grid_to_core_grid (Stage B2): the grid of blocks → a persistent loop on each core.

Reads: ``tile.kernel``, ``tt.partition_mode``, ``tt.grid_axes``.
Writes: the kernel body becomes

    %start = tile.runtime_arg "start_id"   %count = tile.runtime_arg "count"   ...
    tile.for %i = 0 to %count {kind = "persistent"}:
        tid = start + i
        global:       m = tid / Nt                  n = tid % Nt   (other grid dims: outermost)
        local_shard:  m = sy * Sm + tid / Sn        n = sx * Sn + tid % Sn
        <the block body, with the M block index replaced by m and the N one by n>

so each core walks its own blocks and recovers (m, n) from the block id; every
``tile.alloc`` moves to the top of the function (a buffer is a circular buffer that lives as
long as the program). Also writes ``tt.core_grid`` [x, y] (the device's worker grid the core
ranges lie on) and ``tt.logical_grid`` (the ``T.Kernel`` grid).
Errors: none.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.builder import Builder
from xdsl.rewriter import InsertPoint, Rewriter

from tilefold.ir import tile
from tilefold.passes.tilelang.affine import constant_op
from tilefold.ir.attributes import get_attr, kernel_function, set_attr
from tilefold.passes.tilelang.common import inserter, kernel_op
from tilefold.passes.device_pass import DevicePass
from tilefold.passes.tilelang.rasterization_tt import emit_block_at


def _decompose(tid, sizes: list, body) -> list:
    """tid → one index per size, the last varying fastest (sizes: SSA values or ints)."""
    out = [None] * len(sizes)
    rest = tid
    for k in range(len(sizes) - 1, 0, -1):
        size = sizes[k]
        divisor = size if not isinstance(size, int) else body(constant_op(size)).result
        quotient = body(arith.DivUIOp(rest, divisor)).result
        out[k] = body(arith.RemUIOp(rest, divisor)).result
        rest = quotient
    out[0] = rest
    return out


@dataclass(frozen=True)
class GridToCoreGrid(DevicePass):
    """The block grid → a persistent per-core loop (see the module docstring)."""

    name = "grid-to-core-grid"

    def block_indices(self, grid_op: tile.KernelOp, axes: dict, tid, nt, body, raster: dict | None = None) -> list:
        """Each grid dim's block index for block ``tid``: the other dims outermost, then M, then N
        (``m = tid / Nt``, ``n = tid % Nt`` for a 2-D grid)."""
        grid = grid_op.grid_shape
        if raster and raster["order"] != "row_major" and axes["m"] >= 0 and axes["n"] >= 0:
            # tid counts through the other dims, then through the M x N blocks in the raster order
            others = list(axes.get("others", []))
            plane = raster["rows"] * raster["cols"]
            outer = _decompose(body(arith.DivUIOp(tid, body(constant_op(plane)))).result,
                               [grid[d] for d in others], body) if others else []
            rest = body(arith.RemUIOp(tid, body(constant_op(plane)))).result if others else tid
            m, n = emit_block_at(body, rest, raster["rows"], raster["cols"], raster["order"], raster["k"])
            found = {**dict(zip(others, outer)), axes["m"]: m, axes["n"]: n}
        else:
            order = list(axes.get("others", [])) + [d for d in (axes["m"], axes["n"]) if d >= 0]
            sizes = [nt if d == axes["n"] else grid[d] for d in order]
            found = dict(zip(order, _decompose(tid, sizes, body)))
        zero = body(constant_op(0)).result
        return [found.get(d, zero) for d in range(len(grid))]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        arch = self.arch
        kernel = kernel_function(op)
        grid_op = kernel_op(kernel)
        if grid_op is None:
            return
        mode = get_attr(kernel, "tt.partition_mode")
        axes = get_attr(kernel, "tt.grid_axes")
        for alloc in [o for o in grid_op.walk() if isinstance(o, tile.AllocOp)]:
            alloc.detach()
            Builder(InsertPoint.before(grid_op)).insert(alloc)
        at = inserter(grid_op)

        def arg(name: str):
            value = at(tile.RuntimeArgOp(name)).result
            value.name_hint = name
            return value

        start, count = arg("start_id"), arg("count")
        if mode == "local_shard":
            sm, sn, sy, sx = arg("Sm"), arg("Sn"), arg("sy"), arg("sx")
        else:
            nt = arg("Nt")
        zero = at(constant_op(0)).result
        loop = at(tile.ForOp(zero, count, "persistent"))
        loop.iv.name_hint = "i"
        body = inserter(block=loop.body.block, loc_from=grid_op)
        tid = body(arith.AddiOp(start, loop.iv)).result
        tid.name_hint = "tid"
        if mode == "local_shard":
            m = body(arith.AddiOp(body(arith.MuliOp(sy, sm)), body(arith.DivUIOp(tid, sn)))).result
            n = body(arith.AddiOp(body(arith.MuliOp(sx, sn)), body(arith.RemUIOp(tid, sn)))).result
            values = [m if d == axes["m"] else n if d == axes["n"] else zero
                      for d in range(len(grid_op.body.block.args))]
        else:
            values = self.block_indices(grid_op, axes, tid, nt, body, get_attr(kernel, "tt.raster", None))
            m = values[axes["m"]] if axes["m"] >= 0 else None
            n = values[axes["n"]] if axes["n"] >= 0 else None
        for value, name in ((m, "m"), (n, "n")):
            if value is not None and value is not tid and not value.name_hint:
                value.name_hint = name
        Rewriter.inline_block(grid_op.body.block, InsertPoint.at_end(loop.body.block), values)
        set_attr(kernel, "tt.logical_grid", grid_op.grid_shape)
        set_attr(kernel, "tt.core_grid", list(arch.grid))
        Rewriter.erase_op(grid_op)
