"""Element-wise binary compute kernel (TT-NN ``eltwise_binary_kernel.cpp``): tiles of CB c_0
and CB c_1 combined on the FPU into DST, packed to CB c_16, a block of tiles per DST acquire.

Compile-time args: ``[per_core_block_cnt, per_core_block_size]``; ``per_core_block_size`` tiles
must fit in one ``tile_regs_acquire`` (8 bfloat16 / 4 float32 tiles in half-sync mode).

:func:`compute_for` gives the kernel of one operation (``add``, ``sub`` or ``mul``): where the
C++ kernel selects ``add_tiles`` / ``sub_tiles`` / ``mul_tiles`` with a define, the Python
kernel closes over the chosen API functions, so each emitted kernel calls exactly one.
"""

from functools import cache

from tilefold.errors import ProgramError
from tilefold.pykernel import *

CB_IN0 = CBIndex.c_0
CB_IN1 = CBIndex.c_1
CB_OUT = CBIndex.c_16

BINARY_OPS = {
    "add": (add_tiles_init, add_tiles),
    "sub": (sub_tiles_init, sub_tiles),
    "mul": (mul_tiles_init, mul_tiles),
}


@cache
def compute_for(op: str):
    """The compute kernel of ``op`` (one of :data:`BINARY_OPS`), built once per operation."""
    if op not in BINARY_OPS:
        raise ProgramError(f"eltwise op {op!r} is not one of {', '.join(BINARY_OPS)}")
    binary_tiles_init, binary_tiles = BINARY_OPS[op]

    @compute_kernel
    def compute():
        per_core_block_cnt = get_compile_time_arg_val(0)
        per_core_block_size = get_compile_time_arg_val(1)
        binary_op_init_common(CB_IN0, CB_IN1, CB_OUT)
        binary_tiles_init(CB_IN0, CB_IN1)
        for block in range(per_core_block_cnt):
            cb_wait_front(CB_IN0, per_core_block_size)
            cb_wait_front(CB_IN1, per_core_block_size)
            cb_reserve_back(CB_OUT, per_core_block_size)
            tile_regs_acquire()
            for i in range(per_core_block_size):
                binary_tiles(CB_IN0, CB_IN1, i, i, i)
            tile_regs_commit()
            tile_regs_wait()
            for i in range(per_core_block_size):
                pack_tile(i, CB_OUT)
            tile_regs_release()
            cb_pop_front(CB_IN0, per_core_block_size)
            cb_pop_front(CB_IN1, per_core_block_size)
            cb_push_back(CB_OUT, per_core_block_size)

    return compute.build()
