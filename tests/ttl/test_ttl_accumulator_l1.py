"""A loop accumulator the loop only adds to (``acc += a @ b``) takes one block of L1: each step
packs its addend onto the block with the packer's L1 accumulation. A program whose buffers fit
with one accumulator block and not with two runs and matches numpy; the same loop written as
``acc = acc + a @ b`` keeps the two-block form and does not fit. Run on the simulated device."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.codegen.cpp import emit_kernel
from tilefold.errors import L1OverflowError
from ttl_helpers import compiled, marked_line

TS = 32
BM, BN, BK, NK = 8, 8, 16, 2        # a, b: 2 blocks of 128 tiles; out: 1 block of 64; acc: 64 tiles


def _matmul(summed: bool):
    if summed:
        @ttl.operation(grid=(1, 1))
        def matmul(a, b, out):
            a_dfb = ttl.make_dataflow_buffer_like(a, shape=(BM, BK), block_count=2)
            b_dfb = ttl.make_dataflow_buffer_like(b, shape=(BK, BN), block_count=2)
            out_dfb = ttl.make_dataflow_buffer_like(out, shape=(BM, BN), block_count=1)

            @ttl.compute()
            def compute():
                with out_dfb.reserve() as out_blk:
                    acc = ttl.block.fill(0, shape=out_blk.shape)
                    for _ in range(NK):
                        with a_dfb.wait() as x, b_dfb.wait() as y:
                            acc += x @ y
                    out_blk.store(acc)

            @ttl.datamovement()
            def read():
                for k in range(NK):
                    with a_dfb.reserve() as x, b_dfb.reserve() as y:
                        ttl.copy(a[0:BM, k * BK:(k + 1) * BK], x).wait()
                        ttl.copy(b[k * BK:(k + 1) * BK, 0:BN], y).wait()

            @ttl.datamovement()
            def write():
                with out_dfb.wait() as o:
                    ttl.copy(o, out[0:BM, 0:BN]).wait()

        return matmul

    @ttl.operation(grid=(1, 1))
    def matmul(a, b, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(BM, BK), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(BK, BN), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(BM, BN), block_count=1)

        @ttl.compute()
        def compute():
            with out_dfb.reserve() as out_blk:
                acc = ttl.block.fill(0, shape=out_blk.shape)
                for _ in range(NK):  # accumulator
                    with a_dfb.wait() as x, b_dfb.wait() as y:
                        acc = acc + x @ y       # reads acc: the two-block form
                out_blk.store(acc)

        @ttl.datamovement()
        def read():
            for k in range(NK):
                with a_dfb.reserve() as x, b_dfb.reserve() as y:
                    ttl.copy(a[0:BM, k * BK:(k + 1) * BK], x).wait()
                    ttl.copy(b[k * BK:(k + 1) * BK, 0:BN], y).wait()

        @ttl.datamovement()
        def write():
            with out_dfb.wait() as o:
                ttl.copy(o, out[0:BM, 0:BN]).wait()

    return matmul


def _tensors():
    rng = np.random.default_rng(1)
    a = rng.random((BM * TS, NK * BK * TS), dtype=np.float32)
    b = rng.random((NK * BK * TS, BN * TS), dtype=np.float32)
    tensors = [ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT) for v in (a, b)]
    tensors.append(ttnn.from_numpy(np.zeros((BM * TS, BN * TS), np.float32), dtype=ttnn.bfloat16,
                                   layout=ttnn.TILE_LAYOUT))
    return tensors


def test_an_accumulator_of_one_block_fits_where_two_do_not_and_matches_numpy():
    tensors = _tensors()
    matmul = _matmul(summed=True)
    result = compiled(matmul, *tensors)
    acc = [cb for cb in result.program.circular_buffers if "accumulator" in (cb.name or "")]
    assert [cb.num_pages for cb in acc] == [BM * BN]                 # one block
    used = sum(cb.total_size for cb in result.program.circular_buffers)
    arch = result.program.arch
    assert used <= arch.l1_free < used + acc[0].total_size           # a second block would not fit
    compute = emit_kernel(next(k for k in result.program.kernels if k.is_compute).function)
    assert "pack_reconfig_l1_acc(1);" in compute and "pack_reconfig_l1_acc(0);" in compute
    matmul(*tensors)
    a, b = (ttnn.to_numpy(t).astype(np.float64) for t in tensors[:2])
    exact = a @ b
    error = np.abs(ttnn.to_numpy(tensors[2]) - exact).max() / np.abs(exact).max()
    # bfloat16 throughout: DST rounds the sum after each of the 32 K tiles, L1 after each block
    assert error < 2 ** -5, error


def test_the_two_block_form_of_the_same_loop_does_not_fit():
    matmul = _matmul(summed=False)
    with pytest.raises(L1OverflowError) as info:
        matmul(*_tensors())
    assert "acc (accumulator)" in str(info.value)
    assert str(info.value).startswith(f"{__file__}:{marked_line(matmul.function, '# accumulator')}: ")
