"""Kernel functions: ``@ttl.compute()`` and ``@ttl.datamovement()`` inside an operation's body.

Reads: a Python function defined in the body of a ``@ttl.operation``. Writes: a
:class:`KernelDefinition` registered with the running operation. The function is not run: its
source is parsed and built into ``ttl`` IR when the operation compiles
(:mod:`tilefold.frontend.ttl.builder`). A node runs at most one compute kernel and two data
movement kernels (the first on RISCV_0, the second on RISCV_1).

Errors (at the ``def`` line): a kernel function with parameters, a decorator used outside an
operation's body, too many kernels of one kind.
"""

from __future__ import annotations

import enum
import inspect
from dataclasses import dataclass

from tilefold.errors import KernelError, SourceLocation
from tilefold.frontend.ttl import capture
from tilefold.caller import user_location

MAX_KERNELS = {"compute": 1, "datamovement": 2}


@dataclass
class KernelDefinition:
    function: object
    kind: str                 # "compute" | "datamovement"
    location: SourceLocation
    options: dict

    @property
    def name(self) -> str:
        return self.function.__name__


def _def_line(fn) -> SourceLocation:
    """The file:line of the ``def`` (not of its decorator)."""
    from tilefold.frontend.source import FunctionSource

    code = fn.__code__
    try:
        source = FunctionSource.of(fn, "kernel function")
        return source.location(source.tree)
    except KernelError:
        return SourceLocation(code.co_filename, code.co_firstlineno)


class KernelKind(enum.Enum):
    """``ttl.KernelKind``: what a ``ttl.Kernel`` runs."""

    COMPUTE = "compute"
    DATA_MOVEMENT = "datamovement"


class Kernel:
    """``ttl.Kernel(ttl.KernelKind.COMPUTE | DATA_MOVEMENT)``: a kernel that operations name with
    ``@ttl.compute(kernel=...)`` / ``@ttl.datamovement(kernel=...)``; tilefold builds each
    operation's kernel functions as they are and checks only that the kinds agree."""

    def __init__(self, kind: KernelKind):
        if not isinstance(kind, KernelKind):
            raise KernelError(f"ttl.Kernel({kind!r}): give ttl.KernelKind.COMPUTE or ttl.KernelKind.DATA_MOVEMENT",
                              user_location())
        self.kind = kind


def _register(fn, kind: str, options: dict):
    if not inspect.isfunction(fn):
        raise KernelError(f"@ttl.{kind}() decorates a def function, not {type(fn).__name__}", user_location())
    options = dict(options)
    handle = options.pop("kernel", None)
    if handle is not None and (not isinstance(handle, Kernel) or handle.kind.value != kind):
        raise KernelError(f"@ttl.{kind}(kernel=...) takes a ttl.Kernel(ttl.KernelKind."
                          f"{'COMPUTE' if kind == 'compute' else 'DATA_MOVEMENT'})", user_location())
    location = _def_line(fn)
    op = capture.current(f"@ttl.{kind}()")
    params = list(inspect.signature(fn).parameters)
    if params:
        raise KernelError(f"kernel function {fn.__name__!r} takes parameters ({', '.join(params)}); TT-Lang kernel "
                          "functions take none — use the tensors, dataflow buffers and values of the operation's "
                          "body directly", location)
    same = [k for k in op.kernels if k.kind == kind]
    if len(same) >= MAX_KERNELS[kind]:
        raise KernelError(f"operation {op.name!r} already has {len(same)} @ttl.{kind}() kernel(s); a node runs at "
                          f"most {MAX_KERNELS[kind]} — merge {fn.__name__!r} into "
                          f"{same[0].name!r}", location)
    definition = KernelDefinition(fn, kind, location, options)
    op.kernels.append(definition)
    return definition


def _decorator(kind: str, fn, options: dict):
    if fn is not None:
        return _register(fn, kind, options)
    return lambda f: _register(f, kind, options)


def compute(fn=None, **options):
    """``@ttl.compute()``: the node's compute kernel (math on blocks)."""
    return _decorator("compute", fn, options)


def datamovement(fn=None, **options):
    """``@ttl.datamovement()``: a data movement kernel (copies between tensors, blocks and pipes)."""
    return _decorator("datamovement", fn, options)
