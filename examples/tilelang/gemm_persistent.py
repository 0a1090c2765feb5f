"""A persistent GEMM in TileLang: a fixed number of blocks walk the output tiles in waves.

Each of ``sm_num`` blocks loops over ``waves``; the tile it takes in a wave comes from a
grouped (swizzled) order computed from the block index, and an ``if`` guard skips the tiles
past the edge of C. On Tensix the ``if`` becomes a condition every engine of the core
evaluates (reader, compute and writer agree on which tiles exist).

Run: ``.venv/bin/python examples/tilelang/gemm_persistent.py``.
"""

import numpy as np

import tilefold as tilelang
import tilefold.language as T


@tilelang.jit(out_idx=[-1])
def matmul_persistent(M, N, K, block_M, block_N, block_K, threads, num_stages, sm_num=4, group_size=3,
                      dtype="float16", accum_dtype="float"):
    m_blocks = T.ceildiv(M, block_M)
    n_blocks = T.ceildiv(N, block_N)
    waves = T.ceildiv(m_blocks * n_blocks, sm_num)

    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(sm_num, threads=threads) as (block_id):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), dtype)

            for w in T.serial(waves):
                tile_id = sm_num * w + block_id
                bx = (tile_id // group_size) % m_blocks
                by = (tile_id % group_size) + (tile_id // group_size) // m_blocks * group_size

                if bx * block_M < M and by * block_N < N:
                    T.clear(C_local)
                    for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                        T.copy(A[bx * block_M, k * block_K], A_shared)
                        T.copy(B[k * block_K, by * block_N], B_shared)
                        T.gemm(A_shared, B_shared, C_local)

                    T.copy(C_local, C_shared)
                    T.copy(C_shared, C[bx * block_M, by * block_N])

    return main


def main(M=128, N=96, K=64) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    # 4 x 3 output tiles in groups of 3 columns: 3 waves of 5 blocks, the last 3 tiles guarded off
    c = matmul_persistent(M, N, K, 32, 32, 32, 128, 2, sm_num=5)(a, b).astype(np.float32)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    ref = a32 @ b32
    err = np.abs(c - ref)
    # HiFi4 (TileLang's fidelity) feeds B to SrcA, whose multiplier slices hold 9 of a float16's
    # 10 mantissa bits: each product is within 2^-9 of exact, plus float32 accumulation and
    # the float16 result's rounding
    bound = (2.0 ** -9 + K * 2.0 ** -24) * (np.abs(a32) @ np.abs(b32)) + 2.0 ** -11 * np.abs(ref)
    print(f"persistent GEMM {M}x{N}x{K} on 5 blocks: max |error| {err.max():.5f}, "
          f"at most {(err / bound).max():.2f} of the bound")
    assert np.all(err <= bound)
    print("PASS")


if __name__ == "__main__":
    main()
