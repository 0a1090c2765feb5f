"""``tilefold passes`` lists every registered pass once per pipeline it is in, with its summary."""

from __future__ import annotations

from tilefold.cli.main import main
from tilefold.passes.pipelines import PIPELINES
from tilefold.passes.registry import all_passes, summary


def test_every_pass_is_listed_with_its_summary(capsys):
    assert main(["passes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {tuple(line.split(maxsplit=1)) for line in lines if line.startswith("  ")}
    passes = all_passes()
    assert len(passes) >= 10
    for name, cls in passes.items():
        assert summary(cls), f"{name} has no one-line summary"
        assert (name, summary(cls)) in rows, name
        assert name == name.lower() and "_" not in name, f"{name} is not kebab-case"
    for pipeline in PIPELINES:
        assert f"pipeline {pipeline}:" in lines


def test_one_pass_prints_its_options_and_description(capsys):
    assert main(["passes", "lower-to-sfpu"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("lower-to-sfpu: ") and "option arch" in out
