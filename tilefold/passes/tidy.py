"""Tidying device kernels at the end of a pipeline: constants folded, repeats shared, dead values dropped.

Reads / writes: the device kernels of a module (``func.func`` ops with a ``ttkernel.thread``).
Used by the last pass of each front end's pipeline, so that the C++ and the simulated program,
both printed from these kernels, compute each index once and without ``0 * 4`` or ``i + 0``.

In order: every constant moves to the top of its kernel, unnamed (where each is defined once);
integer ``addi`` / ``subi`` / ``muli`` with two constant operands become a constant, ``x + 0``,
``x - 0`` and ``x * 1`` become ``x``, ``x * 0`` becomes ``0``, and a constant operand of ``addi``
/ ``muli`` goes last; then xDSL's common-subexpression elimination (a pure value computed twice
is computed once; one that reads state only when no call in between writes it) and dead-code
elimination of values nothing uses (calls with effects are kept); last, a NOC barrier right after
the same barrier (nothing but integer arithmetic between them: no transfer to wait for) is
dropped, as two ``tx.wait()`` in a row give. The folding is one walk in
program order rather than xDSL's general canonicalization, whose worklist and effect queries cost
twice a whole TT-Lang compile for this much arithmetic.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.transforms.common_subexpression_elimination import cse
from xdsl.transforms.dead_code_elimination import region_dce

from tilefold.ir.ttkernel import THREAD_ATTR, ApiCallOp, constant_int

_FOLDS = {arith.AddiOp: lambda a, b: a + b, arith.SubiOp: lambda a, b: a - b, arith.MuliOp: lambda a, b: a * b}


def tidy_kernels(ctx: Context, module: ModuleOp) -> None:
    """Fold each device kernel's integer arithmetic, then share repeated values and drop dead ones."""
    for kernel in module.ops:
        if isinstance(kernel, func.FuncOp) and THREAD_ATTR in kernel.attributes:
            fold_integer_arithmetic(kernel)
            cse(kernel)
            region_dce(kernel.body)
            drop_repeated_barriers(kernel)


def fold_integer_arithmetic(kernel: func.FuncOp) -> None:
    """Constants to the top of ``kernel``; constant and identity ``addi`` / ``subi`` / ``muli`` folded."""
    entry = kernel.body.block
    top = entry.first_op
    for op in list(kernel.walk()):
        if isinstance(op, arith.ConstantOp):
            op.result.name_hint = None             # shared by every use: no one use's name
            if op.parent_block() is not entry:
                op.detach()
                entry.insert_op_before(op, top)
    for op in list(kernel.walk()):
        fold = _FOLDS.get(type(op))
        if fold is None:
            continue
        a, b = constant_int(op.lhs), constant_int(op.rhs)
        if a is not None and b is not None:
            width = getattr(op.result.type, "bitwidth", 64)          # index: 64 bits
            value = fold(a, b)
            if not -(1 << (width - 1)) <= value < (1 << (width - 1)):
                continue                               # keep arithmetic that wraps as it is
            folded = arith.ConstantOp(IntegerAttr(value, op.result.type))
            entry.insert_op_before(folded, top)
            replacement = folded.result
        elif b == 0 and not isinstance(op, arith.MuliOp) or b == 1 and isinstance(op, arith.MuliOp):
            replacement = op.lhs                       # x + 0, x - 0, x * 1
        elif a == 0 and isinstance(op, arith.AddiOp) or a == 1 and isinstance(op, arith.MuliOp):
            replacement = op.rhs                       # 0 + x, 1 * x
        elif isinstance(op, arith.MuliOp) and 0 in (a, b):
            replacement = op.lhs if a == 0 else op.rhs  # x * 0, 0 * x: the zero
        else:
            if a is not None and not isinstance(op, arith.SubiOp):
                op.operands = (op.rhs, op.lhs)         # a constant term or factor goes last: n * 4 + 48
            continue
        op.result.replace_all_uses_with(replacement)
        op.detach()
        op.erase()


_BARRIERS = frozenset({"noc_async_read_barrier", "noc_async_write_barrier", "noc_async_writes_flushed"})


def drop_repeated_barriers(kernel: func.FuncOp) -> None:
    """Erase a NOC barrier that follows the same barrier with only pure operations in between."""
    for op in list(kernel.walk()):
        if not isinstance(op, ApiCallOp) or op.api.name not in _BARRIERS:
            continue
        previous = op.prev_op
        while previous is not None and not previous.regions and (
                previous.name.startswith("arith.") or isinstance(previous, ApiCallOp) and previous.api.effects == "pure"):
            previous = previous.prev_op
        if isinstance(previous, ApiCallOp) and previous.api.name == op.api.name:
            op.detach()
            op.erase()
