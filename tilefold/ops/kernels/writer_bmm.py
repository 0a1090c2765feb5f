"""Matmul writer for one core's ``Mt × Nt`` tile block of the output (the whole output on a single
core): output sub-blocks from CB c_16 to their tiles of the interleaved output, in the order the
compute kernel packs them.

Compile-time args: ``[cb_id_out, *TensorAccessorArgs(dst)]``.
Runtime args: ``[dst_addr, Mt, Nt, out_subblock_h, out_subblock_w, in1_block_w, m0, n0, Nt_total]``
(sizes in tiles; the block starts at output tile row ``m0``, column ``n0`` of ``Nt_total``).

Sub-blocks arrive column block by column block (``in1_block_w`` tiles wide), inside one
row of sub-blocks by row of sub-blocks; inside a sub-block, tiles are row-major.
"""

from tilefold.pykernel import *


@writer_kernel
def writer():
    dst_addr = get_arg_val(0)
    Mt = get_arg_val(1)
    Nt = get_arg_val(2)
    out_subblock_h = get_arg_val(3)
    out_subblock_w = get_arg_val(4)
    in1_block_w = get_arg_val(5)
    m0 = get_arg_val(6)
    n0 = get_arg_val(7)
    Nt_total = get_arg_val(8)

    cb_id_out = get_compile_time_arg_val(0)
    dst_args = TensorAccessorArgs(1)
    tile_bytes = get_tile_size(cb_id_out)
    s = TensorAccessor(dst_args, dst_addr, tile_bytes)

    out_subblock_tiles = out_subblock_h * out_subblock_w
    for nb in range(0, Nt, in1_block_w):
        for mb in range(0, Mt, out_subblock_h):
            for sb in range(nb, nb + in1_block_w, out_subblock_w):
                cb_wait_front(cb_id_out, out_subblock_tiles)
                l1_read_addr = get_read_ptr(cb_id_out)
                for r in range(out_subblock_h):
                    row = (m0 + mb + r) * Nt_total + n0 + sb
                    for c_tile in range(row, row + out_subblock_w):
                        noc_async_write_page(c_tile, s, l1_read_addr)
                        l1_read_addr += tile_bytes
                noc_async_writes_flushed()
                cb_pop_front(cb_id_out, out_subblock_tiles)
    noc_async_write_barrier()
