"""Matmul reader for one core's ``Mt × Nt`` tile block of the output (the whole output on a single
core): B in column blocks of ``Kt × in1_block_w`` tiles into CB c_1, each read once; for every
column block, A in row blocks of ``out_subblock_h × Kt`` tiles into CB c_0. Both blocks are
row-major in their CB, as ``matmul_block`` reads them.

Compile-time args: ``[*TensorAccessorArgs(src0), *TensorAccessorArgs(src1)]``.
Runtime args: ``[src0_addr, src1_addr, Mt, Kt, Nt, out_subblock_h, in1_block_w, m0, n0, Nt_total]``
(sizes in tiles; the core's block starts at output tile row ``m0`` and column ``n0``; A is
``· × Kt`` tiles, B ``Kt × Nt_total``, both tile layout, pages in row-major tile order). When
``in1_block_w = Nt`` the core reads its B columns once and its A rows once.
"""

from tilefold.pykernel import *

CB_IN0 = CBIndex.c_0
CB_IN1 = CBIndex.c_1


@reader_kernel
def reader():
    src0_addr = get_arg_val(0)
    src1_addr = get_arg_val(1)
    Mt = get_arg_val(2)
    Kt = get_arg_val(3)
    Nt = get_arg_val(4)
    out_subblock_h = get_arg_val(5)
    in1_block_w = get_arg_val(6)
    m0 = get_arg_val(7)
    n0 = get_arg_val(8)
    Nt_total = get_arg_val(9)

    src0_args = TensorAccessorArgs(0)
    src1_args = TensorAccessorArgs(after=src0_args)
    in0_tile_bytes = get_tile_size(CB_IN0)
    in1_tile_bytes = get_tile_size(CB_IN1)
    s0 = TensorAccessor(src0_args, src0_addr, in0_tile_bytes)
    s1 = TensorAccessor(src1_args, src1_addr, in1_tile_bytes)

    in0_block_tiles = out_subblock_h * Kt
    in1_block_tiles = Kt * in1_block_w
    for nb in range(0, Nt, in1_block_w):
        # B columns nb .. nb + in1_block_w, every K tile, row by row
        cb_reserve_back(CB_IN1, in1_block_tiles)
        l1_write_addr = get_write_ptr(CB_IN1)
        for k in range(Kt):
            row = k * Nt_total + n0 + nb
            for b_tile in range(row, row + in1_block_w):
                noc_async_read_page(b_tile, s1, l1_write_addr)
                l1_write_addr += in1_tile_bytes
        noc_async_read_barrier()
        cb_push_back(CB_IN1, in1_block_tiles)
        for mb in range(0, Mt, out_subblock_h):
            # A rows mb .. mb + out_subblock_h, every K tile: consecutive pages of A
            cb_reserve_back(CB_IN0, in0_block_tiles)
            l1_write_addr = get_write_ptr(CB_IN0)
            first = (m0 + mb) * Kt
            for a_tile in range(first, first + in0_block_tiles):
                noc_async_read_page(a_tile, s0, l1_write_addr)
                l1_write_addr += in0_tile_bytes
            noc_async_read_barrier()
            cb_push_back(CB_IN0, in0_block_tiles)
