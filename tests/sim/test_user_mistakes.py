"""Kernel mistakes the simulated device reports at the user's line: pages outside a buffer, an
accessor whose page size is not the buffer's, ... Each test runs a small buggy program and
expects one error naming the kernel's file:line."""

from __future__ import annotations

import numpy as np
import pytest

from tilefold.errors import DramAccessError, ProgramError
from tilefold.pykernel import *  # noqa: F403

from tilefold.sim import Device

from simhelpers import random_tiles, tile_program, where
from test_hazards import CB_IN, CB_OUT, SHAPE, copy_reader, copy_writer, reader_args, run, writer_args


@reader_kernel
def reader_one_past():
    src = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(0), src, get_tile_size(CB_IN))
    for i in range(n):
        cb_reserve_back(CB_IN, 1)
        noc_async_read_page(i + 1, s, get_write_ptr(CB_IN))
        noc_async_read_barrier()
        cb_push_back(CB_IN, 1)


@writer_kernel
def writer_one_past():
    dst = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(2), dst, get_tile_size(CB_OUT))
    for i in range(n):
        cb_wait_front(CB_OUT, 1)
        noc_async_write_page(n, s, get_read_ptr(CB_OUT))
        noc_async_writes_flushed()
        cb_pop_front(CB_OUT, 1)
    noc_async_write_barrier()


@reader_kernel
def reader_noc_addr_past():
    src = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(0), src, get_tile_size(CB_IN))
    for i in range(n):
        cb_reserve_back(CB_IN, 1)
        noc_async_read(get_noc_addr(n + i, s), get_write_ptr(CB_IN), get_tile_size(CB_IN))
        noc_async_read_barrier()
        cb_push_back(CB_IN, 1)


def test_reading_the_page_after_the_last_is_an_error():
    # Page 4 of a 4-page buffer lies inside the bank's address range (12 banks, one page each).
    with pytest.raises(DramAccessError) as err:
        run(reader=reader_one_past)
    text = str(err.value)
    assert text.startswith(where(reader_one_past, "noc_async_read_page(i + 1"))
    assert "page 4 of buffer 'src', which has pages 0-3" in text


def test_writing_the_page_after_the_last_is_an_error():
    with pytest.raises(DramAccessError) as err:
        run(writer=writer_one_past)
    assert str(err.value).startswith(where(writer_one_past, "noc_async_write_page(n"))
    assert "page 4 of buffer 'dst'" in str(err.value)


def test_noc_address_of_a_page_outside_the_buffer_is_an_error():
    with pytest.raises(DramAccessError) as err:
        run(reader=reader_noc_addr_past)
    assert str(err.value).startswith(where(reader_noc_addr_past, "get_noc_addr(n + i"))


@reader_kernel
def reader_wrong_page_size():
    src = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(0), src, 1024)
    for i in range(n):
        cb_reserve_back(CB_IN, 1)
        noc_async_read_page(i, s, get_write_ptr(CB_IN))
        noc_async_read_barrier()
        cb_push_back(CB_IN, 1)


def test_accessor_page_size_must_be_the_buffers():
    with pytest.raises(ProgramError) as err:
        run(reader=reader_wrong_page_size)
    text = str(err.value)
    assert text.startswith(where(reader_wrong_page_size, "TensorAccessor(TensorAccessorArgs(0), src, 1024)"))
    assert "page size 1024 B" in text and "2048 B" in text


def test_in_bounds_pages_still_copy():
    result, x = run(reader=copy_reader, writer=copy_writer)
    assert np.array_equal(result.outputs["dst"], x)


# -- while loops run as written ------------------------------------------------------------------


@reader_kernel
def while_reader():
    src = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(0), src, get_tile_size(CB_IN))
    i = 0
    while i < n:
        cb_reserve_back(CB_IN, 1)
        noc_async_read_page(i, s, get_write_ptr(CB_IN))
        noc_async_read_barrier()
        cb_push_back(CB_IN, 1)
        i += 1


def test_terminating_while_loop_runs_and_matches():
    result, x = run(reader=while_reader)
    assert np.array_equal(result.outputs["dst"], x)
    assert result.hazards == []


# -- the watchdog ----------------------------------------------------------------------------------


@reader_kernel
def wrapped_count_reader():
    src = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(0), src, get_tile_size(CB_IN))
    for i in range(n - 5):
        cb_reserve_back(CB_IN, 1)
        noc_async_read_page(i % n, s, get_write_ptr(CB_IN))
        noc_async_read_barrier()
        cb_push_back(CB_IN, 1)


@compute_kernel
def spinning_compute():
    n = get_arg_val(0)
    i = 0
    while i < n:
        i = i * 1
    cb_wait_front(CB_IN, 1)


def test_a_loop_count_that_wrapped_stops_at_the_watchdog():
    # n - 5 wraps to 4294967295 iterations (uint32): the run stops before the loop starts.
    from tilefold.errors import WatchdogError

    with pytest.raises(WatchdogError) as err:
        run(reader=wrapped_count_reader)
    text = str(err.value)
    assert text.startswith(where(wrapped_count_reader, "for i in range(n - 5)"))
    assert "4294967295 iterations" in text
    assert "writer kernel copy_writer on core (0,0) — not started yet" in text   # every unfinished thread


def test_a_while_loop_that_never_ends_stops_at_the_watchdog():
    from tilefold.errors import WatchdogError

    with pytest.raises(WatchdogError) as err:
        prog, bufs = tile_program(copy_reader, spinning_compute, copy_writer, reader_args=reader_args,
                                  compute_args=lambda b, i, c: [1], writer_args=writer_args,
                                  buffers=(("src", SHAPE, "input"), ("dst", SHAPE, "output")))
        Device().run(prog, {"src": random_tiles(SHAPE)}, max_cycles=20_000)
    text = str(err.value)
    assert text.startswith(where(spinning_compute, "i = i * 1")) or text.startswith(
        where(spinning_compute, "while i < n"))
    assert "20000 cycles" in text
    # the other threads, blocked at their lines
    assert where(copy_reader, "cb_reserve_back(CB_IN, 1)") + ": reader kernel copy_reader" in text
