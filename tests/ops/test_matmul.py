"""The single-core matmul: sub-block choice and argument tables, and results against numpy —
PCC and the derived per-element error bound, with bfloat16 and with float32 accumulation in DST."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from factory_helpers import build, run
from tilefold.arch.cores import CoreCoord
from tilefold.errors import LayoutError, ProgramError
from tilefold.ops.base import pcc
from tilefold.ops.matmul import accumulation_error_bound, matmul_config, matmul_single_core, min_pcc
from tilefold.program import BufferAddress

BF16 = ml_dtypes.bfloat16


def bf16(x):
    return np.asarray(x, np.float32).astype(BF16).astype(np.float32)


def test_subblock_choice_follows_dst_capacity():
    assert (matmul_config(256, 256, 256).out_subblock_h, matmul_config(256, 256, 256).out_subblock_w) == (4, 2)
    fp32 = matmul_config(256, 256, 256, fp32_dest_acc_en=True)
    assert (fp32.out_subblock_h, fp32.out_subblock_w) == (2, 2)                  # 4 float32 tiles per acquire
    odd = matmul_config(96, 64, 160)                                             # 3 x 5 output tiles
    assert (odd.out_subblock_h, odd.out_subblock_w) == (1, 5)
    assert matmul_config(512, 512, 512).in1_block_w == 16                        # all of B fits in L1


def test_tables():
    config = matmul_config(128, 512, 192)                                        # 4 x 16 @ 16 x 6 tiles
    program = matmul_single_core(config)
    k = {kernel.name: kernel for kernel in program.kernels}
    h, w, width = config.out_subblock_h, config.out_subblock_w, config.in1_block_w
    assert (h, w, width) == (4, 2, 6)
    assert k["compute"].compile_args == [1, 1, 3, 16, 4, 2]
    assert k["reader"].runtime_args[CoreCoord(0, 0)] == [BufferAddress("src0"), BufferAddress("src1"), 4, 16, 6, 4, 6, 0, 0, 6]
    assert k["writer"].runtime_args[CoreCoord(0, 0)] == [BufferAddress("dst"), 4, 6, 4, 2, 6, 0, 0, 6]
    assert {cb.index: cb.num_pages for cb in program.circular_buffers} == {0: 64, 1: 96, 16: 16}
    assert k["compute"].config.fp32_dest_acc_en is False and k["compute"].config.math_fidelity == "HiFi4"


def step_rounded_model(a, b):
    """K tile by K tile: the tile's products summed in float32, added to DST, rounded to bfloat16."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k in range(0, a.shape[1], 32):
        acc = bf16(acc + a[:, k:k + 32] @ b[k:k + 32])
    return acc


def run_matmul(*argv):
    instance = build("matmul", *argv)
    result = run(instance.program, instance.inputs)
    a, b = instance.inputs["src0"], instance.inputs["src1"]
    exact = a.astype(np.float64) @ b.astype(np.float64)
    return instance, result.outputs["dst"], a, b, exact


def test_bfloat16_accumulation():
    instance, out, a, b, exact = run_matmul("--shape", "128,512,96", "--no-fp32-dest-acc-en")
    config = matmul_config(128, 512, 96, fp32_dest_acc_en=False)
    assert pcc(out, exact) >= 0.9999
    bound = accumulation_error_bound(a, b, config)
    assert np.all(np.abs(out - exact) <= bound)
    # the K loop really rounds the running sums to bfloat16 after every K tile
    model = step_rounded_model(a, b)
    assert np.mean(out == model) > 0.99
    assert np.mean(out == bf16(exact)) < 0.9
    assert all(c.passed for c in instance.check({"dst": out}))


def test_float32_accumulation_is_much_tighter():
    _, out, a, b, exact = run_matmul("--shape", "128,512,96", "--fp32-dest-acc-en")
    on = matmul_config(128, 512, 96, fp32_dest_acc_en=True)
    off = matmul_config(128, 512, 96, fp32_dest_acc_en=False)
    bound = accumulation_error_bound(a, b, on)
    assert np.all(np.abs(out - exact) <= bound)
    assert pcc(out, exact) >= 0.99999
    assert bound.max() * 10 < accumulation_error_bound(a, b, off).max()
    # float32 DST, one rounding to bfloat16 when packed: within one ulp of the exact result rounded once
    assert np.all(np.abs(out - bf16(exact)) <= np.abs(bf16(exact)) * 2.0 ** -7 + 1e-30)


def test_lofi_is_less_accurate_but_within_its_bound():
    errors = {}
    for fidelity in ("LoFi", "HiFi4"):
        _, out, a, b, exact = run_matmul("--shape", "64,256,64", "--math-fidelity", fidelity, "--fp32-dest-acc-en")
        config = matmul_config(64, 256, 64, math_fidelity=fidelity, fp32_dest_acc_en=True)
        assert np.all(np.abs(out - exact) <= accumulation_error_bound(a, b, config))
        errors[fidelity] = np.abs(out - exact).max()
        assert pcc(out, exact) >= min_pcc(config)
    assert errors["LoFi"] > 2 * errors["HiFi4"]


@pytest.mark.parametrize("shape", ["100,70,50", "32,32,32", "64,96,160"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_shapes_and_dtypes(shape, dtype):
    instance, out, a, b, exact = run_matmul("--shape", shape, "--dtype", dtype)
    M, K, N = map(int, shape.split(","))
    config = matmul_config(M, K, N, dtype)
    assert out.shape == (M, N)
    assert np.all(np.abs(out - exact) <= accumulation_error_bound(a, b, config))
    assert pcc(out, exact) >= 0.9999
    assert all(c.passed for c in instance.check({"dst": out}))


def test_a_wrong_result_fails_the_check():
    instance, out, a, b, exact = run_matmul("--shape", "64,128,64")
    wrong = out.copy()
    wrong[:32, :32] = bf16(a[:32, :96].astype(np.float64) @ b[:96, :32])     # one K tile missing
    assert not instance.check({"dst": wrong})[0].passed


@pytest.mark.parametrize("call, error, words", [
    (lambda: matmul_config(64, 64, 64, subblock=(3, 2)), ProgramError, "must be positive and divide the output.s 2x2 tiles"),
    (lambda: matmul_config(256, 64, 256, subblock=(4, 4)), ProgramError, "exceed the 8 tiles of one DST acquire"),
    (lambda: matmul_config(64, 64 * 1024, 64), ProgramError, "use K of at most"),
    (lambda: matmul_config(64, 64, 64, "bfloat8_b"), LayoutError, "is not supported"),
    (lambda: matmul_config(64, 0, 64), LayoutError, "K = 0 must be a positive integer"),
    (lambda: matmul_config(64, 64, 64, math_fidelity="HiFi9"), ProgramError, "math fidelity 'HiFi9'"),
    (lambda: build("matmul", "--shape", "64,64"), LayoutError, "must be M,K,N"),
])
def test_mistakes(call, error, words):
    with pytest.raises(error, match=words):
        call()
