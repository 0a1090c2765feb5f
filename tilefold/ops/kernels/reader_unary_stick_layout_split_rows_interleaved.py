"""Tilize reader (TT-NN ``reader_unary_stick_layout_split_rows_interleaved.cpp``): row-major
sticks from an interleaved buffer, 32 sticks (one tile height) per block, into CB c_0.

Compile-time args: ``[stick_size, *TensorAccessorArgs(src)]``.
Runtime args: ``[src_addr, num_sticks, block_size_nbytes, num_tiles_per_block, block_width_size,
num_full_blocks_in_row, num_leftover_tiles, leftover_width_in_row, start_stick_id]`` — index 2
(``block_size_nbytes``) is set by the host but not read; the interleaved factory reads whole
rows (``num_full_blocks_in_row = 1``, no leftover).

For each block the NOC addresses of its 32 sticks are looked up once through the
TensorAccessor, then each stick's ``block_width_size`` bytes are read into consecutive L1 of
the reserved pages, so CB c_0 holds a ``32 × W`` row-major block filling
``num_tiles_per_block`` tile-sized pages.
"""

from tilefold.pykernel import *

TILE_HEIGHT = 32
CB_IN = CBIndex.c_0


@inline
def read_tiles(base_src_noc_addr, num_tiles, width_size):
    """Read ``width_size`` bytes of each of the block's 32 sticks into CB_IN, then push ``num_tiles`` pages."""
    cb_reserve_back(CB_IN, num_tiles)
    l1_write_addr = get_write_ptr(CB_IN)
    for k in range(TILE_HEIGHT):
        noc_async_read(base_src_noc_addr[k], l1_write_addr, width_size)
        l1_write_addr += width_size
        base_src_noc_addr[k] += width_size
    noc_async_read_barrier()
    cb_push_back(CB_IN, num_tiles)


@reader_kernel
def reader():
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
