"""The untilize program factory: argument tables, bit-identical results on the simulated device
(the host untilize of the host tilize, padding included), rebinding to new buffers."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from checkkernel import accessor_compile_args
from factory_helpers import bits, build, random_values, run
from tilefold.arch.cores import CoreCoord
from tilefold.layout.host import to_device_pages
from tilefold.layout.tiles import tilize, untilize
from tilefold.ops.tilize import override_runtime_arguments, stick_geometry
from tilefold.ops.untilize import untilize_multi_core_interleaved
from tilefold.program import BufferAddress


def test_tables_with_a_cliff_core():
    program = untilize_multi_core_interleaved((1, 1, 101 * 32, 96), "bfloat16")
    k = {kernel.name: kernel for kernel in program.kernels}
    assert set(k) == {"reader", "compute", "compute_cliff", "writer"}
    assert k["compute"].compile_args == [2, 3] and k["compute_cliff"].compile_args == [1, 3]
    assert k["compute_cliff"].cores.cores() == [CoreCoord(2, 6)]
    assert accessor_compile_args(program, k["reader"]) == [2, 2048]
    assert accessor_compile_args(program, k["writer"]) == [16, 192, 2, 192]
    # core 9 = (1,1): blocks 18, 19 -> tiles 54.., sticks 576..
    assert k["reader"].runtime_args[CoreCoord(1, 1)] == [BufferAddress("src"), 6, 54]
    assert k["writer"].runtime_args[CoreCoord(1, 1)] == [BufferAddress("dst"), 64, 3, 192, 576]
    assert k["writer"].runtime_args[CoreCoord(2, 6)] == [BufferAddress("dst"), 32, 3, 192, 3200]


SHAPES = [(1, 1, 128, 256), (1, 1, 256, 512), (2, 3, 64, 128), (1, 1, 101 * 32, 64), (1, 1, 64, 50), (3, 30, 70)]


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_simulated_untilize_is_bit_identical_to_host_untilize(shape, dtype):
    x = random_values(shape, dtype, seed=shape[-1])
    geometry = stick_geometry(shape, dtype)
    program = untilize_multi_core_interleaved(shape, dtype)
    result = run(program, {"src": x})
    out = result.outputs["dst"]
    assert out.shape == geometry.padded_shape
    expected = untilize(tilize(x, pad_value=0), geometry.padded_shape)       # the host's untilize
    assert np.array_equal(bits(out), bits(expected))
    assert np.array_equal(to_device_pages(out, dtype, "ROW_MAJOR"), to_device_pages(expected, dtype, "ROW_MAJOR"))


def test_op_instance_and_rebinding():
    instance = build("untilize", "--shape", "1,1,64,50")
    program = instance.program
    result = run(program, instance.inputs)
    assert all(c.passed for c in instance.check(result.outputs))
    src2 = program.add_buffer("src2", (1, 1, 64, 50), "bfloat16", layout="TILE")
    dst2 = program.add_buffer("dst2", (1, 1, 64, 64), "bfloat16", layout="ROW_MAJOR", role="output")
    override_runtime_arguments(program, {"src": src2, "dst": dst2})
    x2 = random_values((1, 1, 64, 50), "bfloat16", seed=9)
    program.buffers["dst"].role = "inout"          # no kernel writes the old output any more
    again = run(program, {"src": instance.inputs["src"], "src2": x2, "dst": np.zeros((1, 1, 64, 64), np.float32)})
    assert np.array_equal(bits(again.outputs["dst2"][..., :50]), bits(x2))
    assert not again.outputs["dst2"][..., 50:].any()


def test_float32_unpacked_to_dest_is_exact_and_through_srca_is_tf32():
    """With UnpackToDestFp32 (the factory's setting) float32 tiles are bit-exact; the same program
    without it sends them through the 19-bit SRCA: the low 13 mantissa bits are dropped."""
    shape = (1, 1, 64, 128)
    x = random_values(shape, "float32", seed=6)
    exact = run(untilize_multi_core_interleaved(shape, "float32"), {"src": x}).outputs["dst"]
    assert np.array_equal(bits(exact), bits(x))
    program = untilize_multi_core_interleaved(shape, "float32")
    for kernel in program.kernels:
        if kernel.is_compute:
            assert kernel.config.unpacks_to_dest(0)
            kernel.config = replace(kernel.config, unpack_to_dest_mode=())
    truncated = run(program, {"src": x}).outputs["dst"]
    assert np.array_equal(bits(truncated), bits(x) & np.uint32(0xFFFFE000))
    assert not np.array_equal(bits(truncated), bits(x))
