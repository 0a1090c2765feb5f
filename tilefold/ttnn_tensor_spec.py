"""``ttnn.TensorSpec`` and ``ttnn.NdShardSpec`` of the host TT-NN API: a tensor's shape, data type,
layout and memory config, with the sharding helpers of TT-NN's tensor sharding API
(``height_sharded``, ``width_sharded``, ``block_sharded``, ``nd_sharded``, ``sharded_across_dims``).

Reads: the arguments. Writes: nothing — ``ttnn.from_torch(t, spec=...)`` / ``from_numpy`` and
``ttnn.allocate_tensor_on_device(spec, device)`` (:mod:`tilefold.ttnn`) take the data type, layout
and memory config from a spec. An N-D shard spec places whole shards of ``shard_shape`` elements on
the cores of its grid, dealt round-robin (:class:`tilefold.layout.tensor_spec.NdShardSpec`).
"""

from __future__ import annotations

from tilefold.caller import user_location
from tilefold.errors import LayoutError
from tilefold.layout import tensor_spec as layout_spec
from tilefold.layout.addressing import BufferType, ShardDistributionStrategy, ShardOrientation


def NdShardSpec(shard_shape, grid=None, orientation=ShardOrientation.ROW_MAJOR,
                shard_distribution_strategy=ShardDistributionStrategy.ROUND_ROBIN_1D, *, core_ranges=None,
                distribution=None) -> layout_spec.NdShardSpec:
    """``ttnn.NdShardSpec(shard_shape, grid, orientation, shard_distribution_strategy)``: shards of
    ``shard_shape`` elements (one per dimension of the tensor) on the cores of ``grid`` (a
    ``CoreRangeSet``; TT-Lang's simulator calls it ``core_ranges=``)."""
    grid = grid if grid is not None else core_ranges
    if grid is None:
        raise LayoutError("ttnn.NdShardSpec(shard_shape, grid): give the cores, a ttnn.CoreRangeSet", user_location())
    try:
        return layout_spec.NdShardSpec(tuple(shard_shape), grid, orientation,
                                       distribution or shard_distribution_strategy)
    except LayoutError as exc:
        raise LayoutError(f"ttnn.NdShardSpec: {exc.message}", user_location()) from None


def _num_cores(core_ranges) -> int:
    return sum((r.end.x - r.start.x + 1) * (r.end.y - r.start.y + 1) for r in core_ranges.ranges())


class TensorSpec:
    """``ttnn.TensorSpec(shape, dtype, layout, buffer_type=ttnn.BufferType.DRAM)``; its sharding
    helpers return a new spec whose ``memory_config`` shards the tensor in L1."""

    def __init__(self, shape, dtype, layout, buffer_type=BufferType.DRAM, memory_config=None):
        from tilefold import ttnn

        self.shape = ttnn.Shape(ttnn._shape(shape))
        self.dtype = ttnn._dtype(dtype)
        self.layout = ttnn._layout(layout)
        self.buffer_type = layout_spec.buffer_type(buffer_type)
        self.memory_config = memory_config or layout_spec.MemoryConfig(buffer_type=self.buffer_type)

    def _with(self, memory_config) -> "TensorSpec":
        return TensorSpec(self.shape, self.dtype, self.layout, BufferType.L1, memory_config)

    def _sharded(self, core_ranges, strategy, orientation) -> "TensorSpec":
        from tilefold import ttnn

        return self._with(ttnn.create_sharded_memory_config(tuple(self.shape), core_ranges, strategy, orientation))

    def height_sharded(self, core_ranges, orientation=ShardOrientation.ROW_MAJOR, **kwargs) -> "TensorSpec":
        """Leading dimensions collapsed into the height, split over the cores."""
        from tilefold import ttnn

        return self._sharded(core_ranges, ttnn.ShardStrategy.HEIGHT, orientation)

    def width_sharded(self, core_ranges, orientation=ShardOrientation.ROW_MAJOR, **kwargs) -> "TensorSpec":
        """The last dimension split over the cores."""
        from tilefold import ttnn

        return self._sharded(core_ranges, ttnn.ShardStrategy.WIDTH, orientation)

    def block_sharded(self, core_ranges, orientation=ShardOrientation.ROW_MAJOR, **kwargs) -> "TensorSpec":
        """Height and width split over a rectangle of cores."""
        from tilefold import ttnn

        return self._sharded(core_ranges, ttnn.ShardStrategy.BLOCK, orientation)

    def nd_sharded(self, shard_shape, core_ranges, orientation=ShardOrientation.ROW_MAJOR,
                   shard_distribution_strategy=ShardDistributionStrategy.ROUND_ROBIN_1D) -> "TensorSpec":
        """Shards of ``shard_shape`` elements, dealt to the cores."""
        if len(tuple(shard_shape)) != len(self.shape):
            raise LayoutError(f"TensorSpec.nd_sharded: shard_shape {list(shard_shape)} has {len(tuple(shard_shape))} "
                              f"dims; the tensor {list(self.shape)} has {len(self.shape)}", user_location())
        spec = NdShardSpec(shard_shape, core_ranges, orientation, shard_distribution_strategy)
        return self._with(layout_spec.MemoryConfig(layout_spec.TensorMemoryLayout.BLOCK_SHARDED, BufferType.L1,
                                                   nd_shard_spec=spec))

    def sharded_across_dims(self, dims, core_ranges, orientation=ShardOrientation.ROW_MAJOR) -> "TensorSpec":
        """One shard per index of the dimensions ``dims`` (a tile's height or width along the last
        two dimensions of a tiled tensor), the shards dealt to the cores round-robin."""
        rank = len(self.shape)
        tiled = self.layout.name == "TILE"
        shard = list(self.shape)
        for d in dims:
            if not -rank <= d < rank:
                raise LayoutError(f"TensorSpec.sharded_across_dims: dim {d} is outside the tensor's {rank} dims",
                                  user_location())
            d %= rank
            shard[d] = 32 if tiled and d >= rank - 2 else 1
        if _num_cores(core_ranges) < 1:
            raise LayoutError("TensorSpec.sharded_across_dims: the core set has no cores", user_location())
        return self.nd_sharded(shard, core_ranges, orientation)

    def tensor_layout(self):
        return self.layout

    def __repr__(self) -> str:
        return (f"TensorSpec(shape={list(self.shape)}, dtype={self.dtype!r}, layout={self.layout!r}, "
                f"memory_config={self.memory_config!r})")

