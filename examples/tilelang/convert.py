"""dtype conversion in TileLang: int32 ↔ bfloat16, element-wise and by global-to-global copy.

``T.Cast(out_dtype, x)`` (or ``x.astype(out_dtype)``) converts inside ``T.Parallel``: to an
integer dtype the value is rounded toward zero, to bfloat16 it is rounded to nearest even as
the packer does. ``T.copy(A, B)`` between two global tensors of different dtypes goes through
a local buffer of each dtype.

Run: ``.venv/bin/python examples/tilelang/convert.py``.
"""

import ml_dtypes
import numpy as np

import tilefold as tilelang
import tilefold.language as T


@tilelang.jit(out_idx=[1])
def convert(M, N, block_M, block_N, in_dtype="int32", out_dtype="bfloat16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), in_dtype), B: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_local = T.alloc_fragment((block_M, block_N), in_dtype)
            B_local = T.alloc_fragment((block_M, block_N), out_dtype)
            T.copy(A[by * block_M, bx * block_N], A_local)
            for i, j in T.Parallel(block_M, block_N):
                B_local[i, j] = T.Cast(out_dtype, A_local[i, j])
            T.copy(B_local, B[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[1])
def copy_convert(M, N, in_dtype, out_dtype):
    @T.prim_func
    def main(A: T.Tensor((M, N), in_dtype), B: T.Tensor((M, N), out_dtype)):
        with T.Kernel(1, threads=128) as _:
            T.copy(A, B)

    return main


def main(M=64, N=96) -> None:
    rng = np.random.default_rng(0)
    ints = rng.integers(-3000, 3000, (M, N)).astype(np.int32)
    as_bf16 = convert(M, N, 32, 32)(ints)
    assert as_bf16.dtype == ml_dtypes.bfloat16
    assert np.array_equal(as_bf16, ints.astype(ml_dtypes.bfloat16))
    floats = (rng.standard_normal((M, N)) * 100).astype(ml_dtypes.bfloat16)
    as_int = convert(M, N, 32, 32, "bfloat16", "int32")(floats)
    assert as_int.dtype == np.int32
    assert np.array_equal(as_int, np.trunc(floats.astype(np.float32)).astype(np.int32))
    print(f"int32 -> bfloat16 -> int32 {M}x{N}: exact (nearest even, toward zero)")
    assert np.array_equal(copy_convert(M, N, "int32", "float32")(ints), ints.astype(np.float32))
    f32 = rng.standard_normal((M, N)).astype(np.float32)
    assert np.array_equal(copy_convert(M, N, "float32", "bfloat16")(f32), f32.astype(ml_dtypes.bfloat16))
    print("T.copy int32 -> float32 and float32 -> bfloat16: exact")
    print("PASS")


if __name__ == "__main__":
    main()
