"""Compute kernels on row-major dataflow buffers: a row-major block sits in tile-sized pages (its
rows one after another), element-wise math runs on those pages as tiles, a copy moves a part of
each row, and a one-element block broadcasts as a scalar. Layout-dependent work (matmul, reduce,
transpose, broadcasting a multi-element block, mixing layouts) is refused at the user's line.
Simulated against numpy; the kernels' C++ is checked against the real headers."""

from __future__ import annotations

import numpy as np
import pytest
from checkkernel import accessor_compile_args, check_kernels, require_accepted

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.codegen.cpp import emit_kernel
from tilefold.errors import KernelError
from tilefold.program.from_ttl import circular_buffer_table
from ttl_helpers import compiled, expect_error

BLOCK = 128


@ttl.operation(grid=(1, 1))
def sqrt_broadcast(a, b, y, z):
    """y = sqrt(a^2 + b^2), z = sqrt(a^2 - b^2) for a 1-D row-major ``a`` and a one-element ``b``,
    over blocks of BLOCK elements (parts of the tensor's one row)."""
    blocks = a.shape[0] // BLOCK
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(BLOCK,))
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1,))
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(BLOCK,))
    z_dfb = ttl.make_dataflow_buffer_like(z, shape=(BLOCK,))

    @ttl.datamovement()
    def read():
        with b_dfb.reserve() as b_blk:
            ttl.copy(b[0], b_blk).wait()
        for n in range(blocks):
            with a_dfb.reserve() as a_blk:
                ttl.copy(a[n * BLOCK:(n + 1) * BLOCK], a_blk).wait()

    @ttl.compute()
    def compute():
        with b_dfb.wait() as b_blk:
            for _ in range(blocks):
                with a_dfb.wait() as a_blk, y_dfb.reserve() as y_blk, z_dfb.reserve() as z_blk:
                    a_sq = a_blk ** 2
                    b_sq = b_blk ** 2
                    y_blk.store(ttl.math.sqrt(a_sq + ttl.math.broadcast(b_sq, y_blk, dims=[0])))
                    z_blk.store(ttl.math.sqrt(a_sq - ttl.math.broadcast(b_sq, z_blk, dims=[0])))

    @ttl.datamovement()
    def write():
        for n in range(blocks):
            with y_dfb.wait() as y_blk, z_dfb.wait() as z_blk:
                ttl.copy(y_blk, y[n * BLOCK:(n + 1) * BLOCK]).wait()
                ttl.copy(z_blk, z[n * BLOCK:(n + 1) * BLOCK]).wait()


def _demo_tensors(seed: int, n: int = 1024):
    rng = np.random.default_rng(seed)
    b = rng.random(1, dtype=np.float32)
    a = (b[0] + 1.0 + rng.random(n, dtype=np.float32)).astype(np.float32)
    make = lambda v: ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT)  # noqa: E731
    return a, b, make(a), make(b), make(np.zeros(n, np.float32)), make(np.zeros(n, np.float32))


@pytest.mark.parametrize("seed", [0, 1])
def test_sqrt_with_a_scalar_broadcast_on_row_major_blocks_matches_numpy(seed):
    a, b, ta, tb, ty, tz = _demo_tensors(seed)
    sqrt_broadcast(ta, tb, ty, tz)
    y, z = ttnn.to_numpy(ty), ttnn.to_numpy(tz)
    a64, b64 = a.astype(np.float64), float(b[0])
    # float32 DST: a**2, the sum and sqrt keep float32; the scalar broadcast of b is an FPU op, whose
    # 19-bit source register keeps 10 mantissa bits of b: b**2 is off by up to 2**-9 b**2, and
    # y, z >= 1 halve that
    tol = 2.0 ** -10 * b64 ** 2 + 1e-5
    np.testing.assert_allclose(y, np.sqrt(a64 ** 2 + b64 ** 2), rtol=0, atol=tol)
    np.testing.assert_allclose(z, np.sqrt(a64 ** 2 - b64 ** 2), rtol=0, atol=tol)


def test_a_row_major_buffer_holds_its_block_in_tile_pages():
    *_, ta, tb, ty, tz = _demo_tensors(0)
    table = {e.name: (e.layout, e.page_size, e.num_pages) for e in
             circular_buffer_table(compiled(sqrt_broadcast, ta, tb, ty, tz).module)}
    assert table["a_dfb"] == ("ROW_MAJOR", 4096, 2)        # 128 float32 elements in one 4 KiB page
    assert table["b_dfb"] == ("ROW_MAJOR", 4096, 2)


def double_rows(rows: int):
    """out = t + t * 0.5 - 1 over blocks of ``rows`` rows of a 2-D row-major (N, C) tensor."""

    @ttl.operation(grid=(1, 1))
    def op(t, out):
        n, c = t.shape
        t_dfb = ttl.make_dataflow_buffer_like(t, shape=(rows, c))
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(rows, c))

        @ttl.datamovement()
        def read():
            for i in range(n // rows):
                with t_dfb.reserve() as blk:
                    ttl.copy(t[i * rows:(i + 1) * rows, :], blk).wait()

        @ttl.compute()
        def compute():
            for _ in range(n // rows):
                with t_dfb.wait() as blk, o_dfb.reserve() as o_blk:
                    o_blk.store(blk + blk * 0.5 - 1.0)

        @ttl.datamovement()
        def write():
            for i in range(n // rows):
                with o_dfb.wait() as o_blk:
                    ttl.copy(o_blk, out[i * rows:(i + 1) * rows, :]).wait()

    return op


@pytest.mark.parametrize("rows", [1, 2])
@pytest.mark.parametrize("c", [6, 8])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_2d_row_major_rows_not_tile_aligned_match_numpy(c, rows, dtype):
    values = np.random.default_rng(c).standard_normal((8, c)).astype(np.float32)
    t = ttnn.from_numpy(values, dtype=getattr(ttnn, dtype), layout=ttnn.ROW_MAJOR_LAYOUT)
    out = ttnn.zeros((8, c), dtype=getattr(ttnn, dtype), layout=ttnn.ROW_MAJOR_LAYOUT)
    double_rows(rows)(t, out)
    x = ttnn.to_numpy(t).astype(np.float64)
    expected = x + x * 0.5 - 1.0
    tol = 1e-6 if dtype == "float32" else 2.0 ** -7
    np.testing.assert_allclose(ttnn.to_numpy(out), expected, rtol=tol, atol=tol)


@ttl.operation(grid=(1, 1))
def row_halves(t, out):
    """Each row of a (4, 64) bfloat16 tensor in two parts of 32 elements, doubled."""
    t_dfb = ttl.make_dataflow_buffer_like(t, shape=(1, 32))
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 32))

    @ttl.datamovement()
    def read():
        for r in range(4):
            for h in range(2):
                with t_dfb.reserve() as blk:
                    ttl.copy(t[r, h * 32:(h + 1) * 32], blk).wait()

    @ttl.compute()
    def compute():
        for _ in range(8):
            with t_dfb.wait() as blk, o_dfb.reserve() as o_blk:
                o_blk.store(blk + blk)

    @ttl.datamovement()
    def write():
        for r in range(4):
            for h in range(2):
                with o_dfb.wait() as o_blk:
                    ttl.copy(o_blk, out[r, h * 32:(h + 1) * 32]).wait()


def test_copies_of_parts_of_rows_move_only_those_elements():
    values = np.random.default_rng(3).standard_normal((4, 64)).astype(np.float32)
    t = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT)
    out = ttnn.zeros((4, 64), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT)
    row_halves(t, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), 2 * ttnn.to_numpy(t))


def _row_major(shape, dtype=ttnn.float32):
    return ttnn.zeros(shape, dtype=dtype, layout=ttnn.ROW_MAJOR_LAYOUT)


def _copy_in_out(a_dfb, a, y_dfb, y):
    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as blk:
            ttl.copy(a[0:2, :], blk).wait()

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as blk:
            ttl.copy(blk, y[0:2, :]).wait()


def test_matmul_of_row_major_blocks_is_refused_at_the_users_line():
    def run():
        @ttl.operation(grid=(1, 1))
        def op(a, y):
            a_dfb = ttl.make_dataflow_buffer_like(a, shape=(2, 2))
            y_dfb = ttl.make_dataflow_buffer_like(y, shape=(2, 2))
            _copy_in_out(a_dfb, a, y_dfb, y)

            @ttl.compute()
            def compute():
                with a_dfb.wait() as a_blk, y_dfb.reserve() as y_blk:
                    y_blk.store(a_blk @ a_blk)  # error

        op(_row_major((2, 2)), _row_major((2, 2)))

    expect_error(run, test_matmul_of_row_major_blocks_is_refused_at_the_users_line, KernelError,
                 "a @ b (matmul) needs tiled blocks", "row-major", "layout=ttnn.TILE_LAYOUT")


def test_row_broadcast_of_a_multi_element_row_major_block_is_refused():
    def run():
        @ttl.operation(grid=(1, 1))
        def op(a, r, y):
            a_dfb = ttl.make_dataflow_buffer_like(a, shape=(2, 8))
            r_dfb = ttl.make_dataflow_buffer_like(r, shape=(1, 8))
            y_dfb = ttl.make_dataflow_buffer_like(y, shape=(2, 8))

            @ttl.datamovement()
            def read():
                with a_dfb.reserve() as blk, r_dfb.reserve() as r_blk:
                    ttl.copy(a[0:2, :], blk).wait()
                    ttl.copy(r[0:1, :], r_blk).wait()

            @ttl.datamovement()
            def write():
                with y_dfb.wait() as blk:
                    ttl.copy(blk, y[0:2, :]).wait()

            @ttl.compute()
            def compute():
                with a_dfb.wait() as a_blk, r_dfb.wait() as r_blk, y_dfb.reserve() as y_blk:
                    y_blk.store(a_blk + ttl.math.broadcast(r_blk, y_blk, dims=[0]))  # error

        op(_row_major((2, 8)), _row_major((1, 8)), _row_major((2, 8)))

    expect_error(run, test_row_broadcast_of_a_multi_element_row_major_block_is_refused, KernelError,
                 "broadcast of a block of 8 elements", "needs tiled blocks")


def test_a_tiled_and_a_row_major_operand_do_not_mix():
    def run():
        @ttl.operation(grid=(1, 1))
        def op(a, w, y):
            a_dfb = ttl.make_dataflow_buffer_like(a, shape=(32, 32))
            w_dfb = ttl.make_dataflow_buffer_like(w, shape=(1, 1))
            y_dfb = ttl.make_dataflow_buffer_like(y, shape=(32, 32))

            @ttl.datamovement()
            def read():
                with a_dfb.reserve() as blk, w_dfb.reserve() as w_blk:
                    ttl.copy(a[0:32, :], blk).wait()
                    ttl.copy(w[0, 0], w_blk).wait()

            @ttl.compute()
            def compute():
                with a_dfb.wait() as a_blk, w_dfb.wait() as w_blk, y_dfb.reserve() as y_blk:
                    y_blk.store(a_blk * w_blk)  # error

            @ttl.datamovement()
            def write():
                with y_dfb.wait() as blk:
                    ttl.copy(blk, y[0:32, :]).wait()

        tiled = ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
        op(_row_major((32, 32)), tiled, _row_major((32, 32)))

    expect_error(run, test_a_tiled_and_a_row_major_operand_do_not_mix, KernelError,
                 "of a row-major block and a tiled block")


def test_row_major_compute_kernels_pass_check_kernel(tmp_path):
    *_, ta, tb, ty, tz = _demo_tensors(0)
    programs = [compiled(sqrt_broadcast, ta, tb, ty, tz).program]
    t = ttnn.from_numpy(np.ones((4, 64), np.float32), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT)
    programs.append(compiled(row_halves, t, ttnn.zeros((4, 64), dtype=ttnn.bfloat16,
                                                        layout=ttnn.ROW_MAJOR_LAYOUT)).program)
    jobs = []
    for i, program in enumerate(programs):
        for k in program.kernels:
            path = tmp_path / f"{i}_{k.name}.cpp"
            path.write_text(emit_kernel(k.function))
            role = "compute" if k.is_compute else ("reader" if k.processor == "RISCV_0" else "writer")
            jobs.append((path, role, accessor_compile_args(program, k)))
    assert len(jobs) == 6
    for result in check_kernels(jobs):
        require_accepted(result)


ROWS, ROW = 64, 200          # 400 B rows: a DRAM bank holds them 416 B apart (32 B alignment)


@ttl.operation(grid=(1, 1))
def copy_rows(a, out):
    """out = a, one row-major row at a time, through the node's L1."""
    row_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, ROW), block_count=2)

    @ttl.datamovement()
    def read():
        for r in range(ROWS):
            with row_dfb.reserve() as blk:
                ttl.copy(a[r:r + 1, 0:ROW], blk).wait()

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def write():
        for r in range(ROWS):
            with row_dfb.wait() as blk:
                ttl.copy(blk, out[r:r + 1, 0:ROW]).wait()


def test_rows_of_a_size_the_banks_align_are_read_and_written_where_the_host_put_them():
    values = (np.arange(ROWS * ROW) % 251).reshape(ROWS, ROW).astype(np.float32)
    rm = dict(dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, memory_config=ttnn.DRAM_MEMORY_CONFIG)
    a = ttnn.from_numpy(values, **rm)
    out = ttnn.from_numpy(np.full((ROWS, ROW), 7.0, np.float32), **rm)
    copy_rows(a, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), values)
