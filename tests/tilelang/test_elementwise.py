"""Element-wise T.Parallel bodies, reductions and row-wise softmax on the simulated device."""

import numpy as np
import pytest
from tilelang_helpers import bf16, load_example, random_bf16

import tilefold.language as T
from tilefold.run.jit import jit


def f32(x):
    return np.asarray(x, np.float32)


def block_kernel(body, M=64, N=64, inputs=1, dtype="bfloat16", out_dtype=None):
    """A kernel over one 64x64 block per core whose T.Parallel body is ``body(out, *ins, i, j)``."""
    out_dtype = out_dtype or dtype

    @T.prim_func
    def k1(A: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), out_dtype)):
        with T.Kernel(1, 1) as (bx, by):
            a = T.alloc_shared((M, N), dtype)
            y = T.alloc_fragment((M, N), out_dtype)
            T.copy(A[0, 0], a)
            for i, j in T.Parallel(M, N):
                body(y, a, i, j)
            T.copy(y, Y[0, 0])

    return k1


def test_elementwise_add_example():
    ex = load_example("elementwise")
    a, b = random_bf16((256, 512), 1), random_bf16((256, 512), 2)
    out = ex.ADD(a, b)
    np.testing.assert_array_equal(f32(out), bf16(f32(a) + f32(b)))


def test_fused_relu_example():
    ex = load_example("elementwise")
    a, b, c = (random_bf16((256, 256), s) for s in (3, 4, 5))
    out = ex.FUSED(a, b, c)
    # DST holds bfloat16, so the product is rounded before the add, as on the device
    ref = np.maximum(bf16(bf16(f32(a) * f32(b)) + f32(c)), 0)
    np.testing.assert_array_equal(f32(out), ref)


def test_seed_style_tile_add_on_globals():
    ex = load_example("elementwise")
    a, b = random_bf16((256, 256), 6), random_bf16((256, 256), 7)
    out = jit(ex.add_tiles)(a, b)
    np.testing.assert_array_equal(f32(out), bf16(f32(a) + f32(b)))


def test_softmax_example():
    ex = load_example("softmax")
    x = random_bf16((256, 256), 8, scale=3.0)
    y = f32(ex.SOFTMAX(x))
    ref = ex.reference(x)
    np.testing.assert_allclose(y, ref, rtol=1e-2, atol=2e-3)
    np.testing.assert_allclose(y.sum(axis=1), 1.0, atol=2e-2)


def test_row_standardize_example_streams_near_the_dram_roofline():
    """Four blocks of rows per core overlap reads, compute and writes: the per-row values the
    example writes inside its loops over the block are computed once per block by the compiler
    (hoist-vector-values), so the kernel is not compute-bound."""
    _, err, seconds, roofline = load_example("row_standardize").main(M=8192, N=256)
    assert err < 0.05 and roofline / seconds >= 0.75


def test_row_standardize_example():
    y, err, seconds, roofline = load_example("row_standardize").main(M=256, N=128)
    assert err < 0.05
    assert np.abs(y.mean(axis=1)).max() < 0.03 and np.abs(y.std(axis=1) - 1).max() < 0.03
    assert 0 < roofline < seconds


def test_scalar_forms():
    def body(y, a, i, j):
        y[i, j] = (3.0 - a[i, j] * 2.0) / 4.0 + 1.0

    x = random_bf16((64, 64), 9)
    out = jit(block_kernel(body, dtype="float32"))(f32(x))
    np.testing.assert_allclose(out, (3.0 - f32(x) * 2.0) / 4.0 + 1.0, rtol=1e-6)


def test_reciprocal_exp_and_square():
    def body(y, a, i, j):
        y[i, j] = 1.0 / (1.0 + T.exp(-a[i, j])) + a[i, j] ** 2

    x = f32(random_bf16((64, 64), 10))
    out = jit(block_kernel(body, dtype="float32"))(x)
    np.testing.assert_allclose(out, 1.0 / (1.0 + np.exp(-x)) + x * x, rtol=1e-5, atol=1e-6)


def test_compare_and_select():
    def body(y, a, i, j):
        y[i, j] = T.if_then_else(a[i, j] > 0.5, a[i, j] * 3.0, T.min(a[i, j], -1.0))

    x = f32(random_bf16((64, 64), 11))
    out = jit(block_kernel(body, dtype="float32"))(x)
    np.testing.assert_allclose(out, np.where(x > 0.5, x * 3.0, np.minimum(x, -1.0)), rtol=1e-6)


def test_value_used_twice_stays_in_dst():
    def body(y, a, i, j):
        t = T.exp(a[i, j])
        y[i, j] = t * t + T.sqrt(T.abs(a[i, j]))

    x = f32(random_bf16((64, 64), 12))
    out = jit(block_kernel(body, dtype="float32"))(x)
    np.testing.assert_allclose(out, np.exp(x) ** 2 + np.sqrt(np.abs(x)), rtol=1e-5)


def test_column_reduce_and_row_broadcast():
    """dim=0 reduces down the columns into a row vector, indexed v[j] in T.Parallel."""
    @T.prim_func
    def center(X: T.Tensor((64, 96), "float32"), Y: T.Tensor((64, 96), "float32")):
        with T.Kernel(1) as bx:
            x = T.alloc_shared((64, 96), "float32")
            s = T.alloc_fragment((96,), "float32")
            y = T.alloc_fragment((64, 96), "float32")
            T.copy(X[0, 0], x)
            T.reduce_sum(x, s, dim=0)
            for i, j in T.Parallel(64, 96):
                y[i, j] = x[i, j] - s[j] * (1.0 / 64)
            T.copy(y, Y[0, 0])

    x = f32(random_bf16((64, 96), 13))
    out = jit(center)(x)
    # the broadcast passes the float32 sums through the FPU's TF32 source registers
    np.testing.assert_allclose(out, x - x.sum(axis=0) / 64, rtol=1e-3, atol=2e-4)


def test_vector_ops_fill_and_running_max():
    """A 1-D T.Parallel on vectors, T.fill, and T.reduce_max(clear=False) onto a filled vector."""
    @T.prim_func
    def rowstats(X: T.Tensor((32, 64), "float32"), Y: T.Tensor((32, 64), "float32")):
        with T.Kernel(1) as bx:
            x = T.alloc_shared((32, 64), "float32")
            m = T.alloc_fragment((32,), "float32")
            r = T.alloc_fragment((32,), "float32")
            y = T.alloc_fragment((32, 64), "float32")
            T.copy(X[0, 0], x)
            T.fill(m, 0.25)
            T.reduce_max(x, m, dim=1, clear=False)
            for i in T.Parallel(32):
                r[i] = m[i] * 2.0
            for i, j in T.Parallel(32, 64):
                y[i, j] = x[i, j] + r[i]
            T.copy(y, Y[0, 0])

    x = f32(random_bf16((32, 64), 14))
    out = jit(rowstats)(x)
    ref = x + 2.0 * np.maximum(x.max(axis=1, keepdims=True), 0.25)
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def test_local_copy_and_two_outputs():
    @T.prim_func
    def two(A: T.Tensor((64, 64), "bfloat16"), Y: T.Tensor((64, 64), "bfloat16"), Z: T.Tensor((64, 64), "float32")):
        with T.Kernel(1) as bx:
            a = T.alloc_shared((64, 64), "bfloat16")
            t = T.alloc_fragment((64, 64), "float32")
            y = T.alloc_fragment((64, 64), "bfloat16")
            T.copy(A[0, 0], a)
            for i, j in T.Parallel(64, 64):
                t[i, j] = a[i, j] * 0.5
            T.copy(t, y)
            T.copy(t, Z[0, 0])
            T.copy(y, Y[0, 0])

    x = random_bf16((64, 64), 15)
    y, z = jit(two)(x)
    np.testing.assert_array_equal(f32(y), bf16(f32(x) * 0.5))
    np.testing.assert_array_equal(z, f32(x) * 0.5)


def test_in_place_element_update_of_a_fragment():
    @T.prim_func
    def twice(A: T.Tensor((64, 64), "float32"), Y: T.Tensor((64, 64), "float32")):
        with T.Kernel(1) as bx:
            a = T.alloc_shared((64, 64), "float32")
            y = T.alloc_fragment((64, 64), "float32")
            T.copy(A[0, 0], a)
            for i, j in T.Parallel(64, 64):
                y[i, j] = a[i, j] + 1.0
            for i, j in T.Parallel(64, 64):
                y[i, j] = y[i, j] * y[i, j]
            T.copy(y, Y[0, 0])

    x = f32(random_bf16((64, 64), 16))
    np.testing.assert_allclose(jit(twice)(x), (x + 1.0) ** 2, rtol=1e-6)


@pytest.mark.parametrize("fn, ref", [("sigmoid", lambda x: 1 / (1 + np.exp(-x))), ("tanh", np.tanh),
                                     ("exp2", np.exp2), ("floor", np.floor)])
def test_unary_functions(fn, ref):
    def body(y, a, i, j):
        y[i, j] = getattr(T, fn)(a[i, j])

    kernel = block_kernel(body, dtype="float32")
    # the builder reads getattr(T, fn) from the body's closure
    x = f32(random_bf16((64, 64), 17))
    np.testing.assert_allclose(jit(kernel)(x), ref(x), rtol=1e-5, atol=1e-6)


def test_a_grid_that_leaves_blocks_of_the_output_unwritten():
    """A grid of M // 64 blocks for M = 200 computes rows 0..191: the last block row of Y would hold
    whatever DRAM held. The padding rows past 200 may stay unwritten; rows 192..199 may not."""
    import tilefold
    from tilefold.errors import UnwrittenOutputError
    from tilelang_helpers import marked_line

    @T.prim_func
    def short_grid(A: T.Tensor((200, 64), "bfloat16"), Y: T.Tensor((200, 64), "bfloat16")):
        with T.Kernel(1, 200 // 64) as (bx, by):
            a = T.alloc_shared((64, 64), "bfloat16")
            y = T.alloc_fragment((64, 64), "bfloat16")
            T.copy(A[by * 64, 0], a)
            for i, j in T.Parallel(64, 64):
                y[i, j] = a[i, j] * 2
            T.copy(y, Y[by * 64, 0])

    with pytest.raises(UnwrittenOutputError) as err:
        tilefold.jit(short_grid)(random_bf16((200, 64), 3))  # error
    assert str(err.value).startswith(f"{__file__}:{marked_line(test_a_grid_that_leaves_blocks_of_the_output_unwritten)}")
    assert "output buffer 'Y': pages 12-13 of its 14 pages were never written" in str(err.value)


def test_kernels_that_read_no_input():
    """Kernels that only write (a fill, constant element stores) compile without a reader."""
    @jit(out_idx=-1)
    def fill_inf(dtype):
        @T.prim_func
        def main(A: T.Tensor((32,), dtype)):
            with T.Kernel(1, threads=32):
                T.fill(A, T.infinity(dtype))

        return main

    assert np.all(f32(fill_inf("float16")()) == np.inf)

    @jit
    def ones(N, block):
        @T.prim_func
        def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
            with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
                for lane in T.Parallel(block):
                    A[bx * block + lane] = B[bx * block + lane] = 1

        return main

    a, b = np.zeros(128, np.float32), np.zeros(128, np.float32)
    ones(128, 64)(a, b)
    np.testing.assert_array_equal(a, 1)
    np.testing.assert_array_equal(b, 1)


def test_bounds_checks_that_always_hold_are_folded():
    """`if row < M and col < N` over blocks that tile the tensor exactly holds everywhere: no
    mask is computed, so a body of three atomic updates fits DST."""
    @jit
    def orders(M, N, bm, bn):
        @T.prim_func
        def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"),
                 C: T.Tensor((M, N), "float32"), D: T.Tensor((M, N), "float32")):
            with T.Kernel(T.ceildiv(M, bm), T.ceildiv(N, bn)) as (bx, by):
                for i, j in T.Parallel(bm, bn):
                    r = bx * bm + i
                    c = by * bn + j
                    if r < M and c < N:
                        val = A[r, c]
                        T.atomic_add(B[r, c], val)
                        T.atomic_max(C[r, c], val)
                        T.atomic_min(D[r, c], val)

        return main

    a = np.random.default_rng(5).standard_normal((64, 64)).astype(np.float32)
    b, c, d = (np.zeros((64, 64), np.float32) for _ in range(3))
    kernel = orders(64, 64, 32, 32)
    kernel(a, b, c, d)
    np.testing.assert_allclose(b, a, atol=1e-2)
    np.testing.assert_allclose(c, np.maximum(a, 0), atol=1e-2)
    np.testing.assert_allclose(d, np.minimum(a, 0), atol=1e-2)
    compute = kernel.compiled.kernel_sources()["compute.cpp"]
    assert "unary_lt_tile" not in compute and "ltz_tile" not in compute


def test_bounds_checks_that_may_fail_stay_masks():
    """The same check with a partial last block is a mask; a serial loop's range is known too."""
    @T.prim_func
    def k(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32")):
        with T.Kernel(2) as bx:
            y = T.alloc_fragment((32, 64), "float32")
            for i, j in T.Parallel(32, 64):
                r = bx * 32 + i
                y[i, j] = T.if_then_else(r < 40, A[r, j] * 2.0, 0.0)
            for s in T.serial(1, 3):
                if s >= 1:
                    for i, j in T.Parallel(32, 64):
                        y[i, j] = y[i, j] + 1.0
            T.copy(y, B[bx * 32, 0])

    a = np.random.default_rng(6).standard_normal((64, 64)).astype(np.float32)
    want = np.where(np.arange(64)[:, None] < 40, a * 2, 0) + 2
    np.testing.assert_allclose(jit(k)(a), want, atol=2e-2)


def test_values_folded_into_a_vector_in_t_parallel_are_reductions():
    """`acc[i] += a[i, j] * x[j]` (a T.alloc_reducer's use), `cmax[j] = T.max(cmax[j], a[i, j])`,
    `cmin[i] = T.min(...)` and `s[0] += ...` over T.Parallel fold with reduce_tile."""
    @jit(out_idx=[2, 3, 4, 5])
    def folds(M, N, bm, bn):
        @T.prim_func
        def main(a: T.Tensor((M, N), "float32"), x: T.Tensor((N,), "float32"), o: T.Tensor((M,), "float32"),
                 cmax: T.Tensor((N,), "float32"), rmin: T.Tensor((M,), "float32"), total: T.Tensor((1,), "float32")):
            with T.Kernel(1) as bx:
                acc = T.alloc_reducer(M, "float32", replication="all")
                mx = T.alloc_fragment((N,), "float32")
                mn = T.alloc_fragment((M,), "float32")
                s = T.alloc_fragment((1,), "float32")
                T.clear(acc)
                T.fill(mx, -T.infinity("float32"))
                T.fill(mn, T.infinity("float32"))
                T.clear(s)
                for ko in T.serial(N // bn):
                    a_s = T.alloc_shared((M, bn), "float32")
                    x_f = T.alloc_fragment((bn,), "float32")
                    T.copy(a[0, ko * bn], a_s)
                    T.copy(x[ko * bn], x_f)
                    for i, j in T.Parallel(M, bn):
                        acc[i] += a_s[i, j] * x_f[j]
                    for i, j in T.Parallel(M, bn):
                        mn[i] = T.min(mn[i], a_s[i, j])
                for i, j in T.Parallel(M, N):
                    mx[j] = T.max(a[i, j], mx[j])
                for j in T.Parallel(N):
                    s[0] += x[j]
                T.finalize_reducer(acc)
                T.copy(acc, o)
                T.copy(mx, cmax)
                T.copy(mn, rmin)
                T.copy(s, total)

        return main

    rng = np.random.default_rng(8)
    a = rng.standard_normal((64, 128)).astype(np.float32)
    x = rng.standard_normal(128).astype(np.float32)
    o, cmax, rmin, total = folds(64, 128, 64, 64)(a, x)
    af, xf = f32(bf16(a)), f32(bf16(x))
    np.testing.assert_allclose(o, af @ xf, atol=0.05 * np.abs(af @ xf).max())
    np.testing.assert_allclose(cmax, a.max(0), atol=2e-2)
    np.testing.assert_allclose(rmin, a.min(1), atol=2e-2)
    np.testing.assert_allclose(total, [x.sum()], atol=0.1)


def test_grids_of_one_kernel_run_in_order_through_a_scratch_tensor():
    """Two `with T.Kernel` grids passing data through T.alloc_global run one after the other;
    the scratch tensor is neither an argument nor a result."""
    @jit(out_idx=-1)
    def two(M, N, bm):
        @T.prim_func
        def main(a: T.Tensor((M, N), "float32"), o: T.Tensor((M, N), "float32")):
            tmp = T.alloc_global((M, N), "float32")
            with T.Kernel(M // bm) as bx:
                s = T.alloc_shared((bm, N), "float32")
                T.copy(a[bx * bm, 0], s)
                for i, j in T.Parallel(bm, N):
                    s[i, j] = s[i, j] * 2.0
                T.copy(s, tmp[bx * bm, 0])
            with T.Kernel(M // bm) as bx:
                s = T.alloc_shared((bm, N), "float32")
                T.copy(tmp[(M // bm - 1 - bx) * bm, 0], s)   # another block's rows: after the first grid
                for i, j in T.Parallel(bm, N):
                    s[i, j] = s[i, j] + 1.0
                T.copy(s, o[bx * bm, 0])

        return main

    a = np.random.default_rng(9).standard_normal((64, 64)).astype(np.float32)
    kernel = two(64, 64, 32)
    want = np.concatenate([a[32:], a[:32]]) * 2 + 1
    np.testing.assert_allclose(kernel(a), want, atol=3e-2)
    assert "grid1/compute.cpp" in kernel.compiled.artifacts(kernel_only=True)

