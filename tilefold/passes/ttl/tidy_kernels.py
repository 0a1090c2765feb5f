"""``ttl-tidy-kernels``: the TT-Lang pipeline's last pass — each kernel's index arithmetic folded.

Reads / writes: the ttkernel kernels after ``lower-affine``. The loops that lowering builds index
tiles as ``block offset * tiles + loop index + 0``; this pass folds what is constant, drops what is
added or multiplied by zero or one, computes a repeated index once and removes values nothing uses
(:func:`tilefold.passes.tidy.tidy_kernels`), so the C++ reads ``matmul_block(in0, in1, sb * 4 + k,
k * 4, ...)`` and the simulator evaluates the same few operations.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilefold.passes.tidy import tidy_kernels


class TtlTidyKernels(ModulePass):
    """Constants folded, repeated index values shared and dead ones dropped in every kernel."""

    name = "ttl-tidy-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        tidy_kernels(ctx, op)
