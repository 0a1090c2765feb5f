"""tile_pad_tt: the device shape of each global tensor, padded to whole tiles and blocks.

Reads: the parameters' shapes and every ``tile.copy`` to or from a global tensor (element
offsets as linear forms of block indices and loop variables, extent = the local buffer).
Writes: ``tt.padded_shapes`` = ``{name: [dims]}``: the tensor as the device holds it (a 1-D
tensor of n values is one row, (1, n)) with the last two dims rounded up to 32, and further
up so that every block the kernel copies lies inside the tensor (a grid of
``ceildiv(M, block_M)`` blocks may reach past M). The host pads inputs with zeros and drops
the padding of outputs, so a kernel computes on M×N as if on the padded shape: padding
enters matmul as zero terms and element-wise results in the padding are dropped.
A tensor with a safe value (``T.annotate_safe_value``) that the kernel only reads may be read
from below index 0 of its last two dims: the device tensor then starts with whole tiles of
padding (``tt.lead_pads`` = ``{name: [per dim]}``, the host fills them with the safe value) and
every copy's offset in that dim moves by as much.
Errors: a copy that starts below zero (of any other tensor or dim), a block that starts past the
end of its tensor (a grid or loop with more blocks than the tensor holds: padding completes a
partial block, it does not make room for whole blocks outside the tensor; a copy under an ``if``
is left to its condition), or a copy that reaches past a leading (batch) dim.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilefold.ir import tile
from tilefold.ir.attributes import get_attr, kernel_function, set_attr
from tilefold.passes.tilelang.common import TILE, buffers, compile_error
from tilefold.passes.tilelang.affine import constant_op
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
        leads = self.lead_pads(kernel, padded)
        for name, lead in leads.items():
            padded[name] = [d + l for d, l in zip(padded[name], lead)]
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
                lead = leads.get(g.gname, [0] * len(dims))[d + len(dims) - len(shape)]
                lo, hi = lo - lead, hi - lead
                last_start = hi - g.extents[d] + 1
                if last_start >= shape[d] and not _guarded(copy):
                    raise compile_error(copy, f"T.copy of {g.gname}: a block starts at index {last_start} of dim {d}, "
                                              f"whose size is {shape[d]}, so it lies wholly outside the tensor; "
                                              "launch only the blocks the tensor holds (e.g. T.ceildiv(size, block)) "
                                              "or bound the loop")
                if len(shape) == 1:
                    dims[-1] = max(dims[-1], _round(hi + 1, TILE) + lead)
                elif d < len(shape) - 2:
                    if hi >= shape[d]:
                        raise compile_error(copy, f"T.copy of {g.gname} reaches index {hi} of dim {d}, whose size "
                                                  f"is {shape[d]}")
                else:
                    dims[d] = max(dims[d], _round(hi + 1, TILE) + lead)
        set_attr(kernel, "tt.padded_shapes", padded)
        if leads:
            set_attr(kernel, "tt.lead_pads", leads)

    def lead_pads(self, kernel, padded: dict[str, list[int]]) -> dict[str, list[int]]:
        """Whole tiles of padding before a read-only tensor with a safe value, in each of its last two
        dims that a copy reads below 0; the copies of that tensor move past them."""
        safe = get_attr(kernel, "tile.safe_values", {})
        copies = [c for c in kernel.walk() if isinstance(c, tile.CopyOp) and c.offsets]
        leads: dict[str, list[int]] = {}
        for copy in copies:
            g = copy_geometry(copy, kernel)
            for d, bounds in enumerate(reach(g)):
                if bounds is None or bounds[0] >= 0:
                    continue
                rank = len(padded[g.gname])
                d_dev = d + rank - len(g.gshape)
                writes = any(not other.reading for other in (copy_geometry(c, kernel) for c in copies)
                             if other.gname == g.gname)
                if g.gname not in safe or d_dev < rank - 2 or writes:
                    hint = "" if g.gname in safe or d_dev < rank - 2 or writes else \
                        f" (a tensor the kernel only reads may be read there with T.annotate_safe_value({{{g.gname}: v}}))"
                    raise compile_error(copy, f"T.copy of {g.gname} starts at {bounds[0]} in dim {d}, below 0{hint}")
                lead = leads.setdefault(g.gname, [0] * rank)
                lead[d_dev] = max(lead[d_dev], _round(-bounds[0], TILE))
        for copy in copies:
            g = copy_geometry(copy, kernel)
            if g.gname not in leads:
                continue
            lead = leads[g.gname][len(padded[g.gname]) - len(g.gshape):]
            for d, shift in enumerate(lead):
                if shift:
                    c = constant_op(shift)
                    add = arith.AddiOp(copy.offsets[d], c.result)
                    copy.parent_block().insert_ops_before([c, add], copy)
                    copy.operands[2 + d] = add.result
        return leads
