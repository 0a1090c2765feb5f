"""apply_tt_defaults: the default Tenstorrent schedule and shard metadata (TileLang-TT architecture, Phase 2).

Reads: ``tt.user_schedule`` (from ``annotate_tt_schedule``), if any.
Writes: ``tt.schedule`` = ``{"policy": "contiguous", "order": "row_major"}`` with the user's
fields applied, and ``tt.shard`` = ``{"layout": "tiled", "interleaved": true,
"tile_shape": [32, 32]}`` unless already present.
Errors: an unknown policy or order (:class:`CompileError` at the annotation's line; the front
end has refused unknown fields).
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilefold.errors import CompileError
from tilefold.ir.attributes import get_attr, kernel_function, location_of, set_attr
from tilefold.layout.block_orders import parse_order

POLICIES = ("contiguous",)
ORDERS = ("row_major", "match_shard")
DEFAULT_SCHEDULE = {"policy": "contiguous", "order": "row_major"}
DEFAULT_SHARD = {"layout": "tiled", "interleaved": True, "tile_shape": [32, 32]}


class ApplyTTDefaults(ModulePass):
    """Default ``tt.schedule`` / ``tt.shard`` (see the module docstring)."""

    name = "apply-tt-defaults"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = kernel_function(op)
        user = get_attr(kernel, "tt.user_schedule", {})
        where = location_of(user)
        schedule = dict(DEFAULT_SCHEDULE)
        schedule.update((key, value) for key, value in user.items() if key != "loc")
        if schedule["policy"] not in POLICIES:
            raise CompileError(f"annotate_tt_schedule: policy {schedule['policy']!r} is not one of "
                               f"{', '.join(POLICIES)}", where)
        if schedule["order"] not in ORDERS:
            try:
                parse_order(schedule["order"])
            except ValueError:
                raise CompileError(f"annotate_tt_schedule: order {schedule['order']!r} is not one of "
                                   f"{', '.join(ORDERS)}, column_major, block_linear(k), z_order, hilbert",
                                   where) from None
        set_attr(kernel, "tt.schedule", get_attr(kernel, "tt.schedule", {}) or schedule)
        if "tt.shard" not in kernel.attributes:
            set_attr(kernel, "tt.shard", DEFAULT_SHARD)
