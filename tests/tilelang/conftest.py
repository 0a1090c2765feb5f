"""Fixtures of the TileLang front-end tests: example loading, FileCheck, kernel checks."""

import sys
from pathlib import Path

import tilefold
from tilefold.frontend.tilelang.jit import jit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# ``tilefold.jit`` is the package-level name of the TileLang jit; make sure the examples see it
# even when the package does not re-export it.
if not hasattr(tilefold, "jit"):
    tilefold.jit = jit
