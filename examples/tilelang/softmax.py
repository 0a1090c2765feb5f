"""Row-wise softmax in TileLang: ``Y[i, :] = exp(X[i, :] - max_i) / Σ exp(X[i, :] - max_i)``.

Each block holds ``block_M`` whole rows. ``T.reduce_max`` / ``T.reduce_sum`` reduce each
row into a column vector (``reduce_tile`` with REDUCE_ROW); inside ``T.Parallel`` the vector
is indexed ``row_max[i]`` and broadcast along the row. Intermediates are float32 fragments,
so DST holds float32. N must be a multiple of 32: padding columns would enter the row sums.

Run: ``.venv/bin/python examples/tilelang/softmax.py``.
"""

import numpy as np

import tilefold
import tilefold.language as T


@tilefold.jit
def softmax(M, N, block_M=32, dtype="bfloat16"):
    @T.prim_func
    def row_softmax(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M)) as bx:
            x = T.alloc_shared((block_M, N), dtype)
            row_max = T.alloc_fragment((block_M,), "float32")
            e = T.alloc_fragment((block_M, N), "float32")
            row_sum = T.alloc_fragment((block_M,), "float32")
            y = T.alloc_fragment((block_M, N), dtype)
            T.copy(X[bx * block_M, 0], x)
            T.reduce_max(x, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                e[i, j] = T.exp(x[i, j] - row_max[i])
            T.reduce_sum(e, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                y[i, j] = e[i, j] / row_sum[i]
            T.copy(y, Y[bx * block_M, 0])

    return row_softmax


SOFTMAX = softmax(256, 256)


def reference(x):
    x = x.astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main() -> None:
    import ml_dtypes

    x = (np.random.default_rng(2).standard_normal((256, 256)) * 3).astype(ml_dtypes.bfloat16)
    y = SOFTMAX(x).astype(np.float32)
    ref = reference(x)
    err = np.abs(y - ref).max()
    print(f"softmax 256x256: max |error| {err:.5f}, rows sum to {y.sum(axis=1).min():.4f}..{y.sum(axis=1).max():.4f}")
    assert np.allclose(y, ref, rtol=1e-2, atol=2e-3)
    print("PASS")


if __name__ == "__main__":
    main()
