"""Several nodes writing the same page of an L1 tensor in one step: the same bytes from each (a
result computed redundantly) are written once; different bytes are a race at the writer's line."""

from __future__ import annotations

import numpy as np
import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import NocHazardError
from ttl_helpers import expect_error


def _op(per_node: bool):
    """Every node of a 2x2 grid writes tile (0, 0) of ``out``: ``x + 1``, plus its node index when
    ``per_node``."""

    @ttl.operation(grid=(2, 2))
    def op(x, out):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, o_dfb.reserve() as o:
                o.store(a + 1.0)

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, ttl.node(dims=1) if per_node else 0], blk).wait()

        @ttl.datamovement()
        def write():
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()  # error

    return op


def _tensors():
    v = np.random.default_rng(0).standard_normal((32, 128)).astype(np.float32)
    x = ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, memory_config=ttnn.L1_MEMORY_CONFIG)
    out = ttnn.zeros((32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, memory_config=ttnn.L1_MEMORY_CONFIG)
    return x, out


def test_the_same_bytes_from_every_node_are_written_once():
    x, out = _tensors()
    _op(per_node=False)(x, out)
    np.testing.assert_allclose(ttnn.to_numpy(out), ttnn.to_numpy(x)[:, :32] + 1.0, rtol=1e-2)


def test_different_bytes_to_one_l1_page_are_a_race():
    expect_error(lambda: _op(per_node=True)(*_tensors()), _op, NocHazardError,
                 "race: noc_async_write_page writes bytes at L1 address", "give every page one writer")
