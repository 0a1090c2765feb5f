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

from tilefold.errors import KernelArgumentError, KernelError, SourceLocation
from tilefold.frontend.ttl import capture
from tilefold.caller import user_location

MAX_KERNELS = {"compute": 1, "datamovement": 2}


@dataclass
class KernelDefinition:
    function: object
    kind: str                 # "compute" | "datamovement"
    location: SourceLocation
    options: dict
    selector: object = None   # the ttl.KernelKind / ttl.Kernel of kernel=, if given
    implicit: bool = False    # made by splitting a body without kernel functions

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

    def __or__(self, other):
        """``COMPUTE | DATA_MOVEMENT``: both kinds, as the tuple ``kernel=`` takes."""
        if isinstance(other, KernelKind):
            return (self, other)
        if isinstance(other, tuple) and all(isinstance(k, KernelKind) for k in other):
            return (self, *other)
        return NotImplemented

    def __ror__(self, other):
        if isinstance(other, tuple) and all(isinstance(k, KernelKind) for k in other):
            return (*other, self)
        return NotImplemented


class KernelKindError(KernelError, ValueError):
    """A kernel selector (``kernel=``) of another kind than the kernel it names."""


class KernelSelectorTypeError(KernelError, TypeError):
    """A ``kernel=`` that is neither a ``ttl.KernelKind`` nor a ``ttl.Kernel``."""


_KIND_TEXT = {"compute": "compute", "datamovement": "data movement"}


class Kernel:
    """``ttl.Kernel(ttl.KernelKind.COMPUTE | DATA_MOVEMENT)``: a named kernel that one kernel
    function of an operation selects with ``@ttl.compute(kernel=...)`` /
    ``@ttl.datamovement(kernel=...)`` (and its ``push`` / ``pop`` calls with ``kernel=``)."""

    def __init__(self, kind: KernelKind):
        if not isinstance(kind, KernelKind):
            raise KernelSelectorTypeError(f"ttl.Kernel({kind!r}): give ttl.KernelKind.COMPUTE or "
                                          "ttl.KernelKind.DATA_MOVEMENT", user_location())
        self.kind = kind

    def __repr__(self) -> str:
        return f"ttl.Kernel(ttl.KernelKind.{self.kind.name})"


class _PipeSourceKernel:
    """``ttl.PIPE_SOURCE_KERNEL``: as a participant of a reset or reconfiguration point, the data
    movement kernel that sends a body's pipe transfers."""

    def __repr__(self) -> str:
        return "ttl.PIPE_SOURCE_KERNEL"


PIPE_SOURCE_KERNEL = _PipeSourceKernel()


def selector_kind(selector, what: str, location) -> str:
    """The kind ("compute" / "datamovement") a ``kernel=`` selector names, or an error."""
    if isinstance(selector, KernelKind):
        return selector.value
    if isinstance(selector, Kernel):
        return selector.kind.value
    raise KernelSelectorTypeError(f"{what}: kernel= takes a ttl.KernelKind or a ttl.Kernel, not "
                                  f"{type(selector).__name__}", location)


def check_selector(selector, kind: str, what: str, location) -> None:
    """``selector`` names a kernel of ``kind``, or a one-line error at ``location``."""
    got = selector_kind(selector, what, location)
    if got != kind:
        name = "COMPUTE" if kind == "compute" else "DATA_MOVEMENT"
        raise KernelKindError(f"{what}: kernel= selects a {_KIND_TEXT[got]} kernel, but this is a "
                              f"{_KIND_TEXT[kind]} kernel; give ttl.KernelKind.{name} or a "
                              f"ttl.Kernel(ttl.KernelKind.{name})", location)


def _register(fn, kind: str, options: dict):
    if not inspect.isfunction(fn):
        raise KernelError(f"@ttl.{kind}() decorates a def function, not {type(fn).__name__}", user_location())
    if fn.__name__ == "<lambda>":
        raise KernelError(f"ttl.{kind}() takes a kernel written as a def function, not a lambda", user_location())
    options = dict(options)
    selector = options.pop("kernel", None)
    implicit = options.pop("__implicit__", False)
    if options:         # a keyword TT-Lang's decorator does not take would be silently dropped
        raise KernelArgumentError(f"@ttl.{kind}() got an unexpected keyword argument {next(iter(options))!r}; it "
                                  "takes kernel= (a ttl.KernelKind or ttl.Kernel) or nothing", user_location())
    if selector is not None:
        check_selector(selector, kind, f"@ttl.{kind}(kernel=...)", user_location())
    location = _def_line(fn)
    op = capture.current(f"@ttl.{kind}()")
    # the kernel is called with no arguments: parameters with defaults take them, others cannot
    params = [name for name, p in inspect.signature(fn).parameters.items() if p.default is inspect.Parameter.empty]
    if params:
        raise KernelError(f"kernel function {fn.__name__!r} takes parameters ({', '.join(params)}) without defaults; "
                          "TT-Lang kernel functions are called with no arguments — give them defaults, or use the "
                          "tensors, dataflow buffers and values of the operation's body directly", location)
    named = next((k for k in op.kernels if k.name == fn.__name__), None)
    if named is not None:       # each kernel is a function of its own name in the program
        raise KernelError(f"operation {op.name!r} already has a kernel function named {fn.__name__!r} (at "
                          f"{named.location}); give each kernel function its own name", location)
    same = [k for k in op.kernels if k.kind == kind]
    if len(same) >= MAX_KERNELS[kind]:
        raise KernelError(f"operation {op.name!r} already has {len(same)} @ttl.{kind}() kernel(s); a node runs at "
                          f"most {MAX_KERNELS[kind]} — merge {fn.__name__!r} into "
                          f"{same[0].name!r}", location)
    if isinstance(selector, Kernel):
        for other in op.kernels:
            if other.selector is selector:
                raise KernelError(f"kernel function {fn.__name__!r} selects the ttl.Kernel that {other.name!r} "
                                  "already selects; a ttl.Kernel names one kernel function of an operation — give "
                                  "each its own", location)
    definition = KernelDefinition(fn, kind, location, options, selector, implicit)
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
