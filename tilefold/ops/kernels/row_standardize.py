"""row_standardize compute kernel: each block of 32 rows is tilized, standardized per row and
untilized again.

For each block (``Wt`` tiles of one tile row): ``tilize_block`` c_0 → c_1; the row means
``reduce_tile`` (SUM over rows, times the scaler ``1 / W`` of c_2) → c_3; ``x − mean``
(``sub_tiles_bcast_cols``) → c_4; its squares (``mul_tiles``) → c_5; the variance (the same
reduce) plus ``eps``, then ``rsqrt`` on the SFPU → c_6; ``(x − mean) · rsqrt(var + eps)``
(``mul_tiles_bcast_cols``) → c_16; ``untilize_block`` c_16 → c_17.

Compile-time args: ``[num_blocks, Wt, eps_bits]`` (``eps_bits``: the float32 bits of ``eps``).
"""

from tilefold.pykernel import *

CB_IN = CBIndex.c_0
CB_X = CBIndex.c_1
CB_SCALER = CBIndex.c_2
CB_MEAN = CBIndex.c_3
CB_XM = CBIndex.c_4
CB_SQ = CBIndex.c_5
CB_INV = CBIndex.c_6
CB_Y = CBIndex.c_16
CB_OUT = CBIndex.c_17


@compute_kernel
def compute():
    num_blocks = get_compile_time_arg_val(0)
    Wt = get_compile_time_arg_val(1)
    eps_bits = get_compile_time_arg_val(2)

    compute_kernel_hw_startup(CB_IN, CB_OUT)
    cb_wait_front(CB_SCALER, 1)
    for b in range(num_blocks):
        # row-major block -> tiles
        tilize_init(CB_IN, Wt, CB_X)
        cb_wait_front(CB_IN, Wt)
        cb_reserve_back(CB_X, Wt)
        tilize_block(CB_IN, Wt, CB_X)
        cb_push_back(CB_X, Wt)
        cb_pop_front(CB_IN, Wt)
        tilize_uninit(CB_IN, CB_X)

        # mean of each row: sum of x / W into column 0
        cb_wait_front(CB_X, Wt)
        reduce_init(CB_X, CB_SCALER, CB_MEAN, pool_type="SUM", reduce_dim="REDUCE_ROW")
        tile_regs_acquire()
        for w in range(Wt):
            reduce_tile(CB_X, CB_SCALER, w, 0, 0, pool_type="SUM", reduce_dim="REDUCE_ROW")
        tile_regs_commit()
        cb_reserve_back(CB_MEAN, 1)
        tile_regs_wait()
        pack_tile(0, CB_MEAN)
        tile_regs_release()
        cb_push_back(CB_MEAN, 1)
        reduce_uninit()

        # x - mean
        cb_wait_front(CB_MEAN, 1)
        sub_bcast_cols_init_short(CB_X, CB_MEAN)
        cb_reserve_back(CB_XM, Wt)
        for w in range(Wt):
            tile_regs_acquire()
            sub_tiles_bcast_cols(CB_X, CB_MEAN, w, 0, 0)
            tile_regs_commit()
            tile_regs_wait()
            pack_tile(0, CB_XM)
            tile_regs_release()
        cb_push_back(CB_XM, Wt)
        cb_pop_front(CB_X, Wt)
        cb_pop_front(CB_MEAN, 1)

        # (x - mean)^2
        cb_wait_front(CB_XM, Wt)
        mul_tiles_init(CB_XM, CB_XM)
        cb_reserve_back(CB_SQ, Wt)
        for w in range(Wt):
            tile_regs_acquire()
            mul_tiles(CB_XM, CB_XM, w, w, 0)
            tile_regs_commit()
            tile_regs_wait()
            pack_tile(0, CB_SQ)
            tile_regs_release()
        cb_push_back(CB_SQ, Wt)

        # rsqrt(variance + eps)
        cb_wait_front(CB_SQ, Wt)
        reduce_init(CB_SQ, CB_SCALER, CB_INV, pool_type="SUM", reduce_dim="REDUCE_ROW")
        tile_regs_acquire()
        for w in range(Wt):
            reduce_tile(CB_SQ, CB_SCALER, w, 0, 0, pool_type="SUM", reduce_dim="REDUCE_ROW")
        reduce_uninit()
        binop_with_scalar_tile_init()
        add_unary_tile(0, eps_bits)
        rsqrt_tile_init()
        rsqrt_tile(0)
        tile_regs_commit()
        cb_reserve_back(CB_INV, 1)
        tile_regs_wait()
        pack_tile(0, CB_INV)
        tile_regs_release()
        cb_push_back(CB_INV, 1)
        cb_pop_front(CB_SQ, Wt)

        # (x - mean) * rsqrt(var + eps)
        cb_wait_front(CB_INV, 1)
        mul_bcast_cols_init_short(CB_XM, CB_INV)
        cb_reserve_back(CB_Y, Wt)
        for w in range(Wt):
            tile_regs_acquire()
            mul_tiles_bcast_cols(CB_XM, CB_INV, w, 0, 0)
            tile_regs_commit()
            tile_regs_wait()
            pack_tile(0, CB_Y)
            tile_regs_release()
        cb_push_back(CB_Y, Wt)
        cb_pop_front(CB_XM, Wt)
        cb_pop_front(CB_INV, 1)

        # tiles -> row-major block
        untilize_init(CB_Y)
        cb_wait_front(CB_Y, Wt)
        cb_reserve_back(CB_OUT, Wt)
        untilize_block(CB_Y, Wt, CB_OUT)
        cb_push_back(CB_OUT, Wt)
        cb_pop_front(CB_Y, Wt)
        untilize_uninit(CB_Y)
    cb_pop_front(CB_SCALER, 1)
