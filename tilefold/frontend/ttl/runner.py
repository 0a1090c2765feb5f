"""Compiling and running one call of a TT-Lang operation on the simulated device.

Reads: the front end's ``ttl`` module of a call (:class:`~.operation.BuiltOperation`) and the
session settings. Writes: the written tensors' values, and — when a project folder is set
(``tilefold compile``) — a TT-Metalium project with the IR after every pass.

Compiling runs the ``ttl`` pipeline of :mod:`tilefold.passes.pipelines` and builds the Program
(:mod:`.program_builder`); the result is cached by the IR (with its source locations) and the
tensors' layouts, so calling an operation again with tensors of the same kind costs only the run.
The run uses :class:`tilefold.sim.Device` with the tensors' values as inputs; the simulated
device's results go back into the tensors the kernels write.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from tilefold.frontend.ttl import session
from tilefold.frontend.ttl.program_builder import build_program
from tilefold.ir.context import make_context, print_ir
from tilefold.ir.verify import verify_kernel_module
from tilefold.program import Program


@dataclass
class CompiledOperation:
    module: ModuleOp
    program: Program
    dumps: list[tuple[str, str]]


_CACHE: dict = {}


def compile_built(built, arch, keep_dumps: bool | None = None) -> CompiledOperation:
    """Lower a call's ttl module and build its Program (cached). The IR after each pass is kept
    when ``keep_dumps`` (by default: when the session prints it or writes a project)."""
    from tilefold.passes.pipelines import build_pipeline

    if keep_dumps is None:
        settings = session.settings()
        keep_dumps = settings.print_ir_after_all or settings.project_dir is not None
    key = (print_ir(built.module, debuginfo=True),
           tuple((a.name, tuple(a.tensor.shape), a.tensor.dtype.name, str(a.tensor.layout),
                  str(a.tensor.memory_config())) for a in built.capture.tensors),
           arch.name, arch.board, keep_dumps)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    module = built.module.clone()
    dumps = [("ttl", print_ir(module))] if keep_dumps else []
    ctx = make_context()
    for p in build_pipeline("ttl", arch.name):
        p.apply(ctx, module)
        if keep_dumps:
            dumps.append((p.name, print_ir(module)))
    verify_kernel_module(module)
    program = build_program(module, built, arch)
    compiled = CompiledOperation(module, program, dumps)
    _CACHE[key] = compiled
    return compiled


def run_operation(operation, capture, compiled: CompiledOperation) -> None:
    """Run one call's compiled program; write results into the tensors."""
    from tilefold.sim import Device, DevicePages

    settings = session.settings()
    arch = capture.arch
    if settings.print_ir_after_all:
        for name, text in compiled.dumps:
            print(f"// -----// IR Dump After {name} //----- //\n{text}", file=sys.stderr)
    program = compiled.program
    tensors = {a.name: a.tensor for a in capture.tensors}
    inputs = {name: DevicePages(tensors[name].device_pages(buf)) for name, buf in program.buffers.items()
              if buf.role in ("input", "inout")}
    result = Device(arch).run(program, inputs, trace=settings.trace)
    for name, pages in result.pages.items():
        tensors[name].set_device_pages(pages, program.buffer(name))
    settings.runs.append((operation.name, result))
    if settings.report:
        cols, rows = capture.grid
        print(f"ttl.operation {operation.name} on a {cols}x{rows} grid of {arch.board}, simulated:")
        print("  " + result.perf.summary().replace("\n", "\n  "))
    if settings.project_dir is not None:
        _write_project(operation, compiled, inputs, result.pages, Path(settings.project_dir))


def _write_project(operation, compiled: CompiledOperation, inputs, output_pages, root: Path) -> None:
    """The TT-Metalium project of this call; its data files are the device pages the run used and
    produced (the simulated result is the golden the host program compares with)."""
    from tilefold.codegen.cpp import Golden, HostData, write_project

    program = compiled.program
    count = sum(1 for name, _ in session.settings().runs if name == operation.name)
    folder = root / (operation.name if count <= 1 else f"{operation.name}_{count}")
    data = HostData(inputs={n: p.pages.tobytes() for n, p in inputs.items()},
                    outputs={n: Golden(pages.tobytes()) for n, pages in output_pages.items()})
    written = write_project(program, folder, data)
    ir_dir = folder / "ir"
    ir_dir.mkdir(parents=True, exist_ok=True)
    for i, (name, text) in enumerate(compiled.dumps):
        path = ir_dir / f"{i:02d}-{name}.mlir"
        path.write_text(text)
        written.append(path)
    session.settings().written.extend(written)
