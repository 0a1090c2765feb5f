"""Pass tests of the TileLang pipeline: IR text in, IR text out, checked with FileCheck."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tilelang"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
