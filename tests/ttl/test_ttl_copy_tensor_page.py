"""``ttl.copy_tensor_page(tensor, page_id, block)``: one page (row) of a row-major tensor, chosen at
run time, read into a block's bytes as they are — an embedding gather into blocks of 1x32 tiles —
on the simulated device against numpy; the reader's C++ passes check-kernel; misuse is one error at
the user's line."""

from __future__ import annotations

import numpy as np
from checkkernel import check_kernels, compiled_kernel_jobs, require_accepted

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import compiled, expect_error

ROWS, WIDTH, PICKS = 6, 256, 3
TILES = WIDTH // 32


@ttl.operation(grid=(1, 1))
def gather_rows(table, ids, out):
    """Row ``ids[0, k]`` of ``table`` becomes row ``k`` of ``out`` (tiles of 1x32)."""
    id_dfb = ttl.make_dataflow_buffer_like(ids, shape=(1, 1), block_count=1)
    row_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, TILES), block_count=2)

    @ttl.datamovement()
    def read():
        with id_dfb.reserve() as blk:
            ttl.copy(ids[0, 0], blk).wait()
        with id_dfb.wait() as blk:
            for k in range(PICKS):
                with row_dfb.reserve() as row:
                    ttl.copy_tensor_page(table, ttl.read_index(blk, 0, k), row).wait()

    @ttl.datamovement()
    def write():
        for k in range(PICKS):
            with row_dfb.wait() as row:
                ttl.copy(row, out[k, 0:TILES]).wait()


def _tensors(picks):
    values = (np.arange(ROWS * WIDTH) % 251).reshape(ROWS, WIDTH).astype(np.float32)
    table = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT)
    index = np.zeros((32, 32), np.float32)
    index[0, :len(picks)] = picks
    ids = ttnn.from_numpy(index, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.from_numpy(np.zeros((PICKS, WIDTH), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                          tile=ttnn.Tile((1, 32)))
    return values, table, ids, out


def test_pages_chosen_at_run_time_land_in_blocks_of_small_tiles(tmp_path):
    picks = [4, 1, 5]
    values, table, ids, out = _tensors(picks)
    gather_rows(table, ids, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), values[picks])

    for result in check_kernels(compiled_kernel_jobs(compiled(gather_rows, *_tensors(picks)[1:]), tmp_path)):
        require_accepted(result)


def test_a_page_larger_than_the_block_is_refused():
    @ttl.operation(grid=(1, 1))
    def too_small(table, out):
        row_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            with row_dfb.reserve() as row:
                ttl.copy_tensor_page(table, 0, row).wait()  # error

    _, table, _, out = _tensors([0])
    expect_error(lambda: too_small(table, out), test_a_page_larger_than_the_block_is_refused, KernelError,
                 "a page of table is 512 B", "holds 64 B")
