"""One configuration of a tuned kernel, as the front end that wrote it builds, lowers and runs it.

Reads: what the tuned function returned for a configuration — a TileLang kernel (a
``@T.prim_func`` or a :class:`~tilefold.run.jit.JITKernel`) or a TT-Lang
operation (:class:`~tilefold.frontend.ttl.operation.Operation`, called with the configuration's
Python constants when the operation itself is tuned). Writes: nothing; a candidate hands back
its lowered program (:class:`Lowered`) and, when run, its outputs and the simulator's
:class:`~tilefold.sim.device.RunResult`.

TileLang candidates run on the sweep's input arrays and return the kernel's outputs. TT-Lang
candidates run on copies of the call's device tensors (so configurations never see each other's
results) and return the tensors the operation writes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from tilefold.errors import KernelError


@dataclass
class Lowered:
    """A candidate's program after the pipeline: its IR and host program as text (what the cache
    key hashes), the program, and the device it was lowered for."""

    text: str
    program: object
    arch: object


def program_text(module, program) -> str:
    """The lowered IR of ``module`` followed by the host program, as TT-Metalium C++ prints it."""
    from tilefold.codegen.cpp import HostData, emit_host
    from tilefold.ir.context import print_ir

    inputs = {b.name: bytes(b.size) for b in program.buffers.values() if b.role in ("input", "inout")}
    return print_ir(module) + "\n" + emit_host(program, HostData(inputs))


class TileLangCandidate:
    front_end = "tilelang"

    def __init__(self, kernel):
        self.kernel = kernel

    @property
    def result_object(self):
        return self.kernel

    def lower(self, inputs=None) -> Lowered:
        compiled = self.kernel.compiled
        return Lowered(program_text(compiled.module, compiled.program), compiled.program, compiled.arch)

    def run(self, inputs: list, trace=None):
        got = self.kernel(*inputs, trace=trace)
        got = list(got) if isinstance(got, tuple) else ([] if got is None else [got])
        return [np.asarray(g) for g in got], self.kernel.last_result


class TTLangCandidate:
    front_end = "ttl"

    def __init__(self, operation, constants: dict | None = None):
        self.operation = operation
        self.constants = dict(constants or {})

    @property
    def result_object(self):
        return self.operation

    def lower(self, tensors: list) -> Lowered:
        from tilefold.compiler import compile_ttl

        capture = self.operation.capture(tuple(tensors), self.constants)
        built = self.operation.build_capture(capture)
        self.written = sorted(built.writes)
        compiled = compile_ttl(built, capture.arch)
        return Lowered(program_text(compiled.module, compiled.program), compiled.program, capture.arch)

    def run(self, tensors: list, trace=None):
        from tilefold.frontend.ttl import session

        copies = [copy.copy(t) for t in tensors]
        with session.configured(trace=trace, report=False, project_dir=None, print_ir_after_all=False) as settings:
            self.operation(*copies, **self.constants)
        result = settings.runs[-1][1]
        written = getattr(self, "written", None)
        if written is None:
            self.lower(tensors)
            written = self.written
        return [np.asarray(copies[i].to_numpy()) for i in written], result


def make_candidate(made, constants: dict, location=None):
    """The candidate for what a tuned function returned (``made``)."""
    from tilefold.run.jit import JITKernel
    from tilefold.frontend.tilelang.prim_func import PrimFunc

    if isinstance(made, JITKernel):
        return TileLangCandidate(made)
    if isinstance(made, PrimFunc):
        return TileLangCandidate(JITKernel(made))
    from tilefold.frontend.ttl.operation import Operation

    if isinstance(made, Operation):
        return TTLangCandidate(made, constants)
    raise KernelError(f"a tuned function returns a TileLang kernel (@T.prim_func or @tilefold.jit) or a TT-Lang "
                      f"operation (@ttl.operation); this one returned {type(made).__name__}", location)


def compare(got: list, want: list, rtol: float, atol: float, max_mismatched_ratio: float) -> str | None:
    """None when every output matches its reference; otherwise the first mismatch, on one line."""
    if len(got) != len(want):
        return f"the kernel gave {len(got)} outputs and the reference {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g, np.float32)
        w = np.asarray(w, np.float32)
        if g.shape != w.shape:
            try:
                w = np.broadcast_to(w, g.shape)
            except ValueError:
                return f"output {k} has shape {g.shape} and the reference {w.shape}"
        bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        if bad.mean() > max_mismatched_ratio:
            diff = np.abs(g - w)
            largest = float(np.nanmax(diff)) if np.isfinite(diff).any() else float("nan")
            return (f"output {k}: {int(bad.sum())} of {bad.size} values differ from the reference "
                    f"(largest difference {largest:.4g})")
    return None


__all__ = ["Lowered", "TileLangCandidate", "TTLangCandidate", "make_candidate", "compare", "program_text"]
