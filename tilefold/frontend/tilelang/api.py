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
from tilefold.ir.sfpu import SFPU, TILELANG_FUNCTIONS, TILELANG_LOGARITHMS


def _intrinsic(rule: str, doc: str):
    def marker(*args, **kwargs):
        from tilefold.caller import user_location

        raise KernelError(f"T.{rule} is a TileLang primitive: use it inside the body of a @T.prim_func kernel, "
                          "which tilefold compiles", user_location())

    marker.__name__ = rule
    marker.__qualname__ = rule
    marker.__doc__ = doc
    marker.__tile_intrinsic__ = rule
    return marker


# kernel structure
Kernel = _intrinsic("Kernel", "``with T.Kernel(gx[, gy[, gz]], threads=...) as (bx, by, bz)``: a grid of blocks.")
alloc_shared = _intrinsic("alloc_shared", "``T.alloc_shared(shape, dtype)``: a block buffer in L1 (a circular buffer).")
alloc_fragment = _intrinsic("alloc_fragment", "``T.alloc_fragment(shape, dtype)``: a computed block buffer.")
alloc_local = _intrinsic("alloc_local", "``T.alloc_local(shape, dtype)``: the same as alloc_fragment.")
alloc_global = _intrinsic("alloc_global", "``T.alloc_global(shape, dtype)``, before the kernel's grids: a scratch "
                                          "tensor in DRAM that its ``with T.Kernel`` grids (run one after another) "
                                          "pass data through.")
alloc_reducer = _intrinsic("alloc_reducer", "``T.alloc_reducer(shape, dtype, op=\"sum\", replication=...)``: a "
                                            "fragment that a T.Parallel folds values into (``r[i] += e``); on a "
                                            "Tensix core the fold is a reduce_tile, so no replicas are kept.")
finalize_reducer = _intrinsic("finalize_reducer", "``T.finalize_reducer(r)``: merges a reducer's per-thread "
                                                  "replicas on a GPU; no-op here (the fold already reduced).")
alloc_var = _intrinsic("alloc_var", "``x = T.alloc_var(dtype[, init])``: a scalar; assign it a value before use.")
serial = _intrinsic("serial", "``for k in T.serial(n)`` / ``T.serial(start, stop[, step])``: a sequential loop.")
Serial = _intrinsic("Serial", "The same as T.serial.")
unroll = _intrinsic("unroll", "``for k in T.unroll(n)``: a sequential loop (tilefold does not unroll it).")
vectorized = _intrinsic("vectorized", "``for k in T.vectorized(n)``: a sequential loop over an element index.")
grid = _intrinsic("grid", "``for i, j in T.grid(m, n)``: nested sequential loops.")
Pipelined = _intrinsic("Pipelined", "``for k in T.Pipelined(n, num_stages=s)``: a loop whose copies are "
                                    "buffered ``s`` deep (the circular buffer depth).")
Persistent = _intrinsic("Persistent", "``for bx, by in T.Persistent([m, n], wave_size, index, group_size=8)``: the "
                        "blocks of an m x n domain that persistent block ``index`` of ``wave_size`` computes, wave by "
                        "wave, in groups of ``group_size`` along the last dim (TileLang's order).")
Parallel = _intrinsic("Parallel", "``for i, j in T.Parallel(m, n)``: an element-wise body over a block.")
parallel = _intrinsic("Parallel", "The same as T.Parallel.")
use_swizzle = _intrinsic("use_swizzle", "``T.use_swizzle(panel_size, enable=True)``: a block rasterization hint, "
                                        "recorded as the kernel's ``tt.use_swizzle`` attribute.")
get_thread_binding = _intrinsic("get_thread_binding",
                                "``T.get_thread_binding(dim)``: a GPU thread index. A Tensix core runs a block "
                                "as one program of tile operations, so only conditions on it are accepted.")
annotate_layout = _intrinsic("annotate_layout", "GPU fragment / shared-memory layouts: accepted and ignored "
                                                "(Tensix buffers are tiles in circular buffers).")
annotate_safe_value = _intrinsic("annotate_safe_value", "``T.annotate_safe_value({A: v})``: reads of A past its end "
                                                        "(in its tile padding) give v; the host pads A with v.")
disable_warp_group_reg_alloc = _intrinsic("disable_warp_group_reg_alloc", "A GPU register hint: accepted, no-op.")
sync_threads = _intrinsic("sync_threads", "A GPU barrier: accepted, no-op (circular buffers order the engines).")
no_set_max_nreg = _intrinsic("no_set_max_nreg", "A GPU register hint: accepted, no-op.")
const = _intrinsic("const", "``M, N = T.const(\"M, N\")``: shape names of an eager kernel, bound from its "
                            "tensors' shapes or from .compile(M=...).")
def dynamic(names, dtype=None):
    """``N = T.dynamic("N")`` (also ``T.symbolic``): a size the kernel is compiled for at each shape it is
    called with — a name ``T.Tensor`` annotations may use, in a kernel factory or an eager kernel."""
    from tilefold.frontend.tilelang.values import ConstVar

    found = tuple(ConstVar(n) for n in str(names).replace(",", " ").split() if n)
    return found[0] if len(found) == 1 else found


dynamic.__tile_intrinsic__ = "dynamic"
symbolic = dynamic
empty = _intrinsic("empty", "``C = T.empty((M, N), dtype)``: an output tensor of an eager kernel, returned by "
                            "the call.")
reshape = _intrinsic("reshape", "``V = T.reshape(X, shape)``: a kernel tensor's elements under another shape (the "
                                "same as ``T.Tensor(shape, dtype, X.data)``); the host fills the view from X.")
view = _intrinsic("view", "``V = T.view(X, shape, dtype=None)``: T.reshape; the dtype stays X's.")

# tile operations
copy = _intrinsic("copy", "``T.copy(src, dst)``: copy a block between a global tensor region and a local buffer.")
gemm = _intrinsic("gemm", "``T.gemm(A, B, C, transpose_A=False, transpose_B=False, clear_accum=False)``: "
                          "C += A @ B on local buffers.")
clear = _intrinsic("clear", "``T.clear(buf)``: set a local buffer to zero.")
fill = _intrinsic("fill", "``T.fill(buf, value)``: set every element of a local buffer to value.")
reduce_sum = _intrinsic("reduce_sum", "``T.reduce_sum(src, dst, dim=-1, clear=True)``: row (dim=1) or column "
                                      "(dim=0) sums of a 2-D buffer.")
reduce_max = _intrinsic("reduce_max", "``T.reduce_max(src, dst, dim=-1, clear=True)``: row or column maxima.")
reduce_min = _intrinsic("reduce_min", "``T.reduce_min(src, dst, dim=-1, clear=True)``: row or column minima.")
reduce_abssum = _intrinsic("reduce_abssum", "``T.reduce_abssum(src, dst, dim=-1)``: sums of absolute values.")
reduce_absmax = _intrinsic("reduce_absmax", "``T.reduce_absmax(src, dst, dim=-1)``: maxima of absolute values.")
cumsum = _intrinsic("cumsum", "``T.cumsum(src, dst=None, dim=0, reverse=False)``: cumulative sums along dim.")
transpose = _intrinsic("transpose", "``T.transpose(src, dst)``: dst = src transposed (2-D buffers).")
atomic_add = _intrinsic("atomic_add", "``T.atomic_add(dst, value)``: dst += value, for blocks that several grid "
                                      "blocks add into.")
atomic_max = _intrinsic("atomic_max", "``T.atomic_max(dst, value)``: dst = max(dst, value), for blocks that several "
                                      "grid blocks update.")
atomic_min = _intrinsic("atomic_min", "``T.atomic_min(dst, value)``: dst = min(dst, value), for blocks that several "
                                      "grid blocks update.")

# element functions inside T.Parallel: one per SFPU row TileLang spells (tilefold.ir.sfpu), and the
# logarithms computed from ``log``
UNARY_FUNCTIONS = (*TILELANG_FUNCTIONS, *TILELANG_LOGARITHMS)
for _fn in TILELANG_FUNCTIONS:
    globals()[_fn] = _intrinsic(_fn, f"``T.{_fn}(x)``: ``{SFPU[_fn].call}`` on the SFPU, element-wise inside T.Parallel.")
for _fn, _base in TILELANG_LOGARITHMS.items():
    globals()[_fn] = _intrinsic(_fn, f"``T.{_fn}(x)``: the base-{_base:g} logarithm, ``log_tile`` times 1 / ln {_base:g}.")
max = _intrinsic("max", "the larger of two values")  # noqa: A001 - TileLang's name
min = _intrinsic("min", "the smaller of two values")  # noqa: A001 - TileLang's name
pow = _intrinsic("pow", "x ** y")  # noqa: A001 - TileLang's name
clamp = _intrinsic("clamp", "``T.clamp(x, min_val, max_val)``: x limited to [min_val, max_val].")
if_then_else = _intrinsic("if_then_else", "``T.if_then_else(cond, a, b)``: a where cond holds, else b.")
Select = _intrinsic("if_then_else", "``T.Select(cond, a, b)``: the same as T.if_then_else.")
cast = _intrinsic("cast", "``T.cast(x, dtype)``: x converted to dtype (to an integer dtype: toward zero).")
Cast = _intrinsic("Cast", "``T.Cast(dtype, x)``: the same as T.cast(x, dtype).")

# Tenstorrent layout and schedule annotations (inside a kernel body)
annotate_tt_layout = _intrinsic("annotate_tt_layout", "Residency, layout and sharding of global tensors.")
annotate_tt_schedule = _intrinsic("annotate_tt_schedule", "Work schedule: policy and tile order.")
annotate_tt_compute = _intrinsic("annotate_tt_compute", "``T.annotate_tt_compute(math_fidelity=\"HiFi2\", "
                                 "math_approx_mode=False)``: the compute kernel's math fidelity (default HiFi4) "
                                 "and SFPU approximation mode.")


class GemmWarpPolicy:
    """GPU warp partitions of a ``T.gemm`` (``policy=T.GemmWarpPolicy.FullRow``): accepted and ignored, as a
    Tensix core computes a gemm with one matrix engine."""

    Square = "Square"
    FullRow = "FullRow"
    FullCol = "FullCol"


def macro(fn=None, **_options):
    """``@T.macro``: a helper the kernel body calls; tilefold builds every helper in place already."""
    return fn if fn is not None else (lambda f: f)


def ceildiv(a, b):
    """``ceil(a / b)`` for non-negative integers (and for block indices inside a kernel)."""
    return (a + b - 1) // b


def align_up(x, alignment):
    """``x`` rounded up to a multiple of ``alignment`` (integers, or block indices inside a kernel)."""
    return ceildiv(x, alignment) * alignment


let = _intrinsic("let", "``T.let(x, value)``: bind a variable made with ``x = T.int32()`` to a value.")
any_of = _intrinsic("any_of", "``T.any_of(M[i, j, :])``: whether any element of a small region of an integer or "
                              "bool tensor is nonzero (a condition of the block).")
all_of = _intrinsic("all_of", "``T.all_of(M[i, j, :])``: whether every element of such a region is nonzero.")


def infinity(dtype=None) -> float:
    """+inf (of any floating dtype)."""
    return math.inf


INTRINSICS = {f.__tile_intrinsic__: f for f in (
    Kernel, alloc_shared, alloc_fragment, alloc_local, alloc_global, alloc_reducer, finalize_reducer, alloc_var, serial, Serial, unroll, vectorized, grid, Pipelined, Parallel,
    Persistent,
    use_swizzle, get_thread_binding, annotate_layout, annotate_safe_value, disable_warp_group_reg_alloc,
    sync_threads, no_set_max_nreg, const, dynamic, empty, reshape, view, copy, gemm, clear, fill, reduce_sum, reduce_max,
    reduce_min, reduce_abssum, reduce_absmax, cumsum, transpose, atomic_add, atomic_max, atomic_min,
    *(globals()[fn] for fn in UNARY_FUNCTIONS), max, min, pow, clamp, if_then_else, cast, Cast,
    annotate_tt_layout, annotate_tt_schedule, annotate_tt_compute, any_of, all_of, let)}
