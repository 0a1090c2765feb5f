"""A PyKernel example end to end: Python kernels → IR → TT-Metalium project; every dataflow kernel
compiles against the real headers with the compile-time arguments the host gives it."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from checkhost import check_host, require_hosts_accepted
from checkkernel import accessor_compile_args, check_kernels, require_accepted
from tilefold.codegen.cpp import Golden, HostData, write_project
from tilefold.layout.tiles import tilize

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "pykernel"


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(f"tilefold_cpp_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tilize_project(tmp_path_factory):
    example = load_example("tilize")
    program = example.tilize_program((64, 128), num_cores=2)
    sticks = np.random.default_rng(1).standard_normal((64, 128)).astype(ml_dtypes.bfloat16)
    data = HostData(inputs={"src": sticks.tobytes()}, outputs={"dst": Golden(tilize(sticks), rtol=0, atol=0)})
    folder = tmp_path_factory.mktemp("tilize")
    write_project(program, folder, data)
    return program, folder


@pytest.fixture(scope="module")
def tilize_checks(tilize_project) -> dict:
    program, folder = tilize_project
    jobs, names = [], []
    for kernel in program.kernels:
        if kernel.source_file not in names:
            names.append(kernel.source_file)
            jobs.append((folder / kernel.source_file, "compute" if kernel.is_compute else "reader",
                         accessor_compile_args(program, kernel)))
    return dict(zip(names, check_kernels(jobs)))


@pytest.mark.parametrize("source", ["reader_unary_stick_layout_split_rows_interleaved.cpp", "tilize.cpp",
                                    "writer_unary_interleaved_start_id.cpp"])
def test_tilize_project_kernels_compile(tilize_checks, source):
    require_accepted(tilize_checks[source])


def test_tilize_reader_reads_like_the_seed(tilize_project):
    _, folder = tilize_project
    reader = (folder / "reader_unary_stick_layout_split_rows_interleaved.cpp").read_text()
    assert "base_src_noc_addr[j] = get_noc_addr(stick_id, s);  // tilize.py:" in reader
    assert "uint32_t l1_write_addr = get_write_ptr(0);" in reader


def test_tilize_project_host_passes_check_host(tilize_project):
    program, folder = tilize_project
    main = (folder / "main.cpp").read_text()
    for path in re.findall(r'PROJECT_DIR "/([^"]+)"', main):
        assert path.endswith(".out.bin") or (folder / path).exists(), path
    require_hosts_accepted([check_host(folder / "main.cpp")])
