"""Compute kernel of the 2-D multicast matmul: one core's ``per_core_M × per_core_N`` output block,
accumulated over ``num_blocks`` K blocks of ``in0_block_w`` tiles.

For each K block it waits for the A block (CB c_0, ``per_core_M × in0_block_w``) and the B block
(CB c_1, ``in0_block_w × per_core_N``), then computes every output sub-block of ``out_subblock_h ×
out_subblock_w`` tiles with one ``matmul_block`` per K tile of the block. Partial sums between K
blocks live in CB c_24 (the whole output block):

* ``packer_l1_acc = 0``: each K block after the first reloads its sub-block's partial sums into
  DST (``copy_tile``) before adding the block's products, and packs them back;
* ``packer_l1_acc = 1``: K blocks pack with ``pack_reconfig_l1_acc(1)`` from the second one on, so
  the packer adds DST to the partial sums already in L1 (the CB is popped whole between K blocks
  so the packs land on the same pages); only the last K block reloads.

The last K block packs to CB c_16, which the writer drains sub-block by sub-block.

Compile-time args: ``[in0_block_w, in0_num_subblocks, in1_num_subblocks, num_blocks,
out_subblock_h, out_subblock_w, packer_l1_acc]`` (``in0_num_subblocks · out_subblock_h =
per_core_M``, ``in1_num_subblocks · out_subblock_w = per_core_N``).
"""

from tilefold.pykernel import *

CB_IN0 = CBIndex.c_0
CB_IN1 = CBIndex.c_1
CB_OUT = CBIndex.c_16
CB_PARTIALS = CBIndex.c_24


@compute_kernel
def compute():
    in0_block_w = get_compile_time_arg_val(0)
    in0_num_subblocks = get_compile_time_arg_val(1)
    in1_num_subblocks = get_compile_time_arg_val(2)
    num_blocks = get_compile_time_arg_val(3)
    out_subblock_h = get_compile_time_arg_val(4)
    out_subblock_w = get_compile_time_arg_val(5)
    packer_l1_acc = get_compile_time_arg_val(6)

    per_core_N = in1_num_subblocks * out_subblock_w
    in0_block_tiles = in0_num_subblocks * out_subblock_h * in0_block_w
    in1_block_tiles = in0_block_w * per_core_N
    out_subblock_tiles = out_subblock_h * out_subblock_w
    out_block_tiles = in0_num_subblocks * in1_num_subblocks * out_subblock_tiles
    in0_subblock_tiles = out_subblock_h * in0_block_w

    mm_block_init(CB_IN0, CB_IN1, CB_PARTIALS, 0, out_subblock_w, out_subblock_h, in0_block_w)
    for block in range(num_blocks):
        last = block == num_blocks - 1
        if packer_l1_acc == 1:
            if block > 0 and not last:
                # pack onto the partial sums in place: free the whole block so the write pointer
                # returns to the pages that hold them
                cb_wait_front(CB_PARTIALS, out_block_tiles)
                cb_pop_front(CB_PARTIALS, out_block_tiles)
            if block == 1 and not last:
                pack_reconfig_l1_acc(1)
            if last and block > 1:
                pack_reconfig_l1_acc(0)
        if last:
            pack_reconfig_data_format(CB_OUT)
        cb_wait_front(CB_IN0, in0_block_tiles)
        cb_wait_front(CB_IN1, in1_block_tiles)
        in0_index_subblock = 0
        for sbh in range(in0_num_subblocks):
            in1_index_subblock = 0
            for sbw in range(in1_num_subblocks):
                tile_regs_acquire()
                if block > 0 and (last or packer_l1_acc == 0):
                    copy_tile_to_dst_init_short_with_dt(CB_IN1, CB_PARTIALS)
                    cb_wait_front(CB_PARTIALS, out_subblock_tiles)
                    for i in range(out_subblock_tiles):
                        copy_tile(CB_PARTIALS, i, i)
                    cb_pop_front(CB_PARTIALS, out_subblock_tiles)
                    reconfig_data_format_srca(CB_IN1)
                    mm_block_init_short(CB_IN0, CB_IN1, 0, out_subblock_w, out_subblock_h, in0_block_w)
                in0_index = in0_index_subblock
                in1_index = in1_index_subblock
                for k in range(in0_block_w):
                    matmul_block(CB_IN0, CB_IN1, in0_index, in1_index, 0, 0, out_subblock_w, out_subblock_h,
                                 in0_block_w)
                    in0_index += 1
                    in1_index += per_core_N
                tile_regs_commit()
                if last:
                    cb_reserve_back(CB_OUT, out_subblock_tiles)
                    tile_regs_wait()
                    for i in range(out_subblock_tiles):
                        pack_tile(i, CB_OUT)
                    tile_regs_release()
                    cb_push_back(CB_OUT, out_subblock_tiles)
                else:
                    cb_reserve_back(CB_PARTIALS, out_subblock_tiles)
                    tile_regs_wait()
                    for i in range(out_subblock_tiles):
                        pack_tile(i, CB_PARTIALS)
                    tile_regs_release()
                    cb_push_back(CB_PARTIALS, out_subblock_tiles)
                in1_index_subblock += out_subblock_w
            in0_index_subblock += in0_subblock_tiles
        cb_pop_front(CB_IN0, in0_block_tiles)
        cb_pop_front(CB_IN1, in1_block_tiles)
