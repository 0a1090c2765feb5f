"""Submodules of the mapped ``ttl`` / ``ttnn`` packages while a TT-Lang script runs.

Reads: the attributes of :mod:`tilefold.ttl` / :mod:`tilefold.ttnn` and, for ``ttl.ops``, the
folders of ``sys.path``. Writes: modules for ``import ttl.X`` (made on import; the caller,
:func:`tilefold.cli.ttl_scripts.tt_lang_modules`, installs the finder and removes them after).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import types
from pathlib import Path

from tilefold.caller import user_location
from tilefold.errors import KernelError
from tilefold.frontend.ttl.math_api import Namespace


class UnsupportedModule(KernelError, ModuleNotFoundError):
    """``import ttl.X`` of a module of TT-Lang's package that tilefold does not have."""


class TtLangSubmodules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import ttl.math`` / ``from ttl.block import ...``: a namespace of the mapped package is
    its submodule; ``from ttl.pipe import Pipe`` and TT-Lang's other modules of public names read
    the package's names. ``ttl.ops``, TT-Lang's library of operations written in TT-Lang, is loaded from
    a TT-Lang source tree or installation on the path (its ``import ttl`` then gives tilefold's).
    ``ttl.sim`` (TT-Lang's simulator wheel's spelling) is tilefold's ``sim`` package
    (:mod:`tilefold.cli.sim_package`). Any other ``ttl.X`` / ``ttnn.X`` / ``sim.X`` module is one
    error at the importing line."""

    ROOTS = ("ttl", "ttnn")
    OP_LIBRARY = "ttl.ops"
    # the modules of TT-Lang's package that define its public names (``from ttl.pipe import Pipe``,
    # as its op library writes): each is a view of the ttl package
    API_MODULES = frozenset({
        "pipe", "dataflow_buffer", "circular_buffer", "kernel", "semaphore", "scalar", "constants", "condition",
        "dfb_reset", "dfb_reconfiguration", "dfb_allocation_group", "domains", "runtime_resources", "fabric",
        "operators", "compiler_options", "sram", "atom", "ttl_math", "ttl_block", "version"})

    def find_spec(self, fullname, path, target=None):
        simulator = _simulator_name(fullname)
        if simulator is not None:
            from tilefold.cli.sim_package import MODULES

            if simulator in MODULES:
                return importlib.util.spec_from_loader(fullname, self)
            raise UnsupportedModule(f"{fullname} (a module of TT-Lang's simulator package) is not supported by tilefold; "
                                    f"`from {fullname.rsplit('.', 1)[0]} import ttl, ttnn` gives TT-Lang's language "
                                    "and TT-NN (their names are those of 1.x)", user_location())
        parent, _, name = fullname.rpartition(".")
        if parent not in self.ROOTS and not self._ours(sys.modules.get(parent)):
            return None     # a module of a package loaded from files (the op library's parts)
        value = inspect_attribute(sys.modules[parent], name)
        if isinstance(value, (types.ModuleType, types.SimpleNamespace, Namespace)) \
                or parent == "ttl" and name in self.API_MODULES:
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
        simulator = _simulator_name(spec.name)
        if simulator is not None:
            from tilefold.cli.sim_package import MODULES

            return MODULES[simulator]
        parent, _, name = spec.name.rpartition(".")
        package = sys.modules[parent]
        value = package if parent == "ttl" and name in self.API_MODULES else getattr(package, name)
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


def _simulator_name(fullname: str) -> str | None:
    """``ttl.sim[.X]`` (TT-Lang's simulator wheel's spelling) and, while ``sim`` is tilefold's
    simulator package, ``sim.X``: the module's name in :data:`tilefold.cli.sim_package.MODULES`
    (``sim[.X]``); None for any other module."""
    if fullname == "ttl.sim" or fullname.startswith("ttl.sim."):
        return fullname.removeprefix("ttl.")
    if fullname.startswith("sim.") and getattr(sys.modules.get("sim"), "__name__", None) == "tilefold.cli.sim_package":
        return fullname
    return None


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


SUBMODULES = TtLangSubmodules()
