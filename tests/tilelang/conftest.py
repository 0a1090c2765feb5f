"""Fixtures of the TileLang front-end tests: example loading, FileCheck, kernel checks."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
