"""GEMM with ``transpose_B=True`` in TileLang: ``C = A @ Bᵀ`` with B stored as (N, K).

B's blocks are copied as they lie in memory, (block_N, block_K), and ``T.gemm`` reads them
transposed (on Tensix, ``transpose_wh_tile`` of each B tile before the matrix engine).
``T.use_swizzle`` and the warp policy are GPU scheduling hints, accepted as they are.

Run: ``.venv/bin/python examples/tilelang/gemm_transpose_b.py``.
"""

import numpy as np

import tilefold as tilelang
import tilefold.language as T


@tilelang.jit(out_idx=[-1])
def matmul_nt(M, N, K, block_M, block_N, block_K, dtype="bfloat16", accum_dtype="float"):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((N, K), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.use_swizzle(panel_size=10, enable=True)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True, policy=T.GemmWarpPolicy.Square)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def main(M=64, N=96, K=128) -> None:
    import ml_dtypes

    rng = np.random.default_rng(1)
    a = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    c = matmul_nt(M, N, K, 32, 32, 64)(a, b).astype(np.float32)
    ref = a.astype(np.float32) @ b.astype(np.float32).T
    err = np.abs(c - ref).max()
    print(f"GEMM with transpose_B {M}x{N}x{K}: max |error| {err:.5f}")
    assert np.allclose(c, ref, rtol=1e-2, atol=0.1)
    print("PASS")


if __name__ == "__main__":
    main()
