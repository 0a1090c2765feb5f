"""``ttnn.TensorSpec`` and ``ttnn.NdShardSpec`` from the host API: a tensor made with
``from_torch(..., spec=...)`` / ``from_numpy`` takes the spec's data type, layout and memory config,
its shards sit in the L1 of the cores the spec names, and an operation reads it (against numpy)."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import compiled


@ttl.operation(grid=(1, 1))
def doubled(inp, out):
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(8):
            with in_dfb.wait() as x, out_dfb.reserve() as y:
                y.store(x * 2.0 + 1.0)

    @ttl.datamovement()
    def reader():
        for b in range(2):
            for r in range(2):
                for c in range(2):
                    with in_dfb.reserve() as blk:
                        ttl.copy(inp[b, r, c], blk).wait()

    @ttl.datamovement()
    def writer():
        for b in range(2):
            for r in range(2):
                for c in range(2):
                    with out_dfb.wait() as blk:
                        ttl.copy(blk, out[b, r, c]).wait()


CORES = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(3, 0))])
SPECS = {
    # name -> (the spec, the core (x, y) of each of the tensor's 8 tiles, in page order)
    "across batch": (lambda s: s.sharded_across_dims([0], CORES), [(0, 0)] * 4 + [(1, 0)] * 4),
    "nd shards of one tile row": (lambda s: s.nd_sharded((1, 32, 64), CORES), [(0, 0)] * 2 + [(1, 0)] * 2 +
                                  [(2, 0)] * 2 + [(3, 0)] * 2),
    "height": (lambda s: s.height_sharded(CORES), [(0, 0)] * 2 + [(1, 0)] * 2 + [(2, 0)] * 2 + [(3, 0)] * 2),
}


@pytest.mark.parametrize("name", list(SPECS))
def test_an_operation_reads_a_tensor_made_from_a_tensor_spec(name):
    from tilefold.arch import get_arch

    make, holders = SPECS[name]
    spec = make(ttnn.TensorSpec((2, 64, 64), ttnn.bfloat16, ttnn.TILE_LAYOUT))
    v = np.random.default_rng(1).standard_normal((2, 64, 64)).astype(np.float32)
    inp = ttnn.from_numpy(v, spec=spec, device=ttnn.open_device(device_id=0))
    assert inp.dtype == ttnn.bfloat16 and ttnn.is_sharded(inp)
    out = ttnn.allocate_tensor_on_device(ttnn.TensorSpec((2, 64, 64), ttnn.bfloat16, ttnn.TILE_LAYOUT),
                                         ttnn.open_device(device_id=0))
    doubled(inp, out)
    np.testing.assert_allclose(ttnn.to_numpy(out), ttnn.to_numpy(inp).astype(np.float32) * 2 + 1, rtol=1e-2, atol=2e-2)

    arch = get_arch(None)
    layout = compiled(doubled, inp, out).program.buffer("inp").buffer_layout(arch)
    banks, _ = layout.page_location(np.arange(8), arch)
    assert [(layout.distribution.cores[b].x, layout.distribution.cores[b].y) for b in banks] == holders


def test_memory_config_of_a_buffer_type_and_an_nd_shard_spec():
    """TT-NN's ``MemoryConfig(buffer_type, nd_shard_spec)``, and TT-Lang's simulator's spelling
    ``NdShardSpec(shard_shape=..., core_ranges=...)``."""
    spec = ttnn.NdShardSpec(shard_shape=[1, 64, 64], core_ranges=CORES)
    config = ttnn.MemoryConfig(ttnn.BufferType.L1, spec)
    assert config.is_sharded() and config.nd_shard_spec is spec and config.buffer_type == ttnn.BufferType.L1
    v = np.arange(2 * 64 * 64, dtype=np.float32).reshape(2, 64, 64)
    t = ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, memory_config=config)
    np.testing.assert_array_equal(ttnn.to_numpy(t), v)


def test_a_spec_of_another_shape_is_one_error_at_the_line():
    from tilefold.errors import LayoutError

    spec = ttnn.TensorSpec((2, 64, 64), ttnn.bfloat16, ttnn.TILE_LAYOUT)
    with pytest.raises(LayoutError, match=r"from_numpy: the values have shape \[64, 64\], the spec \[2, 64, 64\]") as err:
        ttnn.from_numpy(np.zeros((64, 64), np.float32), spec=spec)
    assert err.value.location.file.endswith("test_ttl_tensor_specs.py")
    with pytest.raises(LayoutError, match="shard_shape \\[1, 32\\] has 2 dims; the tensor \\[2, 64, 64\\] has 3"):
        spec.nd_sharded((1, 32), CORES)
