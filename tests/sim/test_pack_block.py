"""``pack_tile_block``: DST tiles to the next pages of a CB in one call, as that many in-order
``pack_tile`` calls would write them; its mistakes name the call's line."""

from __future__ import annotations

import numpy as np
import pytest

from tilefold.errors import DstError
from tilefold.pykernel import *  # noqa: F403

from simhelpers import A, B, OUT, random_tiles, run_two_input, where


@compute_kernel
def copy_then_pack_block():
    """Copies the n tiles of A into DST and packs them with pack_tile_block(0, OUT, packed):
    first one tile with pack_tile, then the rest as one block."""
    n = get_arg_val(0)
    packed = get_arg_val(1)
    unary_op_init_common(A, OUT)
    copy_tile_init(A)
    cb_wait_front(A, n)
    cb_wait_front(B, 1)
    cb_reserve_back(OUT, n)
    tile_regs_acquire()
    for i in range(n):
        copy_tile(A, i, i)
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(0, OUT)
    pack_tile_block(1, OUT, packed)
    tile_regs_release()
    cb_push_back(OUT, n)
    cb_pop_front(A, n)
    cb_pop_front(B, 1)


def run(a, packed):
    n = a.shape[1] // 32
    return run_two_input(copy_then_pack_block, a, np.zeros((32, 32), np.float32), a.shape,
                         compute_args=[n, packed]).outputs["out"]


def test_pack_tile_block_writes_the_next_pages_in_order():
    a = random_tiles((32, 32 * 5), seed=1)
    assert np.array_equal(run(a, 4), a)


def test_pack_tile_block_of_a_slot_nothing_wrote_is_an_error():
    with pytest.raises(DstError, match=r"pack_tile_block reads DST\[4\], which nothing wrote") as err:
        run(random_tiles((32, 32 * 4), seed=2), 4)
    assert str(err.value).startswith(where(copy_then_pack_block, "pack_tile_block(1, OUT, packed)"))


def test_pack_tile_block_of_no_tiles_is_an_error():
    with pytest.raises(DstError, match="pack_tile_block of 0 tiles"):
        run(random_tiles((32, 32 * 2), seed=3), 0)
