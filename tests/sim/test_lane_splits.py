"""Cores whose steering values differ (each core's own first tile, a bound checked on every
iteration) start as lanes of one thread and split only where their control flow diverges: the
same bytes, cycles and per-core clocks as one core per thread, in fewer threads."""

from __future__ import annotations

import numpy as np
import pytest

from tilefold.pykernel import *  # noqa: F403
from tilefold.sim.device import Device

from simhelpers import grid, random_tiles, tile_program

PER_CORE = 2          # tiles each core is given; the last cores' tiles may lie past the tensor's end


@reader_kernel
def read_mine():
    src = get_arg_val(0)
    first = get_arg_val(1)
    total = get_arg_val(2)
    s = TensorAccessor(TensorAccessorArgs(0), src, get_tile_size(0))
    for i in range(2):
        if first + i < total:
            cb_reserve_back(0, 1)
            noc_async_read_page(first + i, s, get_write_ptr(0))
            noc_async_read_barrier()
            cb_push_back(0, 1)


@compute_kernel
def copy_mine():
    first = get_arg_val(0)
    total = get_arg_val(1)
    unary_op_init_common(0, 16)
    copy_tile_init(0)
    for i in range(2):
        if first + i < total:
            cb_wait_front(0, 1)
            cb_reserve_back(16, 1)
            tile_regs_acquire()
            copy_tile(0, 0, 0)
            tile_regs_commit()
            tile_regs_wait()
            pack_tile(0, 16)
            tile_regs_release()
            cb_push_back(16, 1)
            cb_pop_front(0, 1)


@writer_kernel
def write_mine():
    dst = get_arg_val(0)
    first = get_arg_val(1)
    total = get_arg_val(2)
    s = TensorAccessor(TensorAccessorArgs(after=TensorAccessorArgs(0)), dst, get_tile_size(16))
    for i in range(2):
        if first + i < total:
            cb_wait_front(16, 1)
            noc_async_write_page(first + i, s, get_read_ptr(16))
            noc_async_write_barrier()
            cb_pop_front(16, 1)


def program(cores: int, tiles: int):
    shape = (32, 32 * tiles)
    prog, bufs = tile_program(
        read_mine, copy_mine, write_mine, cores=grid(cores),
        buffers=(("src", shape, "input"), ("dst", shape, "output")),
        reader_args=lambda b, i, c: [b["src"].address, i * PER_CORE, tiles],
        compute_args=lambda b, i, c: [i * PER_CORE, tiles],
        writer_args=lambda b, i, c: [b["dst"].address, i * PER_CORE, tiles])
    return prog, shape


def threads_per_kernel(result) -> dict[str, int]:
    counts: dict[str, int] = {}
    for t in result.perf.threads:
        counts[t.role] = counts.get(t.role, 0) + 1
    return counts


@pytest.mark.parametrize("cores, tiles, threads", [
    (8, 16, 1),     # every core's bound holds: one thread per kernel, no split
    (8, 13, 3),     # cores 0-5 copy two tiles, core 6 one, core 7 none: three groups
])
def test_cores_split_where_they_diverge(cores, tiles, threads):
    prog, shape = program(cores, tiles)
    x = random_tiles(shape)
    batched = Device().run(prog, {"src": x})
    single = Device().run(prog, {"src": x}, batch=False)
    np.testing.assert_array_equal(batched.outputs["dst"], x)
    np.testing.assert_array_equal(single.outputs["dst"], x)
    assert batched.perf.cycles == single.perf.cycles
    assert per_core(batched) == per_core(single)
    assert set(threads_per_kernel(batched).values()) == {threads}
    assert set(threads_per_kernel(single).values()) == {cores}


def per_core(result) -> list[tuple]:
    return sorted((t.role, str(c), float(end), float(busy)) for t in result.perf.threads
                  for c, end, busy in zip(t.cores, t.end_cycles, t.busy_cycles))
