"""``ttl.dtype_utils`` (torch / TT-NN data types, as TT-Lang's test utilities use them) and the
``ttnn.DataType.BFLOAT16`` spelling of TT-NN's data types."""

from __future__ import annotations

import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError


class TorchDtype:
    """Stands for a torch data type (prints as ``torch.<name>``) where torch is not installed."""

    def __init__(self, name: str):
        self.name = name

    def __str__(self) -> str:
        return f"torch.{self.name}"


def test_datatype_members_are_the_data_types():
    assert ttnn.DataType.BFLOAT16 is ttnn.bfloat16 and ttnn.DataType.FLOAT32 is ttnn.float32
    assert ttnn.DataType.BFLOAT8_B is ttnn.bfloat8_b and ttnn.DataType.UINT32 is ttnn.uint32
    assert repr(ttnn.DataType.INT32) == "DataType.INT32"


def test_dtype_utils_converts_and_sizes():
    utils = ttl.dtype_utils
    assert utils.torch_dtype_to_ttnn_datatype(TorchDtype("bfloat16")) is ttnn.bfloat16
    assert utils.torch_dtype_to_ttnn_datatype(TorchDtype("int32")) is ttnn.int32
    with pytest.raises(ValueError, match="Unsupported torch dtype"):
        utils.torch_dtype_to_ttnn_datatype(TorchDtype("complex64"))
    assert utils.format_name_to_ttnn_dtype("bfp_bf8") is ttnn.bfloat8_b
    assert utils.format_name_to_ttnn_dtype("f32") is ttnn.float32
    assert utils.tile_bytes_from_dtype(ttnn.bfloat16) == 2048
    assert utils.tile_bytes_from_dtype(ttnn.DataType.BFLOAT8_B) == 1088
    assert utils.tile_bytes_from_dtype(ttnn.float32, (16, 32)) == 2048
    assert utils.normalize_tile_dimensions([16, 32]) == (16, 32)
    with pytest.raises(ValueError, match="not constructible"):
        utils.normalize_tile_dimensions((7, 32))
    assert utils.is_ttnn_tensor(ttnn.zeros((32, 32))) and not utils.is_ttnn_tensor([1])
    with pytest.raises(KernelError, match="ttl.dtype_utils.torch_dtype_to_ttcore_datatype is not supported"):
        utils.torch_dtype_to_ttcore_datatype
