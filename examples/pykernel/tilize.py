"""Tilize (multi-core interleaved) in PyKernel: the reader, compute and writer kernels.

Row-major sticks are read from an interleaved DRAM buffer 32 at a time into CB c_0, the
compute kernel rearranges each 32-stick block into tiles in CB c_16, and the writer
sends the tiles one page at a time to an interleaved DRAM buffer.

Reader   compile-time args: [stick_size, *TensorAccessorArgs(src)]
         runtime args: [src_addr, num_sticks, block_size_nbytes, num_tiles_per_block, block_width_size,
                        num_full_blocks_in_row, num_leftover_tiles, leftover_width_in_row, start_stick_id]
Compute  compile-time args: [per_core_block_cnt, per_core_block_tile_cnt]
Writer   compile-time args: [cb_id_out, *TensorAccessorArgs(dst)]; runtime args: [dst_addr, num_pages, start_id]

``tilize_program`` is the host side (the program factory of seed 000): blocks of 32 sticks
are split over a row of cores, the last core taking the remainder as a cliff core with its
own compute kernel. Run this file to tilize a random tensor on the simulated device and
compare it with the input.
"""

import numpy as np

from tilefold.arch.cores import CoreCoord, CoreRange
from tilefold.program import BufferAddress, ComputeConfig, DataMovementConfig, Program, TensorAccessorArgsRef
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
    compute_kernel_hw_startup(CB_IN, CB_IN, CB_OUT)
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
    """Tilize a row-major (H, W) buffer ``src`` into the tile-layout buffer ``dst``."""
    height, width = shape
    program = Program("tilize")
    src = program.add_buffer("src", shape, dtype, layout="ROW_MAJOR", role="input")
    dst = program.add_buffer("dst", shape, dtype, layout="TILE", role="output")
    ntiles_per_block = width // 32
    nblocks = height // TILE_HEIGHT
    per_core = -(-nblocks // num_cores)
    ncores = -(-nblocks // per_core)
    cliff = nblocks % per_core
    cores = CoreRange(CoreCoord(0, 0), CoreCoord(ncores - 1, 0))
    full_cores = CoreRange(CoreCoord(0, 0), CoreCoord(ncores - 1 - (cliff > 0), 0))   # cliff > 0 needs 2+ cores
    tile_size = dst.page_size
    program.create_circular_buffer(cores, int(CB_IN), tile_size, ntiles_per_block, dtype)
    program.create_circular_buffer(cores, int(CB_OUT), tile_size, ntiles_per_block, dtype)
    stick_size = src.page_size
    reader = program.create_kernel(reader_unary_stick_layout_split_rows_interleaved, cores,
                                   DataMovementConfig("RISCV_0"), [stick_size, TensorAccessorArgsRef("src")])
    writer = program.create_kernel(writer_unary_interleaved_start_id, cores, DataMovementConfig("RISCV_1"),
                                   [int(CB_OUT), TensorAccessorArgsRef("dst")])
    config = ComputeConfig(fp32_dest_acc_en=dst.data_format.element_size == 4)
    compute = program.create_kernel(tilize, full_cores, config, [per_core, ntiles_per_block])
    if cliff:
        # the cliff core runs the same function with its own block count (a second binary)
        program.create_kernel(compute.function, CoreCoord(ncores - 1, 0), config, [cliff, ntiles_per_block],
                              name="tilize_cliff")
    for i in range(ncores):
        blocks = cliff if cliff and i == ncores - 1 else per_core
        first_block = i * per_core
        program.set_runtime_args(reader, (i, 0), [BufferAddress("src"), blocks * TILE_HEIGHT, stick_size,
                                                  ntiles_per_block, stick_size, 1, 0, 0, first_block * TILE_HEIGHT])
        program.set_runtime_args(writer, (i, 0), [BufferAddress("dst"), blocks * ntiles_per_block,
                                                  first_block * ntiles_per_block])
    return program


if __name__ == "__main__":
    from tilefold.sim import Device

    x = np.random.default_rng(0).standard_normal((256, 512)).astype(np.float32)
    result = Device().run(tilize_program(x.shape, "float32", num_cores=3), {"src": x})
    assert np.array_equal(result.outputs["dst"], x)
    print(f"tilized {x.shape} on 3 simulated cores: output equals input; "
          f"estimated {result.perf.cycles:.0f} cycles (cost model)")
