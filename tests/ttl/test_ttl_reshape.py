"""``ttl.block.squeeze`` / ``unsqueeze``: the same tiles under a shape with dimensions of size 1
removed or added, on the simulated device against numpy, in generated C++, and their errors."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import compiled, expect_error, tile_tensor, zeros


@ttl.operation(grid=(1, 1))
def unsqueeze_broadcast_add(a, b, y):
    """``y[i] = exp(a[i]) + b`` for a 3-D ``a`` and a 2-D ``b``: b is unsqueezed to (1, R, C) and
    broadcast over the batch; the result is squeezed into a 2-D block per batch on the way out."""
    batches, rows, cols = a.shape[0], a.shape[1] // 32, a.shape[2] // 32
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(batches, rows, cols))
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(rows, cols))
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(batches, rows, cols))
    s_dfb = ttl.make_dataflow_buffer_like(b, shape=(rows, cols))

    @ttl.compute()
    def compute():
        with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, y_dfb.reserve() as y_blk:
            b3 = ttl.block.broadcast(ttl.block.unsqueeze(b_blk, dims=[0]), dims=[0], shape=(batches, rows, cols))
            y_blk.store(ttl.math.exp(a_blk) + b3)
            with s_dfb.reserve() as s_blk:
                first = ttl.block.squeeze(ttl.block.unsqueeze(ttl.math.neg(b_blk), dims=[0, -1]), dims=[-1, 0])
                s_blk.store(first)

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk:
            ttl.copy(a[0:batches, 0:rows, 0:cols], a_blk).wait()
            ttl.copy(b[0:rows, 0:cols], b_blk).wait()

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as y_blk:
            ttl.copy(y_blk, y[0:batches, 0:rows, 0:cols]).wait()
        with s_dfb.wait() as s_blk:
            ttl.copy(s_blk, y[0, 0:rows, 0:cols]).wait()


def test_unsqueeze_then_broadcast_and_squeeze_on_the_simulator():
    a = tile_tensor((2, 64, 32), seed=1, scale=0.5)
    b = tile_tensor((64, 32), seed=2)
    y = zeros((2, 64, 32))
    unsqueeze_broadcast_add(a, b, y)
    av, bv = ttnn.to_numpy(a).astype(np.float64), ttnn.to_numpy(b).astype(np.float64)
    expected = np.exp(av) + bv
    expected[0] = -bv
    np.testing.assert_allclose(ttnn.to_numpy(y), expected, rtol=0.02, atol=0.03)


@ttl.operation(grid=(1, 1))
def squeeze_store(a, y):
    """A (1, R, C) block of a 3-D tensor stored, squeezed, into a (R, C) block of a 2-D one."""
    rows, cols = a.shape[1] // 32, a.shape[2] // 32
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, rows, cols))
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(rows, cols))

    @ttl.compute()
    def compute():
        with a_dfb.wait() as a_blk, y_dfb.reserve() as y_blk:
            y_blk.store(ttl.block.squeeze(a_blk, dims=[0]) * 2.0)

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as a_blk:
            ttl.copy(a[1:2, 0:rows, 0:cols], a_blk).wait()

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as y_blk:
            ttl.copy(y_blk, y[0:rows, 0:cols]).wait()


def test_squeeze_of_a_block_is_a_view_of_its_buffer():
    a = tile_tensor((2, 32, 64), seed=3)
    y = zeros((32, 64))
    squeeze_store(a, y)
    np.testing.assert_allclose(ttnn.to_numpy(y), 2.0 * ttnn.to_numpy(a)[1], rtol=0.01, atol=0.01)
    text = compiled(squeeze_store, a, y).dumps
    assert any("ttl.reshape" in t for _, t in text)


def test_reshaped_blocks_compile_against_the_real_compute_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    a, b, y = tile_tensor((2, 64, 32), seed=1), tile_tensor((64, 32), seed=2), zeros((2, 64, 32))
    program = compiled(unsqueeze_broadcast_add, a, b, y).program
    compute = next(k for k in program.kernels if k.is_compute)
    path = tmp_path / "compute.cpp"
    path.write_text(emit_kernel(compute.function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


def _one_block(expression):
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(2, 1))
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(2, 1))

        @ttl.compute()
        def compute():
            with x_dfb.wait() as x_blk, y_dfb.reserve() as y_blk:
                y_blk.store(expression(x_blk))

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0:2, 0:1], blk).wait()

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[0:2, 0:1]).wait()

    return lambda: op(tile_tensor((64, 32)), zeros((64, 32)))


def test_squeeze_of_a_dimension_larger_than_one_names_the_users_line():
    def test():
        _one_block(lambda b: ttl.block.squeeze(b, dims=[0]))()  # error

    expect_error(test, test, KernelError, "ttl.block.squeeze: dimension 0 of a 2x1 block has 2 tiles")


def test_unsqueeze_out_of_range_names_the_users_line():
    def test():
        _one_block(lambda b: ttl.block.unsqueeze(b, dims=[3]))()  # error

    expect_error(test, test, KernelError, "ttl.block.unsqueeze: dimension 3 is out of range")
