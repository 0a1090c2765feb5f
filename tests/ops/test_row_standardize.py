"""row_standardize: each row of a row-major bfloat16 tensor standardized against numpy (a cliff
core included), near the DRAM roofline when every core has blocks to overlap, its kernels through
check-kernel, and shapes that are not whole tiles refused clearly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from checkkernel import accessor_compile_args, check_kernels, require_accepted
from factory_helpers import build, run
from tilefold.codegen.cpp import emit_kernel
from tilefold.errors import LayoutError
from tilefold.ops.row_standardize import dram_roofline_seconds, reference, row_standardize_program


@pytest.mark.parametrize("argv", [("--shape", "224,96", "--grid", "3,2"), ("--shape", "64,1024")],
                         ids=["cliff-core", "wide-rows"])
def test_rows_are_standardized_like_numpy(argv):
    instance = build("row_standardize", *argv)
    out = run(instance.program, instance.inputs).outputs["dst"]
    x = instance.inputs["src"]
    assert all(c.passed for c in instance.check({"dst": out}))
    assert np.abs(out - reference(x)).max() < 0.05
    assert np.abs(out.mean(axis=1)).max() < 0.02 and np.abs(out.std(axis=1) - 1).max() < 0.02


def test_modeled_time_is_near_the_dram_roofline():
    instance = build("row_standardize", "--shape", "8192,256")
    perf = run(instance.program, instance.inputs).perf
    assert dram_roofline_seconds((8192, 256)) / perf.seconds >= 0.8


def test_kernels_pass_check_kernel(tmp_path):
    program = row_standardize_program((256, 512))
    jobs, seen = [], set()
    for kernel in program.kernels:
        if kernel.source_file in seen:
            continue
        seen.add(kernel.source_file)
        path = tmp_path / Path(kernel.source_file).name
        path.write_text(emit_kernel(kernel.function))
        role = "compute" if kernel.is_compute else ("reader" if kernel.processor == "RISCV_0" else "writer")
        jobs.append((path, role, accessor_compile_args(program, kernel)))
    assert len(jobs) == 3
    for result in check_kernels(jobs):
        require_accepted(result)


def test_shapes_that_are_not_whole_tiles_are_refused():
    with pytest.raises(LayoutError, match="multiples of 32"):
        row_standardize_program((100, 64))
