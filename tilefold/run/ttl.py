"""Compiling and running one call of a TT-Lang operation, as the session settings ask.

Reads: the front end's ``ttl`` module of a call (:class:`~tilefold.frontend.ttl.operation.BuiltOperation`)
and the session settings (:mod:`tilefold.frontend.ttl.session`). Writes: the written tensors'
values, the run's report, and — when a project folder is set (``tilefold compile``) — a
TT-Metalium project with the IR after every pass.

The work itself is :mod:`tilefold.compiler`'s (the ``ttl`` pipeline, the Program, the simulated
run, the project); this module only passes it the session's settings. :mod:`tilefold.ttl`
installs it as the session's runner (:func:`~tilefold.frontend.ttl.session.install_runner`). The
compiler is imported on the first call, so that ``import tilefold.ttl`` does not load it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tilefold.frontend.ttl import session


def compile_built(built, arch, keep_dumps: bool | None = None):
    """Lower a call's ttl module and build its Program (a ``CompiledOperation``, cached). The IR
    after each pass is kept when ``keep_dumps`` (by default: when the session writes a project)."""
    from tilefold.compiler import compile_ttl

    settings = session.settings()
    if keep_dumps is None:
        keep_dumps = settings.project_dir is not None
    return compile_ttl(built, arch, keep_dumps, settings.print_ir_after_all)


def emit_kernels(compiled) -> dict[str, str]:
    """The C++ source of every kernel of a compiled call, by kernel name (``TTLANG_COMPILE_ONLY``
    builds it without running)."""
    from tilefold.codegen.cpp import emit_kernel

    return {k.name: emit_kernel(k.function) for k in compiled.program.kernels}


def run_operation(operation, capture, compiled, report: bool = True):
    """Run one call's compiled program; write results into the tensors. Returns the run's result
    (``report=False``: the caller reports it, as a multi-chip call does)."""
    from tilefold.compiler import run_ttl, write_ttl_project

    settings = session.settings()
    arch = capture.arch
    tensors = {a.name: a.tensor for a in capture.tensors}
    for name, pieces in capture.device_pieces.items():      # an operation over a device domain: a buffer per piece
        tensors.update({capture.device_buffer(name, device): piece for device, piece in enumerate(pieces)})
    result, inputs = run_ttl(compiled, tensors, arch, trace=settings.trace)
    settings.runs.append((operation.name, result))
    if settings.report and report:
        cols, rows = capture.grid
        numerics = " with fast numerics (float32 accumulation)" if result.numerics == "fast" else ""
        where = f"a {cols}x{rows} grid of {arch.board}"
        if capture.device_domain is not None:
            where = (f"{capture.device_domain!r} ({arch.num_chips} chips, grid {cols // arch.num_chips}x{rows} on each, "
                     f"{arch.board})")
        elif arch.chip_columns is not None:
            r, c, x, y = capture.grid_dims
            where = f"a {r}x{c} mesh of chips ({x}x{y} nodes each, {arch.board})"
        print(f"ttl.operation {operation.name} on {where}, simulated{numerics}:")
        print("  " + result.perf.summary().replace("\n", "\n  "))
    if settings.project_dir is not None:
        count = sum(1 for name, _ in settings.runs if name == operation.name)
        folder = Path(settings.project_dir) / (operation.name if count <= 1 else f"{operation.name}_{count}")
        settings.written.extend(write_ttl_project(compiled, folder, inputs, result.pages))
    return result


def install() -> None:
    """Make this module the runner of every TT-Lang operation call."""
    session.install_runner(sys.modules[__name__])
