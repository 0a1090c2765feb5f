"""``@T.prim_func``: a TileLang kernel as a Python function with typed tensor parameters.

Reads: a Python function whose parameters are annotated ``T.Tensor(shape, dtype)`` /
``T.Buffer(...)``. Writes: a :class:`PrimFunc`, whose ``tile`` IR is built on demand by
:mod:`tilefold.frontend.tilelang.builder` (``.module()``, ``.ir()``).

``T.annotate_tt_layout(prim_func, {"A": {...}})`` and ``T.annotate_tt_schedule(prim_func,
{...})`` return an annotated copy (the form the Tenstorrent TileLang backend uses); the
same calls inside the kernel body annotate it in place.

A kernel body with several ``with T.Kernel`` grids (and the ``T.alloc_global`` scratch tensors
they pass data through) is split by :meth:`PrimFunc.grids` into one PrimFunc per grid, each
taking the kernel's tensors and the scratch tensors; :mod:`tilefold.run.sequence` runs them in order.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field, replace

from xdsl.dialects.builtin import ModuleOp

from tilefold.errors import KernelError, SourceLocation
from tilefold.frontend.tilelang.primitives import layout_entries
from tilefold.frontend.tilelang.dtypes import DType, canonical_name
from tilefold.frontend.tilelang.types import TensorType
from tilefold.caller import user_location


@dataclass(frozen=True)
class Param:
    name: str
    type: TensorType


def _annotations(fn) -> dict:
    """The parameter annotations, string ones evaluated in the function's module (a dtype such as
    ``T.int32`` is a string already and stays one)."""
    code = fn.__code__
    where = SourceLocation(code.co_filename, code.co_firstlineno)
    out = {}
    for name, ann in inspect.get_annotations(fn).items():
        if isinstance(ann, str) and not isinstance(ann, DType):
            try:
                ann = eval(ann, fn.__globals__, dict(vars(__import__("builtins"))))  # noqa: S307
            except Exception as exc:  # a string annotation naming something not in the module's globals
                raise KernelError(f"cannot evaluate the parameter annotations of {fn.__name__!r} ({exc}); write "
                                  "them as T.Tensor((M, N), dtype) without `from __future__ import annotations`, "
                                  "or with names the module defines", where) from None
        out[name] = ann
    return out


def scalar_dtype(ann) -> str | None:
    """The dtype of a scalar parameter's annotation (``T.int32``, ``int``, ``float``), else None."""
    if ann is int:
        return "int32"
    if ann is float:
        return "float32"
    if isinstance(ann, DType):
        return canonical_name(ann)
    return None


def _param_types(fn) -> tuple[list[Param], tuple]:
    code = fn.__code__
    where = SourceLocation(code.co_filename, code.co_firstlineno)
    sig = inspect.signature(fn)
    annotations = _annotations(fn)
    params, scalars = [], []
    for position, p in enumerate(sig.parameters.values()):
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise KernelError(f"parameter {p.name!r} of kernel {fn.__name__!r}: a kernel takes plain tensor "
                              "parameters only", where)
        ann = annotations.get(p.name)
        if scalar_dtype(ann) is not None:
            scalars.append((position, p.name, scalar_dtype(ann)))
            continue
        if not isinstance(ann, TensorType):
            raise KernelError(f"parameter {p.name!r} of kernel {fn.__name__!r} needs a type: annotate it with "
                              f"T.Tensor((rows, cols), dtype)", where)
        params.append(Param(p.name, ann))
    if not params:
        raise KernelError(f"kernel {fn.__name__!r} has no tensor parameters; give it its inputs and outputs", where)
    return params, tuple(scalars)


@dataclass
class EagerBinding:
    """What an eager kernel is built for: its compile-time arguments and ``T.const`` values
    (``constants``), its tensor arguments in signature order, the shapes it is called with
    (None when compiled with ``.compile``) and the tensor types its signature annotates."""

    constants: dict
    tensor_names: list[str]
    shapes: dict
    annotations: dict = field(default_factory=dict)


@dataclass
class PrimFunc:
    """A TileLang kernel; compile it with :func:`tilefold.jit` or ``tilefold compile``."""

    python_function: object
    params: list[Param]
    layout: dict = field(default_factory=dict)      # annotate_tt_layout given outside the body
    schedule: dict = field(default_factory=dict)    # annotate_tt_schedule given outside the body
    eager: EagerBinding | None = None               # set for a kernel built from an eager @jit function
    out_idx: list[int] | None = None                # eager kernels: the T.empty outputs, in return order
    grid: int | None = None                         # one grid of a body with several: which (0, 1 ...)
    scratch: tuple[str, ...] = ()                   # parameters that are the body's T.alloc_global tensors
    scalars: tuple = ()                             # scalar parameters: (position, name, dtype)
    scalar_values: dict = field(default_factory=dict)  # their values, for a kernel built for one call
    dims: dict = field(default_factory=dict)        # T.dynamic sizes of the parameters, for a kernel built for them

    def dynamic_dims(self) -> list[str]:
        """The ``T.dynamic`` names the parameters' shapes use that have no value yet."""
        from tilefold.frontend.tilelang.values import ConstVar

        return list(dict.fromkeys(d.name for p in self.params for d in p.type.shape
                                  if isinstance(d, ConstVar) and d.name not in self.dims))

    def with_dims(self, dims: dict) -> "PrimFunc":
        """This kernel for the given ``T.dynamic`` sizes (its parameters' shapes made concrete)."""
        from tilefold.frontend.tilelang.types import TensorType
        from tilefold.frontend.tilelang.values import ConstVar

        params = [Param(p.name, TensorType(tuple(dims[d.name] if isinstance(d, ConstVar) else d for d in p.type.shape),
                                           p.type.dtype, p.type.dtype_name)) for p in self.params]
        return replace(self, params=params, dims={**self.dims, **dims})

    is_tilelang_prim_func = True

    @property
    def name(self) -> str:
        return self.python_function.__name__

    @property
    def source_location(self) -> SourceLocation:
        code = self.python_function.__code__
        return SourceLocation(code.co_filename, code.co_firstlineno)

    def module(self) -> ModuleOp:
        """A fresh ``tile`` IR module of this kernel (each call builds a new one)."""
        from tilefold.frontend.tilelang.builder import build_prim_func

        return build_prim_func(self, self.binding())

    def binding(self) -> EagerBinding | None:
        """A fresh copy of an eager kernel's binding (a build fills in its constants), or None."""
        if self.eager is None:
            return None
        return EagerBinding(dict(self.eager.constants), list(self.eager.tensor_names), dict(self.eager.shapes),
                            dict(self.eager.annotations))

    def grids(self) -> list[PrimFunc] | None:
        """One PrimFunc per ``with T.Kernel`` grid of the body, each taking the kernel's tensors and
        its ``T.alloc_global`` scratch tensors (in that order); None for a body of one grid
        without scratch tensors."""
        if self.grid is not None:
            return None
        from tilefold.frontend.source import FunctionSource

        tree = FunctionSource.of(self.python_function).tree
        count = _grid_count(self.python_function)
        scratch = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "alloc_global"
                      for n in ast.walk(tree))
        if count <= 1 and not scratch:
            return None
        from tilefold.frontend.tilelang.builder import KernelBuilder

        probe = KernelBuilder(replace(self, grid=0), self.binding())
        probe.build()
        made = [g for g in probe.globals if g.name in probe.scratch_names]
        params = list(self.params) + [Param(g.name, TensorType(g.shape, g.dtype, g.dtype_name)) for g in made]
        names = tuple(g.name for g in made)
        return [replace(self, grid=k, params=params, scratch=names) for k in range(max(count, 1))]

    def ir(self, debuginfo: bool = False) -> str:
        from tilefold.ir.context import print_ir

        return print_ir(self.module(), debuginfo=debuginfo)

    def with_layout(self, layout: dict, where: SourceLocation | None) -> PrimFunc:
        merged = dict(self.layout)
        for name, spec in layout.items():
            merged[name] = (dict(spec), where)
        return replace(self, layout=merged)

    def with_schedule(self, schedule: dict, where: SourceLocation | None) -> PrimFunc:
        return replace(self, schedule={**self.schedule, **schedule, "__loc__": where})

    def __call__(self, *args, **kwargs):
        raise KernelError(f"{self.name} is a TileLang kernel; run it with tilefold.jit({self.name})(*arrays)",
                          user_location())

    def __repr__(self) -> str:
        params = ", ".join(f"{p.name}: {p.type!r}" for p in self.params)
        return f"<T.prim_func {self.name}({params})>"


def _opens_kernel(stmt: ast.With) -> bool:
    call = stmt.items[0].context_expr if stmt.items else None
    fn = call.func if isinstance(call, ast.Call) else None
    return (isinstance(fn, ast.Attribute) and fn.attr == "Kernel") or (isinstance(fn, ast.Name) and fn.id == "Kernel")


def prim_func(fn=None, **_options):
    """Decorator: make a TileLang kernel of a Python function with ``T.Tensor`` parameters."""
    if fn is None:
        return lambda f: prim_func(f)
    if isinstance(fn, PrimFunc):
        return fn
    if not inspect.isfunction(fn):
        raise KernelError(f"@T.prim_func decorates a def function, not {type(fn).__name__}", user_location())
    params, scalars = _param_types(fn)
    return PrimFunc(fn, params, scalars=scalars)


def _grid_count(fn) -> int:
    """The ``with T.Kernel`` statements at the top of a kernel function's body."""
    from tilefold.frontend.source import FunctionSource

    tree = FunctionSource.of(fn).tree
    return sum(1 for stmt in tree.body if isinstance(stmt, ast.With) and _opens_kernel(stmt))


def eager_prim_func(fn, binding: EagerBinding) -> PrimFunc:
    """The kernel an eager ``@jit`` function builds for ``binding``: its parameters are the
    tensor arguments (in signature order) then the ``T.empty`` outputs (``out_idx``)."""
    from tilefold.frontend.tilelang.builder import build_eager

    prim = PrimFunc(fn, [], eager=binding)
    # the tensors are declared at the top of the body: with several grids, building the first finds them
    probe = replace(prim, grid=0) if _grid_count(fn) > 1 else prim
    _, builder = build_eager(probe, EagerBinding(dict(binding.constants), list(binding.tensor_names),
                                                 dict(binding.shapes), dict(binding.annotations)))
    prim.params = [Param(g.name, TensorType(g.shape, g.dtype, g.dtype_name)) for g in builder.globals]
    names = [g.name for g in builder.globals]
    returned = builder.returned if builder.returned is not None else builder.outputs
    prim.out_idx = [names.index(g.name) for g in returned]
    prim.eager = EagerBinding(dict(builder.eager.constants), list(binding.tensor_names), dict(binding.shapes),
                              dict(binding.annotations))
    return prim


def annotate_tt_layout(func, layout=None, **kwargs):
    """``annotate_tt_layout(prim_func, {"A": dict(memory="L1", layout="sharded", nd_shard=...)})``:
    an annotated copy of the kernel. Inside a kernel body, ``T.annotate_tt_layout({A: {...}})``
    or ``T.annotate_tt_layout(A, memory=..., ...)`` annotates in place."""
    where = user_location()
    if not isinstance(func, PrimFunc):
        raise KernelError("annotate_tt_layout takes a @T.prim_func kernel first (or is called inside a kernel "
                          "body)", where)
    entries = layout_entries(layout if layout is not None else {}, where)
    if kwargs:
        raise KernelError(f"annotate_tt_layout(prim_func, layout) takes the layout as one dict, not keywords "
                          f"{sorted(kwargs)}", where)
    known = {p.name for p in func.params}
    for name in entries:
        if name not in known:
            raise KernelError(f"annotate_tt_layout names {name!r}, which is not a parameter of {func.name} "
                              f"({', '.join(sorted(known))})", where)
    return func.with_layout(entries, where)


def annotate_tt_schedule(func, schedule=None, **kwargs):
    """``annotate_tt_schedule(prim_func, {"policy": "contiguous", "order": "row_major"})``: an
    annotated copy of the kernel."""
    where = user_location()
    if not isinstance(func, PrimFunc):
        raise KernelError("annotate_tt_schedule takes a @T.prim_func kernel first (or is called inside a kernel "
                          "body)", where)
    return func.with_schedule({**(schedule or {}), **kwargs}, where)


annotate_tt_layout.__tile_intrinsic__ = "annotate_tt_layout"
annotate_tt_schedule.__tile_intrinsic__ = "annotate_tt_schedule"
