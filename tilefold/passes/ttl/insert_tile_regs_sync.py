"""``ttl-insert-tile-regs-sync``: bracket every compute and its pack with the DST register protocol.

Reads: ``ttl.compute`` ops with DST slots assigned, each followed (somewhere in its block) by the
``ttl.store`` of its result. Writes, around each compute::

    ttl.init_sfpu(%in_cb, %out_cb)      (before the sub-block loops, when there are any)
    ttl.tile_regs_acquire               math takes DST
    %r = ttl.compute ...                compute every output tile of the (sub-)block
    ttl.tile_regs_commit                math hands DST to the packer
    ttl.tile_regs_wait                  the packer waits for it
    ttl.store %r, %block                pack (moved right after the wait)
    ttl.tile_regs_release               the packer gives DST back

so a multi-tile block is computed in one loop and packed in a second one, both inside one
acquire / release, as the TT-Lang multi-tile lowering shows. A store marked ``ttl.l1_acc`` (a
loop accumulator's step, which adds its value to the block already in L1) is packed between
``ttl.pack_l1_acc {enable = 1}`` and ``ttl.pack_l1_acc {enable = 0}``, so that the packer adds
and every other pack overwrites.

Each compute is rewritten by a ``RewritePattern`` (:class:`BracketCompute`) under xDSL's pattern
walker. Errors: none (a compute whose result is not stored is an internal error).
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from tilefold.ir import ttl
from tilefold.passes.builder import rewrite_once
from tilefold.passes.ttl.common import bind_of, kernels


def _outermost_subblock_loop(op):
    outer = None
    parent = op.parent_op()
    while parent is not None:
        if ttl.SUBBLOCK_LOOP_ATTR in parent.attributes:
            outer = parent
        parent = parent.parent_op()
    return outer


class BracketCompute(RewritePattern):
    """One ``ttl.compute`` → init, acquire, the compute, commit, wait, its store, release."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, compute: ttl.ComputeOp, rewriter: PatternRewriter) -> None:
        store = next(u.operation for u in compute.result[0].uses if isinstance(u.operation, ttl.StoreOp))
        in_cb = bind_of(compute.inputs[0]) if compute.inputs else bind_of(compute.outputs[0])
        out_cb = bind_of(compute.outputs[0])
        sync = [ttl.InitSFPUOp(in_cb.result, out_cb.result), ttl.TileRegsAcquireOp(), ttl.TileRegsCommitOp(),
                ttl.TileRegsWaitOp()]
        for op in sync:
            op.location = compute.location
        init, acquire, commit, wait = sync
        rewriter.insert(init, InsertPoint.before(_outermost_subblock_loop(compute) or compute))
        rewriter.insert(acquire, InsertPoint.before(compute))
        rewriter.insert([commit, wait], InsertPoint.after(compute))
        store.detach()
        rewriter.insert(store, InsertPoint.after(wait))
        release = ttl.TileRegsReleaseOp()
        release.location = store.location
        rewriter.insert(release, InsertPoint.after(store))
        if ttl.L1_ACC_ATTR in store.attributes:
            on, off = ttl.PackL1AccOp(True), ttl.PackL1AccOp(False)
            on.location = off.location = store.location
            rewriter.insert(on, InsertPoint.before(store))
            rewriter.insert(off, InsertPoint.before(release))


class TTLInsertTileRegsSync(ModulePass):
    """Insert init / acquire / commit / wait / release around computes (see the module docstring)."""

    name = "ttl-insert-tile-regs-sync"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op, "compute"):
            rewrite_once(kernel.body, BracketCompute())
