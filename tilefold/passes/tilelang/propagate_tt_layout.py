"""propagate_tt_layout (Stage A2): ``tt.cb.<name>`` for every local buffer a DRAM↔L1 copy uses.

Reads: ``tile.copy`` ops between a global tensor and a local buffer, the enclosing loops
(``T.Pipelined(num_stages=s)``), ``tt.buffer.<global>``.
Writes: ``tt.cb.<local>`` = {page_size, depth, data_format, block_tiles}: pages are tiles of
the global tensor's format (the NOC moves pages unchanged; a fragment of another dtype is
converted when it is packed), ``block_tiles`` = [rows, cols] of the block one copy moves,
and ``depth`` (pages) = ``num_stages`` blocks for a copy in a pipelined loop, else two
blocks (double buffering).
Errors: one local buffer copied to or from tensors of different dtypes.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilefold.ir import tile
from tilefold.ir.attributes import get_attr, kernel_function, set_attr
from tilefold.ir.buffer_layouts import entry_format
from tilefold.passes.tilelang.common import TILE, compile_error, memref_shape, tile_grid
from tilefold.passes.tilelang.copy_geometry import copy_geometry

DEFAULT_STAGES = 2


def copy_stages(copy: tile.CopyOp) -> int:
    """Blocks of buffering a copy asks for: its innermost pipelined loop's stages, else 2."""
    parent = copy.parent_op()
    while parent is not None:
        if isinstance(parent, tile.ForOp) and parent.kind.data == "pipelined":
            return max(parent.stages or 1, 1)
        parent = parent.parent_op()
    return DEFAULT_STAGES


class PropagateTTLayout(ModulePass):
    """CB geometry of the buffers of DRAM↔L1 copies (see the module docstring)."""

    name = "propagate-tt-layout"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = kernel_function(op)
        found: dict[str, dict] = {}
        for copy in kernel.walk():
            if not isinstance(copy, tile.CopyOp) or not copy.offsets:
                continue
            g = copy_geometry(copy, kernel)
            gname, lname = g.gname, g.lname
            fmt = entry_format(get_attr(kernel, f"tt.buffer.{gname}"))
            rows, cols = tile_grid(memref_shape(g.local))
            block = rows * cols
            cb = {"page_size": fmt.tile_size(TILE, TILE), "depth": copy_stages(copy) * block,
                  "data_format": fmt.value, "block_tiles": [rows, cols]}
            old = found.get(lname)
            if old is not None:
                if old["data_format"] != cb["data_format"]:
                    raise compile_error(copy, f"{lname} is copied to or from tensors of different dtypes "
                                              f"({old['data_format']} and {cb['data_format']}); use one local buffer "
                                              "per dtype")
                cb["depth"] = max(cb["depth"], old["depth"])
            found[lname] = cb
        for name, cb in found.items():
            set_attr(kernel, f"tt.cb.{name}", cb)
