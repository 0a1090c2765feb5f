"""Element-wise T.Parallel bodies, reductions and row-wise softmax on the simulated device."""

import numpy as np
import pytest
from tilelang_helpers import bf16, load_example, random_bf16

import tilefold.language as T
from tilefold.frontend.tilelang.jit import jit


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
