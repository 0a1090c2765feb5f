"""Which loops of a compute kernel are *tile nests*.

Reads: an ``scf.for`` and everything nested in it. Writes: nothing. A tile nest only computes
integers (arith, CBs, local variables, nested loops) and issues tile calls on DST that never block:
``copy_tile``, ``unary_bcast``, ``pack_tile``, the FPU element-wise calls (``add_tiles`` and their broadcasts),
``matmul_block`` / ``matmul_tiles``, SFPU unary and binary calls on DST slots and the ``*_init``
calls that configure them; at least one that moves or computes a tile. It may also hand DST between math and pack
(``tile_regs_acquire`` / ``commit`` / ``wait`` / ``release``), so a loop over rounds of DST — a block
of tiles computed and packed a few at a time — is one nest. None of these calls waits on another
thread, so a runner may queue the calls and execute the whole nest as block operations (the Python
emitter does, for :mod:`tilefold.sim.tile_batches`).
"""

from __future__ import annotations

from xdsl.dialects import func, memref, scf
from xdsl.ir import BlockArgument, SSAValue

from tilefold.ir.ttkernel import ApiCallOp, CBOp
from tilefold.ir.sfpu import SFPU_OPS
from tilefold.ir.ttkernel_api import API

# the FPU element-wise calls and their broadcasts (their API rows' init families)
FPU_ELTWISE_CALLS = frozenset(f.name for f in API.values() if f.eltwise is not None)
# cumsum_tile carries its last row to the next call in SFPU registers: not one tile at a time
SFPU_UNARY_CALLS = frozenset(op.call for op in SFPU_OPS if op.arity in ("unary", "scalar") and op.name != "cumsum")
SFPU_BINARY_CALLS = frozenset(op.call for op in SFPU_OPS if op.arity == "binary")
MATMUL_CALLS = frozenset({"matmul_block", "matmul_tiles"})
TILE_CALLS = (frozenset({"copy_tile", "unary_bcast", "pack_tile"}) | FPU_ELTWISE_CALLS | SFPU_UNARY_CALLS | SFPU_BINARY_CALLS
              | MATMUL_CALLS)
# configuration calls a nest may interleave: the inits its tile calls name (API rows' ``init``)
INIT_CALLS = frozenset(API[c].init for c in TILE_CALLS if API[c].init is not None)
# the hand-over of DST between the math and pack engines: clocks only, no other thread
DST_SYNC_CALLS = frozenset({"tile_regs_acquire", "tile_regs_commit", "tile_regs_wait", "tile_regs_release"})
QUEUEABLE_TILE_CALLS = TILE_CALLS | INIT_CALLS | DST_SYNC_CALLS


def is_tile_nest(loop: scf.ForOp) -> bool:
    """Whether ``loop`` is a tile nest (see the module docstring)."""
    tiles = 0
    for inner in loop.body.walk():
        if isinstance(inner, ApiCallOp):
            if inner.api.name not in QUEUEABLE_TILE_CALLS:
                return False
            tiles += inner.api.name in TILE_CALLS
        elif not (inner.name.startswith("arith.") or isinstance(
                inner, (CBOp, scf.ForOp, scf.YieldOp, memref.AllocaOp, memref.LoadOp, memref.StoreOp))):
            return False
    return tiles > 0


def nest_inputs(loop: scf.ForOp) -> list[SSAValue] | None:
    """The values a tile nest reads from outside it, when its calls are the same every time it runs
    with the same such values: the nest yields nothing, uses no local variable of the kernel's
    (a memref from outside it) and each outside value is defined in the kernel's entry block, so
    none changes between runs of an enclosing loop. None otherwise. (Constants are included: a
    runner may skip them, their values being fixed.)"""
    if loop.results:
        return None
    entry = loop
    while entry.parent_op() is not None and not isinstance(entry.parent_op(), func.FuncOp):
        entry = entry.parent_op()
    entry_block = entry.parent_block()
    found: dict[SSAValue, None] = {}
    for op in loop.walk():
        if isinstance(op, (memref.LoadOp, memref.StoreOp)) and not loop.is_ancestor(op.memref.owner):
            return None
        for value in op.operands:
            if loop.is_ancestor(value.owner):
                continue
            block = value.owner if isinstance(value, BlockArgument) else value.owner.parent_block()
            if block is not entry_block:
                return None
            found[value] = None
    return list(found)
