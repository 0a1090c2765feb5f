"""Batching never changes a result: every example and built-in op gives the same output bytes, the
same cycle count and the same per-thread clocks (end, busy and stall cycles) when cores run as
lanes of one thread as when each core runs as its own thread."""

from __future__ import annotations

import argparse
import contextlib
import io
import runpy

import numpy as np
import pytest

from tilefold.errors import TilefoldError
from tilefold.sim.device import Device

from simhelpers import example_scripts

SCRIPTS = example_scripts()


def assert_same_run(a, b) -> None:
    assert a.perf.cycles == b.perf.cycles
    assert sorted(a.pages) == sorted(b.pages)
    for name in a.pages:
        np.testing.assert_array_equal(a.pages[name], b.pages[name])
    assert per_core(a) == per_core(b)
    assert [type(h) for h in a.hazards] == [type(h) for h in b.hazards]


def per_core(result) -> list[tuple]:
    """(kernel, role, core, end, busy and stall cycles) of every thread of every core."""
    return sorted((t.kernel, t.role, str(c), float(end), float(busy), float(stall)) for t in result.perf.threads
                  for c, end, busy, stall in zip(t.cores, t.end_cycles, t.busy_cycles, t.stall_cycles))


@pytest.fixture
def both_modes(monkeypatch):
    """Every Device.run runs batched and one core per thread; returns the list of compared runs."""
    original = Device.run
    compared = []

    def run(self, program, inputs=None, **kwargs):
        kwargs.pop("batch", None)
        outcomes = []
        for batch in (True, False):
            try:
                outcomes.append(original(self, program, inputs, batch=batch, **kwargs))
            except Exception as err:   # a hazard the example shows on purpose: the same in both modes
                outcomes.append(err)
        batched, single = outcomes
        if isinstance(batched, Exception):
            assert type(batched) is type(single) and str(batched) == str(single)
            compared.append(program.name)
            raise batched
        assert_same_run(batched, single)
        compared.append(program.name)
        return batched

    monkeypatch.setattr(Device, "run", run)
    return compared


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_example_cycles_do_not_depend_on_batching(script, both_modes):
    # hazards an example shows on purpose are compared too (the same error in both modes)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(TilefoldError):
        if script.parent.name == "pykernel":
            runpy.run_path(str(script), run_name="__main__")
        else:
            runpy.run_path(str(script), run_name="example")["main"]()
    assert both_modes, f"{script.name} ran nothing on the device"


@pytest.mark.parametrize("name", ["tilize", "untilize", "eltwise", "matmul", "matmul_multicore"])
def test_op_cycles_do_not_depend_on_batching(name, both_modes):
    from tilefold.ops import get_factory

    factory = get_factory(name)
    parser = argparse.ArgumentParser()
    factory.add_arguments(parser)
    args = parser.parse_args([])
    args.arch = None
    instance = factory.build(args)
    result = Device(instance.program.arch).run(instance.program, instance.inputs)
    assert all(c.passed for c in instance.check(result.outputs))
    assert both_modes == [instance.program.name]
