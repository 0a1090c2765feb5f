"""Running a TT-Lang script the way TT-Lang's own tools do: ``tilefold sim`` / ``run`` / ``compile``.

Reads: a Python script written for TT-Lang (``import ttl``, ``import ttnn``) or for tilefold
(``import tilefold.ttl as ttl``). Writes: what the script prints, a summary of every operation
it ran on the simulated device, and for :func:`compile_script` a TT-Metalium project per
operation call (kernels, ``main.cpp``, CMake, data, and ``ir/NN-<pass>.mlir`` after every pass).

While the script runs, ``import ttl`` gives :mod:`tilefold.ttl` and ``import ttnn`` gives
:mod:`tilefold.ttnn` (the host tensor module), and ``from sim import ttl, ttnn`` — TT-Lang's
simulator package — both of them (:mod:`tilefold.cli.sim_package`), so the script runs
with its imports unchanged.
"""

from __future__ import annotations

import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path

import tilefold.ttl
import tilefold.ttnn
from tilefold.errors import KernelError, NotSimulatedError
from tilefold.cli.user_code import exec_as_main, script_argv
from tilefold.frontend.ttl import session
from tilefold.frontend.ttl.api import pre_1_0_api_module
from tilefold.cli.tt_lang_submodules import SUBMODULES, TtLangSubmodules

# TT-Lang's package before 1.0 and its modules: importing a name from them is one error naming the 1.x API
PRE_1_0_PACKAGES = ("ttlang", "ttlang.ttl_api", "ttlang.d2m_api", "ttlang.utils", "ttlang.utils.correctness")
# TT-Lang's helpers beside its language: ``ttl.utils`` and, in its source tree, the top-level ``utils``
UTILS_MODULES = ("", ".correctness", ".block_allocation")
MODULE_ALIASES = ("ttl", "ttnn", "sim", "sim.testing", "sim.typedefs", "ttl.ttl_api", "ttl.diagnostics", "ttl.ir",
                  *(f"ttl.utils{m}" for m in UTILS_MODULES), *(f"utils{m}" for m in UTILS_MODULES)) + PRE_1_0_PACKAGES

_SIM_IMPORT = re.compile(r"^\s*(from\s+sim(\.testing|\.typedefs)?\s+import|import\s+sim\b)", re.M)
_UTILS_IMPORT = re.compile(r"^\s*(from\s+utils(\.correctness|\.block_allocation)?\s+import|import\s+utils\b)", re.M)


@contextmanager
def tt_lang_modules(path=None):
    """``import ttl`` / ``import ttnn`` resolve to tilefold's modules inside the ``with`` block, and
    ``from sim import ttl, ttnn`` (TT-Lang's simulator package) when the script at ``path`` says so."""
    saved = {name: sys.modules.get(name) for name in MODULE_ALIASES}
    before = set(sys.modules)
    sys.modules["ttl"] = tilefold.ttl
    sys.modules["ttnn"] = tilefold.ttnn
    sys.modules["ttl.ttl_api"] = pre_1_0_api_module("ttl.ttl_api")
    for name in PRE_1_0_PACKAGES:
        sys.modules[name] = pre_1_0_api_module(name)
    for name in UTILS_MODULES:
        sys.modules[f"ttl.utils{name}"] = sys.modules[f"tilefold.ttl_utils{name}"]
    if path is not None and _imports_tt_lang_utils(Path(path)):
        for name in UTILS_MODULES:      # `from utils.correctness import ...`, as TT-Lang's source tree has it
            sys.modules[f"utils{name}"] = sys.modules[f"tilefold.ttl_utils{name}"]
    sys.modules["ttl.diagnostics"] = tilefold.ttl.diagnostics
    sys.modules["ttl.ir"] = tilefold.ttl.ir
    packages = {name: getattr(sys.modules[name], "__path__", None) for name in TtLangSubmodules.ROOTS}
    attributes = {name: dict(vars(sys.modules[name])) for name in TtLangSubmodules.ROOTS}
    for name in TtLangSubmodules.ROOTS:        # packages for ``import ttl.X``, whose parts the finder gives
        sys.modules[name].__path__ = []
    sys.meta_path.insert(0, SUBMODULES)
    if path is not None and _SIM_IMPORT.search(Path(path).read_text(encoding="utf-8", errors="replace")):
        from tilefold.cli.sim_package import MODULES

        sys.modules.update(MODULES)
    try:
        yield
    finally:
        sys.meta_path.remove(SUBMODULES)
        for name in [n for n in sys.modules if n.startswith(("ttl.", "ttnn.")) and n not in before]:
            del sys.modules[name]       # the namespaces and op library modules the script imported
            root, _, child = name.partition(".")
            if "." not in child:        # importing it bound it to the package's name: as it was
                if child in attributes[root]:
                    setattr(sys.modules[root], child, attributes[root][child])
                elif child in vars(sys.modules[root]):
                    delattr(sys.modules[root], child)
        for name, was in packages.items():
            if was is None:
                del sys.modules[name].__path__
            else:
                sys.modules[name].__path__ = was
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def _imports_tt_lang_utils(script: Path) -> bool:
    """Whether the script imports ``utils`` (TT-Lang's helper package of its source tree) and has
    no ``utils`` of its own beside it."""
    text = script.read_text(encoding="utf-8", errors="replace")
    here = script.resolve().parent
    return bool(_UTILS_IMPORT.search(text)) and not (here / "utils").exists() and not (here / "utils.py").exists()


def execute(path) -> int:
    """Run the script as ``__main__``; returns its exit status."""
    script = Path(path)
    if not script.is_file():
        raise KernelError(f"no such script: {path}")
    argv, sys_path = sys.argv, list(sys.path)
    sys.argv = script_argv(script)
    sys.path.insert(0, str(script.resolve().parent))
    try:
        exec_as_main(script)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    finally:
        sys.argv, sys.path[:] = argv, sys_path
    return 0


def run_script(path, arch: str | None = None, trace: str | None = None) -> int:
    """Run a script on the simulated device, printing a summary of each operation it runs."""
    with session.configured(arch=arch, trace=Path(trace) if trace else None, report=True) as settings, \
            tt_lang_modules(path):
        try:
            status = execute(path)
        except AssertionError:
            note = session.tf32_note(settings.tf32_reads)
            if note:
                print(note, file=sys.stderr)
            raise
        if not session.settings().runs and not session.settings().not_run:
            print(f"{os.path.basename(str(path))}: the script ran no TT-Lang operation")
        steps = session.settings().mesh_steps
        if steps:
            from tilefold.frontend.ttl.mesh import modeled_time

            total, ops, eth = modeled_time(steps)
            print(f"multi-chip modeled time: {total * 1e6:,.1f} us (operations {ops * 1e6:,.1f} us on the slowest "
                  f"chip of each, ethernet collectives {eth * 1e6:,.1f} us)")
    return status


def compile_script(path, out_dir, print_ir_after_all: bool = False) -> list[Path]:
    """Run a script and write a TT-Metalium project for every operation call into ``out_dir``.

    A call whose kernels call a user's C++ (``ttl.call_extern_func``) cannot be simulated: its
    project is written without expected outputs (one line printed for it), the tensors it writes
    have no values, and a later read of them stops the script there — printed as ``stopped:
    FILE:LINE: ...``, not an error; the projects written until then stay."""
    settings = None
    try:
        with session.configured(project_dir=Path(out_dir), print_ir_after_all=print_ir_after_all) as settings, \
                tt_lang_modules(path):
            try:
                status = execute(path)
            except NotSimulatedError as err:
                if not settings.notes:
                    raise
                status = 0
                settings.notes.append(f"stopped: {err}; tilefold compile stops the script at this read, so "
                                      "operation calls after it have no project")
            written = list(settings.written)
            ran = bool(settings.runs)
    finally:
        for note in settings.notes if settings is not None else ():
            print(note)
    if status:
        raise KernelError(f"{path} exited with status {status} before it finished")
    if not ran:
        raise KernelError(f"{path} ran no TT-Lang operation, so there is nothing to compile; call the "
                          "@ttl.operation function with tensors")
    return written
