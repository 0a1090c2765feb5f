"""tile_pad_tt: the device shape of each global tensor, padded to whole tiles and blocks.

Reads: the parameters' shapes and every ``tile.copy`` to or from a global tensor (element
offsets as linear forms of block indices and loop variables, extent = the local buffer).
Writes: ``tt.padded_shapes`` = ``{name: [dims]}``: the tensor as the device holds it (a 1-D
tensor of n values is one row, (1, n)) with the last two dims rounded up to 32, and further
up so that every block the kernel copies lies inside the tensor (a grid of
``ceildiv(M, block_M)`` blocks may reach past M). The host pads inputs with zeros and drops
the padding of outputs, so a kernel computes on M×N as if on the padded shape: padding
enters matmul as zero terms and element-wise results in the padding are dropped.
Errors: a copy that starts below zero, a block that starts past the end of its tensor (a grid or
loop with more blocks than the tensor holds: padding completes a partial block, it does not make
room for whole blocks outside the tensor; a copy under an ``if`` is left to its condition), or a
copy that reaches past a leading (batch) dim.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilefold.ir import tile
from tilefold.ir.attributes import kernel_function, set_attr
from tilefold.passes.tilelang.common import TILE, buffers, compile_error
from tilefold.passes.tilelang.copy_geometry import copy_geometry, device_shape, reach


def _round(n: int, m: int) -> int:
    return -(-n // m) * m


def _guarded(op) -> bool:
    """Whether ``op`` runs under an ``if`` (whose condition may keep blocks inside the tensor)."""
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, tile.IfOp):
            return True
        parent = parent.parent_op()
    return False


class TilePadTT(ModulePass):
    """Padded device shapes of the global tensors (see the module docstring)."""

    name = "tile-pad-tt"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = kernel_function(op)
        padded: dict[str, list[int]] = {}
        for name, info in buffers(kernel).items():
            if info.is_global:
                dims = device_shape(info.shape)
                dims[-2:] = [_round(dims[-2], TILE), _round(dims[-1], TILE)]
                padded[name] = dims
        for copy in kernel.walk():
            if not isinstance(copy, tile.CopyOp) or not copy.offsets:
                continue
            g = copy_geometry(copy, kernel)
            shape = g.gshape
            dims = padded[g.gname]
            for d, bounds in enumerate(reach(g)):
                if bounds is None:
                    continue
                lo, hi = bounds
                if lo < 0:
                    raise compile_error(copy, f"T.copy of {g.gname} starts at {lo} in dim {d}, below 0")
                last_start = hi - g.extents[d] + 1
                if last_start >= shape[d] and not _guarded(copy):
                    raise compile_error(copy, f"T.copy of {g.gname}: a block starts at index {last_start} of dim {d}, "
                                              f"whose size is {shape[d]}, so it lies wholly outside the tensor; "
                                              "launch only the blocks the tensor holds (e.g. T.ceildiv(size, block)) "
                                              "or bound the loop")
                if len(shape) == 1:
                    dims[-1] = max(dims[-1], _round(hi + 1, TILE))
                elif d < len(shape) - 2:
                    if hi >= shape[d]:
                        raise compile_error(copy, f"T.copy of {g.gname} reaches index {hi} of dim {d}, whose size "
                                                  f"is {shape[d]}")
                else:
                    dims[d] = max(dims[d], _round(hi + 1, TILE))
        set_attr(kernel, "tt.padded_shapes", padded)
