"""Tidying device kernels at the end of a pipeline: constants folded, repeats shared, dead values dropped.

Reads / writes: the device kernels of a module (``func.func`` ops with a ``ttkernel.thread``).
Used by the last pass of each front end's pipeline, so that the C++ and the simulated program,
both printed from these kernels, compute each index once and without ``0 * 4`` or ``i + 0``.

Three of xDSL's transformations, in order: canonicalization (integer constants folded, ``x + 0``
and ``x * 1`` replaced by ``x``, ``x * 0`` by ``0``, constants hoisted out of loops, loops of one
trip inlined), common-subexpression elimination (a pure value computed twice is computed once;
one that reads state only when no call in between writes it), and dead-code elimination of values
nothing uses (calls with effects are kept).
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import cse
from xdsl.transforms.dead_code_elimination import region_dce

from tilefold.ir.ttkernel import THREAD_ATTR


def tidy_kernels(ctx: Context, module: ModuleOp) -> None:
    """Canonicalize ``module``, then share repeated values and drop dead ones in each device kernel."""
    CanonicalizePass().apply(ctx, module)
    for kernel in module.ops:
        if isinstance(kernel, func.FuncOp) and THREAD_ATTR in kernel.attributes:
            cse(kernel)
            region_dce(kernel.body)
