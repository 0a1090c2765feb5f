"""Loops written with counters, as TT-Lang programs write them: ``range()`` counting down (a
negative step, or ``reversed(range(...))``; compile-time or runtime bounds), and slices ``a[r, i:i + 1]`` of an integer the
loop itself changes (``i = i + 1`` in a ``while`` or ``for``) — loads of a variable with no store
between them are the same value, so the extent is known. Run on the simulated device against
numpy; the C++ through ``check-kernel``."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error, recorded_programs, tile_tensor, zeros


@ttl.operation(grid=(2, 1))
def reversed_rows(x, y):
    """Node n reverses the tile columns of row n: its reader walks them down from the last
    (runtime bounds from the node), its writer up with a while loop and a counter."""
    cols = x.shape[1] // ttl.TILE_SIZE
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for _ in reversed(range(ttl.node(dims=1) * 0, cols)):       # runtime bounds
            with x_dfb.wait() as a, y_dfb.reserve() as out:
                out.store(a + 1.0)

    @ttl.datamovement()
    def read():
        row = ttl.node(dims=1)
        last = row * 0 + cols - 1                  # a runtime bound
        for c in range(last, row - row - 1, -1):
            with x_dfb.reserve() as a:
                ttl.copy(x[row, c:c + 1], a).wait()

    @ttl.datamovement()
    def write():
        row = ttl.node(dims=1)
        i = 0
        while i < cols:
            with y_dfb.wait() as out:
                ttl.copy(out, y[row:row + 1, i:i + 1]).wait()
            i = i + 1


def test_loops_counting_down_and_counter_slices():
    x = tile_tensor((64, 96), seed=21)
    y = zeros((64, 96))
    reversed_rows(x, y)
    v = ttnn.to_numpy(x).astype(np.float32).reshape(2, 32, 3, 32)
    expected = (v[:, :, ::-1, :] + 1.0).reshape(64, 96)
    np.testing.assert_allclose(ttnn.to_numpy(y).astype(np.float32), expected, rtol=1e-2, atol=2e-2)


@ttl.operation(grid=(1, 1))
def every_other(x, y):
    """Copies tiles 4, 2, 0 of one row (``reversed(range(0, 5, 2))``) to tiles 0, 1, 2,
    with the destination counter ``j = j + 1`` of a ``for`` loop."""
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(3):
            with x_dfb.wait() as a, y_dfb.reserve() as out:
                out.store(a)

    @ttl.datamovement()
    def read():
        for c in reversed(range(0, 5, 2)):
            with x_dfb.reserve() as a:
                ttl.copy(x[0, c], a).wait()

    @ttl.datamovement()
    def write():
        j = 0
        for _ in range(3):
            with y_dfb.wait() as out:
                ttl.copy(out, y[0:1, j:j + 1]).wait()
            j = j + 1


def test_a_compile_time_loop_counting_down_by_two():
    x = tile_tensor((32, 160), seed=22)
    y = zeros((32, 96))
    every_other(x, y)
    v = ttnn.to_numpy(x).astype(np.float32).reshape(32, 5, 32)
    np.testing.assert_array_equal(ttnn.to_numpy(y).astype(np.float32), v[:, [4, 2, 0], :].reshape(32, 96))


def test_counting_loops_compile_against_the_real_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    with recorded_programs() as programs:
        reversed_rows(tile_tensor((64, 96), seed=23), zeros((64, 96)))
    program = programs[0]
    for name, kind in (("read", "reader"), ("write", "writer")):
        kernel = next(k for k in program.kernels if k.name == name)
        path = tmp_path / f"{name}.cpp"
        path.write_text(emit_kernel(kernel.function))
        check_kernel.require_accepted(check_kernel.check_kernel(path, kind, check_kernel.accessor_compile_args(
            program, kernel)))


def test_a_store_between_the_loads_leaves_the_extent_unknown():
    """``s`` is read before a conditional ``i = i + 1``: ``i + 1 - s`` may be 1 or 2."""
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a:
                pass

        @ttl.datamovement()
        def read():
            i = 0
            while i < 1:
                s = i
                if ttl.node(dims=1) == 0:
                    i = i + 1
                with x_dfb.reserve() as a:
                    ttl.copy(x[0, s:i + 1], a).wait()  # error

        @ttl.datamovement()
        def write():
            pass

    expect_error(lambda: op(tile_tensor((32, 64)), zeros((32, 64))),
                 test_a_store_between_the_loads_leaves_the_extent_unknown, KernelError, "is not a compile-time number")
