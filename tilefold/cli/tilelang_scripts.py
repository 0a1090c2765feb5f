"""``tilefold compile`` / ``tilefold run`` for a Python file written with ``tilefold.language``.

Reads: a .py file. :func:`compile_script` imports it and compiles every kernel it defines at
module level with concrete shapes — ``@T.prim_func`` functions and ``tilefold.jit`` kernels
(a jitted factory called with its sizes, ``GEMM = matmul(256, 256, 256, 128, 128, 64)``) —
writing each one's TT-Metalium project, ``tt.plan.json`` and lowered IR (into ``out_dir``,
or ``out_dir/<name>`` when there are several). :func:`run_script` runs the file as a
program (its ``if __name__ == "__main__":`` part), with the jitted kernels running on the
chosen simulated device and writing a trace when asked.
Writes: the artifacts, and what the script prints.

While the script runs, ``import tilelang`` / ``import tilelang.language as T`` (at the top or
inside a kernel factory) give :mod:`tilefold` / :mod:`tilefold.language`, and any
``tilelang.<sub>`` gives ``tilefold.<sub>``, so a TileLang script runs with its imports unchanged.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from contextlib import contextmanager
from itertools import count
from pathlib import Path

from tilefold.cli.user_code import run_as_main
from tilefold.errors import KernelError, KernelImportError, SourceLocation, TilefoldError
from tilefold.caller import user_location
from tilefold.compiler import compile_prim_func
from tilefold.run.jit import JITKernel, default_device
from tilefold.frontend.tilelang.prim_func import PrimFunc

_serial = count()


class _TileLangAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves ``tilelang[.<sub>]`` to the ``tilefold[.<sub>]`` module itself (not a copy)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "tvm" or fullname.startswith("tvm."):
            if importlib.util.find_spec is None or _installed("tvm"):
                return None
            raise KernelError(f"import {fullname}: TVM is not part of tilefold, which builds TileLang kernels from "
                              "their Python source without it; write the kernel with tilelang.language (T.*) only",
                              user_location())
        if fullname != "tilelang" and not fullname.startswith("tilelang."):
            return None
        try:
            module = importlib.import_module("tilefold" + fullname[len("tilelang"):])
        except ModuleNotFoundError:
            if _installed(fullname.split(".")[0]):
                return None
            raise KernelImportError(f"import {fullname}: tilefold has no such module; it runs TileLang kernels "
                                    "written with tilelang.language (T.*), tilelang.jit / tilelang.compile and "
                                    "TileLang's helper modules (tilelang.profiler, tilelang.testing, "
                                    "tilelang.utils.tensor, tilelang.carver)", user_location()) from None
        return importlib.util.spec_from_loader(fullname, self, is_package=hasattr(module, "__path__"))

    def create_module(self, spec):
        module = importlib.import_module("tilefold" + spec.name[len("tilelang"):])
        self.own_spec = module.__spec__
        return module

    def exec_module(self, module):
        module.__spec__ = self.own_spec  # the import system stamped the alias's spec on it


def _installed(name: str) -> bool:
    """Whether a module of that name exists outside these aliases (a real TVM installation)."""
    import importlib.machinery

    spec = importlib.machinery.PathFinder.find_spec(name)
    return spec is not None and spec.origin not in (None, "namespace")     # a folder of that name is not one


@contextmanager
def tilelang_modules():
    """``import tilelang[.<sub>]`` gives ``tilefold[.<sub>]`` inside the ``with`` block."""
    saved = {n: m for n, m in sys.modules.items() if n == "tilelang" or n.startswith("tilelang.")}
    for name, module in list(sys.modules.items()):
        if name == "tilefold" or name.startswith("tilefold."):
            sys.modules["tilelang" + name[len("tilefold"):]] = module
    finder = _TileLangAlias()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if n == "tilelang" or n.startswith("tilelang.")]:
            del sys.modules[name]
        sys.modules.update(saved)


def _load(path: Path):
    if not path.is_file():
        raise KernelError(f"no such file: {path}")
    name = f"tilefold_script_{path.stem}_{next(_serial)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except TilefoldError:
        raise
    except SyntaxError as exc:
        raise KernelError(f"cannot parse {path}: {exc.msg}", SourceLocation(str(path), exc.lineno or 0)) from None
    return module


def script_kernels(module) -> dict[str, PrimFunc]:
    """Module-level kernels with concrete shapes, by variable name."""
    found: dict[str, PrimFunc] = {}
    for name, value in vars(module).items():
        if name.startswith("_"):
            continue
        if isinstance(value, JITKernel):
            value = value.prim
        if isinstance(value, PrimFunc) and all(value is not v for v in found.values()):
            found[name] = value
    return found


def compile_script(path, out_dir, print_ir_after_all: bool = False, arch=None) -> list[Path]:
    """Compile every kernel of the script; returns the files written."""
    path = Path(path)
    with tilelang_modules():
        kernels = script_kernels(_load(path))
    if not kernels:
        raise KernelError(f"{path} defines no kernel with concrete shapes at module level; add a @T.prim_func with "
                          "fixed shapes, or instantiate a jitted factory (KERNEL = matmul(256, 256, 256, 64, 64, "
                          "32))", SourceLocation(str(path), 1))
    written: list[Path] = []
    root = Path(out_dir)
    for name, prim in kernels.items():
        if print_ir_after_all:
            print(f"// ===== {name}: {prim.name} =====", file=sys.stderr)
        compiled = compile_prim_func(prim, arch, print_ir_after_all=print_ir_after_all)
        target = root if len(kernels) == 1 else root / name
        written += compiled.write(target)
    return written


def run_script(path, arch=None, trace=None) -> int:
    """Run the script as ``__main__`` on the simulated device; 0 when it finishes, 1 when a
    check in it fails (the failure is printed)."""
    path = Path(path)
    if not path.is_file():
        raise KernelError(f"no such file: {path}")
    with default_device(arch, trace), tilelang_modules():
        return run_as_main(path)
