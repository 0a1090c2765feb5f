"""What the command line needs around a user's script and output paths.

Reads: a script path, output paths, an exception raised while a script ran. Writes: nothing
but the folders it is asked to create. :func:`script_environment` runs a script the way
``python script.py`` would (its folder first on ``sys.path``); :func:`check_output_file` and
:func:`check_output_dir` reject unusable ``--trace`` / ``-o`` paths before any work is done;
:func:`exec_as_main` runs a script as ``__main__`` as ``python`` does (its globals live until the
process ends); :func:`run_as_main` does so and turns a failed ``assert`` in it into one line;
:func:`user_error_text` turns an exception the user's own code raised (a syntax error, a bad
import, a ``raise``) into the message to print: one line for a syntax error, else the user's
traceback without tilefold's or the standard library's frames. An exception raised inside
tilefold itself is a bug in tilefold and gets None (the caller re-raises it).
"""

from __future__ import annotations

import builtins
import io
import os
import sys
import sysconfig
import traceback
import types
from contextlib import contextmanager
from pathlib import Path

from tilefold.cli import process_exit
from tilefold.errors import TilefoldError
from tilefold.uncaught import exception_lines

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_LIBRARY_DIRS = tuple({os.path.abspath(p) + os.sep for p in (sysconfig.get_paths()["stdlib"],
                                                             sysconfig.get_paths()["purelib"],
                                                             sysconfig.get_paths()["platlib"],
                                                             os.path.join(sys.prefix, "bin"))})


# the arguments a script run from the command line gets after its name (its sys.argv[1:])
_SCRIPT_ARGS: list[list[str]] = [[]]


@contextmanager
def script_environment(path: str, args=()):
    """The script's folder first on ``sys.path`` while it runs, as ``python path args...`` does;
    ``args`` are what the script sees after its name in ``sys.argv`` (:func:`script_argv`)."""
    folder = str(Path(path).resolve().parent)
    saved = list(sys.path), _SCRIPT_ARGS[0]
    sys.path.insert(0, folder)
    _SCRIPT_ARGS[0] = list(args)
    try:
        yield
    finally:
        sys.path[:], _SCRIPT_ARGS[0] = saved


def script_argv(script) -> list[str]:
    """``sys.argv`` for running ``script``: its name, then the arguments it was given."""
    return [str(script), *_SCRIPT_ARGS[0]]


def check_output_file(path: str, option: str) -> None:
    """``path`` can be written as a file: its folder exists and is writable, it is not a folder."""
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise TilefoldError(f"{option} {path}: is a folder; give a file name")
    if not folder.is_dir():
        raise TilefoldError(f"{option} {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise TilefoldError(f"{option} {path}: not writable")


def check_output_dir(path: str | Path, option: str) -> None:
    """``path`` is (or can be created as) a writable folder."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise TilefoldError(f"{option} {path}: is a file; give a folder")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TilefoldError(f"{option} {path}: cannot create the folder ({exc.strerror})") from None
    if not os.access(p, os.W_OK):
        raise TilefoldError(f"{option} {path}: not writable")


# tilefold's versions of TT-Lang's result checks (assert_pcc, assert_allclose ...): an
# AssertionError they raise is the user's check failing, reported like the user's own assert
_CHECK_HELPERS = frozenset(os.path.join(_PACKAGE_DIR, *parts) for parts in (("cli", "sim_package.py"),
                                                                           ("ttl_utils", "correctness.py")))


def _is_library(filename: str) -> bool:
    if filename.startswith("<"):                 # <frozen importlib._bootstrap>, <string>
        return True
    return os.path.abspath(filename).startswith(_LIBRARY_DIRS)


def _is_tilefold(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_PACKAGE_DIR)


def user_error_text(exc: BaseException) -> str | None:
    """The message for an exception the user's code raised, or None when tilefold raised it."""
    if isinstance(exc, SyntaxError) and exc.filename and not _is_tilefold(exc.filename) \
            and not _is_library(exc.filename):
        return f"{exc.filename}:{exc.lineno}: syntax error: {exc.msg}"
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if not _is_library(f.filename)]
    if not own or _is_tilefold(own[-1].filename) and not (
            isinstance(exc, AssertionError) and os.path.abspath(own[-1].filename) in _CHECK_HELPERS):
        return None
    users = [f for f in frames if not _is_library(f.filename) and not _is_tilefold(f.filename)]
    lines = ["Traceback (most recent call last):"] + [
        line.rstrip("\n") for line in traceback.format_list(users)]
    return "\n".join(lines + exception_lines(exc))


def exec_as_main(path: str | Path) -> None:
    """Run the file as the ``__main__`` module, as ``python path`` does (``__file__`` absolute).
    Its globals outlive the run, as ``__main__``'s do: they are cleared when the process ends
    (:func:`tilefold.cli.process_exit.keep_until_exit`), so files the script left open in them
    are flushed then."""
    filename = os.path.abspath(path)
    with io.open_code(filename) as source:
        code = compile(source.read(), filename, "exec", dont_inherit=True)
    module = types.ModuleType("__main__")
    module.__dict__.update(__file__=filename, __cached__=None, __loader__=None, __package__=None,
                           __spec__=None, __builtins__=builtins)
    outer = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    try:
        exec(code, module.__dict__)
    finally:
        sys.modules["__main__"] = outer
        process_exit.keep_until_exit(module.__dict__)


def run_as_main(path: str | Path) -> int:
    """Run the script as ``__main__``: 0 when it finishes, its exit status when it exits, 1 when
    an ``assert`` in it fails, or a check it calls (``torch.testing.assert_close``, a profiler's
    ``assert_allclose``): printed as ``file:line: check failed: <the line>`` at the script's own
    line, then the check's message."""
    argv = sys.argv
    sys.argv = script_argv(path)
    try:
        exec_as_main(path)
    except AssertionError as exc:
        frames = traceback.extract_tb(exc.__traceback__)
        folder = os.path.dirname(os.path.abspath(path)) + os.sep
        users = [f for f in frames if os.path.abspath(f.filename).startswith(folder) and not _is_tilefold(f.filename)]
        users = users or [f for f in frames if not _is_library(f.filename) and not _is_tilefold(f.filename)]
        frame = (users or frames)[-1]        # the script's own line, also when a library's check failed
        message = str(exc).strip()
        print(f"{frame.filename}:{frame.lineno}: check failed: {frame.line}" + (f"\n{message}" if message else ""),
              file=sys.stderr)
        return 1
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    finally:
        sys.argv = argv
    return 0
