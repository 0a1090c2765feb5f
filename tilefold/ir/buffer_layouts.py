"""A ``tt.buffer.<name>`` entry as a device buffer: its memory config, page layout and accessor args.

Reads: ``tt.buffer.<name>`` dicts (memory, layout, dtype, padded_shape, nd_shard). Writes:
nothing. Used by :mod:`.attach_tensor_accessor` (to size TensorAccessorArgs) and by the
Program builder (to create the buffer). ND shards are dealt round-robin to their banks:
DRAM shards to the DRAM banks ``(bank, 0)``; L1 shards to the ``Gx × Gy`` rectangle of
cores of the projected grid, row by row, so shard ``(sy, sx)`` of the projection lives on
core ``(sx, sy)``.
"""

from __future__ import annotations

from tilefold.arch import Arch
from tilefold.arch.cores import CoreRange, CoreRangeSet
from tilefold.ir.tile_types import format_of_short_name
from tilefold.layout.addressing import BufferLayout, tensor_accessor_args
from tilefold.layout.tensor_spec import MemoryConfig, NdShardSpec, TensorMemoryLayout, TensorSpec



def entry_format(entry: dict):
    """The tile format of a ``tt.buffer`` entry."""
    return format_of_short_name(entry["dtype"])


def memory_config(entry: dict, arch: Arch) -> MemoryConfig | None:
    """None for an interleaved buffer, else the ND-sharded memory config."""
    if entry["layout"] != "sharded":
        return None
    nd = entry["nd_shard"]
    if entry["memory"] == "DRAM":
        cores = CoreRangeSet([CoreRange((0, 0), (arch.dram_banks - 1, 0))])
        buffer_type = "DRAM"
    else:
        gy, gx = nd["projected_grid"]
        cores = CoreRangeSet([CoreRange((0, 0), (gx - 1, gy - 1))])
        buffer_type = "L1"
    spec = NdShardSpec(tuple(nd["shard_shape_elems"]), cores)
    return MemoryConfig(TensorMemoryLayout.BLOCK_SHARDED, buffer_type, nd_shard_spec=spec)


def tensor_spec(entry: dict, arch: Arch) -> TensorSpec:
    config = memory_config(entry, arch)
    memory = config if config is not None else MemoryConfig(TensorMemoryLayout.INTERLEAVED, entry["memory"])
    return TensorSpec(tuple(entry["padded_shape"]), entry_format(entry), "TILE", memory)


def buffer_layout(entry: dict, arch: Arch) -> BufferLayout:
    """Where the buffer's pages live (raises LayoutError when the layout cannot be built)."""
    return tensor_spec(entry, arch).buffer_layout(arch)


def accessor_args(entry: dict, arch: Arch) -> list[int]:
    """The words ``TensorAccessorArgs(buffer).append_to`` adds for this buffer."""
    return tensor_accessor_args(buffer_layout(entry, arch), arch)
