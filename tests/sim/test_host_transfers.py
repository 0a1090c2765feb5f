"""Host ↔ device transfers of interleaved DRAM buffers: pages land in the bank slots the kernels'
TensorAccessor reads (page p in bank p % banks) and come back in order, for page counts below,
at and above a multiple of the bank count."""

from __future__ import annotations

import numpy as np
import pytest

from tilefold.layout.host import to_device_pages
from tilefold.pykernel import *  # noqa: F403
from tilefold.sim import Device

from simhelpers import random_tiles, tile_program

CB = 0


@reader_kernel
def read_pages():
    src = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(0), src, get_tile_size(CB))
    for i in range(n):
        cb_reserve_back(CB, 1)
        noc_async_read_page(i, s, get_write_ptr(CB))
        noc_async_read_barrier()
        cb_push_back(CB, 1)


@writer_kernel
def write_pages():
    dst = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(2), dst, get_tile_size(CB))
    for i in range(n):
        cb_wait_front(CB, 1)
        noc_async_write_page(i, s, get_read_ptr(CB))
        noc_async_write_barrier()
        cb_pop_front(CB, 1)


@pytest.mark.parametrize("tiles", [5, 12, 29, 48])
def test_pages_round_trip_through_the_banks(tiles):
    shape = (32, 32 * tiles)
    x = random_tiles(shape, tiles)
    prog, bufs = tile_program(read_pages, None, write_pages, cbs=((CB, 2),),
                              buffers=(("src", shape, "input"), ("dst", shape, "output")),
                              reader_args=lambda b, i, c: [b["src"].address, tiles],
                              writer_args=lambda b, i, c: [b["dst"].address, tiles])
    result = Device().run(prog, {"src": x})
    assert np.array_equal(result.outputs["dst"], x)
    assert np.array_equal(result.pages["dst"], to_device_pages(x, "bfloat16"))
