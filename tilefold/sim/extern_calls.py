"""External C++ calls (``ttl.call_extern_func``) in a simulated kernel: the run stops there.

Reads: a ``ttkernel.extern_call`` op (Python emitter) and the kernel context (at run time).
Writes: nothing. The C++ body of a user's header is opaque to the simulator, so a kernel that
reaches such a call raises one error at its line naming the function and the header, rather than
going on with values the C++ would have computed.
"""

from __future__ import annotations

from tilefold.errors import SimulationError


class ExternCallError(SimulationError):
    """A simulated kernel reached a call of a C++ function from a user's header."""


def python_call(op, printer) -> str:
    """The line of the Python kernel for ``op`` (its result, if any, is named but never set)."""
    call = f"k.extern_call({op.callee.data!r}, {op.header.data!r})"
    return f"{printer.define(op.result)} = {call}" if op.result is not None else call


def extern_call(k, callee: str, header: str):
    """``callee(...)`` of ``header`` reached by kernel context ``k``: an error at the kernel's line."""
    raise k.fail(ExternCallError, f"the simulator cannot run C++ from {header}; {callee}() is a function of that "
                                  "header (ttl.call_extern_func), so this kernel cannot be simulated: set "
                                  "TTLANG_COMPILE_ONLY=1 to build the operation and its C++ without running it")
