"""row_standardize reader: the reduce scaler tile, then blocks of 32 row-major sticks.

First it fills CB c_2 with the scaler tile ``reduce_tile`` multiplies by (``1 / W`` in the first
row of each face, zeros elsewhere, as TT-Metal's ``generate_reduce_scaler`` writes it). Then, for
each block of 32 rows (one tile row), it reads the 32 sticks of ``stick_size`` bytes into the
``Wt`` reserved pages of CB c_0, a ``32 × W`` row-major block as ``tilize_block`` takes it.

Compile-time args: ``[stick_size, *TensorAccessorArgs(src)]``.
Runtime args: ``[src_addr, num_blocks, Wt, start_stick_id, scaler_bits]`` (``scaler_bits``: two
bfloat16 copies of ``1 / W`` in one 32-bit word).
"""

from tilefold.pykernel import *

TILE_HEIGHT = 32
CB_IN = CBIndex.c_0
CB_SCALER = CBIndex.c_2


@reader_kernel
def reader():
    src_addr = get_arg_val(0)
    num_blocks = get_arg_val(1)
    Wt = get_arg_val(2)
    start_stick_id = get_arg_val(3)
    scaler_bits = get_arg_val(4)

    stick_size = get_compile_time_arg_val(0)
    s = TensorAccessor(TensorAccessorArgs(1), src_addr, stick_size)

    cb_reserve_back(CB_SCALER, 1)
    words = l1_ptr(get_write_ptr(CB_SCALER))
    for i in range(512):
        words[i] = 0
    for face in range(4):
        for j in range(8):
            words[face * 128 + j] = scaler_bits
    cb_push_back(CB_SCALER, 1)

    stick_id = start_stick_id
    for b in range(num_blocks):
        cb_reserve_back(CB_IN, Wt)
        l1_write_addr = get_write_ptr(CB_IN)
        for k in range(TILE_HEIGHT):
            noc_async_read(get_noc_addr(stick_id, s), l1_write_addr, stick_size)
            l1_write_addr += stick_size
            stick_id += 1
        noc_async_read_barrier()
        cb_push_back(CB_IN, Wt)
