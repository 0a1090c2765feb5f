"""Batched GEMM in TileLang: the batch is the grid's third dim, ``C[b] = A[b] @ B[b]``.

Blocks of 3-D tensors are copied with the batch index first (``A[bz, by * block_M, k * block_K]``);
the local buffers are 2-D, so the batch dim of each copy has extent 1.

Run: ``.venv/bin/python examples/tilelang/gemm_batched.py``.
"""

import numpy as np

import tilefold as tilelang
import tilefold.language as T


@tilelang.jit(out_idx=[2])
def batched_matmul(batch, M, N, K, block_M, block_N, block_K, dtype="float16", accum_dtype="float"):
    @T.prim_func
    def main(
        A: T.Tensor((batch, M, K), dtype),
        B: T.Tensor((batch, K, N), dtype),
        C: T.Tensor((batch, M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), batch, threads=128) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[bz, by * block_M, k * block_K], A_shared)
                T.copy(B[bz, k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[bz, by * block_M, bx * block_N])

    return main


def main(batch=2, M=64, N=64, K=96) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((batch, M, K)).astype(np.float16)
    b = rng.standard_normal((batch, K, N)).astype(np.float16)
    c = batched_matmul(batch, M, N, K, 32, 32, 32)(a, b).astype(np.float32)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    ref = a32 @ b32
    err = np.abs(c - ref)
    # HiFi4 (TileLang's fidelity) feeds B to SrcA, whose multiplier slices hold 9 of a float16's
    # 10 mantissa bits: each product is within 2^-9 of exact, plus float32 accumulation and
    # the float16 result's rounding
    bound = (2.0 ** -9 + K * 2.0 ** -24) * (np.abs(a32) @ np.abs(b32)) + 2.0 ** -11 * np.abs(ref)
    print(f"batched GEMM {batch}x{M}x{N}x{K}: max |error| {err.max():.5f}, at most {(err / bound).max():.2f} of the bound")
    assert np.all(err <= bound)
    print("PASS")


if __name__ == "__main__":
    main()
