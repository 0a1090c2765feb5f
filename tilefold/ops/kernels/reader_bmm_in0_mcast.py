"""Reader kernels of the 2-D multicast matmul for in0 (A): the first core of each grid row reads
the row's A block from DRAM and multicasts it along the row; the other cores of the row receive it.

Each core's A block is ``per_core_M × Kt`` tiles; it moves in ``num_blocks`` K blocks of
``per_core_M × in0_block_w`` tiles (row-major in CB c_0, as ``matmul_block`` reads them). Every
core of a row reserves the same CB pages at the same time, so the sender multicasts to its own
write pointer. Handshake per block, as TT-Metal's ``matmul_multicore_reuse_mcast``:

* receiver: ``cb_reserve_back``; set its *receiver* semaphore INVALID; ``noc_semaphore_inc`` the
  sender's *sender* semaphore (its pages are free); ``noc_semaphore_wait`` for VALID; push.
* sender: read the block from DRAM; wait until its *sender* semaphore counts every receiver,
  reset it; ``noc_async_write_multicast`` the block; ``noc_semaphore_set_multicast`` VALID into
  the receivers' *receiver* semaphores (on the same NOC, so after the data); push.

Compile-time args (sender): ``[*TensorAccessorArgs(src0)]``.
Runtime args (sender): ``[src0_addr, Kt, per_core_M, in0_block_w, num_blocks, m0, mcast_x0, mcast_y0,
mcast_x1, mcast_y1, num_receivers, sender_sem, receiver_sem]`` (``m0``: the row's first tile row;
the multicast rectangle in NOC coordinates; semaphore ids).
Runtime args (receiver): ``[per_core_M, in0_block_w, num_blocks, sender_noc_x, sender_noc_y,
sender_sem, receiver_sem]``.
"""

from tilefold.pykernel import *

CB_IN0 = CBIndex.c_0
INVALID = 0
VALID = 1


@reader_kernel
def in0_sender():
    src0_addr = get_arg_val(0)
    Kt = get_arg_val(1)
    per_core_M = get_arg_val(2)
    in0_block_w = get_arg_val(3)
    num_blocks = get_arg_val(4)
    m0 = get_arg_val(5)
    mcast_x0 = get_arg_val(6)
    mcast_y0 = get_arg_val(7)
    mcast_x1 = get_arg_val(8)
    mcast_y1 = get_arg_val(9)
    num_receivers = get_arg_val(10)
    sender_sem = get_semaphore(get_arg_val(11))
    receiver_sem = get_semaphore(get_arg_val(12))

    tile_bytes = get_tile_size(CB_IN0)
    s0 = TensorAccessor(TensorAccessorArgs(0), src0_addr, tile_bytes)
    block_tiles = per_core_M * in0_block_w
    block_bytes = block_tiles * tile_bytes
    # the value the receivers' semaphores are set to, multicast from this core's own semaphore
    noc_semaphore_set(receiver_sem, VALID)
    sem_mcast = get_noc_multicast_addr(mcast_x0, mcast_y0, mcast_x1, mcast_y1, receiver_sem)
    for b in range(num_blocks):
        cb_reserve_back(CB_IN0, block_tiles)
        l1_write_addr = get_write_ptr(CB_IN0)
        write_addr = l1_write_addr
        for r in range(per_core_M):
            first = (m0 + r) * Kt + b * in0_block_w
            for a_tile in range(first, first + in0_block_w):
                noc_async_read_page(a_tile, s0, write_addr)
                write_addr += tile_bytes
        noc_async_read_barrier()
        if num_receivers > 0:
            noc_semaphore_wait(sender_sem, num_receivers)
            noc_semaphore_set(sender_sem, 0)
            data_mcast = get_noc_multicast_addr(mcast_x0, mcast_y0, mcast_x1, mcast_y1, l1_write_addr)
            noc_async_write_multicast(l1_write_addr, data_mcast, block_bytes, num_receivers)
            noc_semaphore_set_multicast(receiver_sem, sem_mcast, num_receivers)
        cb_push_back(CB_IN0, block_tiles)
    noc_async_write_barrier()


@reader_kernel
def in0_receiver():
    per_core_M = get_arg_val(0)
    in0_block_w = get_arg_val(1)
    num_blocks = get_arg_val(2)
    sender_x = get_arg_val(3)
    sender_y = get_arg_val(4)
    sender_sem = get_semaphore(get_arg_val(5))
    receiver_sem = get_semaphore(get_arg_val(6))

    block_tiles = per_core_M * in0_block_w
    sender_sem_noc = get_noc_addr_xy(sender_x, sender_y, sender_sem)
    for b in range(num_blocks):
        cb_reserve_back(CB_IN0, block_tiles)
        noc_semaphore_set(receiver_sem, INVALID)
        noc_semaphore_inc(sender_sem_noc, 1)
        noc_semaphore_wait(receiver_sem, VALID)
        cb_push_back(CB_IN0, block_tiles)
