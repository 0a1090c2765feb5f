"""Row standardization in TileLang: ``Y[i, :] = (X[i, :] - mean_i) / sqrt(var_i + eps)``.

Each block holds ``block_M`` whole rows. ``T.reduce_sum`` reduces each row into a column vector
(``reduce_tile`` with REDUCE_ROW); inside ``T.Parallel`` the vector is indexed ``mean[i]`` and
broadcast along the row. The per-row values (the mean ``total[i] / N``, the scale
``rsqrt(var + eps)``) are written where they are used, inside the loops over the whole block; the
compiler (``hoist-vector-values``) computes them once per block in a loop over the rows, so the
loops over the block only subtract and multiply instead of computing them again for every tile of
the row. Intermediates are float32 fragments, so DST holds float32. TileLang
tensors live in DRAM in tile layout (the host tilizes them); ``tilefold.ops.row_standardize``
is the same computation on row-major tensors, tilizing on the device. N must be a multiple of 32.

Run: ``.venv/bin/python examples/tilelang/row_standardize.py`` — prints the error against numpy
and the modeled time beside the DRAM roofline.
"""

import numpy as np

import tilefold
import tilefold.language as T


@tilefold.jit
def row_standardize(M, N, block_M=32, eps=1e-5, dtype="bfloat16"):
    @T.prim_func
    def standardize(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M)) as bx:
            x = T.alloc_shared((block_M, N), dtype)
            total = T.alloc_fragment((block_M,), "float32")
            xm = T.alloc_fragment((block_M, N), "float32")
            sq = T.alloc_fragment((block_M, N), "float32")
            ss = T.alloc_fragment((block_M,), "float32")
            y = T.alloc_fragment((block_M, N), dtype)
            T.copy(X[bx * block_M, 0], x)
            T.reduce_sum(x, total, dim=1)
            for i, j in T.Parallel(block_M, N):
                xm[i, j] = x[i, j] - total[i] * (1.0 / N)
            for i, j in T.Parallel(block_M, N):
                sq[i, j] = xm[i, j] * xm[i, j]
            T.reduce_sum(sq, ss, dim=1)
            for i, j in T.Parallel(block_M, N):
                y[i, j] = xm[i, j] * T.rsqrt(ss[i] * (1.0 / N) + eps)
            T.copy(y, Y[bx * block_M, 0])

    return standardize


def reference(x, eps=1e-5):
    x = np.asarray(x, np.float64)
    mean = x.mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=1, keepdims=True) + eps)


def main(M=2048, N=256):
    import ml_dtypes

    rng = np.random.default_rng(4)
    x = (rng.standard_normal((M, N)) * 3 + rng.uniform(-4, 4, (M, 1))).astype(ml_dtypes.bfloat16)
    kernel = row_standardize(M, N)
    y = np.asarray(kernel(x), np.float32)
    err = float(np.abs(y - reference(x.astype(np.float32))).max())
    seconds = kernel.last_result.perf.seconds
    roofline = 2 * M * N * 2 / 288e9
    return y, err, seconds, roofline


if __name__ == "__main__":
    _, err, seconds, roofline = main(8192, 1024)
    print(f"row_standardize 8192x1024: max |error| {err:.4f}; modeled {seconds * 1e6:.1f} us, DRAM roofline "
          f"{roofline * 1e6:.1f} us ({roofline / seconds:.0%})")
