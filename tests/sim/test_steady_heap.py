"""During a run freed arrays stay mapped: allocating block-sized arrays again does not fault in
their pages again. After the run glibc's defaults are back and the heap is trimmed."""

from __future__ import annotations

import resource

import numpy as np
import pytest

from tilefold.sim import steady_heap as heap


ROUNDS, ARRAYS, MIB = 12, 4, 3           # 3 MiB: below the size numpy asks huge pages for
PAGES = ARRAYS * MIB * 1024 * 1024 // 4096   # 4 KiB pages touched per round


def _faults_of_repeated_arrays() -> int:
    """Page faults of rounds that each allocate a few block-sized arrays, touch and free them."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(ROUNDS):
        arrays = [np.empty(MIB * 1024 * 1024, np.uint8) for _ in range(ARRAYS)]
        for values in arrays:
            values[::4096] = 1                   # touch every page
        del arrays, values
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


@pytest.mark.skipif(not heap._glibc(), reason="the C library is not glibc")
def test_freed_arrays_stay_mapped_during_a_run():
    # (outside a run, glibc's defaults give them back: how often depends on what the process did
    # before and on the kernel's huge pages — in a fresh process every round faults its pages in)
    with heap.steady_heap():
        inside = _faults_of_repeated_arrays()
    assert inside <= 2 * PAGES                   # only the first round faults its pages in


def test_a_run_keeps_the_heap(monkeypatch):
    calls: list[tuple] = []
    if heap._glibc():
        class Recorder:
            def mallopt(self, *args):
                calls.append(("mallopt",) + args)
                return 1

            def malloc_trim(self, *args):
                calls.append(("trim",) + args)
                return 1
        monkeypatch.setattr(heap, "_libc", Recorder())
        with heap.steady_heap():
            calls.append(("body",))
        assert calls[:2] == [("mallopt", heap.M_MMAP_THRESHOLD, heap.RUN_MMAP_THRESHOLD),
                             ("mallopt", heap.M_TRIM_THRESHOLD, heap.RUN_TRIM_THRESHOLD)]
        assert calls[2] == ("body",) and calls[-1] == ("trim", 0)
    else:
        with heap.steady_heap():
            calls.append(("body",))
        assert calls == [("body",)]
