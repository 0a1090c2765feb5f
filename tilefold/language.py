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
    symbolic,
    let,
    align_up,
    all_of,
    any_of,
    Cast,
    GemmWarpPolicy,
    Kernel,
    Parallel,
    Persistent,
    Pipelined,
    Select,
    Serial,
    alloc_fragment,
    alloc_global,
    alloc_local,
    alloc_reducer,
    alloc_shared,
    alloc_var,
    annotate_layout,
    annotate_safe_value,
    annotate_tt_compute,
    atomic_add,
    atomic_max,
    atomic_min,
    cast,
    ceildiv,
    clamp,
    clear,
    const,
    copy,
    cumsum,
    disable_warp_group_reg_alloc,
    dynamic,
    empty,
    fill,
    finalize_reducer,
    gemm,
    get_thread_binding,
    grid,
    if_then_else,
    infinity,
    macro,
    max,
    min,
    no_set_max_nreg,
    parallel,
    pow,
    reduce_absmax,
    reduce_abssum,
    reduce_max,
    reduce_min,
    reduce_sum,
    reshape,
    serial,
    sync_threads,
    transpose,
    unroll,
    use_swizzle,
    vectorized,
    view,
)
from tilefold.frontend.tilelang.dtypes import (  # noqa: F401
    DType,
    bfloat16,
    float8_e4m3,
    float8_e4m3fn,
    float8_e5m2,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
)
from tilefold.frontend.tilelang.dtypes import bool_ as bool  # noqa: F401,A004 - TileLang's name
from tilefold.frontend.tilelang.prim_func import (  # noqa: F401
    PrimFunc,
    annotate_tt_layout,
    annotate_tt_schedule,
    prim_func,
)
from tilefold.frontend.tilelang.types import (  # noqa: F401
    Buffer,
    FragmentBuffer,
    LocalBuffer,
    SharedBuffer,
    StridedTensor,
    Tensor,
)

from tilefold.frontend.tilelang import api as _api  # noqa: E402

# the element functions (T.exp ...): one per SFPU row TileLang spells (tilefold.ir.sfpu)
globals().update({_fn: getattr(_api, _fn) for _fn in _api.UNARY_FUNCTIONS})

float = float32  # noqa: A001 - TileLang's alias for float32
half = float16
dtype = DType  # the type of ``dtype: T.dtype = T.float16`` parameters

__all__ = [
    "prim_func", "PrimFunc", "Tensor", "Buffer", "SharedBuffer", "FragmentBuffer", "LocalBuffer", "dtype", "DType", "float32", "float", "bfloat16", "float16", "half",
    "float64", "float8_e4m3fn", "float8_e4m3", "float8_e5m2", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "bool",
    "Kernel", "alloc_shared", "alloc_fragment", "alloc_local", "alloc_global", "alloc_reducer", "finalize_reducer", "alloc_var", "serial", "Serial", "unroll", "vectorized", "grid",
    "Pipelined", "Parallel", "Persistent", "parallel", "use_swizzle", "get_thread_binding", "annotate_layout",
    "annotate_safe_value", "disable_warp_group_reg_alloc", "sync_threads", "no_set_max_nreg", "const", "dynamic", "symbolic",
    "empty", "reshape", "view", "macro", "GemmWarpPolicy", "copy", "gemm", "clear", "fill", "reduce_sum", "reduce_max", "reduce_min",
    "reduce_abssum", "reduce_absmax", "cumsum", "transpose", "atomic_add", "atomic_max", "atomic_min", "ceildiv", "align_up", "any_of", "all_of", "let", "infinity",
    *_api.UNARY_FUNCTIONS, "max", "min", "pow", "clamp", "if_then_else", "Select", "cast", "Cast", "annotate_tt_layout", "annotate_tt_schedule",
    "annotate_tt_compute",
]


def __getattr__(name: str):
    # ``T.<name>`` that tilefold does not have: one error at the user's line, still an AttributeError
    from tilefold.caller import user_location
    from tilefold.errors import KernelAttributeError
    from tilefold.frontend.tilelang.names import unknown_primitive

    if name.startswith("__"):
        raise AttributeError(name)
    raise KernelAttributeError(unknown_primitive(name, __all__), user_location())
