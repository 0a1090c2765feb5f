"""``ttl-trim-inits``: a full engine init that finds the engines already configured by the same
full init becomes its short form, and an operation init that another replaces before any call
uses it is dropped.

Reads / writes: the compute kernels after ``ttl-tidy-kernels``. The lowering starts every compute
with a full init for its CBs (``mm_block_init(in0, in1, out, ...)``, ``init_sfpu(in, out)``), which
also programs the unpacker's, math engine's and packer's data formats and the packer's output —
in a K loop, once per step. TT-Metal's kernels make the full init once and switch operations with
short inits. This pass follows which full init last configured the hardware, through loops and
branches, and where it is the same init with the same CBs and nothing in between changed formats
(only short inits and SFPU inits ran, which set the operation and keep the formats), rewrites it:

- ``mm_block_init(in0, in1, out, t, ct, rt, kt)`` → ``mm_block_init_short(in0, in1, t, ct, rt, kt)``;
- ``mm_init(in0, in1, out, t)`` → ``mm_init_short(in0, in1, t)``;
- ``init_sfpu(in, out)`` and ``unary_op_init_common(in, out)`` → ``copy_tile_init(in)``.

A loop is entered with what is known both before it and at the end of its body (a K loop's second
step finds the first step's init); a branch leaves what both ways agree on. Any other configuring
call (``reconfig_data_format``, ``*_with_dt``, ``reduce_init``, ``tilize_init``, ...) and
``pack_reconfig_l1_acc`` make the configuration unknown, so the next full init stays.

Then, within each block, an init that only selects the FPU operation (``copy_tile_init``,
``mm_block_init_short``, ``add_tiles_init``, ...) is dropped when another such init or a full init
follows before any FPU call — also first thing in a loop that runs at least once (a shortened
K-step init followed by the reload loop's ``copy_tile_init``).
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tilefold.ir.ttkernel import ApiCallOp, CBOp, api_call, constant_int
from tilefold.passes.ttl.common import HAND_OVER_AND_CB_CALLS, kernels, runs_at_least_once

# full init -> (its short form, which of its operands the short form takes)
SHORT_FORMS = {
    "mm_block_init": ("mm_block_init_short", (0, 1, 3, 4, 5, 6)),
    "mm_init": ("mm_init_short", (0, 1, 3)),
    "init_sfpu": ("copy_tile_init", (0,)),
    "unary_op_init_common": ("copy_tile_init", (0,)),
}
# configuring calls that set the operation only (formats and the packer's output unchanged)
_FORMAT_KEEPING_SUFFIXES = ("_tile_init", "_init_short", "_tiles_init")
_FORMAT_CHANGING = frozenset({"copy_tile_to_dst_init_short_with_dt"})
_UNKNOWN = None
# inits that only select the FPU operation: the calls that run it read that selection
FPU_OPERATION_INITS = frozenset({"copy_tile_init", "copy_tile_to_dst_init_short", "mm_init_short",
                                 "mm_block_init_short", "add_tiles_init", "sub_tiles_init", "mul_tiles_init",
                                 "add_bcast_rows_init_short", "add_bcast_cols_init_short",
                                 "add_bcast_scalar_init_short", "sub_bcast_cols_init_short",
                                 "sub_tiles_bcast_scalar_init_short", "mul_bcast_rows_init_short",
                                 "mul_bcast_cols_init_short", "mul_tiles_bcast_scalar_init_short",
                                 "transpose_wh_init_short"})
# calls that neither configure nor use the FPU's operation
_FPU_NEUTRAL = HAND_OVER_AND_CB_CALLS | {"pack_tile"}


class TtlTrimInits(ModulePass):
    """Full inits that find the same full init in effect become short inits; operation inits that
    another replaces before any use are dropped."""

    name = "ttl-trim-inits"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op, "compute"):
            _Walk().block(kernel.body.block, _UNKNOWN)
            for block in list(kernel.walk_blocks()):
                _drop_replaced_operation_inits(block)


def _drop_replaced_operation_inits(block: Block) -> None:
    """Erase each FPU operation init of ``block`` that another operation init or a full init
    follows before any call that uses the FPU (anything else with effects, or a branch, counts as a
    use; so does a loop, unless it runs at least once and its body starts by replacing the init)."""
    unused = None
    for op in list(block.ops):
        step = _fpu_step(op)
        if step == "replaces" and unused is not None:
            unused.detach()
            unused.erase()
        if step != "neutral":
            unused = op if isinstance(op, ApiCallOp) and op.api.name in FPU_OPERATION_INITS else None


def _fpu_step(op) -> str:
    """What ``op`` does to the FPU operation an earlier init selected: ``"replaces"`` it (an
    operation init or a full init, or a loop that runs and whose body begins with one), ``"neutral"``
    (neither uses nor changes it) or ``"uses"`` (or may)."""
    if isinstance(op, ApiCallOp):
        name = op.api.name
        if name in FPU_OPERATION_INITS or name in SHORT_FORMS or name == "compute_kernel_hw_startup":
            return "replaces"
        if name in _FPU_NEUTRAL or op.api.sfpu is not None or op.api.effects == "pure":
            return "neutral"
        return "uses"
    if isinstance(op, scf.ForOp):
        if runs_at_least_once(op):
            for inner in op.body.block.ops:
                step = _fpu_step(inner)
                if step != "neutral":
                    return step
        return "uses"
    if op.regions or not (op.name.startswith("arith.") or isinstance(op, CBOp)):
        return "uses"
    return "neutral"


def _cb_key(value: SSAValue):
    """A CB argument as something equal for equal CBs: its constant index, or its index value."""
    owner = value.owner
    if isinstance(owner, CBOp):
        return _cb_key(owner.index)
    index = constant_int(value)
    return ("index", index) if index is not None else value


class _Walk:
    def __init__(self):
        self.rewrite = True

    def block(self, block: Block, state):
        for op in list(block.ops):
            state = self.op(op, state)
        return state

    def op(self, op, state):
        if isinstance(op, scf.ForOp):
            rewrite, self.rewrite = self.rewrite, False      # find what the body leaves, changing nothing
            end = self.block(op.body.block, state)
            self.rewrite = rewrite
            entry = state if end == state else _UNKNOWN
            end = self.block(op.body.block, entry)
            return state if end == state else _UNKNOWN        # the loop may run no trip
        if isinstance(op, scf.IfOp):
            states = [self.block(region.block, state) for region in op.regions if region.blocks]
            if len(states) < 2:
                states.append(state)                         # no else: the condition may be false
            return states[0] if all(s == states[0] for s in states) else _UNKNOWN
        if op.regions:
            return _UNKNOWN
        if not isinstance(op, ApiCallOp):
            return state
        if op.api.name == "pack_reconfig_l1_acc":
            return _UNKNOWN                                  # a full init may be what turns it off again
        if not op.api.configures:
            return state
        name = op.api.name
        if name in SHORT_FORMS:
            full = (name, tuple(_cb_key(v) for v in op.operands[:2 if name.startswith("mm") else 1]),
                    _cb_key(op.operands[2 if name.startswith("mm") else 1]))
            if full == state and self.rewrite:
                short, keep = SHORT_FORMS[name]
                replacement = api_call(short, [op.operands[i] for i in keep])
                replacement.location = op.location
                Rewriter.replace_op(op, replacement)
            return full
        if name not in _FORMAT_CHANGING and name.endswith(_FORMAT_KEEPING_SUFFIXES) \
                or name in ("copy_dest_values_init",):
            return state
        return _UNKNOWN
