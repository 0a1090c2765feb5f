"""Element-wise exp in PyKernel: read tiles, exp them in DST, write them back.

Shows the compute-kernel tile-register protocol (acquire, math, commit, wait, pack,
release) that tilefold verifies when the kernel is parsed.

Reader   compile-time args: [*TensorAccessorArgs(src)]; runtime args: [src_addr, num_tiles, start_id]
Compute  compile-time args: [num_tiles]
Writer   compile-time args: [*TensorAccessorArgs(dst)]; runtime args: [dst_addr, num_tiles, start_id]

``exp_program`` is the host side: the tiles are split over a row of cores. Run this file
to compute exp of a random tensor on the simulated device and compare it with numpy.
"""

import numpy as np

from tilefold.arch.cores import CoreCoord, CoreRange
from tilefold.program import BufferAddress, ComputeConfig, DataMovementConfig, Program, TensorAccessorArgsRef
from tilefold.pykernel import *

CB_IN = CBIndex.c_0
CB_OUT = CBIndex.c_16


@reader_kernel
def reader_unary_interleaved_start_id():
    src_addr = get_arg_val(0)
    num_tiles = get_arg_val(1)
    start_id = get_arg_val(2)
    s = TensorAccessor(TensorAccessorArgs(0), src_addr, get_tile_size(CB_IN))
    for i in range(start_id, start_id + num_tiles):
        cb_reserve_back(CB_IN, 1)
        noc_async_read_page(i, s, get_write_ptr(CB_IN))
        noc_async_read_barrier()
        cb_push_back(CB_IN, 1)


@compute_kernel
def exp_tiles():
    num_tiles = get_compile_time_arg_val(0)
    init_sfpu(CB_IN, CB_OUT)
    copy_tile_init(CB_IN)
    exp_tile_init()
    for t in range(num_tiles):
        cb_wait_front(CB_IN, 1)
        tile_regs_acquire()
        copy_tile(CB_IN, 0, 0)
        exp_tile(0)
        tile_regs_commit()
        cb_pop_front(CB_IN, 1)

        cb_reserve_back(CB_OUT, 1)
        tile_regs_wait()
        pack_tile(0, CB_OUT)
        tile_regs_release()
        cb_push_back(CB_OUT, 1)


@writer_kernel
def writer_unary_interleaved():
    dst_addr = get_arg_val(0)
    num_tiles = get_arg_val(1)
    start_id = get_arg_val(2)
    s = TensorAccessor(TensorAccessorArgs(0), dst_addr, get_tile_size(CB_OUT))
    for i in range(start_id, start_id + num_tiles):
        cb_wait_front(CB_OUT, 1)
        noc_async_write_page(i, s, get_read_ptr(CB_OUT))
        noc_async_writes_flushed()
        cb_pop_front(CB_OUT, 1)
    noc_async_write_barrier()


KERNELS = (reader_unary_interleaved_start_id, exp_tiles, writer_unary_interleaved)


def exp_program(shape, dtype="bfloat16", num_cores=4) -> Program:
    """exp of the tile-layout buffer ``src`` into ``dst``; ``num_cores`` must divide the tile count."""
    program = Program("exp")
    src = program.add_buffer("src", shape, dtype, layout="TILE", role="input")
    program.add_buffer("dst", shape, dtype, layout="TILE", role="output")
    tiles_per_core = src.num_pages // num_cores
    cores = CoreRange(CoreCoord(0, 0), CoreCoord(num_cores - 1, 0))
    for cb in (CB_IN, CB_OUT):
        program.create_circular_buffer(cores, int(cb), src.page_size, 2, dtype)
    reader = program.create_kernel(reader_unary_interleaved_start_id, cores, DataMovementConfig("RISCV_0"),
                                   [TensorAccessorArgsRef("src")])
    program.create_kernel(exp_tiles, cores, ComputeConfig(), [tiles_per_core])
    writer = program.create_kernel(writer_unary_interleaved, cores, DataMovementConfig("RISCV_1"),
                                   [TensorAccessorArgsRef("dst")])
    for i in range(num_cores):
        program.set_runtime_args(reader, (i, 0), [BufferAddress("src"), tiles_per_core, i * tiles_per_core])
        program.set_runtime_args(writer, (i, 0), [BufferAddress("dst"), tiles_per_core, i * tiles_per_core])
    return program


if __name__ == "__main__":
    import ml_dtypes

    from tilefold.sim import Device

    x = np.random.default_rng(0).uniform(-4, 4, (128, 256)).astype(np.float32)
    result = Device().run(exp_program(x.shape), {"src": x})
    bf16 = ml_dtypes.bfloat16
    expected = np.exp(x.astype(bf16).astype(np.float32)).astype(bf16).astype(np.float32)
    ulps = np.max(np.abs(result.outputs["dst"] - expected) / np.abs(expected)) * 2**8
    print(f"exp of {x.shape} on 4 simulated cores: within {ulps:.2f} bfloat16 ulp of numpy; "
          f"estimated {result.perf.cycles:.0f} cycles (cost model)")
