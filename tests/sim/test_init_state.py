"""The engines' configuration is state: a compute call the unpacker, math engine or packer
were not set up for (no init, an init of another operation or SFPU function, another CB
format) is an InitError naming the user's line — on the device it would compute garbage."""

from __future__ import annotations

import numpy as np
import pytest

from tilefold.errors import InitError
from tilefold.pykernel import *  # noqa: F403

from simhelpers import A, B, OUT, run_two_input, where


def run(kernel, *, out_dtype="bfloat16", args=()):
    a = np.full((32, 32), 1.5, np.float32)
    b = np.full((32, 32), 0.25, np.float32)
    return run_two_input(kernel, a, b, (32, 32), out_dtype=out_dtype, compute_args=list(args)).outputs["out"]


def raises_at(kernel, text, match, **kwargs):
    with pytest.raises(InitError, match=match) as err:
        run(kernel, **kwargs)
    assert str(err.value).startswith(where(kernel, text) + ": "), str(err.value)


@compute_kernel
def add_without_any_init():
    cb_wait_front(A, 1)
    cb_wait_front(B, 1)
    cb_reserve_back(OUT, 1)
    tile_regs_acquire()
    add_tiles(A, B, 0, 0, 0)
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(0, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 1)
    cb_pop_front(B, 1)


def test_a_call_before_any_full_init():
    raises_at(add_without_any_init, "add_tiles(A, B, 0, 0, 0)", "before the engines are configured")


@compute_kernel
def binary_op():
    """which: 0 add_tiles with only binary_op_init_common; 1 add_tiles after mul_tiles_init;
    2 copy_tile after add_tiles_init; 3 matmul_tiles after add_tiles_init; 4 correct."""
    which = get_arg_val(0)
    binary_op_init_common(A, B, OUT)
    cb_wait_front(A, 1)
    cb_wait_front(B, 1)
    cb_reserve_back(OUT, 1)
    if which == 1:
        mul_tiles_init(A, B)
    elif which != 0:
        add_tiles_init(A, B)
    tile_regs_acquire()
    if which == 2:
        copy_tile(A, 0, 0)
    elif which == 3:
        matmul_tiles(A, B, 0, 0, 0)
    else:
        add_tiles(A, B, 0, 0, 0)
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(0, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 1)
    cb_pop_front(B, 1)


def test_the_common_init_does_not_set_up_the_operation():
    # binary_op_init_common configures formats and the unpacker; the math engine still needs
    # the operation's own init
    raises_at(binary_op, "add_tiles(A, B, 0, 0, 0)", r"set up for no operation \(by binary_op_init_common\)",
              args=[0])


def test_an_init_of_another_operation():
    raises_at(binary_op, "add_tiles(A, B, 0, 0, 0)", r"set up for mul_tiles \(by mul_tiles_init\)", args=[1])


def test_copy_after_an_element_wise_init():
    raises_at(binary_op, "copy_tile(A, 0, 0)", "copy_tile while .* set up for add_tiles", args=[2])


def test_matmul_after_an_element_wise_init():
    raises_at(binary_op, "matmul_tiles(A, B, 0, 0, 0)", "matmul_tiles while .* set up for add_tiles", args=[3])


def test_the_right_inits_run():
    assert np.array_equal(run(binary_op, args=[4]), np.full((32, 32), 1.75, np.float32))


@compute_kernel
def sfpu_after_another_init():
    init_sfpu(A, OUT)
    cb_wait_front(A, 1)
    cb_wait_front(B, 1)
    cb_reserve_back(OUT, 1)
    tile_regs_acquire()
    copy_tile(A, 0, 0)
    recip_tile_init()
    recip_tile(0)
    exp_tile(0)
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(0, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 1)
    cb_pop_front(B, 1)


def test_an_sfpu_function_after_another_functions_init():
    raises_at(sfpu_after_another_init, "exp_tile(0)", "exp_tile without exp_tile_init: the latest SFPU init is "
                                                      "recip_tile_init")


@compute_kernel
def typecast_after_another_casts_init():
    """which: 0 the init of the other direction; 1 the matching init (bfloat16 -> float32)."""
    which = get_arg_val(0)
    init_sfpu(A, OUT)
    cb_wait_front(A, 1)
    cb_wait_front(B, 1)
    cb_reserve_back(OUT, 1)
    tile_regs_acquire()
    copy_tile(A, 0, 0)
    if which == 0:
        typecast_tile_init(in_dtype="Float32", out_dtype="Float16_b")
    else:
        typecast_tile_init(in_dtype="Float16_b", out_dtype="Float32")
    typecast_tile(0, in_dtype="Float16_b", out_dtype="Float32")
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(0, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 1)
    cb_pop_front(B, 1)


def test_a_typecast_needs_the_init_of_its_own_formats():
    raises_at(typecast_after_another_casts_init, 'typecast_tile(0, in_dtype="Float16_b", out_dtype="Float32")',
              "typecast_tile without typecast_tile_init<Float16_b, Float32>: the latest SFPU init is "
              "typecast_tile_init<Float32, Float16_b>", args=[0])
    np.testing.assert_array_equal(run(typecast_after_another_casts_init, out_dtype="float32", args=[1]), 1.5)


@compute_kernel
def typecast_to_an_integer():
    init_sfpu(A, OUT)
    cb_wait_front(A, 1)
    cb_wait_front(B, 1)
    cb_reserve_back(OUT, 1)
    tile_regs_acquire()
    copy_tile(A, 0, 0)
    typecast_tile_init(in_dtype="Float16_b", out_dtype="UInt16")
    typecast_tile(0, in_dtype="Float16_b", out_dtype="UInt16")
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(0, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 1)
    cb_pop_front(B, 1)


def test_a_typecast_the_simulator_does_not_model_is_an_error():
    from tilefold.errors import DstError

    with pytest.raises(DstError, match=r"typecast_tile<Float16_b, UInt16>: the simulator converts between "
                                       r"the float formats \(Float32, Float16_b, Bfp8_b, Bfp4_b\), from them to "
                                       r"Int32 and UInt32, from Int32 and UInt32 to them, from UInt32 to UInt16 and UInt8 "
                                       r"and from those to UInt32 only") as err:
        run(typecast_to_an_integer)
    assert str(err.value).startswith(where(typecast_to_an_integer, 'typecast_tile(0, in_dtype="Float16_b"')), \
        str(err.value)


@compute_kernel
def sfpu_in_a_loop():
    init_sfpu(A, OUT)
    cb_wait_front(A, 1)
    cb_wait_front(B, 1)
    cb_reserve_back(OUT, 1)
    tile_regs_acquire()
    for i in range(2):
        copy_tile(A, 0, i)
        exp_tile(i)
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(1, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 1)
    cb_pop_front(B, 1)


def test_an_sfpu_function_without_init_in_a_tile_loop():
    raises_at(sfpu_in_a_loop, "exp_tile(i)", "exp_tile without exp_tile_init: no SFPU init ran")


@compute_kernel
def copy_from_another_format():
    reconfig = get_arg_val(0)
    init_sfpu(OUT, OUT)            # SrcA set up for the output CB's format
    cb_wait_front(A, 1)
    cb_wait_front(B, 1)
    cb_reserve_back(OUT, 1)
    if reconfig == 1:
        reconfig_data_format_srca(A)
    tile_regs_acquire()
    copy_tile(A, 0, 0)
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(0, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 1)
    cb_pop_front(B, 1)


def test_srca_configured_for_another_format():
    raises_at(copy_from_another_format, "copy_tile(A, 0, 0)",
              r"reads c_0 \(bfloat16\) into SrcA, which init_sfpu configured for bfloat8_b \(c_16\)",
              out_dtype="bfloat8_b", args=[0])
    out = run(copy_from_another_format, out_dtype="bfloat8_b", args=[1])
    assert np.array_equal(out, np.full((32, 32), 1.5, np.float32))


@compute_kernel
def pack_to_another_format():
    reconfig = get_arg_val(0)
    init_sfpu(A, A)                # the packer set up for the input CB's format
    cb_wait_front(A, 1)
    cb_wait_front(B, 1)
    cb_reserve_back(OUT, 1)
    tile_regs_acquire()
    copy_tile(A, 0, 0)
    tile_regs_commit()
    tile_regs_wait()
    if reconfig == 1:
        pack_reconfig_data_format(OUT)
    pack_tile(0, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 1)
    cb_pop_front(B, 1)


def test_packer_configured_for_another_format():
    raises_at(pack_to_another_format, "pack_tile(0, OUT)",
              r"into c_16 \(bfloat8_b\) while the packer is configured by init_sfpu for bfloat16 \(c_0\)",
              out_dtype="bfloat8_b", args=[0])
    out = run(pack_to_another_format, out_dtype="bfloat8_b", args=[1])
    assert np.array_equal(out, np.full((32, 32), 1.5, np.float32))


@compute_kernel
def reduce_after_uninit():
    which = get_arg_val(0)
    compute_kernel_hw_startup(A, B, OUT)
    reduce_init(A, B, OUT, pool_type="SUM", reduce_dim="REDUCE_ROW")
    cb_wait_front(A, 1)
    cb_wait_front(B, 1)
    cb_reserve_back(OUT, 1)
    if which == 0:
        reduce_uninit()
    tile_regs_acquire()
    if which == 1:
        reduce_tile(A, B, 0, 0, 0, pool_type="MAX", reduce_dim="REDUCE_ROW")
    else:
        reduce_tile(A, B, 0, 0, 0, pool_type="SUM", reduce_dim="REDUCE_ROW")
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(0, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 1)
    cb_pop_front(B, 1)


def test_reduce_after_its_uninit_or_with_another_pool_type():
    raises_at(reduce_after_uninit, 'reduce_tile(A, B, 0, 0, 0, pool_type="SUM"',
              r"set up for no operation \(by reduce_uninit\)", args=[0])
    raises_at(reduce_after_uninit, 'reduce_tile(A, B, 0, 0, 0, pool_type="MAX"',
              r"set up for reduce \(SUM, REDUCE_ROW\) \(by reduce_init\)", args=[1])


def test_every_init_the_engines_model_is_in_the_compute_api(tmp_path):
    """Each init, uninit and reconfig call the engine model knows is declared by TT-Metalium
    0.69's compute headers (the tree check-kernel prepares): the rules name real calls."""
    import os
    import re
    from pathlib import Path

    from checkkernel import SETUP_FAILED, check_kernel
    from tilefold.sim import engine_config as ec

    kernel = tmp_path / "empty.cpp"
    kernel.write_text('#include "api/compute/common.h"\n\nvoid kernel_main() {}\n')
    result = check_kernel(kernel, "compute")
    if result.returncode == SETUP_FAILED:
        pytest.skip(f"check-kernel could not prepare the headers: {result.output[-300:]}")
    assert result.accepted, result.output[-2000:]
    cache = Path(os.environ.get("CHECK_CACHE", Path.home() / ".cache" / "tilefold-check"))
    headers = "\n".join(p.read_text(errors="ignore") for p in (cache / "tree/tt_metal/hw/inc/api/compute").rglob("*.h"))
    names = {*ec.FULL_INITS, *ec.FAMILY_INITS, *ec.UNINITS, *ec.SFPU_INITS, "reduce_init", "reconfig_data_format",
             "reconfig_data_format_srca", "reconfig_data_format_srcb", "pack_reconfig_data_format"}
    from tilefold.ir.ttkernel_api import API
    names = {API[n].cpp_function if n in API else n for n in names}     # the C++ function of each row
    missing = sorted(n for n in names if not re.search(rf"\bvoid\s+{n}\s*\(", headers))
    assert len(names) > 90 and not missing, missing
