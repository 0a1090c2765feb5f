"""Tune a TileLang GEMM on the simulated device: block sizes and pipeline depth, ranked by modeled time.

``@tilefold.autotune`` stacked on ``@tilefold.jit``, as TileLang's ``@tilelang.autotune`` is: the
tunable parameters are the factory's keyword arguments, ``configs`` lists the values to try, and
calling the factory with the problem size tunes it and returns the best kernel. Every
configuration is compiled, checked for L1 fit, simulated and compared with numpy; configurations
that do not fit or do not match are listed with their reason.

Run: ``tilefold tune examples/tilelang/autotune_gemm.py`` (the 2048³ GEMM over 36 configurations,
one worker per core), or ``python examples/tilelang/autotune_gemm.py``.
"""

import itertools

import numpy as np

import tilefold
import tilefold.language as T


def configs(M, N, K):
    """Block sizes that tile the problem, and two pipeline depths."""
    blocks = [64, 128, 256]
    out = []
    for block_M, block_N, block_K, num_stages in itertools.product(blocks, blocks, [32, 64], [1, 2]):
        if M % block_M == 0 and N % block_N == 0 and K % block_K == 0:
            out.append({"block_M": block_M, "block_N": block_N, "block_K": block_K, "num_stages": num_stages})
    return out


def reference(a, b):
    """bfloat16 inputs, float32 accumulation."""
    return a.astype(np.float32) @ b.astype(np.float32)


@tilefold.autotune(configs=configs, ref_prog=reference, rtol=2e-2, atol=5e-2)
@tilefold.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, block_K=64, num_stages=2, dtype="bfloat16", accum_dtype="float"):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M)) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm


def main(M=2048, N=2048, K=2048):
    kernel = matmul(M, N, K)                      # tunes, returns the best configuration's kernel
    result = matmul.last_result
    print(f"best: {kernel.config}, modeled {kernel.latency * 1e3:.1f} us")
    return result


if __name__ == "__main__":
    main()
