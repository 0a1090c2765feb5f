"""Elements of integer and bool global tensors steering a kernel: a block mask in an ``if`` (block-sparse
GEMM), a comparison on an int32 table, an offset table in a copy's index, a count as a loop bound, a
mask the writer reads. The data-movement kernels read each element themselves; compute gets it
from the reader through a mailbox CB (``read_tile_value``)."""

import numpy as np
import pytest
from checkkernel import check_kernels, compiled_kernel_jobs, require_accepted
from tilelang_helpers import bf16, expect_error, random_bf16

import tilefold.language as T
from tilefold.compiler import compile_prim_func
from tilefold.errors import KernelError
from tilefold.run.jit import jit

M = N = K = 128
BM = BN = 64
BK = 32


def product(a, b):
    return a.astype(np.float64) @ b.astype(np.float64)


def blocksparse(mask_dtype="bool"):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"),
             Mask: T.Tensor((M // BM, N // BN, K // BK), mask_dtype), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM)) as (bx, by):
            A_s = T.alloc_shared((BM, BK), "bfloat16")
            B_s = T.alloc_shared((BK, BN), "bfloat16")
            C_l = T.alloc_fragment((BM, BN), "float32")
            T.clear(C_l)
            for k in T.Pipelined(K // BK, num_stages=2):
                if Mask[by, bx, k]:
                    T.copy(A[by * BM, k * BK], A_s)
                    T.copy(B[k * BK, bx * BN], B_s)
                    T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * BM, bx * BN])
    return gemm


def sparse_reference(a, b, mask):
    ref = np.zeros((M, N))
    for by in range(M // BM):
        for bx in range(N // BN):
            for k in range(K // BK):
                if mask[by, bx, k]:
                    rows, cols, ks = slice(by * BM, (by + 1) * BM), slice(bx * BN, (bx + 1) * BN), slice(k * BK, (k + 1) * BK)
                    ref[rows, cols] += product(a[rows, ks], b[ks, cols])
    return ref


@pytest.mark.parametrize("mask_dtype", ["bool", "int32", "uint8"])
def test_block_sparse_gemm_skips_the_masked_blocks(mask_dtype):
    kernel = jit(blocksparse(mask_dtype), out_idx=[3])
    a, b = random_bf16((M, K), 1), random_bf16((K, N), 2)
    mask = np.random.default_rng(3).random((M // BM, N // BN, K // BK)) > 0.5
    mask[0, 0, :] = False                        # a block with no K step at all: zeros
    values = mask.astype(mask_dtype) * (1 if mask_dtype == "bool" else 7)
    c = kernel(a, b, values)
    np.testing.assert_array_equal(c.astype(np.float32), bf16(sparse_reference(a, b, mask)))
    assert not c[:BM, :BN].any()


def test_block_sparse_kernels_pass_check_kernel(tmp_path):
    kernel = jit(blocksparse(), out_idx=[3])
    sources = kernel.compiled.kernel_sources()
    assert "read_tile_value(" in sources["compute.cpp"]
    assert "noc_async_read(" in sources["reader.cpp"] and "cb_push_back" in sources["reader.cpp"]
    for result in check_kernels(compiled_kernel_jobs(kernel.compiled, tmp_path)):
        require_accepted(result)


def test_a_comparison_on_an_int32_table_and_a_scattered_write():
    """Block (by, bx) is doubled when Level[by, bx] > 2 (compute gets Level from the reader) and
    written to block Dest[by * 2 + bx] (the writer reads Dest itself)."""
    @T.prim_func
    def scale(X: T.Tensor((M, N), "float32"), Level: T.Tensor((2, 2), "int32"), Dest: T.Tensor((4,), "int32"),
              Y: T.Tensor((M, N), "float32")):
        with T.Kernel(2, 2) as (bx, by):
            x = T.alloc_shared((BM, BN), "float32")
            y = T.alloc_fragment((BM, BN), "float32")
            T.copy(X[by * BM, bx * BN], x)
            if Level[by, bx] > 2:
                for i, j in T.Parallel(BM, BN):
                    y[i, j] = x[i, j] * 2.0
            else:
                T.copy(x, y)
            d = Dest[by * 2 + bx]
            T.copy(y, Y[d // 2 * BM, d % 2 * BN])

    x = np.random.default_rng(4).standard_normal((M, N)).astype(np.float32)
    level = np.array([[0, 3], [5, 1]], np.int32)
    dest = np.array([2, 0, 3, 1], np.int32)
    y = np.zeros((M, N), np.float32)
    jit(scale)(x, level, dest, y)
    ref = np.zeros((M, N), np.float32)
    for by in range(2):
        for bx in range(2):
            d = dest[by * 2 + bx]
            block = x[by * BM:(by + 1) * BM, bx * BN:(bx + 1) * BN]
            ref[d // 2 * BM:(d // 2 + 1) * BM, d % 2 * BN:(d % 2 + 1) * BN] = block * (2 if level[by, bx] > 2 else 1)
    np.testing.assert_array_equal(y, ref)


def test_an_offset_table_in_a_copy_index():
    """Output block by copies the rows block Order[by] of X (a gather by a permutation table)."""
    @T.prim_func
    def gather(X: T.Tensor((M, N), "bfloat16"), Order: T.Tensor((M // 32,), "int32"), Y: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(1, M // 32) as (bx, by):
            s = T.alloc_shared((32, N), "bfloat16")
            T.copy(X[Order[by] * 32, 0], s)
            T.copy(s, Y[by * 32, 0])

    x = random_bf16((M, N), 5)
    order = np.array([3, 0, 2, 1], np.int32)
    y = np.zeros((M, N), np.float32)
    jit(gather)(x, order, y)
    np.testing.assert_array_equal(y, x.reshape(4, 32, N)[order].reshape(M, N))


def test_a_float_element_as_a_condition_is_one_error():
    @T.prim_func
    def k(X: T.Tensor((64, 64), "float32"), Y: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, 1) as (bx, by):
            s = T.alloc_shared((64, 64), "float32")
            T.copy(X[0, 0], s)
            if X[0, 0] > 0:  # error
                T.copy(s, Y[0, 0])

    expect_error(lambda: compile_prim_func(k), KernelError, k, "reads an element of the float tensor X",
                 "only integer and bool tensors")


def test_a_count_read_from_a_tensor_bounds_the_k_loop():
    """Output block row by sums the first Steps[by] K blocks (a ragged K loop)."""
    @T.prim_func
    def ragged(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), Steps: T.Tensor((M // BM,), "int32"),
               C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM)) as (bx, by):
            A_s = T.alloc_shared((BM, BK), "bfloat16")
            B_s = T.alloc_shared((BK, BN), "bfloat16")
            C_l = T.alloc_fragment((BM, BN), "float32")
            T.clear(C_l)
            for k in T.Pipelined(Steps[by], num_stages=2):
                T.copy(A[by * BM, k * BK], A_s)
                T.copy(B[k * BK, bx * BN], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * BM, bx * BN])

    a, b = random_bf16((M, K), 8), random_bf16((K, N), 9)
    steps = np.array([3, 1], np.int32)
    c = np.zeros((M, N), np.float32)
    jit(ragged)(a, b, steps, c)
    ref = np.zeros((M, N))
    for by, s in enumerate(steps):
        ref[by * BM:(by + 1) * BM] = product(a[by * BM:(by + 1) * BM, :s * BK], b[:s * BK])
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4)


def test_an_if_on_a_local_copy_of_an_int_tensor_reads_the_tensors_element():
    """``T.copy(M, mask_local)`` then ``if mask_local[k] != 0:`` (block-sparse attention's skip): the
    element that copy put there is read from M."""
    @T.prim_func
    def masked_sum(A: T.Tensor((128, 32), "float32"), Mask: T.Tensor((4,), "int32"), B: T.Tensor((32, 32), "float32")):
        with T.Kernel(1) as _:
            acc = T.alloc_fragment((32, 32), "float32")
            a = T.alloc_shared((32, 32), "float32")
            mask_local = T.alloc_fragment((4,), "int32")
            T.copy(Mask, mask_local)
            T.clear(acc)
            for k in T.serial(4):
                if mask_local[k] != 0:
                    T.copy(A[k * 32:(k + 1) * 32, :], a)
                    for i, j in T.Parallel(32, 32):
                        acc[i, j] += a[i, j]
            T.copy(acc, B)

    a = np.random.default_rng(10).standard_normal((128, 32)).astype(np.float32)
    mask = np.array([1, 0, 1, 0], np.int32)
    b = np.zeros((32, 32), np.float32)
    jit(masked_sum)(a, mask, b)
    np.testing.assert_allclose(b, a[0:32] + a[64:96], rtol=1e-6, atol=1e-6)


def test_an_if_on_a_local_buffer_the_kernel_computes_is_one_error():
    @T.prim_func
    def k(A: T.Tensor((32,), "int32"), B: T.Tensor((32,), "int32")):
        with T.Kernel(1) as _:
            s = T.alloc_fragment((32,), "int32")
            T.copy(A, s)
            for i in T.Parallel(32):
                s[i] = s[i] + 1
            if s[0] > 2:  # error
                T.copy(s, B)

    expect_error(lambda: compile_prim_func(k), KernelError, k, "s[0] is a value of fragment buffer s",
                 "one T.copy from an integer tensor filled the buffer")


@pytest.mark.parametrize("form", ["tensor", "filled_by_a_loop"])
def test_any_of_and_all_of_a_mask_row_steer_a_block(form):
    """Block bx is doubled when any element of Mask[bx, :] is set and negated when all are: read from
    the tensor, or from a shared buffer a serial loop of element copies filled."""
    @T.prim_func
    def k(A: T.Tensor((96, 32), "float32"), Mask: T.Tensor((3, 2), "bool"), B: T.Tensor((96, 32), "float32")):
        with T.Kernel(3) as bx:
            a = T.alloc_shared((32, 32), "float32")
            m = T.alloc_shared(2, "bool")
            for i in T.serial(2):
                m[i] = Mask[bx, i]
            T.copy(A[bx * 32, 0], a)
            if form == "tensor":
                if T.any_of(Mask[bx, :]):
                    for i, j in T.Parallel(32, 32):
                        a[i, j] = a[i, j] * 2.0
                if T.all_of(Mask[bx, :]):
                    for i, j in T.Parallel(32, 32):
                        a[i, j] = -a[i, j]
            else:
                if T.any_of(m):
                    for i, j in T.Parallel(32, 32):
                        a[i, j] = a[i, j] * 2.0
                if T.all_of(m):
                    for i, j in T.Parallel(32, 32):
                        a[i, j] = -a[i, j]
            T.copy(a, B[bx * 32, 0])

    a = np.random.default_rng(11).standard_normal((96, 32)).astype(np.float32)
    mask = np.array([[0, 0], [0, 1], [1, 1]], bool)
    b = np.zeros_like(a)
    jit(k)(a, mask, b)
    scale = np.repeat([1.0, 2.0, -2.0], 32)[:, None]
    np.testing.assert_array_equal(b, a * scale)


def test_align_up_of_indices_and_numbers():
    @T.prim_func
    def k(A: T.Tensor((64,), "int32")):
        with T.Kernel(2) as bx:
            for i in T.Parallel(32):
                A[bx * 32 + i] = T.align_up(bx * 20 + 1, 16) + T.align_up(5, 4) + i

    a = np.zeros(64, np.int32)
    jit(k)(a)
    block = np.repeat([16, 32], 32)                       # align_up(1, 16), align_up(21, 16)
    np.testing.assert_array_equal(a, block + 8 + np.tile(np.arange(32), 2))
