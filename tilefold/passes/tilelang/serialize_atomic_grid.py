"""serialize_atomic_grid: grid blocks that atomically update one block run in turn on one core.

Reads: the ``tile.atomic`` function attribute (tensors ``T.atomic_add`` / ``T.atomic_max`` /
``T.atomic_min`` update), the
``tile.kernel`` grid, and the copies in and out of those tensors (after
legalize_global_access, an atomic add is ``copy in → add → copy out``).

Tensix has no atomic add into DRAM. An atomic add whose block does not depend on some grid
index (split-K: ``T.atomic_add(C[by*bM + i, bx*bN + j], part)`` over a third grid index ``bz``)
is a sum over that index, so that index becomes a serial loop inside each block
(``for bz in range(Z)``) and the sum is kept in a fragment across it: the block of the tensor
is read once before the loop, added to in every iteration, and written once after it. An
atomic add whose block depends on every grid index adds into a block no other grid block
touches: it stays a read-add-write.

Writes: the grid without the summed indices, the serial loops around the old body, the
accumulator fragment ``<tensor>_acc`` and the copies moved out of the loops.
Errors: an atomic add whose block offsets are not linear in the block indices.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.builder import Builder
from xdsl.rewriter import InsertPoint, Rewriter

from tilefold.ir.tile_types import format_of_memref, memref_type
from tilefold.ir import tile
from tilefold.passes.tilelang.affine import affine_of, constant_op, materialize
from tilefold.ir.attributes import get_attr, kernel_function, param_names
from tilefold.passes.tilelang.common import inserter, buffer_name, compile_error, insert_after, is_global, kernel_op


class SerializeAtomicGrid(ModulePass):
    """Atomic adds over a grid index → a serial sum (see the module docstring)."""

    name = "serialize-atomic-grid"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = kernel_function(op)
        targets = get_attr(kernel, "tile.atomic", [])
        grid_op = kernel_op(kernel)
        if not targets or grid_op is None:
            return
        args = list(grid_op.body.block.args)
        copies = {name: [o for o in grid_op.walk() if isinstance(o, tile.CopyOp) and o.offsets and
                         buffer_name(o.src if is_global(o.src, kernel) else o.dst, kernel) == name]
                  for name in targets}
        used: set = set()
        for name, ops in copies.items():
            for copy in ops:
                for offset in copy.offsets:
                    for v in affine_of(offset).terms:
                        if v not in args:
                            raise compile_error(copy, f"atomic update of {name} at a block offset that is not a "
                                                      "sum of block indices times constants; tilefold serializes "
                                                      "atomic updates over the grid indices the block does not "
                                                      "depend on")
                        used.add(args.index(v))
        serial = [d for d in range(len(args)) if d not in used]
        if not serial:
            return
        loops = self.restructure(grid_op, serial)
        names = set(param_names(kernel)) | {o.buffer_name.data for o in kernel.walk() if isinstance(o, tile.AllocOp)}
        for name, ops in copies.items():
            self.accumulate(kernel, loops[0], [o for o in ops if o.parent is not None], names)

    def restructure(self, grid_op: tile.KernelOp, serial: list[int]) -> list[tile.ForOp]:
        """The kernel over the other indices, the summed ones serial loops (outermost first)."""
        grid = grid_op.grid_shape
        kept = [d for d in range(len(grid)) if d not in serial]
        new = tile.KernelOp([grid[d] for d in kept] or [1])
        new.location = grid_op.location
        Builder(InsertPoint.before(grid_op)).insert(new)
        old_args = list(grid_op.body.block.args)
        for d, arg in zip(kept, new.body.block.args):
            arg.name_hint = old_args[d].name_hint
        block = new.body.block
        loops = []
        values = {d: arg for d, arg in zip(kept, new.body.block.args)}
        for d in serial:
            at = inserter(block=block, loc_from=grid_op)
            lb = at(constant_op(0)).result
            ub = at(constant_op(grid[d])).result
            loop = at(tile.ForOp(lb, ub, "serial"))
            loop.iv.name_hint = old_args[d].name_hint
            values[d] = loop.iv
            loops.append(loop)
            block = loop.body.block
        Rewriter.inline_block(grid_op.body.block, InsertPoint.at_end(block), [values[d] for d in range(len(grid))])
        Rewriter.erase_op(grid_op)
        return loops

    def accumulate(self, kernel, outer: tile.ForOp, copies: list[tile.CopyOp], names: set[str]) -> None:
        """Read the tensor's block before ``outer``, add into a fragment inside, write it after."""
        ins = [c for c in copies if is_global(c.src, kernel)]
        outs = [c for c in copies if not is_global(c.src, kernel)]
        if len(ins) != 1 or len(outs) != 1:
            return
        copy_in, copy_out = ins[0], outs[0]
        old, new = copy_in.dst, copy_out.src
        name = f"{buffer_name(copy_out.dst, kernel)}_acc"
        base, n = name, 1
        while name in names:
            name, n = f"{base}{n}", n + 1
        names.add(name)
        acc = tile.AllocOp(name, "fragment", memref_type(new.type.get_shape(), format_of_memref(copy_out.dst.type),
                                                         "fragment"))
        acc.result.name_hint = name
        Builder(InsertPoint.before(outer)).insert(acc)
        acc.location = copy_in.location
        before = inserter(outer, loc_from=copy_in)
        offsets = [materialize(affine_of(v), before) for v in copy_in.offsets]
        dims = list(copy_in.dims.get_values()) if copy_in.dims is not None else None
        before(tile.CopyOp(copy_in.src, old, offsets, dims))
        before(tile.CopyOp(old, acc.result))
        after: list = []
        offsets = [materialize(affine_of(v), lambda o: after.append(o) or o) for v in copy_out.offsets]
        dims = list(copy_out.dims.get_values()) if copy_out.dims is not None else None
        after.append(tile.CopyOp(acc.result, copy_out.dst, offsets, dims))
        anchor = outer
        for o in after:
            anchor = insert_after(anchor, o)
            o.location = copy_out.location
        Rewriter.erase_op(copy_in)
        Rewriter.erase_op(copy_out)
        for o in outer.walk():
            for i, operand in enumerate(o.operands):
                if operand is old or operand is new:
                    o.operands[i] = acc.result


__all__ = ["SerializeAtomicGrid"]
