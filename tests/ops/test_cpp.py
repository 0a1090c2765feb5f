"""The C++ every factory emits: snapshots reviewed like code, every kernel checked by check-kernel
against the real TT-Metalium 0.69 headers with the compile-time args its host gives it, every
main.cpp checked by check-host, and the tilize example's kernels identical to the factory's."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from checkhost import check_hosts, require_hosts_accepted
from checkkernel import accessor_compile_args, check_kernels, require_accepted
from factory_helpers import build
from tilefold.codegen.cpp import emit_kernel, project_files
from tilefold.ops import host_data
from tilefold.ops.kernels import tilize as tilize_compute
from tilefold.ops.kernels import reader_unary_stick_layout_split_rows_interleaved as tilize_reader
from tilefold.ops.kernels import writer_unary_interleaved_start_id as tile_writer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "pykernel"
DEPRECATED = ("noc_async_read_tile", "noc_async_write_tile", "InterleavedAddrGen", "acquire_dst", "release_dst")

PROGRAMS = {       # the options of ``tilefold compile OP``
    "tilize": ("tilize", "--shape", "1,1,3232,64"),
    "untilize": ("untilize", "--shape", "1,1,64,50"),
    "tilize_float32": ("tilize", "--shape", "1,1,64,128", "--dtype", "float32"),
    "untilize_float32": ("untilize", "--shape", "1,1,64,128", "--dtype", "float32"),
    "eltwise_add": ("eltwise", "--op", "add", "--shape", "1,1,64,96"),
    "eltwise_sub": ("eltwise", "--op", "sub", "--shape", "1,1,64,96", "--dtype", "float32"),
    "eltwise_mul": ("eltwise", "--op", "mul", "--shape", "1,1,64,96"),
    "matmul": ("matmul", "--shape", "128,512,192"),
    "matmul_multicore": ("matmul_multicore", "--shape", "128,256,192", "--grid", "2,2"),
}
SNAPSHOTS = [(op, f) for op in PROGRAMS for f in ("reader.cpp", "compute.cpp", "writer.cpp",
                                                  "main.cpp")
             if not (op in ("eltwise_sub", "eltwise_mul") and f != "compute.cpp")
             and not (op.endswith("_float32") and f != "main.cpp")
             and not (op == "matmul_multicore" and f != "main.cpp")]      # its kernels are matmul's


@pytest.fixture(scope="module")
def projects():
    return {op: build(*argv) for op, argv in PROGRAMS.items()}


@pytest.fixture(scope="module")
def files(projects):
    return {op: project_files(instance.program, host_data(instance)) for op, instance in projects.items()}


@pytest.mark.parametrize("op, path", SNAPSHOTS, ids=[f"{op}-{Path(f).stem}" for op, f in SNAPSHOTS])
def test_cpp_snapshot(op, path, files, cpp_snapshot):
    assert files[op][path] == cpp_snapshot


@pytest.mark.parametrize("op", PROGRAMS)
def test_kernel_files_are_named_by_role(op, files):
    kernels = sorted(p for p in files[op] if p.endswith(".cpp") and p != "main.cpp")
    assert kernels == ["compute.cpp", "reader.cpp", "writer.cpp"]
    for path in kernels:
        text = files[op][path]
        assert "void kernel_main() {" in text
        assert not any(word in text for word in DEPRECATED)


@pytest.fixture(scope="module")
def checked(projects, tmp_path_factory) -> dict:
    """check-kernel results of every kernel source of every factory, run in parallel once."""
    folder = tmp_path_factory.mktemp("ops_kernels")
    jobs, keys = [], []
    for op, instance in projects.items():
        program = instance.program
        seen = set()
        for kernel in program.kernels:
            if kernel.source_file in seen:
                continue
            seen.add(kernel.source_file)
            path = folder / f"{op}_{kernel.source_file}"
            path.write_text(emit_kernel(kernel.function))
            role = "compute" if kernel.is_compute else ("reader" if kernel.processor == "RISCV_0" else "writer")
            jobs.append((path, role, accessor_compile_args(program, kernel)))
            keys.append(f"{op}-{Path(kernel.source_file).stem}")
    return dict(zip(keys, check_kernels(jobs)))


CHECKS = [f"{op}-{role}" for op in PROGRAMS for role in ("reader", "compute", "writer")]


@pytest.mark.parametrize("key", CHECKS)
def test_kernel_passes_check_kernel(key, checked):
    require_accepted(checked[key])


@pytest.mark.parametrize("op", ["tilize_float32", "untilize_float32"])
def test_float32_tilize_and_untilize_unpack_their_input_to_dest(op, files):
    """As TT-Metal's factories: a 32-bit DST and the input CB c_0 unpacked to it as float32."""
    main = files[op]["main.cpp"]
    assert "std::vector<UnpackToDestMode> compute_unpack_to_dest_mode(NUM_CIRCULAR_BUFFERS, UnpackToDestMode::Default);" in main
    assert "compute_unpack_to_dest_mode[0] = UnpackToDestMode::UnpackToDestFp32;" in main
    assert ".fp32_dest_acc_en = true," in main and ".unpack_to_dest_mode = compute_unpack_to_dest_mode," in main
    assert "UnpackToDestMode" not in files["tilize"]["main.cpp"]


def test_tilize_example_kernels_are_the_factory_kernels():
    spec = importlib.util.spec_from_file_location("tilefold_ops_example_tilize", EXAMPLES / "tilize.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)

    def body(kernel):
        return emit_kernel(kernel.function, source_comments=False).split("\n", 1)[1]

    pairs = [(example.reader_unary_stick_layout_split_rows_interleaved, tilize_reader.reader),
             (example.tilize, tilize_compute.compute),
             (example.writer_unary_interleaved_start_id, tile_writer.writer)]
    for mine, factory in pairs:
        assert body(mine) == body(factory)
    program = example.tilize_program((96, 64), "bfloat16", num_cores=2)
    assert [k.name for k in program.kernels] == ["reader", "compute", "compute_cliff", "writer"]


def test_host_programs_pass_check_host(files, tmp_path):
    """Each factory's main.cpp compiles (syntax and types) against the real 0.69 host API headers."""
    mains = []
    for op in PROGRAMS:
        folder = tmp_path / op
        for relative, content in files[op].items():
            path = folder / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
        mains.append(folder / "main.cpp")
    require_hosts_accepted(check_hosts(mains))
