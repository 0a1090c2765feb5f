"""The tuning examples on small shapes, and ``tilefold tune`` on a script."""

import importlib.util
import json
from pathlib import Path

import numpy as np

from tilefold.autotuner import tuning_defaults
from tilefold.cli.main import main as cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tilelang_gemm_tunes_and_the_best_kernel_matches_numpy():
    example = _load(EXAMPLES / "tilelang" / "autotune_gemm.py", "autotune_gemm_example")
    assert len(example.configs(2048, 2048, 2048)) >= 24
    example.matmul.configs = lambda M, N, K: [c for c in example.configs(M, N, K) if c["block_K"] == 32][:4]
    with tuning_defaults(engine="serial", cache=False):
        result = example.main(128, 128, 128)
    assert len(result.rows) == 4 and result.best is not None
    assert all(r.check == "pass" for r in result.rows if r.ok)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((128, 128)).astype(np.float32)
    b = rng.standard_normal((128, 128)).astype(np.float32)
    got = np.asarray(result.kernel(a, b), np.float32)
    np.testing.assert_allclose(got, example.reference(a, b), rtol=3e-2, atol=0.3)


def test_ttl_matmul_tunes_over_its_constants():
    example = _load(EXAMPLES / "ttl" / "autotune_matmul.py", "autotune_matmul_example")
    assert len(example.CONFIGS) >= 8
    example.make_matmul.configs = [c for c in example.CONFIGS if c["k_block"] == 1][:4]
    with tuning_defaults(engine="serial", cache=False):
        result, got, want = example.main(64, 64, 64)
    assert len(result.rows) == 4 and len(result.passed) == 4
    np.testing.assert_allclose(got, want, rtol=3e-2, atol=0.2)


SCRIPT = '''
import numpy as np
import tilefold
import tilefold.language as T


@tilefold.autotune(configs=[{"block": 32}, {"block": 64}, {"block": 4096}],
                   ref_prog=lambda a: a.astype(np.float32) * 2)
@tilefold.jit(out_idx=[-1])
def double(M, block=32):
    @T.prim_func
    def kernel(A: T.Tensor((M, M), "bfloat16"), C: T.Tensor((M, M), "bfloat16")):
        with T.Kernel(T.ceildiv(M, block), T.ceildiv(M, block)) as (bx, by):
            A_s = T.alloc_shared((block, block), "bfloat16")
            C_l = T.alloc_fragment((block, block), "bfloat16")
            T.copy(A[by * block, bx * block], A_s)
            for i, j in T.Parallel(block, block):
                C_l[i, j] = A_s[i, j] + A_s[i, j]
            T.copy(C_l, C[by * block, bx * block])
    return kernel


double(64)
'''


def test_the_tune_command_prints_a_ranked_table(tmp_path, capsys):
    script = tmp_path / "tune_me.py"
    script.write_text(SCRIPT)
    out_json, trace = tmp_path / "rows.json", tmp_path / "best.json"
    status = cli(["tune", str(script), "--engine", "serial", "--cache-dir", str(tmp_path / "cache"),
                  "--json", str(out_json), "--trace", str(trace), "--quiet"])
    printed = capsys.readouterr().out
    assert status == 0
    assert "autotune double(64): 3 configurations, 2 passed, 1 rejected" in printed
    assert "rejected (L1)" in printed and "trace of the best configuration" in printed
    lines = [line for line in printed.splitlines() if line.strip().startswith(("1 ", "2 "))]
    assert len(lines) == 2
    rows = json.loads(out_json.read_text())[0]["rows"]
    assert [r["status"] for r in rows] == ["ok", "ok", "rejected"]
    assert trace.exists()
    # The same sweep again: every result from the cache.
    cli(["tune", str(script), "--engine", "serial", "--cache-dir", str(tmp_path / "cache"), "--quiet"])
    assert "0 simulated, 2 from the cache" in capsys.readouterr().out


def test_the_tune_command_on_a_script_that_tunes_nothing(tmp_path, capsys):
    script = tmp_path / "plain.py"
    script.write_text("import tilefold.language as T\nprint('hello')\n")
    assert cli(["tune", str(script)]) == 1
    assert "ran no autotuned kernel" in capsys.readouterr().err
