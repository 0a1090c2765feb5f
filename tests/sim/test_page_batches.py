"""Page transfers of a loop nest that only computes addresses are queued and executed together
(tilefold.sim.page_batches): the bytes, the cost model's numbers and every hazard — named at the
line of the transfer, not of the loop — are those of executing the calls one at a time."""

from __future__ import annotations

import numpy as np
import pytest

from tilefold.sim.kernel_python import emit_python_source
from tilefold.errors import CircularBufferError, DramAccessError, NocHazardError
from tilefold.pykernel import *  # noqa: F403
from tilefold.sim import Device, page_batches

from simhelpers import grid, random_tiles, tile_program, where

CB_IN, CB_OUT = 0, 16
ROWS, COLS = 2, 4                 # a block of 2 x 4 tiles per core
SHAPE = (4 * 32, 16 * 32)         # 4 x 16 tiles: a 2 x 4 grid of cores, one block each


@reader_kernel
def block_reader():
    src = get_arg_val(0)
    row0 = get_arg_val(1)
    col0 = get_arg_val(2)
    tile_bytes = get_tile_size(CB_IN)
    s = TensorAccessor(TensorAccessorArgs(0), src, tile_bytes)
    cb_reserve_back(CB_IN, ROWS * COLS)
    l1 = get_write_ptr(CB_IN)
    for c in range(COLS):                    # the first row, then the others: two nests back to back
        noc_async_read_page(row0 * 16 + col0 + c, s, l1)
        l1 += tile_bytes
    for r in range(1, ROWS):
        for c in range(COLS):
            noc_async_read_page((row0 + r) * 16 + col0 + c, s, l1)
            l1 += tile_bytes
    noc_async_read_barrier()
    cb_push_back(CB_IN, ROWS * COLS)


@compute_kernel
def block_copy():
    unary_op_init_common(CB_IN, CB_OUT)
    copy_tile_init(CB_IN)
    cb_wait_front(CB_IN, ROWS * COLS)
    cb_reserve_back(CB_OUT, ROWS * COLS)
    for i in range(ROWS * COLS):
        tile_regs_acquire()
        copy_tile(CB_IN, i, 0)
        tile_regs_commit()
        tile_regs_wait()
        pack_tile(0, CB_OUT)
        tile_regs_release()
    cb_push_back(CB_OUT, ROWS * COLS)
    cb_pop_front(CB_IN, ROWS * COLS)


@writer_kernel
def block_writer():
    dst = get_arg_val(0)
    row0 = get_arg_val(1)
    col0 = get_arg_val(2)
    tile_bytes = get_tile_size(CB_OUT)
    s = TensorAccessor(TensorAccessorArgs(2), dst, tile_bytes)
    cb_wait_front(CB_OUT, ROWS * COLS)
    l1 = get_read_ptr(CB_OUT)
    for r in range(ROWS):
        for c in range(COLS):
            noc_async_write_page((row0 + r) * 16 + col0 + c, s, l1)
            l1 += tile_bytes
    noc_async_write_barrier()
    cb_pop_front(CB_OUT, ROWS * COLS)


def block_args(bufs, i, core, name):
    return [bufs[name].address, core.y * ROWS, core.x * COLS]


def run_blocks(reader=block_reader, compute=block_copy, writer=block_writer, one_by_one=False, monkeypatch=None):
    prog, _ = tile_program(reader, compute, writer, cores=grid(4, 2), cbs=((CB_IN, 8), (CB_OUT, 8)),
                           buffers=(("src", SHAPE, "input"), ("dst", SHAPE, "output")),
                           reader_args=lambda b, i, c: block_args(b, i, c, "src"),
                           writer_args=lambda b, i, c: block_args(b, i, c, "dst"))
    if one_by_one:
        monkeypatch.setattr(page_batches, "_batch", lambda ctx, run: False)
    x = random_tiles(SHAPE)
    return Device().run(prog, {"src": x}), x


@reader_kernel
def tile_at_a_time():
    src = get_arg_val(0)
    s = TensorAccessor(TensorAccessorArgs(0), src, get_tile_size(CB_IN))
    for i in range(4):
        cb_reserve_back(CB_IN, 1)
        noc_async_read_page(i, s, get_write_ptr(CB_IN))
        noc_async_read_barrier()
        cb_push_back(CB_IN, 1)


def test_the_emitter_queues_only_loops_of_address_arithmetic_and_page_transfers():
    for kernel, call, nests in ((block_reader, "noc_async_read_page", 2), (block_writer, "noc_async_write_page", 1)):
        source, _ = emit_python_source(kernel.function)
        assert f"k.{call}_later(" in source and source.count("k.flush_pages()") == nests
        assert source.index("k.flush_pages()") < source.index("_barrier()")
    source, _ = emit_python_source(tile_at_a_time.function)       # other calls in the loop: as written
    assert "_later" not in source and "flush_pages" not in source


def test_batches_equal_one_call_at_a_time(monkeypatch):
    batched, x = run_blocks()
    np.testing.assert_array_equal(batched.outputs["dst"], x)
    single, _ = run_blocks(one_by_one=True, monkeypatch=monkeypatch)
    np.testing.assert_array_equal(single.outputs["dst"], x)
    a, b = batched.perf, single.perf
    assert a.cycles == pytest.approx(b.cycles, rel=1e-9)
    assert vars(a.counters) == vars(b.counters)
    assert len(a.threads) == len(b.threads) == 3
    for ta, tb in zip(a.threads, b.threads):
        for field in ("end_cycles", "busy_cycles", "stall_cycles"):
            np.testing.assert_allclose(getattr(ta, field), getattr(tb, field), rtol=1e-9)


# -- hazards inside a queued loop name the transfer's line ------------------------------------------


@reader_kernel
def block_reader_one_page_short():
    src = get_arg_val(0)
    row0 = get_arg_val(1)
    col0 = get_arg_val(2)
    tile_bytes = get_tile_size(CB_IN)
    s = TensorAccessor(TensorAccessorArgs(0), src, tile_bytes)
    cb_reserve_back(CB_IN, ROWS * COLS - 1)
    l1 = get_write_ptr(CB_IN)
    for r in range(ROWS):
        for c in range(COLS):
            noc_async_read_page((row0 + r) * 16 + col0 + c, s, l1)
            l1 += tile_bytes
    noc_async_read_barrier()
    cb_push_back(CB_IN, ROWS * COLS - 1)


def test_a_page_outside_the_reserved_ones():
    with pytest.raises(CircularBufferError, match="only 7 pages are reserved") as err:
        run_blocks(reader=block_reader_one_page_short, compute=None, writer=None)
    assert str(err.value).startswith(where(block_reader_one_page_short, "noc_async_read_page"))


@reader_kernel
def block_reader_past_the_buffer():
    src = get_arg_val(0)
    row0 = get_arg_val(1)
    col0 = get_arg_val(2)
    tile_bytes = get_tile_size(CB_IN)
    s = TensorAccessor(TensorAccessorArgs(0), src, tile_bytes)
    cb_reserve_back(CB_IN, ROWS * COLS)
    l1 = get_write_ptr(CB_IN)
    for r in range(ROWS):
        for c in range(COLS):
            noc_async_read_page((row0 + r + 40) * 16 + col0 + c, s, l1)
            l1 += tile_bytes
    noc_async_read_barrier()
    cb_push_back(CB_IN, ROWS * COLS)


def test_a_page_outside_the_dram_buffer():
    with pytest.raises(DramAccessError, match=r"noc_async_read_page of page \d+ of buffer '\w+', which has pages") as err:
        run_blocks(reader=block_reader_past_the_buffer, compute=None, writer=None)
    assert str(err.value).startswith(where(block_reader_past_the_buffer, "noc_async_read_page"))


@reader_kernel
def block_reader_pushing_early():
    src = get_arg_val(0)
    row0 = get_arg_val(1)
    col0 = get_arg_val(2)
    tile_bytes = get_tile_size(CB_IN)
    s = TensorAccessor(TensorAccessorArgs(0), src, tile_bytes)
    cb_reserve_back(CB_IN, ROWS * COLS)
    l1 = get_write_ptr(CB_IN)
    for r in range(ROWS):
        for c in range(COLS):
            noc_async_read_page((row0 + r) * 16 + col0 + c, s, l1)
            l1 += tile_bytes
    cb_push_back(CB_IN, ROWS * COLS)
    noc_async_read_barrier()


def test_batched_reads_are_pending_until_the_barrier():
    with pytest.raises(NocHazardError, match="before cb_push_back") as err:
        run_blocks(reader=block_reader_pushing_early)
    text = str(err.value)
    assert text.startswith(where(block_reader_pushing_early, "cb_push_back"))
    assert where(block_reader_pushing_early, "noc_async_read_page") in text


@writer_kernel
def block_writer_popping_early():
    dst = get_arg_val(0)
    row0 = get_arg_val(1)
    col0 = get_arg_val(2)
    tile_bytes = get_tile_size(CB_OUT)
    s = TensorAccessor(TensorAccessorArgs(2), dst, tile_bytes)
    cb_wait_front(CB_OUT, ROWS * COLS)
    l1 = get_read_ptr(CB_OUT)
    for r in range(ROWS):
        for c in range(COLS):
            noc_async_write_page((row0 + r) * 16 + col0 + c, s, l1)
            l1 += tile_bytes
    cb_pop_front(CB_OUT, ROWS * COLS)
    noc_async_write_barrier()


def test_batched_writes_are_pending_until_flushed():
    with pytest.raises(NocHazardError, match="may still be reading") as err:
        run_blocks(writer=block_writer_popping_early)
    text = str(err.value)
    assert text.startswith(where(block_writer_popping_early, "cb_pop_front"))
    assert where(block_writer_popping_early, "noc_async_write_page") in text


# -- small pages: the issue cost, not the link, paces the port; two nests back to back ----------------


@reader_kernel
def stick_reader():
    src = get_arg_val(0)
    s = TensorAccessor(TensorAccessorArgs(0), src, 64)
    cb_reserve_back(CB_IN, 1)
    l1 = get_write_ptr(CB_IN)
    for i in range(16):
        noc_async_read_page(i, s, l1)
        l1 += 64
    for i in range(16, 32):
        noc_async_read_page(i, s, l1)
        l1 += 64
    noc_async_read_barrier()
    cb_push_back(CB_IN, 1)


@writer_kernel
def page_writer():
    dst = get_arg_val(0)
    page = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(2), dst, get_tile_size(CB_IN))
    cb_wait_front(CB_IN, 1)
    noc_async_write_page(page, s, get_read_ptr(CB_IN))
    noc_async_write_barrier()
    cb_pop_front(CB_IN, 1)


def run_sticks(monkeypatch=None):
    from tilefold.program import DataMovementConfig, Program

    prog = Program("sticks")
    src = prog.add_buffer("src", (32, 32), "bfloat16", layout="ROW_MAJOR", role="input")   # 64-byte pages
    dst = prog.add_buffer("dst", (32, 64), "bfloat16", role="output")      # a tile per core
    cores = grid(2)
    prog.create_circular_buffer(cores, CB_IN, dst.page_size, 1, "bfloat16")
    reader = prog.create_kernel(stick_reader, cores, DataMovementConfig("RISCV_0"), [src.accessor_args])
    writer = prog.create_kernel(page_writer, cores, DataMovementConfig("RISCV_1"),
                                [src.accessor_args, dst.accessor_args])
    for core in cores.cores():
        prog.set_runtime_args(reader, core, [src.address])
        prog.set_runtime_args(writer, core, [dst.address, core.x])
    if monkeypatch is not None:
        monkeypatch.setattr(page_batches, "_batch", lambda ctx, run: False)
    return Device().run(prog, {"src": random_tiles((32, 32))})


def test_small_pages_batched_equal_one_at_a_time(monkeypatch):
    batched = run_sticks()
    single = run_sticks(monkeypatch)
    np.testing.assert_array_equal(batched.outputs["dst"], single.outputs["dst"])
    assert batched.perf.cycles == pytest.approx(single.perf.cycles, rel=1e-9)
    for ta, tb in zip(batched.perf.threads, single.perf.threads):
        np.testing.assert_allclose(ta.end_cycles, tb.end_cycles, rtol=1e-9)
