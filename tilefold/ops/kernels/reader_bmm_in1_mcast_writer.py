"""Reader-writer kernels of the 2-D multicast matmul for in1 (B) and the output: the first core of
each grid column reads the column's B block from DRAM and multicasts it down the column; the other
cores of the column receive it. After the K loop each core writes its output block.

Each core's B block is ``Kt × per_core_N`` tiles, moved in ``num_blocks`` K blocks of
``in0_block_w × per_core_N`` tiles (row-major in CB c_1). The handshake is the one of
:mod:`~tilefold.ops.kernels.reader_bmm_in0_mcast`, on the column. The output arrives in CB c_16 in
sub-blocks of ``out_subblock_h × out_subblock_w`` tiles, sub-block rows outer, as the compute
kernel packs them after the last K block.

Compile-time args: ``[*TensorAccessorArgs(src1), *TensorAccessorArgs(dst)]`` (both kernels).
Runtime args (sender): ``[src1_addr, dst_addr, Nt, per_core_M, per_core_N, in0_block_w, num_blocks,
m0, n0, out_subblock_h, out_subblock_w, mcast_x0, mcast_y0, mcast_x1, mcast_y1, num_receivers,
sender_sem, receiver_sem]``.
Runtime args (receiver): ``[dst_addr, Nt, per_core_M, per_core_N, in0_block_w, num_blocks, m0, n0,
out_subblock_h, out_subblock_w, sender_noc_x, sender_noc_y, sender_sem, receiver_sem]``.
"""

from tilefold.pykernel import *

CB_IN1 = CBIndex.c_1
CB_OUT = CBIndex.c_16
INVALID = 0
VALID = 1


@writer_kernel
def in1_sender_writer():
    src1_addr = get_arg_val(0)
    dst_addr = get_arg_val(1)
    Nt = get_arg_val(2)
    per_core_M = get_arg_val(3)
    per_core_N = get_arg_val(4)
    in0_block_w = get_arg_val(5)
    num_blocks = get_arg_val(6)
    m0 = get_arg_val(7)
    n0 = get_arg_val(8)
    out_subblock_h = get_arg_val(9)
    out_subblock_w = get_arg_val(10)
    mcast_x0 = get_arg_val(11)
    mcast_y0 = get_arg_val(12)
    mcast_x1 = get_arg_val(13)
    mcast_y1 = get_arg_val(14)
    num_receivers = get_arg_val(15)
    sender_sem = get_semaphore(get_arg_val(16))
    receiver_sem = get_semaphore(get_arg_val(17))

    src1_args = TensorAccessorArgs(0)
    dst_args = TensorAccessorArgs(after=src1_args)
    in1_tile_bytes = get_tile_size(CB_IN1)
    out_tile_bytes = get_tile_size(CB_OUT)
    s1 = TensorAccessor(src1_args, src1_addr, in1_tile_bytes)
    sd = TensorAccessor(dst_args, dst_addr, out_tile_bytes)
    block_tiles = in0_block_w * per_core_N
    block_bytes = block_tiles * in1_tile_bytes
    noc_semaphore_set(receiver_sem, VALID)
    sem_mcast = get_noc_multicast_addr(mcast_x0, mcast_y0, mcast_x1, mcast_y1, receiver_sem)
    for b in range(num_blocks):
        cb_reserve_back(CB_IN1, block_tiles)
        l1_write_addr = get_write_ptr(CB_IN1)
        write_addr = l1_write_addr
        for k in range(in0_block_w):
            first = (b * in0_block_w + k) * Nt + n0
            for b_tile in range(first, first + per_core_N):
                noc_async_read_page(b_tile, s1, write_addr)
                write_addr += in1_tile_bytes
        noc_async_read_barrier()
        if num_receivers > 0:
            noc_semaphore_wait(sender_sem, num_receivers)
            noc_semaphore_set(sender_sem, 0)
            data_mcast = get_noc_multicast_addr(mcast_x0, mcast_y0, mcast_x1, mcast_y1, l1_write_addr)
            noc_async_write_multicast(l1_write_addr, data_mcast, block_bytes, num_receivers)
            noc_semaphore_set_multicast(receiver_sem, sem_mcast, num_receivers)
        cb_push_back(CB_IN1, block_tiles)

    out_subblock_tiles = out_subblock_h * out_subblock_w
    for mb in range(0, per_core_M, out_subblock_h):
        for nb in range(0, per_core_N, out_subblock_w):
            cb_wait_front(CB_OUT, out_subblock_tiles)
            l1_read_addr = get_read_ptr(CB_OUT)
            for r in range(out_subblock_h):
                first = (m0 + mb + r) * Nt + n0 + nb
                for c_tile in range(first, first + out_subblock_w):
                    noc_async_write_page(c_tile, sd, l1_read_addr)
                    l1_read_addr += out_tile_bytes
            noc_async_writes_flushed()
            cb_pop_front(CB_OUT, out_subblock_tiles)
    noc_async_write_barrier()


@writer_kernel
def in1_receiver_writer():
    dst_addr = get_arg_val(0)
    Nt = get_arg_val(1)
    per_core_M = get_arg_val(2)
    per_core_N = get_arg_val(3)
    in0_block_w = get_arg_val(4)
    num_blocks = get_arg_val(5)
    m0 = get_arg_val(6)
    n0 = get_arg_val(7)
    out_subblock_h = get_arg_val(8)
    out_subblock_w = get_arg_val(9)
    sender_x = get_arg_val(10)
    sender_y = get_arg_val(11)
    sender_sem = get_semaphore(get_arg_val(12))
    receiver_sem = get_semaphore(get_arg_val(13))

    src1_args = TensorAccessorArgs(0)
    dst_args = TensorAccessorArgs(after=src1_args)
    out_tile_bytes = get_tile_size(CB_OUT)
    sd = TensorAccessor(dst_args, dst_addr, out_tile_bytes)
    block_tiles = in0_block_w * per_core_N
    sender_sem_noc = get_noc_addr_xy(sender_x, sender_y, sender_sem)
    for b in range(num_blocks):
        cb_reserve_back(CB_IN1, block_tiles)
        noc_semaphore_set(receiver_sem, INVALID)
        noc_semaphore_inc(sender_sem_noc, 1)
        noc_semaphore_wait(receiver_sem, VALID)
        cb_push_back(CB_IN1, block_tiles)

    out_subblock_tiles = out_subblock_h * out_subblock_w
    for mb in range(0, per_core_M, out_subblock_h):
        for nb in range(0, per_core_N, out_subblock_w):
            cb_wait_front(CB_OUT, out_subblock_tiles)
            l1_read_addr = get_read_ptr(CB_OUT)
            for r in range(out_subblock_h):
                first = (m0 + mb + r) * Nt + n0 + nb
                for c_tile in range(first, first + out_subblock_w):
                    noc_async_write_page(c_tile, sd, l1_read_addr)
                    l1_read_addr += out_tile_bytes
            noc_async_writes_flushed()
            cb_pop_front(CB_OUT, out_subblock_tiles)
    noc_async_write_barrier()
