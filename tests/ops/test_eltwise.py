"""Element-wise binary add / sub / mul: the work split of split_work_to_cores in the runtime
args, and results within one bfloat16 ulp of numpy (float32: within the TF32 bound)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from factory_helpers import build, run
from tilefold.arch.cores import CoreCoord, CoreRange
from tilefold.errors import LayoutError, ProgramError
from tilefold.ops.base import bf16_ulp_distance
from tilefold.ops.eltwise import block_size, eltwise_binary_multi_core, float32_error_bound, reference
from tilefold.program import BufferAddress


def test_work_split_in_the_tables():
    """100 tiles on 8x8: group 1 (36 cores, column-major first) takes 2 tiles, group 2 takes 1."""
    program = eltwise_binary_multi_core((1, 1, 320, 320), "add")          # 10 x 10 tiles
    k = {kernel.name: kernel for kernel in program.kernels}
    assert set(k) == {"reader", "compute", "compute_group_2", "writer"}
    assert k["compute"].compile_args == [1, 2] and k["compute_group_2"].compile_args == [1, 1]
    assert set(k["compute"].cores.ranges) == {CoreRange((0, 0), (3, 7)), CoreRange((4, 0), (4, 3))}
    assert k["reader"].runtime_args[CoreCoord(0, 1)] == [BufferAddress("src0"), BufferAddress("src1"), 2, 2]
    assert k["reader"].runtime_args[CoreCoord(4, 4)] == [BufferAddress("src0"), BufferAddress("src1"), 1, 72]
    assert k["writer"].runtime_args[CoreCoord(7, 7)] == [BufferAddress("dst"), 1, 99]
    assert k["compute"].function is k["compute_group_2"].function


def test_block_size_is_the_largest_divisor_that_fits_dst():
    assert [block_size(n, 8) for n in (1, 6, 8, 12, 13, 16, 9)] == [1, 6, 8, 6, 1, 8, 3]
    assert block_size(12, 4) == 4


def ulps(actual, expected):
    return bf16_ulp_distance(actual, expected).max()


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@pytest.mark.parametrize("shape", [(1, 1, 256, 512), (3, 5, 64, 96), (2, 30, 50)], ids=lambda s: "x".join(map(str, s)))
def test_bfloat16_within_one_ulp_of_numpy(op, shape):
    instance = build("eltwise", "--op", op, "--shape", ",".join(map(str, shape)), "--seed", str(shape[-1]))
    result = run(instance.program, instance.inputs)
    out = result.outputs["dst"]
    a, b = instance.inputs["src0"], instance.inputs["src1"]
    with np.errstate(all="ignore"):
        exact = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](a.astype(np.float64), b.astype(np.float64))
    assert ulps(out, exact.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)) <= 1
    assert np.array_equal(out, out.astype(ml_dtypes.bfloat16).astype(np.float32))      # packed as bfloat16
    assert all(c.passed for c in instance.check(result.outputs))


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_float32_within_the_tf32_bound(op):
    instance = build("eltwise", "--op", op, "--shape", "64,96", "--dtype", "float32")
    result = run(instance.program, instance.inputs)
    a, b = instance.inputs["src0"], instance.inputs["src1"]
    error = np.abs(result.outputs["dst"].astype(np.float64) - reference(op, a, b, "float32"))
    assert np.all(error <= float32_error_bound(op, a, b))
    assert error.max() > 0          # float32 inputs do pass through 19-bit source registers
    assert instance.program.kernels[1].config.fp32_dest_acc_en


def test_a_wrong_op_is_caught():
    add = build("eltwise", "--op", "add", "--shape", "64,64")
    sub_result = run(build("eltwise", "--op", "sub", "--shape", "64,64").program, add.inputs)
    assert not add.check(sub_result.outputs)[0].passed


@pytest.mark.parametrize("call, error, words", [
    (lambda: eltwise_binary_multi_core((64, 64), "div"), ProgramError, "eltwise op 'div' is not one of add, sub, mul"),
    (lambda: eltwise_binary_multi_core((64, 64), "add", "bfloat8_b"), LayoutError, "is not supported"),
])
def test_mistakes(call, error, words):
    with pytest.raises(error, match=words):
        call()
