"""RMSNorm and LayerNorm in TileLang, on row blocks of 1, 8 or 32 rows.

``rms_norm`` holds whole rows in a block and reduces them once (``T.reduce_sum`` along dim 1);
``rms_norm_splitk`` walks the row in column blocks, accumulating squares element-wise across
a serial loop (``A_local[i, j] += ...``) before one reduction, then scales each column block
in place in its shared buffer. ``layer_norm`` takes its weight and bias as 1-D tensors and
indexes them along the row (``g[j]``). A block of fewer than 32 rows is a tile with padding
rows: they are computed and never written.

Run: ``.venv/bin/python examples/tilelang/norms.py``.
"""

import ml_dtypes
import numpy as np

import tilefold as tilelang
import tilefold.language as T


@tilelang.jit(out_idx=[-1], pass_configs={"tl.disable_tma_lower": True})
def rms_norm(M, N, blk_m):
    dtype = "float"

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
            A_shared = T.alloc_shared((blk_m, N), dtype)
            A_pow_local = T.alloc_fragment((blk_m, N), dtype)
            A_local = T.alloc_fragment((blk_m, N), dtype)
            A_powsum = T.alloc_fragment((blk_m,), dtype)

            T.copy(A[bx * blk_m:(bx + 1) * blk_m, :], A_shared)
            T.copy(A_shared, A_local)
            for i, j in T.Parallel(blk_m, N):
                A_pow_local[i, j] = A_local[i, j] * A_local[i, j]
            T.reduce_sum(A_pow_local, A_powsum, dim=1)
            for i in T.Parallel(blk_m):
                A_powsum[i] = T.rsqrt(A_powsum[i] / N + 1e-12)
            for i, j in T.Parallel(blk_m, N):
                A_local[i, j] *= A_powsum[i]
            T.copy(A_local, B[bx * blk_m:(bx + 1) * blk_m, :])

    return main


@tilelang.jit(out_idx=[-1])
def rms_norm_splitk(M, N, blk_m, blk_k):
    dtype = "float"

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
            A_shared = T.alloc_shared((blk_m, blk_k), dtype)
            A_local = T.alloc_fragment((blk_m, blk_k), dtype)
            A_powsum = T.alloc_fragment((blk_m,), dtype)

            num_k_step = T.ceildiv(N, blk_k)
            T.clear(A_local)
            for k in range(num_k_step):
                T.copy(A[bx * blk_m, k * blk_k], A_shared)
                for i, j in T.Parallel(blk_m, blk_k):
                    A_local[i, j] += A_shared[i, j] * A_shared[i, j]
            T.reduce_sum(A_local, A_powsum, dim=1)
            for i in T.Parallel(blk_m):
                A_powsum[i] = T.rsqrt(A_powsum[i] / N + 1e-12)

            for k in range(num_k_step):
                # the last column block first, as TileLang's example does (it is still in cache)
                T.copy(A[bx * blk_m, (num_k_step - 1 - k) * blk_k], A_shared)
                for i, j in T.Parallel(blk_m, blk_k):
                    A_shared[i, j] *= A_powsum[i]
                T.copy(A_shared, B[bx * blk_m, (num_k_step - 1 - k) * blk_k])

    return main


@tilelang.jit(out_idx=[-1])
def layer_norm(M, N, blk_m, eps=1e-5, dtype="bfloat16", accum_dtype="float"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), W: T.Tensor((N,), dtype), Bias: T.Tensor((N,), dtype),
             Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
            x = T.alloc_fragment((blk_m, N), accum_dtype)
            w = T.alloc_fragment((N,), accum_dtype)
            b = T.alloc_fragment((N,), accum_dtype)
            sq = T.alloc_fragment((blk_m, N), accum_dtype)
            mean = T.alloc_fragment((blk_m,), accum_dtype)
            rstd = T.alloc_fragment((blk_m,), accum_dtype)
            T.copy(X[bx * blk_m, 0], x)
            T.copy(W, w)
            T.copy(Bias, b)
            T.reduce_sum(x, mean, dim=1)
            for i in T.Parallel(blk_m):
                mean[i] = mean[i] / N
            for i, j in T.Parallel(blk_m, N):
                x[i, j] = x[i, j] - mean[i]
                sq[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(sq, rstd, dim=1)
            for i in T.Parallel(blk_m):
                rstd[i] = T.rsqrt(rstd[i] / N + eps)
            for i, j in T.Parallel(blk_m, N):
                x[i, j] = x[i, j] * rstd[i] * w[j] + b[j]
            T.copy(x, Y[bx * blk_m, 0])

    return main


def rms_reference(a):
    return a / np.sqrt((a * a).mean(axis=1, keepdims=True) + 1e-12)


def layer_norm_reference(x, w, b, eps=1e-5):
    x, w, b = (v.astype(np.float32) for v in (x, w, b))
    mean = x.mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=1, keepdims=True) + eps) * w + b


def main(M=64, N=64, blocks=(1, 8, 32)) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, N)).astype(np.float32)
    x = a.astype(ml_dtypes.bfloat16)
    w, b = (rng.standard_normal(N).astype(ml_dtypes.bfloat16) for _ in range(2))
    for blk_m in blocks:
        err_rms = np.abs(rms_norm(M, N, blk_m)(a) - rms_reference(a)).max()
        err_split = np.abs(rms_norm_splitk(M, N, blk_m, 32)(a) - rms_reference(a)).max()
        err_ln = np.abs(layer_norm(M, N, blk_m)(x, w, b).astype(np.float32) - layer_norm_reference(x, w, b)).max()
        print(f"rows per block {blk_m:2d}: rmsnorm {err_rms:.5f}, split-k rmsnorm {err_split:.5f}, "
              f"layernorm {err_ln:.5f} (max |error|)")
        assert err_rms < 5e-3 and err_split < 5e-3 and err_ln < 5e-2
    print("PASS")


if __name__ == "__main__":
    main()
