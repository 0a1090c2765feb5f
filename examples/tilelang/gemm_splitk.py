"""Split-K GEMM in TileLang: a third grid dim splits K; partial products meet by atomic adds.

Each block (bx, by, bz) multiplies its share of K (``splitK = K // split_k``) into a float32
fragment, stages it in shared memory and adds it into C element by element with
``T.atomic_add``. Tensix has no atomics to global memory: the blocks that add into one C block
run as a serial sum on one core (the reduction stays in a fragment), which gives the same C.
B is given as (N, K) and read with ``transpose_B=True``. C must hold zeros when the kernel runs.

Run: ``.venv/bin/python examples/tilelang/gemm_splitk.py``.
"""

import numpy as np

import tilefold as tilelang
import tilefold.language as T


def matmul(M, N, K, block_M, block_N, block_K, split_k, dtype="float16", accum_dtype="float", out_dtype="float32"):
    splitK = K // split_k

    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((N, K), dtype),
        C: T.Tensor((M, N), out_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=128) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_shared = T.alloc_shared((block_M, block_N), out_dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(splitK, block_K), num_stages=0):
                T.copy(A[by * block_M, bz * splitK + ko * block_K], A_shared)
                T.copy(B[bx * block_N, bz * splitK + ko * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)

            T.copy(C_local, C_shared)

            for i, j in T.Parallel(block_M, block_N):
                T.atomic_add(C[by * block_M + i, bx * block_N + j], C_shared[i, j])

    return main


def main(M=64, N=64, K=256, split_k=4) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    kernel = tilelang.compile(matmul(M, N, K, 32, 32, 32, split_k))
    kernel(a, b, c)
    a32, bt32 = a.astype(np.float32), b.astype(np.float32).T
    err = np.abs(c - a32 @ bt32)
    # HiFi4 (TileLang's fidelity) feeds B to SrcA, whose multiplier slices hold 9 of a float16's
    # 10 mantissa bits: each product is within 2^-9 of exact, plus float32 accumulation
    bound = (2.0 ** -9 + K * 2.0 ** -24) * (np.abs(a32) @ np.abs(bt32))
    print(f"split-K GEMM {M}x{N}x{K}, K in {split_k} parts: max |error| {err.max():.5f}, "
          f"at most {(err / bound).max():.2f} of the bound")
    assert np.all(err <= bound)
    print("PASS")


if __name__ == "__main__":
    main()
