"""The C++ emitter: ttkernel functions → TT-Metalium 0.69 kernels; a Program → a buildable project.

Reads: ttkernel IR (``func.func`` kernels) and :class:`~tilefold.program.Program`. Writes: C++
text and project folders. The emitter prints what the IR and the Program say; every decision
is made by the passes before it.

- :func:`emit_kernel` — one kernel source (``kernel.py``, body in ``statements.py``)
- :func:`emit_host` — ``main.cpp`` for the mesh dispatch API (``host.py``), with
  :func:`emit_host_checks` — its ``host_checks.hpp`` (``host_checks.py``) and
  :class:`HostData` — the input and golden bytes it runs with (``host_data.py``)
- :func:`emit_cmake` — ``CMakeLists.txt`` (``cmake.py``)
- :func:`write_project` — kernels, host, CMake and data files in one folder (``project.py``)
"""

from tilefold.codegen.cpp.cmake import emit_cmake
from tilefold.codegen.cpp.host import emit_host
from tilefold.codegen.cpp.host_checks import emit_host_checks
from tilefold.codegen.cpp.host_data import Golden, HostData
from tilefold.codegen.cpp.kernel import emit_kernel, kernel_headers
from tilefold.codegen.cpp.project import project_files, write_project

__all__ = ["emit_kernel", "kernel_headers", "emit_host", "emit_host_checks", "emit_cmake", "write_project", "project_files",
           "HostData", "Golden"]
