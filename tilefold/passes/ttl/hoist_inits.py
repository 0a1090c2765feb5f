"""``ttl-hoist-inits``: an engine init that a loop repeats on every trip runs once, before the loop.

Reads / writes: the compute kernels after ``ttl-tidy-kernels`` (whose canonicalization has moved
the constants an init takes out of the loops). The lowering puts the init a tile call
needs right before it (``copy_tile_init(cb)`` before each ``copy_tile`` of a reload loop,
``mm_block_init_short`` before each K step's ``matmul_block``), as TT-Lang does. When such a loop
configures nothing else, every trip after the first finds the engines already set up, so the init
moves before the loop, where TT-Metal's own kernels call it: the C++ reads as they do, and the
device (and the simulator, which runs the same kernels) makes one init call instead of one per trip.

An init ``X`` directly in the body of an ``scf.for`` moves when
- the loop runs at least once (constant bounds): a loop that never runs must not configure anything;
- ``X`` is the only call of the body, nested loops included, that configures the engines
  (the API row's ``configures``), so every trip finds what ``X`` set;
- no compute call that the engines' configuration affects comes before ``X`` in the body (only DST
  hand-overs, circular-buffer calls and pure calls may), so the first trip is unchanged too;
- its operands are defined outside the loop (after tidying, a constant is).

Loops are visited innermost first, so an init can move out of several loops.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilefold.ir.ttkernel import ApiCallOp
from tilefold.passes.ttl.common import HAND_OVER_AND_CB_CALLS, kernels, runs_at_least_once


class TtlHoistInits(ModulePass):
    """Engine inits that a loop repeats on every trip, moved before the loop."""

    name = "ttl-hoist-inits"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op, "compute"):
            loops = [o for o in kernel.walk(region_first=True) if isinstance(o, scf.ForOp)]    # innermost first
            for loop in loops:
                _hoist_from(loop)


def _hoist_from(loop: scf.ForOp) -> None:
    if not runs_at_least_once(loop):
        return
    configuring = [op for op in loop.body.walk() if isinstance(op, ApiCallOp) and op.api.configures]
    if len(configuring) != 1:
        return
    init = configuring[0]
    if init.parent_block() is not loop.body.block:
        return
    for op in loop.body.block.ops:
        if op is init:
            break
        if isinstance(op, ApiCallOp) and op.api.effects != "pure" and op.api.name not in HAND_OVER_AND_CB_CALLS:
            return                                # a call the engines' configuration may affect (only DST
                                                  # hand-overs and CB calls may come before the init)
        if op.regions:
            return
    if any(loop.is_ancestor(operand.owner) for operand in init.operands):     # made in the loop
        return
    init.detach()
    loop.parent_block().insert_op_before(init, loop)

