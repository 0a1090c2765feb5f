"""A complete TT-Metalium project folder for a Program: kernels, host program, CMake, data.

Reads: a :class:`~tilefold.program.Program` (its kernel functions and host description) and
:class:`HostData`. Writes, under ``out_dir``::

    <function>.cpp              one per kernel function (kernels sharing a function share it)
    main.cpp                    the host program (tilefold.codegen.cpp.host)
    host_checks.hpp             its file I/O and output checks (tilefold.codegen.cpp.host_checks)
    CMakeLists.txt              (tilefold.codegen.cpp.cmake)
    <header>                    a user's header a kernel includes by a relative path (ttl.call_extern_func)
    data/<buffer>.bin           input bytes, device page format
    data/<buffer>.golden.bin    expected output bytes (none for a program that was not simulated)

Errors: those of :func:`emit_kernel`, :func:`emit_host` and :meth:`HostData.check`; nothing
is written when one is raised.
"""

from __future__ import annotations

import os
from pathlib import Path

from tilefold.codegen.cpp.cmake import emit_cmake
from tilefold.codegen.cpp.host import emit_host, golden_path, input_path, kernel_path
from tilefold.codegen.cpp.host_checks import HOST_CHECKS_HEADER, emit_host_checks
from tilefold.codegen.cpp.host_data import HostData
from tilefold.codegen.cpp.kernel import emit_kernel
from tilefold.errors import CompileError
from tilefold.ir.locations import source_location
from tilefold.ir.ttkernel import ExternCallOp
from tilefold.program import Program


def project_files(program: Program, data: HostData, source_comments: bool = True) -> dict[str, str | bytes]:
    """Every file of the project, by path relative to the project folder."""
    if program.arch.chip_columns is not None:
        raise CompileError(f"program {program.name!r} runs on a {program.arch.board}: tilefold simulates operations "
                           "over several chips but does not write their C++ yet (it would need TT-Fabric transfers "
                           "between the chips); give the operation a grid of one chip, over no more than one device, to get a "
                           "project")
    _warn_over_semaphore_limit(program)
    files: dict[str, str | bytes] = {}
    for kernel in program.kernels:
        path = kernel_path(kernel)
        if path not in files:
            files[path] = emit_kernel(kernel.function, source_comments)
    files.update(extern_headers(program))
    files["main.cpp"] = emit_host(program, data)
    files[HOST_CHECKS_HEADER] = emit_host_checks()
    files["CMakeLists.txt"] = emit_cmake(program.name)
    for name, raw in data.inputs.items():
        files[input_path(name)] = raw
    for name, golden in data.outputs.items():
        files[golden_path(name)] = golden.data
    return files


# semaphores TT-Metal 0.69 gives a core (``NUM_SEMAPHORES`` of its host API): CreateSemaphore fails past them
NUM_SEMAPHORES = 16


def _warn_over_semaphore_limit(program: Program) -> None:
    """A warning when a core of ``program`` holds more semaphores than TT-Metal gives one: the
    simulator runs such a program, but its ``main.cpp`` would stop at ``CreateSemaphore``."""
    import warnings
    from collections import Counter

    per_core = Counter(core for sem in program.semaphores for core in sem.cores)
    if not per_core:
        return
    core, count = per_core.most_common(1)[0]
    if count > NUM_SEMAPHORES:
        warnings.warn(f"program {program.name!r} creates {count} semaphores on core {core}, but TT-Metal gives a core "
                      f"{NUM_SEMAPHORES} (NUM_SEMAPHORES): its main.cpp would stop at CreateSemaphore on a device; "
                      "the simulator runs it as written", UserWarning, stacklevel=3)


def extern_headers(program: Program) -> dict[str, bytes]:
    """The user's headers the kernels include by a relative path (``ttl.call_extern_func``), copied
    to that path next to the kernel sources, where the kernels' ``#include "..."`` finds them; a
    header given by an absolute path is included from there. A header that is not a file on disk
    is an error at the call's line."""
    files: dict[str, bytes] = {}
    for kernel in program.kernels:
        for op in kernel.function.walk():
            if not isinstance(op, ExternCallOp):
                continue
            header = op.header.data
            found = op.header_path.data if op.header_path is not None else None
            if found is None or not os.path.isfile(found):
                raise CompileError(f"the header {header!r} of {op.callee.data}() (ttl.call_extern_func) is not a file "
                                   "on disk, so the project's kernels could not include it; give the path of an "
                                   "existing header (absolute, or relative to the script's folder)", source_location(op))
            if os.path.isabs(header):
                continue
            relative = os.path.normpath(header)
            if relative.startswith(".."):
                raise CompileError(f"the header {header!r} of {op.callee.data}() (ttl.call_extern_func) is outside the "
                                   "folder its path is relative to, so the project cannot keep it next to the kernels; "
                                   "give its absolute path", source_location(op))
            files[relative] = Path(found).read_bytes()
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
