"""``%`` and ``//`` of a kernel integer that can be negative (``(x - 1) % n``, a ring neighbour)
follow Python's floor semantics in the emitted C++ too: the device computes on ``uint32_t``, where
an unsigned remainder of a wrapped ``-1`` is ``(2**32 - 1) % n`` — 0 for n = 3, not 2. Run on the
simulated device against numpy, the C++ checked for the signed remainder and by check-kernel."""

from __future__ import annotations

import numpy as np
from checkkernel import check_kernels, compiled_kernel_jobs, require_accepted

import tilefold.ttl as ttl
from ttl_helpers import compiled, tile_tensor, zeros

N = 3        # 2**32 is no multiple of 3: an unsigned remainder of a wrapped negative is wrong


@ttl.operation(grid=(N, 1))
def ring_neighbours(x, left, right_half):
    left_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    half_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def read():
        col, _ = ttl.node(dims=2)
        with left_dfb.reserve() as blk:
            ttl.copy(x[0, (col - 1) % N], blk).wait()          # the left neighbour, wrapping around
        with half_dfb.reserve() as blk:
            ttl.copy(x[0, (col - 2) // 2 + 1], blk).wait()     # floor division of -2, -1, 0 by 2, plus 1

    @ttl.datamovement()
    def write():
        col, _ = ttl.node(dims=2)
        with left_dfb.wait() as blk:
            ttl.copy(blk, left[0, col]).wait()
        with half_dfb.wait() as blk:
            ttl.copy(blk, right_half[0, col]).wait()


def _tiles(values, picks):
    return np.concatenate([values[:, 32 * p:32 * p + 32] for p in picks], axis=1)


def test_a_ring_neighbour_and_a_floor_division_of_negative_values_match_python():
    x, left, half = tile_tensor((32, 32 * N), seed=3), zeros((32, 32 * N)), zeros((32, 32 * N))
    ring_neighbours(x, left, half)
    np.testing.assert_array_equal(left.host_values, _tiles(x.host_values, [(c - 1) % N for c in range(N)]))
    np.testing.assert_array_equal(half.host_values, _tiles(x.host_values, [(c - 2) // 2 + 1 for c in range(N)]))


def test_the_cpp_uses_a_signed_remainder_and_passes_check_kernel(tmp_path):
    built = compiled(ring_neighbours, tile_tensor((32, 32 * N)), zeros((32, 32 * N)), zeros((32, 32 * N)))
    reader = next(k for k in built.program.kernels if not k.is_compute and k.processor == "RISCV_0")
    text = built.kernel_sources()[reader.source_file]
    assert "static_cast<int32_t>" in text and "% 3" in text, text
    for check in check_kernels(compiled_kernel_jobs(built, tmp_path)):
        require_accepted(check)
