"""One-tile fast paths of the compute thread (a single-tile ``matmul_block`` of bfloat16 tiles on
one lane, :class:`tilefold.sim.matmul_blocks.OneTileMatmul`; ``copy_tile`` of a bfloat16 tile on
one lane) against the general path on the same calls: outputs, DST after every commit, the engines' clocks, the report's cycles and counters, and
errors, bit for bit; and the cases the fast path must leave to the general one."""

from __future__ import annotations

import numpy as np
import pytest

from tilefold.errors import CircularBufferError
from tilefold.program import ComputeConfig, DataMovementConfig, Program
from tilefold.pykernel import *  # noqa: F403
from tilefold.sim import Device
from tilefold.sim.device import DevicePages
from tilefold.sim import matmul_blocks
from tilefold.sim.compute_api import ComputeApi

from simhelpers import (A, B, OUT, bf16, grid, random_tiles, read_two, run_two_input, step_model, stream_tiles, where,
                        write_out)


class Recorder:
    """DST, its written flags and the unpack / math / pack clocks after every ``tile_regs_commit``,
    and how many one-tile matmuls and one-lane bfloat16 copies were made."""

    def __init__(self, monkeypatch, fast: bool):
        self.commits: list = []
        self.one_tile = 0
        self.copies = 0                 # copy_tile calls on the one-lane bfloat16 path
        commit = ComputeApi.tile_regs_commit
        recorder = self

        def recorded_commit(ctx):
            commit(ctx)
            recorder.commits.append((ctx.dst[ctx.rows].copy(), ctx.dst_written.copy(), ctx.unpack_clock.copy(),
                                     ctx.math_clock.copy(), ctx.pack_clock.copy(), list(ctx.engine_busy)))

        monkeypatch.setattr(ComputeApi, "tile_regs_commit", recorded_commit)
        if fast:
            made = matmul_blocks.OneTileMatmul.__init__

            def counted(block, *args):
                recorder.one_tile += 1
                made(block, *args)

            monkeypatch.setattr(matmul_blocks.OneTileMatmul, "__init__", counted)
            copy = ComputeApi._copy_bf16_tile

            def counted_copy(ctx, *args):
                recorder.copies += 1
                return copy(ctx, *args)

            monkeypatch.setattr(ComputeApi, "_copy_bf16_tile", counted_copy)
        else:
            monkeypatch.setattr(ComputeApi, "_one_tile_matmul", lambda ctx, *args: False)
            monkeypatch.setattr(ComputeApi, "_copy_bf16_tile", lambda ctx, *args: False)


def both_ways(monkeypatch, run):
    """``run()`` with the fast path and without: (result or error, recorder) of each."""
    out = []
    for fast in (True, False):
        with monkeypatch.context() as patch:
            recorder = Recorder(patch, fast)
            try:
                result = run()
            except CircularBufferError as err:
                result = err
            out.append((result, recorder))
    return out


def assert_same(fast, general):
    (a, ra), (b, rb) = fast, general
    if isinstance(a, Exception) or isinstance(b, Exception):
        assert type(a) is type(b) and str(a) == str(b)
    else:
        assert a.outputs.keys() == b.outputs.keys()
        for name in a.outputs:
            assert np.array_equal(a.outputs[name].view(np.uint8), b.outputs[name].view(np.uint8))
        assert a.perf.cycles == b.perf.cycles
        assert a.perf.counters == b.perf.counters
        for ta, tb in zip(a.perf.threads, b.perf.threads, strict=True):
            for field in ("end_cycles", "busy_cycles", "stall_cycles"):
                assert np.array_equal(getattr(ta, field), getattr(tb, field))
    assert len(ra.commits) == len(rb.commits)
    for ca, cb in zip(ra.commits, rb.commits):
        for x, y in zip(ca, cb, strict=True):
            assert np.array_equal(np.asarray(x).view(np.uint8), np.asarray(y).view(np.uint8))
    assert rb.one_tile == rb.copies == 0


# -- one tile at a time, the accumulator carried in DST across pops -----------------------------------


@compute_kernel
def tile_by_tile():
    mt = get_arg_val(0)
    kt = get_arg_val(1)
    nt = get_arg_val(2)
    flip = get_arg_val(3)
    mm_init(A, B, OUT)
    for mn in range(mt * nt):
        tile_regs_acquire()
        for k in range(kt):
            cb_wait_front(A, 1)
            cb_wait_front(B, 1)
            matmul_block(A, B, 0, 0, 0, flip, 1, 1, 1)
            cb_pop_front(A, 1)
            cb_pop_front(B, 1)
        tile_regs_commit()
        cb_reserve_back(OUT, 1)
        tile_regs_wait()
        pack_tile(0, OUT)
        tile_regs_release()
        cb_push_back(OUT, 1)


@writer_kernel
def write_tiles():
    dst = get_arg_val(0)
    n = get_arg_val(1)
    first = get_arg_val(2)
    s = TensorAccessor(TensorAccessorArgs(4), dst, get_tile_size(OUT))
    for i in range(n):
        cb_wait_front(OUT, 1)
        noc_async_write_page(first + i, s, get_read_ptr(OUT))
        noc_async_write_barrier()
        cb_pop_front(OUT, 1)


def streaming(a, b, *, fp32=False, fidelity="HiFi4", dtype="bfloat16", flip=0, cores=1):
    mt, kt, nt = a.shape[0] // 32, a.shape[1] // 32, b.shape[1] // 32
    prog = Program("stream")
    ba, bb = prog.add_buffer("a", a.shape, dtype), prog.add_buffer("b", b.shape, dtype)
    bo = prog.add_buffer("out", (cores, a.shape[0], b.shape[1]), "bfloat16", role="output")
    where_ = grid(cores)
    for index in (A, B):
        prog.create_circular_buffer(where_, index, ba.page_size, 2, dtype)
    prog.create_circular_buffer(where_, OUT, bo.page_size, 2, "bfloat16")
    ct = [ba.accessor_args, bb.accessor_args, bo.accessor_args]
    r = prog.create_kernel(stream_tiles, where_, DataMovementConfig("RISCV_0"), ct)
    c = prog.create_kernel(tile_by_tile, where_, ComputeConfig(fp32_dest_acc_en=fp32, math_fidelity=fidelity))
    w = prog.create_kernel(write_tiles, where_, DataMovementConfig("RISCV_1"), ct)
    for i, core in enumerate(where_.cores()):
        prog.set_runtime_args(r, core, [ba.address, bb.address, mt, kt, nt])
        prog.set_runtime_args(c, core, [mt, kt, nt, flip])
        prog.set_runtime_args(w, core, [bo.address, mt * nt, i * mt * nt])
    return lambda: Device().run(prog, {"a": a, "b": b})


@pytest.mark.parametrize("fp32", [False, True])
@pytest.mark.parametrize("fidelity", ["LoFi", "HiFi2", "HiFi4"])
def test_one_tile_stream_matches_the_general_path(monkeypatch, fp32, fidelity):
    a, b = bf16(random_tiles((64, 96), 1) * 3), random_tiles((96, 64), 2)
    fast, general = both_ways(monkeypatch, streaming(a, b, fp32=fp32, fidelity=fidelity))
    assert fast[1].one_tile == 2 * 3 * 2
    assert_same(fast, general)
    if fidelity == "HiFi4" and not fp32:
        assert np.array_equal(fast[0].outputs["out"][0], step_model(a, b, False))


def test_extreme_values_match_the_general_path(monkeypatch):
    # products spanning many binades (their float64 sum is not exact), infinities and NaNs
    a, b = random_tiles((32, 64), 3), random_tiles((64, 32), 4)
    a[0, :] *= 2.0 ** 100
    a[1, :5] = np.inf
    a[2, 7] = np.nan
    b[:, 3] *= 2.0 ** -90
    fast, general = both_ways(monkeypatch, streaming(a, b))
    assert fast[1].one_tile == 2
    assert_same(fast, general)


@pytest.mark.parametrize("case", ["HiFi3", "bfloat8_b", "transposed", "lanes"])
def test_cases_the_fast_path_leaves_to_the_general_one(monkeypatch, case):
    a, b = random_tiles((32, 64), 5), random_tiles((64, 32), 6)
    run = streaming(a, b, fidelity="HiFi3" if case == "HiFi3" else "HiFi4",
                    dtype="bfloat8_b" if case == "bfloat8_b" else "bfloat16",
                    flip=int(case == "transposed"), cores=4 if case == "lanes" else 1)
    fast, general = both_ways(monkeypatch, run)
    assert fast[1].one_tile == 0
    assert_same(fast, general)


# -- whole waited blocks: a K run the fast path must not break ------------------------------------


@compute_kernel
def tiles_over_blocks():
    mt = get_arg_val(0)
    kt = get_arg_val(1)
    nt = get_arg_val(2)
    mm_init(A, B, OUT)
    cb_wait_front(A, mt * kt)
    cb_wait_front(B, kt * nt)
    cb_reserve_back(OUT, mt * nt)
    for m in range(mt):
        for n in range(nt):
            tile_regs_acquire()
            for k in range(kt):
                matmul_tiles(A, B, m * kt + k, k * nt + n, 0)
            tile_regs_commit()
            tile_regs_wait()
            pack_tile(0, OUT, m * nt + n, out_of_order_output=True)
            tile_regs_release()
    cb_push_back(OUT, mt * nt)
    cb_pop_front(A, mt * kt)
    cb_pop_front(B, kt * nt)


@pytest.mark.parametrize("fp32", [False, True])
def test_runs_over_waited_blocks_stay_runs(monkeypatch, fp32):
    a, b = random_tiles((64, 96), 7), random_tiles((96, 64), 8)
    run = lambda: run_two_input(tiles_over_blocks, a, b, (64, 64), compute_args=[2, 3, 2],  # noqa: E731
                                config=ComputeConfig(fp32_dest_acc_en=fp32))
    fast, general = both_ways(monkeypatch, run)
    assert fast[1].one_tile == 0          # the last in0 tile continues a run
    assert_same(fast, general)


# -- the last waited tile of in0 multiplied on its own, then two products into one slot -----------


@compute_kernel
def last_tiles():
    mm_init(A, B, OUT)
    cb_wait_front(A, 2)
    cb_wait_front(B, 2)
    cb_reserve_back(OUT, 1)
    tile_regs_acquire()
    matmul_tiles(A, B, 1, 0, 0)
    matmul_tiles(A, B, 1, 1, 0)
    matmul_tiles(A, B, 0, 1, 1)
    matmul_tiles(A, B, 1, 1, 1)
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(0, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 2)
    cb_pop_front(B, 2)


@pytest.mark.parametrize("fp32", [False, True])
def test_products_of_the_last_tile_into_one_slot(monkeypatch, fp32):
    a, b = random_tiles((32, 64), 9), random_tiles((64, 32), 10)
    run = lambda: run_two_input(last_tiles, a, b, (32, 32), config=ComputeConfig(fp32_dest_acc_en=fp32))  # noqa: E731
    fast, general = both_ways(monkeypatch, run)
    assert fast[1].one_tile == 2          # the first two; the third starts a run the fourth continues
    assert_same(fast, general)


# -- errors: the same message at the same line --------------------------------------------------------


@compute_kernel
def unwaited_in1():
    mm_init(A, B, OUT)
    cb_wait_front(A, 1)
    cb_wait_front(B, 1)
    tile_regs_acquire()
    matmul_tiles(A, B, 0, 1, 0)
    tile_regs_commit()
    tile_regs_wait()
    tile_regs_release()


def test_an_unwaited_in1_tile_is_the_same_error(monkeypatch):
    a, b = random_tiles((32, 32), 11), random_tiles((32, 64), 12)
    fast, general = both_ways(monkeypatch, lambda: run_two_input(unwaited_in1, a, b, (32, 32)))
    assert isinstance(fast[0], CircularBufferError)
    assert str(fast[0]).startswith(where(unwaited_in1, "matmul_tiles(A, B, 0, 1, 0)"))
    assert_same(fast, general)


def test_one_tile_operand_is_the_operand_matrix():
    raw = np.random.default_rng(0).integers(0, 256, (1, 1, 2048), dtype=np.uint8)
    for register, part in (("A", "high"), ("A", "both"), ("A", "all"), ("B", "high"), ("B", "all")):
        fast = matmul_blocks.bf16_tile_operand(raw, register, part)
        general = matmul_blocks.operand_matrix(raw, matmul_blocks.DataFormat.Float16_b, register, part, False, None)
        with np.errstate(invalid="ignore"):
            widened = general.astype(np.float64)
        assert np.array_equal(fast.view(np.uint64), widened.view(np.uint64))


# -- copy_tile of bfloat16 tiles on one lane: every bit pattern, into either DST ----------------------


@compute_kernel
def copy_each():
    n = get_arg_val(0)
    unary_op_init_common(A, OUT)
    cb_reserve_back(OUT, n)
    for i in range(n):
        cb_wait_front(A, i + 1)                      # a CB call in the loop: the calls run one by one
        tile_regs_acquire()
        copy_tile(A, i, 1)
        tile_regs_commit()
        tile_regs_wait()
        pack_tile(1, OUT, i, out_of_order_output=True)
        tile_regs_release()
    cb_push_back(OUT, n)
    cb_pop_front(A, n)
    cb_wait_front(B, 1)
    cb_pop_front(B, 1)


@pytest.mark.parametrize("fp32", [False, True])
def test_copy_tile_of_every_bfloat16_pattern_matches_the_general_path(monkeypatch, fp32):
    pages = np.arange(1 << 16, dtype=np.uint16).view(np.uint8).reshape(64, 2048)
    b = np.zeros((32, 32), np.float32)
    out = "float32" if fp32 else "bfloat16"
    prog = Program("copies")
    ba, bb = prog.add_buffer("a", (64 * 32, 32), "bfloat16"), prog.add_buffer("b", (32, 32), "bfloat16")
    bo = prog.add_buffer("out", (64 * 32, 32), out, role="output")
    cores = grid(1)
    prog.create_circular_buffer(cores, A, ba.page_size, 64, "bfloat16")
    prog.create_circular_buffer(cores, B, bb.page_size, 1, "bfloat16")
    prog.create_circular_buffer(cores, OUT, bo.page_size, 64, out)
    ct = [ba.accessor_args, bb.accessor_args, bo.accessor_args]
    r = prog.create_kernel(read_two, cores, DataMovementConfig("RISCV_0"), ct)
    c = prog.create_kernel(copy_each, cores, ComputeConfig(fp32_dest_acc_en=fp32))
    w = prog.create_kernel(write_out, cores, DataMovementConfig("RISCV_1"), ct)
    prog.set_runtime_args(r, (0, 0), [ba.address, bb.address, 64, 1])
    prog.set_runtime_args(c, (0, 0), [64])
    prog.set_runtime_args(w, (0, 0), [bo.address, 64])
    run = lambda: Device().run(prog, {"a": DevicePages(pages), "b": b})  # noqa: E731
    fast, general = both_ways(monkeypatch, run)
    assert fast[1].copies == 64
    assert_same(fast, general)
    if fp32:                                       # the float32 widening of each pattern, packed as it is
        words = fast[0].pages["out"].view(np.uint32).reshape(-1)
        assert np.array_equal(words, np.arange(1 << 16, dtype=np.uint32) << 16)
