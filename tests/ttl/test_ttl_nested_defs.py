"""Functions nested in a kernel that name a block bound after their ``def``: a helper defined at the
top of a loop body reads the block a later ``with ... as`` binds in a node-dependent ``if`` / ``elif``
where the helper is called, so the block is not carried across iterations; run on the simulated
device against numpy."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import tile_tensor, zeros

K = 3


@ttl.operation(grid=(2, 1))
def shifted_plus_one(inp, out):
    """Node x reads row x of tiles x*K .. x*K+K-1 of ``inp`` and writes each plus one to the same
    place in ``out``. The reader's ``fetch`` is defined before ``blk`` is bound in either branch."""
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(K):
            with in_dfb.wait() as x, out_dfb.reserve() as y:
                y.store(x + 1.0)

    @ttl.datamovement()
    def reader():
        nx, _ = ttl.node(dims=2)
        for k in range(K):
            def fetch(row):
                ttl.copy(inp[row, nx * K + k], blk).wait()

            if nx == 0:
                with in_dfb.reserve() as blk:
                    fetch(0)
            elif nx == 1:
                with in_dfb.reserve() as blk:
                    fetch(1)

    @ttl.datamovement()
    def writer():
        nx, _ = ttl.node(dims=2)
        for k in range(K):
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[nx, nx * K + k]).wait()


def test_helper_reads_a_block_bound_after_its_definition():
    inp = tile_tensor((64, 2 * K * 32), seed=5)
    out = zeros((64, 2 * K * 32))
    shifted_plus_one(inp, out)
    v = ttnn.to_numpy(inp).astype(np.float32)
    expected = np.zeros_like(v)
    expected[:32, :K * 32] = v[:32, :K * 32] + 1
    expected[32:, K * 32:] = v[32:, K * 32:] + 1
    np.testing.assert_allclose(ttnn.to_numpy(out).astype(np.float32), expected, rtol=1e-2, atol=1e-2)
