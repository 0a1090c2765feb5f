"""Helpers shared by the PyKernel tests: loading the examples, FileCheck, expected error lines."""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import io
import sys
import tempfile
from pathlib import Path

import pytest
from filecheck.matcher import Matcher
from filecheck.options import Options

from tilefold.errors import KernelError
from tilefold.ir.context import parse_module, print_ir

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "pykernel"


def load_example(name: str):
    """Import ``examples/pykernel/<name>.py`` (once per process)."""
    module_name = f"tilefold_example_pykernel_{name}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return sys.modules[module_name]


def filecheck(text: str, checks: str) -> None:
    """Match ``text`` against FileCheck ``checks`` (CHECK, CHECK-NEXT, CHECK-NOT, ...)."""
    with tempfile.TemporaryDirectory() as tmp:
        check_file, input_file = Path(tmp, "checks"), Path(tmp, "input")
        check_file.write_text(checks)
        input_file.write_text(text)
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            matcher = Matcher.from_opts(Options(match_filename=str(check_file), input_file=str(input_file)))
            code = matcher.run()
    if code != 0:
        pytest.fail(f"FileCheck failed:\n{stderr.getvalue()}\n--- input ---\n{text}")


def marked_line(function, marker: str = "# error") -> int:
    """The line of ``function``'s source that carries ``marker``."""
    function = getattr(function, "python_function", function)
    lines, start = inspect.getsourcelines(function)
    hits = [start + i for i, line in enumerate(lines) if line.rstrip().endswith(marker)]
    assert len(hits) == 1, f"expected one line marked {marker!r} in {function.__name__}, found {len(hits)}"
    return hits[0]


def expect_error(kernel, test_file: str, *fragments: str, marked=None) -> KernelError:
    """Building ``kernel`` raises one KernelError at the line marked ``# error`` (in ``marked``,
    default the kernel itself) of ``test_file``, whose message contains every fragment."""
    with pytest.raises(KernelError) as info:
        kernel.build()
    message = str(info.value)
    line = marked_line(marked or kernel)
    assert message.startswith(f"{test_file}:{line}: "), message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return info.value


def op_names(function) -> list[str]:
    """Names of the ops of a function in walk order, without constants, CBs and terminators."""
    skip = {"arith.constant", "ttkernel.cb", "scf.yield", "func.return", "func.func"}
    return [op.name for op in function.walk() if op.name not in skip]


def assert_round_trips(kernel, debuginfo=(False, True)) -> None:
    """The kernel's MLIR text, with and without locations, parses back to the same text."""
    for debuginfo in debuginfo:
        text = kernel.ir(debuginfo=debuginfo)
        assert print_ir(parse_module(text), debuginfo=debuginfo) == text
