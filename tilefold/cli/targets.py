"""What ``tilefold compile`` / ``run`` / ``sim`` are pointed at: a built-in op or a kernel script.

Reads: the target argument and, for scripts, the script's source text. Writes: nothing.
A ``.py`` target is handed to the front end it imports (TT-Lang, TileLang or PyKernel), each
of which provides ``compile_script`` and ``run_script``; anything else names an op factory.
"""

from __future__ import annotations

import importlib
import itertools
import os
import re
from pathlib import Path

from tilefold.errors import TilefoldError

# the ``--arch`` choices every command takes (see ``tilefold.arch.get_arch``)
ARCH_HELP = "wormhole_b0 / n150 (default), n300, blackhole / p150 (an 11x10 grid), p150-full (13x10)"

_FRONT_ENDS = (
    ("ttl", re.compile(r"^\s*(import\s+(?:[\w.]+(?:\s+as\s+\w+)?\s*,\s*)*ttl\b|from\s+ttl\b|import\s+ttlang|from\s+ttlang|import\s+tilefold\.ttl|"
                       r"from\s+tilefold\s+import\s+.*\bttl\b|from\s+tilefold\.ttl|from\s+sim\s+import\s+\(?[\s\w,]*?\bttl\b)", re.M),
     "tilefold.cli.ttl_scripts"),
    ("tilelang", re.compile(r"^\s*(import\s+tilefold\.language|from\s+tilefold\s+import\s+language|"
                            r"import\s+(?:[\w.]+(?:\s+as\s+\w+)?\s*,\s*)*tilelang\b|from\s+tilelang)", re.M),
     "tilefold.cli.tilelang_scripts"),
    ("pykernel", re.compile(r"^\s*(from\s+tilefold\.pykernel|import\s+tilefold\.pykernel|"
                            r"from\s+tilefold\s+import\s+pykernel)", re.M),
     "tilefold.cli.pykernel_scripts"),
    # a script of host TT-NN calls only (from_torch, exp, add, to_torch ...) runs like a TT-Lang
    # script, whose runner provides ``import ttnn``
    ("ttnn", re.compile(r"^\s*(import\s+(?:[\w.]+(?:\s+as\s+\w+)?\s*,\s*)*(?:tilefold\.)?ttnn\b|from\s+ttnn\b|"
                        r"from\s+tilefold\.ttnn\b|from\s+tilefold\s+import\s+.*\bttnn\b)", re.M),
     "tilefold.cli.ttl_scripts"),
)


def positive_int(text: str) -> int:
    """An option that is a positive integer (argparse reports anything else)."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} must be positive")
    return value


def is_script(target: str) -> bool:
    return target.endswith(".py")


def script_front_end(path: str):
    """The front-end module that handles the script at ``path``."""
    p = Path(path)
    if not p.is_file():
        raise TilefoldError(f"no such kernel script: {path}")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TilefoldError(f"{path}: not a UTF-8 Python script (byte {exc.start} is 0x{exc.object[exc.start]:02x}); "
                            "save it as UTF-8 text") from None
    for source in itertools.chain([text], _local_imports(p, text)):
        for name, pattern, module in _FRONT_ENDS:
            if pattern.search(source):
                try:
                    return importlib.import_module(module)
                except ModuleNotFoundError as exc:
                    if exc.name == module:
                        raise TilefoldError(f"{path}: the {name} front end cannot compile scripts yet") from None
                    raise
    raise TilefoldError(f"{path}: no tilefold front end imported; import tilefold.ttl (or ttl, ttnn, tilefold.ttnn), "
                        "tilefold.language or tilefold.pykernel")


_IMPORTED = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", re.M)


# packages whose modules never hold a user's kernels: not read when looking for the front end
_LIBRARIES = {"torch", "numpy", "ml_dtypes", "pytest", "scipy", "pandas", "transformers"}


def _local_imports(script: Path, text: str, depth: int = 3):
    """The texts of the modules ``text`` imports from the script's own folder, the working folder
    or a ``PYTHONPATH`` folder (a package's ``__init__.py`` and module, as ``from helpers.ops
    import main`` finds them), and of the ones they import, ``depth`` levels deep: a script whose
    kernels live in its own modules, or in a package a test imports (``from examples.x import main``)."""
    folders = list(dict.fromkeys([script.resolve().parent, Path.cwd(),
                                  *(Path(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)]))
    found, todo = set(), [(text, depth)]
    while todo:
        source, left = todo.pop()
        for match in _IMPORTED.finditer(source):
            parts = (match.group(1) or match.group(2)).split(".")
            if parts[0] in _LIBRARIES:
                continue
            for folder in folders:
                for n in range(1, len(parts) + 1):
                    base = folder.joinpath(*parts[:n])
                    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
                        if candidate.is_file() and candidate not in found:
                            found.add(candidate)
                            module = candidate.read_text(encoding="utf-8", errors="replace")
                            yield module
                            if left > 1:
                                todo.append((module, left - 1))


def add_numerics_option(parser) -> None:
    """``--numerics faithful|fast`` (see :mod:`tilefold.sim.numerics_mode`)."""
    parser.add_argument("--numerics", choices=("faithful", "fast"), default=None,
                        help="faithful (default: the device's rounding) or fast (float32 DST and accumulation, "
                             "float32 operands multiplied whole, as TT-Lang's simulator computes; same checks "
                             "and cycle counts)")
