"""What tilefold says of a TileLang name it does not have (``T.ws``, ``T.int4``, ``tilelang.JITKernell``).

Reads: the name and the names the module has. Writes: one message — why the name has no Tensix
form when it is a GPU notion tilefold knows of, else the closest names it has.
"""

from __future__ import annotations

import difflib

_IM2COL = ("gathers the patch matrix of a convolution element by element; Tensix cores move tensors by 32x32 "
           "tiles and 16-element face rows, so copy the input row of each window position instead, "
           "T.copy(data[n, oh + kh, kw:kw + OW, :], data_shared), as examples/tilelang/convolution.py does")
_WARP_SPECIALIZED = ("(warp specialization) has no Tensix form: write the copies and the compute in one body "
                     "without it — tilefold splits every kernel into reader, compute and writer kernels itself")
_NO_TILE_FORMAT = ("is a data type with no Tensix tile format tilefold stores (it has float32, bfloat16, float16, "
                   "bfloat8_b as float8, int32, uint32, uint16, uint8 and bool)")
# TileLang names with no Tensix form: why, and what to write instead
NO_TENSIX_FORM = {
    "im2col": _IM2COL, "c2d_im2col": _IM2COL, "ws": _WARP_SPECIALIZED,
    **dict.fromkeys(("int4", "uint4", "int1", "uint1", "uint64", "float4_e2m1fn", "float8_e8m0fnu", "float6_e2m3fn",
                     "float6_e3m2fn", "float32x2", "float16x2", "bfloat16x2", "float8_e4m3fnuz", "float8_e5m2fnuz"),
                    _NO_TILE_FORMAT),
}


def unknown_primitive(name: str, names) -> str:
    """The message for ``T.<name>`` that tilefold does not have."""
    if name in NO_TENSIX_FORM:
        return f"T.{name} {NO_TENSIX_FORM[name]}"
    close = difflib.get_close_matches(name, [n for n in names if not n.startswith("_")], 3, 0.6)
    hint = f" (closest: {', '.join(f'T.{n}' for n in close)})" if close else ""
    return f"unknown TileLang primitive T.{name}: tilefold has no such name{hint}; docs/tilelang.md lists what it accepts"


def unknown_module_name(name: str, names) -> str:
    """The message for ``tilelang.<name>`` that tilefold does not have."""
    close = difflib.get_close_matches(name, [n for n in names if not n.startswith("_")], 3, 0.6)
    hint = f" (closest: {', '.join(f'tilelang.{n}' for n in close)})" if close else ""
    return (f"tilelang.{name} is not part of tilefold{hint}; tilefold runs TileLang kernels written with "
            "tilelang.language (T.*), tilelang.jit / tilelang.compile and TileLang's helper modules")
