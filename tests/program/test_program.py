"""The host Program rejects what a device would reject, naming the user's line."""

from __future__ import annotations

import inspect

import pytest

from tilefold.arch import get_arch
from tilefold.arch.cores import CoreCoord, CoreRange, CoreRangeSet
from tilefold.errors import L1OverflowError, ProgramError, RuntimeArgError
from tilefold.program import ComputeConfig, DataMovementConfig, Program
from tilefold.pykernel import *  # noqa: F403


@reader_kernel
def tiny_reader():
    cb_reserve_back(0, 1)
    cb_push_back(0, 1)


@compute_kernel
def tiny_compute():
    cb_wait_front(0, 1)
    cb_pop_front(0, 1)


def here() -> int:
    return inspect.currentframe().f_back.f_lineno


ONE = CoreRangeSet([CoreCoord(0, 0)])


def test_l1_overflow_counts_every_circular_buffer_on_the_core():
    prog = Program()
    free = get_arch().l1_free
    pages = free // 2 // 1024 + 1          # two of these are just over what is free
    prog.create_circular_buffer(ONE, 0, 1024, pages, "bfloat16")
    prog.create_circular_buffer(ONE, 1, 1024, pages, "bfloat16")
    prog.create_kernel(tiny_reader, ONE, DataMovementConfig())
    with pytest.raises(L1OverflowError, match=r"core \(0,0\) needs \d+ B of L1") as err:
        prog.validate()
    assert f"{2 * pages * 1024} B of circular buffers" in str(err.value)
    assert str(err.value).startswith(f"{__file__}:")
    # the same CBs fit once the second one is gone
    prog.circular_buffers.pop()
    prog.validate()


def test_l1_buffers_take_space_on_every_core():
    prog = Program()
    prog.add_buffer("big", (4096, 4096), "float32", buffer_type="L1")  # 64 MiB over 64 cores = 1 MiB each
    prog.create_circular_buffer(ONE, 0, 4096, 100, "float32")
    prog.create_kernel(tiny_reader, ONE, DataMovementConfig())
    with pytest.raises(L1OverflowError, match="B of L1 buffers"):
        prog.validate()


def test_circular_buffer_index_clash_on_overlapping_cores():
    prog = Program()
    prog.create_circular_buffer(CoreRangeSet([CoreRange((0, 0), (3, 0))]), 5, 2048, 2, "bfloat16")
    line = here() + 1
    prog.create_circular_buffer(CoreRangeSet([CoreRange((3, 0), (4, 0))]), 5, 2048, 2, "bfloat16")
    with pytest.raises(ProgramError, match="c_5 is created twice") as err:
        prog.validate()
    assert str(err.value).startswith(f"{__file__}:{line}:")


def test_circular_buffer_index_out_of_range():
    prog = Program()
    line = here() + 2
    with pytest.raises(ProgramError, match="index 32 is outside 0-31") as err:
        prog.create_circular_buffer(ONE, 32, 2048, 2, "bfloat16")
    assert str(err.value).startswith(f"{__file__}:{line}:")
    blackhole = Program(arch=get_arch("blackhole"))       # 64 circular buffers a core
    assert blackhole.create_circular_buffer(ONE, 63, 2048, 2, "bfloat16").index == 63
    with pytest.raises(ProgramError, match="index 64 is outside 0-63"):
        blackhole.create_circular_buffer(ONE, 64, 2048, 2, "bfloat16")


def test_kernel_without_cores():
    prog = Program()
    prog.create_kernel(tiny_reader, CoreRangeSet([]), DataMovementConfig())
    with pytest.raises(ProgramError, match="has no cores"):
        prog.validate()


def test_kernel_outside_the_grid():
    prog = Program()
    prog.create_kernel(tiny_reader, CoreRangeSet([CoreCoord(8, 0)]), DataMovementConfig())
    with pytest.raises(ProgramError, match="outside the 8x8 grid"):
        prog.validate()


def test_two_kernels_on_one_riscv():
    prog = Program()
    prog.create_kernel(tiny_reader, ONE, DataMovementConfig("RISCV_0"))
    prog.create_kernel(tiny_reader.function.clone(), ONE, DataMovementConfig("RISCV_0"), name="again")
    with pytest.raises(ProgramError, match="both run on RISCV_0"):
        prog.validate()


def test_runtime_args_for_a_core_without_the_kernel():
    prog = Program()
    k = prog.create_kernel(tiny_reader, ONE, DataMovementConfig())
    line = here() + 2
    with pytest.raises(ProgramError, match=r"core \(1,0\), where kernel 'tiny_reader' does not run") as err:
        prog.set_runtime_args(k, (1, 0), [1, 2])
    assert str(err.value).startswith(f"{__file__}:{line}:")


def test_at_most_341_runtime_args():
    """0.69's ``max_runtime_args``: 4096 bytes of dispatch packet over three kernels' words."""
    prog = Program()
    k = prog.create_kernel(tiny_reader, ONE, DataMovementConfig())
    prog.set_runtime_args(k, (0, 0), list(range(341)))
    with pytest.raises(RuntimeArgError, match="342 runtime args .* at most 341"):
        prog.set_runtime_args(k, (0, 0), list(range(342)))
    with pytest.raises(RuntimeArgError, match="at most 341"):
        prog.set_common_runtime_args(k, list(range(400)))


def test_runtime_args_must_be_uint32():
    prog = Program()
    k = prog.create_kernel(tiny_reader, ONE, DataMovementConfig())
    with pytest.raises(ProgramError, match="is not a uint32"):
        prog.set_runtime_args(k, (0, 0), [-1])
    with pytest.raises(ProgramError, match="no buffer named 'ghost'"):
        from tilefold.program import BufferAddress

        prog.set_runtime_args(k, (0, 0), [BufferAddress("ghost")])


def test_thread_kind_must_match_config():
    prog = Program()
    with pytest.raises(ProgramError, match="is a compute kernel but was given a DataMovementConfig"):
        prog.create_kernel(tiny_compute, ONE, DataMovementConfig())


def test_one_compute_function_shared_by_full_and_cliff_kernels():
    prog = Program()
    full = prog.create_kernel(tiny_compute, CoreRangeSet([CoreRange((0, 0), (1, 0))]), ComputeConfig(), [4, 8])
    cliff = prog.create_kernel(tiny_compute, CoreRangeSet([CoreCoord(2, 0)]), ComputeConfig(), [1, 8])
    assert full.function is cliff.function and full.source_file == cliff.source_file == "tiny_compute.cpp"
    prog.validate()
    with pytest.raises(ProgramError, match="compiled for .* but is created with"):
        prog.create_kernel(tiny_compute, CoreRangeSet([CoreCoord(3, 0)]), ComputeConfig(fp32_dest_acc_en=True))


def test_buffer_geometry():
    prog = Program()
    tiles = prog.add_buffer("t", (2, 3, 64, 100), "bfloat16")
    assert (tiles.page_size, tiles.num_pages) == (2048, 2 * 3 * 2 * 4)
    sticks = prog.add_buffer("s", (1, 1, 256, 512), "float32", layout="ROW_MAJOR")
    assert (sticks.page_size, sticks.num_pages) == (2048, 256)
    bfp = prog.add_buffer("q", (64, 64), "bfloat8_b")
    assert bfp.page_size == 1088
    with pytest.raises(ProgramError, match="needs TILE layout"):
        prog.add_buffer("bad", (64, 64), "bfloat8_b", layout="ROW_MAJOR")
    with pytest.raises(ProgramError, match="already exists"):
        prog.add_buffer("t", (32, 32), "bfloat16")
