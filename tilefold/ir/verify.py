"""Verification of ttkernel modules, reported as :class:`KernelError` at the user's line.

Reads: a module of ttkernel functions. Writes: nothing; raises :class:`KernelError`.

Runs every op's own verifier (thread kind, CB index range, DST index within capacity —
see :mod:`tilefold.ir.ttkernel`) and then checks the tile-register protocol of each
compute kernel through its structured control flow: DST is acquired with
``tile_regs_acquire``, written by math ops, handed over with ``tile_regs_commit``,
read by ``pack_tile`` only after ``tile_regs_wait``, and given back with
``tile_regs_release``; ``tilize_block`` / ``untilize_block`` manage DST themselves and
must run while it is released. A loop body or ``if`` branch must leave DST in the state
it found it.
"""

from __future__ import annotations

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.utils.exceptions import VerifyException

from tilefold.errors import KernelError
from tilefold.ir.locations import source_location
from tilefold.ir.ttkernel import ApiCallOp, kernel_thread
from tilefold.ir.ttkernel_api import PACK_CALLS

RELEASED, ACQUIRED, COMMITTED, WAITED = "released", "acquired", "committed", "waited"

_TRANSITIONS = {
    "tile_regs_acquire": (RELEASED, ACQUIRED),
    "tile_regs_commit": (ACQUIRED, COMMITTED),
    "tile_regs_wait": (COMMITTED, WAITED),
    "tile_regs_release": (WAITED, RELEASED),
}
_ENTERED_BY = {
    RELEASED: "tile_regs_release (or start the kernel)",
    ACQUIRED: "tile_regs_acquire",
    COMMITTED: "tile_regs_commit",
    WAITED: "tile_regs_wait",
}
_SELF_MANAGED = {"tilize_block", "untilize_block"}

_NEEDS = {
    RELEASED: "outside tile_regs_acquire ... tile_regs_release",
    ACQUIRED: "after tile_regs_acquire and before tile_regs_commit",
    COMMITTED: "after tile_regs_commit and before tile_regs_wait",
    WAITED: "after tile_regs_wait and before tile_regs_release",
}


def _error(op: Operation, message: str) -> KernelError:
    return KernelError(message, source_location(op))


def verify_ops(module: Operation) -> None:
    """Run each op's verifier; the first failure becomes a KernelError at that op's line."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as exc:
            raise _error(op, str(exc)) from None


def _is_math(op: ApiCallOp) -> bool:
    fn = op.api
    return fn.thread == "compute" and fn.name not in PACK_CALLS and any(p.role == "dst" for p in fn.params)


def _walk_block(block: Block, state: str) -> str:
    for op in block.ops:
        state = _step(op, state)
    return state


def _step(op: Operation, state: str) -> str:
    if isinstance(op, ApiCallOp):
        name = op.api.name
        if name in _TRANSITIONS:
            before, after = _TRANSITIONS[name]
            if state != before:
                raise _error(op, f"{name} while DST is {state}; it must follow {_ENTERED_BY[before]}")
            return after
        if name in PACK_CALLS and state != WAITED:
            raise _error(op, f"{name} while DST is {state}; pack only {_NEEDS[WAITED]}")
        if name in _SELF_MANAGED and state != RELEASED:
            raise _error(op, f"{name} manages DST itself; call it {_NEEDS[RELEASED]}")
        if _is_math(op) and state != ACQUIRED:
            raise _error(op, f"{name} writes DST while it is {state}; call it {_NEEDS[ACQUIRED]}")
        return state
    if isinstance(op, scf.ForOp):
        end = _walk_block(op.body.block, state)
        if end != state:
            raise _error(op, f"the loop body leaves DST {end} but entered with it {state}; "
                             "acquire and release DST within one iteration, or outside the loop")
        return state
    if isinstance(op, scf.IfOp):
        then_end = _walk_block(op.true_region.block, state)
        else_end = _walk_block(op.false_region.block, state) if op.false_region.blocks else state
        if then_end != else_end:
            raise _error(op, f"the branches of this if leave DST in different states ({then_end} / {else_end})")
        return then_end
    if isinstance(op, scf.WhileOp):
        mid = _walk_block(op.before_region.block, state)
        end = _walk_block(op.after_region.block, mid)
        if mid != state or end != state:
            raise _error(op, "the while loop changes the DST state between iterations")
        return state
    for region in op.regions:
        for block in region.blocks:
            state = _walk_block(block, state)
    return state


def verify_tile_regs(kernel: func.FuncOp) -> None:
    """Check the DST acquire / commit / wait / release protocol of one compute kernel."""
    if kernel_thread(kernel) != "compute" or not kernel.body.blocks:
        return
    end = _walk_block(kernel.body.block, RELEASED)
    if end != RELEASED:
        raise _error(kernel, f"compute kernel @{kernel.sym_name.data} ends with DST {end}; "
                             "every tile_regs_acquire needs a tile_regs_release")


def verify_kernel_module(module: ModuleOp) -> None:
    """All checks on a module of ttkernel functions."""
    verify_ops(module)
    for op in module.walk():
        if isinstance(op, func.FuncOp):
            verify_tile_regs(op)
