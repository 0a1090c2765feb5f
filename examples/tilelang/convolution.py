"""A 2-D convolution by im2col in TileLang: an implicit GEMM over views of NHWC data.

The im2col matrix has a row per output pixel (n, oh, ow) and a column per (kh, kw, c); the
weights viewed as a (KH·KW·C, F) matrix (``T.Tensor(shape, dtype, kernel.data)``) multiply it.
A block computes one output row (OW pixels) for ``block_N`` filters; its K loop walks the
KH·KW window positions, and the im2col block of position (kh, kw) is the input row
``oh + kh`` shifted by ``kw`` pixels: a plain ``T.copy`` of ``data[n, oh + kh, kw:kw + OW, :]``
(a block starting mid-tile, moved by face rows). The output is written through a
(N·OH·OW, F) view of ``out``. Stride 1, no padding ("valid").

Run: ``.venv/bin/python examples/tilelang/convolution.py``.
"""

import ml_dtypes
import numpy as np

import tilefold as tilelang
import tilefold.language as T


@tilelang.jit(out_idx=[2])
def convolution(N, C, H, W, F, K, block_N, dtype="bfloat16", accum_dtype="float"):
    KH, KW = K, K
    OH, OW = H - KH + 1, W - KW + 1

    @T.prim_func
    def main(
        data: T.Tensor((N, H, W, C), dtype),
        kernel: T.Tensor((KH, KW, C, F), dtype),
        out: T.Tensor((N, OH, OW, F), dtype),
    ):
        with T.Kernel(T.ceildiv(F, block_N), N * OH, threads=128) as (bx, by):
            data_shared = T.alloc_shared((OW, C), dtype)
            kernel_shared = T.alloc_shared((C, block_N), dtype)
            out_local = T.alloc_fragment((OW, block_N), accum_dtype)

            kernel_flat = T.Tensor((KH * KW * C, F), dtype, kernel.data)
            out_flat = T.Tensor((N * OH * OW, F), dtype, out.data)

            n = by // OH
            oh = by % OH
            T.clear(out_local)
            for k_iter in T.Pipelined(KH * KW, num_stages=2):
                kh = k_iter // KW
                kw = k_iter % KW
                T.copy(data[n, oh + kh, kw:kw + OW, :], data_shared)
                T.copy(kernel_flat[k_iter * C, bx * block_N], kernel_shared)
                T.gemm(data_shared, kernel_shared, out_local)
            T.copy(out_local, out_flat[by * OW, bx * block_N])

    return main


def reference(data, weights):
    _, H, W, _ = data.shape
    KH, KW, _, _ = weights.shape
    OH, OW = H - KH + 1, W - KW + 1
    x = data.astype(np.float32)
    out = 0
    for kh in range(KH):
        for kw in range(KW):
            out = out + x[:, kh:kh + OH, kw:kw + OW, :] @ weights[kh, kw].astype(np.float32)
    return out


def main(N=1, C=32, H=34, W=34, F=32, K=3) -> None:
    rng = np.random.default_rng(0)
    data = rng.standard_normal((N, H, W, C)).astype(ml_dtypes.bfloat16)
    weights = rng.standard_normal((K, K, C, F)).astype(ml_dtypes.bfloat16)
    out = convolution(N, C, H, W, F, K, 32)(data, weights).astype(np.float32)
    ref = reference(data, weights)
    err = np.abs(out - ref).max()
    print(f"convolution NHWC {N}x{H}x{W}x{C} * {K}x{K}x{C}x{F}: max |error| {err:.4f} (outputs up to "
          f"{np.abs(ref).max():.1f})")
    assert np.allclose(out, ref, rtol=1e-2, atol=0.25)
    print("PASS")


if __name__ == "__main__":
    main()
