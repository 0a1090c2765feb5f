"""``@tilefold.jit`` and ``tilefold.compile``: a TileLang kernel as a callable that runs on the simulated device.

Reads: a ``@T.prim_func`` (or a function with ``T.Tensor`` parameters); a factory function
returning one (TileLang's ``@jit def matmul(M, N, K, ...)`` style, "lazy"); or an eager-style
function whose body declares its tensors (:mod:`.eager`). Writes: :class:`JITKernel`
callables.

A :class:`JITKernel` compiles on first call and keeps the result; a jitted factory compiles
once per distinct argument tuple (its shapes and block sizes) and returns the same
JITKernel for the same arguments. Calling a JITKernel takes numpy arrays or torch tensors
for the kernel's parameters in order: pass the inputs only (the outputs are allocated and
returned, one array or a tuple), or every parameter (outputs and in/out tensors are written
into the arrays given, and the outputs returned; an output given keeps its values where the
kernel does not write it, as a TileLang kernel's tensors do). Which parameters are outputs comes from
``out_idx``, the ``T.empty`` tensors of an eager kernel, or the kernel's dataflow (the
tensors it copies results into). A kernel of several ``with T.Kernel`` grids runs them one
after another (:mod:`.sequence`). Results come back in the parameter's dtype (float16 as
``numpy.float16``, bfloat16 as ``ml_dtypes.bfloat16``, int32 ...), or as torch tensors when
the inputs were torch tensors.

TileLang's compile options (``target``, ``execution_backend``, ``pass_configs``,
``verbose``, ``compile_flags``, ``debug_root_path``) are accepted: the target is the simulated
Tensix device, and the pass configs name GPU code-generation choices with no Tensix meaning
(:class:`PassConfigKey`); they are kept on the kernel (``pass_configs``) and change nothing.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import json

import ml_dtypes
import numpy as np

from tilefold.arch import get_arch
from tilefold.huge_pages import ordinary_pages
from tilefold.errors import KernelError, ProgramError
from tilefold.compiler import CompiledKernel, compile_prim_func
from tilefold.frontend.tilelang.dtypes import canonical_name, host_dtype
from tilefold.frontend.tilelang.eager import EagerFunction, freeze, is_eager_style
from tilefold.frontend.tilelang.prim_func import PrimFunc, _annotations, prim_func, scalar_dtype
from tilefold.run.sequence import KernelSequence
from tilefold.frontend.tilelang.types import TensorType
from tilefold.caller import user_location

_DEFAULT_DEVICE = {"arch": None, "trace": None}

ordinary_pages()      # host arrays on ordinary pages (tilefold.huge_pages)


class _PassConfigKeys(type):
    def __getattr__(cls, name: str) -> str:
        if name.startswith("TL_") or name.startswith("TIR_"):
            return "tl." + name[3:].lower() if name.startswith("TL_") else "tir." + name[4:].lower()
        raise AttributeError(name)


class PassConfigKey(metaclass=_PassConfigKeys):
    """TileLang's pass configuration keys (``tilelang.PassConfigKey.TL_ENABLE_FAST_MATH``): GPU
    code-generation options. tilefold accepts every ``TL_*`` key and keeps the values on the
    kernel; none of them changes how a kernel is lowered to Tensix."""

    TL_DISABLE_WARP_SPECIALIZED = "tl.disable_warp_specialized"
    TL_DISABLE_TMA_LOWER = "tl.disable_tma_lower"
    TL_ENABLE_FAST_MATH = "tl.enable_fast_math"
    TL_DISABLE_DATA_RACE_CHECK = "tl.disable_data_race_check"
    TL_DISABLE_THREAD_STORAGE_SYNC = "tl.disable_thread_storage_sync"
    TL_CONFIG_INDEX_BITWIDTH = "tl.config_index_bitwidth"
    TL_DISABLE_SAFE_MEMORY_ACCESS = "tl.disable_safe_memory_legalize"
    TL_DISABLE_VECTORIZE_256 = "tl.disable_vectorize_256"


class TensorSupplyType:
    """How a profiler makes inputs (TileLang's names): accepted, inputs are normal random values."""

    Integer = "Integer"
    Uniform = "Uniform"
    Normal = "Normal"
    Randn = "Randn"
    Zero = "Zero"
    One = "One"
    Auto = "Auto"


@contextlib.contextmanager
def default_device(arch=None, trace=None):
    """Within the block, JIT kernels without an ``arch`` of their own compile for ``arch`` and
    write a Chrome trace of each run to ``trace``."""
    saved = dict(_DEFAULT_DEVICE)
    _DEFAULT_DEVICE.update(arch=arch, trace=trace)
    try:
        yield
    finally:
        _DEFAULT_DEVICE.update(saved)


def _is_torch(x) -> bool:
    return type(x).__module__.startswith("torch")


def _to_numpy(x, name: str) -> np.ndarray:
    if _is_torch(x):
        import torch

        t = x.detach().cpu()
        if t.dtype in (torch.bfloat16, torch.float16) or "float8" in str(t.dtype):
            t = t.float()
        return t.numpy()
    try:
        array = np.asarray(x)
    except (TypeError, ValueError):
        array = None
    if array is None or array.dtype.hasobject or array.dtype.kind in "USMmc":
        raise KernelError(f"argument {name!r} must be a numpy array or a torch tensor, not {type(x).__name__}",
                          user_location())
    return array


def _to_torch(value: np.ndarray, dtype_name: str):
    import torch

    if dtype_name in ("bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"):
        return torch.from_numpy(value.astype(np.float32)).to(getattr(torch, dtype_name))
    return torch.from_numpy(np.ascontiguousarray(value))


class JITKernel:
    """A compiled-on-demand TileLang kernel (see the module docstring)."""

    def __init__(self, prim: PrimFunc, out_idx=None, arch=None, pass_configs=None):
        self.prim = prim
        self.arch = arch
        self.pass_configs = dict(pass_configs or {})
        self.by_scalars: dict = {}
        self.by_dims: dict = {}                 # T.dynamic sizes -> the kernel built for them
        self.scalar_out_idx = out_idx
        n = len(prim.params) + (0 if prim.scalar_values else len(prim.scalars))
        if out_idx is None and prim.out_idx is not None:
            out_idx = prim.out_idx
        if out_idx is None:
            self.out_idx = None
            self.return_order = None
        else:
            idx = [out_idx] if isinstance(out_idx, int) else list(out_idx)
            for i in idx:
                if not -n <= i < n:
                    raise KernelError(f"out_idx {i} is not a parameter index of {prim.name} ({n} parameters)",
                                      user_location())
            self.return_order = [i % n for i in idx]
            self.out_idx = sorted(set(self.return_order))
        self._compiled: dict = {}
        functools.update_wrapper(self, prim.python_function)

    @property
    def compiled(self) -> CompiledKernel:
        """The kernel compiled for its device (compiled on first use, once per device)."""
        if ((self.prim.scalars and not self.prim.scalar_values) or self.prim.dynamic_dims()) and \
                getattr(self, "last_called", None) is not None:
            return self.last_called.compiled       # built for the last call's scalars or sizes
        if self.prim.dynamic_dims():
            raise KernelError(f"kernel {self.prim.name!r} has the T.dynamic sizes {', '.join(self.prim.dynamic_dims())}: "
                              "tilefold builds it for the shapes each call passes, so call it before asking for its "
                              "code", user_location())
        arch = get_arch(self.arch if self.arch is not None else _DEFAULT_DEVICE["arch"])
        key = id(arch)  # device descriptions are module-level singletons
        if key not in self._compiled:
            grids = self.prim.grids()
            self._compiled[key] = compile_prim_func(self.prim, arch) if grids is None else \
                KernelSequence(self.prim, [compile_prim_func(g, arch) for g in grids])
        return self._compiled[key]

    def compile(self) -> CompiledKernel:
        return self.compiled

    def outputs(self) -> list[int]:
        """Indices of the output parameters."""
        if self.out_idx is not None:
            return self.out_idx
        roles = self.compiled.roles()
        return [i for i, p in enumerate(self.prim.params) if roles.get(p.name) == "output"]

    def get_kernel_source(self, kernel_only: bool = False) -> str:
        """The generated TT-Metalium artifacts as one JSON string: ``reader.cpp``, ``compute.cpp``,
        ``writer.cpp``, ``main.cpp``, ``tt.plan.json`` and ``CMakeLists.txt`` (``json.loads`` gives a dict by
        file name)."""
        return json.dumps(self.compiled.artifacts(kernel_only), indent=1)

    def get_artifact(self, name: str) -> str | None:
        """One artifact by file name (``compute.cpp``, ``main.cpp``, ``tt.plan.json`` ...)."""
        return self.compiled.artifacts().get(name)

    def run_once(self, func=None):
        """Run the kernel (or ``func``) once on the profiler's inputs, as TileLang's ``run_once``."""
        return self.get_profiler().run_once(func)

    def get_profiler(self, tensor_supply_type=None):
        from tilefold.run.profiler import Profiler

        return Profiler(self)

    @property
    def last_result(self):
        """The simulator's RunResult of the last call (performance estimate, hazards)."""
        return self.compiled.last_result

    def for_scalars(self, args: tuple) -> tuple[JITKernel, tuple]:
        """A kernel with scalar parameters is built for the values a call passes (once per values):
        that kernel and the call's arrays."""
        total = len(self.prim.params) + len(self.prim.scalars)
        positions = [p for p, _, _ in self.prim.scalars]
        outs = [i % total for i in ([] if self.scalar_out_idx is None else
                                    [self.scalar_out_idx] if isinstance(self.scalar_out_idx, int)
                                    else self.scalar_out_idx)]
        if len(args) == total:
            slots = list(range(total))
        elif len(args) == total - len(outs):
            slots = [i for i in range(total) if i not in outs]
        else:
            names = ", ".join(n for _, n, _ in self.prim.scalars)
            raise KernelError(f"{self.prim.name} takes {total} arguments ({len(self.prim.params)} arrays and the "
                              f"scalars {names}), or {total - len(outs)} without its outputs; got {len(args)}",
                              user_location())
        values, arrays = {}, []
        for slot, arg in zip(slots, args):
            if slot in positions:
                name = self.prim.scalars[positions.index(slot)][1]
                if not isinstance(arg, (int, float, np.integer, np.floating)) or isinstance(arg, bool):
                    raise KernelError(f"argument {name!r} of {self.prim.name} is a scalar, not "
                                      f"{type(arg).__name__}", user_location())
                values[name] = arg.item() if isinstance(arg, np.generic) else arg
            else:
                arrays.append(arg)
        key = tuple(sorted(values.items()))
        if key not in self.by_scalars:
            shift = [i - sum(p < i for p in positions) for i in outs]
            from dataclasses import replace

            self.by_scalars[key] = JITKernel(replace(self.prim, scalar_values=values),
                                             shift if self.scalar_out_idx is not None else None,
                                             self.arch, self.pass_configs)
        self.last_called = self.by_scalars[key]
        return self.by_scalars[key], tuple(arrays)

    def for_dims(self, args: tuple) -> JITKernel:
        """A kernel whose parameters' shapes use ``T.dynamic`` sizes is built for the sizes of the
        arrays a call passes (once per sizes)."""
        from tilefold.frontend.tilelang.values import ConstVar

        params = self.prim.params
        outs = set(self.out_idx or [])
        given = list(range(len(params))) if len(args) == len(params) else [i for i in range(len(params))
                                                                             if i not in outs]
        dims: dict[str, int] = {}
        for i, arg in zip(given, args):
            shape = tuple(np.shape(arg))
            declared = params[i].type.shape
            if len(shape) != len(declared):
                raise KernelError(f"argument {params[i].name!r} of {self.prim.name} has shape {shape}; the kernel "
                                  f"takes {len(declared)} dims", user_location())
            for d, size in zip(declared, shape):
                if isinstance(d, ConstVar) and dims.setdefault(d.name, int(size)) != int(size):
                    raise KernelError(f"argument {params[i].name!r} of {self.prim.name} gives T.dynamic {d.name!r} "
                                      f"the size {size}, another argument {dims[d.name]}", user_location())
        missing = [n for n in self.prim.dynamic_dims() if n not in dims]
        if missing:
            raise KernelError(f"{self.prim.name}: no argument gives T.dynamic {missing[0]!r} its size; pass the "
                              "tensors whose shapes use it", user_location())
        key = tuple(sorted(dims.items()))
        if key not in self.by_dims:
            self.by_dims[key] = JITKernel(self.prim.with_dims(dims), self.out_idx, self.arch, self.pass_configs)
        self.last_called = self.by_dims[key]
        return self.by_dims[key]

    def __call__(self, *args, trace=None):
        if self.prim.scalars and not self.prim.scalar_values:
            kernel, arrays = self.for_scalars(args)
            return kernel(*arrays, trace=trace)
        if self.prim.dynamic_dims():
            return self.for_dims(args)(*args, trace=trace)
        compiled = self.compiled
        trace = trace if trace is not None else _DEFAULT_DEVICE["trace"]
        params = self.prim.params
        outs = self.outputs()
        if len(args) == len(params):
            given = dict(enumerate(args))
        elif len(args) == len(params) - len(outs):
            ins = [i for i in range(len(params)) if i not in outs]
            given = dict(zip(ins, args))
        else:
            names = ", ".join(p.name for p in params)
            out_names = ", ".join(params[i].name for i in outs) or "none"
            raise KernelError(f"{self.prim.name}({names}) takes {len(params)} arrays, or {len(params) - len(outs)} "
                              f"without its outputs ({out_names}); got {len(args)}", user_location())
        arrays = {}
        # torch tensors back when torch tensors came in, or nothing came in and the caller uses torch
        use_torch = any(_is_torch(a) for a in args) or (not args and "torch" in sys.modules)
        for i, a in given.items():
            p = params[i]
            arr = _to_numpy(a, p.name)
            if arr.shape != p.type.shape:
                raise KernelError(f"argument {p.name!r} of {self.prim.name} has shape {arr.shape}; the kernel takes "
                                  f"{p.type.shape}", user_location())
            arrays[p.name] = arr
        roles = compiled.roles()
        for i in outs:
            p = params[i]
            if i not in given and roles.get(p.name) in ("input", "inout"):
                # an output the kernel also reads (stores under a condition keep the other elements): TileLang
                # allocates outputs uninitialized, so any start is right; it starts as zeros
                arrays[p.name] = np.zeros(p.type.shape, np.float32)
        try:
            results = compiled.simulate(arrays, trace=trace)
        except ProgramError as err:
            if err.location is None:
                err.location = user_location()
            raise
        values = {}
        for i, p in enumerate(params):
            if p.name not in results:
                continue
            dtype_name = p.type.dtype_name or canonical_name(p.type.dtype)
            value = _host_value(results[p.name], dtype_name)
            values[i] = value
            if i in given and roles.get(p.name) in ("output", "inout"):
                target = given[i]
                if _is_torch(target):
                    target.copy_(_to_torch(value, dtype_name).to(target.dtype))
                elif isinstance(target, np.ndarray):
                    np.copyto(target, value.astype(target.dtype, copy=False), casting="unsafe")
        returned = []
        for i in (self.return_order if self.return_order is not None else outs):
            if i in given:
                returned.append(given[i])
            elif use_torch:
                returned.append(_to_torch(values[i], params[i].type.dtype_name or "float32"))
            else:
                returned.append(values[i])
        if not returned:
            return None
        return returned[0] if len(returned) == 1 else tuple(returned)

    def __repr__(self) -> str:
        return f"<tilefold.jit {self.prim!r}>"


def _host_value(value: np.ndarray, dtype_name: str) -> np.ndarray:
    """A result in the TileLang dtype the user wrote (integers rounded toward zero, bool as != 0)."""
    dtype = host_dtype(dtype_name)
    if dtype == np.bool_:
        return value != 0
    if np.issubdtype(dtype, np.integer) and value.dtype.kind == "f":
        return np.trunc(value).astype(dtype)
    if dtype in (np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)):
        return np.asarray(value, np.float32).astype(dtype)
    return value.astype(dtype, copy=False)


class JITFactory:
    """A jitted function that returns a ``@T.prim_func``: one JITKernel per argument tuple."""

    def __init__(self, factory, out_idx=None, arch=None, pass_configs=None):
        self.factory = factory
        self.out_idx = out_idx
        self.arch = arch
        self.pass_configs = pass_configs
        self._kernels: dict = {}
        functools.update_wrapper(self, factory)

    def __call__(self, *args, **kwargs) -> JITKernel:
        key = freeze((args, tuple(sorted(kwargs.items()))))
        kernel = self._kernels.get(key)
        if kernel is None:
            made = self.factory(*args, **kwargs)
            if not isinstance(made, PrimFunc):
                raise KernelError(f"{self.factory.__name__} must return a @T.prim_func kernel, not "
                                  f"{type(made).__name__}", user_location())
            kernel = self._kernels[key] = JITKernel(made, self.out_idx, self.arch, self.pass_configs)
        return kernel

    def compile(self, *args, **kwargs) -> JITKernel:
        kernel = self(*args, **kwargs)
        kernel.compile()
        return kernel

    def get_tir(self, *args, **kwargs) -> PrimFunc:
        return self(*args, **kwargs).prim

    def get_kernel_source(self, *args, **kwargs) -> str:
        return self(*args, **kwargs).get_kernel_source()


def _has_tensor_params(fn) -> bool:
    try:
        annotations = _annotations(fn)
    except Exception:
        return False
    params = inspect.signature(fn).parameters
    return any(isinstance(annotations.get(p), TensorType) for p in params) and \
        all(isinstance(annotations.get(p), TensorType) or scalar_dtype(annotations.get(p)) for p in params)


def jit(fn=None, *, out_idx=None, arch=None, target=None, target_host=None, execution_backend=None, verbose=None,
        pass_configs=None, debug_root_path=None, compile_flags=None):
    """Make a TileLang kernel (a ``@T.prim_func``, a factory of them, or an eager-style function)
    callable on numpy / torch arrays; it runs on the simulated device (``arch``, default
    Wormhole n150). TileLang's other options are accepted (see the module docstring)."""
    if fn is None:
        return lambda f: jit(f, out_idx=out_idx, arch=arch, pass_configs=pass_configs)
    if isinstance(fn, PrimFunc):
        return JITKernel(fn, out_idx, arch, pass_configs)
    if inspect.isfunction(fn):
        if _has_tensor_params(fn):
            return JITKernel(prim_func(fn), out_idx, arch, pass_configs)
        if is_eager_style(fn):
            return EagerFunction(fn, lambda prim: JITKernel(prim, None, arch, pass_configs), out_idx)
        return JITFactory(fn, out_idx, arch, pass_configs)
    raise KernelError(f"tilefold.jit takes a @T.prim_func kernel or a function returning one, not "
                      f"{type(fn).__name__}", user_location())


def compile(func, out_idx=None, target=None, target_host=None, execution_backend=None, verbose=None,  # noqa: A001
            pass_configs=None, compile_flags=None, arch=None) -> JITKernel:
    """``tilefold.compile(prim_func, out_idx=[2])``: the kernel compiled for the simulated device.
    A :class:`JITKernel` (what a ``@tilefold.jit`` factory returns) is compiled from its kernel,
    keeping its ``out_idx`` unless another is given."""
    if isinstance(func, JITKernel):
        if out_idx is None:
            out_idx = func.return_order
        arch = arch if arch is not None else func.arch
        pass_configs = pass_configs if pass_configs is not None else func.pass_configs
        func = func.prim
    elif inspect.isfunction(func) and _has_tensor_params(func):
        func = prim_func(func)
    if not isinstance(func, PrimFunc):
        raise KernelError(f"tilefold.compile takes a @T.prim_func kernel, not {type(func).__name__}", user_location())
    kernel = JITKernel(func, out_idx, arch, pass_configs)
    if not func.scalars or func.scalar_values:   # else it is built for the scalars of each call
        kernel.compile()
    return kernel
