"""A compute kernel with a matmul gets a 32-bit DST by default, as TT-Lang compiles it, so a K loop
inside one matmul sums in float32; ``fp32_dest_acc_en=False`` or ``--no-ttl-matmul-full-fp32`` keep
it 16-bit. A reserved block keeps the value stored into it after the waited blocks that value was
computed from are popped, and after a loop that added into it, so later ``+=`` add to it. Run on the
simulated device against numpy."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.ir.ttkernel import compute_config
from ttl_helpers import compiled, tile_tensor, zeros

TS = 32
KT = 16


def _dot(**options):
    @ttl.operation(grid=(1, 1), **options)
    def dot(a, w, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, KT), block_count=1)
        w_dfb = ttl.make_dataflow_buffer_like(w, shape=(KT, 1), block_count=1)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

        @ttl.compute()
        def compute():
            with a_dfb.wait() as x, w_dfb.wait() as y, o_dfb.reserve() as o:
                o.store(x @ y)

        @ttl.datamovement()
        def read():
            with a_dfb.reserve() as x, w_dfb.reserve() as y:
                ttl.copy(a[0:1, 0:KT], x).wait()
                ttl.copy(w[0:KT, 0:1], y).wait()

        @ttl.datamovement()
        def write():
            with o_dfb.wait() as o:
                ttl.copy(o, out[0:1, 0:1]).wait()

    return dot


def _dot_error(dot) -> tuple[float, dict]:
    a, w = tile_tensor((TS, KT * TS), seed=3), tile_tensor((KT * TS, TS), seed=4)
    out = zeros((TS, TS))
    config = compute_config(next(k for k in compiled(dot, a, w, out).program.kernels if k.is_compute).function)
    dot(a, w, out)
    exact = ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(w).astype(np.float64)
    return float(np.abs(ttnn.to_numpy(out) - exact).max() / np.abs(exact).max()), config


def test_a_matmul_kernel_sums_k_in_a_32_bit_dst_by_default():
    error, config = _dot_error(_dot())
    assert config["fp32_dest_acc_en"]
    # one bfloat16 rounding of the float32 sum, on packing: half a unit in the last place, at most
    # 2^-8 of the largest result
    assert error <= 2 ** -8, error


def test_fp32_dest_acc_en_false_or_no_matmul_full_fp32_keep_a_16_bit_dst():
    for options in ({"fp32_dest_acc_en": False}, {"options": "--no-ttl-matmul-full-fp32"}):
        error, config = _dot_error(_dot(**options))
        assert not config["fp32_dest_acc_en"], options
        # DST rounds the running sum to bfloat16 after each of the 16 K tiles: larger than one rounding
        assert 2 ** -8 < error < 2 ** -5, (options, error)


def _two_sums(store_first: bool):
    """out = a0 @ b0 (stored, or the first of the loop-summed products) + sum of the rest, then
    a second loop adds c_k @ d_k to the same block."""

    @ttl.operation(grid=(1, 1))
    def two_sums(a, b, c, d, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
        c_dfb = ttl.make_dataflow_buffer_like(c, shape=(1, 1), block_count=2)
        d_dfb = ttl.make_dataflow_buffer_like(d, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

        @ttl.compute()
        def compute():
            o = o_dfb.reserve()
            first = 0
            if store_first:
                x = a_dfb.wait()
                y = b_dfb.wait()
                o.store(x @ y)          # computed from x and y, which are popped before o is added to
                x.pop()
                y.pop()
                first = 1
            for _ in range(first, 3):
                x = a_dfb.wait()
                y = b_dfb.wait()
                o += x @ y
                x.pop()
                y.pop()
            for _ in range(2):          # a second loop adds to what the first one left in o
                x = c_dfb.wait()
                y = d_dfb.wait()
                o += x @ y
                x.pop()
                y.pop()
            o.push()

        @ttl.datamovement()
        def read():
            for k in range(3):
                with a_dfb.reserve() as x, b_dfb.reserve() as y:
                    ttl.copy(a[0:1, k:k + 1], x).wait()
                    ttl.copy(b[k:k + 1, 0:1], y).wait()
            for k in range(2):
                with c_dfb.reserve() as x, d_dfb.reserve() as y:
                    ttl.copy(c[0:1, k:k + 1], x).wait()
                    ttl.copy(d[k:k + 1, 0:1], y).wait()

        @ttl.datamovement()
        def write():
            with o_dfb.wait() as o:
                ttl.copy(o, out[0:1, 0:1]).wait()

    return two_sums


def test_a_block_keeps_its_value_across_pops_and_consecutive_loops():
    for store_first in (True, False):
        a, b = tile_tensor((TS, 3 * TS), seed=5), tile_tensor((3 * TS, TS), seed=6)
        c, d = tile_tensor((TS, 2 * TS), seed=7), tile_tensor((2 * TS, TS), seed=8)
        out = zeros((TS, TS))
        _two_sums(store_first)(a, b, c, d, out)
        a, b, c, d = (ttnn.to_numpy(t).astype(np.float64) for t in (a, b, c, d))
        exact = a @ b + c @ d
        error = np.abs(ttnn.to_numpy(out) - exact).max() / np.abs(exact).max()
        # the block is bfloat16: each of the 5 steps rounds the sum once
        assert error < 2 ** -6, (store_first, error)
