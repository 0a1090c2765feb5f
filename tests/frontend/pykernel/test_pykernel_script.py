"""``tilefold compile`` of every PyKernel example: a project per program the script runs, whose
kernels pass check-kernel (with the compile-time arguments the host gives them) and whose main.cpp
passes check-host; ``tilefold run`` of a script."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from checkhost import check_hosts, require_hosts_accepted
from checkkernel import accessor_compile_args, check_kernels, require_accepted
from tilefold.cli.main import main
from tilefold.errors import KernelError
from tilefold.cli.pykernel_scripts import compile_runs

EXAMPLES = sorted((Path(__file__).resolve().parents[3] / "examples" / "pykernel").glob("*.py"))


@pytest.fixture(scope="module")
def projects(tmp_path_factory):
    root = tmp_path_factory.mktemp("pykernel_projects")
    return {example.stem: compile_runs(example, root / example.stem) for example in EXAMPLES}


def test_every_example_compiles_to_a_project(projects):
    assert set(projects) == {e.stem for e in EXAMPLES} and len(projects) >= 3
    for name, runs in projects.items():
        assert runs, name
        for program, folder, written in runs:
            names = {p.relative_to(folder).as_posix() for p in written}
            for required in ("main.cpp", "CMakeLists.txt", "host_checks.hpp"):
                assert required in names, (name, names)
            assert {k.source_file for k in program.kernels} <= names
            for buffer in program.buffers.values():
                if buffer.role in ("input", "inout"):
                    assert f"data/{buffer.name}.bin" in names


def test_goldens_are_the_simulated_outputs(projects):
    [(program, folder, _)] = projects["tilize"]
    golden = (folder / "data" / "dst.golden.bin").read_bytes()
    sticks = np.frombuffer((folder / "data" / "src.bin").read_bytes(), np.float32)
    assert len(golden) == len(sticks) * 4 and sorted(np.frombuffer(golden, np.float32)) == sorted(sticks)
    main_cpp = (folder / "main.cpp").read_text()
    assert "compute_unpack_to_dest_mode[0] = UnpackToDestMode::UnpackToDestFp32;" in main_cpp
    # a run the simulator stopped has a project but no golden
    [(_, barrier, written)] = projects["missing_barrier"]
    assert not any(p.name.endswith(".golden.bin") for p in written)


@pytest.fixture(scope="module")
def kernel_checks(projects):
    jobs, names = [], []
    for name, runs in projects.items():
        for program, folder, _ in runs:
            seen = set()
            for kernel in program.kernels:
                if kernel.source_file in seen:
                    continue
                seen.add(kernel.source_file)
                role = "compute" if kernel.is_compute else ("reader" if kernel.processor == "RISCV_0" else "writer")
                jobs.append((folder / kernel.source_file, role, accessor_compile_args(program, kernel)))
                names.append(f"{name}/{kernel.source_file}")
    return dict(zip(names, check_kernels(jobs)))


def test_every_kernel_passes_check_kernel(kernel_checks):
    assert len(kernel_checks) >= 3 * len(EXAMPLES)
    for result in kernel_checks.values():
        require_accepted(result)


def test_every_host_program_passes_check_host(projects):
    require_hosts_accepted(check_hosts([folder / "main.cpp" for runs in projects.values() for _, folder, _ in runs]))


def test_compile_from_the_command_line(tmp_path, capsys):
    example = next(e for e in EXAMPLES if e.stem == "exp_tiles")
    assert main(["compile", str(example), "-o", str(tmp_path / "exp")]) == 0
    assert "wrote 8 files" in capsys.readouterr().out
    assert (tmp_path / "exp" / "main.cpp").exists() and (tmp_path / "exp" / "exp_tiles.cpp").exists()


def test_a_script_that_runs_no_program(tmp_path):
    script = tmp_path / "nothing.py"
    script.write_text("from tilefold.pykernel import *\nx = 1\n")
    with pytest.raises(KernelError) as info:
        compile_runs(script, tmp_path / "out")
    assert str(info.value).startswith(f"{script}:1: ") and "runs no program" in str(info.value)
