"""How TT-Lang operations run in this process: the device, whether to write C++ projects, and who runs them.

Reads: nothing. Writes: nothing. :data:`SETTINGS` is read by every operation call:
``arch`` (the simulated device), ``project_dir`` (set by ``tilefold compile``: each call also
writes a TT-Metalium project there; ``written`` lists its files, ``notes`` the projects of calls
that were not simulated), ``print_ir_after_all``, ``trace`` (a Chrome trace of the last
run), ``report`` (print a summary of each run) and the steps of multi-chip runs (``mesh_steps``).
:func:`configured` sets them for a ``with`` block.

The front end only builds a call's ``ttl`` IR; compiling and running it is the job of a
:class:`Runner` that :mod:`tilefold.ttl` installs (:func:`install_runner`; it is
:mod:`tilefold.run.ttl`), so that no front-end module imports the compiler or the simulator.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from tilefold.errors import KernelError, warn_at


@dataclass
class Settings:
    arch: str | None = None
    project_dir: Path | None = None
    print_ir_after_all: bool = False
    trace: Path | None = None
    report: bool = False
    written: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)      # one line per project of a call that was not simulated
    runs: list = field(default_factory=list)
    not_run: int = 0            # operation calls that ran nothing: no kernel function, or TTLANG_COMPILE_ONLY
    mesh_steps: list = field(default_factory=list)     # mesh.MeshStep of multi-chip runs
    tf32_reads: list = field(default_factory=list)     # (operation, calls) of runs that read float32 as TF32


SETTINGS = Settings()


def tf32_note(reads: list | None = None) -> str | None:
    """After a failed assert: which operations read float32 operands through the source registers
    (``settings().tf32_reads``, or ``reads``), and what computes them whole; None if none did."""
    reads = SETTINGS.tf32_reads if reads is None else reads
    if not reads:
        return None
    names = sorted({name for name, _ in reads})
    calls = sorted({call for _, cs in reads for call in cs})
    return (f"note: {', '.join(names)} read float32 operands as the device's source registers hold them, cut to "
            f"TF32 (10 mantissa bits) by {', '.join(calls)}; a check expecting exact float32 fails by about 2^-11 "
            "relative there. --numerics fast (TILEFOLD_NUMERICS=fast) computes them whole, as TT-Lang's simulator does")


@contextmanager
def configured(**changes):
    """Use ``SETTINGS`` with ``changes`` inside the ``with`` block."""
    global SETTINGS
    saved = SETTINGS
    SETTINGS = replace(saved, written=[], notes=[], runs=[], mesh_steps=[], tf32_reads=[], not_run=0, **changes)
    try:
        yield SETTINGS
    finally:
        SETTINGS = saved


def settings() -> Settings:
    return SETTINGS


class Runner(Protocol):
    """Compiles and runs one call of an operation (:mod:`tilefold.run.ttl`)."""

    def compile_built(self, built, arch):
        """Lower a call's ttl module (a ``BuiltOperation``) and build its program."""

    def run_operation(self, operation, capture, compiled, report: bool = True):
        """Run a compiled call on the simulated device; write the results into the tensors."""

    def emit_kernels(self, compiled):
        """The C++ of a compiled call's kernels (``TTLANG_COMPILE_ONLY``: built, not run)."""

    def program_cache_entries(self) -> int:
        """How many compiled calls are kept (``device.num_program_cache_entries()``)."""

    def clear_program_cache(self) -> None:
        """Forget the compiled calls (``device.disable_and_clear_program_cache()``)."""


_RUNNER: Runner | None = None


def install_runner(runner: Runner) -> None:
    """Make ``runner`` compile and run every operation call of this process."""
    global _RUNNER
    _RUNNER = runner


_TILE_TENSOR = None


def install_tile_tensor(convert) -> None:
    """``convert(torch tensor)`` → a device tensor of its shape and dtype in tile layout (what a
    compile-only call reads of a torch argument; the host tensor module provides it)."""
    global _TILE_TENSOR
    _TILE_TENSOR = convert


def tile_tensor(value):
    return value if _TILE_TENSOR is None else _TILE_TENSOR(value)


def runner() -> Runner:
    if _RUNNER is None:
        raise KernelError("TT-Lang operations run through tilefold.ttl: import tilefold.ttl (as ttl) before calling "
                          "one")
    return _RUNNER


_PREPARING = 0        # depth of preparing_calls() blocks


def compile_only() -> bool:
    """``TTLANG_COMPILE_ONLY=1``: an operation call compiles its kernels and does not run them."""
    return os.environ.get("TTLANG_COMPILE_ONLY", "").strip().lower() not in ("", "0", "false", "no")


def preparing() -> bool:
    """Inside :func:`preparing_calls`: an operation call builds and compiles its program as for a
    run, keeps it for later calls, and runs nothing."""
    return _PREPARING > 0


@contextmanager
def preparing_calls():
    """Operation calls in the body are compiled, not run (``SRAMStorage.prepare_operation``)."""
    global _PREPARING
    _PREPARING += 1
    try:
        yield
    finally:
        _PREPARING -= 1


def compile_only_or_raise(message: str, where) -> None:
    """A mistake that would make a run's numbers wrong or undefined: a :class:`KernelError` at
    ``where``, and a warning in a build that runs nothing (``TTLANG_COMPILE_ONLY``), as TT-Lang's
    compiler builds such kernels."""
    if not compile_only():
        raise KernelError(message, where)
    warn_at(f"{message} (a build with TTLANG_COMPILE_ONLY runs nothing, so it goes on)", where)
