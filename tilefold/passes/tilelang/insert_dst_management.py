"""insert_dst_management (Stage D5): the tile-register protocol around each DST section.

Reads: ``tile.dst_section`` ops of the ``@compute`` kernel (math region, pack region, mode).
Writes the TT-Metalium 0.69 protocol in place of each section:

- ``section`` (element-wise: one section per tile; a gemm sub-block per K step group)::

      tile_regs_acquire(); <math>; tile_regs_commit();
      <cb_reserve_back of the pack region>; tile_regs_wait(); <packs>; tile_regs_release();
      <cb_push_back of the pack region>

- ``open`` / ``continue`` / ``close`` (a K loop accumulating in DST, the TileLang-TT architecture's pattern:
  acquire before the loop, math in it, commit / wait / pack / release after it).

Errors: none (the protocol is then checked by :mod:`tilefold.ir.verify`).
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.builder import Builder
from xdsl.rewriter import InsertPoint, Rewriter

from tilefold.ir import tile
from tilefold.ir.ttkernel import ApiCallOp, api_call
from tilefold.ir.ttkernel_api import PACK_CALLS


def _is_call(op: Operation, names) -> bool:
    return isinstance(op, ApiCallOp) and op.api.name in names


class InsertDstManagement(ModulePass):
    """tile_regs_acquire / commit / wait / release (see the module docstring)."""

    name = "insert-dst-management"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [f for f in op.ops if isinstance(f, func.FuncOp)]:
            for section in [o for o in kernel.walk() if isinstance(o, tile.DstSectionOp)]:
                self._lower(section)

    def _lower(self, section: tile.DstSectionOp) -> None:
        mode = section.mode.data
        point = InsertPoint.before(section)

        def call(name: str) -> None:
            new = api_call(name, [])
            Builder(point).insert(new)
            new.location = section.location

        def inline(ops: list[Operation]) -> None:
            for o in ops:
                o.detach()
                Builder(point).insert(o)

        pack = list(section.pack.block.ops)
        packs = [i for i, o in enumerate(pack) if _is_call(o, PACK_CALLS)]
        first, last = (packs[0], packs[-1]) if packs else (len(pack), len(pack) - 1)
        reserves_end = max((i + 1 for i, o in enumerate(pack[:first]) if _is_call(o, ("cb_reserve_back",))), default=0)
        reserves, middle, pushes = pack[:reserves_end], pack[reserves_end:last + 1], pack[last + 1:]
        if mode in ("section", "open"):
            call("tile_regs_acquire")
        inline(list(section.math.block.ops))
        if mode in ("section", "close"):
            call("tile_regs_commit")
            inline(reserves)
            call("tile_regs_wait")
            inline(middle)
            call("tile_regs_release")
            inline(pushes)
        Rewriter.erase_op(section)
