"""``ttl.dtype_utils``: TT-Lang's helpers between torch and TT-NN data types, as its test
utilities call them (``to_dram`` / ``to_l1`` make a TT-NN tensor of a torch tensor's type).

Reads: torch data types, TT-NN data types (:mod:`tilefold.ttnn`), data format names and tile
shapes. Writes: nothing. The helpers that convert to TT-Lang's MLIR types have no counterpart here
(one clear error names them).
"""

from __future__ import annotations

import operator

from tilefold.caller import unsupported_names
from tilefold.errors import KernelError
from tilefold.layout.formats import data_format
from tilefold.layout.tiles import SUPPORTED_TILE_SHAPES

_TORCH_NAMES = frozenset({"float32", "bfloat16", "int32", "uint32", "uint16", "uint8"})    # as ttnn names them
_FORMAT_NAMES = {"bfloat16": "bfloat16", "bf16": "bfloat16", "float16": "bfloat16", "f16": "bfloat16",
                 "bfloat8_b": "bfloat8_b", "bfp_bf8": "bfloat8_b", "bfloat4_b": "bfloat4_b", "bfp_bf4": "bfloat4_b",
                 "float32": "float32", "f32": "float32", "int32": "int32", "i32": "int32", "si32": "int32",
                 "uint32": "uint32", "u32": "uint32", "ui32": "uint32", "uint16": "uint16", "u16": "uint16",
                 "ui16": "uint16", "uint8": "uint8", "u8": "uint8", "ui8": "uint8"}


def _ttnn():
    from tilefold import ttnn

    return ttnn


def is_ttnn_tensor(tensor) -> bool:
    """Whether ``tensor`` is a TT-NN tensor (a device, host or mesh tensor)."""
    from tilefold.frontend.ttl.mesh import MeshTensor

    return isinstance(tensor, (_ttnn().Tensor, MeshTensor))


def torch_dtype_to_ttnn_datatype(torch_dtype):
    """The TT-NN data type of a torch data type (``torch.bfloat16`` -> ``ttnn.bfloat16``)."""
    name = str(torch_dtype).rpartition(".")[2]
    if name not in _TORCH_NAMES:
        raise ValueError(f"Unsupported torch dtype for ttnn.DataType: {torch_dtype}")
    return getattr(_ttnn(), name)


def format_name_to_ttnn_dtype(name: str):
    """The TT-NN data type of a data format name (``"bf16"``, ``"float32"``, ``"bfp_bf8"`` ...)."""
    if name not in _FORMAT_NAMES:
        raise ValueError(f"Unrecognized data format name '{name}' for ttnn.DataType")
    return getattr(_ttnn(), _FORMAT_NAMES[name])


def normalize_tile_dimensions(tile) -> tuple[int, int]:
    """``tile`` as (height, width) ints, one of the tile shapes TT-Metal makes."""
    try:
        height, width = tile
        shape = (operator.index(height), operator.index(width))
    except (TypeError, ValueError):
        raise ValueError(f"Tile must contain exactly two integer dimensions, got {tile!r}") from None
    if shape[0] <= 0 or shape[1] <= 0:
        raise ValueError(f"Tile dimensions must be positive, got {shape}")
    if shape not in SUPPORTED_TILE_SHAPES:
        raise ValueError(f"Tile dimensions are not constructible by tt-metal: {shape[0]}x{shape[1]}")
    return shape


def tile_bytes_from_dtype(dtype, tile=(32, 32)) -> int:
    """Bytes of one ``tile`` of TT-NN data type ``dtype`` (block floats with their exponents)."""
    height, width = normalize_tile_dimensions(tile)
    name = getattr(dtype, "name", None)
    if name is None:
        raise ValueError(f"Unsupported dtype for tile size calculation: {dtype}")
    return data_format(name).tile_size(height, width)


__getattr__ = unsupported_names("ttl.dtype_utils",
                              "(tilefold has no TT-Lang MLIR types); use torch_dtype_to_ttnn_datatype, "
                              "format_name_to_ttnn_dtype or tile_bytes_from_dtype")
