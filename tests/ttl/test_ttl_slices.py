"""TT-Lang slices indexed by loops and nodes: a slice that leaves the tensor for some loop or
node value is an error at the slice's line (when no runtime if guards it); guarded and in-range
slices run."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
from tilefold.codegen.cpp import emit_kernel
from tilefold.errors import DramAccessError, KernelError
from ttl_helpers import compiled, expect_error, tile_tensor, zeros


def _copy_op(cols_read, grid=(1, 1)):
    @ttl.operation(grid=grid)
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            for _ in range(cols_read):
                with x_dfb.wait() as a, y_dfb.reserve() as b:
                    b.store(a)

        @ttl.datamovement()
        def read():
            nx, _ = ttl.node(dims=2)
            for c in range(cols_read):
                with x_dfb.reserve() as blk:
                    ttl.copy(x[0, nx + c], blk).wait()  # error

        @ttl.datamovement()
        def write():
            nx, _ = ttl.node(dims=2)
            for c in range(cols_read):
                with y_dfb.wait() as blk:
                    ttl.copy(blk, y[0, c]).wait()

    return op


def _guarded_copy_op(cols_read, row=1, limit=5):
    """Copies row ``row`` of x into row 0 of y, tile by tile, each copy under ``if 2 * c < 2 * limit`` (the
    loop runs to 4, past the last column, so only the guard keeps the copy inside)."""
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            for _ in range(cols_read):
                with x_dfb.wait() as a, y_dfb.reserve() as b:
                    b.store(a)

        @ttl.datamovement()
        def read():
            for c in range(5):
                if 2 * c < 2 * limit:
                    with x_dfb.reserve() as blk:
                        ttl.copy(x[row, c], blk).wait()  # error

        @ttl.datamovement()
        def write():
            for c in range(cols_read):
                with y_dfb.wait() as blk:
                    ttl.copy(blk, y[0, c % 4]).wait()

    return op


def test_a_loop_that_runs_past_the_last_column():
    x, y = tile_tensor((32, 128), seed=1), zeros((32, 128))
    expect_error(lambda: _copy_op(5)(x, y), _copy_op, KernelError,
                 "x[...]: dimension 1 starts at tile 0 to 4", "outside the tensor (4 tiles")


def test_a_grid_wider_than_the_tensor():
    x, y = tile_tensor((32, 128), seed=1), zeros((32, 128))
    expect_error(lambda: _copy_op(1, grid=(6, 1))(x, y), _copy_op, KernelError,
                 "dimension 1 starts at tile 0 to 5")


def test_slices_within_the_tensor_run():
    x, y = tile_tensor((32, 128), seed=1), zeros((32, 128))
    _copy_op(4)(x, y)
    np.testing.assert_array_equal(ttl_to_numpy(y), ttl_to_numpy(x))


def ttl_to_numpy(t):
    import tilefold.ttnn as ttnn

    return ttnn.to_numpy(t)


def test_a_guarded_slice_past_the_last_column_is_caught_when_it_runs():
    """Under an ``if`` the front end cannot bound the column, so the copy checks it when it runs:
    tile 4 of a 4-tile-wide row would otherwise read the first tile of the next row."""
    x, y = tile_tensor((64, 128), seed=1), zeros((64, 128))
    expect_error(lambda: _guarded_copy_op(5, row=0, limit=5)(x, y), _guarded_copy_op, DramAccessError,
                 "x[...]: dimension 1 (a 1-tile slice of 4 tiles) starts at 4, outside 0..3")


def test_a_guarded_slice_inside_the_tensor_runs_and_asserts_in_the_cpp(tmp_path, check_kernel):
    x, y = tile_tensor((64, 128), seed=1), zeros((32, 128))
    op = _guarded_copy_op(4, limit=4)
    op(x, y)
    np.testing.assert_array_equal(ttl_to_numpy(y), ttl_to_numpy(x)[32:])
    program = compiled(op, x, y).program
    reader = next(k for k in program.kernels if k.name == "read")
    source = emit_kernel(reader.function)
    assert '#include "api/debug/assert.h"' in source
    assert "ASSERT(" in source and "<= 3u);" in source
    path = tmp_path / "read.cpp"
    path.write_text(source)
    [result] = check_kernel.check_kernels([(path, "reader", check_kernel.accessor_compile_args(program, reader))])
    assert result.returncode == check_kernel.ACCEPTED, result.output[-2000:]



def _squeezing_copy_op(ranged: bool):
    """Reads the (2, 2) tiles of a (1, 1, 2, 2)-tile tensor into a (2, 2) block, dropping the two
    leading dimensions (``ranged``: the first with a range ``0:1``), and writes them negated."""

    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        inp_dfb = ttl.make_dataflow_buffer_like(inp, shape=(2, 2), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(2, 2), block_count=2)

        @ttl.compute()
        def compute():
            with inp_dfb.wait() as x, out_dfb.reserve() as o:
                o.store(-x)

        @ttl.datamovement()
        def read():
            with inp_dfb.reserve() as blk:
                if ranged:
                    ttl.copy(inp[0:1, 0, 0:2, 0:2], blk).wait()  # error
                else:
                    ttl.copy(inp[0, 0, 0:2, 0:2], blk).wait()

        @ttl.datamovement()
        def write():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0:2, 0:2]).wait()

    return op


def test_dropped_leading_dimensions_take_scalar_indices():
    inp, out = tile_tensor((1, 1, 64, 64), seed=4), zeros((64, 64))
    _squeezing_copy_op(False)(inp, out)
    np.testing.assert_allclose(ttl_to_numpy(out), -ttl_to_numpy(inp)[0, 0], rtol=0.01, atol=0.01)


def test_a_range_in_a_dropped_dimension_is_an_error_at_the_users_line():
    expect_error(lambda: _squeezing_copy_op(True)(tile_tensor((1, 1, 64, 64)), zeros((64, 64))),
                 _squeezing_copy_op, KernelError,
                 "dimension 0 of the slice of inp is a range", "a dropped dimension takes a scalar index")
