"""Untilize writer: blocks of 32 row-major sticks from CB c_16 to an interleaved row-major
buffer, one stick (page) at a time — the mirror of the tilize reader.

Compile-time args: ``[cb_id_out, stick_size, *TensorAccessorArgs(dst)]``.
Runtime args: ``[dst_addr, num_sticks, num_tiles_per_block, block_width_size, start_stick_id]``.

Each block waits for ``num_tiles_per_block`` pages (a ``32 × W`` row-major region of L1),
writes its 32 sticks of ``block_width_size`` bytes to their pages through the TensorAccessor,
waits for the writes (``noc_async_write_barrier``) and pops the pages.
"""

from tilefold.pykernel import *

TILE_HEIGHT = 32


@writer_kernel
def writer():
    dst_addr = get_arg_val(0)
    num_sticks = get_arg_val(1)
    num_tiles_per_block = get_arg_val(2)
    block_width_size = get_arg_val(3)
    start_stick_id = get_arg_val(4)

    cb_id_out = get_compile_time_arg_val(0)
    stick_size = get_compile_time_arg_val(1)
    dst_args = TensorAccessorArgs(2)
    s = TensorAccessor(dst_args, dst_addr, stick_size)

    stick_id = start_stick_id
    for i in range(0, num_sticks, TILE_HEIGHT):
        cb_wait_front(cb_id_out, num_tiles_per_block)
        l1_read_addr = get_read_ptr(cb_id_out)
        for k in range(TILE_HEIGHT):
            dst_noc_addr = get_noc_addr(stick_id, s)
            noc_async_write(l1_read_addr, dst_noc_addr, block_width_size)
            l1_read_addr += block_width_size
            stick_id += 1
        noc_async_write_barrier()
        cb_pop_front(cb_id_out, num_tiles_per_block)
