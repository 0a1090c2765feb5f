"""TT-Lang's module names under tilefold's packages: ``from tilefold.ttl.pipe import Pipe``,
``from tilefold.ttl.dtype_utils import ...`` as a script whose ``import ttl`` became ``import
tilefold.ttl as ttl`` writes them.

Reads: the attributes of :mod:`tilefold.ttl` / :mod:`tilefold.ttnn`. Writes: a module for each such
import (a view of the package's names, or the namespace it names), the packages' empty ``__path__``,
and one finder at the end of ``sys.meta_path`` (:func:`install_for_tilefold`). The ``tilefold sim``
runner maps ``ttl`` / ``ttnn`` the same way (:mod:`tilefold.cli.tt_lang_submodules`).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import types

from tilefold.caller import user_location
from tilefold.errors import KernelError
from tilefold.frontend.ttl.math_api import Namespace


class UnsupportedModule(KernelError, ModuleNotFoundError):
    """``import ttl.X`` of a module of TT-Lang's package that tilefold does not have."""


class PackageSubmodules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import <ttl>.math`` / ``from <ttl>.block import ...``: a namespace of the package is its
    submodule; ``from <ttl>.pipe import Pipe`` and TT-Lang's other modules of public names read the
    package's names. Any other module under the two packages is one error at the importing line
    (``refuse_unknown``), or left to Python (its ``ModuleNotFoundError``, or the ``ImportError`` of a
    ``from <package> import name`` the package lacks)."""

    # the modules of TT-Lang's package that define its public names (``from ttl.pipe import Pipe``,
    # as its op library writes): each is a view of the ttl package
    API_MODULES = frozenset({
        "pipe", "dataflow_buffer", "circular_buffer", "kernel", "semaphore", "scalar", "constants", "condition",
        "dfb_reset", "dfb_reconfiguration", "dfb_allocation_group", "domains", "runtime_resources", "fabric",
        "operators", "compiler_options", "sram", "atom", "ttl_math", "ttl_block", "version"})

    def __init__(self, ttl_root: str, ttnn_root: str, refuse_unknown: bool = True):
        # the names the two packages are imported by: ``ttl`` / ``ttnn`` while a script runs with
        # them mapped, ``tilefold.ttl`` / ``tilefold.ttnn`` always (:func:`install_for_tilefold`)
        self.ttl_root, self.roots = ttl_root, (ttl_root, ttnn_root)
        self.refuse_unknown = refuse_unknown

    def find_spec(self, fullname, path, target=None):
        parent, _, name = fullname.rpartition(".")
        if parent not in self.roots and not self._ours(sys.modules.get(parent)):
            return None     # a module of a package loaded from files (the op library's parts)
        value = inspect_attribute(sys.modules[parent], name)
        if isinstance(value, (types.ModuleType, types.SimpleNamespace, Namespace)) \
                or parent == self.ttl_root and name in self.API_MODULES:
            return importlib.util.spec_from_loader(fullname, self)
        return self.unknown(fullname, parent)

    def unknown(self, fullname: str, parent: str):
        """A module under the packages that tilefold does not have: one error at the importing line."""
        if not self.refuse_unknown:
            return None
        root = self.ttl_root if parent.startswith(self.ttl_root) else self.roots[1]
        what = "a module of TT-Lang's own implementation" if root == self.ttl_root else "a module of TT-NN"
        raise UnsupportedModule(f"{fullname} ({what}) is not supported by tilefold yet; use the names of the "
                                f"{root} package itself", user_location())

    def _ours(self, module) -> bool:
        return getattr(getattr(module, "__spec__", None), "loader", None) is self

    def create_module(self, spec):
        parent, _, name = spec.name.rpartition(".")
        package = sys.modules[parent]
        value = package if parent == self.ttl_root and name in self.API_MODULES else getattr(package, name)
        if isinstance(value, (Namespace, types.SimpleNamespace)):
            return value    # ttl.math itself: the import binds it to the package's name again, unchanged
        module = types.ModuleType(spec.name)          # a view of a module or of the package

        def attribute(attr):
            try:
                return getattr(value, attr)
            except KernelError as err:      # not an AttributeError, which ``from m import x`` would hide
                raise KernelError(err.message, err.location) from None

        module.__getattr__ = attribute
        return module

    def exec_module(self, module):
        pass


def inspect_attribute(module, name: str):
    """``module.name``, or None when the module lacks it (its ``__getattr__`` may raise anything)."""
    try:
        return getattr(module, name)
    except Exception:       # noqa: BLE001 - a name the package lacks, however it says so
        return None


_FOR_TILEFOLD = PackageSubmodules("tilefold.ttl", "tilefold.ttnn", refuse_unknown=False)


def install_for_tilefold() -> None:
    """TT-Lang's module names under ``tilefold.ttl`` / ``tilefold.ttnn`` (those imported so far get
    an empty ``__path__``; the finder goes last on the path, once)."""
    for name in _FOR_TILEFOLD.roots:
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__path__", None) is None:
            module.__path__ = []
    if _FOR_TILEFOLD not in sys.meta_path:
        sys.meta_path.append(_FOR_TILEFOLD)
