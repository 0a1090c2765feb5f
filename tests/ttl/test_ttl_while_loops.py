"""``while`` loops in kernels: runtime tests on integers that the body changes, with ``break`` and
``continue``, block accumulation inside them; run on the simulated device against numpy, their C++
checked against the real headers, and the mistakes reported at the user's line."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error, recorded_programs, tile_tensor, zeros


@ttl.operation(grid=(2, 1))
def strided_rows(x, y):
    """Each of two nodes takes every other row: a counted ``while`` in the compute kernel, a
    ``while True`` left with ``break`` in the reader, a two-part test with ``continue`` in the
    writer."""
    rows = x.shape[0] // ttl.TILE_SIZE
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        r = ttl.node(dims=1)
        while r < rows:
            with x_dfb.wait() as a, y_dfb.reserve() as out:
                out.store(a * 2.0 + 1.0)
            r += 2

    @ttl.datamovement()
    def read():
        r = ttl.node(dims=1)
        while True:
            if r >= rows:
                break
            with x_dfb.reserve() as a:
                ttl.copy(x[r, 0], a).wait()
            r = r + 2

    @ttl.datamovement()
    def write():
        r = ttl.node(dims=1)
        visits = 0
        while r < rows and visits < 100:
            visits += 1
            if r < 0:
                r += 2
                continue
            with y_dfb.wait() as out:
                ttl.copy(out, y[r, 0]).wait()
            r += 2


def test_while_loops_with_break_and_continue_run_against_numpy():
    x = tile_tensor((160, 32), seed=21)
    y = zeros((160, 32))
    strided_rows(x, y)
    v = ttnn.to_numpy(x).astype(np.float32)
    np.testing.assert_allclose(ttnn.to_numpy(y).astype(np.float32), v * 2.0 + 1.0, rtol=1e-2, atol=2e-2)


@ttl.operation(grid=(1, 1))
def row_sums(x, y):
    """The sum of each row of tiles, accumulated in nested ``while`` loops: into a reserved block
    (``out += a``) and into a name holding an expression (``acc = acc + a``)."""
    rows = x.shape[0] // ttl.TILE_SIZE
    cols = x.shape[1] // ttl.TILE_SIZE
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        r = 0
        while r < rows:
            if r % 2 == 0:
                with y_dfb.reserve() as out:
                    c = 0
                    while c < cols:
                        with x_dfb.wait() as a:
                            out += a
                        c += 1
            else:
                with x_dfb.wait() as first:
                    acc = first * 1.0
                c = 1
                while c < cols:
                    with x_dfb.wait() as a:
                        acc = acc + a
                    c += 1
                with y_dfb.reserve() as out:
                    out.store(acc)
            r += 1

    @ttl.datamovement()
    def read():
        r = 0
        while r < rows:
            c = 0
            while c < cols:
                with x_dfb.reserve() as a:
                    ttl.copy(x[r, c], a).wait()
                c += 1
            r += 1

    @ttl.datamovement()
    def write():
        for r in range(rows):
            with y_dfb.wait() as out:
                ttl.copy(out, y[r, 0]).wait()


def test_blocks_accumulate_in_nested_while_loops():
    x = tile_tensor((96, 128), seed=22)
    y = zeros((96, 32))
    row_sums(x, y)
    v = ttnn.to_numpy(x).astype(np.float32).reshape(3, 32, 4, 32).sum(axis=2).reshape(96, 32)
    np.testing.assert_allclose(ttnn.to_numpy(y).astype(np.float32), v, rtol=2e-2, atol=6e-2)


def test_while_loops_compile_against_the_real_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    with recorded_programs() as programs:
        strided_rows(tile_tensor((160, 32), seed=23), zeros((160, 32)))
        row_sums(tile_tensor((64, 64), seed=24), zeros((64, 32)))
    checks = []
    for program in programs:
        for kernel in program.kernels:
            text = emit_kernel(kernel.function)
            assert "while (" in text or kernel.name == "write" and "for (" in text
            path = tmp_path / f"{kernel.name}_{len(checks)}.cpp"
            path.write_text(text)
            kind = "compute" if kernel.is_compute else ("reader" if kernel.name == "read" else "writer")
            args = None if kernel.is_compute else check_kernel.accessor_compile_args(program, kernel)
            checks.append(check_kernel.check_kernel(path, kind, *([args] if args else [])))
    for result in checks:
        check_kernel.require_accepted(result)


def _tensors():
    return tile_tensor((64, 32), seed=25), zeros((64, 32))


def test_a_while_loop_whose_test_is_always_true():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            while True:  # error
                with x_dfb.reserve() as a:
                    ttl.copy(x[0, 0], a).wait()

    expect_error(lambda: op(*_tensors()), test_a_while_loop_whose_test_is_always_true, KernelError,
                 "never ends", "always true")


def test_a_while_loop_whose_body_changes_nothing_its_test_reads():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        rows = x.shape[0] // ttl.TILE_SIZE
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            r = ttl.node(dims=1)
            n = 0
            while r < rows:  # error
                n += 1
                with x_dfb.reserve() as a:
                    ttl.copy(x[0, 0], a).wait()

    expect_error(lambda: op(*_tensors()), test_a_while_loop_whose_body_changes_nothing_its_test_reads, KernelError,
                 "never ends once entered", "r < rows")


def test_a_while_loop_that_keeps_a_block():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        rows = x.shape[0] // ttl.TILE_SIZE
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            r = 0
            while r < rows:
                a = x_dfb.reserve()
                ttl.copy(x[r, 0], a).wait()
                if r == 0:  # error
                    a.push()
                r += 1

    expect_error(lambda: op(*_tensors()), test_a_while_loop_that_keeps_a_block, KernelError,
                 "pushed by one branch of this if only, inside a loop")


@ttl.operation(grid=(2, 1))
def last_row_twice(x, y):
    """Node n copies rows n, n + 2, ... with a ``while`` loop left by ``break`` on the last node's
    second row; a loop that ends without a break then copies row 0 again in its ``else``."""
    rows = x.shape[0] // ttl.TILE_SIZE
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def read():
        n = ttl.node(dims=1)
        r = n
        while r < rows:
            if n == 1 and r == 3:
                break
            with x_dfb.reserve() as a:
                ttl.copy(x[r, 0], a).wait()
            r += 2
        else:
            with x_dfb.reserve() as a:
                ttl.copy(x[0, 0], a).wait()

    @ttl.datamovement()
    def write():
        n = ttl.node(dims=1)
        count = 3 - 2 * n            # node 0: rows 0 and 2 and the else's; node 1: row 1, then the break
        for i in range(count):
            with x_dfb.wait() as a:
                ttl.copy(a, y[n, i]).wait()


def test_while_else_runs_when_no_break_left_the_loop():
    x, y = tile_tensor((128, 32), seed=22), zeros((64, 96))
    last_row_twice(x, y)
    t = ttnn.to_numpy(x).reshape(4, 32, 32)
    out = ttnn.to_numpy(y).reshape(2, 32, 3, 32)
    np.testing.assert_array_equal(out[0].transpose(1, 0, 2), t[[0, 2, 0]])   # rows 0, 2, then the else's row 0
    np.testing.assert_array_equal(out[1, :, 0], t[1])                          # row 1, then break


@ttl.operation(grid=(1, 1))
def while_matmul(a, b, out):
    """A K loop written as ``while``: ``o += x @ y`` accumulates into a reserved block."""
    k_tiles = a.shape[1] // ttl.TILE_SIZE
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(2, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 2), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(2, 2), block_count=1)

    @ttl.compute()
    def compute():
        with o_dfb.reserve() as o:
            k = 0
            while k < k_tiles:
                with a_dfb.wait() as x, b_dfb.wait() as y:
                    o += x @ y
                k += 1

    @ttl.datamovement()
    def read():
        k = 0
        while k < k_tiles:
            with a_dfb.reserve() as x, b_dfb.reserve() as y:
                ttl.copy(a[0:2, k], x).wait()
                ttl.copy(b[k, 0:2], y).wait()
            k += 1

    @ttl.datamovement()
    def write():
        with o_dfb.wait() as o:
            ttl.copy(o, out[0:2, 0:2]).wait()


def test_a_matmul_accumulates_over_a_while_loop():
    a, b = tile_tensor((64, 128), seed=26), tile_tensor((128, 64), seed=27)
    out = zeros((64, 64))
    while_matmul(a, b, out)
    want = ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(b).astype(np.float64)
    np.testing.assert_allclose(ttnn.to_numpy(out).astype(np.float64), want, rtol=2 ** -7, atol=0.3)


@ttl.operation(grid=(1, 1))
def tripled_in_one_body(x, y):
    """An operation body without kernel functions: the ``while`` loop goes to every kernel with its
    own statements, the counter's start ``i = 0`` with it."""
    rows = x.shape[0] // ttl.TILE_SIZE
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
    i = 0
    while i < rows:
        ttl.copy(x[i, 0], x_dfb.reserve()).wait()
        o = y_dfb.reserve()
        o.store(x_dfb.wait() * 3.0)
        ttl.copy(y_dfb.wait(), y[i, 0]).wait()
        i += 1


def test_a_while_loop_in_a_body_without_kernel_functions():
    x, y = tile_tensor((96, 32), seed=28), zeros((96, 32))
    tripled_in_one_body(x, y)
    np.testing.assert_allclose(ttnn.to_numpy(y).astype(np.float32), ttnn.to_numpy(x).astype(np.float32) * 3.0,
                               rtol=1e-2, atol=2e-2)


@ttl.operation(grid=(1, 1))
def spins_forever(x, y):
    """A ``while`` loop whose test reads what the body changes, but never turns false."""
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        n = 0
        while n != 7:  # error
            n += 2
        with x_dfb.reserve() as a:
            ttl.copy(x[0, 0], a).wait()

    @ttl.compute()
    def compute():
        with x_dfb.wait():
            pass


def test_a_while_loop_spinning_without_device_calls_is_a_runaway_at_its_line(monkeypatch):
    from tilefold.errors import WatchdogError
    from tilefold.sim import context

    monkeypatch.setattr(context, "MAX_IDLE_STEPS", 1000)      # the default takes seconds to reach
    expect_error(lambda: spins_forever(zeros((32, 32)), zeros((32, 32))), spins_forever.function, WatchdogError,
                 "a while loop ran 1000 iterations in a row without calling the device")
