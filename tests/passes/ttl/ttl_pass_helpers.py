"""Helpers of the TT-Lang pass tests: parse IR text, apply passes by name, FileCheck the result."""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

import pytest
from filecheck.matcher import Matcher
from filecheck.options import Options

import tilefold.ir.ttl  # noqa: F401 - registers the ttl, ttcore and tensor dialects
from tilefold.ir.context import make_context, parse_module, print_ir
from tilefold.passes.pipelines import pass_named

T = "!ttcore.tile<32x32, bf16>"
F = "!ttcore.tile<32x32, f32>"


def cb(shape: str, count: int = 2, tile: str = T) -> str:
    return f"!ttl.cb<[{shape}], {tile}, {count}>"


def run(text: str, *passes: str) -> str:
    """Parse ``text``, apply the passes, return the module's IR."""
    module = parse_module(text)
    ctx = make_context()
    for name in passes:
        pass_named(name).apply(ctx, module)
        module.verify()
    return print_ir(module)


def filecheck(text: str, checks: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        check_file, input_file = Path(tmp, "checks"), Path(tmp, "input")
        check_file.write_text(checks)
        input_file.write_text(text)
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            code = Matcher.from_opts(Options(match_filename=str(check_file), input_file=str(input_file))).run()
    if code != 0:
        pytest.fail(f"FileCheck failed:\n{stderr.getvalue()}\n--- input ---\n{text}")


def compute_kernel(body: str, binds: list[tuple[int, str, int, str]], attrs: str = "", fpu: bool = False) -> str:
    """A compute kernel with ``ttl.bind_cb`` ops (index, shape, block count, tile) and ``body``; its
    binary ops of two buffer tiles stay on the SFPU (the seed's lowering) unless ``fpu``."""
    if not fpu:
        attrs += ", ttl.fpu_binary_ops = false"
    lines = [f'func.func @k() attributes {{ttkernel.thread = "compute", ttl.kernel_role = "compute"{attrs}}} {{']
    for index, shape, count, tile in binds:
        lines.append(f"  %cb{index} = ttl.bind_cb {{cb_index = {index} : i32, block_count = {count} : i32}} : "
                     f"{cb(shape, count, tile)}")
    lines.append(body)
    lines.append("  func.return")
    lines.append("}")
    return "\n".join(lines)
