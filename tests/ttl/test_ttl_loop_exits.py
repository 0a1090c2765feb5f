"""``break`` and ``continue`` in kernel loops: a loop that leaves early runs on the simulated
device as one that skips the rest of its iterations, against numpy."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import recorded_programs, tile_tensor, zeros

ROWS_PER_NODE = 3


@ttl.operation(grid=(2, 1))
def uneven_rows(x, y):
    """Two nodes of three rows each over five rows: the second node's loops stop at the end of
    the tensor with ``break``; odd rows are doubled and ``continue`` before the even rows' +1."""
    rows = x.shape[0] // ttl.TILE_SIZE
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        first = ttl.node(dims=1) * ROWS_PER_NODE
        for i in range(ROWS_PER_NODE):
            r = first + i
            if r >= rows:
                break
            with x_dfb.wait() as a, y_dfb.reserve() as out:
                if r % 2 == 1:
                    out.store(a * 2.0)
                    continue
                out.store(a + 1.0)

    @ttl.datamovement()
    def read():
        first = ttl.node(dims=1) * ROWS_PER_NODE
        for i in range(ROWS_PER_NODE):
            r = first + i
            if r >= rows:
                break
            with x_dfb.reserve() as a:
                ttl.copy(x[r, 0], a).wait()

    @ttl.datamovement()
    def write():
        first = ttl.node(dims=1) * ROWS_PER_NODE
        for i in range(ROWS_PER_NODE):
            r = first + i
            if r < rows:
                with y_dfb.wait() as out:
                    ttl.copy(out, y[r, 0]).wait()
            else:
                break


def test_break_and_continue_in_kernel_loops():
    x = tile_tensor((160, 32), seed=11)
    y = zeros((160, 32))
    uneven_rows(x, y)
    v = ttnn.to_numpy(x).astype(np.float32).reshape(5, 32, 32)
    expected = np.where((np.arange(5) % 2 == 1)[:, None, None], v * 2.0, v + 1.0).reshape(160, 32)
    np.testing.assert_allclose(ttnn.to_numpy(y).astype(np.float32), expected, rtol=1e-2, atol=2e-2)


@ttl.operation(grid=(1, 1))
def first_columns(x, y):
    """A ``break`` of an inner loop leaves only that loop: each row copies its first
    ``row + 1`` tiles; the rest of ``y`` keeps its zeros."""
    rows = x.shape[0] // ttl.TILE_SIZE
    cols = x.shape[1] // ttl.TILE_SIZE
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for r in range(rows):
            for c in range(cols):
                if c > r:
                    break
                with x_dfb.wait() as a, y_dfb.reserve() as out:
                    out.store(a)

    @ttl.datamovement()
    def read():
        for r in range(rows):
            for c in range(cols):
                if c > r:
                    break
                with x_dfb.reserve() as a:
                    ttl.copy(x[r, c], a).wait()

    @ttl.datamovement()
    def write():
        for r in range(rows):
            for c in range(cols):
                if c <= r:
                    with y_dfb.wait() as out:
                        ttl.copy(out, y[r, c]).wait()
                else:
                    break


def test_break_leaves_only_its_own_loop():
    x = tile_tensor((96, 96), seed=12)
    y = zeros((96, 96))
    first_columns(x, y)
    v = ttnn.to_numpy(x).astype(np.float32)
    keep = np.kron(np.tril(np.ones((3, 3))), np.ones((32, 32)))
    np.testing.assert_array_equal(ttnn.to_numpy(y).astype(np.float32), v * keep)


def test_kernels_with_break_and_continue_compile_against_the_real_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    with recorded_programs() as programs:
        uneven_rows(tile_tensor((160, 32), seed=13), zeros((160, 32)))
    program = programs[0]
    compute = next(k for k in program.kernels if k.is_compute)
    path = tmp_path / "compute.cpp"
    path.write_text(emit_kernel(compute.function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))
    reader = next(k for k in program.kernels if k.name == "read")
    path = tmp_path / "read.cpp"
    path.write_text(emit_kernel(reader.function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader", check_kernel.accessor_compile_args(
        program, reader)))
