"""Online softmax in TileLang: a row's maximum and sum are carried across column blocks.

The first serial loop reads each column block once, raising the running row maxima
(``T.reduce_max(..., clear=False)``) and rescaling the running sums by ``exp2(old - new)``;
the second loop writes ``exp2(x - max) / sum`` block by block. Rows of any length go through
blocks of ``block_N`` columns; the row statistics stay in float32 fragments.

Run: ``.venv/bin/python examples/tilelang/online_softmax.py``.
"""

import ml_dtypes
import numpy as np

import tilefold as tilelang
import tilefold.language as T


@tilelang.jit(out_idx=[1])
def online_softmax(M, N, block_M=32, block_N=32, dtype="bfloat16", accum_dtype="float"):
    scale = 1.44269504  # log2(e)

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, block_N), accum_dtype)
            y = T.alloc_fragment((block_M, block_N), dtype)
            row_max = T.alloc_fragment((block_M,), accum_dtype)
            row_max_prev = T.alloc_fragment((block_M,), accum_dtype)
            row_sum = T.alloc_fragment((block_M,), accum_dtype)
            block_sum = T.alloc_fragment((block_M,), accum_dtype)
            T.fill(row_max, -T.infinity(accum_dtype))
            T.fill(row_sum, 0)
            for k in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, k * block_N], x)
                T.copy(row_max, row_max_prev)
                T.reduce_max(x, row_max, dim=1, clear=False)
                for i, j in T.Parallel(block_M, block_N):
                    x[i, j] = T.exp2(x[i, j] * scale - row_max[i] * scale)
                T.reduce_sum(x, block_sum, dim=1)
                for i in T.Parallel(block_M):
                    row_sum[i] = row_sum[i] * T.exp2(row_max_prev[i] * scale - row_max[i] * scale) + block_sum[i]
            for k in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, k * block_N], x)
                for i, j in T.Parallel(block_M, block_N):
                    y[i, j] = T.exp2(x[i, j] * scale - row_max[i] * scale) / row_sum[i]
                T.copy(y, Y[bx * block_M, k * block_N])

    return main


def reference(x):
    x = x.astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main(M=64, N=128) -> None:
    x = (np.random.default_rng(0).standard_normal((M, N)) * 2).astype(ml_dtypes.bfloat16)
    y = online_softmax(M, N)(x).astype(np.float32)
    err = np.abs(y - reference(x)).max()
    print(f"online softmax {M}x{N} in blocks of 32 columns: max |error| {err:.5f}")
    assert err < 4e-3
    print("PASS")


if __name__ == "__main__":
    main()
