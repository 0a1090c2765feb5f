"""Misuse of tilefold.language: one clear error at the user's file:line, never a traceback."""

import ml_dtypes
import numpy as np
import pytest
from tilelang_helpers import expect_error

import tilefold.language as T
from tilefold.errors import CompileError, KernelError, TilefoldError
from tilefold.compiler import compile_prim_func
from tilefold.run.jit import jit


def build(prim):
    return lambda: prim.module()


def compile_(prim):
    return lambda: compile_prim_func(prim)


def test_unknown_primitive():
    @T.prim_func
    def k(A: T.Tensor((64, 64), "bfloat16"), B: T.Tensor((64, 64), "bfloat16")):
        with T.Kernel(1, 1) as (bx, by):
            a = T.alloc_shared((64, 64), "bfloat16")
            T.copy(A[0, 0], a)
            T.swizzle_everything(a)  # error
            T.copy(a, B[0, 0])

    expect_error(build(k), KernelError, k, "unknown TileLang primitive T.swizzle_everything")


def test_copy_extent_must_match_the_buffer():
    @T.prim_func
    def k(A: T.Tensor((128, 128), "bfloat16"), B: T.Tensor((128, 128), "bfloat16")):
        with T.Kernel(1) as bx:
            a = T.alloc_shared((64, 64), "bfloat16")
            T.copy(A[0:64, 0:32], a)  # error
            T.copy(a, B[0, 0])

    expect_error(build(k), KernelError, k, "extent 32 in dim 1", "needs 64")


def test_gemm_shape_mismatch():
    @T.prim_func
    def k(A: T.Tensor((64, 64), "bfloat16"), B: T.Tensor((64, 64), "bfloat16"), C: T.Tensor((64, 64), "bfloat16")):
        with T.Kernel(1, 1) as (bx, by):
            a = T.alloc_shared((64, 32), "bfloat16")
            b = T.alloc_shared((64, 64), "bfloat16")
            c = T.alloc_fragment((64, 64), "float32")
            T.gemm(a, b, c)  # error

    expect_error(build(k), KernelError, k, "T.gemm shape mismatch", "A's K (32) must equal B's K (64)")


def test_gemm_output_shape_mismatch():
    @T.prim_func
    def k(A: T.Tensor((64, 64), "bfloat16")):
        with T.Kernel(1, 1) as (bx, by):
            a = T.alloc_shared((64, 32), "bfloat16")
            b = T.alloc_shared((32, 64), "bfloat16")
            c = T.alloc_fragment((32, 64), "float32")
            T.gemm(a, b, c)  # error

    expect_error(build(k), KernelError, k, "A @ B is 64x64 but C c is 32x64")


def test_while_loop_is_unsupported():
    @T.prim_func
    def k(A: T.Tensor((64, 64), "bfloat16")):
        with T.Kernel(1) as bx:
            n = 0
            while n < 2:  # error
                n += 1

    expect_error(build(k), KernelError, k, "while loops are not supported")


def test_copy_inside_parallel():
    @T.prim_func
    def k(A: T.Tensor((64, 64), "bfloat16")):
        with T.Kernel(1) as bx:
            a = T.alloc_shared((64, 64), "bfloat16")
            for i, j in T.Parallel(64, 64):
                T.copy(A[0, 0], a)  # error

    expect_error(build(k), KernelError, k, "T.copy inside T.Parallel")


def test_undefined_name():
    @T.prim_func
    def k(A: T.Tensor((64, 64), "bfloat16")):
        with T.Kernel(1) as bx:
            T.clear(no_such_buffer)  # noqa: F821  # error

    expect_error(build(k), KernelError, k, "name 'no_such_buffer' is not defined")


def test_reduce_output_length():
    @T.prim_func
    def k(A: T.Tensor((64, 64), "bfloat16")):
        with T.Kernel(1) as bx:
            a = T.alloc_shared((64, 128), "bfloat16")
            m = T.alloc_fragment((128,), "float32")
            T.reduce_max(a, m, dim=1)  # error

    expect_error(build(k), KernelError, k, "gives 64 values but m has shape (128,)")


def test_read_after_write_of_a_global_in_a_loop():
    @T.prim_func
    def k(A: T.Tensor((64, 64), "bfloat16")):
        with T.Kernel(1) as bx:
            a = T.alloc_shared((64, 64), "bfloat16")
            b = T.alloc_fragment((64, 64), "bfloat16")
            for s in T.serial(2):
                T.copy(A[0, 0], a)  # error
                for i, j in T.Parallel(64, 64):
                    b[i, j] = a[i, j] * 2.0
                T.copy(b, A[0, 0])

    expect_error(compile_(k), CompileError, k, "A is both read and written by this kernel")


def test_an_expression_needing_more_than_half_of_dst_runs_with_full_sync():
    """Five values alive at once in a float32 DST: more than its half (4 tiles), so the compute
    kernel takes all of DST (dst_full_sync_en) and the expression runs."""
    @T.prim_func
    def k(A: T.Tensor((32, 32), "float32"), B: T.Tensor((32, 32), "float32")):
        with T.Kernel(1) as bx:
            a = T.alloc_shared((32, 32), "float32")
            b = T.alloc_fragment((32, 32), "float32")
            T.copy(A[0, 0], a)
            for i, j in T.Parallel(32, 32):
                b[i, j] = a[i, j] * 1.5 + (a[i, j] * 2.5 + (a[i, j] * 3.5 + (a[i, j] * 4.5 + a[i, j] * 5.5)))
            T.copy(b, B[0, 0])

    kernel = jit(k)
    a = np.random.default_rng(1).standard_normal((32, 32)).astype(np.float32)
    b = np.zeros((32, 32), np.float32)
    kernel(a, b)
    np.testing.assert_allclose(b, a * 17.5, rtol=1e-2, atol=1e-2)
    assert next(k_.config for k_ in kernel.compiled.program.kernels if k_.is_compute).dst_full_sync_en


def test_too_many_dst_values():
    @T.prim_func
    def k(A: T.Tensor((32, 32), "float32"), B: T.Tensor((32, 32), "float32")):
        with T.Kernel(1) as bx:
            a = T.alloc_shared((32, 32), "float32")
            b = T.alloc_fragment((32, 32), "float32")
            T.copy(A[0, 0], a)
            for i, j in T.Parallel(32, 32):  # error
                b[i, j] = a[i, j] * 1.5 + (a[i, j] * 2.5 + (a[i, j] * 3.5 + (a[i, j] * 4.5 + (a[i, j] * 5.5 + (
                    a[i, j] * 6.5 + (a[i, j] * 7.5 + (a[i, j] * 8.5 + a[i, j] * 9.5)))))))
            T.copy(b, B[0, 0])

    expect_error(compile_(k), CompileError, k, "needs more than the 8 DST tiles")


def test_annotation_of_an_unknown_tensor():
    @T.prim_func
    def k(A: T.Tensor((64, 64), "bfloat16")):
        with T.Kernel(1) as bx:
            T.annotate_tt_layout({"Z": {"memory": "L1"}})  # error

    expect_error(build(k), KernelError, k, "names 'Z', which is not a tensor parameter")


def test_primitives_outside_a_kernel_say_so():
    with pytest.raises(KernelError) as info:
        T.copy(1, 2)
    assert "use it inside the body of a @T.prim_func kernel" in str(info.value)
    assert str(info.value).startswith(__file__)


def test_parameters_need_tensor_types():
    with pytest.raises(KernelError) as info:
        @T.prim_func
        def k(A, B: T.Tensor((32, 32), "bfloat16")):
            pass
    assert "parameter 'A' of kernel 'k' needs a type" in str(info.value)


def test_unsupported_dtype():
    with pytest.raises(KernelError) as info:
        T.Tensor((32, 32), "complex64")
    assert "dtype 'complex64' is not supported" in str(info.value)
    assert isinstance(info.value, TilefoldError)


def test_a_block_wholly_outside_its_tensor():
    """A partial last block is padded; a grid with a block past the end of the tensor is an error."""
    @T.prim_func
    def k(A: T.Tensor((128, 64), "bfloat16"), C: T.Tensor((128, 64), "bfloat16")):
        with T.Kernel(3) as bx:
            a = T.alloc_shared((64, 64), "bfloat16")
            T.copy(A[bx * 64, 0], a)  # error
            T.copy(a, C[bx * 64, 0])

    expect_error(compile_(k), CompileError, k, "T.copy of A: a block starts at index 128 of dim 0",
                 "wholly outside the tensor")


def test_a_partial_last_block_is_padded():
    @T.prim_func
    def k(A: T.Tensor((100, 64), "bfloat16"), C: T.Tensor((100, 64), "bfloat16")):
        with T.Kernel(T.ceildiv(100, 64)) as bx:
            a = T.alloc_shared((64, 64), "bfloat16")
            T.copy(A[bx * 64, 0], a)
            T.copy(a, C[bx * 64, 0])

    compile_prim_func(k)


def test_an_element_gather_from_a_tensor_says_to_copy_rows():
    @T.prim_func
    def k(X: T.Tensor((4, 8, 8, 32), "bfloat16"), Y: T.Tensor((64, 96), "bfloat16")):
        with T.Kernel(1, 4) as (bx, by):
            patches = T.alloc_shared((64, 96), "bfloat16")
            for i, j in T.Parallel(64, 96):
                h = i // 8 + j // 32
                ok = h < 8
                patches[i, j] = T.if_then_else(ok, X[by, h, i % 8, j % 32], 0)  # error
            T.copy(patches, Y[0, 0])

    expect_error(compile_(k), CompileError, k, "global tensor X is read at an index computed per element",
                 "a gather", "T.copy")


def test_im2col_says_to_copy_rows():
    @T.prim_func
    def k(X: T.Tensor((1, 8, 8, 32), "bfloat16"), Y: T.Tensor((64, 32), "bfloat16")):
        with T.Kernel(1, 1) as (bx, by):
            patches = T.alloc_shared((64, 32), "bfloat16")
            T.im2col(X, patches, by, bx, 3, 1, 1, 1)  # error
            T.copy(patches, Y[0, 0])

    expect_error(build(k), KernelError, k, "T.im2col gathers the patch matrix", "T.copy(data[n, oh + kh")


def test_several_grids_run_under_jit_and_name_it_when_built_alone():
    @T.prim_func
    def k(X: T.Tensor((64, 64), "bfloat16"), Y: T.Tensor((64, 64), "bfloat16")):
        scratch = T.alloc_global((64, 64), "bfloat16")
        with T.Kernel(1) as bx:
            T.copy(X, scratch)
        with T.Kernel(1) as bx:  # error
            T.copy(scratch, Y)

    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(jit(k, out_idx=[1])(x), x)
    expect_error(build(k), KernelError, k, "several `with T.Kernel(...)` grids", "tilefold.jit")


def test_gemm_into_a_fragment_nothing_cleared():
    @T.prim_func
    def k(A: T.Tensor((64, 64), "bfloat16"), B: T.Tensor((64, 64), "bfloat16"), C: T.Tensor((64, 64), "bfloat16")):
        with T.Kernel(1, 1) as (bx, by):
            a = T.alloc_shared((64, 32), "bfloat16")
            b = T.alloc_shared((32, 64), "bfloat16")
            c = T.alloc_fragment((64, 64), "float32")
            for ko in T.Pipelined(2, num_stages=2):
                T.copy(A[0, ko * 32], a)
                T.copy(B[ko * 32, 0], b)
                T.gemm(a, b, c)  # error
            T.copy(c, C[0, 0])

    expect_error(build(k), KernelError, k, "T.gemm adds A @ B to c, but nothing wrote c before",
                 "call T.clear(c) before the loop, or pass clear_accum=True")


def test_annotate_tt_compute_takes_a_known_fidelity():
    @T.prim_func
    def k(A: T.Tensor((64, 64), "bfloat16"), B: T.Tensor((64, 64), "bfloat16")):
        with T.Kernel(1, 1) as (bx, by):
            T.annotate_tt_compute(math_fidelity="HiFi9")  # error
            a = T.alloc_shared((64, 64), "bfloat16")
            T.copy(A[0, 0], a)
            T.copy(a, B[0, 0])

    expect_error(build(k), KernelError, k, "math_fidelity = 'HiFi9' is not one of 'LoFi', 'HiFi2'")


def test_reading_back_a_tensor_the_kernel_wrote():
    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        C = T.alloc_global((64,), "float32")
        with T.Kernel(2) as bx:
            T.copy(A[bx * 32:(bx + 1) * 32], C[bx * 32:(bx + 1) * 32])
            T.copy(C[bx * 32:(bx + 1) * 32], B[bx * 32:(bx + 1) * 32])  # error

    expect_error(compile_(k), CompileError, k, "C is read back after this kernel writes it")


def test_alloc_global_inside_the_grid():
    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(2) as bx:
            C = T.alloc_global((64,), "float32")  # error
            T.copy(A[bx * 32:(bx + 1) * 32], B[bx * 32:(bx + 1) * 32])

    expect_error(build(k), KernelError, k, "call it before the first `with T.Kernel")


def test_comparing_a_narrowing_cast_is_one_line():
    @T.prim_func
    def k(A: T.Tensor((32, 32), "float32"), B: T.Tensor((32, 32), "float32")):
        with T.Kernel(1) as bx:
            a = T.alloc_fragment((32, 32), "float32")
            T.copy(A[0, 0], a)
            for i, j in T.Parallel(32, 32):
                a[i, j] = T.if_then_else(T.cast(a[i, j], "float16") == a[i, j], 1.0, 0.0)  # error
            T.copy(a, B[0, 0])

    expect_error(build(k), KernelError, k, "T.cast(..., float16) is not supported by tilefold yet")


def test_an_element_of_an_int_table_steers_a_scalar_carried_through_an_unrolled_loop():
    """``g = T.if_then_else(bx * 32 >= offsets[i], i, g)`` over ``range(G)``: the loop carries g, so it
    is unrolled; each element of offsets is read by the reader and handed to compute."""
    @jit(out_idx=[2])
    def pick(N, G):
        @T.prim_func
        def main(A: T.Tensor((N,), "float32"), offsets: T.Tensor((G,), "int32"), B: T.Tensor((N,), "float32")):
            with T.Kernel(N // 32) as bx:
                g = T.alloc_var("int32")
                g = 0
                for i in range(G):
                    g = T.if_then_else(bx * 32 >= offsets[i], i, g)
                for j in T.Parallel(32):
                    B[bx * 32 + j] = A[bx * 32 + j] + g
        return main

    a = np.arange(128, dtype=np.float32)
    group = np.repeat([0, 1, 1, 2], 32).astype(np.float32)
    np.testing.assert_array_equal(pick(128, 3)(a, np.array([0, 32, 96], np.int32)), a + group)


def test_a_scalar_computed_in_a_loop_and_read_after_it_is_named():
    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), offsets: T.Tensor((4,), "int32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(2) as bx:
            for i in T.serial(4):
                last = offsets[i] * 2
            for j in T.Parallel(32):
                B[bx * 32 + j] = A[bx * 32 + j] + last  # error

    expect_error(lambda: compile_prim_func(k), KernelError, k, "last is computed inside the loop at line",
                 "read after it")


def test_a_loop_carrying_a_scalar_with_bounds_not_constant_is_named():
    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), counts: T.Tensor((2,), "int32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(2) as bx:
            s = 0
            for i in T.serial(counts[bx]):  # error
                s = s + i
            for j in T.Parallel(32):
                B[bx * 32 + j] = A[bx * 32 + j] + s

    expect_error(lambda: compile_prim_func(k), KernelError, k, "assigns s from its previous value",
                 "not constants")


def test_an_unknown_primitive_names_the_closest_ones_and_warp_specialization_its_reason():
    @T.prim_func
    def k(A: T.Tensor((32, 32), "float32"), B: T.Tensor((32, 32), "float32")):
        with T.Kernel(1) as bx:
            s = T.alloc_shared((32, 32), "float32")
            T.copy(A[0, 0], s)
            T.copy(s, B[0, 0])
            T.alloc_fragmnt((32, 32), "float32")

    with pytest.raises(KernelError, match=r"unknown TileLang primitive T.alloc_fragmnt: tilefold has no such name "
                                          r"\(closest: T.alloc_fragment"):
        compile_prim_func(k)

    @T.prim_func
    def w(A: T.Tensor((32, 32), "float32"), B: T.Tensor((32, 32), "float32")):
        with T.Kernel(1) as bx:
            with T.ws(0):
                T.copy(A[0, 0], B[0, 0])

    with pytest.raises(KernelError, match=r"T.ws \(warp specialization\) has no Tensix form"):
        compile_prim_func(w)
