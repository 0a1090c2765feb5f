"""``blk.store(expr, acc=True)``: add a block expression to what a reserved block holds (zero
when nothing was stored into it yet), e.g. a matmul accumulated over K inside the ``with`` of the
output block; run on the simulated device against numpy, C++ checked against the real headers."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import compiled, expect_error, tile_tensor, zeros


@ttl.operation(grid=(1, 1))
def matmul_acc(a, b, y):
    """y = a @ b one output tile at a time, the K tiles added into the reserved output block."""
    Mt, Kt, Nt = a.shape[0] // 32, a.shape[1] // 32, b.shape[1] // 32
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        for m in range(Mt):
            for n in range(Nt):
                for k in range(Kt):
                    with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
                        ttl.copy(a[m, k], ab).wait()
                        ttl.copy(b[k, n], bb).wait()

    @ttl.compute()
    def compute():
        for _ in range(Mt):
            for _ in range(Nt):
                with y_dfb.reserve() as yb:
                    for _ in range(Kt):
                        with a_dfb.wait() as ab, b_dfb.wait() as bb:
                            yb.store(ab @ bb, acc=True)

    @ttl.datamovement()
    def write():
        for m in range(Mt):
            for n in range(Nt):
                with y_dfb.wait() as yb:
                    ttl.copy(yb, y[m, n]).wait()


@ttl.operation(grid=(1, 1))
def sum_then_add(x, y):
    """y = x + 2 x: a store, then an accumulating store of the same block (no loop)."""
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        with x_dfb.reserve() as xb:
            ttl.copy(x[0, 0], xb).wait()

    @ttl.compute()
    def compute():
        with x_dfb.wait() as xb, y_dfb.reserve() as yb:
            yb.store(xb)
            yb.store(xb * 2.0, acc=True)

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as yb:
            ttl.copy(yb, y[0, 0]).wait()


def test_a_matmul_accumulated_over_k_in_the_reserved_block_matches_numpy():
    a, b = tile_tensor((64, 128), seed=1), tile_tensor((128, 64), seed=2)
    y = zeros((64, 64), dtype="float32")
    matmul_acc(a, b, y)
    expected = ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(b).astype(np.float64)
    # bfloat16 operands multiply exactly; the sums over K are kept in float32
    np.testing.assert_allclose(ttnn.to_numpy(y), expected, rtol=1e-5, atol=1e-4)


def test_a_bfloat16_accumulation_rounds_each_step_like_the_device():
    a, b = tile_tensor((32, 128), seed=3), tile_tensor((128, 32), seed=4)
    y = zeros((32, 32))
    matmul_acc(a, b, y)
    av, bv = ttnn.to_numpy(a).astype(np.float64), ttnn.to_numpy(b).astype(np.float64)
    expected = av @ bv
    np.testing.assert_allclose(ttnn.to_numpy(y), expected, rtol=2e-2, atol=0.2)
    assert not np.array_equal(ttnn.to_numpy(y), expected.astype(np.float32))


def test_an_accumulating_store_after_a_store_adds_to_it():
    x = tile_tensor((32, 32), seed=5)
    y = zeros((32, 32))
    sum_then_add(x, y)
    xv = ttnn.to_numpy(x)
    np.testing.assert_allclose(ttnn.to_numpy(y), 3 * xv, rtol=1e-2, atol=1e-2)


def test_an_accumulating_store_into_a_waited_block_names_the_users_line():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as xb:
                ttl.copy(x[0, 0], xb).wait()

        @ttl.compute()
        def compute():
            with x_dfb.wait() as xb, y_dfb.reserve() as yb:
                xb.store(xb * 2.0, acc=True)  # error
                yb.store(xb)

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as yb:
                ttl.copy(yb, y[0, 0]).wait()

    expect_error(lambda: op(tile_tensor((32, 32)), zeros((32, 32))), test_an_accumulating_store_into_a_waited_block_names_the_users_line,
                 KernelError, "obtained with wait()")


def test_store_acc_compiles_against_the_real_compute_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    program = compiled(matmul_acc, tile_tensor((64, 64)), tile_tensor((64, 64)), zeros((64, 64), "float32")).program
    kernel = next(k for k in program.kernels if k.name == "compute")
    path = tmp_path / "compute.cpp"
    path.write_text(emit_kernel(kernel.function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute",
                                                            check_kernel.accessor_compile_args(program, kernel)))


def test_plus_equals_into_a_block_that_holds_nothing_yet_starts_from_zero():
    """``p += a @ b`` straight after ``p = dfb.reserve()`` (TT-Lang's GEMV writes it so): as
    ``store(..., acc=True)``, the block holds zeros until then."""

    @ttl.operation(grid=(1, 1))
    def mm(a, b, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
        ttl.copy(a[0:1, 0:1], a_dfb.reserve()).wait()
        ttl.copy(b[0:1, 0:1], b_dfb.reserve()).wait()
        p = o_dfb.reserve()
        p += a_dfb.wait() @ b_dfb.wait()
        ttl.copy(o_dfb.wait(), out[0:1, 0:1]).wait()

    a, b, out = tile_tensor((32, 32), seed=1), tile_tensor((32, 32), seed=2), zeros((32, 32))
    mm(a, b, out)
    want = ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(b).astype(np.float64)
    np.testing.assert_allclose(ttnn.to_numpy(out).astype(np.float64), want, rtol=2e-2, atol=0.1)
