"""Submodules of the mapped ``ttl`` / ``ttnn`` packages while a TT-Lang script runs.

Reads: the attributes of :mod:`tilefold.ttl` / :mod:`tilefold.ttnn` and, for ``ttl.ops``, the
folders of ``sys.path``. Writes: modules for ``import ttl.X`` (made on import; the caller,
:func:`tilefold.cli.ttl_scripts.tt_lang_modules`, installs the finder and removes them after).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from tilefold.caller import user_location
from tilefold.ttl_submodules import PackageSubmodules, UnsupportedModule


class TtLangSubmodules(PackageSubmodules):
    """The views of :class:`~tilefold.ttl_submodules.PackageSubmodules` under ``ttl`` / ``ttnn``, and:
    ``ttl.ops``, TT-Lang's library of operations written in TT-Lang, is loaded from a TT-Lang source
    tree or installation on the path (its ``import ttl`` then gives tilefold's); ``ttl.sim`` (TT-Lang's
    simulator wheel's spelling) is tilefold's ``sim`` package (:mod:`tilefold.cli.sim_package`)."""

    ROOTS = ("ttl", "ttnn")
    OP_LIBRARY = "ttl.ops"

    def __init__(self):
        super().__init__(*self.ROOTS)

    def find_spec(self, fullname, path, target=None):
        simulator = _simulator_name(fullname)
        if simulator is not None:
            from tilefold.cli.sim_package import MODULES

            if simulator in MODULES:
                return importlib.util.spec_from_loader(fullname, self)
            raise UnsupportedModule(f"{fullname} (a module of TT-Lang's simulator package) is not supported by tilefold; "
                                    f"`from {fullname.rsplit('.', 1)[0]} import ttl, ttnn` gives TT-Lang's language "
                                    "and TT-NN (their names are those of 1.x)", user_location())
        return super().find_spec(fullname, path, target)

    def unknown(self, fullname: str, parent: str):
        if fullname == self.OP_LIBRARY:
            found = _installed_op_library()
            if found is not None:
                return importlib.util.spec_from_file_location(fullname, found / "__init__.py",
                                                              submodule_search_locations=[str(found)])
            raise UnsupportedModule("ttl.ops (TT-Lang's library of operations, written in TT-Lang) was not found: "
                                    "tilefold runs it from a TT-Lang source tree or installation; put the folder "
                                    "holding its ttl/ops on PYTHONPATH", user_location())
        return super().unknown(fullname, parent)

    def create_module(self, spec):
        simulator = _simulator_name(spec.name)
        if simulator is not None:
            from tilefold.cli.sim_package import MODULES

            return MODULES[simulator]
        return super().create_module(spec)


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


SUBMODULES = TtLangSubmodules()
