"""The host program, its checks header, the CMake file and the project folder of a Program."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from checkhost import check_host, check_hosts, require_hosts_accepted
from checkkernel import accessor_compile_args, check_kernels, require_accepted
from tilefold.arch.cores import CoreCoord, CoreRange, CoreRangeSet
from tilefold.codegen.cpp import Golden, HostData, emit_cmake, emit_host, emit_host_checks, write_project
from tilefold.codegen.cpp.host import HostPrinter
from tilefold.errors import ProgramError
from tilefold.ir.context import parse_module
from tilefold.layout.tensor_spec import MemoryConfig, NdShardSpec, ShardSpec
from tilefold.program import ComputeConfig, DataMovementConfig, NocX, NocY, Program

HERE = Path(__file__).parent
IR = HERE / "ir"


def kernel(name: str):
    return list(parse_module((IR / f"{name}.mlir").read_text()).ops)[0]


def bf16_bytes(values: np.ndarray) -> bytes:
    return values.astype(ml_dtypes.bfloat16).tobytes()


def eltwise_add_program() -> tuple[Program, HostData]:
    """out = a + b for 1x1x64x128 bfloat16 tensors (8 tiles) on two cores: 5 tiles and a 3-tile cliff."""
    program = Program(name="eltwise_add")
    a = program.add_buffer("a", (1, 1, 64, 128), "bfloat16")
    b = program.add_buffer("b", (1, 1, 64, 128), "bfloat16")
    out = program.add_buffer("out", (1, 1, 64, 128), "bfloat16", role="output")
    cores = CoreRangeSet([CoreRange((0, 0), (1, 0))])
    for index in (0, 1, 16):
        program.create_circular_buffer(cores, index, 2048, 2, "bfloat16", name={0: "cb_a", 1: "cb_b", 16: "cb_out"}[index])
    reader = program.create_kernel(kernel("reader_binary"), cores, DataMovementConfig("RISCV_0"),
                                   [a.accessor_args, b.accessor_args], name="reader")
    writer = program.create_kernel(kernel("writer_tiles"), cores, DataMovementConfig("RISCV_1"),
                                   [16, out.accessor_args], name="writer")
    add = kernel("eltwise_add")
    full = program.create_kernel(add, CoreCoord(0, 0), ComputeConfig("HiFi4"), [5], name="compute")
    cliff = program.create_kernel(full.function, CoreCoord(1, 0), ComputeConfig("HiFi4"), [3], name="compute_cliff")
    for core, (start, count) in zip(cores, [(0, 5), (5, 3)]):
        program.set_runtime_args(reader, core, [a.address, b.address, count, start])
        program.set_runtime_args(writer, core, [out.address, count, start])
    assert full.source_file == cliff.source_file
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 64 * 128)).astype(np.float32)
    golden = (x.astype(ml_dtypes.bfloat16).astype(np.float32) + y.astype(ml_dtypes.bfloat16).astype(np.float32))
    data = HostData(inputs={"a": bf16_bytes(x), "b": bf16_bytes(y)},
                    outputs={"out": Golden(bf16_bytes(golden), rtol=0.01, atol=0.02, min_pcc=0.999)})
    return program, data


def test_host_snapshot(cpp_snapshot):
    program, data = eltwise_add_program()
    assert emit_host(program, data) == cpp_snapshot


def test_host_uses_the_mesh_api_and_the_users_names():
    program, data = eltwise_add_program()
    text = emit_host(program, data)
    for needed in ("distributed::MeshDevice::create_unit_mesh(0)", "mesh->mesh_command_queue()",
                   "distributed::ReplicatedBufferConfig{.size = 16384}", "distributed::EnqueueWriteMeshBuffer(cq, a,",
                   "TensorAccessorArgs(*a).append_to(reader_compile_args);",
                   "TensorAccessorArgs(*b).append_to(reader_compile_args);",
                   "workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));",
                   "distributed::EnqueueMeshWorkload(cq, workload, false);", "distributed::Finish(cq);",
                   "distributed::EnqueueReadMeshBuffer(cq, out_output, out, true);", "mesh->close();",
                   "SetRuntimeArgs(program, reader, CoreCoord{1, 0}, {a_address, b_address, 3, 5});",
                   ".math_fidelity = MathFidelity::HiFi4", ".noc = NOC::RISCV_1_default"):
        assert needed in text
    # the two compute kernels share one source file
    assert text.count('PROJECT_DIR "/eltwise_add.cpp"') == 2
    for deprecated in ("CreateDevice", "EnqueueProgram", "EnqueueWriteBuffer(", "CloseDevice", "InterleavedBufferConfig"):
        assert deprecated not in text


def test_host_passes_check_host(tmp_path):
    """main.cpp (with sharded L1 buffers, semaphores, NoC coordinates, defines) against the real 0.69
    host API headers; the driver below uses the real DataFormat values."""
    program, data = eltwise_add_program()
    sharded = MemoryConfig("HEIGHT_SHARDED", "L1", ShardSpec(CoreRangeSet([CoreRange((0, 0), (1, 0))]), (32, 128)))
    program.add_buffer("staging", (1, 1, 64, 128), "bfloat16", buffer_type="L1", role="scratch",
                       memory_config=sharded)
    cores = CoreRangeSet([CoreRange((0, 0), (1, 0))])
    program.create_semaphore(cores, 1)
    program.create_circular_buffer(cores, 24, 2048, 2, "bfloat16", name="staged", backing_buffer="staging")
    program.kernels[1].common_runtime_args = [NocX(CoreCoord(1, 0)), NocY(CoreCoord(1, 0)), 4000000000]
    program.kernels[2].defines = {"ELTWISE_OP": "add_tiles", "QUOTED": 'say "hi"'}
    (tmp_path / "main.cpp").write_text(HostPrinter(program, data).text())
    (tmp_path / "host_checks.hpp").write_text(emit_host_checks())
    formats = tmp_path / "formats" / "main.cpp"
    formats.parent.mkdir()
    formats.write_text("#include <tt-metalium/host_api.hpp>\n" + "".join(
        f"static_assert(static_cast<int>(tt::DataFormat::{name}) == {value});\n"
        for name, value in DRIVER_FORMATS.items()))
    require_hosts_accepted(check_hosts([tmp_path / "main.cpp", formats]))


def test_check_host_rejects_a_broken_host_program(tmp_path):
    """A host program with a misspelt ComputeConfig field is rejected, naming the field."""
    program, data = eltwise_add_program()
    text = HostPrinter(program, data).text()
    assert ".math_fidelity = " in text
    broken = text.replace(".math_fidelity = ", ".math_fidelty = ", 1)
    (tmp_path / "main.cpp").write_text(broken)
    (tmp_path / "host_checks.hpp").write_text(emit_host_checks())
    result = check_host(tmp_path / "main.cpp")
    assert result.rejected, result.output
    assert "math_fidelty" in result.output


def test_symbolic_runtime_values_semaphores_and_sharding():
    program, data = eltwise_add_program()
    cores = CoreRangeSet([CoreRange((0, 0), (1, 0))])
    program.create_semaphore(cores, 1)
    writer = program.kernels[1]
    program.set_common_runtime_args(writer, [NocX(CoreCoord(1, 0)), NocY(CoreCoord(1, 0))])
    program.add_buffer("staging", (1, 1, 64, 128), "bfloat16", buffer_type="L1", role="scratch",
                       memory_config=MemoryConfig("HEIGHT_SHARDED", "L1", ShardSpec(cores, (32, 128))))
    program.add_buffer("blocks", (2, 64, 64), "bfloat16", buffer_type="L1", role="scratch",
                       memory_config=MemoryConfig("BLOCK_SHARDED", "L1",
                                                  nd_shard_spec=NdShardSpec((1, 32, 64), cores)))
    program.create_circular_buffer(cores, 24, 2048, 2, "bfloat16", name="staged", backing_buffer="staging")
    program.kernels[2].defines = {"ELTWISE_OP": "add_tiles", "QUOTED": 'say "hi"'}
    text = HostPrinter(program, data).text()   # Program.validate() cannot size sharded L1 buffers yet
    assert (".set_page_size(24, 2048).set_globally_allocated_address(*staging->get_reference_buffer()));"
            in text)
    assert '.defines = {{"ELTWISE_OP", "add_tiles"}, {"QUOTED", "say \\"hi\\""}}' in text
    assert ("const uint32_t core_1_0_noc_x = static_cast<uint32_t>(mesh->worker_core_from_logical_core("
            "CoreCoord{1, 0}).x);") in text
    assert "SetCommonRuntimeArgs(program, writer, {core_1_0_noc_x, core_1_0_noc_y});" in text
    assert "const uint32_t semaphore_0 = CreateSemaphore(program, CoreRange({0, 0}, {1, 0}), 1);" in text
    # HEIGHT_SHARDED: shards of 32x128 (1x4 tiles) of a 2x4-tile tensor
    assert "ShardSpecBuffer(CoreRangeSet(CoreRange({0, 0}, {1, 0})), {32, 128}, ShardOrientation::ROW_MAJOR," in text
    assert "{32, 32}, {2, 4})," in text and "TensorMemoryLayout::HEIGHT_SHARDED)" in text
    # ND: a 2x2x2-tile tensor in 1x1x2-tile shards; squeezed as the device does, 8 pages in shards of 2
    assert "tt::tt_metal::Shape({8}), tt::tt_metal::Shape({2})," in text
    assert "ShardDistributionStrategy::ROUND_ROBIN_1D" in text


def test_host_data_mistakes_name_the_buffer():
    program, data = eltwise_add_program()
    with pytest.raises(ProgramError, match=r"HostData.inputs\['a'\] holds 10 bytes but buffer 'a' is 16384 bytes"):
        emit_host(program, HostData(inputs={**data.inputs, "a": b"0123456789"}, outputs=data.outputs))
    with pytest.raises(ProgramError, match=r"add HostData.inputs\['b'\]"):
        emit_host(program, HostData(inputs={"a": data.inputs["a"]}))
    with pytest.raises(ProgramError, match="no buffer named 'c'"):
        emit_host(program, HostData(inputs={**data.inputs, "c": b""}))
    with pytest.raises(ProgramError, match=r"buffer 'a' has role 'input'; only output and inout"):
        emit_host(program, HostData(inputs=data.inputs, outputs={"a": Golden(data.inputs["a"])}))
    with pytest.raises(ProgramError, match="min_pcc"):
        Golden(b"", min_pcc=2.0)


def test_write_project_lays_out_what_main_cpp_reads(tmp_path):
    program, data = eltwise_add_program()
    paths = write_project(program, tmp_path / "eltwise_add", data)
    root = tmp_path / "eltwise_add"
    assert sorted(str(p.relative_to(root)) for p in paths) == sorted([
        "reader_binary.cpp", "writer_tiles.cpp", "eltwise_add.cpp", "main.cpp",
        "host_checks.hpp", "CMakeLists.txt", "data/a.bin", "data/b.bin", "data/out.golden.bin"])
    main = (root / "main.cpp").read_text()
    for relative in re.findall(r'PROJECT_DIR "/([^"]+)"', main):
        if not relative.endswith(".out.bin"):
            assert (root / relative).exists(), relative
    assert (root / "data/a.bin").read_bytes() == data.inputs["a"]
    assert (root / "data/out.golden.bin").read_bytes() == data.outputs["out"].data


@pytest.fixture(scope="module")
def project_checks(tmp_path_factory) -> dict:
    """check-kernel results of every kernel file of the eltwise-add project, with the compile-time
    arguments its host gives it (TensorAccessorArgs expanded)."""
    program, data = eltwise_add_program()
    folder = tmp_path_factory.mktemp("project")
    write_project(program, folder, data)
    jobs, names = [], []
    for k in program.kernels:
        if k.source_file not in names:
            names.append(k.source_file)
            jobs.append((folder / k.source_file, "compute" if k.is_compute else "reader",
                         accessor_compile_args(program, k)))
    assert jobs[0][2] == [2, 2048, 2, 2048]     # two DRAM interleaved accessors, pages aligned to 32 B
    return dict(zip(names, check_kernels(jobs)))


@pytest.mark.parametrize("source", ["reader_binary.cpp", "writer_tiles.cpp", "eltwise_add.cpp"])
def test_project_kernels_compile_with_their_compile_time_args(project_checks, source):
    require_accepted(project_checks[source])


# --- host_checks.hpp compiled alone and run on bytes from numpy -------------------------------------

# tt::DataFormat values the driver declares (so it builds without the host API); test_host_passes_check_host
# asserts them against the real enum
DRIVER_FORMATS = {"Float32": 0, "Float16_b": 5, "Bfp8_b": 6, "Bfp4_b": 7, "Int32": 8, "UInt16": 9, "UInt32": 24,
                  "UInt8": 30}
CHECK_DRIVER = ("#include <cstdint>\nnamespace tt { enum class DataFormat : uint8_t { "
                + ", ".join(f"{k} = {v}" for k, v in DRIVER_FORMATS.items()) + " }; }\n") + r"""
#include "host_checks.hpp"
int main(int argc, char** argv) {
    const auto format = static_cast<tt::DataFormat>(std::stoi(argv[1]));
    const size_t size = std::stoul(argv[2]);
    std::vector<uint8_t> got = read_bytes(argv[3], size), want = read_bytes(argv[4], size);
    if (argc > 8) {
        for (double v : host_checks::decode_values(got, format, 1024)) std::printf("%a\n", v);
        return 0;
    }
    return compare_output("out", got, want, format, 1024, std::stod(argv[5]), std::stod(argv[6]),
                          std::stod(argv[7])) ? 0 : 1;
}
"""


@pytest.fixture(scope="module")
def checker(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    folder = tmp_path_factory.mktemp("checks")
    (folder / "host_checks.hpp").write_text(emit_host_checks())
    (folder / "driver.cpp").write_text(CHECK_DRIVER)
    built = subprocess.run(["g++", "-std=c++20", "-O1", "-Wall", "-Werror", str(folder / "driver.cpp"), "-o",
                            str(folder / "driver")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr

    def run(fmt: int, got: bytes, want: bytes, rtol=0.01, atol=0.01, pcc=0.999, decode=False):
        (folder / "got.bin").write_bytes(got)
        (folder / "want.bin").write_bytes(want)
        args = [str(folder / "driver"), str(fmt), str(len(got)), str(folder / "got.bin"), str(folder / "want.bin"),
                str(rtol), str(atol), str(pcc)] + (["decode"] if decode else [])
        return subprocess.run(args, capture_output=True, text=True)

    return run


FLOAT32, FLOAT16_B, BFP8_B, BFP4_B, INT32 = 0, 5, 6, 7, 8


def test_checks_decode_bfloat16_float32_and_int32_like_numpy(checker):
    values = np.random.default_rng(3).standard_normal(2048).astype(np.float32) * 100
    for fmt, raw, expected in [
        (FLOAT16_B, bf16_bytes(values), values.astype(ml_dtypes.bfloat16).astype(np.float64)),
        (FLOAT32, values.tobytes(), values.astype(np.float64)),
        (INT32, values.astype(np.int32).tobytes(), values.astype(np.int32).astype(np.float64)),
    ]:
        result = checker(fmt, raw, raw, decode=True)
        decoded = np.array([float.fromhex(v) for v in result.stdout.split()])
        np.testing.assert_array_equal(decoded, expected)


def _unpack_reference(codes: np.ndarray, shared: np.ndarray, bits: int) -> np.ndarray:
    """FACTS.md unpack: normalise the leading one of the magnitude to the top bit (shift s), exponent
    E - s, fraction (m << (s + 1)) masked, in the top fraction bits of a float32; zero if m == 0 or s > E."""
    magnitude = codes & ((1 << bits) - 1)
    sign = codes >> bits
    shift = (bits - 1) - np.floor(np.log2(np.maximum(magnitude, 1))).astype(np.int64)
    fraction = (magnitude.astype(np.int64) << (shift + 1)) & ((1 << bits) - 1)
    word = (sign.astype(np.int64) << 31) | ((shared - shift) << 23) | (fraction << (23 - bits))
    word[(magnitude == 0) | (shift > shared)] = 0
    return word.astype(np.uint32).view(np.float32).astype(np.float64)


def test_checks_decode_block_floats_tile_by_tile(checker):
    """bfp8_b: 64 exponent bytes (one per face row) then 1024 sign-magnitude bytes in face order;
    bfp4_b: the same exponents, then two 4-bit codes per byte, low nibble first."""
    exponents = np.repeat(np.array([127, 130, 120, 3], dtype=np.uint8), 16)
    shared = exponents[np.arange(1024) // 16].astype(np.int64)
    codes8 = np.arange(1024, dtype=np.uint32) % 256                              # every code, four times
    bfp8 = exponents.tobytes() + codes8.astype(np.uint8).tobytes()
    expected = _unpack_reference(codes8, shared, 7)
    # away from the bottom of the float32 range this is FACTS' value (-1)^s * m7 * 2^(E - 133)
    normal = shared > 8
    formula = np.where(codes8 & 0x80, -1.0, 1.0) * (codes8 & 0x7F) * np.exp2(shared - 133.0)
    np.testing.assert_array_equal(expected[normal], formula[normal])
    decoded = np.array([float.fromhex(v) for v in checker(BFP8_B, bfp8, bfp8, decode=True).stdout.split()])
    np.testing.assert_array_equal(decoded, expected)

    codes4 = np.arange(1024, dtype=np.uint32) % 16
    bfp4 = exponents.tobytes() + (codes4[0::2] | (codes4[1::2] << 4)).astype(np.uint8).tobytes()
    decoded4 = np.array([float.fromhex(v) for v in checker(BFP4_B, bfp4, bfp4, decode=True).stdout.split()])
    np.testing.assert_array_equal(decoded4, _unpack_reference(codes4, shared, 3))
    formula4 = np.where(codes4 & 0x8, -1.0, 1.0) * (codes4 & 0x7) * np.exp2(shared - 129.0)
    np.testing.assert_array_equal(decoded4[normal], formula4[normal])


def test_checks_pass_and_fail_with_tolerances_and_pcc(checker):
    rng = np.random.default_rng(11)
    want = rng.standard_normal(4096).astype(np.float32)
    close = want + rng.uniform(-0.004, 0.004, want.shape).astype(np.float32)
    ok = checker(FLOAT32, close.tobytes(), want.tobytes(), rtol=0.0, atol=0.005, pcc=0.999)
    assert ok.returncode == 0 and ok.stdout.strip().endswith("PASS")
    reported = re.search(r"max abs error (\S+), PCC (\S+), (\d+) outside", ok.stdout)
    assert float(reported.group(1)) == pytest.approx(np.abs(close - want).max(), rel=1e-5)
    assert float(reported.group(2)) == pytest.approx(np.corrcoef(close, want)[0, 1], abs=1e-6)
    assert reported.group(3) == "0"

    one_off = want.copy()
    one_off[17] += 1.0
    bad = checker(FLOAT32, one_off.tobytes(), want.tobytes(), atol=0.5, pcc=0.9)
    assert bad.returncode == 1 and "1 outside tolerance" in bad.stdout and bad.stdout.strip().endswith("FAIL")

    uncorrelated = rng.standard_normal(4096).astype(np.float32)
    loose = checker(FLOAT32, uncorrelated.tobytes(), want.tobytes(), atol=100.0, pcc=0.99)
    assert loose.returncode == 1 and "0 outside tolerance" in loose.stdout   # within atol, but PCC ~ 0

    nan = want.copy()
    nan[3] = np.nan
    assert checker(FLOAT32, nan.tobytes(), want.tobytes()).returncode == 1
    assert checker(FLOAT32, nan.tobytes(), nan.tobytes()).returncode == 0


# --- CMake ------------------------------------------------------------------------------------------

needs_cmake = pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("g++") is None,
                                 reason="needs cmake and a C++ compiler")

FAKE_PACKAGE = """
add_library(TT::Metalium INTERFACE IMPORTED)
set(TT-Metalium_FOUND TRUE)
"""


@needs_cmake
def test_cmake_without_tt_metalium_says_what_to_set(tmp_path):
    (tmp_path / "main.cpp").write_text("int main() { return 0; }\n")
    (tmp_path / "CMakeLists.txt").write_text(emit_cmake("eltwise add"))
    env = {"PATH": "/usr/bin:/bin"}
    result = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build")], capture_output=True,
                            text=True, env=env)
    assert result.returncode != 0
    assert "eltwise_add: TT-Metalium not found" in result.stderr
    assert "TT_METAL_HOME" in result.stderr and "CMAKE_PREFIX_PATH" in result.stderr


@needs_cmake
def test_cmake_falls_back_to_a_tt_metal_build_in_tt_metal_home(tmp_path):
    home = tmp_path / "tt-metal"
    (home / "build" / "lib").mkdir(parents=True)
    project = tmp_path / "project"
    project.mkdir()
    (project / "main.cpp").write_text("int main() { return 0; }\n")
    (project / "CMakeLists.txt").write_text(emit_cmake("tilize"))
    configure = ["cmake", "-S", str(project), "-B", str(project / "build")]
    env = {"PATH": "/usr/bin:/bin", "TT_METAL_HOME": str(home)}
    missing = subprocess.run(configure, capture_output=True, text=True, env=env)
    assert missing.returncode != 0 and "has no build/lib/libtt_metal.so" in missing.stderr
    (home / "build" / "lib" / "libtt_metal.so").write_bytes(b"")
    shutil.rmtree(project / "build")
    found = subprocess.run(configure, capture_output=True, text=True, env=env)
    assert found.returncode == 0, found.stderr
    assert f"tilize: using the tt-metal build in {home / 'build'}" in found.stdout


@needs_cmake
def test_cmake_uses_the_tt_metalium_package_when_found(tmp_path):
    package = tmp_path / "prefix" / "lib" / "cmake" / "TT-Metalium"
    package.mkdir(parents=True)
    (package / "TT-MetaliumConfig.cmake").write_text(FAKE_PACKAGE)
    project = tmp_path / "project"
    project.mkdir()
    (project / "main.cpp").write_text("int main() { return 0; }\n")
    (project / "CMakeLists.txt").write_text(emit_cmake("eltwise_add"))
    result = subprocess.run(["cmake", "-S", str(project), "-B", str(project / "build"),
                             f"-DCMAKE_PREFIX_PATH={tmp_path / 'prefix'}"], capture_output=True, text=True,
                            env={"PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    assert "eltwise_add: using the TT-Metalium package" in result.stdout
    cache = (project / "build" / "CMakeCache.txt").read_text()
    assert "CMAKE_PROJECT_NAME:STATIC=eltwise_add" in cache
    built = subprocess.run(["cmake", "--build", str(project / "build")], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    flags = (project / "build" / "CMakeFiles" / "eltwise_add.dir" / "flags.make").read_text()
    assert f'-DPROJECT_DIR=\\"{project}\\"' in flags and "-std=" in flags and "20" in flags


def test_buffers_whose_data_files_would_clash_are_refused():
    program, data = eltwise_add_program()
    program.add_buffer("a/b", (32, 32), "bfloat16", role="scratch")
    program.add_buffer("a_b", (32, 32), "bfloat16", role="scratch")
    with pytest.raises(ProgramError, match=r"buffers 'a/b' and 'a_b' would share the data file data/a_b.bin"):
        emit_host(program, data)


def test_more_semaphores_on_a_core_than_tt_metal_gives_is_a_warning_when_the_project_is_written(tmp_path):
    """TT-Metal 0.69 gives a core 16 semaphores: a program creating more on one core still gets its
    project (the simulator runs it), with a warning that its main.cpp would stop at CreateSemaphore."""
    program, data = eltwise_add_program()
    for _ in range(17 - len(program.semaphores)):
        program.create_semaphore(CoreRangeSet([CoreRange(CoreCoord(0, 0), CoreCoord(0, 0))]))
    with pytest.warns(UserWarning, match=r"creates 17 semaphores on core \(0,0\), but TT-Metal gives a core 16"):
        write_project(program, tmp_path, data)
    assert (tmp_path / "main.cpp").exists()
