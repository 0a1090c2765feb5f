"""A key for "would this call of an operation build the same program as an earlier one?".

Reads: an :class:`~.capture.OperationCapture` after the operation's body ran — its kernel functions
and every value they can see (closure cells, the module globals their code names, recursively
through helper functions), its dataflow buffers, pipe nets and the tensors' layouts. Writes:
a hashable key, or ``None`` when some value cannot be compared safely (then the operation is built
again).

Compile-time values compare by value (numbers, strings, tuples, lists, dicts), dataflow buffers and
pipe nets by their configuration, tensors by shape, data type, layout and memory, functions by
their code and everything it reads, classes and library modules (``ttl``, ``math``, numpy ...) by
identity. A value of any other kind — an object of a user's class, a user's own module whose
attributes could change — makes the call uncacheable. Objects compared by identity are returned
with the key so the cache keeps them alive (an id is only unique while its object lives). Building
the kernels then happens once per distinct key, which is what makes a second call cheap.
"""

from __future__ import annotations

import types

import numpy as np

from tilefold.frontend.ttl.dataflow_buffers import DataflowBuffer
from tilefold.layout.formats import tensor_tile
from tilefold.frontend.ttl.devices import DeviceDomain, TransferGraph
from tilefold.frontend.ttl.grid import NodeExpression
from tilefold.frontend.ttl.math_api import BlockFunction
from tilefold.frontend.ttl.pipes import Pipe, PipeNet

MAX_DEPTH = 6
# Modules a kernel may name whose attributes do not change between calls; other modules (a user's
# configuration module, say) make the call uncacheable, as their attributes could.
LIBRARY_MODULES = {"tilefold", "ttl", "ttnn", "math", "numpy", "torch", "operator", "functools", "itertools",
                   "builtins", "ml_dtypes"}


class Unhashable(Exception):
    """A value the key cannot represent."""


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


class Fingerprinter:
    def __init__(self, capture):
        self.tensors = {id(a.tensor): a.index for a in capture.tensors}
        self.seen: dict[int, int] = {}        # id of a function met -> its order among them
        self.pinned: list = []      # objects compared by id: kept alive so their ids stay theirs

    def value(self, v, depth: int = 0):
        if depth > MAX_DEPTH:
            raise Unhashable()
        if v is None or isinstance(v, (bool, int, float, str, bytes, complex)):
            return (type(v).__name__, v)
        if isinstance(v, np.generic):
            return (type(v).__name__, v.item())
        if isinstance(v, (tuple, list)):
            return (type(v).__name__, tuple(self.value(x, depth + 1) for x in v))
        if isinstance(v, dict):
            return ("dict", tuple(sorted(((self.value(k, depth + 1), self.value(x, depth + 1)) for k, x in v.items()),
                                         key=repr)))
        if isinstance(v, slice):
            return ("slice", self.value((v.start, v.stop, v.step), depth + 1))
        if id(v) in self.tensors:
            return ("tensor", self.tensors[id(v)])
        if isinstance(v, DataflowBuffer):
            return ("dfb", v.index, v.shape, v.block_count, v.data_format.value, v.layout, v.name, v.hidden,
                    str(v.location), v.backing.index if v.backing is not None else None, v.byte_offset, v.tile)
        if isinstance(v, PipeNet):
            if v.grid is None:          # made outside any operation
                graph = None if v.mappings is None else tuple((g.domain.shape, tuple(g.edges), len(local))
                                                              for g, local in v.mappings)
                return ("pipes", tuple(self.value((p.src, p.dst), depth + 1) for p in v.pipes), graph)
            return ("pipes", v.index, tuple(v.routes))
        if isinstance(v, Pipe):
            return ("pipe", self.value((v.src, v.dst), depth + 1))
        if isinstance(v, DeviceDomain):
            return ("device-domain", v.components)
        if isinstance(v, TransferGraph):
            return ("transfer-graph", v.domain.shape, tuple(v.edges))
        if isinstance(v, NodeExpression):
            return ("node", v.key())
        if isinstance(v, types.ModuleType):
            if v.__name__.split(".")[0] not in LIBRARY_MODULES:
                raise Unhashable()
            return self.identity(v)
        if isinstance(v, (type, BlockFunction, types.BuiltinFunctionType)):
            return self.identity(v)
        if isinstance(v, types.FunctionType):
            return self.function(v, depth + 1)
        if hasattr(v, "shape") and hasattr(v, "dtype") and hasattr(v, "layout"):
            return ("tensor-like", tuple(v.shape), str(v.dtype), str(v.layout))
        raise Unhashable()

    def identity(self, v):
        self.pinned.append(v)
        return ("object", id(v))

    def function(self, fn: types.FunctionType, depth: int = 0):
        """A function by its code and everything it reads: its closure's cells, the globals it
        names, its defaults and keyword-only defaults (functions of one code made with other cells,
        as ``make(k)`` returns them, differ); a function met again (a helper of two kernels,
        recursion) by the order it was first met in."""
        code = fn.__code__
        self.pinned.extend((code, fn))
        if id(fn) in self.seen:
            return ("function", id(code), self.seen[id(fn)])       # stable across calls
        self.seen[id(fn)] = len(self.seen)
        cells = tuple(self.value(c.cell_contents, depth) if _filled(c) else ("empty",)
                      for c in (fn.__closure__ or ()))
        names = sorted(_code_names(fn.__code__))
        scope = fn.__globals__
        visible = tuple((n, self.value(scope[n], depth)) for n in names if n in scope)
        keyword_defaults = tuple(sorted((k, self.value(v, depth)) for k, v in (fn.__kwdefaults__ or {}).items()))
        return ("function", id(code), cells, visible, self.value(fn.__defaults__, depth), keyword_defaults)


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def operation_key(capture, options: dict):
    """The key of a call whose body produced ``capture``, and the objects it compares by identity
    (to keep alive while the key is in use); ``(None, [])`` when no key can be made."""
    f = Fingerprinter(capture)
    try:
        kernels = tuple((k.kind, f.function(k.function)) for k in capture.kernels)
        buffers = tuple(f.value(d) for d in capture.dataflow_buffers)
        nets = tuple(f.value(n) for n in capture.pipe_nets)
        tensors = tuple((a.name, tuple(a.tensor.shape), a.tensor.dtype.name, str(a.tensor.layout),
                         str(a.tensor.memory_config()), tensor_tile(a.tensor),
                         getattr(a.tensor, "mesh_origin", None) if capture.mesh_chip is not None else None)
                        for a in capture.tensors)
        tensors += (("mesh chip", capture.mesh_chip),)
        tensors += tuple((name, f.value(v)) for name, v in sorted(capture.constants.items()))
        if capture.resource_semaphores is not None:     # runtime_resource_factory=, and what it is given
            tensors += (("runtime resources", f.value(capture.resource_semaphores)),)
    except Unhashable:
        return None, []
    return (capture.grid, capture.grid_dims, capture.arch.name, capture.arch.board, tuple(sorted(options.items(), key=str)), kernels,
            buffers, nets, tensors), f.pinned
