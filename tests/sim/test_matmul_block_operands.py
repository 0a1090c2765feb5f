"""matmul_block reads in0 as the hardware does: ``rt_dim`` tiles ``kt_dim`` apart from
``in0_tile_index``, and only those — the unpacker is charged for rt + ct tiles per call, and the
CB wait check names the last of the strided tiles."""

from __future__ import annotations

import numpy as np
import pytest

from tilefold.errors import CircularBufferError
from tilefold.program import ComputeConfig
from tilefold.pykernel import *  # noqa: F403

from simhelpers import A, B, OUT, random_tiles, run_two_input



@compute_kernel
def block_product():
    mt = get_arg_val(0)
    kt = get_arg_val(1)
    nt = get_arg_val(2)
    waited_a = get_arg_val(3)
    mm_block_init(A, B, OUT, 0, nt, mt, kt)
    cb_wait_front(A, waited_a)
    cb_wait_front(B, kt * nt)
    cb_reserve_back(OUT, mt * nt)
    tile_regs_acquire()
    for k in range(kt):
        matmul_block(A, B, k, k * nt, 0, 0, nt, mt, kt)
    tile_regs_commit()
    tile_regs_wait()
    for i in range(mt * nt):
        pack_tile(i, OUT)
    tile_regs_release()
    cb_push_back(OUT, mt * nt)
    cb_pop_front(A, waited_a)
    cb_pop_front(B, kt * nt)


def run(a, b, mt, kt, nt, waited_a):
    return run_two_input(block_product, a, b, (mt * 32, nt * 32), config=ComputeConfig(fp32_dest_acc_en=True),
                         compute_args=[mt, kt, nt, waited_a])


def test_strided_in0_rows_and_unpack_count():
    mt, kt, nt = 2, 4, 2
    a, b = random_tiles((mt * 32, kt * 32), 1), random_tiles((kt * 32, nt * 32), 2)
    result = run(a, b, mt, kt, nt, mt * kt)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(result.outputs["out"], exact, rtol=2 ** -7, atol=1e-5)
    assert result.perf.counters.unpack_tiles == kt * (mt + nt)     # not (mt - 1) * kt + 1 + nt per call


def test_waiting_for_too_few_in0_tiles_names_the_strided_tile():
    mt, kt, nt = 3, 4, 1
    a, b = random_tiles((mt * 32, kt * 32), 3), random_tiles((kt * 32, nt * 32), 4)
    with pytest.raises(CircularBufferError, match=r"reads tile 9 of c_0 .* cb_wait_front\(c_0, 10\)"):
        run(a, b, mt, kt, nt, 9)        # k = 1 needs tiles 1, 5, 9
