"""TileLang kernels as tile-ai/tilelang's examples write them: each example runs against numpy,
and the C++ of each kind of kernel passes check-kernel."""

import numpy as np
import pytest
from checkkernel import accessor_compile_args, check_kernels, require_accepted
from tilelang_helpers import expect_error, load_example

import tilefold as tilelang
import tilefold.language as T
from tilefold.errors import CompileError, KernelError

EXAMPLES = ("flash_attention", "norms", "online_softmax", "gemm_splitk", "gemm_batched", "gemm_transpose_b",
            "reductions", "cumsum_transpose", "convert", "gemm_persistent", "eager_gemm", "convolution",
            "layernorm_fwd_bwd", "topk")


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_matches_numpy(name):
    load_example(name).main()


def _kernels():
    """One compiled kernel of each example (the constructs the C++ must express)."""
    norms = load_example("norms")
    return {
        "flash_causal": load_example("flash_attention").flashattn(1, 1, 128, 32, True, 64, 64),
        "layer_norm_1": norms.layer_norm(64, 64, 1),
        "cumsum_reverse": tilelang.compile(load_example("cumsum_transpose").cumsum_test(64, 64, 32, 32, 1, True),
                                           out_idx=-1),
        "to_int": load_example("convert").convert(64, 96, 32, 32, "bfloat16", "int32"),
        "persistent": load_example("gemm_persistent").matmul_persistent(128, 96, 64, 32, 32, 32, 128, 2, sm_num=5),
        "topk": load_example("topk").row_topk.compile(np.zeros((32, 64), np.float32), 2, rows_per_block=32),
    }


def test_example_kernels_pass_check_kernel(tmp_path):
    jobs = []
    for tag, kernel in _kernels().items():
        program = kernel.compiled.program
        sources = kernel.compiled.kernel_sources()
        for k in program.kernels:
            path = tmp_path / f"{tag}_{k.source_file}"
            path.write_text(sources[k.source_file])
            role = "compute" if k.is_compute else ("reader" if k.processor == "RISCV_0" else "writer")
            jobs.append((path, role, accessor_compile_args(program, k) or None))
    for result in check_kernels(jobs):
        require_accepted(result)


# -- tensor views ---------------------------------------------------------------------------------

@tilelang.jit(out_idx=[1])
def flat_scale(B, S, D, block=32):
    @T.prim_func
    def main(X: T.Tensor((B, S, D), "float32"), Y: T.Tensor((B, S, D), "float32")):
        with T.Kernel(T.ceildiv(B * S, block)) as bx:
            x_flat = T.Tensor((B * S, D), "float32", X.data)
            y_flat = T.reshape(Y, (B * S, D))
            x = T.alloc_fragment((block, D), "float32")
            T.copy(x_flat[bx * block, 0], x)
            for i, j in T.Parallel(block, D):
                x[i, j] = x[i, j] * 2.0
            T.copy(x, y_flat[bx * block, 0])

    return main


def test_views_of_kernel_tensors():
    x = np.random.default_rng(0).standard_normal((2, 48, 32)).astype(np.float32)
    kernel = flat_scale(2, 48, 32)
    np.testing.assert_array_equal(kernel(x), 2 * x)
    assert kernel.compiled.roles() == {"X": "input", "Y": "output", "x_flat": "input", "y_flat": "output"}
    out = np.zeros_like(x)
    assert kernel(x, out) is out
    np.testing.assert_array_equal(out, 2 * x)


def test_view_errors():
    @T.prim_func
    def bad_count(X: T.Tensor((64, 32), "float32"), Y: T.Tensor((64, 32), "float32")):
        with T.Kernel(1) as _:
            v = T.Tensor((32, 32), "float32", X.data)  # error
            T.copy(v, Y[0:32, :])

    expect_error(lambda: tilelang.compile(bad_count), KernelError, bad_count, "a view of X (64, 32) as (32, 32)",
                 "1024 elements, not 2048")

    @T.prim_func
    def bad_dtype(X: T.Tensor((64, 32), "float32"), Y: T.Tensor((64, 32), "float32")):
        with T.Kernel(1) as _:
            v = T.Tensor((32, 64), "bfloat16", X.data)  # error
            T.copy(v, Y)

    expect_error(lambda: tilelang.compile(bad_dtype), KernelError, bad_dtype, "views keep the tensor's dtype")


# -- compile, layouts ----------------------------------------------------------------------------

def test_compile_takes_a_jit_kernel_and_keeps_its_outputs():
    kernel = load_example("convert").convert(64, 64, 32, 32)
    again = tilelang.compile(kernel)
    assert again.return_order == [1] and again.prim is kernel.prim
    ints = np.arange(64 * 64, dtype=np.int32).reshape(64, 64) - 2000
    np.testing.assert_array_equal(again(ints).astype(np.float32), kernel(ints).astype(np.float32))


def test_gpu_layout_annotations_are_not_evaluated():
    import types

    tl = types.SimpleNamespace(layout=types.SimpleNamespace())  # no make_swizzled_layout at all

    @T.prim_func
    def copy_through(A: T.Tensor((32, 32), "float32"), B: T.Tensor((32, 32), "float32")):
        with T.Kernel(1) as _:
            s = T.alloc_shared((32, 32), "float32")
            T.annotate_layout({s: tl.layout.make_swizzled_layout(s)})
            T.copy(A, s)
            T.copy(s, B)

    a = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    np.testing.assert_array_equal(tilelang.compile(copy_through, out_idx=[1])(a), a)


# -- vectors written in pieces smaller than a face row ----------------------------------------------

@tilelang.jit(out_idx=[1])
def row_sums(N, D, blk_m, by_element):
    @T.prim_func
    def main(X: T.Tensor((N, D), "float32"), S: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, blk_m), threads=128) as bx:
            x = T.alloc_fragment((blk_m, D), "float32")
            s = T.alloc_fragment((blk_m,), "float32")
            T.copy(X[bx * blk_m, 0], x)
            T.reduce_sum(x, s, dim=1)
            if by_element:
                for i in T.Parallel(blk_m):
                    S[bx * blk_m + i] = s[i]
            else:
                T.copy(s, S[bx * blk_m])

    return main


@pytest.mark.parametrize("by_element", [False, True])
def test_vector_blocks_of_8_written_by_several_cores(by_element):
    """Blocks of 8 values of a 1-D output share face rows: each core patches its elements in
    (read-modify-write through a scratch page at the same L1 address on every core)."""
    x = np.random.default_rng(1).standard_normal((64, 32)).astype(np.float32)
    kernel = row_sums(64, 32, 8, by_element)
    np.testing.assert_allclose(kernel(x), x.sum(axis=1), rtol=1e-2, atol=1e-2)
    assert kernel.last_result.batched


def reshape_shared(N, M, scope):
    @T.prim_func
    def main(A: T.Tensor((4, N), "float32"), B: T.Tensor((4 * N // M, M), "float32")):
        with T.Kernel(4) as bx:
            flat = T.alloc_shared((N,), "float32") if scope == "shared" else T.alloc_fragment((N,), "float32")
            T.copy(A[bx, :], flat)
            rows = T.reshape(flat, [N // M, M])
            doubled = T.alloc_fragment((N // M, M), "float32")
            for i, j in T.Parallel(N // M, M):
                doubled[i, j] = rows[i, j] * 2
            T.copy(doubled, B[bx * (N // M), 0])

    return main


@pytest.mark.parametrize("scope", ["shared", "fragment"])
def test_reshape_of_a_local_buffer_a_copy_filled(scope):
    a = np.random.default_rng(1).standard_normal((4, 2048)).astype(np.float32)
    kernel = tilelang.compile(reshape_shared(2048, 64, scope), out_idx=-1)
    np.testing.assert_array_equal(kernel(a), (a * 2).reshape(-1, 64))


def test_reshape_of_a_computed_local_buffer_is_one_clear_line():
    @T.prim_func
    def reshape_filled(A: T.Tensor((1024,), "float32"), B: T.Tensor((32, 32), "float32")):
        with T.Kernel(1) as _:
            A_shared = T.alloc_shared((1024,), "float32")
            T.copy(A, A_shared)
            for i in T.Parallel(1024):
                A_shared[i] = A_shared[i] + 1
            A_2d = T.reshape(A_shared, [32, 32])  # error
            T.copy(A_2d, B)

    expect_error(lambda: tilelang.compile(reshape_filled), KernelError, reshape_filled,
                 "T.reshape of shared buffer A_shared (1024)", "reshape the tensor instead")


def view_test(N, M, dtype, new_dtype=None):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N // M, M), new_dtype or dtype)):
        with T.Kernel(1) as _:
            A_viewed = T.view(A, [N // M, M], dtype=new_dtype)  # error
            T.copy(A_viewed, B)

    return main


def test_view_reshapes_and_keeps_the_dtype():
    a = np.arange(2048, dtype=np.float32)
    kernel = tilelang.compile(view_test(2048, 64, "float32"), out_idx=-1)
    np.testing.assert_array_equal(kernel(a), a.reshape(32, 64))
    bad = view_test(2048, 64, "float32", "int32")
    expect_error(lambda: tilelang.compile(bad, out_idx=-1), KernelError, bad, "T.view of A (float32) as int32")


def elementwise_copy_oob_safe_value(M, N, padded_M, padded_N, dtype="float32", pad_value=-99):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((padded_M, padded_N), dtype)):
        with T.Kernel(1, threads=128):
            T.annotate_safe_value({A: pad_value})
            for i, j in T.Parallel(padded_M, padded_N):
                T.copy(A[i, j], B[i, j])

    return main


def test_element_copies_read_the_safe_value_past_the_end():
    a = np.random.default_rng(0).standard_normal((70, 75)).astype(np.float32)
    out = tilelang.compile(elementwise_copy_oob_safe_value(70, 75, 96, 96), out_idx=[1])(a)
    ref = np.full((96, 96), -99, np.float32)
    ref[:70, :75] = a
    np.testing.assert_array_equal(out, ref)


def shifted_rows(M, N, block, shift, safe=True):
    """Each block of rows reads the rows ``shift`` above it (``by * block + i - shift``): below row 0
    of A, and past its last column, the block reads A's safe value."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N + 8), "float32")):
        with T.Kernel(T.ceildiv(N + 8, block), T.ceildiv(M, block)) as (bx, by):
            s = T.alloc_shared((block, block), "float32")
            if safe:
                T.annotate_safe_value({A: -7.0})
            for i, j in T.Parallel(block, block):  # error
                s[i, j] = A[by * block + i - shift, bx * block + j]
            for i, j in T.Parallel(block, block):
                B[by * block + i, bx * block + j] = s[i, j]

    return main


@pytest.mark.parametrize("shift", [10, 40])
def test_reads_below_row_0_read_the_safe_value(shift):
    a = np.random.default_rng(5).standard_normal((96, 56)).astype(np.float32)
    b = np.zeros((96, 64), np.float32)
    tilelang.compile(shifted_rows(96, 56, 32, shift))(a, b)
    want = np.full((96 + shift, 64), -7.0, np.float32)
    want[shift:, :56] = a
    np.testing.assert_array_equal(b, want[:96])


def test_reads_below_row_0_without_a_safe_value_are_one_line():
    func = shifted_rows(96, 56, 32, 10, safe=False)
    expect_error(lambda: tilelang.compile(func), CompileError, shifted_rows, "T.copy of A starts at -10 in dim 0, below 0")


# -- exact float32 maxima ---------------------------------------------------------------------------

@tilelang.jit(out_idx=[1, 2])
def row_max_and_hits(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1) as _:
            a = T.alloc_fragment((M, N), "float32")
            m = T.alloc_fragment((M,), "float32")
            hit = T.alloc_fragment((M, N), "float32")
            T.copy(A, a)
            T.reduce_max(a, m, dim=1)
            for i, j in T.Parallel(M, N):
                hit[i, j] = T.if_then_else(a[i, j] == m[i], 1.0, 0.0)
            T.copy(m, B)
            T.copy(hit, C)

    return main


@tilelang.jit(out_idx=[1])
def row_max(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(1) as _:
            a = T.alloc_fragment((M, N), "float32")
            m = T.alloc_fragment((M,), "float32")
            T.copy(A, a)
            T.reduce_max(a, m, dim=1)
            T.copy(m, B)

    return main


def test_float32_max_compared_for_equality_is_exact():
    rng = np.random.default_rng(3)
    a = (1.0 + rng.permuted(np.tile(np.arange(2**13), (32, 1)), axis=1)[:, :64] * 2.0**-23).astype(np.float32)
    m, hit = row_max_and_hits(32, 64)(a)
    assert np.array_equal(m, a.max(axis=1))
    assert np.array_equal(hit, (a == a.max(axis=1, keepdims=True)).astype(np.float32))
    # without an equality the maximum is the FPU's: float32 read as TF32 (10 mantissa bits)
    assert np.all(row_max(32, 64)(a) == 1.0)


# -- eager constants known by another name -----------------------------------------------------------

@tilelang.jit
def window_sums(data, weights):
    N, K = T.const("N, K")
    KH, KW = K, K
    data: T.Tensor((N, 32), T.float32)
    weights: T.Tensor((KH, KW), T.float32)
    out = T.empty((N, 32), T.float32)
    with T.Kernel(T.ceildiv(N, 32)) as bx:
        x = T.alloc_fragment((32, 32), T.float32)
        T.copy(data[bx * 32, 0], x)
        for i, j in T.Parallel(32, 32):
            x[i, j] = x[i, j] * (KH * KW)
        T.copy(x, out[bx * 32, 0])
    return out


def test_an_eager_constant_given_by_an_alias_in_an_annotation():
    x = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    np.testing.assert_array_equal(window_sums(x, np.zeros((3, 3), np.float32)), 9 * x)


# -- an in-place update whose new value nothing reads ------------------------------------------------

@tilelang.jit
def clamped_scales(X, block):
    M, N = T.const("M, N")
    X: T.Tensor((M, N), T.float32)
    S = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, block)) as bx:
        y = T.alloc_fragment((block, N), T.float32)
        amax = T.alloc_fragment((block,), T.float32)
        s = T.alloc_fragment((block,), T.float32)
        T.copy(X[bx * block, 0], y)
        T.reduce_absmax(y, amax, dim=1)
        for i in T.Parallel(block):
            amax[i] = T.max(amax[i], 1e-4)
            s[i] = amax[i] / 448.0
        T.copy(s, S[bx * block])
    return S


def test_an_in_place_update_nothing_reads_is_drained_after_the_old_value():
    x = np.random.default_rng(0).standard_normal((64, 128)).astype(np.float32)
    x[5] = 0.0
    # TF32 maxima (10 mantissa bits) divided by 448
    np.testing.assert_allclose(clamped_scales(x, 32), np.maximum(np.abs(x).max(1), 1e-4) / 448, rtol=2e-3)


# -- T.Persistent ------------------------------------------------------------------------------------

@tilelang.jit
def persistent_tiles(A, block, cores):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float32)
    B = T.empty((M, N), T.float32)
    with T.Kernel(cores) as core:
        a = T.alloc_fragment((block, block), T.float32)
        for bx, by in T.Persistent([T.ceildiv(M, block), T.ceildiv(N, block)], cores, core, group_size=2):
            T.copy(A[bx * block, by * block], a)
            for i, j in T.Parallel(block, block):
                a[i, j] = a[i, j] + bx * 10 + by
            T.copy(a, B[bx * block, by * block])
    return B


@pytest.mark.parametrize("cores", [3, 4])
def test_persistent_visits_every_block_once(cores):
    a = np.zeros((96, 160), np.float32)
    want = np.add.outer(np.arange(96) // 32 * 10, np.arange(160) // 32).astype(np.float32)
    np.testing.assert_array_equal(persistent_tiles(a, 32, cores), want)


# -- element loops written with T.serial / range ----------------------------------------------------

@tilelang.jit(out_idx=[-1])
def doubled_in_bounds(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, 32)) as (bx, by):
            for i in T.serial(32):
                for j in range(32):
                    row = by * 32 + i
                    col = bx * 32 + j
                    if row < M and col < N:
                        B[row, col] = A[row, col] * 2.0

    return main


def rows_of_a_vector(N, M):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N // M, M), "float32")):
        with T.Kernel(1) as _:
            flat = T.alloc_shared((N,), "float32")
            for i in range(N):
                flat[i] = A[i]
            rows = T.reshape(flat, [N // M, M])
            for i in range(N // M):
                for j in range(M):
                    B[i, j] = rows[i, j]

    return main


def test_serial_element_loops_run_as_one_parallel_block():
    a = np.random.default_rng(2).standard_normal((64, 96)).astype(np.float32)
    np.testing.assert_array_equal(doubled_in_bounds(64, 96)(a), 2 * a)
    x = np.arange(1024, dtype=np.float32)
    np.testing.assert_array_equal(tilelang.compile(rows_of_a_vector(1024, 32), out_idx=-1)(x), x.reshape(32, 32))


@tilelang.jit
def equal_to_two(data):
    N = T.const("N")
    data: T.Tensor[[N], T.int32]
    out = T.empty([N], T.int32)
    with T.Kernel(1) as _:
        for i in T.serial(N):
            cond = T.alloc_var(T.bool)
            cond = data[i] == 2
            if cond:
                out[i] = 1
            else:
                out[i] = 0
    return out


def test_a_scalar_declared_in_a_serial_element_loop_is_a_per_element_value():
    d = np.random.default_rng(4).integers(0, 4, 64).astype(np.int32)
    np.testing.assert_array_equal(equal_to_two(d), (d == 2).astype(np.int32))


def test_a_serial_loop_that_carries_a_value_is_not_made_parallel():
    @T.prim_func
    def running(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "float32")):
        with T.Kernel(1) as _:
            acc = T.alloc_fragment((32,), "float32")
            for i in T.serial(31):
                acc[i + 1] = acc[i] + A[i]  # error
            T.copy(acc, B)

    expect_error(lambda: tilelang.compile(running, out_idx=-1), KernelError, running, "fragment buffer acc")


def row_maxima_of_a_vector(N, M):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N // M,), "float32")):
        with T.Kernel(1) as _:
            staged = T.alloc_shared((N,), "float32")
            flat = T.alloc_fragment((N,), "float32")
            maxima = T.alloc_fragment((N // M,), "float32")
            for i in T.Parallel(N):
                staged[i] = A[i]
            T.copy(staged, flat)
            rows = T.reshape(flat, [N // M, M])
            T.reduce_max(rows, maxima, dim=1)
            T.copy(maxima, B)

    return main


def test_reshape_of_a_fragment_copied_from_an_element_copied_buffer():
    x = np.random.default_rng(4).standard_normal(2048).astype(np.float32)
    got = tilelang.compile(row_maxima_of_a_vector(2048, 64), out_idx=-1)(x)
    np.testing.assert_allclose(got, x.reshape(32, 64).max(1), rtol=2e-3)   # TF32 maxima


def test_kernel_source_holds_the_six_artifacts():
    import json

    files = json.loads(doubled_in_bounds(64, 64).get_kernel_source())
    assert sorted(files) == sorted(["reader.cpp", "compute.cpp", "writer.cpp", "main.cpp", "tt.plan.json",
                                    "CMakeLists.txt"])
    assert "project(" in files["CMakeLists.txt"]


# -- host Python computing a launch size ------------------------------------------------------------

@tilelang.jit
def doubled_in_groups(A, sizes, block=32):
    """The grid size is host Python over the group sizes (TileLang's grouped GEMM computes its
    block count this way): a comprehension of values known while compiling."""
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    B = T.empty((N,), T.float32)
    blocks = sum((s + block - 1) // block for s in sizes)
    firsts = [b * block for b in range(blocks)]
    with T.Kernel(len(firsts)) as bx:
        for i in T.Parallel(block):
            B[bx * block + i] = A[bx * block + i] * 2.0
    return B


def test_a_comprehension_of_compile_time_values_is_host_python():
    a = np.arange(96, dtype=np.float32)
    np.testing.assert_array_equal(doubled_in_groups(a, [32, 64]), a * 2)
    assert T.float8_e4m3 is T.float8_e4m3fn


def test_a_comprehension_over_kernel_values_is_one_clear_error():
    from tilefold.errors import TilefoldError

    @tilelang.jit
    def summed(A):
        N = T.const("N")
        A: T.Tensor((N,), T.float32)
        B = T.empty((N,), T.float32)
        with T.Kernel(1) as bx:
            total = sum(bx * k for k in range(2))
            for i in T.Parallel(N):
                B[i] = A[i] + total
        return B

    with pytest.raises(TilefoldError, match=r"a comprehension over the block index .*bx.* is not supported|"
                                            r"a comprehension over .* \(bx\) is not supported"):
        summed(np.zeros(32, np.float32))
