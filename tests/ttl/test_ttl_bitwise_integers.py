"""``& | ^ << >>`` and ``divmod`` on runtime integers in a kernel (loop indices, node coordinates, values read from
L1): tile indices computed with them pick the right tiles on the simulated device, against numpy, and
the kernels' C++ passes check-kernel."""

from __future__ import annotations

import numpy as np
from checkkernel import check_kernels, compiled_kernel_jobs, require_accepted

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import compiled, tile_tensor, zeros

TILES = 8


def _sources(k: int) -> list[int]:
    """The tiles output tile ``k`` of each row is copied from, row by row."""
    q, r = divmod(k + 3, 3)
    return [k ^ 1, (k & 6) | (k >> 2), ((1 << (k % 3)) + k) % TILES, (k << 1) % TILES + (k >> 2),
            (k >> 1) << 1, (2 * q + r) % TILES]


ROWS = len(_sources(0))


@ttl.operation(grid=(1, 1))
def permute(x, out):
    dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        def read(row, src):
            with dfb.reserve() as b:
                ttl.copy(x[row, src], b).wait()

        for k in range(TILES):
            read(0, k ^ 1)
            read(1, (k & 6) | (k >> 2))
            read(2, ((1 << (k % 3)) + k) % TILES)
            read(3, (k << 1) % TILES + (k >> 2))
            read(4, (k >> 1) << 1)
            q, r = divmod(k + 3, 3)
            read(5, (2 * q + r) % TILES)

    @ttl.datamovement()
    def writer():
        for k in range(TILES):
            for row in range(ROWS):
                with dfb.wait() as b:
                    ttl.copy(b, out[row, k]).wait()


def test_bitwise_tile_indices_pick_the_tiles_numpy_does(tmp_path):
    x = tile_tensor((32 * ROWS, 32 * TILES), seed=13)
    y = zeros((32 * ROWS, 32 * TILES))
    permute(x, y)
    tiles = ttnn.to_numpy(x).reshape(ROWS, 32, TILES, 32)
    want = np.empty_like(tiles)
    for k in range(TILES):
        for row, src in enumerate(_sources(k)):
            want[row, :, k, :] = tiles[row, :, src, :]
    np.testing.assert_array_equal(ttnn.to_numpy(y), want.reshape(32 * ROWS, 32 * TILES))

    jobs = compiled_kernel_jobs(compiled(permute, x, zeros((32 * ROWS, 32 * TILES))), tmp_path)
    text = "".join(path.read_text() for path, _, _ in jobs)
    assert "<<" in text and "^" in text and "&" in text
    for result in check_kernels(jobs):
        require_accepted(result)
