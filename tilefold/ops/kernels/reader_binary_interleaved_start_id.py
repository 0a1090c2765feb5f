"""Reader of two tile-layout inputs (TT-NN ``reader_binary_interleaved_start_id.cpp``): page i
of input A into CB c_0 and page i of input B into CB c_1, one page of each at a time.

Compile-time args: ``[*TensorAccessorArgs(src0), *TensorAccessorArgs(src1)]``.
Runtime args: ``[src0_addr, src1_addr, num_tiles, start_id]``.
"""

from tilefold.pykernel import *

CB_IN0 = CBIndex.c_0
CB_IN1 = CBIndex.c_1


@reader_kernel
def reader():
    src0_addr = get_arg_val(0)
    src1_addr = get_arg_val(1)
    num_tiles = get_arg_val(2)
    start_id = get_arg_val(3)

    src0_args = TensorAccessorArgs(0)
    src1_args = TensorAccessorArgs(after=src0_args)
    s0 = TensorAccessor(src0_args, src0_addr, get_tile_size(CB_IN0))
    s1 = TensorAccessor(src1_args, src1_addr, get_tile_size(CB_IN1))

    end_id = start_id + num_tiles
    for i in range(start_id, end_id):
        cb_reserve_back(CB_IN0, 1)
        cb_reserve_back(CB_IN1, 1)
        noc_async_read_page(i, s0, get_write_ptr(CB_IN0))
        noc_async_read_page(i, s1, get_write_ptr(CB_IN1))
        noc_async_read_barrier()
        cb_push_back(CB_IN0, 1)
        cb_push_back(CB_IN1, 1)
