"""Two cores writing the same DRAM page with nothing ordering them: a race, reported with both lines,
unless both write the same bytes (a result computed redundantly on every core). So are a read and
a write of one page by two cores, in either order, unless a semaphore orders the two."""

from __future__ import annotations

import numpy as np
import pytest

from tilefold.errors import NocHazardError
from tilefold.program import ComputeConfig, DataMovementConfig, NocX, NocY, Program
from tilefold.pykernel import *  # noqa: F403
from tilefold.sim import Device

from simhelpers import grid, random_tiles, where
from test_hazards import CB_IN, CB_OUT, copy_compute


@writer_kernel
def writer_to_page():
    dst = get_arg_val(0)
    n = get_arg_val(1)
    first = get_arg_val(2)
    s = TensorAccessor(TensorAccessorArgs(2), dst, get_tile_size(CB_OUT))
    for i in range(n):
        cb_wait_front(CB_OUT, 1)
        noc_async_write_page(first + i, s, get_read_ptr(CB_OUT))
        noc_async_write_barrier()
        cb_pop_front(CB_OUT, 1)


def _two_cores(second_first: int, batch: bool = True, same_source: bool = False):
    """Core i reads page i of ``src`` (page 0 on both when ``same_source``) and writes it to page
    0 (core 0) or ``second_first`` (core 1) of ``dst``."""
    prog = Program("race")
    src = prog.add_buffer("src", (32, 64), "bfloat16")
    dst = prog.add_buffer("dst", (32, 32 if same_source else 64), "bfloat16", role="output")
    cores = grid(2)
    prog.create_circular_buffer(cores, CB_IN, 2048, 2, "bfloat16")
    prog.create_circular_buffer(cores, CB_OUT, 2048, 2, "bfloat16")
    ct = [src.accessor_args, dst.accessor_args]
    r = prog.create_kernel(read_one_page, cores, DataMovementConfig("RISCV_0"), ct)
    c = prog.create_kernel(copy_compute, cores, ComputeConfig())
    w = prog.create_kernel(writer_to_page, cores, DataMovementConfig("RISCV_1"), ct)
    for i, core in enumerate(cores.cores()):
        prog.set_runtime_args(r, core, [src.address, 0 if same_source else i])
        prog.set_runtime_args(c, core, [1])
        prog.set_runtime_args(w, core, [dst.address, 1, 0 if i == 0 else second_first])
    x = random_tiles((32, 64))
    result = Device().run(prog, {"src": x}, batch=batch)
    result.source = x
    return result


@pytest.mark.parametrize("batch", [True, False])
def test_two_cores_writing_one_page_race(batch):
    with pytest.raises(NocHazardError) as err:
        _two_cores(0, batch)
    text = str(err.value)
    line = where(writer_to_page, "noc_async_write_page(first + i")
    assert text.startswith(line)
    assert "race: noc_async_write_page writes bytes of buffer 'dst' that core (0,0)" in text or \
        "race: noc_async_write_page writes bytes of buffer 'dst' that core (1,0)" in text


@pytest.mark.parametrize("batch", [True, False])
def test_two_cores_writing_the_same_bytes_to_one_page_run(batch):
    """Both cores write page 0 of src to page 0 of dst: whichever lands last, dst holds those bytes."""
    result = _two_cores(0, batch, same_source=True)
    assert result.hazards == []
    assert np.array_equal(result.outputs["dst"], result.source[:, :32])


def test_two_cores_writing_their_own_pages_run():
    result = _two_cores(1)
    assert result.hazards == []


@reader_kernel
def read_one_page():
    src = get_arg_val(0)
    page = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(0), src, get_tile_size(CB_IN))
    cb_reserve_back(CB_IN, 1)
    noc_async_read_page(page, s, get_write_ptr(CB_IN))
    noc_async_read_barrier()
    cb_push_back(CB_IN, 1)


@writer_kernel
def ordered_writer():
    """The signalling core writes page 0, then signals the other core; the other core waits for
    the signal (when ``wait``) and overwrites the page."""
    dst = get_arg_val(0)
    signals = get_arg_val(1)
    other_x = get_arg_val(2)
    other_y = get_arg_val(3)
    wait = get_arg_val(4)
    s = TensorAccessor(TensorAccessorArgs(2), dst, get_tile_size(CB_OUT))
    done = get_semaphore(0)
    cb_wait_front(CB_OUT, 1)
    if signals == 0:
        if wait == 1:
            noc_semaphore_wait(done, 1)
    noc_async_write_page(0, s, get_read_ptr(CB_OUT))
    noc_async_write_barrier()
    if signals == 1:
        noc_semaphore_inc(get_noc_addr_xy(other_x, other_y, done), 1)
    cb_pop_front(CB_OUT, 1)


def _ordered(wait: int, batch: bool):
    prog = Program("ordered")
    src = prog.add_buffer("src", (32, 64), "bfloat16")
    dst = prog.add_buffer("dst", (32, 32), "bfloat16", role="output")
    cores = grid(2)
    prog.create_circular_buffer(cores, CB_IN, 2048, 2, "bfloat16")
    prog.create_circular_buffer(cores, CB_OUT, 2048, 2, "bfloat16")
    prog.create_semaphore(cores, 0)
    ct = [src.accessor_args, dst.accessor_args]
    r = prog.create_kernel(read_one_page, cores, DataMovementConfig("RISCV_0"), ct)
    c = prog.create_kernel(copy_compute, cores, ComputeConfig())
    w = prog.create_kernel(ordered_writer, cores, DataMovementConfig("RISCV_1"), ct)
    first, second = cores.cores()
    for i, core in enumerate((first, second)):
        other = second if i == 0 else first
        prog.set_runtime_args(r, core, [src.address, i])
        prog.set_runtime_args(c, core, [1])
        prog.set_runtime_args(w, core, [dst.address, 1 - i, NocX(other), NocY(other), wait])
    x = random_tiles((32, 64))
    return x, Device().run(prog, {"src": x}, batch=batch)


@pytest.mark.parametrize("batch", [True, False])
def test_writes_ordered_by_a_semaphore_are_no_race(batch):
    """The second core waits for the first core's signal, sent after its write has landed: the
    second core's write comes last on hardware too, so the output is its tile (page 1 of src)."""
    x, result = _ordered(wait=1, batch=batch)
    assert result.hazards == []
    assert np.array_equal(result.outputs["dst"], x[:, 32:])


def test_the_same_writes_without_the_wait_race():
    with pytest.raises(NocHazardError) as err:
        _ordered(wait=0, batch=True)
    assert "race: noc_async_write_page writes bytes of buffer 'dst'" in str(err.value)


def _four_cores(sources: list[int], batch: bool):
    """Core i reads page ``sources[i]`` of ``src`` and writes it to page i // 2 of ``dst``: cores 0 and 1
    meet on page 0, cores 2 and 3 on page 1, in one call of one thread of lanes."""
    prog = Program("race4")
    src = prog.add_buffer("src", (32, 128), "bfloat16")
    dst = prog.add_buffer("dst", (32, 64), "bfloat16", role="output")
    cores = grid(4)
    prog.create_circular_buffer(cores, CB_IN, 2048, 2, "bfloat16")
    prog.create_circular_buffer(cores, CB_OUT, 2048, 2, "bfloat16")
    ct = [src.accessor_args, dst.accessor_args]
    r = prog.create_kernel(read_one_page, cores, DataMovementConfig("RISCV_0"), ct)
    c = prog.create_kernel(copy_compute, cores, ComputeConfig())
    w = prog.create_kernel(writer_to_page, cores, DataMovementConfig("RISCV_1"), ct)
    for i, core in enumerate(cores.cores()):
        prog.set_runtime_args(r, core, [src.address, sources[i]])
        prog.set_runtime_args(c, core, [1])
        prog.set_runtime_args(w, core, [dst.address, 1, i // 2])
    x = random_tiles((32, 128))
    return Device().run(prog, {"src": x}, batch=batch), x


@pytest.mark.parametrize("batch", [True, False])
def test_pairs_of_lanes_writing_the_same_bytes_to_their_page_run(batch):
    """Each page's two writers store the same bytes (a different page's bytes for each pair): no race."""
    result, x = _four_cores([0, 0, 3, 3], batch)
    assert result.hazards == []
    assert np.array_equal(result.outputs["dst"], np.concatenate([x[:, :32], x[:, 96:]], axis=1))


@pytest.mark.parametrize("batch", [True, False])
def test_a_pair_of_lanes_writing_different_bytes_to_one_page_race(batch):
    """The first pair agrees, the second does not: a race on page 1."""
    with pytest.raises(NocHazardError) as err:
        _four_cores([0, 0, 2, 3], batch)
    assert "race: noc_async_write_page writes bytes of buffer 'dst' that core" in str(err.value)


@reader_kernel
def late_reader():
    """Reads page 0 of ``src`` ``delay`` times (time passing), waits for the semaphore when ``wait``,
    then reads page 0 of ``mid`` (when ``reads_mid``) or of ``src`` into CB_IN."""
    src = get_arg_val(0)
    mid = get_arg_val(1)
    delay = get_arg_val(2)
    wait = get_arg_val(3)
    reads_mid = get_arg_val(4)
    s = TensorAccessor(TensorAccessorArgs(0), src, get_tile_size(CB_IN))
    m = TensorAccessor(TensorAccessorArgs(2), mid, get_tile_size(CB_IN))
    cb_reserve_back(CB_IN, 1)
    for i in range(delay):
        noc_async_read_page(0, s, get_write_ptr(CB_IN))
        noc_async_read_barrier()
    if wait == 1:
        noc_semaphore_wait(get_semaphore(0), 1)
    if reads_mid == 1:
        noc_async_read_page(0, m, get_write_ptr(CB_IN))
    else:
        noc_async_read_page(0, s, get_write_ptr(CB_IN))
    noc_async_read_barrier()
    cb_push_back(CB_IN, 1)


@writer_kernel
def signalling_writer():
    """Writes its tile to page 0 of the buffer at ``dst`` (``mid`` or ``dst``: accessors 1 / 2),
    then, when ``signals``, increments the other core's semaphore (before the write when ``early``)."""
    dst = get_arg_val(0)
    which = get_arg_val(1)
    signals = get_arg_val(2)
    other_x = get_arg_val(3)
    other_y = get_arg_val(4)
    early = get_arg_val(5)
    m = TensorAccessor(TensorAccessorArgs(2), dst, get_tile_size(CB_OUT))
    d = TensorAccessor(TensorAccessorArgs(4), dst, get_tile_size(CB_OUT))
    cb_wait_front(CB_OUT, 1)
    if early == 1:
        noc_semaphore_inc(get_noc_addr_xy(other_x, other_y, get_semaphore(0)), 1)
    if which == 1:
        noc_async_write_page(0, m, get_read_ptr(CB_OUT))
    else:
        noc_async_write_page(0, d, get_read_ptr(CB_OUT))
    noc_async_write_barrier()
    if signals == 1:
        if early == 0:
            noc_semaphore_inc(get_noc_addr_xy(other_x, other_y, get_semaphore(0)), 1)
    cb_pop_front(CB_OUT, 1)


def _hand_over(wait: int, batch: bool, early: int = 0, delay: int = 8):
    """Core 0 copies page 0 of ``src`` to page 0 of ``mid`` and signals core 1 (before its write
    when ``early``); core 1 reads ``mid`` after ``delay`` reads of its own (waiting for the signal
    when ``wait``) and copies it to ``dst``."""
    prog = Program("hand_over")
    src = prog.add_buffer("src", (32, 32), "bfloat16")
    mid = prog.add_buffer("mid", (32, 32), "bfloat16", role="scratch")
    dst = prog.add_buffer("dst", (32, 32), "bfloat16", role="output")
    cores = grid(2)
    prog.create_circular_buffer(cores, CB_IN, 2048, 2, "bfloat16")
    prog.create_circular_buffer(cores, CB_OUT, 2048, 2, "bfloat16")
    prog.create_semaphore(cores, 0)
    ct = [src.accessor_args, mid.accessor_args, dst.accessor_args]
    r = prog.create_kernel(late_reader, cores, DataMovementConfig("RISCV_0"), ct)
    c = prog.create_kernel(copy_compute, cores, ComputeConfig())
    w = prog.create_kernel(signalling_writer, cores, DataMovementConfig("RISCV_1"), ct)
    first, second = cores.cores()
    prog.set_runtime_args(r, first, [src.address, mid.address, 0, 0, 0])
    prog.set_runtime_args(r, second, [src.address, mid.address, delay, wait, 1])
    for core in (first, second):
        prog.set_runtime_args(c, core, [1])
    prog.set_runtime_args(w, first, [mid.address, 1, 1, NocX(second), NocY(second), early])
    prog.set_runtime_args(w, second, [dst.address, 2, 0, 0, 0, 0])
    x = random_tiles((32, 32))
    return x, Device().run(prog, {"src": x}, batch=batch)


@pytest.mark.parametrize("batch", [True, False])
def test_a_read_ordered_after_another_cores_write_is_no_race(batch):
    x, result = _hand_over(wait=1, batch=batch)
    assert result.hazards == []
    assert np.array_equal(result.outputs["dst"], x)


@pytest.mark.parametrize("batch", [True, False])
def test_writing_what_another_core_read_without_a_wait_races(batch):
    """Without the wait core 1 reads ``mid`` at once, before core 0 writes it (so the tile it copies
    is not the one written): on the device the read may land after the write, or before."""
    with pytest.raises(NocHazardError) as err:
        _hand_over(wait=0, batch=batch)
    text = str(err.value)
    assert text.startswith(where(signalling_writer, "noc_async_write_page(0, m"))
    assert "race: noc_async_write_page writes bytes of buffer 'mid' that core (1,0) (reader kernel late_reader at " in text
    assert where(late_reader, "noc_async_read_page(0, m") in text


@pytest.mark.parametrize("batch", [True, False])
def test_reading_what_another_core_wrote_after_a_signal_sent_too_early_races(batch):
    """Core 0 signals before it writes: core 1's read, which runs after the write here and gets the
    written tile, is not ordered after it on the device."""
    with pytest.raises(NocHazardError) as err:
        _hand_over(wait=1, batch=batch, early=1)
    text = str(err.value)
    assert text.startswith(where(late_reader, "noc_async_read_page(0, m"))
    assert "race: noc_async_read_page reads bytes of buffer 'mid' that core (0,0) (writer kernel signalling_writer at " in text
    assert where(signalling_writer, "noc_async_write_page(0, m") in text
