"""PyKernel: TT-Metalium kernels written in Python syntax, parsed into ``ttkernel`` IR.

Reads: Python functions decorated with ``@reader_kernel``, ``@writer_kernel``,
``@compute_kernel`` or ``@kernel(thread=...)``. Writes: one verified ``func.func`` per
kernel (see :mod:`tilefold.frontend.pykernel.builder` for the IR it produces).

A kernel calls the TT-Metalium device API by its C++ names (every row of
:mod:`tilefold.ir.ttkernel_api`, with the same parameter names and defaults; template
parameters as keywords), plus ``get_compile_time_arg_val``, ``TensorAccessorArgs``,
``TensorAccessor``, ``my_x`` / ``my_y``, ``l1_ptr``, ``array`` and the ``uint32`` /
``uint64`` casts. It may use ``for ... in range(...)``, ``while``, ``if / elif / else``,
unsigned integer arithmetic, comparisons, ``and / or / not``, module-level constants,
``CBIndex.c_0`` ... ``c_31`` and ``@inline`` helper functions. Anything else raises a
:class:`~tilefold.errors.KernelError` at the user's line saying what to write instead.

Modules: :mod:`.api` (the names a kernel calls), :mod:`.kernel` (decorators and the kernel
object), :mod:`.source` (reading the function's source), :mod:`.variables` (which names
need storage), :mod:`.values` (what expressions evaluate to), :mod:`.expressions`,
:mod:`.calls` and :mod:`.builder` (AST to IR: expressions, calls, statements),
:mod:`.arguments` (binding call arguments to signatures), :mod:`.unsupported` (messages for
what a kernel cannot use).
"""

from tilefold.frontend.pykernel import api as _api
from tilefold.frontend.pykernel.api import *  # noqa: F401,F403 - every device function by name
from tilefold.frontend.pykernel.api import CBIndex, DeviceFunction, InlineFunction, inline  # noqa: F401
from tilefold.frontend.pykernel.kernel import (  # noqa: F401
    PyKernel,
    compute_kernel,
    kernel,
    reader_kernel,
    writer_kernel,
)

__all__ = [
    *_api.__all__,
    "reader_kernel",
    "writer_kernel",
    "compute_kernel",
    "kernel",
    "PyKernel",
]
