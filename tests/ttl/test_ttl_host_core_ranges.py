"""``ttnn.CoreRangeSet`` / ``ttnn.CoreRange`` from the host API where tilefold takes cores: a shard
spec over them (an operation reads and writes the sharded L1 tensor on the simulated device,
against numpy) and ``ttnn.split_work_to_cores`` over a range starting at (0, 0)."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn


@ttl.operation(grid=(1, 1))
def scaled(inp, out):
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(4):
            with in_dfb.wait() as x, out_dfb.reserve() as y:
                y.store(x * 3.0)

    @ttl.datamovement()
    def reader():
        for r in range(2):
            for c in range(2):
                with in_dfb.reserve() as blk:
                    ttl.copy(inp[r, c], blk).wait()

    @ttl.datamovement()
    def writer():
        for r in range(2):
            for c in range(2):
                with out_dfb.wait() as blk:
                    ttl.copy(blk, out[r, c]).wait()


def _sharded(values):
    core = ttnn.CoreCoord(0, 0)
    spec = ttnn.ShardSpec(ttnn.CoreRangeSet({ttnn.CoreRange(core, core)}), (64, 64), ttnn.ShardOrientation.ROW_MAJOR)
    config = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, spec)
    dram = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    return ttnn.to_memory_config(dram, memory_config=config)


def test_shard_spec_over_host_core_range_set():
    v = np.random.default_rng(4).standard_normal((64, 64)).astype(np.float32)
    inp, out = _sharded(v), _sharded(np.zeros((64, 64), np.float32))
    assert ttnn.is_sharded(inp)
    scaled(inp, out)
    np.testing.assert_allclose(ttnn.to_numpy(out).astype(np.float32), ttnn.to_numpy(inp).astype(np.float32) * 3,
                               rtol=1e-2, atol=1e-2)


def test_split_work_to_cores_over_a_core_range_set():
    grid = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(3, 2))])
    assert ttnn.split_work_to_cores(grid, 17, True)[::4] == ttnn.split_work_to_cores(ttnn.CoreCoord(4, 3), 17, True)[::4]
    n, all_cores, *_ = ttnn.split_work_to_cores(grid, 17, False)
    assert n == 12 and all_cores.num_cores() == 12
    # a range away from the origin: its own cores, column-major
    n, all_cores, group_1, _, per_1, _ = ttnn.split_work_to_cores(
        ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(1, 0), ttnn.CoreCoord(2, 2))]), 5)
    assert (n, per_1) == (5, 1)
    cores = {(x, y) for r in all_cores.ranges() for x in range(r.start.x, r.end.x + 1)
             for y in range(r.start.y, r.end.y + 1)}
    assert cores == {(1, 0), (1, 1), (1, 2), (2, 0), (2, 1)}       # the first column, then the second
