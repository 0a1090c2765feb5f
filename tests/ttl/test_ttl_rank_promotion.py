"""Blocks of different rank that hold the same tiles: a 2-D value stored into a (1, M, N) block,
``a @ b`` with a 3-D left and a 2-D right operand (batch dims as torch.matmul: missing ones are
size 1, and a size-1 batch dim is broadcast), and the older ``ttl.transpose(x, out_blk)`` spelling.
Run on the simulated device against numpy; wrong shapes are one error at the user's line."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error, tile_tensor, zeros

TILE = 32


@ttl.operation(grid=(1, 1))
def batched_bias_matmul(a, b, c, y):
    """y[i] = a[i] @ b + c tile by tile: a is (I, M, K), b (K, N), c (M, N), y (I, M, N); the
    (1, 1, 1) output block starts as the (1, 1) bias tile and accumulates the K products."""
    n_i, n_m, n_k = a.shape[0], a.shape[1] // TILE, a.shape[2] // TILE
    n_n = b.shape[1] // TILE
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1, 1))
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1))
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(1, 1))
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1, 1))

    @ttl.datamovement()
    def read():
        for i in range(n_i):
            for m in range(n_m):
                for n in range(n_n):
                    with c_dfb.reserve() as cb:
                        ttl.copy(c[m, n], cb).wait()
                    for k in range(n_k):
                        with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
                            ttl.copy(a[i, m, k], ab).wait()
                            ttl.copy(b[k, n], bb).wait()

    @ttl.compute()
    def compute():
        for _ in range(n_i * n_m * n_n):
            with y_dfb.reserve() as yb:
                with c_dfb.wait() as cb:
                    yb.store(cb, acc=True)
                for _ in range(n_k):
                    with a_dfb.wait() as ab, b_dfb.wait() as bb:
                        yb.store(ab @ bb, acc=True)

    @ttl.datamovement()
    def write():
        for i in range(n_i):
            for m in range(n_m):
                for n in range(n_n):
                    with y_dfb.wait() as yb:
                        ttl.copy(yb, y[i, m, n]).wait()


def test_a_2d_bias_and_a_3d_by_2d_matmul_accumulate_into_a_3d_block():
    a = tile_tensor((2, 64, 64), seed=1)
    b = tile_tensor((64, 32), seed=2)
    c = tile_tensor((64, 32), seed=3)
    y = zeros((2, 64, 32), dtype="float32")
    batched_bias_matmul(a, b, c, y)
    av, bv, cv = (ttnn.to_numpy(t).astype(np.float64) for t in (a, b, c))
    np.testing.assert_allclose(ttnn.to_numpy(y), np.matmul(av, bv) + cv, rtol=1e-2, atol=2e-2)


def test_a_2d_right_operand_is_broadcast_over_a_batch_of_two():
    """As torch.matmul (and TT-Lang's simulator) broadcast it: each batch index times the matrix."""
    @ttl.operation(grid=(1, 1))
    def op(a, b, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(2, 1, 1), block_count=1)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=1)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(2, 1, 1), block_count=1)

        @ttl.datamovement()
        def read():
            with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
                ttl.copy(a[0:2, 0:1, 0:1], ab).wait()
                ttl.copy(b[0:1, 0:1], bb).wait()

        @ttl.compute()
        def compute():
            with a_dfb.wait() as ab, b_dfb.wait() as bb, y_dfb.reserve() as yb:
                yb.store(ab @ bb)

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as yb:
                ttl.copy(yb, y[0:2, 0:1, 0:1]).wait()

    a, b, y = tile_tensor((2, 32, 32), seed=5), tile_tensor((32, 32), seed=6), zeros((2, 32, 32))
    op(a, b, y)
    av, bv = (ttnn.to_numpy(t).astype(np.float64) for t in (a, b))
    np.testing.assert_allclose(ttnn.to_numpy(y), np.matmul(av, bv), rtol=2e-2, atol=5e-2)


def test_the_rank_promoted_matmul_compiles_against_the_real_compute_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel
    from ttl_helpers import compiled

    program = compiled(batched_bias_matmul, tile_tensor((1, 32, 64)), tile_tensor((64, 32)), tile_tensor((32, 32)),
                       zeros((1, 32, 32), dtype="float32")).program
    kernel = next(k for k in program.kernels if k.name == "compute")
    path = tmp_path / "compute.cpp"
    path.write_text(emit_kernel(kernel.function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute",
                                                            check_kernel.accessor_compile_args(program, kernel)))


@ttl.operation(grid=(1, 1))
def transpose_into(a, y):
    """y = a^T for a (1, 2) block, with the older spelling that names the output block."""
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=1)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(2, 1), block_count=1)

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as ab:
            ttl.copy(a[0:1, 0:2], ab).wait()

    @ttl.compute()
    def compute():
        with a_dfb.wait() as ab, y_dfb.reserve() as yb:
            yb.store(ttl.transpose(ab, yb))

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as yb:
            ttl.copy(yb, y[0:2, 0:1]).wait()


def test_transpose_naming_its_output_block_matches_numpy():
    a = tile_tensor((32, 64), seed=6)
    y = zeros((64, 32))
    transpose_into(a, y)
    np.testing.assert_array_equal(ttnn.to_numpy(y), ttnn.to_numpy(a).T)


def test_transpose_into_a_block_of_another_shape_is_an_error_at_the_users_line():
    @ttl.operation(grid=(1, 1))
    def op(a, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=1)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 2), block_count=1)

        @ttl.datamovement()
        def read():
            with a_dfb.reserve() as ab:
                ttl.copy(a[0:1, 0:2], ab).wait()

        @ttl.compute()
        def compute():
            with a_dfb.wait() as ab, y_dfb.reserve() as yb:
                yb.store(ttl.transpose(ab, yb))  # error

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as yb:
                ttl.copy(yb, y[0:1, 0:2]).wait()

    expect_error(lambda: op(tile_tensor((32, 64)), zeros((32, 64))),
                 test_transpose_into_a_block_of_another_shape_is_an_error_at_the_users_line,
                 KernelError, "the transpose of a 1x2 block is 2x1 but yb is 1x2")


def test_a_store_of_other_tiles_than_the_block_holds_is_still_an_error():
    @ttl.operation(grid=(1, 1))
    def op(a, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=1)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(2, 1, 1), block_count=1)

        @ttl.datamovement()
        def read():
            with a_dfb.reserve() as ab:
                ttl.copy(a[0:1, 0:2], ab).wait()

        @ttl.compute()
        def compute():
            with a_dfb.wait() as ab, y_dfb.reserve() as yb:
                yb.store(ab)  # error

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as yb:
                ttl.copy(yb, y[0:2, 0:1, 0:1]).wait()

    expect_error(lambda: op(tile_tensor((32, 64)), zeros((2, 32, 32))),
                 test_a_store_of_other_tiles_than_the_block_holds_is_still_an_error,
                 KernelError, "the expression has shape 1x2 but the block is 2x1x1")


@ttl.operation(grid=(1, 1))
def batch_of_one_into_2d(a, b, y):
    """A (1, 1, 1) @ (1, 1) product stored into a 2-D (1, 1) block: the leading size-1 dim is dropped."""
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1, 1), block_count=1)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=1)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=1)

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
            ttl.copy(a[0, 0, 0], ab).wait()
            ttl.copy(b[0, 0], bb).wait()

    @ttl.compute()
    def compute():
        with a_dfb.wait() as ab, b_dfb.wait() as bb, y_dfb.reserve() as yb:
            yb.store(ab @ bb)

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as yb:
            ttl.copy(yb, y[0, 0]).wait()


def test_a_batch_of_one_product_stores_into_a_2d_block():
    a = tile_tensor((1, 32, 32), seed=7)
    b = tile_tensor((32, 32), seed=8)
    y = zeros((32, 32))
    batch_of_one_into_2d(a, b, y)
    want = ttnn.to_numpy(a).astype(np.float64)[0] @ ttnn.to_numpy(b).astype(np.float64)
    np.testing.assert_allclose(ttnn.to_numpy(y), want, rtol=2 ** -7, atol=2 ** -4)


def test_transpose_with_more_than_an_out_block_is_an_error_at_the_users_line():
    @ttl.operation(grid=(1, 1))
    def op(a, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=1)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=1)

        @ttl.datamovement()
        def read():
            with a_dfb.reserve() as ab:
                ttl.copy(a[0, 0], ab).wait()

        @ttl.compute()
        def compute():
            with a_dfb.wait() as ab, y_dfb.reserve() as yb:
                yb.store(ttl.transpose(ab, yb, yb))  # error

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as yb:
                ttl.copy(yb, y[0, 0]).wait()

    expect_error(lambda: op(tile_tensor((32, 32)), zeros((32, 32))),
                 test_transpose_with_more_than_an_out_block_is_an_error_at_the_users_line,
                 KernelError, "takes 1 positional argument(s), got 3")
