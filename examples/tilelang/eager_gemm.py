"""A GEMM in TileLang's eager style: the kernel's body declares its tensors.

``M, N, K = T.const("M, N, K")`` names the shapes, bound from the arrays the kernel is called
with; ``A: T.Tensor[[M, K], dtype]`` annotates an argument in the body; ``C = T.empty(...)``
is the output, returned by the call. ``.compile(M=..., ...)`` compiles without arrays.

Run: ``.venv/bin/python examples/tilelang/eager_gemm.py``.
"""

import numpy as np

import tilefold as tilelang
import tilefold.language as T


@tilelang.jit
def gemm(A, B, block_M: int = 32, block_N: int = 32, block_K: int = 32, dtype: T.dtype = T.float16):
    M, N, K = T.const("M, N, K")
    A: T.Tensor[[M, K], dtype]
    B: T.Tensor[[K, N], dtype]
    C = T.empty((M, N), dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


def main(M=64, N=96, K=64) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = gemm(a, b)
    assert c.dtype == np.float16 and c.shape == (M, N)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    ref = a32 @ b32
    err = np.abs(c.astype(np.float32) - ref)
    # HiFi4 (TileLang's fidelity) feeds B to SrcA, whose multiplier slices hold 9 of a float16's
    # 10 mantissa bits: each product is within 2^-9 of exact, plus float32 accumulation and
    # the float16 result's rounding
    bound = (2.0 ** -9 + K * 2.0 ** -24) * (np.abs(a32) @ np.abs(b32)) + 2.0 ** -11 * np.abs(ref)
    print(f"eager GEMM {M}x{N}x{K}: max |error| {err.max():.5f}, at most {(err / bound).max():.2f} of the bound")
    assert np.all(err <= bound)
    print("PASS")


if __name__ == "__main__":
    main()
