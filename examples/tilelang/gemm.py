"""A canonical TileLang GEMM: blocks of C computed from a pipelined K loop of A and B blocks.

Each block (bx, by) of the grid copies an A block and a B block per K step into shared
buffers (circular buffers, ``num_stages`` blocks deep) and accumulates ``A @ B`` into a
float32 fragment, which is copied to C at the end. tilefold maps the grid onto the cores
(each core loops over its blocks), splits the program into reader, compute and writer
kernels, and accumulates the fragment in DST (when the block is larger than DST, partial
sums go to a circular buffer, where the packer adds each K step's sums to them in L1). The
cores of a grid row share their A blocks and those of a column their B blocks: one core of each
reads them from DRAM and multicasts them to the others. ``math_fidelity`` sets the matrix
engine's fidelity (``T.annotate_tt_compute``; HiFi4 by default, HiFi2 halves the multiplier
passes).

Run: ``.venv/bin/python examples/tilelang/gemm.py`` (or ``tilefold run`` / ``tilefold compile``).
"""

import numpy as np

import tilefold
import tilefold.language as T


@tilefold.jit
def matmul(M, N, K, block_M, block_N, block_K, dtype="bfloat16", accum_dtype="float", num_stages=2,
           math_fidelity="HiFi4"):
    @T.prim_func
    def gemm(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M)) as (bx, by):
            T.annotate_tt_compute(math_fidelity=math_fidelity)
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


# The kernels `tilefold compile` writes: a 256x256x256 GEMM in 128x128x64 blocks, and a shape
# that is not a multiple of the blocks (the tensors are padded with zeros on the device).
GEMM_256 = matmul(256, 256, 256, 128, 128, 64)
GEMM_PADDED = matmul(200, 168, 100, 64, 64, 32)


def reference(a, b):
    """The same math in numpy: bfloat16 inputs, float32 accumulation, a bfloat16 result."""
    import ml_dtypes

    return (a.astype(np.float32) @ b.astype(np.float32)).astype(ml_dtypes.bfloat16)


def main() -> None:
    import ml_dtypes

    rng = np.random.default_rng(0)
    for kernel, (m, n, k) in ((GEMM_256, (256, 256, 256)), (GEMM_PADDED, (200, 168, 100))):
        a = rng.standard_normal((m, k)).astype(ml_dtypes.bfloat16)
        b = rng.standard_normal((k, n)).astype(ml_dtypes.bfloat16)
        c = kernel(a, b)
        ref = reference(a, b)
        err = np.abs(c.astype(np.float32) - ref.astype(np.float32)).max()
        ok = np.allclose(c.astype(np.float32), ref.astype(np.float32), rtol=1e-2, atol=1e-2)
        perf = kernel.last_result.perf
        print(f"gemm {m}x{n}x{k}: max |error| {err:.4f} vs numpy, {'PASS' if ok else 'FAIL'}; "
              f"estimated device time {perf.seconds * 1e6:.1f} us")
        assert ok


if __name__ == "__main__":
    main()
