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
    """``out = 3 * inp``, a tile at a time."""
    rows, cols = inp.shape[0] // 32, inp.shape[1] // 32
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(rows * cols):
            with in_dfb.wait() as x, out_dfb.reserve() as y:
                y.store(x * 3.0)

    @ttl.datamovement()
    def reader():
        for r in range(rows):
            for c in range(cols):
                with in_dfb.reserve() as blk:
                    ttl.copy(inp[r, c], blk).wait()

    @ttl.datamovement()
    def writer():
        for r in range(rows):
            for c in range(cols):
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


def _cores(core_set) -> list[tuple[int, int]]:
    return [(x, y) for r in core_set.ranges() for y in range(r.start.y, r.end.y + 1)
            for x in range(r.start.x, r.end.x + 1)]


def test_num_cores_to_corerangeset_takes_whole_rows_or_columns_then_a_partial_one():
    row_wise = ttnn.num_cores_to_corerangeset(10, ttnn.CoreCoord(8, 8), row_wise=True)
    assert [(r.start.x, r.start.y, r.end.x, r.end.y) for r in row_wise.ranges()] == [(0, 0, 7, 0), (0, 1, 1, 1)]
    column_wise = ttnn.num_cores_to_corerangeset(10, ttnn.CoreCoord(4, 8))
    assert [(r.start.x, r.start.y, r.end.x, r.end.y) for r in column_wise.ranges()] == [(0, 0, 0, 7), (1, 0, 1, 1)]
    # a pair is (rows, columns), as TT-Lang's simulator reads it
    assert _cores(ttnn.num_cores_to_corerangeset(10, (8, 4))) == _cores(column_wise)
    assert ttnn.core_range_set_to_core_grid(row_wise).num_cores == 16
    assert len(_cores(ttnn.num_cores_to_corerangeset(64, ttnn.CoreGrid(y=8, x=8), True))) == 64


def test_num_cores_to_corerangeset_beyond_the_grid_names_the_line():
    from tilefold.errors import LayoutError

    with pytest.raises(LayoutError, match=r"num_cores_to_corerangeset: target_num_cores 65 is more than the 8x8 grid") as err:
        ttnn.num_cores_to_corerangeset(65, ttnn.CoreCoord(8, 8), row_wise=True)
    assert err.value.location.file.endswith("test_ttl_host_core_ranges.py")


def test_a_tensor_height_sharded_over_the_first_cores_of_the_grid():
    """As TT-NN programs shard a tensor of ``n`` rows of tiles over ``n`` cores: the cores from
    ``num_cores_to_corerangeset`` (a full row and part of the next), the shard shape given, one
    tile row per core in row-major order; an operation reads it and writes DRAM."""
    from ttl_helpers import compiled
    from tilefold.arch import get_arch

    cores = ttnn.num_cores_to_corerangeset(10, ttnn.CoreCoord(8, 8), row_wise=True)
    memory = ttnn.create_sharded_memory_config((32, 32), core_grid=cores, strategy=ttnn.ShardStrategy.HEIGHT,
                                               orientation=ttnn.ShardOrientation.ROW_MAJOR,
                                               use_height_and_width_as_shard_shape=True)
    v = np.random.default_rng(5).standard_normal((320, 32)).astype(np.float32)
    inp = ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, memory_config=memory)
    out = ttnn.allocate_tensor_on_device(ttnn.Shape([320, 32]), ttnn.bfloat16, ttnn.TILE_LAYOUT,
                                         ttnn.open_device(device_id=0), ttnn.DRAM_MEMORY_CONFIG)
    assert out.shape == (320, 32) and out.dtype == ttnn.bfloat16
    scaled(inp, out)
    np.testing.assert_allclose(ttnn.to_numpy(out), ttnn.to_numpy(inp).astype(np.float32) * 3, rtol=1e-2, atol=1e-2)

    arch = get_arch(None)
    layout = compiled(scaled, inp, out).program.buffer("inp").buffer_layout(arch)
    banks, _ = layout.page_location(np.arange(10), arch)
    assert [(layout.distribution.cores[b].x, layout.distribution.cores[b].y) for b in banks] == _cores(cores)


def test_block_sharding_over_a_core_set_that_is_not_a_rectangle_is_one_error():
    from tilefold.errors import LayoutError

    cores = ttnn.num_cores_to_corerangeset(10, ttnn.CoreCoord(8, 8), row_wise=True)
    with pytest.raises(LayoutError, match="block sharding needs a rectangle of cores"):
        ttnn.create_sharded_memory_config((320, 256), core_grid=cores, strategy=ttnn.ShardStrategy.BLOCK)
    rectangle = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 3))])
    config = ttnn.create_sharded_memory_config((128, 64), core_grid=rectangle, strategy=ttnn.ShardStrategy.BLOCK)
    assert tuple(config.shard_spec.shape) == (32, 32)
