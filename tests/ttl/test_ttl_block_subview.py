"""``ttl.block.subview(block, offsets=..., shape=...)``: tiles of a held block (part of one row, or
whole rows) copied from and into tensors and sent through pipes as a block of their own, as
TT-Lang's all-gather matmul examples write a partial last block row by row. Simulated against
numpy; the kernels' C++ is checked against the real headers; mistakes are one error at the line."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import compiled, expect_error, tile_tensor, zeros


@ttl.operation(grid=(1, 1))
def through_tiles(inp, out):
    """Each tile of a (1, 2) block is filled and written out through its own (1, 1) view."""
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 2), block_count=1)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def read():
        blk = dfb.reserve()
        first = ttl.block.subview(blk, offsets=(0, 0), shape=(1, 1))
        second = ttl.block.subview(blk, offsets=(0, 1), shape=(1, 1))
        ttl.copy(inp[0:1, 1:2], first).wait()          # the tiles swap places
        ttl.copy(inp[0:1, 0:1], second).wait()
        blk.push()

    @ttl.datamovement()
    def write():
        blk = dfb.wait()
        ttl.copy(ttl.block.subview(blk, offsets=(0, 0), shape=(1, 1)), out[0:1, 0:1]).wait()
        ttl.copy(ttl.block.subview(blk, offsets=(0, 1), shape=(1, 1)), out[0:1, 1:2]).wait()
        blk.pop()


def test_copies_into_and_out_of_views_of_one_block():
    inp, out = tile_tensor((32, 64), seed=1), zeros((32, 64))
    through_tiles(inp, out)
    v = ttnn.to_numpy(inp)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.concatenate([v[:, 32:], v[:, :32]], 1))


def _partial_rows(rows: int):
    """Blocks of three tile rows; only the ``rows`` rows the tensor holds are written, one view of
    a row at a time (the last block is partial), the row index a loop variable."""

    @ttl.operation(grid=(1, 1))
    def partial(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(3, 2), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def read():
            for b in range(2):
                blk = dfb.reserve()
                ttl.copy(inp[3 * b:3 * b + 3, 0:2], blk).wait()

        @ttl.datamovement()
        def write():
            for b in range(2):
                blk = dfb.wait()
                for r in range(3):
                    if 3 * b + r < rows:
                        row = ttl.block.subview(blk, offsets=(r, 0), shape=(1, 2))
                        ttl.copy(row, out[3 * b + r:3 * b + r + 1, 0:2]).wait()

    return partial


def test_a_partial_last_block_is_written_row_by_row():
    rows = 5
    inp, out = tile_tensor((6 * 32, 64), seed=2), zeros((6 * 32, 64))
    _partial_rows(rows)(inp, out)
    got, v = ttnn.to_numpy(out), ttnn.to_numpy(inp)
    np.testing.assert_array_equal(got[:rows * 32], v[:rows * 32])
    np.testing.assert_array_equal(got[rows * 32:], 0)


def test_the_view_kernels_compile_against_the_real_dataflow_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    program = compiled(_partial_rows(5), tile_tensor((6 * 32, 64)), zeros((6 * 32, 64))).program
    jobs = []
    for k in program.kernels:
        if k.is_compute:
            continue
        path = tmp_path / f"{k.name}.cpp"
        path.write_text(emit_kernel(k.function))
        jobs.append((path, "reader" if k.processor == "RISCV_0" else "writer", check_kernel.accessor_compile_args(program, k)))
    for result in check_kernel.check_kernels(jobs):
        check_kernel.require_accepted(result)


def test_views_of_a_group_block_are_sent_to_the_nodes_they_belong_to():
    """Node 0 reads a (2, 1) group block and sends row ``k`` of it to node ``k + 1``: a view sent
    through a pipe travels as a block of its own tiles."""
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(k + 1, 0)) for k in range(2)])

    @ttl.operation(grid=(3, 1))
    def scatter(inp, out):
        group = ttl.make_dataflow_buffer_like(inp, shape=(2, 1), block_count=1)
        one = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def mover():
            x, _ = ttl.node(dims=2)
            if x == 0:
                with group.reserve() as blk:
                    ttl.copy(inp[0:2, 0:1], blk).wait()

                    def send(pipe):
                        k = pipe.dst[0] - 1
                        ttl.copy(ttl.block.subview(blk, offsets=(k, 0), shape=(1, 1)), pipe).wait()

                    net.if_src(send)
            else:
                with one.reserve() as got:
                    net.if_dst(lambda pipe: ttl.copy(pipe, got).wait())
                    ttl.copy(got, out[x - 1, 0]).wait()

        @ttl.datamovement()
        def idle():
            pass

    inp, out = tile_tensor((64, 32), seed=3), zeros((64, 32))
    scatter(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(inp))


def _view_in_read(offsets, shape):
    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(2, 2), block_count=1)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def read():
            with dfb.reserve() as blk:
                ttl.copy(inp[0:2, 0:2], blk).wait()
                ttl.block.subview(blk, offsets=offsets, shape=shape)  # error

    return op


def _view_in_compute():
    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(2, 2), block_count=1)

        @ttl.compute()
        def compute():
            with dfb.wait() as blk:
                ttl.block.subview(blk, offsets=(0, 0), shape=(1, 1))  # error

        @ttl.datamovement()
        def read():
            with dfb.reserve() as blk:
                ttl.copy(inp[0:2, 0:2], blk).wait()

    return op


def test_view_mistakes_are_one_error_at_the_line():
    tensors = (tile_tensor((64, 64)), zeros((64, 64)))
    expect_error(lambda: _view_in_read((0, 0), (2, 1))(*tensors), _view_in_read, KernelError,
                 "its tiles are not one after another in L1")
    expect_error(lambda: _view_in_read((1, 1), (1, 2))(*tensors), _view_in_read, KernelError,
                 "dimension 1 takes 2 tiles from offset 1, but blk has 2 there")
    expect_error(lambda: _view_in_compute()(*tensors), _view_in_compute, KernelError,
                 "ttl.block.subview in a compute kernel is not supported by tilefold yet")
