"""``tilefold compile`` of a script whose operation calls a user's C++ (``ttl.call_extern_func``): the
call cannot be simulated, so its project is written with the inputs and no expected outputs (the host
program writes the outputs and their checksums, unchecked; check-host and check-kernel accept it with
the real header), one line says so, and the script stops at the first read of the outputs — printed
with its line — while a script that never reads them goes on and compiles its later calls."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from tilefold.cli.main import main

HEADER = """#pragma once
#include <cstdint>

namespace ext {
// checks at compile time that it is given the output buffer's geometry
template <typename Out>
inline void note(uint32_t in_cb, uint32_t factor) {
    static_assert(Out::pages_per_block == 1 && Out::block_count == 2, "one tile per block, two blocks");
    (void)in_cb;
    (void)factor;
}
}  // namespace ext
"""

PRELUDE = """import numpy as np
import ttl
import ttnn


@ttl.operation(grid=(1, 1))
def extern_abs(inp, out):
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with in_dfb.wait() as i, out_dfb.reserve() as o:
            ttl.call_extern_func("ext.hpp", "ext::note", func_args=[in_dfb, 3],
                                 template_args=[ttl.dfb_descriptor(out_dfb)])
            o.store(ttl.math.abs(i))

    @ttl.datamovement()
    def read():
        with in_dfb.reserve() as b:
            ttl.copy(inp[0, 0], b).wait()

    @ttl.datamovement()
    def write():
        with out_dfb.wait() as b:
            ttl.copy(b, out[0, 0]).wait()


@ttl.operation(grid=(1, 1))
def plain_abs(inp, out):
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with in_dfb.wait() as i, out_dfb.reserve() as o:
            o.store(ttl.math.abs(i))

    @ttl.datamovement()
    def read():
        with in_dfb.reserve() as b:
            ttl.copy(inp[0, 0], b).wait()

    @ttl.datamovement()
    def write():
        with out_dfb.wait() as b:
            ttl.copy(b, out[0, 0]).wait()


def tensor(values):
    return ttnn.from_numpy(np.asarray(values, np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


x_values = np.random.default_rng(7).standard_normal((32, 32)).astype(np.float32)
x = tensor(x_values)
y = tensor(np.zeros((32, 32)))
"""


def _compile(capsys, tmp_path, body: str):
    (tmp_path / "ext.hpp").write_text(HEADER)
    script = tmp_path / "script.py"
    script.write_text(PRELUDE + body)
    out = tmp_path / "out"
    code = main(["compile", str(script), "-o", str(out)])
    stdout, stderr = capsys.readouterr()
    return code, stdout, stderr, script, out


def _line(script, text: str) -> int:
    return next(i for i, line in enumerate(script.read_text().splitlines(), 1) if line.startswith(text))


def _note(project) -> str:
    return (f"{project}: not simulated: calls C++ from ext.hpp; the host program writes the outputs without "
            "checking them")


def test_the_project_is_written_unchecked_and_the_script_stops_at_the_read(capsys, tmp_path, monkeypatch, check_kernel):
    from checkhost import check_hosts, require_hosts_accepted
    import tilefold.compiler as compiler
    from tilefold.layout.host import to_device_pages

    programs = []
    original = compiler.write_ttl_project

    def recording(compiled, folder, *rest, **kwargs):
        programs.append(compiled.program)
        return original(compiled, folder, *rest, **kwargs)

    monkeypatch.setattr(compiler, "write_ttl_project", recording)
    code, stdout, stderr, script, out = _compile(capsys, tmp_path, """
extern_abs(x, y)
print("after the call")
values = ttnn.to_numpy(y)
print("never printed")
""")
    assert code == 0, stderr
    project = out / "extern_abs"
    call, read = _line(script, "extern_abs(x, y)"), _line(script, "values = ")
    lines = stdout.splitlines()
    assert lines[0] == "after the call"            # the script goes on until it reads the outputs
    assert lines[1] == _note(project)
    assert lines[2].startswith(f"stopped: {script}:{read}: this tensor is written by extern_abs() at {script}:{call}, "
                               "which calls C++ from ext.hpp: the simulator cannot run that")
    assert lines[2].endswith("tilefold compile stops the script at this read, so operation calls after it have no "
                             "project")
    assert "never printed" not in stdout and lines[-1].startswith("wrote ")

    # kernels, the copied header, host program, CMake and the inputs; no golden outputs
    assert (project / "ext.hpp").read_text() == HEADER
    assert '#include "ext.hpp"' in (project / "compute.cpp").read_text()
    assert {p.name for p in (project / "data").iterdir()} == {"inp.bin", "out.bin"}
    x_values = np.random.default_rng(7).standard_normal((32, 32)).astype(np.float32)     # the script's draw
    assert (project / "data" / "inp.bin").read_bytes() == to_device_pages(x_values, "bfloat16").tobytes()
    assert (project / "data" / "out.bin").read_bytes() == bytes(2048)     # the output's initial zeros
    main_cpp = (project / "main.cpp").read_text()
    assert "WITHOUT CHECKING THEM: this program\n// calls C++ from ext.hpp, which tilefold cannot simulate" in main_cpp
    assert 'print_checksum("out", out_output, PROJECT_DIR "/data/out.out.bin");' in main_cpp
    assert "golden.bin\"" not in main_cpp and "compare_output(" not in main_cpp
    assert 'std::printf("DONE: outputs written, not checked\\n");\n    return 0;' in main_cpp
    assert (project / "CMakeLists.txt").is_file()

    (program,) = programs
    jobs = []
    for k in program.kernels:
        role = "compute" if k.is_compute else ("reader" if k.processor == "RISCV_0" else "writer")
        jobs.append((project / k.source_file, role, check_kernel.accessor_compile_args(program, k) or None))
    for result in check_kernel.check_kernels(jobs):
        check_kernel.require_accepted(result)
    require_hosts_accepted(check_hosts([project / "main.cpp"]))


def test_a_script_that_never_reads_the_outputs_goes_on(capsys, tmp_path):
    code, stdout, stderr, script, out = _compile(capsys, tmp_path, """
extern_abs(x, y)
z = tensor(np.zeros((32, 32)))
plain_abs(x, z)
got = ttnn.to_numpy(z)
assert np.allclose(got, np.abs(ttnn.to_numpy(x)), rtol=0, atol=0)
extern_abs(z, tensor(np.zeros((32, 32))))
print("the script ended")
""")
    assert code == 0, stderr
    lines = stdout.splitlines()
    assert lines[:3] == ["the script ended", _note(out / "extern_abs"), _note(out / "extern_abs_2")]
    assert not any(line.startswith("stopped:") for line in lines)
    # the simulated call keeps its expected output; the two C++ calls have none
    assert (out / "plain_abs" / "data" / "out.golden.bin").is_file()
    assert "compare_output(" in (out / "plain_abs" / "main.cpp").read_text()
    for name in ("extern_abs", "extern_abs_2"):
        assert not list((out / name / "data").glob("*.golden.bin"))
    # the second C++ call's input is the simulated output of plain_abs
    assert (out / "extern_abs_2" / "data" / "inp.bin").read_bytes() == \
        (out / "plain_abs" / "data" / "out.golden.bin").read_bytes()


@pytest.mark.parametrize("later", ["plain_abs(y, z)", "plain_abs(z, y)"])
def test_a_later_operation_given_the_outputs_stops_at_its_call(capsys, tmp_path, later):
    """As an input, or as an output again (an operation's output keeps what its kernels do not
    write, so it is read too)."""
    code, stdout, stderr, script, out = _compile(capsys, tmp_path, f"""
extern_abs(x, y)
z = tensor(np.zeros((32, 32)))
{later}
""")
    assert code == 0, stderr
    lines = stdout.splitlines()
    assert lines[0] == _note(out / "extern_abs")
    assert lines[1].startswith(f"stopped: {script}:{_line(script, later)}: this tensor is written by extern_abs()")
    assert sorted(p.name for p in out.iterdir()) == ["extern_abs"]


def test_tilefold_sim_still_stops_at_the_call(capsys, tmp_path):
    (tmp_path / "ext.hpp").write_text(HEADER)
    script = tmp_path / "script.py"
    script.write_text(PRELUDE + "extern_abs(x, y)\n")
    code = main(["sim", str(script)])
    _, stderr = capsys.readouterr()
    assert code == 1
    assert "the simulator cannot run C++ from ext.hpp; ext::note() is a function of that header" in stderr


def test_host_data_is_either_golden_or_not_simulated():
    from tilefold.codegen.cpp import HostData
    from tilefold.errors import ProgramError
    from tilefold.arch import get_arch
    from tilefold.program import Program

    program = Program("p", get_arch(None))
    program.add_buffer("out", (32, 32), "bfloat16", role="output")
    with pytest.raises(ProgramError, match="says the program was not simulated"):
        HostData(outputs={"out": bytes(2048)}, not_simulated="calls C++ from ext.hpp").check(program)


def test_print_checksum_is_fnv1a_of_the_output_bytes(tmp_path):
    from tilefold.codegen.cpp import emit_host_checks

    if shutil.which("g++") is None:
        pytest.fail("g++ is not installed")
    (tmp_path / "host_checks.hpp").write_text(emit_host_checks())
    (tmp_path / "driver.cpp").write_text("""#include <cstdint>
namespace tt { enum class DataFormat : uint8_t { Float32, Float16_b, Bfp8_b, Bfp4_b, Int32, UInt16, UInt32, UInt8 }; }
#include "host_checks.hpp"
#include <string>
int main(int argc, char** argv) {
    std::vector<uint8_t> bytes = read_bytes(argv[1], std::stoul(argv[2]));
    print_checksum("out", bytes, "data/out.out.bin");
    return 0;
}
""")
    built = subprocess.run(["g++", "-std=c++20", "-Wall", "-Werror", str(tmp_path / "driver.cpp"), "-o",
                            str(tmp_path / "driver")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    data = np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8).tobytes()
    (tmp_path / "out.bin").write_bytes(data)
    run = subprocess.run([str(tmp_path / "driver"), str(tmp_path / "out.bin"), str(len(data))],
                         capture_output=True, text=True)
    expected = 0xcbf29ce484222325
    for byte in data:
        expected = ((expected ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    assert run.stdout == f"out: 4096 bytes written to data/out.out.bin, FNV-1a checksum {expected:016x} (not checked)\n"
