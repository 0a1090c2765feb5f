"""How tensors are laid out on Tenstorrent devices.

- :mod:`.tiles` — tile shapes and faces, tilize / untilize
- :mod:`.formats` — data formats (float32, bfloat16, bfloat8_b, bfloat4_b) and their device bytes
- :mod:`.host` — host transfers as TT-NN does them (to and from device pages)
- :mod:`.metal_layout` — tt-mlir's MetalLayout (dimension collapsing, grids, padding)
- :mod:`.tensor_spec` — TT-NN TensorSpec, memory configs, sharding
- :mod:`.addressing` — page sizes, page → bank mapping, TensorAccessorArgs
- :mod:`.visualize` — pictures of a layout over the core grid
"""

from tilefold.layout.addressing import (
    BufferLayout,
    decode_tensor_accessor_args,
    interleaved_page_location,
    sharded_page_location,
    tensor_accessor_args,
)
from tilefold.layout.formats import DataFormat, data_format, pack_tiles, unpack_tiles
from tilefold.layout.host import from_device_pages, to_device_pages
from tilefold.layout.metal_layout import LinearMetalLayout, MemorySpace, MetalLayout
from tilefold.layout.tensor_spec import MemoryConfig, NdShardSpec, ShardSpec, TensorMemoryLayout, TensorSpec
from tilefold.layout.tiles import TILE_32x32, TileShape, tile_shape, tilize, untilize

__all__ = [
    "BufferLayout", "decode_tensor_accessor_args", "interleaved_page_location", "sharded_page_location",
    "tensor_accessor_args", "DataFormat", "data_format", "pack_tiles", "unpack_tiles", "from_device_pages",
    "to_device_pages", "LinearMetalLayout", "MemorySpace", "MetalLayout", "MemoryConfig", "NdShardSpec",
    "ShardSpec", "TensorMemoryLayout", "TensorSpec", "TILE_32x32", "TileShape", "tile_shape", "tilize", "untilize",
]
