"""``a % b`` and ``a // b`` on blocks, as TT-Lang's simulator takes them: ``%`` is
``remainder_binary_tile`` (the result has ``b``'s sign, as Python's and torch's), ``//`` is
``round((a - a % b) / b)``, and a number operand is a block filled with it. Run on the simulated
device against numpy's ``%`` and ``//`` in float32 and bfloat16 blocks (inputs away from exact
multiples, where the device's reciprocal may floor one step low), and the C++ by check-kernel."""

from __future__ import annotations

import numpy as np
import pytest
from checkkernel import check_kernels, compiled_kernel_jobs, require_accepted

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import compiled, zeros


@ttl.operation(grid=(1, 1))
def remainders(a, b, mod, div, mod_number, number_div):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 2), block_count=2)
    outs = [ttl.make_dataflow_buffer_like(mod, shape=(1, 2), block_count=2) for _ in range(4)]

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, b_dfb.wait() as y:
            with outs[0].reserve() as o:
                o.store(x % y)
            with outs[1].reserve() as o:
                o.store(x // y)
            with outs[2].reserve() as o:
                o.store(x % 3.0)
            with outs[3].reserve() as o:
                o.store(7.0 // y)

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as blk:
            ttl.copy(a[0, 0:2], blk).wait()
        with b_dfb.reserve() as blk:
            ttl.copy(b[0, 0:2], blk).wait()

    @ttl.datamovement()
    def write():
        for i, out in enumerate((mod, div, mod_number, number_div)):
            with outs[i].wait() as blk:
                ttl.copy(blk, out[0, 0:2]).wait()


def _operands(dtype):
    rng = np.random.default_rng(5)
    a = rng.uniform(-20, 20, (32, 64)).astype(np.float32)
    b = rng.uniform(0.5, 3, (32, 64)).astype(np.float32) * rng.choice([-1, 1], (32, 64))
    a, b = (ttnn.from_numpy(v, dtype=dtype, layout=ttnn.TILE_LAYOUT) for v in (a, b))
    av, bv = a.host_values, b.host_values
    near = lambda q: np.abs(q - np.rint(q)) < 0.02     # noqa: E731 - a quotient the device may floor low
    keep = ~(near(av / bv) | near(av / 3.0) | near(7.0 / bv))
    return a, b, av, bv, keep


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_remainder_and_floor_division_of_blocks_and_numbers_match_numpy(dtype):
    a, b, av, bv, keep = _operands(getattr(ttnn, dtype))
    outs = [zeros((32, 64), dtype) for _ in range(4)]
    remainders(a, b, *outs)
    expected = [np.mod(av, bv), np.floor_divide(av, bv), np.mod(av, np.float32(3)), np.floor_divide(np.float32(7), bv)]
    # float32 DST: exact; bfloat16: the remainder rounded once to bfloat16, the quotients exact integers
    tolerance = 0 if dtype == "float32" else 2.0 ** -7
    for out, want in zip(outs, expected):
        got = out.host_values
        np.testing.assert_allclose(got[keep], want[keep], rtol=tolerance, atol=tolerance)
    assert keep.mean() > 0.8
    assert np.all(np.signbit(outs[0].host_values[keep & (outs[0].host_values != 0)]) ==
                  np.signbit(bv[keep & (outs[0].host_values != 0)]))        # the sign of the divisor


def test_a_remainder_by_zero_is_nan():
    a = ttnn.from_numpy(np.full((32, 64), 5.0, np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    b = ttnn.from_numpy(np.zeros((32, 64), np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    outs = [zeros((32, 64), "float32") for _ in range(4)]
    remainders(a, b, *outs)
    assert np.isnan(outs[0].host_values).all()


def test_the_cpp_calls_remainder_binary_tile_and_passes_check_kernel(tmp_path):
    a, b, *_ = _operands(ttnn.bfloat16)
    built = compiled(remainders, a, b, *[zeros((32, 64)) for _ in range(4)])
    text = built.kernel_sources()["compute.cpp"]
    assert "remainder_binary_tile(" in text and "remainder_binary_tile_init()" in text, text
    assert text.index('#include "api/compute/eltwise_binary_sfpu.h"') < text.index(
        '#include "api/compute/binary_remainder.h"'), text
    assert "round_tile(" in text and "fill_tile(" in text, text
    for check in check_kernels(compiled_kernel_jobs(built, tmp_path)):
        require_accepted(check)
