"""The TileLang primitives a kernel body calls (``T.copy``, ``T.gemm``, ``T.Parallel`` ...).

Reads: nothing. Writes: nothing. These functions are markers: tilefold reads a
``@T.prim_func`` body as Python source and builds IR for each call it finds
(:mod:`tilefold.frontend.tilelang.builder`), so none of them runs when a kernel is compiled.
Calling one outside a kernel body raises :class:`KernelError`. ``T.ceildiv`` and
``T.infinity`` are ordinary functions and work on Python numbers too.

Each marker carries the name of its builder rule in ``__tile_intrinsic__``.
"""

from __future__ import annotations

import math

from tilefold.errors import KernelError


def _intrinsic(rule: str, doc: str):
    def marker(*args, **kwargs):
        from tilefold.program.caller import user_location

        raise KernelError(f"T.{rule} is a TileLang primitive: use it inside the body of a @T.prim_func kernel, "
                          "which tilefold compiles", user_location())

    marker.__name__ = rule
    marker.__qualname__ = rule
    marker.__doc__ = doc
    marker.__tile_intrinsic__ = rule
    return marker


# kernel structure
Kernel = _intrinsic("Kernel", "``with T.Kernel(gx[, gy], threads=...) as (bx, by)``: a grid of blocks.")
alloc_shared = _intrinsic("alloc_shared", "``T.alloc_shared(shape, dtype)``: a block buffer in L1 (a circular buffer).")
alloc_fragment = _intrinsic("alloc_fragment", "``T.alloc_fragment(shape, dtype)``: a computed block buffer.")
alloc_local = _intrinsic("alloc_local", "``T.alloc_local(shape, dtype)``: the same as alloc_fragment.")
serial = _intrinsic("serial", "``for k in T.serial(n)`` / ``T.serial(start, stop[, step])``: a sequential loop.")
Pipelined = _intrinsic("Pipelined", "``for k in T.Pipelined(n, num_stages=s)``: a loop whose copies are "
                                    "buffered ``s`` deep (the circular buffer depth).")
Parallel = _intrinsic("Parallel", "``for i, j in T.Parallel(m, n)``: an element-wise body over a block.")

# tile operations
copy = _intrinsic("copy", "``T.copy(src, dst)``: copy a block between a global tensor region and a local buffer.")
gemm = _intrinsic("gemm", "``T.gemm(A, B, C, transpose_A=False, transpose_B=False, clear_accum=False)``: "
                          "C += A @ B on local buffers.")
clear = _intrinsic("clear", "``T.clear(buf)``: set a local buffer to zero.")
fill = _intrinsic("fill", "``T.fill(buf, value)``: set every element of a local buffer to value.")
reduce_sum = _intrinsic("reduce_sum", "``T.reduce_sum(src, dst, dim=-1, clear=True)``: row (dim=1) or column "
                                      "(dim=0) sums of a 2-D buffer.")
reduce_max = _intrinsic("reduce_max", "``T.reduce_max(src, dst, dim=-1, clear=True)``: row or column maxima.")

# element functions inside T.Parallel
exp = _intrinsic("exp", "e ** x")
exp2 = _intrinsic("exp2", "2 ** x")
log = _intrinsic("log", "natural logarithm")
sqrt = _intrinsic("sqrt", "square root")
rsqrt = _intrinsic("rsqrt", "1 / sqrt(x)")
abs = _intrinsic("abs", "|x|")  # noqa: A001 - TileLang's name
tanh = _intrinsic("tanh", "hyperbolic tangent")
sigmoid = _intrinsic("sigmoid", "1 / (1 + exp(-x))")
sin = _intrinsic("sin", "sine")
cos = _intrinsic("cos", "cosine")
floor = _intrinsic("floor", "round down")
ceil = _intrinsic("ceil", "round up")
max = _intrinsic("max", "the larger of two values")  # noqa: A001 - TileLang's name
min = _intrinsic("min", "the smaller of two values")  # noqa: A001 - TileLang's name
pow = _intrinsic("pow", "x ** y")  # noqa: A001 - TileLang's name
if_then_else = _intrinsic("if_then_else", "``T.if_then_else(cond, a, b)``: a where cond holds, else b.")
cast = _intrinsic("cast", "``T.cast(x, dtype)``: element values are computed in the DST registers' precision; "
                          "the stored dtype is the destination buffer's.")

# Tenstorrent layout and schedule annotations (inside a kernel body)
annotate_tt_layout = _intrinsic("annotate_tt_layout", "Residency, layout and sharding of global tensors.")
annotate_tt_schedule = _intrinsic("annotate_tt_schedule", "Work schedule: policy and tile order.")


def ceildiv(a, b):
    """``ceil(a / b)`` for non-negative integers (and for block indices inside a kernel)."""
    return (a + b - 1) // b


def infinity(dtype=None) -> float:
    """+inf (of any floating dtype)."""
    return math.inf


INTRINSICS = {f.__tile_intrinsic__: f for f in (
    Kernel, alloc_shared, alloc_fragment, alloc_local, serial, Pipelined, Parallel, copy, gemm, clear, fill,
    reduce_sum, reduce_max, exp, exp2, log, sqrt, rsqrt, abs, tanh, sigmoid, sin, cos, floor, ceil, max, min, pow,
    if_then_else, cast, annotate_tt_layout, annotate_tt_schedule)}

UNARY_FUNCTIONS = ("exp", "exp2", "log", "sqrt", "rsqrt", "abs", "tanh", "sigmoid", "sin", "cos", "floor", "ceil")
