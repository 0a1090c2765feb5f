"""Helpers of the TileLang tests: FileCheck, examples, the line a test marks, bf16 references."""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import io
import sys
import tempfile
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from filecheck.matcher import Matcher
from filecheck.options import Options

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tilelang"


def filecheck(text: str, checks: str) -> None:
    """Match ``text`` against FileCheck ``checks`` (CHECK, CHECK-NEXT, CHECK-NOT, ...)."""
    with tempfile.TemporaryDirectory() as tmp:
        check_file, input_file = Path(tmp, "checks"), Path(tmp, "input")
        check_file.write_text(checks)
        input_file.write_text(text)
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            code = Matcher.from_opts(Options(match_filename=str(check_file), input_file=str(input_file))).run()
    if code != 0:
        pytest.fail(f"FileCheck failed:\n{stderr.getvalue()}\n--- input ---\n{text}")


def load_example(name: str):
    """Import ``examples/tilelang/<name>.py`` (once per process)."""
    module_name = f"tilefold_example_tilelang_{name}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return sys.modules[module_name]


def marked_line(function, marker: str = "# error") -> int:
    """The line of ``function``'s source that ends with ``marker``."""
    lines, start = inspect.getsourcelines(getattr(function, "python_function", function))
    hits = [start + i for i, line in enumerate(lines) if line.rstrip().endswith(marker)]
    assert len(hits) == 1, f"expected one line marked {marker!r}, found {len(hits)}"
    return hits[0]


def expect_error(action, error_type, function, *fragments: str):
    """``action()`` raises one ``error_type`` whose message starts with the file:line marked
    ``# error`` in ``function`` and contains every fragment."""
    with pytest.raises(error_type) as info:
        action()
    message = str(info.value)
    file = inspect.getsourcefile(getattr(function, "python_function", function))
    line = marked_line(function)
    assert message.startswith(f"{file}:{line}: "), message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return info.value


def bf16(x) -> np.ndarray:
    """Round to bfloat16 (nearest even), as float32."""
    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def random_bf16(shape, seed: int, scale: float = 1.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale).astype(ml_dtypes.bfloat16)


def matmul_reference(a, b) -> np.ndarray:
    """bfloat16 inputs, float32 accumulation, a bfloat16 result."""
    return bf16(a.astype(np.float32) @ b.astype(np.float32))
