"""Semaphore writes to a different word per lane: the simulator keeps each word's landing time and
previous value, so a poll of one of those words before the write lands sees the previous value
(a device-level check), and remote increments of one semaphore per sender core land where they
should (a program of three cores)."""

from __future__ import annotations

import numpy as np

from simhelpers import grid, tile_program
from tilefold.arch import get_arch
from tilefold.arch.cores import CoreCoord
from tilefold.program import DataMovementConfig, NocX, NocY, Program
from tilefold.pykernel import *  # noqa: F403
from tilefold.sim import Device
from tilefold.sim.device import _Run


def test_a_write_to_a_word_per_lane_keeps_each_words_previous_value():
    program, _ = tile_program(cores=grid(2), cbs=(), semaphores=2)
    run = _Run(program, get_arch(None), False)
    first, second = (run.allocation.semaphore_address(i) for i in range(2))
    rows = np.array([0, 1])
    run.sem_time_note(rows, np.array([first, second]), 100.0, np.array([3, 4]))
    now = np.array([9])
    assert run.sem_visible(np.array([0]), first, now, 50.0).tolist() == [3]
    assert run.sem_visible(np.array([1]), second, now, 50.0).tolist() == [4]
    assert run.sem_visible(np.array([1]), second, now, 150.0).tolist() == [9]
    assert run.sem_visible(np.array([1]), first, now, 50.0).tolist() == [9]     # core 1's first word: not written


@reader_kernel
def raise_own_flag():
    me = get_arg_val(0)
    x = get_arg_val(1)
    y = get_arg_val(2)
    if me == 0:
        noc_semaphore_wait(get_semaphore(1), 5)
        noc_semaphore_wait(get_semaphore(2), 5)
    else:
        own = get_semaphore(1) + (me - 1) * 16    # semaphore me: one word per lane
        for _ in range(5):
            noc_semaphore_inc(get_noc_addr_xy(x, y, own), 1)


def test_remote_increments_of_a_semaphore_per_sender_land_on_their_own_words(monkeypatch):
    """Cores 1 and 2 (lanes of one thread) increment semaphores 1 and 2 of core 0 five times; core
    0 waits for both. Each word's recorded previous value is 4, the count before the last
    increment (it was recorded at semaphore 1 only)."""
    runs = []
    note = _Run.sem_time_note

    def noting(self, *args, **kwargs):
        runs.append(self)
        return note(self, *args, **kwargs)

    monkeypatch.setattr(_Run, "sem_time_note", noting)
    cores = grid(3)
    program = Program("flags")
    for _ in range(3):
        program.create_semaphore(cores, 0)
    home = CoreCoord(0, 0)
    k = program.create_kernel(raise_own_flag, cores, DataMovementConfig("RISCV_0"), [])
    for i, core in enumerate(cores.cores()):
        program.set_runtime_args(k, core, [i, NocX(home), NocY(home)])
    Device().run(program, {})
    run = runs[-1]
    for sid in (1, 2):
        assert run._sem_before[run.allocation.semaphore_address(sid)][0] == 4, sid
