"""The 256x256 matmul of TileLang-TT architecture §6, in its tile-level notation.

Inside ``T.Parallel(32, 32)`` each term names a 32x32 tile and ``*`` is the tile product, so
``C[bx*32+i, by*32+j] += A[bx*32+i, kt*32+j] * B[kt*32+i, by*32+j]`` summed over ``kt`` is a
blocked matmul of one output tile per block. tilefold recognises the pattern
(``tensorize_tt``) and lowers it as the factory's kernels do: the reader reads A[m, kt] and
B[kt, n] per K step, the compute kernel acquires DST before the K loop, runs ``matmul_block``
per K tile and packs after it, the writer writes the tile. C is the result (it is written,
not read).

Run: ``.venv/bin/python examples/tilelang/matmul_256.py``.
"""

import numpy as np

import tilefold
import tilefold.language as T


@T.prim_func
def matmul_256x256(
    A: T.Buffer((256, 256), "float16"),
    B: T.Buffer((256, 256), "float16"),
    C: T.Buffer((256, 256), "float16"),
):
    with T.Kernel(8, 8) as (bx, by):  # 8x8 = 64 output tiles
        for kt in T.serial(8):  # K-loop (8 tiles)
            for i, j in T.Parallel(32, 32):
                C[bx * 32 + i, by * 32 + j] += A[bx * 32 + i, kt * 32 + j] * B[kt * 32 + i, by * 32 + j]


def main() -> None:
    import ml_dtypes

    rng = np.random.default_rng(3)
    a = rng.standard_normal((256, 256)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((256, 256)).astype(ml_dtypes.bfloat16)
    kernel = tilefold.jit(matmul_256x256)
    c = kernel(a, b).astype(np.float32)
    ref = (a.astype(np.float32) @ b.astype(np.float32)).astype(ml_dtypes.bfloat16).astype(np.float32)
    err = np.abs(c - ref).max()
    print(f"matmul 256x256 (tile notation): max |error| {err:.4f} vs numpy; "
          f"estimated device time {kernel.last_result.perf.seconds * 1e6:.1f} us")
    assert np.allclose(c, ref, rtol=1e-2, atol=1e-2)
    print("PASS")


if __name__ == "__main__":
    main()
