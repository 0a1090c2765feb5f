"""``tilefold compile`` / ``tilefold run`` for a Python file written with ``tilefold.pykernel``.

Reads: a .py file whose ``if __name__ == "__main__":`` part builds a :class:`~tilefold.program.Program`
from its kernels and runs it with ``Device().run(program, inputs)``. Writes: for
:func:`compile_script`, one TT-Metalium project per program the script runs — its kernel sources,
``main.cpp``, ``host_checks.hpp``, ``CMakeLists.txt`` and ``data/`` (the inputs the script passed,
and the simulated outputs as the goldens the host program compares with) — into ``out_dir``, or
``out_dir/<program name>`` when the script runs several. A run the simulator stops (a hazard the
script catches) still gets its project, without goldens. :func:`run_script` runs the file as a
program and returns its exit status.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tilefold.cli.user_code import run_as_main
from tilefold.errors import KernelError, SourceLocation, TilefoldError


@dataclass
class _Recorded:
    program: object
    inputs: dict
    result: object | None = None


@contextmanager
def _recording_runs(trace=None):
    """Within the block, every ``Device.run`` is recorded (program, inputs, result) and, when
    ``trace`` is given and the call gives none, writes a Chrome trace there."""
    from tilefold.sim.device import Device

    original = Device.run
    runs: list[_Recorded] = []

    def run(self, program, inputs=None, **kwargs):
        if trace is not None and kwargs.get("trace") is None:
            kwargs["trace"] = trace
        record = _Recorded(program, dict(inputs or {}))
        runs.append(record)
        record.result = original(self, program, inputs, **kwargs)
        return record.result

    Device.run = run
    try:
        yield runs
    finally:
        Device.run = original


def _check_arch(arch) -> None:
    if arch is not None:
        raise TilefoldError("--arch does not apply to a PyKernel script: it builds its Program for a device "
                            "itself (Program(name, arch=...)) and runs it on Device(arch)")


def _host_data(record: _Recorded):
    """The script's inputs and the simulated outputs, as device pages."""
    from tilefold.codegen.cpp import Golden, HostData
    from tilefold.layout.host import to_device_pages

    program = record.program
    inputs = {}
    for name, array in record.inputs.items():
        buf = program.buffer(name)
        inputs[name] = to_device_pages(array, buf.data_format, buf.layout, buf.tile)
    outputs = {}
    if record.result is not None:
        outputs = {name: Golden(pages.tobytes()) for name, pages in record.result.pages.items()}
    return HostData(inputs, outputs)


def compile_runs(path, out_dir, print_ir_after_all: bool = False, arch=None) -> list[tuple[object, Path, list[Path]]]:
    """Run the script and write a TT-Metalium project for every program it runs: (program,
    project folder, files written) for each run."""
    from tilefold.codegen.cpp import write_project

    path = Path(path)
    if not path.is_file():
        raise KernelError(f"no such file: {path}")
    _check_arch(arch)
    with _recording_runs() as runs:
        status = run_as_main(path)
    if status:
        raise KernelError(f"{path} exited with status {status} before it finished", SourceLocation(str(path), 1))
    if not runs:
        raise KernelError(f"{path} runs no program, so there is nothing to compile; build a Program from its "
                          "kernels and run it in the script's __main__ part with Device().run(program, inputs)",
                          SourceLocation(str(path), 1))
    root = Path(out_dir)
    projects = []
    seen: dict[str, int] = {}
    for record in runs:
        program = record.program
        if print_ir_after_all:
            from tilefold.ir.context import print_ir

            print(print_ir(program.module, debuginfo=True))
        seen[program.name] = seen.get(program.name, 0) + 1
        folder = root if len(runs) == 1 else root / (
            program.name if seen[program.name] == 1 else f"{program.name}_{seen[program.name]}")
        projects.append((program, folder, write_project(program, folder, _host_data(record))))
    return projects


def compile_script(path, out_dir, print_ir_after_all: bool = False, arch=None) -> list[Path]:
    """Run the script and write a TT-Metalium project for every program it runs; the files written."""
    return [p for _, _, paths in compile_runs(path, out_dir, print_ir_after_all, arch) for p in paths]


def run_script(path, arch=None, trace=None) -> int:
    """Run the script as a program on the simulated device; 0 when it finishes, 1 when a check
    in it fails (the failure is printed)."""
    path = Path(path)
    if not path.is_file():
        raise KernelError(f"no such file: {path}")
    _check_arch(arch)
    with _recording_runs(trace):
        return run_as_main(path)
