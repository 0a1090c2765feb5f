"""Tilize (multi-core interleaved) in PyKernel: the reader, compute and writer kernels.

Row-major sticks are read from an interleaved DRAM buffer 32 at a time into CB c_0, the
compute kernel rearranges each 32-stick block into tiles in CB c_16, and the writer
sends the tiles one page at a time to an interleaved DRAM buffer.

Reader   compile-time args: [stick_size, *TensorAccessorArgs(src)]
         runtime args: [src_addr, num_sticks, block_size_nbytes, num_tiles_per_block, block_width_size,
                        num_full_blocks_in_row, num_leftover_tiles, leftover_width_in_row, start_stick_id]
Compute  compile-time args: [per_core_block_cnt, per_core_block_tile_cnt]
Writer   compile-time args: [cb_id_out, *TensorAccessorArgs(dst)]; runtime args: [dst_addr, num_pages, start_id]

``tilize_program`` is the host side: the TT-Metal tilize factory
(:func:`tilefold.ops.tilize.tilize_multi_core_interleaved`, the one ``tilefold run tilize`` uses)
placing these kernels. Blocks of 32 sticks are split over a row of cores, the last core taking
the remainder as a cliff core with its own compute kernel. Run this file to tilize a random
tensor on the simulated device and compare it with the input.
"""

import numpy as np

from tilefold.ops.tilize import TilizeKernels, tilize_multi_core_interleaved
from tilefold.program import Program
from tilefold.pykernel import *

TILE_HEIGHT = 32
CB_IN = CBIndex.c_0
CB_OUT = CBIndex.c_16


@inline
def read_tiles(base_src_noc_addr, num_tiles, width_size):
    """Read width_size bytes of each of the block's 32 sticks into CB_IN, then push num_tiles pages."""
    cb_reserve_back(CB_IN, num_tiles)
    l1_write_addr = get_write_ptr(CB_IN)
    for k in range(TILE_HEIGHT):
        noc_async_read(base_src_noc_addr[k], l1_write_addr, width_size)
        l1_write_addr += width_size
        base_src_noc_addr[k] += width_size
    noc_async_read_barrier()
    cb_push_back(CB_IN, num_tiles)


@reader_kernel
def reader_unary_stick_layout_split_rows_interleaved():
    src_addr = get_arg_val(0)
    num_sticks = get_arg_val(1)
    num_tiles_per_block = get_arg_val(3)
    block_width_size = get_arg_val(4)
    num_full_blocks_in_row = get_arg_val(5)
    num_leftover_tiles = get_arg_val(6)
    leftover_width_in_row = get_arg_val(7)
    start_stick_id = get_arg_val(8)

    stick_size = get_compile_time_arg_val(0)
    src_tensor_args = TensorAccessorArgs(1)
    s = TensorAccessor(src_tensor_args, src_addr, stick_size)

    base_src_noc_addr = array(uint64, TILE_HEIGHT)
    stick_id = start_stick_id
    for i in range(0, num_sticks, TILE_HEIGHT):
        for j in range(TILE_HEIGHT):
            base_src_noc_addr[j] = get_noc_addr(stick_id, s)
            stick_id += 1
        for block in range(num_full_blocks_in_row):
            read_tiles(base_src_noc_addr, num_tiles_per_block, block_width_size)
        if num_leftover_tiles > 0:
            read_tiles(base_src_noc_addr, num_leftover_tiles, leftover_width_in_row)


@compute_kernel
def tilize():
    per_core_block_cnt = get_compile_time_arg_val(0)
    per_core_block_tile_cnt = get_compile_time_arg_val(1)
    compute_kernel_hw_startup(CB_IN, CB_OUT)
    tilize_init(CB_IN, per_core_block_tile_cnt, CB_OUT)
    for b in range(per_core_block_cnt):
        cb_wait_front(CB_IN, per_core_block_tile_cnt)
        cb_reserve_back(CB_OUT, per_core_block_tile_cnt)
        tilize_block(CB_IN, per_core_block_tile_cnt, CB_OUT)
        cb_push_back(CB_OUT, per_core_block_tile_cnt)
        cb_pop_front(CB_IN, per_core_block_tile_cnt)
    tilize_uninit(CB_IN, CB_OUT)


@writer_kernel
def writer_unary_interleaved_start_id():
    dst_addr = get_arg_val(0)
    num_pages = get_arg_val(1)
    start_id = get_arg_val(2)

    cb_id_out = get_compile_time_arg_val(0)
    dst_args = TensorAccessorArgs(1)
    page_bytes = get_tile_size(cb_id_out)
    s = TensorAccessor(dst_args, dst_addr, page_bytes)

    end_id = start_id + num_pages
    for i in range(start_id, end_id):
        cb_wait_front(cb_id_out, 1)
        l1_read_addr = get_read_ptr(cb_id_out)
        noc_async_write_page(i, s, l1_read_addr)
        noc_async_writes_flushed()
        cb_pop_front(cb_id_out, 1)
    noc_async_write_barrier()


KERNELS = (reader_unary_stick_layout_split_rows_interleaved, tilize, writer_unary_interleaved_start_id)


def tilize_program(shape, dtype="bfloat16", num_cores=8) -> Program:
    """Tilize a row-major buffer ``src`` of ``shape`` into the tile-layout buffer ``dst`` on a
    row of ``num_cores`` cores: the tilize program factory (:mod:`tilefold.ops.tilize`) placing
    the three kernels above."""
    return tilize_multi_core_interleaved(shape, dtype, grid=(num_cores, 1), kernels=TilizeKernels(*KERNELS))


if __name__ == "__main__":
    from tilefold.sim import Device

    x = np.random.default_rng(0).standard_normal((256, 512)).astype(np.float32)
    result = Device().run(tilize_program(x.shape, "float32", num_cores=3), {"src": x})
    assert np.array_equal(result.outputs["dst"], x)
    print(f"tilized {x.shape} on 3 simulated cores: output equals input; "
          f"estimated {result.perf.cycles:.0f} cycles (cost model)")
