"""rasterization_tt (Stage B1½): the order in which the block grid is walked.

Reads: ``tt.schedule`` (``order`` from ``annotate_tt_schedule``: ``row_major``, ``column_major``,
``block_linear(k)``, ``z_order``, ``hilbert``), ``tt.use_swizzle`` (``T.use_swizzle(panel_size)``:
``block_linear(panel_size)`` unless the schedule names an order), ``tt.partition_mode``,
``tt.grid_tiles``. Writes: ``tt.schedule`` with the order chosen, and ``tt.raster`` =
``{"order", "k", "rows", "cols"}`` (the order's name, its panel height, the grid of M × N blocks).

Blocks stay split into contiguous runs of visit positions over the cores
(``layout_aware_work_partition``); ``grid_to_core_grid`` turns a core's position ``t`` into its
block ``(m, n)`` with :func:`emit_block_at` — the integer arithmetic of
:func:`tilefold.layout.block_orders.block_at` — and the plan's ``work_partition`` lists
the blocks in the same order.

Errors: an unknown order, an order the grid's shape does not allow (z_order: sides powers of
two; hilbert: a square power of two), or a non-row-major order for a kernel whose cores own L1
shards (their blocks are the shard's).
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilefold.errors import CompileError
from tilefold.passes.tilelang.affine import constant_op
from tilefold.ir.attributes import get_attr, kernel_function, location_of, set_attr
from tilefold.layout.block_orders import check_order, parse_order


class RasterizationTT(ModulePass):
    """Choose the order in which the block grid is walked (see the module docstring)."""

    name = "rasterization-tt"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = kernel_function(op)
        if "tt.grid_tiles" not in kernel.attributes:
            return
        schedule = dict(get_attr(kernel, "tt.schedule", {}) or {})
        user = get_attr(kernel, "tt.user_schedule", {}) or {}
        swizzle = get_attr(kernel, "tt.use_swizzle", None)
        spec = schedule.get("order", "row_major")
        where = location_of(user)
        if "order" not in user and swizzle and swizzle.get("enable", True) and swizzle.get("order", "row") == "row" \
                and int(swizzle.get("panel_size", 0)) > 0:
            spec = f"block_linear({int(swizzle['panel_size'])})"
            where = None
        if spec == "match_shard":
            return
        try:
            order, k = parse_order(spec)
        except ValueError as exc:
            raise CompileError(f"annotate_tt_schedule: {exc}", where) from None
        rows, cols = get_attr(kernel, "tt.grid_tiles")
        if order != "row_major" and get_attr(kernel, "tt.partition_mode") == "local_shard":
            raise CompileError(f"rasterization {spec}: the output is sharded in L1, so each core walks its own "
                               "shard's blocks; use row_major or interleave the output", where)
        problem = check_order(order, rows, cols)
        if problem:
            raise CompileError(f"rasterization {spec}: {problem}", where)
        name = f"block_linear({k})" if order == "block_linear" else order
        set_attr(kernel, "tt.schedule", {**schedule, "order": name})
        set_attr(kernel, "tt.raster", {"order": order, "k": k, "rows": rows, "cols": cols})


def _log2(v: int) -> int:
    return v.bit_length() - 1


def emit_block_at(body, t, rows: int, cols: int, order: str, k: int):
    """``(m, n)`` SSA values of block position ``t`` in ``order`` (``body`` inserts an op and
    returns it); the arithmetic of :func:`~tilefold.layout.block_orders.block_at`."""

    def c(v: int):
        return body(constant_op(v)).result

    def op(cls, a, b):
        return body(cls(a, b)).result

    if order == "column_major":
        return op(arith.RemUIOp, t, c(rows)), op(arith.DivUIOp, t, c(rows))
    if order == "block_linear":
        panel = op(arith.DivUIOp, t, c(k * cols))
        r = op(arith.SubiOp, t, op(arith.MuliOp, panel, c(k * cols)))
        # the last panel holds rows % k rows when k does not divide rows
        left = op(arith.SubiOp, c(rows), op(arith.MuliOp, panel, c(k)))
        height = op(arith.MinUIOp, left, c(k))
        m = op(arith.AddiOp, op(arith.MuliOp, panel, c(k)), op(arith.RemUIOp, r, height))
        return m, op(arith.DivUIOp, r, height)
    if order == "z_order":
        bm, bn = _log2(rows), _log2(cols)
        shared = min(bm, bn)
        m, n = c(0), c(0)
        for b in range(shared):
            n = op(arith.OrIOp, n, op(arith.ShLIOp, op(arith.AndIOp, op(arith.ShRUIOp, t, c(2 * b)), c(1)), c(b)))
            m = op(arith.OrIOp, m, op(arith.ShLIOp, op(arith.AndIOp, op(arith.ShRUIOp, t, c(2 * b + 1)), c(1)),
                                      c(b)))
        rest = op(arith.ShLIOp, op(arith.ShRUIOp, t, c(2 * shared)), c(shared))
        return (op(arith.OrIOp, m, rest), n) if bm > bn else (m, op(arith.OrIOp, n, rest))
    if order == "hilbert":
        x, y, rest = c(0), c(0), t
        s = 1
        while s < rows:
            rx = op(arith.AndIOp, op(arith.ShRUIOp, rest, c(1)), c(1))
            ry = op(arith.AndIOp, op(arith.XOrIOp, rest, rx), c(1))
            flip = body(arith.CmpiOp(op(arith.AndIOp, rx, op(arith.XOrIOp, ry, c(1))), c(1), "eq")).result
            fx = body(arith.SelectOp(flip, op(arith.SubiOp, c(s - 1), x), x)).result
            fy = body(arith.SelectOp(flip, op(arith.SubiOp, c(s - 1), y), y)).result
            turn = body(arith.CmpiOp(ry, c(0), "eq")).result
            x2 = body(arith.SelectOp(turn, fy, fx)).result
            y2 = body(arith.SelectOp(turn, fx, fy)).result
            x = op(arith.AddiOp, x2, op(arith.MuliOp, rx, c(s)))
            y = op(arith.AddiOp, y2, op(arith.MuliOp, ry, c(s)))
            rest = op(arith.ShRUIOp, rest, c(2))
            s *= 2
        return y, x
    return op(arith.DivUIOp, t, c(cols)), op(arith.RemUIOp, t, c(cols))


__all__ = ["RasterizationTT", "emit_block_at"]
