"""FileCheck tests per pass: each ``<pass>.mlir`` (or ``<pass>.<case>.mlir``) here is the IR a pass runs on, its ``// RUN:`` line
the pass spec, and its ``CHECK`` lines what the pass must write (as xDSL's tests/filecheck are).

The spec runs through the compile driver (:func:`tilefold.compiler.run_pipeline`, which verifies
the module after each pass); the printed module is matched against the file's own CHECK lines.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

import pytest
from filecheck.matcher import Matcher
from filecheck.options import Options

import tilefold.ir.tile  # noqa: F401 - registers the tile dialect
import tilefold.ir.ttl  # noqa: F401 - registers the ttl, ttcore and tensor dialects
from tilefold.compiler import run_pipeline
from tilefold.ir.context import parse_module, print_ir
from tilefold.passes.registry import all_passes

HERE = Path(__file__).resolve().parent
CASES = sorted(HERE.glob("*/*.mlir"))


def run_line(path: Path) -> str:
    first = path.read_text().splitlines()[0]
    assert first.startswith("// RUN: "), f"{path.name}: the first line must be // RUN: <pass spec>"
    return first.removeprefix("// RUN: ").strip()


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_pass_output(path: Path):
    module = parse_module(path.read_text())
    run_pipeline(module, run_line(path))
    output = print_ir(module)
    stderr = io.StringIO()
    with tempfile.TemporaryDirectory() as tmp:
        produced = Path(tmp, "output.mlir")
        produced.write_text(output)
        with contextlib.redirect_stderr(stderr):
            code = Matcher.from_opts(Options(match_filename=str(path), input_file=str(produced))).run()
    assert code == 0, f"{path.name}: FileCheck failed\n{stderr.getvalue()}\n--- output ---\n{output}"


def test_every_case_names_a_registered_pass_and_at_least_ten_passes_are_covered():
    passes = all_passes()
    covered = {run_line(p).split(",")[-1].split("{")[0] for p in CASES}
    assert covered <= set(passes), covered - set(passes)
    # each file is named after its pass (``<pass>.mlir``, or ``<pass>.<case>.mlir`` for a further case)
    assert all(p.stem.split(".")[0] == run_line(p).split(",")[-1].split("{")[0] for p in CASES)
    assert len(covered) >= 10
