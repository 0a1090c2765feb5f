"""Fixtures shared by all tests: the ``check-kernel`` runner (tests/checkkernel.py) on ``sys.path``.
Every pipeline the tests run verifies the module after each of its passes (not only after the last)."""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[0]))

import checkkernel  # noqa: E402

os.environ.setdefault("TILEFOLD_VERIFY_EACH_PASS", "1")


@pytest.fixture(scope="session")
def check_kernel():
    """The :mod:`checkkernel` module: ``check_kernels``, ``require_accepted``, ``accessor_compile_args``."""
    return checkkernel
