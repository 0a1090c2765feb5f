"""Run one TileLang pass on MLIR text: the input is the kernel's IR just before the pass."""

from __future__ import annotations

from tilefold.ir.context import make_context, parse_module, print_ir
from tilefold.passes.pipelines import TILELANG, pass_named


def ir_before(prim, pass_name: str, arch: str = "wormhole_b0", debuginfo: bool = False) -> str:
    """The MLIR text of ``prim`` after every pass that comes before ``pass_name`` (with the
    ops' source locations when ``debuginfo``)."""
    module = prim.module()
    ctx = make_context()
    for name in TILELANG:
        if name == pass_name:
            return print_ir(module, debuginfo=debuginfo)
        pass_named(name, arch).apply(ctx, module)
    raise KeyError(pass_name)


def run_pass(text: str, pass_name: str, arch: str = "wormhole_b0") -> str:
    """Parse ``text``, apply ``pass_name``, verify, and print the result."""
    module = parse_module(text)
    pass_named(pass_name, arch).apply(make_context(), module)
    module.verify()
    return print_ir(module)


def through(prim, pass_name: str, arch: str = "wormhole_b0") -> str:
    """The IR text of ``prim`` right after ``pass_name`` (its input went through text)."""
    return run_pass(ir_before(prim, pass_name, arch), pass_name, arch)
