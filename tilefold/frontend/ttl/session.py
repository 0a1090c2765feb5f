"""How TT-Lang operations run in this process: the device, and whether to write C++ projects.

Reads: nothing. Writes: nothing. :data:`SETTINGS` is read by every operation call:
``arch`` (the simulated device), ``project_dir`` (set by ``tilefold compile``: each call also
writes a TT-Metalium project there), ``print_ir_after_all``, ``trace`` (a Chrome trace of the last
run), ``report`` (print a summary of each run) and the steps of multi-chip runs (``mesh_steps``).
:func:`configured` sets them for a ``with`` block.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path


@dataclass
class Settings:
    arch: str | None = None
    project_dir: Path | None = None
    print_ir_after_all: bool = False
    trace: Path | None = None
    report: bool = False
    written: list[Path] = field(default_factory=list)
    runs: list = field(default_factory=list)
    mesh_steps: list = field(default_factory=list)     # mesh.MeshStep of multi-chip runs


SETTINGS = Settings()


@contextmanager
def configured(**changes):
    """Use ``SETTINGS`` with ``changes`` inside the ``with`` block."""
    global SETTINGS
    saved = SETTINGS
    SETTINGS = replace(saved, written=[], runs=[], mesh_steps=[], **changes)
    try:
        yield SETTINGS
    finally:
        SETTINGS = saved


def settings() -> Settings:
    return SETTINGS
