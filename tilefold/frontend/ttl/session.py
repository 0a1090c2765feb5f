"""How TT-Lang operations run in this process: the device, and whether to write C++ projects.

Reads: nothing. Writes: nothing. :data:`SETTINGS` is read by every operation call:
``arch`` (the simulated device), ``project_dir`` (set by ``tilefold compile``: each call also
writes a TT-Metalium project there), ``print_ir_after_all``, ``trace`` (a Chrome trace of the last
run) and ``report`` (print a one-line summary of each run). :func:`configured` sets them for a
``with`` block.
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


SETTINGS = Settings()


@contextmanager
def configured(**changes):
    """Use ``SETTINGS`` with ``changes`` inside the ``with`` block."""
    global SETTINGS
    saved = SETTINGS
    SETTINGS = replace(saved, written=[], runs=[], **changes)
    try:
        yield SETTINGS
    finally:
        SETTINGS = saved


def settings() -> Settings:
    return SETTINGS
