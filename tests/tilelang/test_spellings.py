"""TileLang spellings a kernel may use, each run against numpy: ``transpose_A``, ``T.Serial``,
``T.grid``, ``T.log2``, a factory annotated ``-> T.PrimFunc``, uint8 and float8_e4m3fn inputs
(Wormhole has no fp8 tile format: stored as bfloat8_b, with a warning) and ``T.dynamic``."""

import ml_dtypes
import numpy as np
import pytest

import tilefold as tilelang
import tilefold.language as T

RNG = np.random.default_rng(7)


@tilelang.jit(out_idx=[2])
def gemm_transposed_a(M, N, K, bm=32, bn=32, bk=32) -> T.PrimFunc:
    @T.prim_func
    def main(A: T.Tensor((K, M), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm)) as (bx, by):
            a = T.alloc_shared((bk, bm), "bfloat16")
            b = T.alloc_shared((bk, bn), "bfloat16")
            c = T.alloc_fragment((bm, bn), "float32")
            T.clear(c)
            for k in T.Serial(T.ceildiv(K, bk)):
                T.copy(A[k * bk, by * bm], a)
                T.copy(B[k * bk, bx * bn], b)
                T.gemm(a, b, c, transpose_A=True)
            T.copy(c, C[by * bm, bx * bn])

    return main


def test_transpose_a_gemm_in_a_factory_annotated_as_a_prim_func():
    a = RNG.standard_normal((64, 64)).astype(ml_dtypes.bfloat16)
    b = RNG.standard_normal((64, 96)).astype(ml_dtypes.bfloat16)
    want = a.astype(np.float32).T @ b.astype(np.float32)
    np.testing.assert_allclose(gemm_transposed_a(64, 96, 64)(a, b), want, rtol=1e-3, atol=1e-3)


@tilelang.jit(out_idx=[1])
def log2_over_a_grid(M, N, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, 32)) as bx:
            a = T.alloc_fragment((32, N), "float32")
            T.copy(A[bx * 32, 0], a)
            for i, j in T.grid(32, N):
                a[i, j] = T.log2(a[i, j] + 1.0)
            T.copy(a, B[bx * 32, 0])

    return main


def test_log2_in_a_grid_loop_of_float32_and_uint8_values():
    x = RNG.uniform(0, 4, (64, 64)).astype(np.float32)
    np.testing.assert_allclose(log2_over_a_grid(64, 64)(x), np.log2(x + 1), rtol=1e-6, atol=1e-6)
    u = RNG.integers(0, 256, (64, 64)).astype(np.uint8)
    np.testing.assert_allclose(log2_over_a_grid(64, 64, "uint8")(u), np.log2(u.astype(np.float32) + 1),
                               rtol=1e-6, atol=1e-6)


def test_float8_e4m3_is_stored_as_bfloat8_b_and_says_so():
    x = RNG.uniform(0, 4, (64, 64)).astype(ml_dtypes.float8_e4m3fn)
    with pytest.warns(UserWarning, match="float8_e4m3fn has no Wormhole tile format; stored as bfloat8_b"):
        got = log2_over_a_grid(64, 64, "float8_e4m3fn")(x)
    want = np.log2(x.astype(np.float32) + 1)
    # bfloat8_b keeps 7 mantissa bits under an exponent shared by 16 values: |error| < 2^-6 of the
    # row's largest input (below 4), carried through log2(x + 1) whose slope is below 1 / ln 2
    assert np.abs(got - want).max() < 4 * 2.0 ** -6 / np.log(2)


@tilelang.jit
def tripled(A):
    M, N = T.dynamic("M"), T.const("N")
    A: T.Tensor[[M, N], T.float32]
    B = T.empty([M, N], T.float32)
    with T.Kernel(T.ceildiv(M, 32)) as bx:
        a = T.alloc_fragment((32, N), "float32")
        T.copy(A[bx * 32, 0], a)
        for i, j in T.Parallel(32, N):
            a[i, j] = a[i, j] * 3.0
        T.copy(a, B[bx * 32, 0])
    return B


def test_a_dynamic_dim_runs_at_each_size_it_is_called_with():
    for rows in (96, 64):
        x = RNG.standard_normal((rows, 64)).astype(np.float32)
        np.testing.assert_array_equal(tripled(x), 3 * x)


def test_a_dtype_given_as_a_numpy_type_to_a_factory_and_a_cast():
    @tilelang.jit(out_idx=[1])
    def halve(dtype):
        @T.prim_func
        def kernel(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), dtype)):
            with T.Kernel(1) as _:
                for i in T.Parallel(256):
                    B[i] = T.cast(A[i] * 0.5, dtype)
        return kernel

    a = np.arange(256, dtype=np.float32)
    b = halve(np.float16)(a)
    assert b.dtype == np.float16
    np.testing.assert_array_equal(b.astype(np.float32), a * 0.5)


def test_a_dynamic_size_made_in_a_factory_is_bound_by_each_call():
    """``n = T.dynamic("n")`` (``T.symbolic`` is the same) in a jit factory: the kernel is built for each
    length it is called with; its code exists once it has been called."""
    from tilefold.errors import KernelError

    @tilelang.jit
    def fill(value: float):
        n = T.symbolic("n")

        @T.prim_func
        def main(x: T.Tensor[n, T.float32]):
            with T.Kernel(T.ceildiv(n, 256), threads=128) as bx:
                for i in T.Parallel(256):
                    x[bx * 256 + i] = value

        return main

    kernel = fill(2.0)
    with pytest.raises(KernelError, match="T.dynamic sizes n"):
        kernel.get_kernel_source()
    for length in (512, 1024):
        x = np.zeros(length, np.float32)
        kernel(x)
        assert (x == 2.0).all()
    assert "compute.cpp" in kernel.get_kernel_source()
