"""A copy program with a classic bug: the reader hands a page to the compute kernel before its
``noc_async_read`` has completed (the barrier comes after ``cb_push_back``). On hardware this
sometimes works and sometimes copies stale data; the simulated device reports it every time,
naming the line of the push and the line of the read.

Run it: ``python examples/pykernel/missing_barrier.py``.
"""

import numpy as np

from tilefold.arch.cores import CoreCoord
from tilefold.program import ComputeConfig, DataMovementConfig, Program
from tilefold.pykernel import *

CB_IN = CBIndex.c_0
CB_OUT = CBIndex.c_16


@reader_kernel
def reader():
    src = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(0), src, get_tile_size(CB_IN))
    for i in range(n):
        cb_reserve_back(CB_IN, 1)
        noc_async_read_page(i, s, get_write_ptr(CB_IN))
        cb_push_back(CB_IN, 1)          # bug: the read may not have landed yet
        noc_async_read_barrier()


@compute_kernel
def copy():
    n = get_arg_val(0)
    unary_op_init_common(CB_IN, CB_OUT)
    copy_tile_init(CB_IN)
    for i in range(n):
        cb_wait_front(CB_IN, 1)
        tile_regs_acquire()
        copy_tile(CB_IN, 0, 0)
        tile_regs_commit()
        tile_regs_wait()
        cb_reserve_back(CB_OUT, 1)
        pack_tile(0, CB_OUT)
        cb_push_back(CB_OUT, 1)
        tile_regs_release()
        cb_pop_front(CB_IN, 1)


@writer_kernel
def writer():
    dst = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(2), dst, get_tile_size(CB_OUT))
    for i in range(n):
        cb_wait_front(CB_OUT, 1)
        noc_async_write_page(i, s, get_read_ptr(CB_OUT))
        noc_async_writes_flushed()
        cb_pop_front(CB_OUT, 1)
    noc_async_write_barrier()


def copy_program(shape=(64, 64)) -> Program:
    prog = Program("copy")
    src = prog.add_buffer("src", shape, "bfloat16")
    dst = prog.add_buffer("dst", shape, "bfloat16", role="output")
    core = CoreCoord(0, 0)
    for index in (CB_IN, CB_OUT):
        prog.create_circular_buffer(core, index, src.page_size, 2, "bfloat16")
    ct = [src.accessor_args, dst.accessor_args]
    r = prog.create_kernel(reader, core, DataMovementConfig("RISCV_0"), ct)
    c = prog.create_kernel(copy, core, ComputeConfig())
    w = prog.create_kernel(writer, core, DataMovementConfig("RISCV_1"), ct)
    prog.set_runtime_args(r, core, [src.address, src.num_pages])
    prog.set_runtime_args(c, core, [src.num_pages])
    prog.set_runtime_args(w, core, [dst.address, dst.num_pages])
    return prog


if __name__ == "__main__":
    from tilefold.errors import TilefoldError
    from tilefold.sim import Device

    try:
        Device().run(copy_program(), {"src": np.ones((64, 64), np.float32)})
    except TilefoldError as err:
        print(err)
