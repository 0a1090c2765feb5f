"""Start-up cost: the CLI and the TT-Lang front end import only what they use."""

import subprocess
import sys

import pytest


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True).stdout
    return set(out.split())


@pytest.mark.parametrize("argv", [["--help"], ["sim", "--help"], ["run", "--help"], ["compile", "--help"]])
def test_cli_help_imports_no_compiler_simulator_or_matplotlib(argv):
    code = ("import contextlib, io\nfrom tilefold.cli.main import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    try:\n        main({argv!r})\n"
            "    except SystemExit:\n        pass")
    loaded = _modules_after(code)
    assert not {m for m in loaded if m.split(".")[0] in ("matplotlib", "xdsl", "torch")}
    assert not {m for m in loaded if m.startswith(("tilefold.sim", "tilefold.passes", "tilefold.ir"))}


def test_layout_without_png_does_not_import_matplotlib():
    code = ("import contextlib, io\nfrom tilefold.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    main(['layout', '64,64'])")
    assert "matplotlib" not in _modules_after(code)


@pytest.mark.parametrize("module", ["tilefold.ttl", "tilefold.ttnn"])
def test_import_ttl_does_not_import_the_simulator_passes_or_xdsl(module):
    # xDSL builds its dialects' classes when imported (most of a second): only a call builds IR
    loaded = _modules_after(f"import {module}")
    assert not {m for m in loaded if m.startswith(("tilefold.sim", "tilefold.passes", "tilefold.codegen",
                                                   "tilefold.ir", "tilefold.compiler"))}
    assert not {m for m in loaded if m.split(".")[0] in ("matplotlib", "xdsl")}
