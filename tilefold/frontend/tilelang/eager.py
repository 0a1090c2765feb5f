"""Eager TileLang kernels: ``@tilefold.jit`` on a function whose body declares its tensors.

Reads: a Python function written in TileLang's eager style::

    @tilefold.jit
    def matmul(A, B, block_M, block_N, block_K, dtype=T.float16):
        M, N, K = T.const("M, N, K")
        A: T.Tensor((M, K), dtype)
        B: T.Tensor((K, N), dtype)
        C = T.empty((M, N), dtype)
        with T.Kernel(...) as (bx, by):
            ...
        return C

Writes: :class:`~tilefold.run.jit.JITKernel` objects, one per set of
compile-time arguments and tensor shapes. ``matmul(a, b, 128, 128, 32)`` compiles (once) and
runs at once, returning ``C``; ``matmul.compile(M=..., N=..., K=..., block_M=...)`` returns the
kernel, called later with the input arrays. The tensor arguments are the parameters the
body (or the signature) annotates with ``T.Tensor``; the others are compile-time constants.
``T.const`` / ``T.dynamic`` names are bound from the shapes of the arrays passed (or from
``.compile`` keywords); a ``T.dynamic`` dim is compiled for each size it is called with.

Errors: :class:`KernelError` naming the call's line for missing or extra arguments and for
tensors whose shapes do not match their declarations.
"""

from __future__ import annotations

import ast
import inspect

import numpy as np

from tilefold.errors import KernelError
from tilefold.frontend.source import FunctionSource
from tilefold.frontend.tilelang.prim_func import EagerBinding, eager_prim_func
from tilefold.frontend.tilelang.types import TensorType
from tilefold.caller import user_location


def freeze(value):
    """A hashable stand-in for a compile-time argument (lists, dicts, arrays by shape)."""
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, freeze(v)) for k, v in value.items()))
    if is_array(value):
        return ("array", tuple(value.shape), str(value.dtype))
    try:
        hash(value)
    except TypeError:
        return ("object", id(value))
    return value


def is_array(value) -> bool:
    """A numpy array or a torch tensor (not a torch dtype or device)."""
    return isinstance(value, np.ndarray) or (type(value).__module__.startswith("torch") and hasattr(value, "shape"))


def _tensor_call(node: ast.expr):
    """``(shape node, dtype node)`` of ``T.Tensor(shape, dtype)`` / ``T.Tensor[shape, dtype]``."""
    if isinstance(node, ast.Call) and node.args:
        return node.args[0]
    if isinstance(node, ast.Subscript):
        key = node.slice
        return key.elts[0] if isinstance(key, ast.Tuple) and key.elts else key
    return None


class EagerFunction:
    """An eager-style ``@jit`` function (see the module docstring)."""

    def __init__(self, fn, make_kernel, out_idx=None):
        self.fn = fn
        self.make_kernel = make_kernel       # PrimFunc -> JITKernel
        self.signature = inspect.signature(fn)
        self._kernels: dict = {}
        if out_idx is not None:
            raise KernelError(f"{fn.__name__}: out_idx is for kernels that return a @T.prim_func; an eager kernel "
                              "returns the tensors it makes with T.empty", user_location())
        src = FunctionSource.of(fn)
        params = list(self.signature.parameters)
        self.declared: dict[str, ast.expr] = {}
        self.const_names: set[str] = set()
        for node in ast.walk(src.tree):
            if isinstance(node, ast.AnnAssign) and node.value is None and isinstance(node.target, ast.Name) \
                    and node.target.id in params:
                self.declared.setdefault(node.target.id, node.annotation)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in ("const", "dynamic") and node.args and isinstance(node.args[0], ast.Constant):
                self.const_names |= {n for n in str(node.args[0].value).replace(",", " ").split() if n}
        # other names of a constant (``KH, KW = K, K``), so that a tensor annotated with them gives its value
        self.aliases: dict[str, str] = {}
        for node in ast.walk(src.tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
                pairs = zip(target.elts, value.elts) if isinstance(target, ast.Tuple) and isinstance(
                    value, ast.Tuple) and len(target.elts) == len(value.elts) else [(target, value)]
                for t, v in pairs:
                    if isinstance(t, ast.Name) and isinstance(v, ast.Name) and v.id in self.const_names:
                        self.aliases[t.id] = v.id
        annotations = inspect.get_annotations(fn, eval_str=False)
        self.annotations = {}
        for name, ann in annotations.items():
            value = ann
            if isinstance(ann, str):
                try:
                    value = eval(ann, fn.__globals__)  # noqa: S307 - the user's own annotation
                except Exception:
                    continue
            if isinstance(value, TensorType):
                self.annotations[name] = value
        self.tensor_names = [n for n in params if n in self.declared or n in self.annotations]
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__

    # -- binding ----------------------------------------------------------------------------------

    def bind(self, args, kwargs, compiling: bool):
        """(compile-time constants, tensor arrays by name) of a call or a ``.compile``."""
        where = user_location()
        params = self.signature.parameters
        extra = {k: v for k, v in kwargs.items() if k not in params}
        unknown = [k for k in extra if k not in self.const_names]
        if unknown and not compiling:
            raise KernelError(f"{self.fn.__name__}() got unexpected arguments {unknown}", where)
        try:
            bound = self.signature.bind_partial(*args, **{k: v for k, v in kwargs.items() if k in params})
        except TypeError as exc:
            raise KernelError(f"{self.fn.__name__}(...): {exc}", where) from None
        constants = dict(extra)
        tensors = {}
        for name, p in params.items():
            if name in self.tensor_names:
                value = bound.arguments.get(name)
                if value is not None and not isinstance(value, TensorType):
                    tensors[name] = value
                continue
            if name in bound.arguments:
                constants[name] = bound.arguments[name]
            elif p.default is not p.empty:
                constants[name] = p.default
            else:
                raise KernelError(f"{self.fn.__name__}() needs its argument {name!r}", where)
        if not compiling:
            missing = [n for n in self.tensor_names if n not in tensors]
            if missing:
                raise KernelError(f"{self.fn.__name__}() needs the arrays {missing}; to compile without arrays call "
                                  f"{self.fn.__name__}.compile(...)", where)
        return constants, tensors

    def binding(self, constants: dict, tensors: dict) -> EagerBinding:
        shapes = {n: tuple(np.shape(a)) for n, a in tensors.items()}
        constants = dict(constants)
        for name, shape in shapes.items():
            node = self.declared.get(name)
            dims = _tensor_call(node) if node is not None else None
            if isinstance(dims, (ast.Tuple, ast.List)) and len(dims.elts) == len(shape):
                for elt, size in zip(dims.elts, shape):
                    name = self.aliases.get(elt.id, elt.id) if isinstance(elt, ast.Name) else None
                    if name in self.const_names:
                        constants.setdefault(name, int(size))
        return EagerBinding(constants, list(self.tensor_names), shapes, dict(self.annotations))

    def kernel(self, constants: dict, tensors: dict):
        binding = self.binding(constants, tensors)
        key = (freeze(binding.constants), tuple(sorted(binding.shapes.items())))
        kernel = self._kernels.get(key)
        if kernel is None:
            kernel = self._kernels[key] = self.make_kernel(eager_prim_func(self.fn, binding))
        return kernel

    # -- the public face ----------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        constants, tensors = self.bind(args, kwargs, compiling=False)
        kernel = self.kernel(constants, tensors)
        return kernel(*(tensors[n] for n in self.tensor_names))

    def compile(self, *args, **kwargs):
        """The kernel for these compile-time arguments (``T.const`` values by keyword), to call later."""
        constants, tensors = self.bind(args, kwargs, compiling=True)
        return self.kernel(constants, tensors)

    def get_tir(self, *args, **kwargs):
        constants, tensors = self.bind(args, kwargs, compiling=True)
        return self.kernel(constants, tensors).prim

    def get_kernel_source(self, *args, **kwargs) -> str:
        return self.compile(*args, **kwargs).get_kernel_source()

    def par_compile(self, configs, num_workers=None, ignore_error=False):
        kernels = []
        for config in configs:
            try:
                kernels.append(self.compile(**config) if isinstance(config, dict) else self.compile(*config))
            except KernelError:
                if not ignore_error:
                    raise
                kernels.append(None)
        return kernels

    def __repr__(self) -> str:
        return f"<tilefold.jit eager {self.fn.__name__}>"


def is_eager_style(fn) -> bool:
    """An eager function declares tensors in its body (``A: T.Tensor(...)``) or opens ``T.Kernel``
    itself; a lazy one defines and returns a ``@T.prim_func``."""
    try:
        tree = FunctionSource.of(fn).tree
    except KernelError:
        return False
    for node in ast.walk(tree):
        if node is tree:
            continue
        if isinstance(node, ast.FunctionDef):
            if any("prim_func" in ast.unparse(d) for d in node.decorator_list):
                return False
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and node.value is None:
            return True
        if isinstance(node, ast.With):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("const", "empty", "dynamic"):
            return True
    return False


__all__ = ["EagerFunction", "is_eager_style", "freeze", "is_array"]
