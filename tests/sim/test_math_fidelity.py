"""Math fidelity phases of the FPU multiplier, against values worked out by hand.

The multiplier is 5 × 7 bits. A source value's mantissa (hidden bit included) is cut into
slices: SrcA high = hidden bit + mantissa bits 1-4, SrcA low = bits 5-9; SrcB high = hidden
bit + bits 1-6, SrcB low = the bits after. LoFi multiplies A_hi·B_hi, HiFi2 adds A_lo·B_hi,
HiFi3 adds A_hi·B_lo and HiFi4 adds A_lo·B_lo. Element-wise ops feed in0 to SrcA and in1 to
SrcB; matmul feeds in0 to SrcB and in1 to SrcA. float32 inputs are truncated to TF32 in the
source registers before the phases slice them. DST is float32 and the output CB float32, so
the phase sums reach the output unrounded."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tilefold.program import ComputeConfig
from tilefold.pykernel import *  # noqa: F403

from simhelpers import A, B, OUT, run_two_input


@compute_kernel
def mul_one_tile():
    binary_op_init_common(A, B, OUT)
    mul_tiles_init(A, B)
    cb_wait_front(A, 1)
    cb_wait_front(B, 1)
    cb_reserve_back(OUT, 1)
    tile_regs_acquire()
    mul_tiles(A, B, 0, 0, 0)
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(0, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 1)
    cb_pop_front(B, 1)


@compute_kernel
def matmul_one_tile():
    mm_init(A, B, OUT)
    cb_wait_front(A, 1)
    cb_wait_front(B, 1)
    cb_reserve_back(OUT, 1)
    tile_regs_acquire()
    matmul_tiles(A, B, 0, 0, 0)
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(0, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 1)
    cb_pop_front(B, 1)


def _run(kernel, in0, in1, dtype, fidelity):
    config = ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=True)
    return run_two_input(kernel, in0, in1, (32, 32), dtype=dtype, out_dtype="float32",
                         config=config).outputs["out"]


# bfloat16, SrcA = 1.1111111b = 1.9921875 (every mantissa bit set), SrcB = 1.0000001b = 1.0078125:
#   A_hi = 1.1111b = 1.9375            A_lo = 0.0000111b = 7/128 = 0.0546875
#   B_hi = 1.000000b = 1               B_lo = 0.0000001b = 1/128 = 0.0078125
#   LoFi  = A_hi·B_hi                       = 1.9375
#   HiFi2 = LoFi + A_lo·B_hi = 1.9375 + 0.0546875          = 1.9921875
#   HiFi3 = HiFi2 + A_hi·B_lo = 1.9921875 + 1.9375/128     = 2.00732421875
#   HiFi4 = HiFi3 + A_lo·B_lo = 2.00732421875 + 7/16384    = 2.00775146484375 (= A·B exactly)
# With the registers swapped (SrcA = 1.0078125) LoFi would be 1 × 1.984375: the test also
# pins which operand is SrcA.
BF16_SRCA, BF16_SRCB = 1.9921875, 1.0078125
BF16_EXPECTED = {"LoFi": 1.9375, "HiFi2": 1.9921875, "HiFi3": 2.00732421875, "HiFi4": 2.00775146484375}

# bfloat8_b keeps 7 magnitude bits with the leading 1 explicit: at most 6 mantissa bits after
# the hidden one, so SrcB's low slice is always empty. SrcA = 1.111111b = 1.984375,
# SrcB = 1.000001b = 1.015625 (both at the block's shared exponent, so nothing is lost):
#   A_hi = 1.9375, A_lo = 0.000011b = 3/64 = 0.046875;  B_hi = 1.015625, B_lo = 0
#   LoFi  = 1.9375 × 1.015625                 = 1.9677734375
#   HiFi2 = LoFi + 0.046875 × 1.015625        = 2.015380859375 (= A·B exactly)
#   HiFi3 = HiFi4 = HiFi2 (the terms with B_lo are zero)
BFP8_SRCA, BFP8_SRCB = 1.984375, 1.015625
BFP8_EXPECTED = {"LoFi": 1.9677734375, "HiFi2": 2.015380859375, "HiFi3": 2.015380859375,
                 "HiFi4": 2.015380859375}

# float32 first loses its low 13 mantissa bits in the 19-bit source registers (truncated), then
# the phases slice what is left; SrcA's 10th mantissa bit is never multiplied.
# SrcA = 2 - 2^-23 (all 23 mantissa bits set) → TF32 1.1111111111b; the multiplier sees 9 bits:
#   A_hi = 1.1111b = 1.9375,  A_lo = 0.000011111b = 31/512 = 0.060546875
# SrcB = 1 + 2^-7 + 2^-10 + 2^-20 → TF32 1 + 2^-7 + 2^-10 (bit 20 dropped):
#   B_hi = 1.000000b = 1,     B_lo = 2^-7 + 2^-10 = 9/1024 = 0.0087890625
#   LoFi  = 1.9375
#   HiFi2 = 1.9375 + 0.060546875                          = 1.998046875
#   HiFi3 = 1.998046875 + 1.9375 × 9/1024                 = 2.01507568359375
#   HiFi4 = 2.01507568359375 + 31/512 × 9/1024 = + 279/2^19 = 2.0156078338623046875
# (the exact float32 product would be 2.01757991...: the registers lose it even at HiFi4)
FP32_SRCA, FP32_SRCB = 2 - 2.0 ** -23, 1 + 2.0 ** -7 + 2.0 ** -10 + 2.0 ** -20
FP32_EXPECTED = {"LoFi": 1.9375, "HiFi2": 1.998046875, "HiFi3": 2.01507568359375, "HiFi4": 2.0156078338623046875}

CASES = [("bfloat16", f, BF16_SRCA, BF16_SRCB, v) for f, v in BF16_EXPECTED.items()] + \
        [("bfloat8_b", f, BFP8_SRCA, BFP8_SRCB, v) for f, v in BFP8_EXPECTED.items()] + \
        [("float32", f, FP32_SRCA, FP32_SRCB, v) for f, v in FP32_EXPECTED.items()]


@pytest.mark.parametrize("dtype,fidelity,src_a,src_b,expected", CASES)
def test_eltwise_mul_phases(dtype, fidelity, src_a, src_b, expected):
    # mul_tiles: in0 is SrcA, in1 is SrcB; every element of the tile is the same product
    in0 = np.full((32, 32), src_a, np.float32)
    in1 = np.full((32, 32), src_b, np.float32)
    out = _run(mul_one_tile, in0, in1, dtype, fidelity)
    assert np.array_equal(out, np.full((32, 32), expected, np.float32)), (out[0, 0], expected)


@pytest.mark.parametrize("dtype,fidelity,src_a,src_b,expected", CASES)
def test_matmul_phases(dtype, fidelity, src_a, src_b, expected):
    # matmul: in0 is SrcB, in1 is SrcA. in0 holds SrcB's value in column 0 and in1 SrcA's in
    # row 0, zeros elsewhere: every output element is the one product (the zeros add nothing)
    in0 = np.zeros((32, 32), np.float32)
    in0[:, 0] = src_b
    in1 = np.zeros((32, 32), np.float32)
    in1[0, :] = src_a
    out = _run(matmul_one_tile, in0, in1, dtype, fidelity)
    assert np.array_equal(out, np.full((32, 32), expected, np.float32)), (out[0, 0], expected)


def test_phases_accumulate_in_a_matmul_over_k():
    # 64 K terms of bfloat16 values with random mantissas: each fidelity equals the float64
    # sum of its phase products (summed exactly here, rounded once by the float32 DST)
    rng = np.random.default_rng(3)
    in0 = (rng.uniform(1, 2, (32, 64)) * rng.choice([-1, 1], (32, 64))).astype(ml_dtypes.bfloat16).astype(np.float64)
    in1 = rng.uniform(1, 2, (64, 32)).astype(ml_dtypes.bfloat16).astype(np.float64)

    def cut(x, keep_bits):          # sign, exponent and `keep_bits` mantissa bits of bf16 values
        m, e = np.frexp(x)
        return np.ldexp(np.trunc(m * 2.0 ** (keep_bits + 1)) / 2.0 ** (keep_bits + 1), e)

    a_hi, b_hi = cut(in1, 4), cut(in0, 6)                # SrcA is in1, SrcB is in0
    a_lo, b_lo = in1 - a_hi, in0 - b_hi
    terms = {"LoFi": b_hi @ a_hi}
    terms["HiFi2"] = terms["LoFi"] + b_hi @ a_lo
    terms["HiFi3"] = terms["HiFi2"] + b_lo @ a_hi
    terms["HiFi4"] = terms["HiFi3"] + b_lo @ a_lo
    for fidelity, exact in terms.items():
        out = run_two_input(matmul_k2, in0.astype(np.float32), in1.astype(np.float32), (32, 32),
                            config=ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=True),
                            out_dtype="float32").outputs["out"]
        np.testing.assert_allclose(out, exact, rtol=2 ** -22, atol=2 ** -20)
    assert np.array_equal(terms["HiFi4"], in0 @ in1)


@compute_kernel
def matmul_k2():
    mm_init(A, B, OUT)
    cb_wait_front(A, 2)
    cb_wait_front(B, 2)
    cb_reserve_back(OUT, 1)
    tile_regs_acquire()
    matmul_tiles(A, B, 0, 0, 0)
    matmul_tiles(A, B, 1, 1, 0)
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(0, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 2)
    cb_pop_front(B, 2)
