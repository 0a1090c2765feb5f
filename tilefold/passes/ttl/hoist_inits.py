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
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from tilefold.ir.ttkernel import ApiCallOp, constant_int
from tilefold.passes.ttl.common import kernels

# calls that may come before the init in a loop body: they neither configure nor use the engines
_NEUTRAL = frozenset({"tile_regs_acquire", "tile_regs_commit", "tile_regs_wait", "tile_regs_release",
                      "cb_wait_front", "cb_reserve_back", "cb_push_back", "cb_pop_front"})


class TtlHoistInits(ModulePass):
    """Engine inits that a loop repeats on every trip, moved before the loop."""

    name = "ttl-hoist-inits"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op, "compute"):
            for loop in _loops_innermost_first(kernel):
                _hoist_from(loop)


def _loops_innermost_first(root: Operation) -> list[scf.ForOp]:
    loops: list[scf.ForOp] = []

    def visit(op: Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    visit(inner)
        if isinstance(op, scf.ForOp):
            loops.append(op)

    visit(root)
    return loops


def _runs_at_least_once(loop: scf.ForOp) -> bool:
    lb, ub = constant_int(loop.lb), constant_int(loop.ub)
    return lb is not None and ub is not None and ub > lb


def _hoist_from(loop: scf.ForOp) -> None:
    if not _runs_at_least_once(loop):
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
        if isinstance(op, ApiCallOp) and op.api.effects != "pure" and op.api.name not in _NEUTRAL:
            return                                # a call the engines' configuration may affect
        if op.regions:
            return
    if any(_inside(operand.owner, loop) for operand in init.operands):
        return
    init.detach()
    loop.parent_block().insert_op_before(init, loop)


def _inside(owner, loop: scf.ForOp) -> bool:
    """Whether a value's owner (an op or a block) lies within ``loop``."""
    op = owner.parent_op() if not isinstance(owner, Operation) else owner
    while op is not None:
        if op is loop:
            return True
        op = op.parent_op()
    return False
