"""``@tilefold.jit``: a TileLang kernel as a Python callable that runs on the simulated device.

Reads: a ``@T.prim_func`` (or a function with ``T.Tensor`` parameters), or a factory
function returning one (TileLang's ``@jit def matmul(M, N, K, ...)`` style). Writes:
:class:`JITKernel` callables.

A :class:`JITKernel` compiles on first call and keeps the result; a jitted factory compiles
once per distinct argument tuple (its shapes and block sizes) and returns the same
JITKernel for the same arguments. Calling a JITKernel takes numpy arrays or torch tensors
for the kernel's parameters in order: pass the inputs only (the outputs are allocated and
returned, one array or a tuple), or every parameter (outputs are written into the arrays
given and returned too). Which parameters are outputs comes from the kernel's dataflow (the
tensors it copies results into), or from ``out_idx``. Results come back in the
parameter's dtype: ``ml_dtypes.bfloat16`` / ``float32`` numpy arrays, or torch tensors when
the inputs were torch tensors.
"""

from __future__ import annotations

import contextlib
import functools
import inspect

import ml_dtypes
import numpy as np

from tilefold.arch import get_arch
from tilefold.errors import KernelError, ProgramError
from tilefold.frontend.tilelang.compiler import CompiledKernel, compile_prim_func
from tilefold.frontend.tilelang.prim_func import PrimFunc, prim_func
from tilefold.frontend.tilelang.types import TensorType
from tilefold.layout.formats import DataFormat
from tilefold.program.caller import user_location


_DEFAULT_DEVICE = {"arch": None, "trace": None}


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
        if t.dtype in (torch.bfloat16, torch.float16):
            t = t.float()
        return t.numpy().astype(np.float32, copy=False)
    try:
        array = np.asarray(x)
        return array if array.dtype == ml_dtypes.bfloat16 else np.asarray(x, dtype=np.float32)
    except (TypeError, ValueError):
        raise KernelError(f"argument {name!r} must be a numpy array or a torch tensor, not {type(x).__name__}",
                          user_location()) from None


def _host_dtype(fmt: DataFormat):
    if fmt is DataFormat.Float16_b:
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(np.float32)


class JITKernel:
    """A compiled-on-demand TileLang kernel (see the module docstring)."""

    def __init__(self, prim: PrimFunc, out_idx=None, arch=None):
        self.prim = prim
        self.arch = arch
        n = len(prim.params)
        if out_idx is None:
            self.out_idx = None
        else:
            idx = [out_idx] if isinstance(out_idx, int) else list(out_idx)
            self.out_idx = sorted({i % n for i in idx})
        self._compiled: dict = {}
        functools.update_wrapper(self, prim.python_function)

    @property
    def compiled(self) -> CompiledKernel:
        """The kernel compiled for its device (compiled on first use, once per device)."""
        arch = get_arch(self.arch if self.arch is not None else _DEFAULT_DEVICE["arch"])
        key = id(arch)  # device descriptions are module-level singletons
        if key not in self._compiled:
            self._compiled[key] = compile_prim_func(self.prim, arch)
        return self._compiled[key]

    def compile(self) -> CompiledKernel:
        return self.compiled

    def outputs(self) -> list[int]:
        """Indices of the output parameters."""
        if self.out_idx is not None:
            return self.out_idx
        return [i for i, t in enumerate(self.compiled.tensors) if t.role == "output"]

    def get_kernel_source(self) -> dict[str, str]:
        """The generated C++ kernels, by file name."""
        return self.compiled.kernel_sources()

    @property
    def last_result(self):
        """The simulator's RunResult of the last call (performance estimate, hazards)."""
        return self.compiled.last_result

    def __call__(self, *args, trace=None):
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
        use_torch = any(_is_torch(a) for a in args)
        for i, a in given.items():
            p = params[i]
            arr = _to_numpy(a, p.name)
            if arr.shape != p.type.shape:
                raise KernelError(f"argument {p.name!r} of {self.prim.name} has shape {arr.shape}; the kernel takes "
                                  f"{p.type.shape}", user_location())
            arrays[p.name] = arr
        try:
            results = compiled.simulate(arrays, trace=trace)
        except ProgramError as err:
            if err.location is None:
                err.location = user_location()
            raise
        returned = []
        for i in outs:
            p = params[i]
            value = results[p.name].astype(_host_dtype(p.type.dtype), copy=False)
            if i in given:
                target = given[i]
                if _is_torch(target):
                    import torch

                    target.copy_(torch.from_numpy(value.astype(np.float32)).to(target.dtype))
                else:
                    np.copyto(target, value, casting="unsafe")
                returned.append(target)
            elif use_torch:
                import torch

                t = torch.from_numpy(value.astype(np.float32))
                returned.append(t.to(torch.bfloat16) if p.type.dtype is DataFormat.Float16_b else t)
            else:
                returned.append(value)
        if not returned:
            return None
        return returned[0] if len(returned) == 1 else tuple(returned)

    def __repr__(self) -> str:
        return f"<tilefold.jit {self.prim!r}>"


class JITFactory:
    """A jitted function that returns a ``@T.prim_func``: one JITKernel per argument tuple."""

    def __init__(self, factory, out_idx=None, arch=None):
        self.factory = factory
        self.out_idx = out_idx
        self.arch = arch
        self._kernels: dict = {}
        functools.update_wrapper(self, factory)

    def __call__(self, *args, **kwargs) -> JITKernel:
        try:
            key = (args, tuple(sorted(kwargs.items())))
            hash(key)
        except TypeError:
            raise KernelError(f"{self.factory.__name__} takes hashable arguments (shapes, block sizes, dtypes) so "
                              "that each set compiles once", user_location()) from None
        kernel = self._kernels.get(key)
        if kernel is None:
            made = self.factory(*args, **kwargs)
            if not isinstance(made, PrimFunc):
                raise KernelError(f"{self.factory.__name__} must return a @T.prim_func kernel, not "
                                  f"{type(made).__name__}", user_location())
            kernel = self._kernels[key] = JITKernel(made, self.out_idx, self.arch)
        return kernel


def _has_tensor_params(fn) -> bool:
    try:
        annotations = inspect.get_annotations(fn, eval_str=True)
    except Exception:
        return False
    return bool(annotations) and all(isinstance(a, TensorType) for k, a in annotations.items() if k != "return")


def jit(fn=None, *, out_idx=None, arch=None, **_options):
    """Make a TileLang kernel (or a factory of kernels) callable on numpy / torch arrays; it
    runs on the simulated device (``arch``, default Wormhole n150)."""
    if fn is None:
        return lambda f: jit(f, out_idx=out_idx, arch=arch)
    if isinstance(fn, PrimFunc):
        return JITKernel(fn, out_idx, arch)
    if inspect.isfunction(fn):
        if _has_tensor_params(fn):
            return JITKernel(prim_func(fn), out_idx, arch)
        return JITFactory(fn, out_idx, arch)
    raise KernelError(f"tilefold.jit takes a @T.prim_func kernel or a function returning one, not "
                      f"{type(fn).__name__}", user_location())
