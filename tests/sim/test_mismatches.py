"""Mismatches between a program's pieces that would give garbage: a transfer between a buffer
and a circular buffer of different data formats, tiles read from a circular buffer whose pages
are not its format's tile size; and reports that name the culprit (a kernel that reserved pages
and never pushed them, the push that left pages behind)."""

from __future__ import annotations

import numpy as np
import pytest

from tilefold.errors import CircularBufferError, DeadlockError, LeftoverBlocksWarning, ProgramError
from tilefold.program import ComputeConfig, DataMovementConfig, Program
from tilefold.pykernel import *  # noqa: F403
from tilefold.sim import Device

from simhelpers import grid, random_tiles, where
from test_hazards import SHAPE, CB_IN, CB_OUT, copy_compute, copy_reader, copy_writer, run


def _copy_program(cb_in_page=2048, cb_in_format="bfloat16", src_format="bfloat16", reader=copy_reader,
                  compute=copy_compute, writer=copy_writer):
    prog = Program("t")
    src = prog.add_buffer("src", SHAPE, src_format)
    dst = prog.add_buffer("dst", SHAPE, "bfloat16", role="output")
    cores = grid(1)
    prog.create_circular_buffer(cores, CB_IN, cb_in_page, 2, cb_in_format)
    prog.create_circular_buffer(cores, CB_OUT, 2048, 2, "bfloat16")
    ct = [src.accessor_args, dst.accessor_args]
    r = prog.create_kernel(reader, cores, DataMovementConfig("RISCV_0"), ct)
    c = prog.create_kernel(compute, cores, ComputeConfig())
    w = prog.create_kernel(writer, cores, DataMovementConfig("RISCV_1"), ct)
    prog.set_runtime_args(r, (0, 0), [src.address, 4])
    prog.set_runtime_args(c, (0, 0), [4])
    prog.set_runtime_args(w, (0, 0), [dst.address, 4])
    return Device().run(prog, {"src": random_tiles(SHAPE)})


@reader_kernel
def bfp8_reader():
    src = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(0), src, 1088)
    for i in range(n):
        cb_reserve_back(CB_IN, 1)
        noc_async_read_page(i, s, get_write_ptr(CB_IN))
        noc_async_read_barrier()
        cb_push_back(CB_IN, 1)


def test_bfp8_pages_read_into_a_bfloat16_circular_buffer():
    with pytest.raises(ProgramError) as err:
        _copy_program(src_format="bfloat8_b", reader=bfp8_reader)
    text = str(err.value)
    assert text.startswith(where(bfp8_reader, "noc_async_read_page(i, s"))
    assert "reads bfloat8_b pages of buffer 'src' into c_0, a bfloat16 circular buffer" in text


@reader_kernel
def half_tile_reader():
    src = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(0), src, get_tile_size(CB_OUT))
    for i in range(n):
        cb_reserve_back(CB_IN, 1)
        noc_async_read(get_noc_addr(i, s), get_write_ptr(CB_IN), get_tile_size(CB_IN))
        noc_async_read_barrier()
        cb_push_back(CB_IN, 1)


def test_tiles_read_from_pages_smaller_than_a_tile():
    # a bfloat16 circular buffer of 1024 B pages: half a tile each
    with pytest.raises(CircularBufferError) as err:
        _copy_program(cb_in_page=1024, reader=half_tile_reader)
    text = str(err.value)
    assert text.startswith(where(copy_compute, "copy_tile(CB_IN, 0, 0)"))
    assert "c_0 has 1024-byte pages but a bfloat16 tile is 2048 bytes" in text


@writer_kernel
def writer_of_wrong_cb_size():
    dst = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(2), dst, get_tile_size(CB_IN))
    for i in range(n):
        cb_wait_front(CB_OUT, 1)
        noc_async_write_page(i, s, get_read_ptr(CB_OUT))
        noc_async_writes_flushed()
        cb_pop_front(CB_OUT, 1)
    noc_async_write_barrier()


def test_get_tile_size_of_the_wrong_circular_buffer():
    # the accessor of a bfloat16 buffer takes the page size of c_0, a bfloat8_b circular buffer
    with pytest.raises(ProgramError) as err:
        _copy_program(cb_in_page=1088, cb_in_format="bfloat8_b", src_format="bfloat8_b", reader=bfp8_reader,
                      writer=writer_of_wrong_cb_size)
    text = str(err.value)
    assert text.startswith(where(writer_of_wrong_cb_size, "TensorAccessor(TensorAccessorArgs(2), dst"))
    assert "page size 1088 B but the buffer's pages are 2048 B" in text


# -- reports that name the culprit ------------------------------------------------------------


@reader_kernel
def reader_never_pushing_the_last():
    src = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(0), src, get_tile_size(CB_IN))
    for i in range(n):
        cb_reserve_back(CB_IN, 1)
        noc_async_read_page(i, s, get_write_ptr(CB_IN))
        noc_async_read_barrier()
        if i < n - 1:
            cb_push_back(CB_IN, 1)


def test_deadlock_names_the_kernel_that_reserved_and_never_pushed():
    with pytest.raises(DeadlockError) as err:
        run(reader=reader_never_pushing_the_last)
    text = str(err.value)
    assert text.startswith(where(reader_never_pushing_the_last, "cb_reserve_back(CB_IN, 1)"))
    assert "reader kernel reader_never_pushing_the_last on core (0,0) — ended with 1 page of c_0 reserved here " \
           "and never pushed" in text
    assert where(copy_compute, "cb_wait_front(CB_IN, 1)") in text          # the thread left waiting


@compute_kernel
def compute_pushing_twice():
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
    cb_reserve_back(CB_OUT, 1)
    cb_push_back(CB_OUT, 1)


def test_pages_left_name_the_kernel_and_line_that_pushed_them():
    with pytest.warns(LeftoverBlocksWarning) as caught:
        run(compute=compute_pushing_twice)
    warning = caught[0]
    text = str(warning.message)
    last_push = where(compute_pushing_twice, "cb_push_back(CB_OUT, 1)", 1)
    assert f"{warning.filename}:{warning.lineno}" == last_push
    assert f"c_16 on core (0,0): 1 pages pushed and never popped (pushed by compute kernel compute_pushing_twice at " \
           f"{last_push})" in text
