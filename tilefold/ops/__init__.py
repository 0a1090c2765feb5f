"""Program factories built on the Program model: tilize, untilize, eltwise, matmul, ...

Each factory module registers an :class:`~tilefold.ops.base.OpFactory` that the command line
(``tilefold compile OP`` / ``tilefold run OP``) and the tests build programs with.
"""

from __future__ import annotations

import importlib

from tilefold.errors import TilefoldError
from tilefold.ops.base import REGISTRY, OpFactory, OpInstance, Tolerance, compare, host_data

FACTORY_MODULES = ("tilize", "untilize", "eltwise", "matmul", "matmul_multicore", "matmul_mcast", "row_standardize")


def factories() -> dict[str, OpFactory]:
    """Every registered factory, by name."""
    for module in FACTORY_MODULES:
        importlib.import_module(f"tilefold.ops.{module}")
    return dict(REGISTRY)


def get_factory(name: str) -> OpFactory:
    found = factories()
    if name not in found:
        raise TilefoldError(f"unknown op {name!r}; built-in ops are: {', '.join(sorted(found)) or 'none'} "
                            "(or pass a kernel script ending in .py)")
    return found[name]


__all__ = ["OpFactory", "OpInstance", "Tolerance", "compare", "host_data", "factories", "get_factory"]
