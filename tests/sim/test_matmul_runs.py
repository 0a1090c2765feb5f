"""Matmul K steps on the simulator: whatever way a kernel walks K — one tile at a time through
two-page CBs (popping inside the acquire), over whole waited blocks with ``matmul_tiles``, or with
transposed in1 tiles — the result is the step-by-step hardware model: each K tile's products
summed exactly and rounded once to float32, added to DST, rounded to bfloat16 in a 16-bit DST."""

from __future__ import annotations

import numpy as np
import pytest

from tilefold.arch.cores import CoreCoord
from tilefold.program import ComputeConfig, DataMovementConfig, Program
from tilefold.pykernel import *  # noqa: F403
from tilefold.sim import Device

from simhelpers import A, B, OUT, grid, random_tiles, run_two_input, step_model, stream_tiles


# -- one tile at a time through two-page CBs (the tile-by-tile single-core matmul) --------------------


@compute_kernel
def tile_by_tile():
    mt = get_arg_val(0)
    kt = get_arg_val(1)
    nt = get_arg_val(2)
    mm_init(A, B, OUT)
    for mn in range(mt * nt):
        tile_regs_acquire()
        for k in range(kt):
            cb_wait_front(A, 1)
            cb_wait_front(B, 1)
            matmul_tiles(A, B, 0, 0, 0)
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
    s = TensorAccessor(TensorAccessorArgs(4), dst, get_tile_size(OUT))
    for i in range(n):
        cb_wait_front(OUT, 1)
        noc_async_write_page(i, s, get_read_ptr(OUT))
        noc_async_write_barrier()
        cb_pop_front(OUT, 1)


def run_streaming(a, b, fp32: bool):
    mt, kt, nt = a.shape[0] // 32, a.shape[1] // 32, b.shape[1] // 32
    prog = Program("stream")
    ba, bb = prog.add_buffer("a", a.shape, "bfloat16"), prog.add_buffer("b", b.shape, "bfloat16")
    bo = prog.add_buffer("out", (a.shape[0], b.shape[1]), "bfloat16", role="output")
    cores = grid(1)
    for index in (A, B, OUT):
        prog.create_circular_buffer(cores, index, ba.page_size, 2, "bfloat16")
    ct = [ba.accessor_args, bb.accessor_args, bo.accessor_args]
    r = prog.create_kernel(stream_tiles, cores, DataMovementConfig("RISCV_0"), ct)
    c = prog.create_kernel(tile_by_tile, cores, ComputeConfig(fp32_dest_acc_en=fp32))
    w = prog.create_kernel(write_tiles, cores, DataMovementConfig("RISCV_1"), ct)
    core = CoreCoord(0, 0)
    prog.set_runtime_args(r, core, [ba.address, bb.address, mt, kt, nt])
    prog.set_runtime_args(c, core, [mt, kt, nt])
    prog.set_runtime_args(w, core, [bo.address, mt * nt])
    return Device().run(prog, {"a": a, "b": b}).outputs["out"]


@pytest.mark.parametrize("fp32", [False, True])
def test_popping_each_k_tile_inside_the_acquire(fp32):
    # the producer refills a freed page while DST still accumulates: the product must use the old one
    a, b = random_tiles((64, 160), 1), random_tiles((160, 96), 2)
    out = run_streaming(a, b, fp32)
    if fp32:
        np.testing.assert_allclose(out, step_model(a, b, True), rtol=2 ** -7, atol=1e-6)
    else:
        assert np.array_equal(out, step_model(a, b, False))


# -- matmul_tiles over whole waited blocks -------------------------------------------------------------


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


def test_matmul_tiles_walking_whole_blocks_rounds_every_k_step():
    a, b = random_tiles((96, 128), 3), random_tiles((128, 64), 4)
    out = run_two_input(tiles_over_blocks, a, b, (96, 64), compute_args=[3, 4, 2]).outputs["out"]
    assert np.array_equal(out, step_model(a, b, False))


# -- transposed in1 tiles, K steps that do not walk evenly ---------------------------------------------------


@compute_kernel
def transposed_uneven():
    kt = get_arg_val(0)
    mm_block_init(A, B, OUT, 1, 1, 1, kt)
    cb_wait_front(A, kt)
    cb_wait_front(B, kt)
    cb_reserve_back(OUT, 1)
    tile_regs_acquire()
    for k in range(kt):
        matmul_block(A, B, k, (k * 3) % kt, 0, 1, 1, 1, kt)     # in1 tiles 0, 3, 1, 4, 2: no fixed step
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(0, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, kt)
    cb_pop_front(B, kt)


def test_transposed_in1_tiles_in_any_order():
    kt = 5
    a, b = random_tiles((32, kt * 32), 5), random_tiles((32, kt * 32), 6)     # B: kt tiles side by side
    out = run_two_input(transposed_uneven, a, b, (32, 32), compute_args=[kt]).outputs["out"]
    tiles = [b[:, j * 32:(j + 1) * 32].T for j in range(kt)]
    b_used = np.concatenate([tiles[(k * 3) % kt] for k in range(kt)], axis=0)
    assert np.array_equal(out, step_model(a, b_used, False))
