"""Compute-engine numerics on the simulated device, against numpy models of the hardware:
bf16 round-to-nearest-even on pack, bf16 DST unless fp32_dest_acc_en, bfp8_b packing,
FPU element-wise and broadcasts, matmul blocks with K accumulation, reduce, transpose, SFPU."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tilefold.layout.formats import pack_tiles, unpack_tiles
from tilefold.layout.tiles import tilize, untilize
from tilefold.program import ComputeConfig, Program
from tilefold.pykernel import *  # noqa: F403
from tilefold.sim import Device

from simhelpers import grid

A, B, OUT = 0, 1, 16
BF16 = ml_dtypes.bfloat16


def bf16(x):
    return np.asarray(x, np.float32).astype(BF16).astype(np.float32)


@reader_kernel
def read_two():
    a = get_arg_val(0)
    b = get_arg_val(1)
    na = get_arg_val(2)
    nb = get_arg_val(3)
    sa = TensorAccessor(TensorAccessorArgs(0), a, get_tile_size(A))
    sb = TensorAccessor(TensorAccessorArgs(after=TensorAccessorArgs(0)), b, get_tile_size(B))
    cb_reserve_back(A, na)
    for i in range(na):
        noc_async_read_page(i, sa, get_write_ptr(A) + i * get_tile_size(A))
    cb_reserve_back(B, nb)
    for i in range(nb):
        noc_async_read_page(i, sb, get_write_ptr(B) + i * get_tile_size(B))
    noc_async_read_barrier()
    cb_push_back(A, na)
    cb_push_back(B, nb)


@writer_kernel
def write_out():
    dst = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(4), dst, get_tile_size(OUT))
    cb_wait_front(OUT, n)
    for i in range(n):
        noc_async_write_page(i, s, get_read_ptr(OUT) + i * get_tile_size(OUT))
    noc_async_write_barrier()
    cb_pop_front(OUT, n)


def run_two_input(compute, a, b, out_shape, *, dtype="bfloat16", out_dtype=None, config=None, compute_args=()):
    prog = Program("numerics")
    ba = prog.add_buffer("a", a.shape, dtype)
    bb = prog.add_buffer("b", b.shape, dtype)
    bo = prog.add_buffer("out", out_shape, out_dtype or dtype, role="output")
    cores = grid(1)
    prog.create_circular_buffer(cores, A, ba.page_size, ba.num_pages, dtype)
    prog.create_circular_buffer(cores, B, bb.page_size, bb.num_pages, dtype)
    prog.create_circular_buffer(cores, OUT, bo.page_size, bo.num_pages, out_dtype or dtype)
    r = prog.create_kernel(read_two, cores, __import__("tilefold.program", fromlist=["x"]).DataMovementConfig("RISCV_0"),
                           [ba.accessor_args, bb.accessor_args, bo.accessor_args])
    c = prog.create_kernel(compute, cores, config or ComputeConfig())
    w = prog.create_kernel(write_out, cores, __import__("tilefold.program", fromlist=["x"]).DataMovementConfig("RISCV_1"),
                           [ba.accessor_args, bb.accessor_args, bo.accessor_args])
    prog.set_runtime_args(r, (0, 0), [ba.address, bb.address, ba.num_pages, bb.num_pages])
    prog.set_runtime_args(c, (0, 0), list(compute_args))
    prog.set_runtime_args(w, (0, 0), [bo.address, bo.num_pages])
    return Device().run(prog, {"a": a, "b": b}).outputs["out"]


def rand(shape, seed, scale=1.0):
    return bf16(np.random.default_rng(seed).standard_normal(shape) * scale)


# -- element-wise on the FPU ---------------------------------------------------------------------


@compute_kernel
def eltwise_all():
    n = get_arg_val(0)
    op = get_arg_val(1)
    binary_op_init_common(A, B, OUT)
    cb_wait_front(A, n)
    cb_wait_front(B, n)
    cb_reserve_back(OUT, n)
    for i in range(n):
        tile_regs_acquire()
        if op == 0:
            add_tiles(A, B, i, i, 0)
        elif op == 1:
            sub_tiles(A, B, i, i, 0)
        else:
            mul_tiles(A, B, i, i, 0)
        tile_regs_commit()
        tile_regs_wait()
        pack_tile(0, OUT, i, out_of_order_output=True)
        tile_regs_release()
    cb_push_back(OUT, n)
    cb_pop_front(A, n)
    cb_pop_front(B, n)


@pytest.mark.parametrize("op, fn", [(0, np.add), (1, np.subtract), (2, np.multiply)])
def test_fpu_eltwise_is_bf16_round_to_nearest_even_of_the_exact_result(op, fn):
    a, b = rand((64, 64), 1), rand((64, 64), 2)
    out = run_two_input(eltwise_all, a, b, (64, 64), compute_args=[4, op])
    assert np.array_equal(out, bf16(fn(a, b)))


def test_pack_rounds_ties_to_even():
    # 1 + 2^-8 is exactly between two bf16 values (1 and 1 + 2^-7): the even one (1.0) wins;
    # 1 + 3·2^-8 is between 1 + 2^-7 and 1 + 2^-6: the even one (1 + 2^-6) wins.
    a = np.zeros((32, 32), np.float32)
    b = np.zeros((32, 32), np.float32)
    a[0, 0], b[0, 0] = 1.0, 2.0 ** -8
    a[0, 1], b[0, 1] = 1.0 + 2.0 ** -7, 2.0 ** -8
    out = run_two_input(eltwise_all, a, b, (32, 32), dtype="float32", out_dtype="bfloat16",
                        config=ComputeConfig(fp32_dest_acc_en=True), compute_args=[1, 0])
    assert out[0, 0] == 1.0 and out[0, 1] == 1.0 + 2.0 ** -6


# -- broadcasts, transpose, reduce ---------------------------------------------------------------


@compute_kernel
def bcast_and_transpose():
    which = get_arg_val(0)
    cb_wait_front(A, 1)
    cb_wait_front(B, 1)
    cb_reserve_back(OUT, 1)
    tile_regs_acquire()
    if which == 0:
        add_tiles_bcast_rows(A, B, 0, 0, 0)
    elif which == 1:
        mul_tiles_bcast_cols(A, B, 0, 0, 0)
    elif which == 2:
        sub_tiles_bcast_scalar(A, B, 0, 0, 0)
    else:
        transpose_wh_tile(A, 0, 0)
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(0, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 1)
    cb_pop_front(B, 1)


@pytest.mark.parametrize("which, expect", [
    (0, lambda a, b: a + b[0:1, :]),
    (1, lambda a, b: a * b[:, 0:1]),
    (2, lambda a, b: a - b[0, 0]),
    (3, lambda a, b: a.T),
])
def test_broadcasts_and_transpose(which, expect):
    a, b = rand((32, 32), 3), rand((32, 32), 4)
    out = run_two_input(bcast_and_transpose, a, b, (32, 32), compute_args=[which])
    assert np.array_equal(out, bf16(expect(a, b)))


@compute_kernel
def reduce_kernel():
    dim = get_arg_val(0)
    cb_wait_front(A, 2)
    cb_wait_front(B, 1)
    cb_reserve_back(OUT, 1)
    tile_regs_acquire()
    for t in range(2):
        if dim == 0:
            reduce_tile(A, B, t, 0, 0, pool_type="SUM", reduce_dim="REDUCE_ROW")
        else:
            reduce_tile(A, B, t, 0, 0, pool_type="MAX", reduce_dim="REDUCE_COL")
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(0, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 2)
    cb_pop_front(B, 1)


def test_reduce_sum_rows_accumulates_over_tiles_with_scaler():
    a = rand((32, 64), 5)
    scaler = np.full((32, 32), 0.5, np.float32)
    out = run_two_input(reduce_kernel, a, scaler, (32, 32), compute_args=[0])
    left, right = a[:, :32], a[:, 32:]
    expect = bf16(bf16((left * 0.5).sum(axis=1)) + (right * 0.5).sum(axis=1))
    np.testing.assert_allclose(out[:, 0], expect, rtol=2 ** -7)


def test_reduce_max_columns_of_negative_values():
    a = -np.abs(rand((32, 64), 6)) - 1.0
    scaler = np.ones((32, 32), np.float32)
    out = run_two_input(reduce_kernel, a, scaler, (32, 32), compute_args=[1])
    expect = np.maximum(a[:, :32].max(axis=0), a[:, 32:].max(axis=0))
    assert np.array_equal(out[0, :], bf16(expect))


# -- matmul ---------------------------------------------------------------------------------------


@compute_kernel
def matmul_kernel():
    mt = get_arg_val(0)
    kt = get_arg_val(1)
    nt = get_arg_val(2)
    mm_block_init(A, B, OUT, 0, nt, mt, kt)
    cb_wait_front(A, mt * kt)
    cb_wait_front(B, kt * nt)
    cb_reserve_back(OUT, mt * nt)
    tile_regs_acquire()
    for k in range(kt):
        matmul_block(A, B, k, k * nt, 0, 0, nt, mt, kt)
    tile_regs_commit()
    tile_regs_wait()
    for i in range(mt * nt):
        pack_tile(i, OUT, i, out_of_order_output=True)
    tile_regs_release()
    cb_push_back(OUT, mt * nt)
    cb_pop_front(A, mt * kt)
    cb_pop_front(B, kt * nt)


def bf16_accumulation_model(a, b, kt):
    """Each K tile's 32-long products summed in float32, then added to DST and rounded to bf16."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k in range(kt):
        part = a[:, k * 32:(k + 1) * 32].astype(np.float32) @ b[k * 32:(k + 1) * 32].astype(np.float32)
        acc = bf16(acc + part)
    return acc


@pytest.mark.parametrize("fp32_acc", [False, True])
def test_matmul_block_accumulates_over_k(fp32_acc):
    mt, kt, nt = 2, 3, 2
    a, b = rand((mt * 32, kt * 32), 7), rand((kt * 32, nt * 32), 8)
    out = run_two_input(matmul_kernel, a, b, (mt * 32, nt * 32), compute_args=[mt, kt, nt],
                        config=ComputeConfig(fp32_dest_acc_en=fp32_acc))
    exact = a.astype(np.float64) @ b.astype(np.float64)
    if fp32_acc:
        np.testing.assert_allclose(out, bf16(exact), rtol=2 ** -7, atol=1e-6)
    else:
        assert np.array_equal(out, bf16_accumulation_model(a, b, kt))
    assert np.corrcoef(out.ravel(), exact.ravel())[0, 1] > 0.9999


def test_lofi_is_less_accurate_than_hifi4():
    mt, kt, nt = 1, 2, 1
    a, b = rand((32, 64), 9), rand((64, 32), 10)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    errors = {}
    for fidelity in ("LoFi", "HiFi4"):
        out = run_two_input(matmul_kernel, a, b, (32, 32), compute_args=[mt, kt, nt],
                            config=ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=True))
        errors[fidelity] = np.abs(out - exact).max()
    assert errors["LoFi"] > errors["HiFi4"]


# -- SFPU ---------------------------------------------------------------------------------------------


@compute_kernel
def sfpu_chain():
    cb_wait_front(A, 1)
    cb_wait_front(B, 1)
    cb_reserve_back(OUT, 1)
    init_sfpu(A, OUT)
    tile_regs_acquire()
    copy_tile(A, 0, 0)
    copy_tile(B, 0, 1)
    exp_tile_init()
    exp_tile(0)
    add_binary_tile_init()
    add_binary_tile(0, 1, 2)
    sigmoid_tile_init()
    sigmoid_tile(2)
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(2, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 1)
    cb_pop_front(B, 1)


def test_sfpu_chain_rounds_to_bf16_at_every_dst_write():
    a, b = rand((32, 32), 11, 0.5), rand((32, 32), 12)
    out = run_two_input(sfpu_chain, a, b, (32, 32))
    e = bf16(np.exp(a))
    s = bf16(e + b)
    expect = bf16(1.0 / (1.0 + np.exp(-s)))
    assert np.max(np.abs(out - expect)) <= 2 ** -7


# -- bfp8_b ---------------------------------------------------------------------------------------------


def test_bfp8_output_packs_exactly_like_the_host_packer():
    a, b = rand((32, 64), 13), rand((32, 64), 14)
    out = run_two_input(eltwise_all, a, b, (32, 64), out_dtype="bfloat8_b", compute_args=[2, 0])
    tiles = tilize(bf16(a + b))
    expect = untilize(unpack_tiles(pack_tiles(tiles, "bfloat8_b"), "bfloat8_b"), (32, 64))
    assert np.array_equal(out, expect)
