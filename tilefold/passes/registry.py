"""Every pass of tilefold by its name, and pass pipelines parsed from specs.

Reads: the pass modules of :mod:`tilefold.passes.tilelang` and :mod:`tilefold.passes.ttl` (each
``ModulePass`` subclass defined in one of them is registered under its ``name``) and xDSL's
``lower-affine``. Writes: nothing.

Pass names are kebab-case, as in MLIR. A pipeline spec is xDSL's (and MLIR's) textual form,
``name{option=value},name,...``, read by :func:`xdsl.utils.arg_spec.parse_pipeline`. A pass's
one-line summary is its class docstring; its description is its module docstring.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import pkgutil

from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import parse_pipeline

from tilefold.arch import Arch
from tilefold.errors import CompileError
from tilefold.passes.device_pass import DevicePass

PASS_PACKAGES = ("tilefold.passes.tilelang", "tilefold.passes.ttl")
# passes of xDSL itself a pipeline uses
XDSL_PASSES = ("xdsl.transforms.lower_affine",)
# their summaries (xDSL's class docstrings are not one line about the pass)
XDSL_SUMMARIES = {"lower-affine": "affine loops and maps → scf loops and arith (xDSL's pass)."}
# where pass_class looks for a name, cheapest first
SEARCH_ORDER = ("xdsl", "tilefold.passes.ttl", "tilefold.passes.tilelang")


@functools.cache
def _module_passes(module_name: str) -> dict[str, type[ModulePass]]:
    """The pass classes one module defines, by name."""
    module = importlib.import_module(module_name)
    return {value.name: value for value in vars(module).values()
            if isinstance(value, type) and issubclass(value, ModulePass) and value.__module__ == module_name
            and isinstance(getattr(value, "name", None), str)}


def _pass_modules(package: str) -> list[str]:
    path = importlib.import_module(package).__path__
    return [f"{package}.{info.name}" for info in pkgutil.iter_modules(path)]


@functools.cache
def _group_passes(group: str) -> dict[str, type[ModulePass]]:
    """The passes of one package of :data:`PASS_PACKAGES` (or of xDSL's, ``group == "xdsl"``)."""
    modules = list(XDSL_PASSES) if group == "xdsl" else _pass_modules(group)
    passes: dict[str, type[ModulePass]] = {}
    for name in modules:
        for pass_name, cls in _module_passes(name).items():
            if pass_name in passes and passes[pass_name] is not cls:
                raise RuntimeError(f"two passes are named {pass_name!r}: {passes[pass_name]} and {cls}")
            passes[pass_name] = cls
    return passes


@functools.cache
def all_passes() -> dict[str, type[ModulePass]]:
    """Every registered pass class, by name (modules are imported on first use)."""
    passes: dict[str, type[ModulePass]] = {}
    for group in ("xdsl", *PASS_PACKAGES):
        for name, cls in _group_passes(group).items():
            if name in passes and passes[name] is not cls:
                raise RuntimeError(f"two passes are named {name!r}: {passes[name]} and {cls}")
            passes[name] = cls
    return dict(sorted(passes.items()))


def pass_class(name: str) -> type[ModulePass]:
    """The pass named ``name``. The packages are searched one at a time (xDSL's passes, then the
    TT-Lang passes, then the TileLang ones), so that a pipeline imports only the packages up to
    its passes' own."""
    for group in SEARCH_ORDER:
        cls = _group_passes(group).get(name)
        if cls is not None:
            return cls
    passes = all_passes()
    hint = name.replace("_", "-")
    also = f" (pass names are kebab-case: {hint})" if hint in passes else ""
    raise CompileError(f"unknown pass {name!r}{also}; `tilefold passes` lists them")


def summary(cls: type[ModulePass]) -> str:
    """The pass's one-line summary (its class docstring)."""
    if cls.name in XDSL_SUMMARIES:
        return XDSL_SUMMARIES[cls.name]
    doc = " ".join((cls.__doc__ or "").split())
    return doc.replace(" (see the module docstring)", "").replace("``", "").strip()


def description(cls: type[ModulePass]) -> str:
    """What the pass reads and writes (its module docstring)."""
    return (importlib.import_module(cls.__module__).__doc__ or summary(cls)).strip()


def options(cls: type[ModulePass]) -> list[tuple[str, object]]:
    """The pass's options with their defaults (``arch`` for a :class:`DevicePass`)."""
    return [(f.name.replace("_", "-"), f.default) for f in dataclasses.fields(cls) if f.init]


def parse_passes(spec: str, arch: Arch | None = None) -> tuple[ModulePass, ...]:
    """The passes of a pipeline spec (``a,b{option=value},...``). A :class:`DevicePass` whose spec
    names no device gets ``arch`` (when given)."""
    passes = []
    for item in parse_pipeline(spec):
        cls = pass_class(item.name)
        try:
            instance = cls.from_pass_spec(item)
        except ValueError as err:
            raise CompileError(f"pass spec {str(item)!r}: {err}") from None
        if arch is not None and isinstance(instance, DevicePass) and "arch" not in item.parameters:
            instance = dataclasses.replace(instance, arch=arch)
        passes.append(instance)
    return tuple(passes)
