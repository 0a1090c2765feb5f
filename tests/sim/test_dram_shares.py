"""DRAM bandwidth shared by bytes: cores that read more get more of the board's bandwidth."""

import numpy as np
import pytest

from tilefold.arch import get_arch
from tilefold.pykernel import *  # noqa: F403
from tilefold.sim import Device
from tilefold.sim.dram_shares import board_bytes_per_cycle, dram_shares, needs_reshare

from simhelpers import grid, random_tiles, tile_program

PAGES = 48         # a multiple of the 12 banks: no bank serves more than its part
TILE = 32 * 32 * 2


@reader_kernel
def read_pages():
    src = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(0), src, get_tile_size(0))
    cb_reserve_back(0, n)
    for i in range(n):
        noc_async_read_page(i, s, get_write_ptr(0) + i * get_tile_size(0))
    noc_async_read_barrier()


def uneven_readers(light: int):
    """24 cores on n150: the first 12 read ``PAGES`` pages of the input, the other 12 ``light``."""
    return tile_program(read_pages, cores=grid(8, 3), cbs=((0, PAGES),),
                        buffers=(("src", (32, 32 * PAGES), "input"),),
                        reader_args=lambda bufs, i, core: [bufs["src"].address, PAGES if i < 12 else light])[0]


def test_shares_follow_bytes_never_below_equal_nor_above_one_core():
    arch = get_arch("n150")
    board = board_bytes_per_cycle(arch)
    equal = board / 24
    same = dram_shares(equal, arch, np.full(24, 1000.0))
    assert np.allclose(same, equal) and not needs_reshare(equal, same)
    uneven = dram_shares(equal, arch, np.array([48.0] * 12 + [12.0] * 12))
    assert np.allclose(uneven[:12], board * 48 / 720) and np.allclose(uneven[12:], equal)
    assert needs_reshare(equal, uneven)
    one_heavy = dram_shares(equal, arch, np.array([400.0] + [1.0] * 23))
    assert one_heavy[0] == arch.costs.dram_core_bytes_per_cycle


def test_heavy_readers_end_near_the_board_bound(monkeypatch):
    prog = uneven_readers(light=12)
    x = random_tiles((32, 32 * PAGES))
    shared = Device().run(prog, {"src": x}).perf.cycles
    monkeypatch.setattr("tilefold.sim.device.needs_reshare", lambda equal, shares: False)
    equal = Device().run(prog, {"src": x}).perf.cycles
    arch = get_arch("n150")
    board_bound = (12 * PAGES + 12 * 12) * TILE / board_bytes_per_cycle(arch)
    equal_bound = PAGES * TILE / (board_bytes_per_cycle(arch) / 24)
    assert equal >= equal_bound
    assert board_bound <= shared < 0.75 * equal
    assert shared == pytest.approx(board_bound, rel=0.15)


def test_equal_readers_run_once(monkeypatch):
    calls = []
    real = Device._attempt

    def counted(self, *args, **kwargs):
        calls.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Device, "_attempt", counted)
    Device().run(uneven_readers(light=PAGES), {"src": random_tiles((32, 32 * PAGES))})
    assert len(calls) == 1
