"""An ``if`` that updates a fragment the code after it reads: a conditional K-loop accumulation
(``if cond: T.gemm(A_s, B_s, C)``), an update onto a value copied in before the ``if``, an ``else``
that overwrites, and the error when the buffer has no value before the ``if``."""

import numpy as np
import pytest
from checkkernel import check_kernels, compiled_kernel_jobs, require_accepted
from tilelang_helpers import bf16, expect_error, random_bf16

import tilefold.language as T
from tilefold.errors import CompileError
from tilefold.compiler import compile_prim_func
from tilefold.run.jit import jit

M = N = K = 128
BM = BN = 64
BK = 32


def product(a, b):
    """a @ b exactly (float64): bfloat16 products and a float32 DST lose nothing at these sizes."""
    return a.astype(np.float64) @ b.astype(np.float64)


def skipping_gemm():
    """C block (by, bx) sums the K blocks k with k % 2 == 0 or k <= bx (a condition on indices)."""
    @T.prim_func
    def gemm(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM)) as (bx, by):
            A_s = T.alloc_shared((BM, BK), "bfloat16")
            B_s = T.alloc_shared((BK, BN), "bfloat16")
            C_l = T.alloc_fragment((BM, BN), "float32")
            T.clear(C_l)
            for k in T.Pipelined(K // BK, num_stages=2):
                if k % 2 == 0 or k <= bx:
                    T.copy(A[by * BM, k * BK], A_s)
                    T.copy(B[k * BK, bx * BN], B_s)
                    T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * BM, bx * BN])
    return gemm


def test_conditional_accumulation_in_a_k_loop_skips_the_blocks_it_should():
    kernel = jit(skipping_gemm(), out_idx=[2])
    a, b = random_bf16((M, K), 1), random_bf16((K, N), 2)
    c = kernel(a, b)
    ref = np.zeros((M, N))
    for by in range(M // BM):
        for bx in range(N // BN):
            for k in range(K // BK):
                if k % 2 == 0 or k <= bx:
                    rows, cols, ks = slice(by * BM, (by + 1) * BM), slice(bx * BN, (bx + 1) * BN), slice(k * BK, (k + 1) * BK)
                    ref[rows, cols] += product(a[rows, ks], b[ks, cols])
    np.testing.assert_array_equal(c.astype(np.float32), bf16(ref))      # one rounding, at the end
    # the skipped blocks really are skipped: the full product differs
    assert not np.allclose(c.astype(np.float32), product(a, b), rtol=2e-2, atol=2e-2)


def test_conditional_accumulation_kernels_pass_check_kernel(tmp_path):
    kernel = jit(skipping_gemm(), out_idx=[2])
    sources = kernel.compiled.kernel_sources()
    assert "if (" in sources["compute.cpp"] and "if (" in sources["reader.cpp"]
    for result in check_kernels(compiled_kernel_jobs(kernel.compiled, tmp_path)):
        require_accepted(result)


def test_update_onto_a_value_copied_in_before_the_if():
    """C = X, then C += A @ B on the first block row only: the gemm reads C's value, not zero."""
    @T.prim_func
    def bias_gemm(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"),
                  X: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM)) as (bx, by):
            A_s = T.alloc_shared((BM, K), "bfloat16")
            B_s = T.alloc_shared((K, BN), "bfloat16")
            C_l = T.alloc_fragment((BM, BN), "float32")
            T.copy(X[by * BM, bx * BN], C_l)
            if by == 0:
                T.copy(A[by * BM, 0], A_s)
                T.copy(B[0, bx * BN], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * BM, bx * BN])

    a, b = random_bf16((M, K), 3), random_bf16((K, N), 4)
    x = np.random.default_rng(5).standard_normal((M, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    jit(bias_gemm)(a, b, x, c)
    ref = x.copy()
    ref[:BM] += product(a[:BM], b)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4)


def test_else_branch_that_overwrites_without_reading():
    """`if k == 0: C = 1 else: C += A @ B` in a K loop: the else of the first step fills, later
    steps accumulate (each branch leaves one value at the front of C's buffer)."""
    @T.prim_func
    def fill_then_gemm(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"),
                       C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM)) as (bx, by):
            A_s = T.alloc_shared((BM, BK), "bfloat16")
            B_s = T.alloc_shared((BK, BN), "bfloat16")
            C_l = T.alloc_fragment((BM, BN), "float32")
            T.clear(C_l)
            for k in T.serial(K // BK):
                if k == 1:
                    T.fill(C_l, 1.0)
                else:
                    T.copy(A[by * BM, k * BK], A_s)
                    T.copy(B[k * BK, bx * BN], B_s)
                    T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * BM, bx * BN])

    a, b = random_bf16((M, K), 6), random_bf16((K, N), 7)
    c = np.zeros((M, N), np.float32)
    jit(fill_then_gemm)(a, b, c)
    ref = 1.0 + sum(product(a[:, k * BK:(k + 1) * BK], b[k * BK:(k + 1) * BK]) for k in range(2, K // BK))
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4)


def test_a_value_first_made_in_a_branch_and_read_after_it_is_an_error():
    @T.prim_func
    def k(A: T.Tensor((64, 64), "bfloat16"), B: T.Tensor((64, 64), "bfloat16")):
        with T.Kernel(2, 1) as (bx, by):
            a = T.alloc_shared((64, 64), "bfloat16")
            f = T.alloc_fragment((64, 64), "float32")
            T.copy(A[0, 0], a)
            if bx == 0:  # error
                T.copy(a, f)
            T.copy(f, B[0, 0])

    expect_error(lambda: compile_prim_func(k), CompileError, k, "f is computed inside this `if` and read after it",
                 "has no value before it")


@pytest.mark.parametrize("k_steps", [1, 2, 4])
def test_two_gemms_of_one_k_loop_share_its_peeled_last_step(k_steps):
    """Gate and up projections in one K loop (fused MoE's first grid): both gemms spill their partials
    and the loop's last step is peeled once for both (over 1, 2 and 4 steps: no loop, a reload, L1
    accumulation)."""
    K_ = BK * k_steps

    @T.prim_func
    def two(A: T.Tensor((M, K_), "bfloat16"), B1: T.Tensor((K_, N), "bfloat16"), B2: T.Tensor((K_, N), "bfloat16"),
            C1: T.Tensor((M, N), "float32"), C2: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM)) as (bx, by):
            A_s = T.alloc_shared((BM, BK), "bfloat16")
            B1_s = T.alloc_shared((BK, BN), "bfloat16")
            B2_s = T.alloc_shared((BK, BN), "bfloat16")
            C1_l = T.alloc_fragment((BM, BN), "float32")
            C2_l = T.alloc_fragment((BM, BN), "float32")
            T.clear(C1_l)
            T.clear(C2_l)
            for k in T.Pipelined(K_ // BK, num_stages=2):
                T.copy(A[by * BM, k * BK], A_s)
                T.copy(B1[k * BK, bx * BN], B1_s)
                T.gemm(A_s, B1_s, C1_l)
                T.copy(B2[k * BK, bx * BN], B2_s)
                T.gemm(A_s, B2_s, C2_l)
            T.copy(C1_l, C1[by * BM, bx * BN])
            T.copy(C2_l, C2[by * BM, bx * BN])

    a, b1, b2 = random_bf16((M, K_), 12), random_bf16((K_, N), 13), random_bf16((K_, N), 14)
    c1, c2 = np.zeros((M, N), np.float32), np.zeros((M, N), np.float32)
    jit(two)(a, b1, b2, c1, c2)
    np.testing.assert_allclose(c1, product(a, b1), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(c2, product(a, b2), rtol=1e-5, atol=1e-4)
