"""A TileLang-style profiler for a compiled kernel: check it against a reference, estimate its time.

Reads: a :class:`~tilefold.run.jit.JITKernel`. Writes: nothing.
``kernel.get_profiler()`` returns a :class:`Profiler`: ``assert_allclose(ref_program, rtol,
atol)`` runs the kernel on seeded random inputs and compares every output with
``ref_program`` called on the same inputs (torch tensors when torch is installed, as TileLang
gives them; numpy arrays otherwise, or when the program takes no tensors); ``do_bench()`` returns
the simulated device's estimated kernel time in milliseconds (a cost model, not a measurement);
:func:`do_bench` (``tilelang.profiler.do_bench``) times any function the same way.

Errors: AssertionError naming the output and the largest difference.
"""

from __future__ import annotations

import numpy as np

from tilefold.frontend.tilelang.dtypes import host_dtype


class Profiler:
    def __init__(self, kernel):
        self.kernel = kernel

    def inputs(self, seed: int = 0) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        params = self.kernel.prim.params
        outs = self.kernel.outputs()
        arrays = []
        for i, p in enumerate(params):
            if i in outs:
                continue
            dtype = host_dtype(p.type.dtype_name or "float32")
            if np.issubdtype(dtype, np.integer):
                arrays.append(rng.integers(-8, 8, p.type.shape).astype(dtype))
            elif dtype == np.bool_:
                arrays.append(rng.random(p.type.shape) > 0.5)
            else:
                arrays.append(rng.standard_normal(p.type.shape).astype(np.float32).astype(dtype))
        return arrays

    def assert_allclose(self, reference_program, rtol: float = 1e-2, atol: float = 1e-2, max_mismatched_ratio=0.01):
        inputs = self.inputs()
        got = self.kernel(*inputs)
        got = list(got) if isinstance(got, tuple) else [got]
        want = _reference_values(reference_program, inputs)
        want = list(want) if isinstance(want, (tuple, list)) else [want]
        for k, (g, w) in enumerate(zip(got, want)):
            w = w.detach().cpu().float().numpy() if type(w).__module__.startswith("torch") else np.asarray(w)
            g, w = np.asarray(g, np.float32), np.asarray(w, np.float32)
            bad = ~np.isclose(g, w, rtol=rtol, atol=atol)
            if bad.mean() > max_mismatched_ratio:
                raise AssertionError(f"output {k}: {int(bad.sum())} of {bad.size} values differ from the reference; "
                                     f"largest difference {float(np.abs(g - w).max())}")

    def run_once(self, func=None):
        """``func`` (default: the kernel) called once on the profiler's inputs."""
        return (func or self.kernel)(*self.inputs())

    def do_bench(self, func=None, warmup: int = 0, rep: int = 0, backend=None, **_options) -> float:
        """The estimated kernel time of a run, in milliseconds (the simulator's cost model); with
        ``func``, :func:`do_bench` of it called on the profiler's inputs."""
        if func is not None:
            inputs = self.inputs()
            return do_bench(lambda: _reference_values(func, inputs))
        if self.kernel.last_result is None:
            self.kernel(*self.inputs())
        return self.kernel.last_result.perf.seconds * 1000.0


def do_bench(fn, warmup=None, rep=None, **_options) -> float:
    """``fn()``'s time in milliseconds, called once: the cost model's device time of the kernels it
    ran on the simulated device, or — when it runs none (a torch or numpy reference) — its wall time
    on the host. The two are of different machines: compare kernels with kernels."""
    import time

    from tilefold.compiler import MODELED_DEVICE_SECONDS

    before, start = MODELED_DEVICE_SECONDS[0], time.perf_counter()
    fn()
    wall = time.perf_counter() - start
    device = MODELED_DEVICE_SECONDS[0] - before
    return (device if device > 0 else wall) * 1000.0


def _reference_values(reference_program, inputs: list[np.ndarray]):
    """``reference_program`` on the inputs: as torch tensors when torch is installed (as TileLang
    calls it), as numpy arrays when it is not or the program takes no tensors."""
    try:
        import torch
    except ImportError:
        return reference_program(*inputs)
    tensors = [torch.from_numpy(np.ascontiguousarray(a if a.dtype.kind in "biu" else np.asarray(a, np.float32)))
               for a in inputs]
    try:
        return reference_program(*tensors)
    except (TypeError, AttributeError):
        return reference_program(*inputs)


__all__ = ["Profiler", "do_bench"]
