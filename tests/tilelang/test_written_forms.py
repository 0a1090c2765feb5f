"""Forms TileLang kernels are written in: ``T.gemm(transpose_A=True)``, ``T.grid`` and ``T.Serial``
loops, a jitted factory annotated ``-> T.PrimFunc``, and ``T.float8_e4m3fn`` tensors (stored as
bfloat8_b, with a warning). Each runs on the simulated device against numpy."""

import ml_dtypes
import numpy as np
import pytest

import tilefold as tilelang
import tilefold.language as T
from tilefold.ir.tile_types import DTypeWarning


@tilelang.jit(out_idx=[2])
def gemm_transposed(M, N, K, bm=32, bn=32, bk=32) -> T.PrimFunc:
    @T.prim_func
    def main(A: T.Tensor((K, M), "bfloat16"), B: T.Tensor((N, K), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm)) as (bx, by):
            a = T.alloc_shared((bk, bm), "bfloat16")
            b = T.alloc_shared((bn, bk), "bfloat16")
            c = T.alloc_fragment((bm, bn), "float32")
            T.clear(c)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[ko * bk, by * bm], a)
                T.copy(B[bx * bn, ko * bk], b)
                T.gemm(a, b, c, transpose_A=True, transpose_B=True)
            T.copy(c, C[by * bm, bx * bn])

    return main


def test_gemm_with_transpose_a_and_b_from_an_annotated_factory():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 96)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((64, 64)).astype(ml_dtypes.bfloat16)
    got = gemm_transposed(96, 64, 64)(a, b)
    want = a.astype(np.float32).T @ b.astype(np.float32).T
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


@tilelang.jit(out_idx=[1])
def grid_and_serial(M, N, rounds):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1) as bx:
            s = T.alloc_fragment((M, N), "float32")
            T.copy(A, s)
            for i, j in T.grid(M, N):
                s[i, j] = s[i, j] * 2.0
            for r in T.Serial(rounds):
                for i, j in T.Parallel(M, N):
                    s[i, j] = s[i, j] + 1.0
            T.copy(s, B)

    return main


def test_grid_and_capitalised_serial_loops():
    x = np.random.default_rng(1).standard_normal((32, 64)).astype(np.float32)
    np.testing.assert_allclose(grid_and_serial(32, 64, 3)(x), x * 2 + 3, rtol=1e-6, atol=1e-6)


@tilelang.jit(out_idx=[1])
def to_float8(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), T.float8_e4m3fn)):
        with T.Kernel(1) as bx:
            s = T.alloc_fragment((M, N), "float32")
            o = T.alloc_fragment((M, N), T.float8_e4m3fn)
            T.copy(A, s)
            for i, j in T.Parallel(M, N):
                o[i, j] = s[i, j] * 2.0
            T.copy(o, B)

    return main


def test_float8_e4m3fn_is_stored_as_bfloat8_b_and_the_user_is_told():
    x = np.random.default_rng(2).standard_normal((32, 32)).astype(np.float32)
    with pytest.warns(DTypeWarning, match="float8_e4m3fn has no Wormhole tile format; stored as bfloat8_b"):
        y = to_float8(32, 32)(x)
    assert y.dtype == ml_dtypes.float8_e4m3fn
    want = 2 * x
    err = np.abs(y.astype(np.float32) - want)
    # e4m3 keeps 3 mantissa bits (1/16 relative), bfloat8_b 7 bits below each 16 values' exponent
    assert (err <= np.abs(want) / 16 + np.abs(want).max() / 64).all()
    assert err.max() > 0   # it really is narrowed


def test_an_eager_kernel_of_two_grids_and_a_tensor_only_the_second_grid_writes():
    """``.compile(N=...)`` of an eager kernel whose body runs two grids: the first writes y, the
    second reads y and writes z (which the first does not touch: an output, not unused)."""
    @tilelang.jit
    def two_grids(x, y, z):
        N = T.const("N")
        x: T.Tensor((N, 64), T.float32)
        y: T.Tensor((N, 64), T.float32)
        z: T.Tensor((N, 64), T.float32)
        with T.Kernel(N // 32) as bx:
            a = T.alloc_fragment((32, 64), T.float32)
            T.copy(x[bx * 32, 0], a)
            for i, j in T.Parallel(32, 64):
                a[i, j] = a[i, j] + 1.0
            T.copy(a, y[bx * 32, 0])
        with T.Kernel(N // 32) as bx:
            b = T.alloc_fragment((32, 64), T.float32)
            T.copy(y[bx * 32, 0], b)
            for i, j in T.Parallel(32, 64):
                b[i, j] = b[i, j] * 2.0
            T.copy(b, z[bx * 32, 0])

    kernel = two_grids.compile(N=64)
    x = np.random.default_rng(3).standard_normal((64, 64)).astype(np.float32)
    y, z = np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32)
    kernel(x, y, z)
    np.testing.assert_array_equal(y, x + 1)
    np.testing.assert_array_equal(z, (x + 1) * 2)


def test_a_scalar_copy_a_one_block_kernel_and_a_strided_tensor():
    """``T.copy(A[i], B[i])`` of two elements is the store ``B[i] = A[i]`` (TileLang's scalar copy);
    ``T.Kernel(threads=n)`` without grid sizes is one block; ``T.StridedTensor(shape, strides,
    dtype)`` takes a strided view, which the host gathers (here a slice of a wider array)."""
    @tilelang.jit(out_idx=[1])
    def firsts(N=256, block=64):
        @T.prim_func
        def main(A: T.Tensor((N,), T.int32), B: T.Tensor((N,), T.int32)):
            with T.Kernel(N // block) as bx:
                for i in T.Parallel(block):
                    B[bx * block + i] = 7
                T.copy(A[bx * block], B[bx * block])
        return main

    a = np.arange(256, dtype=np.int32)
    want = np.full(256, 7, np.int32)
    want[0::64] = a[0::64]
    np.testing.assert_array_equal(firsts()(a), want)

    @tilelang.jit(out_idx=[1])
    def doubled():
        @T.prim_func
        def main(A: T.StridedTensor((32, 32), (64, 1), T.float32), B: T.Tensor((32, 32), T.float32)):
            with T.Kernel(threads=128):
                for i, j in T.Parallel(32, 32):
                    B[i, j] = A[i, j] * 2.0
        return main

    wide = np.random.default_rng(4).standard_normal((32, 64)).astype(np.float32)
    np.testing.assert_array_equal(doubled()(wide[:, :32]), wide[:, :32] * 2)


def test_the_source_of_a_kernel_of_scalars_is_the_one_built_for_the_last_call():
    @tilelang.jit(out_idx=[1])
    def ceil_of():
        @T.prim_func
        def main(a: T.int32, A: T.Tensor((32,), T.int32)):
            with T.Kernel(1) as _:
                for i in T.Parallel(32):
                    A[i] = T.ceildiv(a, 32)
        return main

    kernel = ceil_of()
    assert (kernel(100) == 4).all()
    assert "compute.cpp" in kernel.get_kernel_source()


def test_block_conditions_select_between_element_masks():
    """A block-causal mask (block_causal_attention's): selections on conditions of the block index
    (``q_is_noisy = bx < 1``) between element masks of i and j, nested deeper than half of DST holds."""
    @tilelang.jit(out_idx=[1])
    def mask():
        @T.prim_func
        def main(X: T.Tensor((128, 64), T.float32), S: T.Tensor((128, 64), T.float32)):
            with T.Kernel(2) as bx:
                x = T.alloc_fragment((64, 64), T.float32)
                acc = T.alloc_fragment((64, 64), T.float32)
                T.copy(X[bx * 64:(bx + 1) * 64, :], x)
                q_is_noisy = bx < 1
                is_noisy_diag = T.if_then_else(bx > 0, 1, 0)
                for i, j in T.Parallel(64, 64):
                    noisy = T.if_then_else(i == j, 1, 0)
                    clean = T.if_then_else(q_is_noisy, T.if_then_else(i > j, 1, 0), T.if_then_else(i >= j, 1, 0))
                    allowed = T.if_then_else(is_noisy_diag == 1, noisy, clean)
                    acc[i, j] = T.if_then_else(allowed > 0, x[i, j], -1.0)
                T.copy(acc, S[bx * 64:(bx + 1) * 64, :])
        return main

    x = np.random.default_rng(5).standard_normal((128, 64)).astype(np.float32)
    i, j = np.indices((64, 64))
    first = np.where(i > j, x[:64], -1.0)          # block 0: clean, q noisy (i > j)
    second = np.where(i == j, x[64:], -1.0)        # block 1: the noisy diagonal
    np.testing.assert_array_equal(mask()(x), np.concatenate([first, second]))


@pytest.mark.parametrize("name, reference", [("reduce_max", np.max), ("reduce_min", np.min), ("reduce_sum", np.sum),
                                             ("reduce_absmax", lambda v: np.abs(v).max())])
def test_a_vector_reduced_to_one_value(name, reference):
    fn = getattr(T, name)

    @T.prim_func
    def kernel(a: T.Tensor((96,), T.float32), out: T.Tensor((1,), T.float32)):
        with T.Kernel(1, threads=32):
            frag = T.alloc_fragment((96,), T.float32)
            one = T.alloc_fragment((1,), T.float32)
            T.copy(a, frag)
            fn(frag, one)
            T.copy(one, out)

    a = np.random.default_rng(6).standard_normal(96).astype(np.float32)
    got = tilelang.compile(kernel, out_idx=-1)(a)
    assert got.shape == (1,)
    np.testing.assert_allclose(got[0], reference(a), rtol=2e-3, atol=1e-2)   # the FPU's 10 mantissa bits


def test_a_column_of_a_tensor_into_and_out_of_a_vector():
    """``T.copy(M[b, 0:n, h], mask_local)``: the vector runs along a dim that is not the last (a
    column of the tensor's tiles), read and written element by element; masks joined with ``&``."""
    @T.prim_func
    def k(X: T.Tensor((2, 128, 4), "float32"), M: T.Tensor((2, 128, 4), "uint8"), Y: T.Tensor((2, 128, 4), "float32")):
        with T.Kernel(4, 2) as (h, b):
            mask_local = T.alloc_fragment((128,), "uint8")
            x_local = T.alloc_fragment((128,), "float32")
            out = T.alloc_fragment((128,), "float32")
            T.copy(M[b, 0:128, h], mask_local)
            T.copy(X[b, 0:128, h], x_local)
            for j in T.Parallel(128):
                out[j] = T.if_then_else((mask_local[j] != 0) & (j < 100), x_local[j], -1.0)
            T.copy(out, Y[b, 0:128, h])

    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 128, 4)).astype(np.float32)
    m = (rng.random((2, 128, 4)) > 0.5).astype(np.uint8)
    y = np.full((2, 128, 4), 5.0, np.float32)
    tilelang.jit(k)(x, m, y)
    keep = (m != 0) & (np.arange(128)[None, :, None] < 100)
    np.testing.assert_array_equal(y, np.where(keep, x, -1.0))


def test_a_part_of_a_local_buffer_copied_into_another():
    """``T.copy(acc[:n, :], out)`` (the first rows of a fragment, flash decoding's ``acc_o[:valid_block_H, :]``):
    an element copy of the region."""
    @T.prim_func
    def k(A: T.Tensor((64, 32), "float32"), B: T.Tensor((32, 32), "float32")):
        with T.Kernel(1) as _:
            acc = T.alloc_fragment((64, 32), "float32")
            out = T.alloc_shared((32, 32), "float32")
            T.copy(A[0, 0], acc)
            T.copy(acc[:32, :], out)
            T.copy(out, B[0, 0])

    a = np.random.default_rng(9).standard_normal((64, 32)).astype(np.float32)
    b = np.zeros((32, 32), np.float32)
    tilelang.jit(k)(a, b)
    np.testing.assert_array_equal(b, a[:32])


def test_a_let_variable_a_cleared_part_and_run_once():
    """``off = T.int32()`` bound by ``T.let(off, ...)``; ``T.clear(acc[:32, :])`` clears the first rows of a
    fragment, one element at a time; ``kernel.run_once()`` runs it on the profiler's inputs."""
    @T.prim_func
    def k(A: T.Tensor((64, 32), "float32"), B: T.Tensor((64, 32), "float32")):
        with T.Kernel(1) as bx:
            acc = T.alloc_fragment((64, 32), "float32")
            off = T.int32()
            T.let(off, bx * 64)
            T.copy(A[off, 0], acc)
            T.clear(acc[:32, :])
            T.copy(acc, B[off, 0])

    a = np.random.default_rng(12).standard_normal((64, 32)).astype(np.float32)
    kernel = tilelang.compile(k, out_idx=[1])
    b = kernel(a)
    assert not b[:32].any()
    np.testing.assert_array_equal(b[32:], a[32:])
    assert kernel.run_once().shape == (64, 32)


def test_a_serial_loop_inside_t_parallel_is_unrolled_per_element():
    @T.prim_func
    def k(A: T.Tensor((32, 32), "float32"), B: T.Tensor((32, 32), "float32")):
        with T.Kernel(1) as _:
            a = T.alloc_fragment((32, 32), "float32")
            b = T.alloc_fragment((32, 32), "float32")
            T.copy(A[0, 0], a)
            for i, j in T.Parallel(32, 32):
                b[i, j] = a[i, j]
                for s in T.serial(1, 4):
                    b[i, j] += a[i, j] * s
            T.copy(b, B[0, 0])

    a = np.random.default_rng(13).standard_normal((32, 32)).astype(np.float32)
    b = np.zeros_like(a)
    tilelang.jit(k)(a, b)
    np.testing.assert_allclose(b, a * 7, rtol=1e-2, atol=1e-2)
