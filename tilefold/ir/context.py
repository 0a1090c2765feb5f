"""The MLIR context of tilefold: every dialect loaded, and text printing / parsing.

Reads: MLIR text. Writes: MLIR text. ``parse_module`` and ``print_ir`` round-trip any
module tilefold builds, with source locations when ``debuginfo`` is set.
"""

from __future__ import annotations

import io
from functools import cache

from xdsl.context import Context
from xdsl.dialects import affine, arith, builtin, func, memref, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, OpTraits
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure

from tilefold.ir.metadata import TT

# xDSL 0.74 gives arith.remui and arith.extsi no effect trait, so its dead-code elimination keeps
# them when unused; MLIR declares both free of memory effects, as every other arith op here is.
for _op in (arith.RemUIOp, arith.ExtSIOp):
    if not _op.has_trait(Pure):
        _op.traits = OpTraits(lambda traits=tuple(_op.traits): (Pure(), *traits))

# Front-end dialects register themselves here when their modules are imported.
_EXTRA_DIALECTS: list = []


def register_dialect(dialect) -> None:
    """Make ``dialect`` known to every context created afterwards."""
    if dialect not in _EXTRA_DIALECTS:
        _EXTRA_DIALECTS.append(dialect)
        make_context.cache_clear()


@cache
def make_context() -> Context:
    from tilefold.ir.ttkernel import TTKernel

    ctx = Context(allow_unregistered=False)
    for dialect in (builtin.Builtin, func.Func, arith.Arith, scf.Scf, memref.MemRef, affine.Affine, TTKernel, TT,
                    *_EXTRA_DIALECTS):
        ctx.load_dialect(dialect)
    return ctx


def parse_module(text: str, name: str = "<ir>") -> ModuleOp:
    """Parse MLIR text (generic or custom form) into a module."""
    return Parser(make_context(), text, name).parse_module()


class _Printer(Printer):
    """xDSL's printer, except that an op printing its own type in a custom format (such as
    ``scf.while``) does not also print its location there: the location is printed once, after
    the op, where the parser expects it."""

    def print_operation_type(self, op: Operation) -> None:
        self.print_function_type(op.operand_types, op.result_types)


def print_ir(op: Operation, debuginfo: bool = False) -> str:
    """MLIR text of ``op``; with ``debuginfo`` every op carries its ``loc(...)``."""
    out = io.StringIO()
    _Printer(stream=out, print_debuginfo=debuginfo).print_op(op)
    return out.getvalue() + "\n"
