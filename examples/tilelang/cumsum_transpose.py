"""Cumulative sums and transposes in TileLang.

``T.cumsum(src=A_shared, dim=dim, reverse=reverse)`` scans a block in place along either dim,
forward or reversed (on Tensix the SFPU's ``cumsum_tile`` down the columns of tiles, carried
from tile to tile, with transposes for scans along rows). The transpose kernel moves a block
through an element-wise ``B_local[i, j] = A_shared[j, i]`` (``transpose_wh_tile``); ``T.transpose``
does the same as a primitive.

Run: ``.venv/bin/python examples/tilelang/cumsum_transpose.py``.
"""

import numpy as np

import tilefold as tilelang
import tilefold.language as T


def cumsum_test(M, N, block_M, block_N, dim=0, reverse=False, dtype="float32"):
    @T.prim_func
    def cumsum(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], A_shared)
            T.cumsum(src=A_shared, dim=dim, reverse=reverse)
            T.copy(A_shared, B[by * block_M, bx * block_N])

    return cumsum


@tilelang.jit(out_idx=[1])
def transpose(M, N, block, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((N, M), dtype)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block)) as (bx, by):
            A_shared = T.alloc_shared((block, block), dtype)
            B_local = T.alloc_fragment((block, block), dtype)
            T.copy(A[by * block, bx * block], A_shared)
            for i, j in T.Parallel(block, block):
                B_local[i, j] = A_shared[j, i]
            T.copy(B_local, B[bx * block, by * block])

    return main


@tilelang.jit(out_idx=[1])
def transpose_primitive(M, N, block, dtype="bfloat16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((N, M), dtype)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block)) as (bx, by):
            A_shared = T.alloc_shared((block, block), dtype)
            B_shared = T.alloc_shared((block, block), dtype)
            T.copy(A[by * block, bx * block], A_shared)
            T.transpose(A_shared, B_shared)
            T.copy(B_shared, B[bx * block, by * block])

    return main


def cumsum_reference(a, block_M, block_N, dim, reverse):
    M, N = a.shape
    blocks = a.reshape(M // block_M, block_M, N // block_N, block_N)
    axis = 1 if dim == 0 else 3
    if reverse:
        out = np.flip(np.cumsum(np.flip(blocks, axis), axis), axis)
    else:
        out = np.cumsum(blocks, axis)
    return out.reshape(M, N)


def main(M=64, N=64, block=32) -> None:
    import ml_dtypes

    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, N)).astype(np.float32)
    for dim in (0, 1):
        for reverse in (False, True):
            kernel = tilelang.compile(cumsum_test(M, N, block, block, dim, reverse), out_idx=-1)
            err = np.abs(kernel(a) - cumsum_reference(a, block, block, dim, reverse)).max()
            print(f"cumsum dim={dim} reverse={reverse}: max |error| {err:.5f}")
            assert err < 2e-2
    b = rng.standard_normal((M, 96)).astype(np.float32)
    assert np.array_equal(transpose(M, 96, block)(b), b.T)
    c = b.astype(ml_dtypes.bfloat16)
    assert np.array_equal(transpose_primitive(M, 96, block)(c), c.T)
    print(f"transpose {M}x96: exact")
    print("PASS")


if __name__ == "__main__":
    main()
