"""Compiling and running one call of a TT-Lang operation, as the session settings ask.

Reads: the front end's ``ttl`` module of a call (:class:`~.operation.BuiltOperation`) and the
session settings. Writes: the written tensors' values, the run's report, and — when a project
folder is set (``tilefold compile``) — a TT-Metalium project with the IR after every pass.

The work itself is :mod:`tilefold.compiler`'s (the ``ttl`` pipeline, the Program, the simulated
run, the project); this module only passes it the session's settings.
"""

from __future__ import annotations

from pathlib import Path

from tilefold.compiler import CompiledOperation, compile_ttl, run_ttl, write_ttl_project
from tilefold.frontend.ttl import session


def compile_built(built, arch, keep_dumps: bool | None = None) -> CompiledOperation:
    """Lower a call's ttl module and build its Program (cached). The IR after each pass is kept
    when ``keep_dumps`` (by default: when the session prints it or writes a project)."""
    settings = session.settings()
    if keep_dumps is None:
        keep_dumps = settings.project_dir is not None
    return compile_ttl(built, arch, keep_dumps, settings.print_ir_after_all)


def run_operation(operation, capture, compiled: CompiledOperation, report: bool = True):
    """Run one call's compiled program; write results into the tensors. Returns the run's result
    (``report=False``: the caller reports it, as a multi-chip call does)."""
    settings = session.settings()
    arch = capture.arch
    tensors = {a.name: a.tensor for a in capture.tensors}
    result, inputs = run_ttl(compiled, tensors, arch, trace=settings.trace)
    settings.runs.append((operation.name, result))
    if settings.report and report:
        cols, rows = capture.grid
        numerics = " with fast numerics (float32 accumulation)" if result.numerics == "fast" else ""
        print(f"ttl.operation {operation.name} on a {cols}x{rows} grid of {arch.board}, simulated{numerics}:")
        print("  " + result.perf.summary().replace("\n", "\n  "))
    if settings.project_dir is not None:
        count = sum(1 for name, _ in settings.runs if name == operation.name)
        folder = Path(settings.project_dir) / (operation.name if count <= 1 else f"{operation.name}_{count}")
        settings.written.extend(write_ttl_project(compiled, folder, inputs, result.pages))
    return result
