"""Kernels written per GPU thread (``tx = T.get_thread_binding(0)``) run as T.Parallel over the
threads: per-thread buffers, folds over a serial loop, ``if tk == 0``, atomics into shared
memory, a scalar store that runs once; the results match numpy and the C++ passes check-kernel."""

import numpy as np
import pytest
from checkkernel import check_kernels, compiled_kernel_jobs, require_accepted
from tilelang_helpers import expect_error

import tilefold as tilelang
import tilefold.language as T
from tilefold.errors import KernelError


def gemv_per_thread(N, K, BLOCK_N, BLOCK_K):
    """One thread per output row; the row's dot product folded over a serial loop (TileLang's naive gemv)."""

    @T.prim_func
    def main(A: T.Tensor((K,), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((N,), "float16")):
        with T.Kernel(T.ceildiv(N, BLOCK_N), threads=BLOCK_N) as bn:
            tn = T.get_thread_binding(0)
            A_shared = T.alloc_shared((BLOCK_K,), "float16")
            B_shared = T.alloc_shared((BLOCK_N, BLOCK_K), "float16")
            C_reg = T.alloc_local((1,), "float32")
            T.clear(C_reg)
            for bk in T.serial(T.ceildiv(K, BLOCK_K)):
                for tk in T.serial(BLOCK_K):
                    A_shared[tk] = A[bk * BLOCK_K + tk]
                    B_shared[tn, tk] = B[bn * BLOCK_N + tn, bk * BLOCK_K + tk]
                for tk in T.serial(BLOCK_K):
                    C_reg[0] += A_shared[tk].astype("float32") * B_shared[tn, tk].astype("float32")
            C[bn * BLOCK_N + tn] = C_reg[0]

    return main


def gemv_per_thread_spelled_out(N, K, BLOCK_N, BLOCK_K):
    """The same fold written ``C_reg[0] = C_reg[0] + ...``."""

    @T.prim_func
    def main(A: T.Tensor((K,), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((N,), "float16")):
        with T.Kernel(T.ceildiv(N, BLOCK_N), threads=BLOCK_N) as bn:
            tn = T.get_thread_binding(0)
            A_shared = T.alloc_shared((BLOCK_K,), "float16")
            B_shared = T.alloc_shared((BLOCK_N, BLOCK_K), "float16")
            C_reg = T.alloc_local((1,), "float32")
            T.clear(C_reg)
            for bk in T.serial(T.ceildiv(K, BLOCK_K)):
                for tk in T.serial(BLOCK_K):
                    A_shared[tk] = A[bk * BLOCK_K + tk]
                    B_shared[tn, tk] = B[bn * BLOCK_N + tn, bk * BLOCK_K + tk]
                for tk in T.serial(BLOCK_K):
                    C_reg[0] = C_reg[0] + A_shared[tk].astype("float32") * B_shared[tn, tk].astype("float32")
            C[bn * BLOCK_N + tn] = C_reg[0]

    return main


def gemv_split_k(N, K, BLOCK_N, BLOCK_K):
    """Two thread dims: each (tn, tk) thread multiplies one element per K step, ``if tk == 0`` clears
    a shared row sum, the threads of a row add into it with T.atomic_add."""

    @T.prim_func
    def main(A: T.Tensor((K,), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((N,), "float16")):
        with T.Kernel(T.ceildiv(N, BLOCK_N), threads=(BLOCK_N, BLOCK_K)) as bn:
            tn = T.get_thread_binding(0)
            tk = T.get_thread_binding(1)
            A_local = T.alloc_local((1,), "float16")
            B_local = T.alloc_local((1,), "float16")
            C_accum = T.alloc_local((1,), "float32")
            C_shared = T.alloc_shared((BLOCK_N,), "float32")
            if tk == 0:
                C_shared[tn] = 0
            T.clear(C_accum)
            for bk in T.serial(T.ceildiv(K, BLOCK_K)):
                A_local[0] = A[bk * BLOCK_K + tk]
                B_local[0] = B[bn * BLOCK_N + tn, bk * BLOCK_K + tk]
                C_accum[0] += A_local[0].astype("float32") * B_local[0].astype("float32")
            T.atomic_add(C_shared[tn], C_accum[0])
            C[bn * BLOCK_N + tn] = C_shared[tn]

    return main


def gemv_split_k_vectors(N, K, BLOCK_N, reduce_threads, TILE_K, loads="serial"):
    """TileLang's split-K gemv: each (tn, tk) thread loads TILE_K consecutive elements into per-thread
    vectors, sums their products, and the threads of a row add their sums into shared memory."""
    BLOCK_K = reduce_threads * TILE_K
    load_loop = T.vectorized if loads == "vectorized" else T.serial

    @T.prim_func
    def main(A: T.Tensor((K,), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((N,), "float16")):
        with T.Kernel(T.ceildiv(N, BLOCK_N), threads=(BLOCK_N, reduce_threads)) as bn:
            tn = T.get_thread_binding(0)
            tk = T.get_thread_binding(1)
            A_local = T.alloc_local((TILE_K,), "float16")
            B_local = T.alloc_local((TILE_K,), "float16")
            C_shared = T.alloc_shared((BLOCK_N,), "float32")
            C_accum = T.alloc_local((1,), "float32")
            if tk == 0:
                C_shared[tn] = 0
            T.clear(C_accum)
            for bk in T.serial(T.ceildiv(K, BLOCK_K)):
                for k in load_loop(TILE_K):
                    A_local[k] = A[bk * BLOCK_K + tk * TILE_K + k]
                    B_local[k] = B[bn * BLOCK_N + tn, bk * BLOCK_K + tk * TILE_K + k]
                for k in T.serial(TILE_K):
                    C_accum[0] += A_local[k].astype("float32") * B_local[k].astype("float32")
            T.atomic_add(C_shared[tn], C_accum[0])
            C[bn * BLOCK_N + tn] = C_shared[tn]

    return main


def gemv_inputs(N, K, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(K).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    return a, b, b.astype(np.float32) @ a.astype(np.float32)


@pytest.mark.parametrize("spelled_out", [False, True])
def test_per_thread_gemv_folds_over_the_serial_loop(spelled_out):
    a, b, want = gemv_inputs(64, 96, 1)
    c = np.zeros(64, np.float16)
    factory = gemv_per_thread_spelled_out if spelled_out else gemv_per_thread
    tilelang.compile(factory(64, 96, 32, 32))(a, b, c)
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=2e-2, atol=5e-2)


def test_two_thread_dims_with_a_pinned_thread_and_a_shared_atomic():
    a, b, want = gemv_inputs(64, 128, 2)
    c = np.zeros(64, np.float16)
    tilelang.compile(gemv_split_k(64, 128, 32, 32))(a, b, c)
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=2e-2, atol=5e-2)


@pytest.mark.parametrize("loads, reduce_threads, tile_k", [("serial", 8, 4), ("vectorized", 4, 8)])
def test_split_k_per_thread_vectors_run_as_one_element_per_thread(loads, reduce_threads, tile_k):
    """Per-thread vectors of TILE_K elements over threads (tn, tk): thread tk's element k is element
    tk * TILE_K + k of the K block, so they run as reduce_threads * TILE_K threads of one element."""
    a, b, want = gemv_inputs(64, 128, 4)
    c = np.zeros(64, np.float16)
    tilelang.compile(gemv_split_k_vectors(64, 128, 32, reduce_threads, tile_k, loads))(a, b, c)
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=2e-2, atol=5e-2)


def test_a_per_thread_sum_read_other_than_by_the_sum_over_tk_is_one_line():
    """Each thread's own sum is read (not only summed over tk): its terms cannot be spread over more
    threads, so the vectors stay three element dims and the kernel stops at one line."""

    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), C: T.Tensor((32, 4), "float32")):
        with T.Kernel(1, threads=(32, 4)):
            tn = T.get_thread_binding(0)
            tk = T.get_thread_binding(1)
            a = T.alloc_local((4,), "float32")  # error
            acc = T.alloc_local((1,), "float32")
            T.clear(acc)
            for k in T.serial(4):
                a[k] = A[tk * 4 + k]
            for k in T.serial(4):
                acc[0] += a[k]
            C[tn, tk] = acc[0]

    expect_error(lambda: k.module(), KernelError, k, "per-thread buffer of shape (4,)", "at most two dimensions")


def test_per_thread_rows_with_a_derived_index_and_read_back_elements():
    """``row = bx * 32 + tx``, a per-thread scalar (T.alloc_var), a serial loop over columns, and an
    element read after the kernel stored it (the stored value, not a read of the tensor)."""

    @T.prim_func
    def main(A: T.Tensor((64, 8), "float32"), B: T.Tensor((64, 8), "float32")):
        with T.Kernel(2, threads=32) as bx:
            tx = T.get_thread_binding(0)
            row = bx * 32 + tx
            s = T.alloc_var("float32")
            s = A[row, 0] * 2.0
            B[row, 0] = A[row, 0] + s
            B[row, 4] = B[row, 0] - 1.0
            for j in T.serial(1, 4):
                B[row, j] = A[row, j] + s
            for j in T.serial(5, 8):
                B[row, j] = A[row, j] * A[row, j]

    a = np.random.default_rng(3).standard_normal((64, 8)).astype(np.float32)
    b = np.zeros_like(a)
    tilelang.compile(main)(a, b)
    want = np.concatenate([a[:, :4] + 2 * a[:, :1], a[:, :1] * 3 - 1, a[:, 5:] ** 2], axis=1)
    np.testing.assert_allclose(b, want, rtol=1e-2, atol=1e-2)


def test_a_scalar_store_outside_parallel_runs_once():
    @T.prim_func
    def main(A: T.Tensor((1,), "int32"), B: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=1):
            A[0] = T.ceildiv(130, 32)
            for i in T.serial(4):
                B[i] = i * 2.0

    a, b = np.zeros(1, np.int32), np.zeros(4, np.float32)
    tilelang.compile(main)(a, b)
    assert a[0] == 5
    np.testing.assert_array_equal(b, [0, 2, 4, 6])


def test_per_thread_kernels_pass_check_kernel(tmp_path):
    jobs = []
    for i, func in enumerate((gemv_split_k(64, 128, 32, 32), gemv_split_k_vectors(64, 128, 32, 8, 4))):
        (tmp_path / str(i)).mkdir()
        jobs += compiled_kernel_jobs(tilelang.compile(func).compiled, tmp_path / str(i))
    for result in check_kernels(jobs):
        require_accepted(result)


def test_per_thread_buffer_with_too_many_dims_is_one_line():
    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), C: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=(32, 4)):
            tn = T.get_thread_binding(0)
            tk = T.get_thread_binding(1)
            a = T.alloc_local((4,), "float32")  # error
            for k in T.serial(4):
                a[k] = A[tk * 4 + k]
            C[tn] = a[0]

    expect_error(lambda: k.module(), KernelError, k, "per-thread buffer of shape (4,)", "at most two dimensions")


def test_threads_past_a_buffer_are_one_line():
    @T.prim_func
    def k(A: T.Tensor((128,), "float32"), C: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            tx = T.get_thread_binding(0)
            s = T.alloc_shared((64,), "float32")
            s[tx] = A[tx]  # error
            C[tx] = s[tx]

    expect_error(lambda: k.module(), KernelError, k, "reaches index 127", "give T.Kernel threads= that fit")
