"""``tilefold compile OP`` and ``tilefold run OP`` for the built-in factories: files written,
work split printed, results checked, the estimate reported."""

from __future__ import annotations

import pytest

from tilefold.cli.main import main


def test_compile_tilize_writes_the_project_and_prints_the_split(tmp_path, capsys):
    out = tmp_path / "tilize"
    assert main(["compile", "-o", str(out), "tilize", "--shape", "1,1,256,512"]) == 0
    printed = capsys.readouterr().out
    assert "8 cores, 16 tiles per block" in printed
    for name in ("reader.cpp", "compute.cpp", "writer.cpp", "main.cpp", "CMakeLists.txt",
                 "data/src.bin", "data/dst.golden.bin"):
        assert (out / name).is_file(), name
    assert (out / "data" / "src.bin").stat().st_size == 256 * 512 * 2


def test_compile_prints_the_cliff_core(tmp_path, capsys):
    assert main(["compile", "-o", str(tmp_path / "t"), "tilize", "--shape", "1,1,3232,64"]) == 0
    printed = capsys.readouterr().out
    assert "51 cores" in printed and "cliff core (2,6) with 1 block" in printed


@pytest.mark.parametrize("argv", [
    ["tilize", "--shape", "1,1,256,512"],
    ["tilize", "--shape", "2,3,64,50", "--dtype", "float32"],
    ["untilize", "--shape", "1,1,96,64"],
    ["eltwise", "--op", "add", "--shape", "1,1,256,512"],
    ["eltwise", "--op", "mul", "--shape", "64,64", "--grid", "2,2"],
    ["matmul", "--shape", "128,256,64"],
    ["matmul", "--shape", "64,128,64", "--fp32-dest-acc-en", "--math-fidelity", "HiFi2"],
])
def test_run_prints_pass_estimate_cores_and_dram_bytes(argv, capsys):
    assert main(["run", *argv]) == 0
    printed = capsys.readouterr().out
    assert "dst: PASS" in printed
    assert "estimated device time (cost model)" in printed
    assert "cores used:" in printed and "DRAM traffic:" in printed


def test_run_on_blackhole(capsys):
    assert main(["run", "--arch", "blackhole", "tilize", "--shape", "1,1,3232,64"]) == 0
    printed = capsys.readouterr().out
    assert "on 11x10" in printed and "dst: PASS" in printed and "on p150" in printed


@pytest.mark.parametrize("argv, words", [
    (["run", "tilize", "--shape", "1,1,64,64", "--dtype", "bfloat8_b"], "invalid choice"),
])
def test_option_mistakes_are_usage_errors(argv, words, capsys):
    with pytest.raises(SystemExit):
        main(argv)
    assert words in capsys.readouterr().err


@pytest.mark.parametrize("argv, words", [
    (["run", "tilize", "--shape", "1,1,64,64", "--grid", "9,9"], "does not fit in the 8x8 compute grid"),
    (["run", "matmul", "--shape", "64,64"], "must be M,K,N"),
    (["run", "matmul", "--shape", "64,64,64", "--subblock", "3,1"], "sub-block 3x1"),
])
def test_user_mistakes_print_one_message(argv, words, capsys):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
