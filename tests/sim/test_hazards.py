"""Every hazard the simulated device detects: one small kernel that triggers it, the error class,
and the user's file:line in the message. No test can hang: deadlocks are found by the detector."""

from __future__ import annotations

import numpy as np
import pytest

from tilefold.errors import (
    CircularBufferError,
    DeadlockError,
    DramAccessError,
    DstError,
    L1OverflowError,
    LeftoverBlocksWarning,
    NocHazardError,
    RuntimeArgError,
    SemaphoreError,
    UnwrittenOutputError,
)
from tilefold.pykernel import *  # noqa: F403
from tilefold.sim import Device

from simhelpers import random_tiles, tile_program, where

CB_IN, CB_OUT = 0, 16
NTILES = 4
SHAPE = (64, 64)  # 4 tiles


def reader_args(bufs, i, core):
    return [bufs["src"].address, NTILES]


def writer_args(bufs, i, core):
    return [bufs["dst"].address, NTILES]


def compute_args(bufs, i, core):
    return [NTILES]


@reader_kernel
def copy_reader():
    src = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(0), src, get_tile_size(CB_IN))
    for i in range(n):
        cb_reserve_back(CB_IN, 1)
        noc_async_read_page(i, s, get_write_ptr(CB_IN))
        noc_async_read_barrier()
        cb_push_back(CB_IN, 1)


@compute_kernel
def copy_compute():
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
def copy_writer():
    dst = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(2), dst, get_tile_size(CB_OUT))
    for i in range(n):
        cb_wait_front(CB_OUT, 1)
        noc_async_write_page(i, s, get_read_ptr(CB_OUT))
        noc_async_writes_flushed()
        cb_pop_front(CB_OUT, 1)
    noc_async_write_barrier()


def run(reader=copy_reader, compute=copy_compute, writer=copy_writer, **kw):
    kw.setdefault("buffers", (("src", SHAPE, "input"), ("dst", SHAPE, "output")))
    prog, bufs = tile_program(reader, compute, writer, reader_args=kw.pop("reader_args", reader_args),
                              compute_args=kw.pop("compute_args", compute_args),
                              writer_args=kw.pop("writer_args", writer_args), **kw)
    x = random_tiles(SHAPE)
    return Device().run(prog, {"src": x}), x


def test_clean_pipeline_copies_exactly():
    result, x = run()
    assert np.array_equal(result.outputs["dst"], x)
    assert result.hazards == []


# -- deadlock --------------------------------------------------------------------------------------


@compute_kernel
def greedy_compute():
    n = get_arg_val(0)
    copy_tile_init(CB_IN)
    for i in range(n):
        cb_wait_front(CB_IN, 2)
        cb_pop_front(CB_IN, 2)


def test_deadlock_names_every_blocked_thread():
    # The reader pushes 1 page at a time into a 2-page CB but the compute waits for 2 after each
    # pop of 2: with 4 pages in total... the writer waits for output that never comes.
    with pytest.raises(DeadlockError) as err:
        run(compute=greedy_compute, compute_args=lambda b, i, c: [3])
    text = str(err.value)
    assert text.startswith(where(greedy_compute, "cb_wait_front(CB_IN, 2)"))
    assert where(copy_writer, "cb_wait_front(CB_OUT, 1)") in text
    assert "waiting for 2 pages" in text and "waiting for 1 page to be pushed" in text


# -- circular buffer protocol ----------------------------------------------------------------------


@reader_kernel
def push_without_reserve():
    cb_push_back(CB_IN, 1)


def test_push_without_reserve():
    with pytest.raises(CircularBufferError, match="pushes pages that were not reserved") as err:
        run(reader=push_without_reserve, compute=None, writer=None)
    assert str(err.value).startswith(where(push_without_reserve, "cb_push_back"))


@compute_kernel
def pop_too_many():
    cb_wait_front(CB_IN, 1)
    cb_pop_front(CB_IN, 2)


def test_pop_more_than_waited():
    with pytest.raises(CircularBufferError, match="not waited for") as err:
        run(compute=pop_too_many, writer=None)
    assert str(err.value).startswith(where(pop_too_many, "cb_pop_front"))


@reader_kernel
def reserve_too_many():
    cb_reserve_back(CB_IN, 3)


def test_reserve_beyond_capacity():
    with pytest.raises(CircularBufferError, match="more pages than the circular buffer holds") as err:
        run(reader=reserve_too_many, compute=None, writer=None)
    assert str(err.value).startswith(where(reserve_too_many, "cb_reserve_back"))


@compute_kernel
def read_unwaited_page():
    init_sfpu(CB_IN, CB_IN)
    cb_wait_front(CB_IN, 1)
    tile_regs_acquire()
    copy_tile(CB_IN, 1, 0)
    tile_regs_commit()
    tile_regs_wait()
    tile_regs_release()


def test_reading_a_page_not_waited_for():
    with pytest.raises(CircularBufferError, match="only 1 pages were waited for") as err:
        run(compute=read_unwaited_page, writer=None)
    assert str(err.value).startswith(where(read_unwaited_page, "copy_tile"))


@compute_kernel
def never_pops():
    n = get_arg_val(0)
    for i in range(n):
        cb_wait_front(CB_IN, 1)


def test_pages_left_in_a_cb_at_exit_are_a_warning():
    # the pages stay behind (a warning); the program writes no output, which stays an error
    with pytest.warns(LeftoverBlocksWarning, match="pages left in circular buffers.*c_0 on core \\(0,0\\): 2 pages"), \
            pytest.raises(UnwrittenOutputError):
        run(compute=never_pops, writer=None, reader_args=lambda b, i, c: [b["src"].address, 2],
            compute_args=lambda b, i, c: [2])


@reader_kernel
def push_past_the_end():
    for i in range(2):
        cb_reserve_back(CB_IN, 2)
        cb_push_back(CB_IN, 2)


def test_push_running_past_the_end_of_the_cb():
    with pytest.raises(CircularBufferError, match="runs past the end of the circular buffer") as err:
        run(reader=push_past_the_end, compute=None, writer=None, cbs=((0, 3), (16, 2)))
    assert str(err.value).startswith(where(push_past_the_end, "cb_reserve_back"))


@reader_kernel
def writes_unreserved_page():
    src = get_arg_val(0)
    s = TensorAccessor(TensorAccessorArgs(0), src, get_tile_size(CB_IN))
    cb_reserve_back(CB_IN, 1)
    noc_async_read_page(0, s, get_write_ptr(CB_IN) + get_tile_size(CB_IN))
    noc_async_read_barrier()


def test_noc_read_into_a_page_not_reserved():
    with pytest.raises(CircularBufferError, match="only 1 pages are reserved") as err:
        run(reader=writes_unreserved_page, compute=None, writer=None)
    assert str(err.value).startswith(where(writes_unreserved_page, "noc_async_read_page"))


# -- NOC asynchrony ------------------------------------------------------------------------------


@reader_kernel
def push_before_barrier():
    src = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(0), src, get_tile_size(CB_IN))
    for i in range(n):
        cb_reserve_back(CB_IN, 1)
        noc_async_read_page(i, s, get_write_ptr(CB_IN))
        cb_push_back(CB_IN, 1)
        noc_async_read_barrier()


def test_using_read_data_before_the_barrier():
    with pytest.raises(NocHazardError, match="call noc_async_read_barrier\\(\\) before cb_push_back") as err:
        run(reader=push_before_barrier)
    text = str(err.value)
    assert text.startswith(where(push_before_barrier, "cb_push_back"))
    assert where(push_before_barrier, "noc_async_read_page") in text


@writer_kernel
def pop_before_flush():
    dst = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(2), dst, get_tile_size(CB_OUT))
    for i in range(n):
        cb_wait_front(CB_OUT, 1)
        noc_async_write_page(i, s, get_read_ptr(CB_OUT))
        cb_pop_front(CB_OUT, 1)
    noc_async_write_barrier()


def test_freeing_l1_a_pending_write_still_reads():
    with pytest.raises(NocHazardError, match="noc_async_write .* may still be reading") as err:
        run(writer=pop_before_flush)
    text = str(err.value)
    assert text.startswith(where(pop_before_flush, "cb_pop_front"))
    assert where(pop_before_flush, "noc_async_write_page") in text


@writer_kernel
def no_final_barrier():
    dst = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(2), dst, get_tile_size(CB_OUT))
    for i in range(n):
        cb_wait_front(CB_OUT, 1)
        noc_async_write_page(i, s, get_read_ptr(CB_OUT))
        noc_async_writes_flushed()
        cb_pop_front(CB_OUT, 1)
        noc_async_write_page(i, s, get_read_ptr(CB_OUT))


def test_kernel_ending_with_writes_outstanding():
    with pytest.raises(NocHazardError, match="ended with noc_async_write transfers outstanding"):
        run(writer=no_final_barrier)


# -- memory bounds ---------------------------------------------------------------------------------


@reader_kernel
def reads_past_the_buffer():
    src = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(0), src, get_tile_size(CB_IN))
    for i in range(n + 12 * 2):
        cb_reserve_back(CB_IN, 1)
        noc_async_read_page(i, s, get_write_ptr(CB_IN))
        noc_async_read_barrier()
        cb_push_back(CB_IN, 1)


def test_dram_access_outside_a_buffer():
    with pytest.raises(DramAccessError, match="page 4 of buffer 'src', which has pages 0-3") as err:
        run(reader=reads_past_the_buffer, compute=None, writer=None, cbs=((0, 64), (16, 2)),
            buffers=(("src", SHAPE, "input"),), reader_ct=None)
    assert str(err.value).startswith(where(reads_past_the_buffer, "noc_async_read_page"))


def test_l1_overflow_names_the_circular_buffer():
    from tilefold.program import Program

    from simhelpers import grid

    prog = Program("big")
    prog.add_buffer("src", SHAPE, "bfloat16")
    cb_line = __import__("inspect").currentframe().f_lineno + 1
    prog.create_circular_buffer(grid(1), 0, 2048, 800, "bfloat16")
    prog.create_kernel(never_pops, grid(1), __import__("tilefold.program", fromlist=["ComputeConfig"]).ComputeConfig())
    with pytest.raises(L1OverflowError, match="needs 1638400 B of L1") as err:
        Device().run(prog, {"src": random_tiles(SHAPE)})
    assert str(err.value).startswith(f"{__file__}:{cb_line}")


# -- DST -----------------------------------------------------------------------------------------------


@compute_kernel
def dst_index_from_arg():
    slot = get_arg_val(0)
    cb_wait_front(CB_IN, 1)
    tile_regs_acquire()
    copy_tile(CB_IN, 0, slot)
    tile_regs_commit()
    tile_regs_wait()
    tile_regs_release()
    cb_pop_front(CB_IN, 1)


def test_dst_overflow():
    with pytest.raises(DstError, match="DST\\[8\\] but one tile_regs_acquire gives 8 tiles") as err:
        run(compute=dst_index_from_arg, writer=None, compute_args=lambda b, i, c: [8],
            reader_args=lambda b, i, c: [b["src"].address, 1])
    assert str(err.value).startswith(where(dst_index_from_arg, "copy_tile"))


@compute_kernel
def packs_unwritten_slot():
    init_sfpu(CB_IN, CB_OUT)
    cb_wait_front(CB_IN, 1)
    tile_regs_acquire()
    copy_tile(CB_IN, 0, 0)
    tile_regs_commit()
    tile_regs_wait()
    cb_reserve_back(CB_OUT, 1)
    pack_tile(get_arg_val(0), CB_OUT)
    cb_push_back(CB_OUT, 1)
    tile_regs_release()
    cb_pop_front(CB_IN, 1)


def test_pack_of_a_dst_slot_nothing_wrote():
    with pytest.raises(DstError, match="reads DST\\[1\\], which nothing wrote") as err:
        run(compute=packs_unwritten_slot, compute_args=lambda b, i, c: [1],
            reader_args=lambda b, i, c: [b["src"].address, 1], writer_args=lambda b, i, c: [b["dst"].address, 1])
    assert str(err.value).startswith(where(packs_unwritten_slot, "pack_tile"))


# -- arguments and semaphores ------------------------------------------------------------------------


@reader_kernel
def reads_missing_arg():
    x = get_arg_val(0)
    y = get_arg_val(5)
    cb_reserve_back(CB_IN, x + y)


def test_runtime_arg_index_out_of_range():
    with pytest.raises(RuntimeArgError, match="reads runtime argument 5 but the core was given 2") as err:
        run(reader=reads_missing_arg, compute=None, writer=None)
    assert str(err.value).startswith(where(reads_missing_arg, "get_arg_val(5)"))


@reader_kernel
def waits_forever_on_semaphore():
    sem = get_semaphore(0)
    noc_semaphore_wait(sem, 1)


def test_semaphore_wait_that_can_never_be_satisfied():
    with pytest.raises(SemaphoreError, match="can never be satisfied") as err:
        run(reader=waits_forever_on_semaphore, compute=None, writer=None, semaphores=1)
    assert str(err.value).startswith(where(waits_forever_on_semaphore, "noc_semaphore_wait"))


@reader_kernel
def wrong_semaphore_id():
    noc_semaphore_set(get_semaphore(3), 1)


def test_semaphore_that_does_not_exist():
    with pytest.raises(SemaphoreError, match="created 1 semaphores") as err:
        run(reader=wrong_semaphore_id, compute=None, writer=None, semaphores=1)
    assert str(err.value).startswith(where(wrong_semaphore_id, "get_semaphore"))


def test_hazards_can_be_collected_instead_of_raised():
    prog, bufs = tile_program(copy_reader, never_pops, None, reader_args=lambda b, i, c: [b["src"].address, 2],
                              compute_args=lambda b, i, c: [2],
                              buffers=(("src", SHAPE, "input"), ("dst", SHAPE, "output")))
    with pytest.warns(LeftoverBlocksWarning):
        result = Device().run(prog, {"src": random_tiles(SHAPE)}, raise_on_hazard=False)
    assert len(result.hazards) == 1 and isinstance(result.hazards[0], UnwrittenOutputError)
    assert not result.ok
