"""A complete TT-Metalium project folder for a Program: kernels, host program, CMake, data.

Reads: a :class:`~tilefold.program.Program` (its kernel functions and host description) and
:class:`HostData`. Writes, under ``out_dir``::

    <function>.cpp              one per kernel function (kernels sharing a function share it)
    main.cpp                    the host program (tilefold.codegen.cpp.host)
    host_checks.hpp             its file I/O and output checks (tilefold.codegen.cpp.host_checks)
    CMakeLists.txt              (tilefold.codegen.cpp.cmake)
    data/<buffer>.bin           input bytes, device page format
    data/<buffer>.golden.bin    expected output bytes

Errors: those of :func:`emit_kernel`, :func:`emit_host` and :meth:`HostData.check`; nothing
is written when one is raised.
"""

from __future__ import annotations

from pathlib import Path

from tilefold.codegen.cpp.cmake import emit_cmake
from tilefold.codegen.cpp.host import emit_host, golden_path, input_path, kernel_path
from tilefold.codegen.cpp.host_checks import HOST_CHECKS_HEADER, emit_host_checks
from tilefold.codegen.cpp.host_data import HostData
from tilefold.codegen.cpp.kernel import emit_kernel
from tilefold.errors import CompileError
from tilefold.program import Program


def project_files(program: Program, data: HostData, source_comments: bool = True) -> dict[str, str | bytes]:
    """Every file of the project, by path relative to the project folder."""
    if program.arch.chip_columns is not None:
        raise CompileError(f"program {program.name!r} runs on a {program.arch.board}: tilefold simulates operations "
                           "over several chips but does not write their C++ yet (it would need TT-Fabric transfers "
                           "between the chips); give the operation a grid of one chip, over no more than one device, to get a "
                           "project")
    files: dict[str, str | bytes] = {}
    for kernel in program.kernels:
        path = kernel_path(kernel)
        if path not in files:
            files[path] = emit_kernel(kernel.function, source_comments)
    files["main.cpp"] = emit_host(program, data)
    files[HOST_CHECKS_HEADER] = emit_host_checks()
    files["CMakeLists.txt"] = emit_cmake(program.name)
    for name, raw in data.inputs.items():
        files[input_path(name)] = raw
    for name, golden in data.outputs.items():
        files[golden_path(name)] = golden.data
    return files


def write_project(program: Program, out_dir, data: HostData | None = None,
                  source_comments: bool = True) -> list[Path]:
    """Write the project folder of ``program`` into ``out_dir``; returns the paths written."""
    files = project_files(program, data or HostData(), source_comments)
    root = Path(out_dir)
    written = []
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        written.append(path)
    return written
