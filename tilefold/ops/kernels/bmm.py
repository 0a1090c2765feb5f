"""Single-core matmul compute kernel: every output sub-block of ``out_subblock_h ×
out_subblock_w`` tiles is accumulated over the whole K dimension in DST within one
``tile_regs_acquire`` — one ``matmul_block`` per K tile — then packed to CB c_16.

Compile-time args: ``[num_blocks_n, in0_num_subblocks, in1_num_subblocks, Kt, out_subblock_h,
out_subblock_w]``: B arrives in ``num_blocks_n`` column blocks of ``in1_block_w =
in1_num_subblocks · out_subblock_w`` tiles; for each, A arrives in ``in0_num_subblocks`` row
blocks of ``out_subblock_h × Kt`` tiles.

``matmul_block`` at K step ``k`` reads A tiles ``k + r·Kt`` (row r of the A block) and the
``out_subblock_w`` consecutive B tiles from ``k·in1_block_w + column``, and adds their products
to DST. DST holds bfloat16 unless the compute config sets ``fp32_dest_acc_en``, so each K step
rounds the running sums to DST's precision.
"""

from tilefold.pykernel import *

CB_IN0 = CBIndex.c_0
CB_IN1 = CBIndex.c_1
CB_OUT = CBIndex.c_16


@compute_kernel
def compute():
    num_blocks_n = get_compile_time_arg_val(0)
    in0_num_subblocks = get_compile_time_arg_val(1)
    in1_num_subblocks = get_compile_time_arg_val(2)
    Kt = get_compile_time_arg_val(3)
    out_subblock_h = get_compile_time_arg_val(4)
    out_subblock_w = get_compile_time_arg_val(5)

    in1_block_w = in1_num_subblocks * out_subblock_w
    in0_block_tiles = out_subblock_h * Kt
    in1_block_tiles = Kt * in1_block_w
    out_subblock_tiles = out_subblock_h * out_subblock_w
    mm_block_init(CB_IN0, CB_IN1, CB_OUT, 0, out_subblock_w, out_subblock_h, Kt)
    for nb in range(num_blocks_n):
        cb_wait_front(CB_IN1, in1_block_tiles)
        for mb in range(in0_num_subblocks):
            cb_wait_front(CB_IN0, in0_block_tiles)
            for sb in range(in1_num_subblocks):
                tile_regs_acquire()
                in1_index = sb * out_subblock_w
                for k in range(Kt):
                    matmul_block(CB_IN0, CB_IN1, k, in1_index, 0, 0, out_subblock_w, out_subblock_h, Kt)
                    in1_index += in1_block_w
                tile_regs_commit()
                cb_reserve_back(CB_OUT, out_subblock_tiles)
                tile_regs_wait()
                for i in range(out_subblock_tiles):
                    pack_tile(i, CB_OUT)
                tile_regs_release()
                cb_push_back(CB_OUT, out_subblock_tiles)
            cb_pop_front(CB_IN0, in0_block_tiles)
        cb_pop_front(CB_IN1, in1_block_tiles)
