"""How tensors are laid out on Tenstorrent devices.

- :mod:`.tiles` — tile shapes and faces, tilize / untilize
- :mod:`.formats` — data formats (float32, bfloat16, bfloat8_b, bfloat4_b) and their device bytes
- :mod:`.host` — host transfers as TT-NN does them (to and from device pages)
- :mod:`.metal_layout` — tt-mlir's MetalLayout (dimension collapsing, grids, padding)
- :mod:`.tensor_spec` — TT-NN TensorSpec, memory configs, sharding
- :mod:`.addressing` — page sizes, page → bank mapping, TensorAccessorArgs
- :mod:`.visualize` — pictures of a layout over the core grid
"""

import importlib

# public name -> the submodule defining it; imported on first use, so importing one submodule
# (e.g. ``tilefold.layout.formats``) does not pull in the others (MetalLayout needs xDSL's parser)
_EXPORTS = {
    "addressing": ("BufferLayout", "decode_tensor_accessor_args", "interleaved_page_location",
                   "sharded_page_location", "tensor_accessor_args"),
    "formats": ("DataFormat", "data_format", "pack_tiles", "unpack_tiles"),
    "host": ("from_device_pages", "to_device_pages"),
    "metal_layout": ("LinearMetalLayout", "MemorySpace", "MetalLayout"),
    "tensor_spec": ("MemoryConfig", "NdShardSpec", "ShardSpec", "TensorMemoryLayout", "TensorSpec"),
    "tiles": ("TILE_32x32", "TileShape", "tile_shape", "tilize", "untilize"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'tilefold.layout' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"tilefold.layout.{module}"), name)
    globals()[name] = value
    return value


__all__ = list(_MODULE_OF)
