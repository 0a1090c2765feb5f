"""``import tilefold.language as T``: write TileLang-style kernels for Tenstorrent devices.

A kernel is a grid of blocks. Each block copies tiles of global tensors into local
buffers, computes on them, and copies results out::

    @T.prim_func
    def matmul(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"),
               C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM)) as (bx, by):
            A_s = T.alloc_shared((bM, bK), "bfloat16")
            B_s = T.alloc_shared((bK, bN), "bfloat16")
            C_l = T.alloc_fragment((bM, bN), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bK), num_stages=2):
                T.copy(A[by * bM, k * bK], A_s)
                T.copy(B[k * bK, bx * bN], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * bM, bx * bN])

Run it with ``tilefold.jit(matmul)(a, b)`` on the simulated device, or write its
TT-Metalium project with ``tilefold compile``. Local buffers are made of whole 32×32 tiles.
"""

from tilefold.frontend.tilelang.api import (  # noqa: F401
    Kernel,
    Parallel,
    Pipelined,
    abs,
    alloc_fragment,
    alloc_local,
    alloc_shared,
    cast,
    ceil,
    ceildiv,
    clear,
    copy,
    cos,
    exp,
    exp2,
    fill,
    floor,
    gemm,
    if_then_else,
    infinity,
    log,
    max,
    min,
    pow,
    reduce_max,
    reduce_sum,
    rsqrt,
    serial,
    sigmoid,
    sin,
    sqrt,
    tanh,
)
from tilefold.frontend.tilelang.prim_func import (  # noqa: F401
    PrimFunc,
    annotate_tt_layout,
    annotate_tt_schedule,
    prim_func,
)
from tilefold.frontend.tilelang.types import Buffer, Tensor, bfloat16, float16, float32  # noqa: F401

float = float32  # noqa: A001 - TileLang's alias for float32

__all__ = [
    "prim_func", "PrimFunc", "Tensor", "Buffer", "float32", "float", "bfloat16", "float16",
    "Kernel", "alloc_shared", "alloc_fragment", "alloc_local", "serial", "Pipelined", "Parallel",
    "copy", "gemm", "clear", "fill", "reduce_sum", "reduce_max", "ceildiv", "infinity",
    "exp", "exp2", "log", "sqrt", "rsqrt", "abs", "tanh", "sigmoid", "sin", "cos", "floor", "ceil",
    "max", "min", "pow", "if_then_else", "cast", "annotate_tt_layout", "annotate_tt_schedule",
]
