"""The tilize program factory (after the TT-Metal tilize factory): argument tables and work split against the factory's
numbers, bit-identical results on the simulated device, rebinding to new buffers, user mistakes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from checkkernel import accessor_compile_args
from factory_helpers import bits, build, random_values, run
from tilefold.arch.cores import CoreCoord, CoreRange
from tilefold.errors import LayoutError, ProgramError
from tilefold.layout.host import to_device_pages
from tilefold.ops.tilize import (
    override_runtime_arguments,
    pad_to,
    stick_geometry,
    tilize_multi_core_interleaved,
)
from tilefold.program import BufferAddress


def kernels_by_name(program):
    return {k.name: k for k in program.kernels}


def test_seed_example_256x512_tables():
    """[1, 1, 256, 512] bfloat16 on 8x8: 8 blocks of 16 tiles on 8 cores, one block each."""
    program = tilize_multi_core_interleaved((1, 1, 256, 512), "bfloat16")
    k = kernels_by_name(program)
    assert set(k) == {"reader", "compute", "writer"}         # no cliff core, no second compute kernel
    cores = [CoreCoord(i, 0) for i in range(8)]
    assert k["reader"].cores.cores() == cores
    # reader CT: stick_size = 512 * 2, then TensorAccessorArgs(src): interleaved DRAM, aligned page size
    assert k["reader"].compile_args[0] == 1024
    assert accessor_compile_args(program, k["reader"]) == [1024, 2, 1024]
    assert k["compute"].compile_args == [1, 16]                # per_core_block_cnt, per_core_block_tile_cnt
    assert accessor_compile_args(program, k["writer"]) == [16, 2, 2048]
    for i, core in enumerate(cores):
        assert k["reader"].runtime_args[core] == [BufferAddress("src"), 32, 1024, 16, 1024, 1, 0, 0, 32 * i]
        assert k["writer"].runtime_args[core] == [BufferAddress("dst"), 16, 16 * i]
    cbs = {cb.index: cb for cb in program.circular_buffers}
    assert (cbs[0].num_pages, cbs[0].page_size, cbs[16].num_pages, cbs[16].page_size) == (16, 2048, 16, 2048)
    assert k["reader"].config.processor == "RISCV_0" and k["writer"].config.processor == "RISCV_1"
    assert k["compute"].config.fp32_dest_acc_en is False


def test_101_blocks_cliff_core_tables():
    """101 blocks of 2 tiles on 8x8: 50 full cores with 2 blocks, the cliff core (2,6) with 1 and its
    own compute kernel object running the same function."""
    program = tilize_multi_core_interleaved((1, 1, 101 * 32, 64), "float32")
    k = kernels_by_name(program)
    assert set(k) == {"reader", "compute", "compute_cliff", "writer"}
    assert k["compute"].compile_args == [2, 2] and k["compute_cliff"].compile_args == [1, 2]
    assert k["compute_cliff"].cores.cores() == [CoreCoord(2, 6)]
    assert set(k["compute"].cores.ranges) == {CoreRange((0, 0), (7, 5)), CoreRange((0, 6), (1, 6))}
    assert k["compute"].function is k["compute_cliff"].function
    assert k["compute"].source_file == k["compute_cliff"].source_file == "compute.cpp"
    assert k["compute"].config.fp32_dest_acc_en and k["compute_cliff"].config.fp32_dest_acc_en
    stick = 64 * 4
    assert k["reader"].runtime_args[CoreCoord(1, 0)] == [BufferAddress("src"), 64, stick, 2, stick, 1, 0, 0, 64]
    assert k["reader"].runtime_args[CoreCoord(2, 6)] == [BufferAddress("src"), 32, stick, 2, stick, 1, 0, 0, 3200]
    assert k["writer"].runtime_args[CoreCoord(1, 6)] == [BufferAddress("dst"), 4, 49 * 4]
    assert k["writer"].runtime_args[CoreCoord(2, 6)] == [BufferAddress("dst"), 2, 200]


SHAPES = [(1, 1, 128, 256), (1, 1, 256, 512), (2, 3, 64, 128), (1, 1, 101 * 32, 64), (1, 1, 64, 50), (3, 30, 70)]


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_simulated_tilize_is_bit_identical_to_host_tilize(shape, dtype):
    x = random_values(shape, dtype, seed=len(shape) + shape[-1])
    geometry = stick_geometry(shape, dtype)
    program = tilize_multi_core_interleaved(shape, dtype)
    result = run(program, {"src": pad_to(x, geometry.padded_shape)}, padded={"dst": geometry.padded_shape})
    out = result.outputs["dst"]                          # the tiles read back at the padded shape
    assert np.array_equal(bits(out), bits(pad_to(x, geometry.padded_shape)))
    device_pages = to_device_pages(out, dtype, "TILE")
    assert np.array_equal(device_pages, to_device_pages(x, dtype, "TILE", pad_value=0))
    element = geometry.data_format.element_size
    padded_bytes = int(np.prod(geometry.padded_shape)) * element
    assert result.perf.counters.dram_read_bytes == padded_bytes      # every stick read once
    assert result.perf.counters.dram_write_bytes == padded_bytes     # every tile written once


def test_w_not_multiple_of_32_uses_the_padded_stick_size():
    geometry = stick_geometry((1, 1, 64, 50), "bfloat16")
    assert geometry.padded_shape == (1, 1, 64, 64) and geometry.stick_size == 128 and geometry.ntiles_per_block == 2
    program = tilize_multi_core_interleaved((1, 1, 64, 50), "bfloat16")
    assert program.buffer("src").shape == (1, 1, 64, 64) and program.buffer("src").page_size == 128
    assert kernels_by_name(program)["reader"].compile_args[0] == 128


def test_op_instance_runs_and_checks_exactly():
    instance = build("tilize", "--shape", "2,3,64,128", "--dtype", "float32")
    result = run(instance.program, instance.inputs)
    [comparison] = instance.check(result.outputs)
    assert comparison.passed and comparison.max_abs_error == 0
    assert any("12 cores, 4 tiles per block" in line for line in instance.summary)
    # a wrong result is caught: the comparison is exact
    broken = dict(result.outputs, dst=result.outputs["dst"] + np.float32(2 ** -20))
    assert not instance.check(broken)[0].passed


def test_override_runtime_arguments_rebinds_only_buffer_addresses():
    shape = (1, 1, 101 * 32, 64)
    program = tilize_multi_core_interleaved(shape, "bfloat16")
    src2 = program.add_buffer("src2", shape, "bfloat16", layout="ROW_MAJOR", role="input")
    dst2 = program.add_buffer("dst2", shape, "bfloat16", layout="TILE", role="output")
    before = {k.name: {c: list(a) for c, a in k.runtime_args.items()} for k in program.kernels}
    compile_before = {k.name: list(k.compile_args) for k in program.kernels}

    override_runtime_arguments(program, {"src": src2, "dst": dst2})

    for kernel in program.kernels:
        assert kernel.compile_args == compile_before[kernel.name]
        for core, args in kernel.runtime_args.items():
            old = before[kernel.name][core]
            changed = [i for i, (a, b) in enumerate(zip(old, args)) if a != b]
            assert changed == [0] and len(old) == len(args)
            assert args[0] == BufferAddress({"reader": "src2", "writer": "dst2"}[kernel.name])
    old_x, new_x = random_values(shape, "bfloat16", 1), random_values(shape, "bfloat16", 2)
    program.buffers["dst"].role = "inout"          # no kernel writes the old output any more
    result = run(program, {"src": old_x, "src2": new_x, "dst": np.zeros(shape, np.float32)})
    assert np.array_equal(bits(result.outputs["dst2"]), bits(new_x))       # the new data, tilized
    assert not result.outputs["dst"].any()                                  # the old output untouched


def test_override_rejects_a_buffer_of_another_spec():
    program = tilize_multi_core_interleaved((1, 1, 64, 64), "bfloat16")
    wide = program.add_buffer("wide", (1, 1, 64, 128), "bfloat16", layout="ROW_MAJOR")
    with pytest.raises(ProgramError, match="cannot replace 'src'.*build a new program"):
        override_runtime_arguments(program, {"src": wide})
    with pytest.raises(ProgramError, match="no buffer named 'nowhere'"):
        override_runtime_arguments(program, {"dst": "nowhere"})


@pytest.mark.parametrize("call, error, words", [
    (lambda: tilize_multi_core_interleaved((64, 64), "bfloat8_b"), LayoutError, "no row-major form"),
    (lambda: tilize_multi_core_interleaved((64, 0), "bfloat16"), LayoutError, "positive sizes"),
    (lambda: tilize_multi_core_interleaved((64, 64), "bfloat16", grid=(9, 1)), ProgramError, "does not fit"),
    (lambda: tilize_multi_core_interleaved((32, 32 * 400), "bfloat16"), ProgramError, "use a last dim of at most"),
])
def test_mistakes(call, error, words):
    with pytest.raises(error, match=words):
        call()


def _without_unpack_to_dest(program):
    for kernel in program.kernels:
        if kernel.is_compute:
            assert kernel.config.unpacks_to_dest(0)
            kernel.config = replace(kernel.config, unpack_to_dest_mode=())
    return program


def test_float32_unpacked_to_dest_is_exact_and_through_srca_is_tf32():
    """With UnpackToDestFp32 (the factory's setting) float32 tiles are bit-exact; the same program
    without it sends them through the 19-bit SRCA: the low 13 mantissa bits are dropped."""
    shape = (1, 1, 64, 128)
    x = random_values(shape, "float32", seed=5)
    exact = run(tilize_multi_core_interleaved(shape, "float32"), {"src": x}).outputs["dst"]
    assert np.array_equal(bits(exact), bits(x))
    truncated = run(_without_unpack_to_dest(tilize_multi_core_interleaved(shape, "float32")), {"src": x})
    assert np.array_equal(bits(truncated.outputs["dst"]), bits(x) & np.uint32(0xFFFFE000))
    assert not np.array_equal(bits(truncated.outputs["dst"]), bits(x))
