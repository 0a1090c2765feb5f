"""Names of block values kept in buffers of their own keep their values as Python names do:
``old = acc`` then ``acc = acc + x`` (or ``acc += x``) leaves ``old`` the old value, and
``p, q = q, p + q`` assigns both from the values before it. Run against numpy (bfloat16 rounding
of every kept value)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import tile_tensor, zeros

STEPS = 3


@ttl.operation(grid=(1, 1))
def snapshots(a, b, y, z, f):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    outs = [ttl.make_dataflow_buffer_like(t, shape=(1, 1), block_count=2) for t in (y, z, f)]

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x:
            acc = x * x
        old = acc                              # the square
        with b_dfb.wait() as w:
            acc = acc + w
        with outs[0].reserve() as o:
            o.store(old + acc)                 # x² + (x² + w)
        snap = acc
        for _ in range(STEPS):
            acc += old                         # acc = x² + w + STEPS·x²
        with outs[1].reserve() as o:
            o.store(acc - snap)                # STEPS·x²
        p = old * 0.0
        q = old
        for _ in range(STEPS):
            p, q = q, p + q                    # Fibonacci multiples of x²: (2, 3) after three steps
        with outs[2].reserve() as o:
            o.store(p * 10.0 + q)

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as x:
            ttl.copy(a[0, 0], x).wait()
        with b_dfb.reserve() as w:
            ttl.copy(b[0, 0], w).wait()

    @ttl.datamovement()
    def write():
        for dfb, tensor in zip(outs, (y, z, f)):
            with dfb.wait() as o:
                ttl.copy(o, tensor[0, 0]).wait()


def bf16(v):
    return np.asarray(v, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def test_a_name_copied_from_a_kept_value_keeps_the_old_value():
    a, b = tile_tensor((32, 32), seed=1), tile_tensor((32, 32), seed=2)
    y, z, f = zeros((32, 32)), zeros((32, 32)), zeros((32, 32))
    snapshots(a, b, y, z, f)
    x, w = ttnn.to_numpy(a), ttnn.to_numpy(b)
    square = bf16(x * x)
    total = bf16(square + w)
    np.testing.assert_allclose(ttnn.to_numpy(y), bf16(square + total), rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(ttnn.to_numpy(z), STEPS * square, rtol=3e-2, atol=5e-2)
    np.testing.assert_allclose(ttnn.to_numpy(f), 2 * square * 10 + 3 * square, rtol=3e-2, atol=5e-2)


WEIGHTS = (0.5, 2.0, -1.0)


@ttl.operation(grid=(1, 1))
def weighted(a, y):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        sq = lambda v: v * v  # noqa: E731 - a lambda called in the kernel gives its expression's value
        with a_dfb.wait() as x:
            acc = sq(x)
            for i in range(len(WEIGHTS)):          # indexes a tuple of numbers: unrolled
                acc = acc + x * ttl.block.fill(WEIGHTS[i], shape=(1, 1))
            with y_dfb.reserve() as o:
                o.store(acc)

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as x:
            ttl.copy(a[0, 0], x).wait()

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as o:
            ttl.copy(o, y[0, 0]).wait()


def test_a_lambda_called_in_a_kernel_and_a_loop_over_a_tuple_of_weights():
    a, y = tile_tensor((32, 32), seed=3), zeros((32, 32))
    weighted(a, y)
    x = ttnn.to_numpy(a)
    np.testing.assert_allclose(ttnn.to_numpy(y), x * x + sum(WEIGHTS) * x, rtol=3e-2, atol=5e-2)
