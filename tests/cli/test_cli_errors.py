"""Malformed command lines and failing scripts: one clean message and an exit status, never a
tilefold traceback. Scripts run with their own folder on ``sys.path``."""

from __future__ import annotations

import pytest

from tilefold.cli.main import main


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:          # argparse usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def script(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def no_traceback_of_tilefold(err: str) -> None:
    assert "tilefold/" not in err.replace("tilefold/cli", "")       # no frame of the package
    assert "site-packages" not in err


@pytest.mark.parametrize("argv, code, message", [
    (["run", "eltwise", "--shape", "1,,64"], 1, "--shape '1,,64' has an empty size"),
    (["compile", "eltwise", "--shape", "64,,64"], 1, "has an empty size"),
    (["layout", "-1,32"], 2, "-1,32: sizes must be positive"),
    (["run", "tilize", "--shape", "64,64", "--seed", "-3"], 2, "argument --seed: -3 is negative"),
    (["run", "eltwise", "--shape", "64,64", "--max-cycles", "0"], 2, "argument --max-cycles: 0 must be positive"),
    (["run", "eltwise", "--shape", "64,64", "--trace", "/nonexistent-folder/t.json"], 1,
     "--trace /nonexistent-folder/t.json: the folder /nonexistent-folder does not exist"),
    (["compile", "eltwise", "--shape", "64,64", "-o", "/proc/no/such"], 1, "-o /proc/no/such: cannot create"),
])
def test_bad_options_give_one_line(capsys, argv, code, message):
    got, _, err = run(capsys, *argv)
    assert got == code
    assert message in err
    assert "Traceback" not in err


def test_eltwise_too_big_for_dram_is_refused_before_making_data(capsys):
    code, _, err = run(capsys, "run", "eltwise", "--shape", "100000,100000")
    assert code == 1
    assert len(err.strip().splitlines()) == 1
    assert err.strip().endswith("buffer 'src0' (18.6 GiB) does not fit in DRAM: it needs 1.55 GiB in each of the 12 "
                                "banks, and a bank of n150 holds 1 GiB; use a smaller shape")


def test_trace_into_a_folder_is_refused(capsys, tmp_path):
    path = script(tmp_path, "ok.py", "import tilefold.ttl as ttl\n")
    code, _, err = run(capsys, "sim", path, "--trace", str(tmp_path))
    assert code == 1 and f"--trace {tmp_path}: is a folder" in err


@pytest.mark.parametrize("front_end", ["import tilefold.ttl as ttl", "import tilefold.language as T"])
@pytest.mark.parametrize("command", ["run", "compile"])
def test_script_syntax_error_is_one_line(capsys, tmp_path, front_end, command):
    path = script(tmp_path, "broken.py", f"{front_end}\nx = (1,\n")
    code, _, err = run(capsys, command, path, *(["-o", str(tmp_path / "out")] if command == "compile" else []))
    assert code == 1
    assert err.strip().splitlines() == [f"tilefold {command}: {path}:2: syntax error: '(' was never closed"] or \
        f"{path}:2:" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("front_end", ["import tilefold.ttl as ttl", "import tilefold.language as T"])
def test_script_bad_import_shows_only_the_scripts_frames(capsys, tmp_path, front_end):
    path = script(tmp_path, "bad_import.py", f"{front_end}\nimport no_such_module_xyz\n")
    code, _, err = run(capsys, "run", path)
    assert code == 1
    assert f'File "{path}", line 2, in <module>' in err
    assert err.rstrip().endswith("ModuleNotFoundError: No module named 'no_such_module_xyz'")
    no_traceback_of_tilefold(err)


def test_script_that_raises_shows_its_traceback_trimmed(capsys, tmp_path):
    path = script(tmp_path, "raises.py", "import tilefold.ttl as ttl\n\ndef f():\n    raise ValueError('boom')\n\nf()\n")
    code, _, err = run(capsys, "run", path)
    assert code == 1
    assert err.splitlines()[0] == "tilefold run: Traceback (most recent call last):"
    assert f'File "{path}", line 6, in <module>' in err and f'File "{path}", line 4, in f' in err
    assert err.rstrip().endswith("ValueError: boom")
    no_traceback_of_tilefold(err)


@pytest.mark.parametrize("body, last", [
    ("values = [1]\nprint(valuse)\n", "NameError: name 'valuse' is not defined. Did you mean: 'values'?"),
    ("import tilefold.ttnn as ttnn\nttnn.MathFidelity.HiFi5\n", "AttributeError: HiFi5. Did you mean: 'HiFi4'?"),
])
def test_script_misspelling_keeps_pythons_suggestion(capsys, tmp_path, body, last):
    path = script(tmp_path, "typo.py", "import tilefold.ttl as ttl\n" + body)
    code, _, err = run(capsys, "run", path)
    assert code == 1
    assert err.rstrip().endswith(last), err
    no_traceback_of_tilefold(err)


@pytest.mark.parametrize("front_end", ["import tilefold.ttl as ttl", "import tilefold.language as T"])
def test_run_puts_the_scripts_folder_on_sys_path(capsys, tmp_path, front_end):
    script(tmp_path, "helper_of_script.py", "VALUE = 41\n")
    path = script(tmp_path, "uses_helper.py", f"{front_end}\nimport helper_of_script\nprint('got', "
                                              "helper_of_script.VALUE + 1)\n")
    code, out, err = run(capsys, "run", path)
    assert code == 0, err
    assert "got 42" in out


@pytest.mark.parametrize("command", ["run", "compile", "sim"])
def test_a_script_that_is_not_utf8_is_one_line(capsys, tmp_path, command):
    path = tmp_path / "latin1.py"
    path.write_bytes(b"import tilefold.ttl as ttl\n# caf\xe9\n")
    code, _, err = run(capsys, command, str(path), *(["-o", str(tmp_path / "out")] if command == "compile" else []))
    assert code == 1 and "Traceback" not in err
    assert f"{path}: not a UTF-8 Python script (byte 32 is 0xe9); save it as UTF-8 text" in err
