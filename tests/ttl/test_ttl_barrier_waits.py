"""A copy's ``wait()`` is a NOC barrier, as its C++ is (``noc_async_read_barrier`` for reads,
``noc_async_write_barrier`` for writes and pipe sends): it also completes the earlier copies of
its kind the kernel started and did not wait for, as TT-Lang's programs rely on. Simulated against
numpy; a copy of the other kind is still one error at its line when never waited for."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error, tile_tensor, zeros


@ttl.operation(grid=(1, 1))
def _swap_halves(inp, out):
    """Reads both tiles of ``inp``, waiting only for the second read, and writes them swapped,
    waiting only for the second write."""
    left = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    right = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def dm():
        with left.reserve() as a, right.reserve() as b:
            ttl.copy(inp[0, 0], a)
            ttl.copy(inp[0, 1], b).wait()            # completes the read into a too
            ttl.copy(a, out[0, 1])
            ttl.copy(b, out[0, 0]).wait()            # completes the write of a too

    @ttl.compute()
    def idle():
        pass


def test_one_wait_completes_the_earlier_copies_of_its_kind():
    inp, out = tile_tensor((32, 64), seed=4), zeros((32, 64))
    _swap_halves(inp, out)
    v = ttnn.to_numpy(inp)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.concatenate([v[:, 32:], v[:, :32]], axis=1))


def test_a_write_barrier_does_not_complete_a_read():
    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        left = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        right = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def dm():
            with right.reserve() as b:
                ttl.copy(inp[0, 1], b).wait()
                with left.reserve() as a:
                    read = ttl.copy(inp[0, 0], a)       # (a handle kept: the kernel waits for it itself)
                    ttl.copy(b, out[0, 0]).wait()  # error
                read.wait()

        @ttl.compute()
        def idle():
            pass

    expect_error(lambda: op(tile_tensor((32, 64)), zeros((32, 64))), test_a_write_barrier_does_not_complete_a_read,
                 KernelError, "a is pushed while ttl.copy", "is still writing it")
