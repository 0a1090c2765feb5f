"""Untilize compute kernel (TT-NN ``kernel/compute/untilize.cpp``): each row of
``per_core_block_tile_cnt`` tiles in CB c_0 becomes 32 row-major sticks in CB c_16.

Compile-time args: ``[per_core_block_cnt, per_core_block_tile_cnt]`` — a cliff core runs the
same kernel with its own block count. Float32 data needs ``fp32_dest_acc_en``.
"""

from tilefold.pykernel import *

CB_IN = CBIndex.c_0
CB_OUT = CBIndex.c_16


@compute_kernel
def compute():
    per_core_block_cnt = get_compile_time_arg_val(0)
    per_core_block_tile_cnt = get_compile_time_arg_val(1)
    compute_kernel_hw_startup(CB_IN, CB_OUT)
    untilize_init(CB_IN)
    for b in range(per_core_block_cnt):
        cb_wait_front(CB_IN, per_core_block_tile_cnt)
        cb_reserve_back(CB_OUT, per_core_block_tile_cnt)
        untilize_block(CB_IN, per_core_block_tile_cnt, CB_OUT)
        cb_push_back(CB_OUT, per_core_block_tile_cnt)
        cb_pop_front(CB_IN, per_core_block_tile_cnt)
    untilize_uninit(CB_IN)
