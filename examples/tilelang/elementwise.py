"""Element-wise TileLang kernels: ``C = A + B`` and the fused ``Y = relu(A * B + C)``.

The body of ``T.Parallel`` says what one element is; tilefold computes it a whole 32x32
tile at a time on the SFPU (load the tiles into DST, apply the ops, pack the result),
for every tile of the block. ``add_tiles`` writes the same as the TileLang-TT architecture does, indexing the
global tensors directly inside ``T.Parallel``; tilefold turns those accesses into block copies.

Run: ``.venv/bin/python examples/tilelang/elementwise.py``.
"""

import numpy as np

import tilefold
import tilefold.language as T


@tilefold.jit
def elementwise_add(M, N, block_M=64, block_N=64, dtype="bfloat16"):
    @T.prim_func
    def add(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M)) as (bx, by):
            A_s = T.alloc_shared((block_M, block_N), dtype)
            B_s = T.alloc_shared((block_M, block_N), dtype)
            C_l = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], A_s)
            T.copy(B[by * block_M, bx * block_N], B_s)
            for i, j in T.Parallel(block_M, block_N):
                C_l[i, j] = A_s[i, j] + B_s[i, j]
            T.copy(C_l, C[by * block_M, bx * block_N])

    return add


@tilefold.jit
def fused_relu(M, N, block_M=64, block_N=64, dtype="bfloat16"):
    @T.prim_func
    def mul_add_relu(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype),
                     Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M)) as (bx, by):
            A_s = T.alloc_shared((block_M, block_N), dtype)
            B_s = T.alloc_shared((block_M, block_N), dtype)
            C_s = T.alloc_shared((block_M, block_N), dtype)
            Y_l = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], A_s)
            T.copy(B[by * block_M, bx * block_N], B_s)
            T.copy(C[by * block_M, bx * block_N], C_s)
            for i, j in T.Parallel(block_M, block_N):
                Y_l[i, j] = T.max(A_s[i, j] * B_s[i, j] + C_s[i, j], 0)
            T.copy(Y_l, Y[by * block_M, bx * block_N])

    return mul_add_relu


@T.prim_func
def add_tiles(A: T.Tensor((256, 256), "bfloat16"), B: T.Tensor((256, 256), "bfloat16"),
              C: T.Tensor((256, 256), "bfloat16")):
    with T.Kernel(8, 8) as (bx, by):
        for i, j in T.Parallel(32, 32):
            C[bx * 32 + i, by * 32 + j] = A[bx * 32 + i, by * 32 + j] + B[bx * 32 + i, by * 32 + j]


ADD = elementwise_add(256, 512)
FUSED = fused_relu(256, 256)


def bf16(x):
    import ml_dtypes

    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def main() -> None:
    import ml_dtypes

    rng = np.random.default_rng(1)
    a, b, c = (rng.standard_normal((256, 512)).astype(ml_dtypes.bfloat16) for _ in range(3))
    out = ADD(a, b).astype(np.float32)
    ref = bf16(a.astype(np.float32) + b.astype(np.float32))
    print(f"add 256x512: max |error| {np.abs(out - ref).max()}")
    assert np.array_equal(out, ref)

    a, b, c = (x[:, :256] for x in (a, b, c))
    out = FUSED(a, b, c).astype(np.float32)
    # DST holds bfloat16: each step rounds, as the device does
    ref = np.maximum(bf16(bf16(a.astype(np.float32) * b.astype(np.float32)) + c.astype(np.float32)), 0)
    print(f"relu(a * b + c) 256x256: max |error| {np.abs(out - ref).max()}")
    assert np.array_equal(out, ref)

    out = tilefold.jit(add_tiles)(a, b).astype(np.float32)
    ref = bf16(a.astype(np.float32) + b.astype(np.float32))
    print(f"tile add 256x256: max |error| {np.abs(out - ref).max()}")
    assert np.array_equal(out, ref)
    print("PASS")


if __name__ == "__main__":
    main()
