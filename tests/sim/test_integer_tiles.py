"""The SFPU's integer arithmetic on DST (``add_int_tile`` / ``sub_int_tile`` / ``mul_int_tile``):
the integers a slot holds are kept exactly (above 2^24 too) from ``copy_tile`` to ``pack_tile``,
wrapped around as 32-bit words; a slot holding floats, or an init of another format, is an
error at the call."""

from __future__ import annotations

import numpy as np
import pytest

from tilefold.errors import DstError, InitError
from tilefold.program import ComputeConfig
from tilefold.pykernel import *  # noqa: F403

from simhelpers import A, B, OUT, run_two_input, where


@compute_kernel
def integer_arithmetic():
    """which: 0 a + b; 1 a - b; 2 a * b; 3 a * b after add_int_tile_init only; 4 a + (a as
    bfloat16 values); 5 where(a, b, a) (b where a is not zero)."""
    which = get_arg_val(0)
    init_sfpu(A, OUT)
    cb_wait_front(A, 1)
    cb_wait_front(B, 1)
    cb_reserve_back(OUT, 1)
    tile_regs_acquire()
    copy_tile_init(A)
    copy_tile(A, 0, 0)
    copy_tile_init(B)
    copy_tile(B, 0, 1)
    if which == 0:
        add_int_tile_init()
        add_int_tile(0, 1, 2, data_format="Int32")
    elif which == 1:
        sub_int_tile_init()
        sub_int_tile(0, 1, 2, data_format="Int32")
    elif which == 2:
        mul_int_tile_init(data_format="Int32")
        mul_int_tile(0, 1, 2, data_format="Int32")
    elif which == 3:
        add_int_tile_init()
        mul_int_tile(0, 1, 2, data_format="Int32")
    elif which == 4:
        fill_tile_init()
        fill_tile(1, 2.0)
        add_int_tile_init()
        add_int_tile(0, 1, 2, data_format="Int32")
    else:
        where_tile_init()
        where_tile(0, 1, 0, 2, data_format="Int32")
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(2, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 1)
    cb_pop_front(B, 1)


def _values():
    rng = np.random.default_rng(7)
    a = rng.integers(-2 ** 31, 2 ** 31 - 1, (32, 32)).astype(np.int32)
    b = rng.integers(-2 ** 31, 2 ** 31 - 1, (32, 32)).astype(np.int32)
    return a, b


def _run(which, a=None, b=None):
    if a is None:
        a, b = _values()
    return run_two_input(integer_arithmetic, a, b, (32, 32), dtype="int32",
                         config=ComputeConfig(fp32_dest_acc_en=True), compute_args=[which]).outputs["out"]


@pytest.mark.parametrize("which, fn", [(0, np.add), (1, np.subtract), (2, np.multiply)])
def test_integer_arithmetic_wraps_as_32_bit_words(which, fn):
    a, b = _values()
    with np.errstate(over="ignore"):
        expected = fn(a, b)
    np.testing.assert_array_equal(_run(which), expected)


def test_an_integer_op_needs_its_own_init():
    with pytest.raises(InitError, match=r"mul_int_tile without mul_int_tile_init<Int32>: the latest SFPU init is "
                                        r"add_int_tile_init") as err:
        _run(3)
    assert str(err.value).startswith(where(integer_arithmetic, 'mul_int_tile(0, 1, 2, data_format="Int32")', 1) + ": ")


def test_an_integer_op_on_a_slot_of_floats_is_an_error():
    with pytest.raises(DstError, match=r"add_int_tile reads DST\[1\], which holds float values") as err:
        _run(4)
    assert str(err.value).startswith(where(integer_arithmetic, 'add_int_tile(0, 1, 2, data_format="Int32")', 1) + ": ")


def test_where_of_integer_slots_keeps_their_integers():
    a, b = _values()
    a[0, :8] = 0
    np.testing.assert_array_equal(_run(5, a, b), np.where(a != 0, b, a))
