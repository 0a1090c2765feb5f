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

import importlib.abc
import importlib.util
import os
import re
import runpy
import sys
import types
from contextlib import contextmanager
from pathlib import Path

import tilefold.ttl
import tilefold.ttnn
from tilefold.errors import KernelError, NotSimulatedError
from tilefold.cli.user_code import script_argv
from tilefold.frontend.ttl import session
from tilefold.frontend.ttl.api import pre_1_0_api_module
from tilefold.frontend.ttl.math_api import Namespace
from tilefold.caller import user_location

# TT-Lang's package before 1.0 and its modules: importing a name from them is one error naming the 1.x API
PRE_1_0_PACKAGES = ("ttlang", "ttlang.ttl_api", "ttlang.d2m_api", "ttlang.utils", "ttlang.utils.correctness")
MODULE_ALIASES = ("ttl", "ttnn", "sim", "sim.testing", "sim.typedefs", "ttl.ttl_api", "ttl.utils", "ttl.utils.correctness",
                  "ttl.utils.block_allocation", "ttl.diagnostics") + PRE_1_0_PACKAGES

_SIM_IMPORT = re.compile(r"^\s*(from\s+sim(\.testing|\.typedefs)?\s+import|import\s+sim\b)", re.M)


class UnsupportedModule(KernelError, ModuleNotFoundError):
    """``import ttl.X`` of a module of TT-Lang's package that tilefold does not have."""


class _TtLangSubmodules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import ttl.math`` / ``from ttl.block import ...``: a namespace of the mapped package is
    its submodule. ``ttl.ops``, TT-Lang's library of operations written in TT-Lang, is loaded from
    a TT-Lang source tree or installation on the path (its ``import ttl`` then gives tilefold's).
    Any other ``ttl.X`` / ``ttnn.X`` module is one error at the importing line."""

    ROOTS = ("ttl", "ttnn")
    OP_LIBRARY = "ttl.ops"

    def find_spec(self, fullname, path, target=None):
        parent, _, name = fullname.rpartition(".")
        if parent not in self.ROOTS and not self._ours(sys.modules.get(parent)):
            return None     # a module of a package loaded from files (the op library's parts)
        value = inspect_attribute(sys.modules[parent], name)
        if isinstance(value, (types.ModuleType, types.SimpleNamespace, Namespace)):
            return importlib.util.spec_from_loader(fullname, self)
        if fullname == self.OP_LIBRARY:
            found = _installed_op_library()
            if found is not None:
                return importlib.util.spec_from_file_location(fullname, found / "__init__.py",
                                                              submodule_search_locations=[str(found)])
            raise UnsupportedModule("ttl.ops (TT-Lang's library of operations, written in TT-Lang) was not found: "
                                    "tilefold runs it from a TT-Lang source tree or installation; put the folder "
                                    "holding its ttl/ops on PYTHONPATH", user_location())
        what = "a module of TT-Lang's own implementation" if fullname.startswith("ttl.") else "a module of TT-NN"
        raise UnsupportedModule(f"{fullname} ({what}) is not supported by tilefold yet; use the names of the "
                                f"{fullname.split('.')[0]} package itself", user_location())

    def _ours(self, module) -> bool:
        return getattr(getattr(module, "__spec__", None), "loader", None) is self

    def create_module(self, spec):
        parent, _, name = spec.name.rpartition(".")
        value = getattr(sys.modules[parent], name)
        if isinstance(value, types.ModuleType):
            return value
        module = types.ModuleType(spec.name)          # a namespace (ttl.math): a module of its names

        def attribute(attr):
            try:
                return getattr(value, attr)
            except KernelError as err:      # not an AttributeError, which ``from m import x`` would hide
                raise KernelError(err.message, err.location) from None

        module.__getattr__ = attribute
        return module

    def exec_module(self, module):
        pass


def _installed_op_library() -> Path | None:
    """The ``ttl/ops`` folder of a TT-Lang package on ``sys.path`` (a source tree's ``python``
    folder or a site-packages), or None."""
    for entry in sys.path:
        folder = Path(entry or ".") / "ttl" / "ops"
        if (folder / "__init__.py").is_file():
            return folder.resolve()
    return None


def inspect_attribute(module, name: str):
    """``module.name``, or None when the module lacks it (its ``__getattr__`` may raise anything)."""
    try:
        return getattr(module, name)
    except Exception:       # noqa: BLE001 - a name the package lacks, however it says so
        return None


_SUBMODULES = _TtLangSubmodules()


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
    for name in ("", ".correctness", ".block_allocation"):
        sys.modules[f"ttl.utils{name}"] = sys.modules[f"tilefold.ttl_utils{name}"]
    sys.modules["ttl.diagnostics"] = tilefold.ttl.diagnostics
    packages = {name: getattr(sys.modules[name], "__path__", None) for name in _TtLangSubmodules.ROOTS}
    for name in _TtLangSubmodules.ROOTS:        # packages for ``import ttl.X``, whose parts the finder gives
        sys.modules[name].__path__ = []
    sys.meta_path.insert(0, _SUBMODULES)
    if path is not None and _SIM_IMPORT.search(Path(path).read_text(encoding="utf-8", errors="replace")):
        from tilefold.cli.sim_package import MODULES

        sys.modules.update(MODULES)
    try:
        yield
    finally:
        sys.meta_path.remove(_SUBMODULES)
        for name in [n for n in sys.modules if n.startswith(("ttl.", "ttnn.")) and n not in before]:
            del sys.modules[name]       # the namespaces and op library modules the script imported
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


def execute(path) -> int:
    """Run the script as ``__main__``; returns its exit status."""
    script = Path(path)
    if not script.is_file():
        raise KernelError(f"no such script: {path}")
    argv, sys_path = sys.argv, list(sys.path)
    sys.argv = script_argv(script)
    sys.path.insert(0, str(script.resolve().parent))
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    finally:
        sys.argv, sys.path[:] = argv, sys_path
    return 0


def run_script(path, arch: str | None = None, trace: str | None = None) -> int:
    """Run a script on the simulated device, printing a summary of each operation it runs."""
    with session.configured(arch=arch, trace=Path(trace) if trace else None, report=True), tt_lang_modules(path):
        status = execute(path)
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
