"""`tilefold compile` / `tilefold run` on TileLang scripts, IR dumps, and the jit callable."""

import json

import numpy as np
import pytest
from checkhost import check_hosts, require_hosts_accepted
from tilelang_helpers import EXAMPLES, load_example, random_bf16

from tilefold.codegen.plan import load_tt_plan
from tilefold.errors import KernelError
from tilefold.compiler import compile_prim_func
from tilefold.cli.tilelang_scripts import _load, compile_script, run_script, script_kernels
from tilefold.passes.pipelines import TILELANG


def test_compile_script_writes_the_artifacts(tmp_path):
    written = compile_script(EXAMPLES / "matmul_256.py", tmp_path)
    names = {p.relative_to(tmp_path).as_posix() for p in written}
    for required in ("reader.cpp", "compute.cpp", "writer.cpp", "main.cpp",
                     "CMakeLists.txt", "tt.plan.json", "data/A.bin", "data/B.bin", "data/C.golden.bin"):
        assert required in names
    main = (tmp_path / "main.cpp").read_text()
    assert '"/reader.cpp"' in main and "TensorAccessorArgs(*A).append_to" in main
    assert "SetRuntimeArgs(program, reader, CoreCoord{7, 7}" in main
    plan = load_tt_plan(tmp_path / "tt.plan.json", params=["A", "B", "C"], grid_tiles=[8, 8])
    assert len(plan["work_partition"]) == 64
    assert (tmp_path / "data" / "A.bin").stat().st_size == 64 * 2048


def test_compile_script_with_several_kernels(tmp_path):
    written = compile_script(EXAMPLES / "elementwise.py", tmp_path)
    assert {p.relative_to(tmp_path).parts[0] for p in written} == {"ADD", "FUSED", "add_tiles"}
    assert all((tmp_path / name / "tt.plan.json").exists() for name in ("ADD", "FUSED", "add_tiles"))


def test_print_ir_after_all(capsys, tmp_path):
    compile_script(EXAMPLES / "matmul_256.py", tmp_path, print_ir_after_all=True)
    out = capsys.readouterr().err
    dumps = [line.split("After ")[1].split(" //")[0] for line in out.splitlines() if "IR Dump After" in line]
    assert dumps == list(TILELANG)
    assert "tile.gemm" in out and "ttkernel.matmul_block" in out


def test_compile_script_without_kernels(tmp_path):
    script = tmp_path / "empty.py"
    script.write_text("import tilefold.language as T\n")
    with pytest.raises(KernelError) as info:
        compile_script(script, tmp_path / "out")
    assert str(info.value).startswith(f"{script}:1: ") and "defines no kernel" in str(info.value)


def test_run_script(capsys):
    assert run_script(EXAMPLES / "matmul_256.py", arch="blackhole") == 0
    assert "PASS" in capsys.readouterr().out


def test_run_script_reports_a_failed_check(tmp_path, capsys):
    script = tmp_path / "bad.py"
    script.write_text("assert 1 + 1 == 3\n")
    assert run_script(script) == 1
    assert f"{script}:1: check failed" in capsys.readouterr().err


def test_jit_inputs_only_all_arrays_and_errors():
    kernel = load_example("elementwise").ADD
    a, b = random_bf16((256, 512), 30), random_bf16((256, 512), 31)
    c = kernel(a, b)
    out = np.zeros((256, 512), np.float32)
    returned = kernel(a, b, out)
    assert returned is out
    np.testing.assert_array_equal(out, c.astype(np.float32))
    with pytest.raises(KernelError) as info:
        kernel(a[:, :256], b[:, :256])
    assert "argument 'A' of add has shape (256, 256); the kernel takes (256, 512)" in str(info.value)
    assert str(info.value).startswith(__file__)
    with pytest.raises(KernelError):
        kernel(a)


def test_jit_factory_compiles_once_per_shape():
    matmul = load_example("gemm").matmul
    assert matmul(64, 64, 64, 32, 32, 32) is matmul(64, 64, 64, 32, 32, 32)
    assert matmul(64, 64, 64, 32, 32, 32) is not matmul(96, 64, 64, 32, 32, 32)


def test_jit_accepts_torch_tensors():
    torch = pytest.importorskip("torch")
    kernel = load_example("elementwise").ADD
    a = torch.randn(256, 512, dtype=torch.bfloat16)
    b = torch.randn(256, 512, dtype=torch.bfloat16)
    c = kernel(a, b)
    assert isinstance(c, torch.Tensor) and c.dtype == torch.bfloat16
    assert torch.equal(c, a + b)


def test_compiled_kernel_rejects_wrong_inputs():
    compiled = compile_prim_func(load_example("matmul_256").matmul_256x256)
    from tilefold.errors import ProgramError

    with pytest.raises(ProgramError) as info:
        compiled.simulate({"A": np.zeros((256, 256))})
    assert "needs input 'B'" in str(info.value)
    assert json.dumps(compiled.plan())


def test_examples_run():
    for name in ("gemm", "elementwise", "softmax", "matmul_256"):
        load_example(name).main()


def test_every_example_host_program_passes_check_host(tmp_path):
    """``tilefold compile`` of every TileLang example that defines kernels with concrete shapes at
    module level (others build theirs in ``__main__`` and cannot be compiled as scripts): each
    main.cpp against the real 0.69 host API."""
    mains, compiled = [], []
    for example in sorted(EXAMPLES.glob("*.py")):
        if not script_kernels(_load(example)):
            continue
        compiled.append(example.stem)
        written = compile_script(example, tmp_path / example.stem)
        mains += [p for p in written if p.name == "main.cpp"]
    assert {"elementwise", "gemm", "matmul_256", "softmax"} <= set(compiled) and len(mains) >= len(compiled)
    require_hosts_accepted(check_hosts(mains))


def test_run_script_with_tilelang_imports(tmp_path, capsys):
    """A TileLang script's own imports (``import tilelang``, ``import tilelang.language as T``
    inside a kernel factory) run unchanged and give tilefold's modules."""
    script = tmp_path / "clamp.py"
    script.write_text('''import numpy as np
import tilelang


def clamp(N, block_N, dtype):
    import tilelang.language as T

    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=block_N) as bx:
            A_shared = T.alloc_shared([block_N], dtype)
            T.copy(A[bx * block_N], A_shared)
            for i in T.Parallel(block_N):
                A_shared[i] = T.clamp(A_shared[i], min_val=-0.5, max_val=0.5)
            T.copy(A_shared, B[bx * block_N])

    return main


a = np.linspace(-1, 1, 256, dtype=np.float32)
b = tilelang.compile(clamp(256, 128, "float32"), out_idx=[1])(a)
assert np.allclose(np.asarray(b), np.clip(a, -0.5, 0.5), atol=1e-2)
print("CLAMPED")
''')
    assert run_script(script) == 0
    assert "CLAMPED" in capsys.readouterr().out
    import sys
    assert "tilelang" not in sys.modules


def test_a_failed_check_a_library_raises_names_the_scripts_line_and_its_message(tmp_path, capsys):
    """``np.testing.assert_allclose`` (as ``torch.testing.assert_close``) fails inside the library:
    the report names the script's line, then the check's own mismatch report."""
    script = tmp_path / "close.py"
    script.write_text("import numpy as np\n\nnp.testing.assert_allclose([1.0, 2.0], [1.0, 2.5])\n")
    assert run_script(script) == 1
    err = capsys.readouterr().err
    assert f"{script}:3: check failed: np.testing.assert_allclose" in err
    assert "Mismatched elements: 1 / 2" in err


def test_tilefold_run_gives_a_script_its_own_arguments(tmp_path, capsys):
    """``tilefold run s.py --n 3``: options tilefold run does not have go to the script (``--n`` is no
    abbreviation of ``--numerics``), its own (``--arch``) stay tilefold's."""
    from tilefold.cli.main import main

    script = tmp_path / "args.py"
    script.write_text("import argparse\nimport tilefold.language as T\n\np = argparse.ArgumentParser()\n"
                      "p.add_argument('--n', type=int)\np.add_argument('--is_causal', action='store_true')\n"
                      "a = p.parse_args()\nprint('n', a.n, 'causal', a.is_causal)\n")
    assert main(["run", str(script), "--n", "3", "--is_causal", "--arch", "blackhole"]) == 0
    assert "n 3 causal True" in capsys.readouterr().out


@pytest.mark.parametrize("source, line, message", [
    ("import tilelang\nfrom tilelang import tvm\n", 2, "TVM is not part of tilefold"),
    ("import tilelang\nimport tilelang.tenstorrent\n", 2, "import tilelang.tenstorrent: tilefold has no such module"),
    ("import tilelang.language as T\n\nDTYPE = T.int4\n", 3, "T.int4 is a data type with no Tensix tile format"),
    ("import tilelang.language as T\n\nT.alloc_fragmnt\n", 3, "(closest: T.alloc_fragment"),
    ("import tilelang\ntilelang.disable_cache()\nK = tilelang.JITKernel\nk = tilelang.JITKernell\n", 4,
     "tilelang.JITKernell is not part of tilefold (closest: tilelang.JITKernel)"),
])
def test_names_tilefold_does_not_have_are_one_line_at_the_scripts_line(tmp_path, capsys, source, line, message):
    from tilefold.cli.main import main

    script = tmp_path / "names.py"
    script.write_text(source)
    assert main(["run", str(script)]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert f"{script}:{line}: " in err and message in err, err


def test_a_missing_name_is_still_an_attribute_error_to_hasattr():
    import tilefold
    import tilefold.language as T

    assert not hasattr(T, "int4") and not hasattr(tilefold, "no_such_name")
    assert hasattr(tilefold, "JITKernel") and hasattr(T, "float16")
