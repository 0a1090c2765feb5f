"""The packer's L1 accumulation (``pack_reconfig_l1_acc``): packs add DST to the tiles already
in L1, in float32, stored in the CB's format; flag 0 restores overwriting."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tilefold.errors import CircularBufferError, DstError
from tilefold.program import ComputeConfig
from tilefold.pykernel import *  # noqa: F403

from simhelpers import A, B, OUT, run_two_input, where

BF16 = ml_dtypes.bfloat16


@compute_kernel
def sum_tiles_in_l1():
    """Packs tile i of A onto output page 0, accumulating from the second tile on; with
    ``restart`` it then packs tile 0 once more with accumulation off."""
    n = get_arg_val(0)
    restart = get_arg_val(1)
    flag = get_arg_val(2)
    unary_op_init_common(A, OUT)
    copy_tile_init(A)
    cb_wait_front(A, n)
    cb_wait_front(B, 1)
    cb_reserve_back(OUT, 1)
    for i in range(n):
        if i == 1:
            pack_reconfig_l1_acc(flag)
        tile_regs_acquire()
        copy_tile(A, i, 0)
        tile_regs_commit()
        tile_regs_wait()
        pack_tile(0, OUT, 0, out_of_order_output=True)
        tile_regs_release()
    if restart == 1:
        pack_reconfig_l1_acc(0)
        tile_regs_acquire()
        copy_tile(A, 0, 0)
        tile_regs_commit()
        tile_regs_wait()
        pack_tile(0, OUT, 0, out_of_order_output=True)
        tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, n)
    cb_pop_front(B, 1)


def tiles(n: int, seed: int) -> np.ndarray:
    """n tiles side by side, (32, 32n), exact in bfloat16."""
    x = np.random.default_rng(seed).standard_normal((32, 32 * n)) * 4
    return x.astype(BF16).astype(np.float32)


def run(a, out_dtype, *, restart=0, flag=1, dtype="float32"):
    n = a.shape[1] // 32
    return run_two_input(sum_tiles_in_l1, a, np.zeros((32, 32), np.float32), (32, 32), dtype=dtype,
                         out_dtype=out_dtype, config=ComputeConfig(fp32_dest_acc_en=True),
                         compute_args=[n, restart, flag]).outputs["out"]


def test_float32_tiles_accumulate_exactly_in_float32():
    a = tiles(5, 1)
    a[:, 32:64] *= 2.0 ** -20          # small terms whose sum a bfloat16 sum would lose
    expect = a[:, :32].copy()
    for i in range(1, 5):
        expect = expect + a[:, 32 * i:32 * (i + 1)]
    assert np.array_equal(run(a, "float32"), expect)


def test_bfloat16_tiles_round_each_accumulation_to_bfloat16():
    a = tiles(4, 2)
    expect = a[:, :32].astype(BF16)
    for i in range(1, 4):
        expect = (expect.astype(np.float32) + a[:, 32 * i:32 * (i + 1)]).astype(BF16)
    out = run(a, "bfloat16")
    assert np.array_equal(out, expect.astype(np.float32))
    # a float32 sum rounded once differs somewhere: each step really rounds
    assert not np.array_equal(out, a.reshape(32, 4, 32).sum(axis=1).astype(BF16).astype(np.float32))


def test_flag_zero_packs_overwrite_again():
    a = tiles(3, 3)
    assert np.array_equal(run(a, "float32", restart=1), a[:, :32])


def test_accumulating_into_a_block_float_cb_is_an_error_at_the_pack():
    with pytest.raises(CircularBufferError, match="accumulates into float32 and bfloat16 tiles only") as err:
        run(tiles(2, 4), "bfloat8_b")
    assert str(err.value).startswith(where(sum_tiles_in_l1, "pack_tile(0, OUT, 0", 0))


def test_flag_other_than_zero_or_one_is_an_error():
    with pytest.raises(DstError, match=r"pack_reconfig_l1_acc\(2\): the flag is 0") as err:
        run(tiles(2, 5), "float32", flag=2)
    assert str(err.value).startswith(where(sum_tiles_in_l1, "pack_reconfig_l1_acc(flag)"))
