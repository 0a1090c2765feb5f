"""Fast numerics beside the faithful default: the same program gives the same cycle counts, the
same checks and outputs within bfloat16 rounding of a float32 reference; faithful stays bit-exact
with a 16-bit DST's per-step rounding; an unknown mode is one clear line."""

from __future__ import annotations

import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

from tilefold.errors import ArchError
from tilefold.ops import get_factory
from tilefold.sim import Device
from tilefold.sim import numerics_mode


def _matmul(*argv):
    import argparse

    factory = get_factory("matmul_multicore")
    parser = argparse.ArgumentParser()
    factory.add_arguments(parser)
    args = parser.parse_args(list(argv))
    args.arch = None
    return factory.build(args)


def _bf16_ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in bfloat16 steps of ``want`` (values of a bfloat16 output)."""
    step = np.abs(want.astype(ml_dtypes.bfloat16).astype(np.float32)) * 2.0 ** -7
    return np.abs(got - want) / np.maximum(step, 2.0 ** -126)


@pytest.mark.parametrize("dst", ["--no-fp32-dest-acc-en", "--fp32-dest-acc-en"])
def test_fast_numerics_keep_cycles_and_follow_float32_accumulation(dst):
    instance = _matmul("--shape", "128,512,192", dst, "--grid", "3,2")
    faithful = Device(numerics="faithful").run(instance.program, instance.inputs)
    fast = Device(numerics="fast").run(instance.program, instance.inputs)
    assert (faithful.numerics, fast.numerics) == ("faithful", "fast")
    assert fast.perf.cycles == faithful.perf.cycles
    assert fast.perf.summary() == faithful.perf.summary()
    a, b = instance.inputs["src0"], instance.inputs["src1"]
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    # fast: one rounding of a float32 sum into the bfloat16 output
    assert _bf16_ulps(fast.outputs["dst"], want).max() <= 1.01
    if dst == "--no-fp32-dest-acc-en":
        # the faithful 16-bit DST rounds after every K step: further from the float32 sum
        assert _bf16_ulps(faithful.outputs["dst"], want).max() > 1.01


def test_environment_chooses_the_default_and_a_bad_name_is_one_line(monkeypatch):
    monkeypatch.setenv(numerics_mode.ENVIRONMENT, "fast")
    assert Device().numerics == "fast"
    assert Device(numerics="faithful").numerics == "faithful"
    with numerics_mode.chosen("faithful"):
        assert Device().numerics == "faithful"
    monkeypatch.setenv(numerics_mode.ENVIRONMENT, "quick")
    with pytest.raises(ArchError, match="TILEFOLD_NUMERICS='quick' is not a numerics mode; use one of faithful, fast"):
        Device()
    with pytest.raises(ArchError, match="numerics='exact'"):
        Device(numerics="exact")


def test_command_line_reports_fast_numerics():
    out = subprocess.run([sys.executable, "-m", "tilefold", "run", "matmul_multicore", "--shape", "64,64,64",
                          "--numerics", "fast"], capture_output=True, text=True, check=True).stdout
    assert "simulated with fast numerics (float32 accumulation)" in out
