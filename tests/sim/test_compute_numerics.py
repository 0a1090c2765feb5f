"""Compute-engine numerics on the simulated device, against numpy models of the hardware:
bf16 round-to-nearest-even on pack, bf16 DST unless fp32_dest_acc_en, bfp8_b packing,
FPU element-wise and broadcasts, matmul blocks with K accumulation, reduce, transpose, SFPU."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tilefold.layout.formats import pack_tiles, unpack_tiles
from tilefold.layout.tiles import tilize, untilize
from tilefold.program import ComputeConfig
from tilefold.pykernel import *  # noqa: F403

from simhelpers import run_two_input

from simhelpers import A, B, OUT
BF16 = ml_dtypes.bfloat16


def bf16(x):
    return np.asarray(x, np.float32).astype(BF16).astype(np.float32)


def output_of(*args, **kwargs):
    return run_two_input(*args, **kwargs).outputs["out"]


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
            add_tiles_init(A, B)
            add_tiles(A, B, i, i, 0)
        elif op == 1:
            sub_tiles_init(A, B)
            sub_tiles(A, B, i, i, 0)
        else:
            mul_tiles_init(A, B)
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
    out = output_of(eltwise_all, a, b, (64, 64), compute_args=[4, op])
    assert np.array_equal(out, bf16(fn(a, b)))


def test_pack_rounds_ties_to_even():
    # 1 + 2^-8 is exactly between two bf16 values (1 and 1 + 2^-7): the even one (1.0) wins;
    # 1 + 3·2^-8 is between 1 + 2^-7 and 1 + 2^-6: the even one (1 + 2^-6) wins.
    a = np.zeros((32, 32), np.float32)
    b = np.zeros((32, 32), np.float32)
    a[0, 0], b[0, 0] = 1.0, 2.0 ** -8
    a[0, 1], b[0, 1] = 1.0 + 2.0 ** -7, 2.0 ** -8
    out = output_of(eltwise_all, a, b, (32, 32), dtype="float32", out_dtype="bfloat16",
                        config=ComputeConfig(fp32_dest_acc_en=True), compute_args=[1, 0])
    assert out[0, 0] == 1.0 and out[0, 1] == 1.0 + 2.0 ** -6


# -- broadcasts, transpose, reduce ---------------------------------------------------------------


@compute_kernel
def bcast_and_transpose():
    which = get_arg_val(0)
    binary_op_init_common(A, B, OUT)
    cb_wait_front(A, 1)
    cb_wait_front(B, 1)
    cb_reserve_back(OUT, 1)
    tile_regs_acquire()
    if which == 0:
        add_bcast_rows_init_short(A, B)
        add_tiles_bcast_rows(A, B, 0, 0, 0)
    elif which == 1:
        mul_bcast_cols_init_short(A, B)
        mul_tiles_bcast_cols(A, B, 0, 0, 0)
    elif which == 2:
        sub_tiles_bcast_scalar_init_short(A, B)
        sub_tiles_bcast_scalar(A, B, 0, 0, 0)
    else:
        transpose_wh_init_short(A)
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
    out = output_of(bcast_and_transpose, a, b, (32, 32), compute_args=[which])
    assert np.array_equal(out, bf16(expect(a, b)))


@compute_kernel
def reduce_kernel():
    dim = get_arg_val(0)
    compute_kernel_hw_startup(A, B, OUT)
    if dim == 0:
        reduce_init(A, B, OUT, pool_type="SUM", reduce_dim="REDUCE_ROW")
    else:
        reduce_init(A, B, OUT, pool_type="MAX", reduce_dim="REDUCE_COL")
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
    out = output_of(reduce_kernel, a, scaler, (32, 32), compute_args=[0])
    left, right = a[:, :32], a[:, 32:]
    expect = bf16(bf16((left * 0.5).sum(axis=1)) + (right * 0.5).sum(axis=1))
    np.testing.assert_allclose(out[:, 0], expect, rtol=2 ** -7)


def test_reduce_max_columns_of_negative_values():
    a = -np.abs(rand((32, 64), 6)) - 1.0
    scaler = np.ones((32, 32), np.float32)
    out = output_of(reduce_kernel, a, scaler, (32, 32), compute_args=[1])
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
    """Each K tile's 32-long products summed exactly and rounded once to float32, then added to DST
    and rounded to bf16."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k in range(kt):
        part = (a[:, k * 32:(k + 1) * 32].astype(np.float64) @ b[k * 32:(k + 1) * 32].astype(np.float64)).astype(np.float32)
        acc = bf16(acc + part)
    return acc


@pytest.mark.parametrize("fp32_acc", [False, True])
def test_matmul_block_accumulates_over_k(fp32_acc):
    mt, kt, nt = 2, 3, 2
    a, b = rand((mt * 32, kt * 32), 7), rand((kt * 32, nt * 32), 8)
    out = output_of(matmul_kernel, a, b, (mt * 32, nt * 32), compute_args=[mt, kt, nt],
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
        out = output_of(matmul_kernel, a, b, (32, 32), compute_args=[mt, kt, nt],
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
    out = output_of(sfpu_chain, a, b, (32, 32))
    e = bf16(np.exp(a))
    s = bf16(e + b)
    expect = bf16(1.0 / (1.0 + np.exp(-s)))
    assert np.max(np.abs(out - expect)) <= 2 ** -7


# -- bfp8_b ---------------------------------------------------------------------------------------------


def test_bfp8_output_packs_exactly_like_the_host_packer():
    a, b = rand((32, 64), 13), rand((32, 64), 14)
    out = output_of(eltwise_all, a, b, (32, 64), out_dtype="bfloat8_b", compute_args=[2, 0])
    tiles = tilize(bf16(a + b))
    expect = untilize(unpack_tiles(pack_tiles(tiles, "bfloat8_b"), "bfloat8_b"), (32, 64))
    assert np.array_equal(out, expect)
