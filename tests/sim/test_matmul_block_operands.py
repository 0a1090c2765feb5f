"""matmul_block reads in0 as the hardware does: ``rt_dim`` tiles ``kt_dim`` apart from
``in0_tile_index``, and only those — the unpacker is charged for rt + ct tiles per call, and the
CB wait check names the last of the strided tiles."""

from __future__ import annotations

import numpy as np
import pytest

from tilefold.errors import CircularBufferError
from tilefold.program import ComputeConfig, DataMovementConfig, Program
from tilefold.pykernel import *  # noqa: F403
from tilefold.sim import Device

from simhelpers import grid, random_tiles

A, B, OUT = 0, 1, 16


@reader_kernel
def read_all():
    sa = TensorAccessor(TensorAccessorArgs(0), get_arg_val(0), get_tile_size(A))
    sb = TensorAccessor(TensorAccessorArgs(after=TensorAccessorArgs(0)), get_arg_val(1), get_tile_size(B))
    na = get_arg_val(2)
    nb = get_arg_val(3)
    cb_reserve_back(A, na)
    for i in range(na):
        noc_async_read_page(i, sa, get_write_ptr(A) + i * get_tile_size(A))
    cb_reserve_back(B, nb)
    for i in range(nb):
        noc_async_read_page(i, sb, get_write_ptr(B) + i * get_tile_size(B))
    noc_async_read_barrier()
    cb_push_back(A, na)
    cb_push_back(B, nb)


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


@writer_kernel
def write_all():
    s = TensorAccessor(TensorAccessorArgs(0), get_arg_val(0), get_tile_size(OUT))
    n = get_arg_val(1)
    cb_wait_front(OUT, n)
    for i in range(n):
        noc_async_write_page(i, s, get_read_ptr(OUT) + i * get_tile_size(OUT))
    noc_async_write_barrier()
    cb_pop_front(OUT, n)


def run(a, b, mt, kt, nt, waited_a):
    prog = Program("matmul_block")
    ba, bb = prog.add_buffer("a", a.shape, "bfloat16"), prog.add_buffer("b", b.shape, "bfloat16")
    bo = prog.add_buffer("out", (mt * 32, nt * 32), "bfloat16", role="output")
    cores = grid(1)
    for index, buf in ((A, ba), (B, bb), (OUT, bo)):
        prog.create_circular_buffer(cores, index, buf.page_size, buf.num_pages, "bfloat16")
    r = prog.create_kernel(read_all, cores, DataMovementConfig("RISCV_0"), [ba.accessor_args, bb.accessor_args])
    c = prog.create_kernel(block_product, cores, ComputeConfig(fp32_dest_acc_en=True))
    w = prog.create_kernel(write_all, cores, DataMovementConfig("RISCV_1"), [bo.accessor_args])
    prog.set_runtime_args(r, (0, 0), [ba.address, bb.address, ba.num_pages, bb.num_pages])
    prog.set_runtime_args(c, (0, 0), [mt, kt, nt, waited_a])
    prog.set_runtime_args(w, (0, 0), [bo.address, bo.num_pages])
    return Device().run(prog, {"a": a, "b": b})


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
