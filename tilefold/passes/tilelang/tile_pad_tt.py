"""tile_pad_tt: the device shape of each global tensor, padded to whole tiles and blocks.

Reads: the parameters' shapes and every ``tile.copy`` to or from a global tensor (element
offsets as linear forms of block indices and loop variables, extent = the local buffer).
Writes: ``tt.padded_shapes`` = ``{name: [dims]}``: the last two dims rounded up to 32, and
further up so that every block the kernel copies lies inside the tensor (a grid of
``ceildiv(M, block_M)`` blocks may reach past M). The host pads inputs with zeros and
drops the padding of outputs, so a kernel computes on M×N as if on the padded shape:
padding enters matmul as zero terms and element-wise results in the padding are dropped.
Errors: a copy that starts below zero, or reaches past a leading (batch) dim.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilefold.ir import tile
from tilefold.passes.tilelang.affine import affine_of, affine_range
from tilefold.passes.tilelang.attributes import kernel_function, set_attr
from tilefold.passes.tilelang.common import TILE, buffer_name, buffers, compile_error, is_global, memref_shape


def _round(n: int, m: int) -> int:
    return -(-n // m) * m


class TilePadTT(ModulePass):
    """Padded device shapes of the global tensors (see the module docstring)."""

    name = "tile_pad_tt"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = kernel_function(op)
        padded: dict[str, list[int]] = {}
        for name, info in buffers(kernel).items():
            if info.is_global:
                dims = list(info.shape)
                if len(dims) == 1:
                    dims = [_round(dims[0], TILE)]
                else:
                    dims[-2:] = [_round(dims[-2], TILE), _round(dims[-1], TILE)]
                padded[name] = dims
        for copy in kernel.walk():
            if not isinstance(copy, tile.CopyOp) or not copy.offsets:
                continue
            glob, local = (copy.src, copy.dst) if is_global(copy.src, kernel) else (copy.dst, copy.src)
            name = buffer_name(glob, kernel)
            shape = memref_shape(glob)
            local_shape = memref_shape(local)
            extents = [1] * (len(shape) - len(local_shape)) + list(local_shape)
            for d, (offset, extent) in enumerate(zip(copy.offsets, extents)):
                rng = affine_range(affine_of(offset))
                if rng is None:
                    continue
                lo, hi = rng
                if lo < 0:
                    raise compile_error(copy, f"T.copy of {name} starts at {lo} in dim {d}, below 0")
                end = hi + extent
                if d < len(shape) - 2:
                    if end > shape[d]:
                        raise compile_error(copy, f"T.copy of {name} reaches index {end - 1} of dim {d}, whose size "
                                                  f"is {shape[d]}")
                else:
                    padded[name][d] = max(padded[name][d], _round(end, TILE))
        set_attr(kernel, "tt.padded_shapes", padded)
