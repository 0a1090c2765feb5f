"""Compiling and running one call of a TT-Lang operation, as the session settings ask.

Reads: the front end's ``ttl`` module of a call (:class:`~tilefold.frontend.ttl.operation.BuiltOperation`)
and the session settings (:mod:`tilefold.frontend.ttl.session`). Writes: the written tensors'
values, the run's report, and — when a project folder is set (``tilefold compile``) — a
TT-Metalium project with the IR after every pass. Under ``tilefold compile`` a call whose kernels
reach a C++ function of a user's header (``ttl.call_extern_func``) is written without its
simulated outputs, and the tensors it writes are marked unknown (:func:`write_not_simulated`).

The work itself is :mod:`tilefold.compiler`'s (the ``ttl`` pipeline, the Program, the simulated
run, the project); this module only passes it the session's settings. :mod:`tilefold.ttl`
installs it as the session's runner (:func:`~tilefold.frontend.ttl.session.install_runner`). The
compiler is imported on the first call, so that ``import tilefold.ttl`` does not load it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tilefold.caller import user_location
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
    from tilefold.sim.extern_calls import ExternCallError

    settings = session.settings()
    arch = capture.arch
    tensors = {a.name: a.tensor for a in capture.tensors}
    for name, pieces in capture.device_pieces.items():      # an operation over a device domain: a buffer per piece
        tensors.update({capture.device_buffer(name, device): piece for device, piece in enumerate(pieces)})
    try:
        result, inputs = run_ttl(compiled, tensors, arch, trace=settings.trace)
    except ExternCallError:
        if settings.project_dir is None:
            raise
        write_not_simulated(operation, compiled, tensors)
        return None
    for name, unwritten in result.unwritten.items():      # what ttnn.empty's tensors got
        note_written = getattr(tensors.get(name), "note_written", None)
        if unwritten is not None and note_written is not None:
            note_written(unwritten, compiled.program.buffer(name).num_pages)
    settings.runs.append((operation.name, result))
    if compiled.program.float32_source_reads and result.numerics != "fast":
        settings.tf32_reads.append((operation.name, sorted(compiled.program.float32_source_reads)))
    if settings.report and report:
        cols, rows = capture.grid
        numerics = " with fast numerics (float32 accumulation)" if result.numerics == "fast" else ""
        where = f"a {cols}x{rows} grid of {arch.board}"
        if capture.device_domain is not None:
            where = (f"{capture.device_domain!r} ({arch.num_chips} chips, grid {cols // arch.num_chips}x{rows} on each, "
                     f"{arch.board})")
        elif arch.chip_columns is not None:
            *mesh, x, y = capture.grid_dims
            where = f"a {'x'.join(map(str, mesh))} mesh of chips ({x}x{y} nodes each, {arch.board})"
        print(f"ttl.operation {operation.name} on {where}, simulated{numerics}:")
        print("  " + result.perf.summary().replace("\n", "\n  "))
    if settings.project_dir is not None:
        settings.written.extend(write_ttl_project(compiled, _project_folder(operation), inputs, result.pages))
    return result


def _project_folder(operation) -> Path:
    """The project folder of the latest call of ``operation``: its name, ``name_2`` for the second call ..."""
    settings = session.settings()
    count = sum(1 for name, _ in settings.runs if name == operation.name)
    return Path(settings.project_dir) / (operation.name if count <= 1 else f"{operation.name}_{count}")


def write_not_simulated(operation, compiled, tensors) -> None:
    """A call whose kernels reached a C++ function of a user's header (``ttl.call_extern_func``),
    under ``tilefold compile``: its project is written with the call's inputs and no expected
    outputs (the host program writes them unchecked), the project's note goes to the session's
    ``notes``, and the tensors the call writes are marked as not simulated, so that reading them
    later in the script is an error at that line rather than a use of values nobody computed."""
    from tilefold.codegen.cpp.kernel import extern_headers
    from tilefold.compiler import input_pages, write_ttl_project

    settings = session.settings()
    program = compiled.program
    headers = list(dict.fromkeys(h for k in program.kernels for h in extern_headers(k.function)))
    reason = f"calls C++ from {', '.join(headers)}"
    inputs = input_pages(compiled, tensors)
    settings.runs.append((operation.name, None))
    folder = _project_folder(operation)
    settings.written.extend(write_ttl_project(compiled, folder, inputs, None, not_simulated=reason))
    settings.notes.append(f"{folder}: not simulated: {reason}; the host program writes the outputs without "
                          "checking them")
    call = user_location()
    where = f" at {call}" if call is not None else ""
    for name, buf in program.buffers.items():
        if buf.role in ("output", "inout") and name in tensors:
            tensors[name].mark_not_simulated(
                f"this tensor is written by {operation.name}(){where}, which {reason}: the simulator cannot run "
                f"that, so the tensor's values are not known here (the host program of {folder} writes them on the "
                "device)")


def program_cache_entries() -> int:
    """The compiled calls this process keeps: one per distinct kernel IR, tensor layouts and
    device (a call that repeats one adds none)."""
    from tilefold.compiler import _TTL_CACHE

    return len(_TTL_CACHE)


def clear_program_cache() -> None:
    """Forget the compiled calls: later calls compile again."""
    from tilefold.compiler import _TTL_CACHE

    _TTL_CACHE.clear()


def install() -> None:
    """Make this module the runner of every TT-Lang operation call."""
    session.install_runner(sys.modules[__name__])
