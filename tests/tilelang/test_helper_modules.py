"""TileLang's helper modules as TileLang examples import them: ``tilelang.profiler.do_bench``,
``tilelang.utils.tensor`` (``torch_assert_close``, ``get_tensor_supply``), ``tilelang.testing``,
an autotuned function's ``compile(...)``, and one clear error for ``from tilelang import tvm``."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold
import tilefold.language as T
from tilefold.profiler import do_bench
from tilefold.run.jit import jit
from tilefold.utils.tensor import TensorSupplyType, get_tensor_supply, torch_assert_close

N = 256


@jit(out_idx=[1])
def add_one(block: int = 64):
    @T.prim_func
    def kernel(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // block) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] + 1.0

    return kernel


def test_do_bench_gives_a_kernels_modeled_time_and_a_host_functions_wall_time():
    kernel = add_one(64)
    a = np.arange(N, dtype=np.float32)
    device_ms = do_bench(lambda: kernel(a))
    np.testing.assert_allclose(device_ms, kernel.last_result.perf.seconds * 1000.0)
    host_ms = do_bench(lambda: np.sort(np.random.default_rng(0).random(10000)))
    assert host_ms > 0 and host_ms != device_ms
    assert kernel.get_profiler().do_bench(lambda x: kernel(x)) == pytest.approx(device_ms)


def test_torch_assert_close_allows_a_share_of_mismatched_elements():
    a = np.zeros(1000, np.float32)
    b = a.copy()
    b[:1] = 1.0                       # one in a thousand
    assert torch_assert_close(a, b, max_mismatched_ratio=0.001)
    with pytest.raises(AssertionError, match=r"Too many mismatched elements: 1 > 0 .*first at index \(0,\)"):
        torch_assert_close(a, b, max_mismatched_ratio=0.0)


def test_a_tensor_supply_makes_inputs_of_a_parameters_shape():
    torch = pytest.importorskip("torch")

    class Param:
        shape, dtype = (4, 8), torch.float16

    ints = get_tensor_supply(TensorSupplyType.Integer)(Param())
    assert ints.shape == (4, 8) and ints.dtype == torch.float16 and ints.abs().max() <= 2
    assert (get_tensor_supply(TensorSupplyType.One)(Param()) == 1).all()


def test_testing_main_runs_the_scripts_tests(tmp_path, capsys):
    from tilefold.cli.tilelang_scripts import run_script

    script = tmp_path / "t.py"
    script.write_text("import tilelang\nimport tilelang.testing\n\nSEEN = []\n\n\n"
                      "@tilelang.testing.requires_cuda\ndef test_one():\n    SEEN.append(1)\n\n\n"
                      "def test_two():\n    assert SEEN == [1]\n\n\nif __name__ == '__main__':\n"
                      "    tilelang.testing.main()\n")
    assert run_script(script) == 0
    assert "2 tests passed" in capsys.readouterr().out


def test_tvm_is_one_clear_import_error():
    with pytest.raises(ImportError, match="TVM is not part of tilefold"):
        from tilefold import tvm  # noqa: F401


def test_an_autotuned_factory_compiles_as_given_or_with_its_best_configuration():
    tuned = tilefold.autotune(configs=[{"block": 32}, {"block": 64}], ref_prog=lambda a: a + 1.0)(add_one)
    a = np.arange(N, dtype=np.float32)
    given = tuned.compile(block=32)
    np.testing.assert_array_equal(given(a), a + 1.0)
    best = tuned.compile()
    np.testing.assert_array_equal(best(a), a + 1.0)


def test_a_script_importing_tvm_is_one_error_at_its_line(tmp_path, capsys):
    from tilefold.cli.main import main

    script = tmp_path / "uses_tvm.py"
    script.write_text("import tilelang\nimport tvm\n")
    assert main(["run", str(script)]) == 1
    err = capsys.readouterr().err
    assert f"{script}:2: import tvm: TVM is not part of tilefold" in err and "Traceback" not in err


def test_a_profilers_assert_allclose_allows_one_percent_of_the_elements_to_differ():
    """As TileLang's profiler: ``max_mismatched_ratio=0.01`` unless given."""
    kernel = add_one(64)
    off_by_one = lambda a: a + 1.0 + (np.arange(N) == 7) * 0.5       # noqa: E731  one element in 256
    kernel.get_profiler().assert_allclose(off_by_one)
    with pytest.raises(AssertionError, match="1 of 256 values differ"):
        kernel.get_profiler().assert_allclose(off_by_one, max_mismatched_ratio=0.0)


def test_a_script_importing_several_modules_on_one_line_is_a_tilelang_script(tmp_path):
    from tilefold.cli import tilelang_scripts
    from tilefold.cli.targets import script_front_end

    script = tmp_path / "s.py"
    script.write_text("import numpy as np, tilelang, tilelang.language as T\n")
    assert script_front_end(str(script)) is tilelang_scripts
