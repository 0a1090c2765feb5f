"""The error hierarchy of tilefold.

Every mistake a user can make raises a subclass of :class:`TilefoldError` whose message
names the user's file and line (when one is known) and says what to change. The command
line prints such errors as one line, without a traceback; anything else is a bug in
tilefold.

Reads: nothing. Writes: nothing. Every other module raises these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class SourceLocation:
    """A place in a user's source file (1-based line, 0 when the column is unknown)."""

    file: str
    line: int
    column: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class TilefoldError(Exception):
    """Base of every error a user of tilefold can cause.

    ``message`` says what is wrong and what to change; ``location`` is the user's
    file:line when known. ``str(err)`` is ``"file:line: message"``.
    """

    def __init__(self, message: str, location: SourceLocation | None = None):
        self.message = message
        self.location = location
        super().__init__(self.__str__())

    def __str__(self) -> str:
        if self.location is not None:
            return f"{self.location}: {self.message}"
        return self.message


def reported_error(exc: BaseException) -> TilefoldError | None:
    """The tilefold error to report for ``exc``: itself, or — for the ``ImportError`` of ``from
    ttl import name`` when tilefold's ``ttl`` / ``ttnn`` refuses the name — that refusal at the
    import's line; None for any other exception."""
    import re
    import sys
    import traceback

    if isinstance(exc, TilefoldError):
        return exc
    if not isinstance(exc, ImportError) or exc.name not in ("tilefold.ttl", "tilefold.ttnn"):
        return None
    found = re.match(r"cannot import name '(\w+)'", str(exc))
    if found is None:
        return None
    try:
        getattr(sys.modules[exc.name], found.group(1))
    except TilefoldError as refusal:
        frames = traceback.extract_tb(exc.__traceback__)
        where = SourceLocation(frames[-1].filename, frames[-1].lineno) if frames else None
        return type(refusal)(refusal.message, where)
    except Exception:      # noqa: BLE001 - not a refusal of tilefold's
        return None
    return None


_WARNED: dict = {}       # the registry of warn_at: a warning shows once per text and place


def warn_at(message: str, location: SourceLocation | None, category: type[Warning] = UserWarning,
            registry: dict | None = None) -> None:
    """A Python warning shown at the user's ``file:line`` (or at the caller when it is unknown),
    once per text and place (of ``registry``, else of the whole process)."""
    import warnings

    if location is None:
        warnings.warn(message, category, stacklevel=3)
    else:
        warnings.warn_explicit(message, category, location.file, location.line,
                               registry=_WARNED if registry is None else registry)


class LeftoverBlocksWarning(UserWarning):
    """Blocks pushed into a buffer and never popped when the program ended: no harm to the device
    (each launch starts its buffers empty), but often a consumer that stopped early, whose output
    then misses what those blocks held."""


# --- layouts, formats, devices -------------------------------------------------------


class LayoutError(TilefoldError, ValueError):
    """A tensor layout, tile shape, data format or sharding that cannot be built."""


class ArchError(TilefoldError, ValueError):
    """An unknown device or a request the device description cannot answer."""


# --- front ends and IR -----------------------------------------------------------------


class KernelError(TilefoldError):
    """Misuse of a kernel language (PyKernel, TT-Lang, TileLang) or an IR verifier failure."""


class KernelArgumentError(KernelError, TypeError):
    """A kernel-language call with arguments Python itself would refuse (an unknown keyword ...)."""


class KernelAttributeError(KernelError, AttributeError):
    """A name a kernel language's module does not have (``T.int4``, ``tilelang.JITKernell``);
    ``hasattr`` and ``getattr(module, name, default)`` still see an AttributeError."""


class KernelImportError(KernelError, ImportError):
    """A module or name a script imports that tilefold does not provide (``from tilelang import tvm``)."""


class KernelValueError(KernelError, ValueError):
    """A kernel-language object made with a value it cannot take (a pipe range with a step ...)."""


class OutsideOperationError(KernelError, RuntimeError):
    """A call that needs a running operation (``ttl.node``, ``ttl.grid_size`` ...) made outside one."""


class CrossDeviceAccessError(KernelError, RuntimeError):
    """A kernel on one chip of a mesh indexes tiles of a mesh tensor held by another chip."""


class NotSimulatedError(KernelError):
    """A read of a tensor whose values an operation's C++ computes (``ttl.call_extern_func``): the
    operation was written into a project without being simulated, so the values are not known."""


class CompileError(TilefoldError):
    """A pass of a lowering pipeline rejected the program (DST overflow, halo, ...)."""


class PlanError(TilefoldError, ValueError):
    """A ``tt.plan.json`` that breaks one of the plan rules."""


# --- host program ------------------------------------------------------------------------


class ProgramError(TilefoldError):
    """A host Program a device would reject (CB clash, missing core range, too many args)."""


# --- simulated device ------------------------------------------------------------------


class SimulationError(TilefoldError, RuntimeError):
    """Base of the hazards the simulated device detects while running a program (a
    ``RuntimeError``, as TT-Lang's simulator raises for a deadlock)."""


def _with_threads(message: str, threads: Iterable[str]) -> str:
    lines = [message] + [f"  {t}" for t in threads]
    return "\n".join(lines)


class DeadlockError(SimulationError):
    """Every thread is blocked; the message lists each thread, its line and what it waits for."""

    def __init__(self, message: str, threads: Iterable[str] = (), location: SourceLocation | None = None):
        self.threads = list(threads)
        super().__init__(_with_threads(message, self.threads), location)


class WatchdogError(SimulationError):
    """A thread ran past the cycle limit (a loop that never ends); lists each running thread's line."""

    def __init__(self, message: str, threads: Iterable[str] = (), location: SourceLocation | None = None):
        self.threads = list(threads)
        super().__init__(_with_threads(message, self.threads), location)


class CircularBufferError(SimulationError):
    """Misuse of the circular-buffer protocol (push without reserve, pop beyond wait, ...)."""


class NocHazardError(SimulationError):
    """Data used before its NOC transfer is guaranteed (missing barrier or flush)."""


class L1OverflowError(SimulationError, ProgramError):
    """Circular buffers and L1 buffers do not fit in a core's L1."""


class DramAccessError(SimulationError):
    """A NOC access outside every allocated DRAM (or L1) buffer."""


class UnwrittenOutputError(SimulationError):
    """Pages of an output buffer that no kernel wrote: the host would read whatever DRAM held."""


class KernelAssertError(SimulationError):
    """A kernel's own ``assert`` on runtime values failed on a core."""


class DstError(SimulationError):
    """DST register misuse: index beyond capacity, use without acquire, pack without wait."""


class RuntimeArgError(SimulationError, ProgramError):
    """A runtime argument index out of range, or more than 341 runtime args on a core (0.69's max_runtime_args)."""


class InitError(SimulationError):
    """A compute call the engines are not configured for: no init, or the last init (or data
    format reconfiguration) was for another operation, SFPU function or CB format."""


class SemaphoreError(SimulationError):
    """A semaphore wait that can never be satisfied, or a semaphore id that does not exist."""


__all__ = [
    "SourceLocation",
    "TilefoldError",
    "LayoutError",
    "ArchError",
    "KernelError",
    "CompileError",
    "PlanError",
    "ProgramError",
    "SimulationError",
    "CrossDeviceAccessError",
    "DeadlockError",
    "WatchdogError",
    "CircularBufferError",
    "InitError",
    "NocHazardError",
    "L1OverflowError",
    "DramAccessError",
    "UnwrittenOutputError",
    "DstError",
    "RuntimeArgError",
    "SemaphoreError",
]
