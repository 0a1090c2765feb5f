"""Which CBs the compilers unpack straight to DST: float32 CBs only copy / transpose / tilize /
untilize calls read, with a 32-bit DST; a CB an FPU call reads stays Default."""

from __future__ import annotations

import pytest

from tilefold.layout.formats import DataFormat
from tilefold.program import ComputeConfig
from tilefold.program.unpack_to_dest import unpack_to_dest_mode
from tilefold.pykernel import *


@compute_kernel
def copy_then_add():
    n = get_compile_time_arg_val(0)
    binary_op_init_common(1, 2, 16)
    for _ in range(n):
        cb_wait_front(0, 1)
        cb_wait_front(1, 1)
        cb_wait_front(2, 1)
        tile_regs_acquire()
        copy_tile_init(0)
        copy_tile(0, 0, 0)
        copy_tile(1, 0, 1)
        add_tiles_init(1, 2)
        add_tiles(1, 2, 0, 0, 2)
        tile_regs_commit()
        cb_pop_front(0, 1)
        cb_pop_front(1, 1)
        cb_pop_front(2, 1)
        cb_reserve_back(16, 1)
        tile_regs_wait()
        pack_tile(0, 16)
        tile_regs_release()
        cb_push_back(16, 1)


FP32 = {cb: DataFormat.Float32 for cb in (0, 1, 2, 16)}


def test_only_a_float32_cb_that_is_only_copied_unpacks_to_dest():
    fn = copy_then_add.function
    assert unpack_to_dest_mode(fn, FP32, fp32_dest_acc_en=True) == {0: "UnpackToDestFp32"}
    assert unpack_to_dest_mode(fn, {**FP32, 0: DataFormat.Float16_b}, fp32_dest_acc_en=True) == {}
    assert unpack_to_dest_mode(fn, FP32, fp32_dest_acc_en=False) == {}


def test_compute_config_keeps_the_modes_sorted_and_checks_them():
    config = ComputeConfig(fp32_dest_acc_en=True, unpack_to_dest_mode={3: "UnpackToDestFp32", 1: "Default"})
    assert config.unpack_to_dest_mode == ((3, "UnpackToDestFp32"),)
    assert config.unpacks_to_dest(3) and not config.unpacks_to_dest(1)
    with pytest.raises(ValueError, match="UnpackToDestFp32"):
        ComputeConfig(unpack_to_dest_mode={0: "Fp32"})
    with pytest.raises(ValueError, match="0-63"):
        ComputeConfig(unpack_to_dest_mode={70: "UnpackToDestFp32"})
