"""infer_vector_layout: where the values of each 1-D local buffer lie in its tiles.

Reads: the ``tile`` ops that define and use 1-D local buffers (vectors): ``tile.reduce``,
``tile.copy``, ``tile.parallel`` loads and stores, ``tile.cumsum``, ``tile.fill``.

A vector of n values is ceil(n/32) tiles; value k lies in tile k // 32 either down the first
column (``col``: one value per row, as ``reduce_tile`` with REDUCE_ROW leaves a row
reduction) or along the first row (``row``: as a 1-D tensor, or a column reduction, holds
them). Broadcasting ``v[i]`` along the rows of a 2-D block needs ``col``, ``v[j]`` needs
``row``; a copy to or from a tensor needs ``row``. A vector's layout is set by what defines
it (a reduction, a copy in, a 1-D ``T.Parallel`` from the vectors it reads); one only
filled takes the layout its first use wants. Where a use wants the other layout, a
``tile.transpose`` into a new buffer (``<name>_row`` / ``<name>_col``, one
``transpose_wh_tile`` per tile) is inserted before it; where a definition makes the other
layout it writes a new buffer that is then transposed into the vector.

Writes: ``tt.vector_layouts`` = {buffer: "row" | "col"} and the conversions.
Errors: a 2-D ``T.Parallel`` that stores into a vector with one index.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from tilefold.ir.tile_types import format_of_memref, memref_type
from tilefold.ir import tile
from tilefold.ir.attributes import kernel_function, param_names, set_attr
from tilefold.passes.tilelang.common import buffer_name, insert_after, insert_before, is_global
from tilefold.passes.tilelang.parallel_space import access_pattern, parallel_space

OTHER = {"row": "col", "col": "row"}


def is_vector(value) -> bool:
    return len(value.type.get_shape()) == 1


class InferVectorLayout(ModulePass):
    """Layouts of vectors and the conversions between them (see the module docstring)."""

    name = "infer-vector-layout"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        VectorLayouts(kernel_function(op)).run()


class VectorLayouts:
    def __init__(self, kernel):
        self.kernel = kernel
        self.layout: dict[str, str] = {}
        self.names = set(param_names(kernel)) | {o.buffer_name.data for o in kernel.walk()
                                                 if isinstance(o, tile.AllocOp)}

    def name(self, value) -> str:
        return buffer_name(value, self.kernel)

    # -- what each op makes and wants -------------------------------------------------------------

    def made(self, op: Operation) -> dict:
        """{vector value: layout} an op defines."""
        if isinstance(op, tile.ReduceOp):
            return {op.dst: "col" if op.dim.value.data == 1 else "row"}
        if isinstance(op, tile.CopyOp) and op.offsets and not is_global(op.dst, self.kernel) and is_vector(op.dst):
            return {op.dst: "row"}
        if isinstance(op, tile.ParallelOp) and len(op.shape) == 1:
            layout = self.parallel_layout(op)
            return {o.buffer: layout for o in op.body.block.ops if isinstance(o, tile.StoreOp) and is_vector(o.buffer)}
        return {}

    def wanted(self, op: Operation) -> list[tuple]:
        """[(vector value, layout, the op whose operand it is)] an op reads in a given layout."""
        if isinstance(op, tile.CopyOp) and op.offsets and is_global(op.dst, self.kernel) and is_vector(op.src):
            return [(op.src, "row", op)]
        if isinstance(op, tile.ParallelOp):
            return self.parallel_wants(op)
        return []

    def parallel_layout(self, par: tile.ParallelOp) -> str:
        """The layout a 1-D body computes in: its stored vectors', else its loaded ones', else
        what its 2-D accesses say, else row."""
        for o in par.body.block.ops:
            if isinstance(o, tile.StoreOp) and is_vector(o.buffer) and self.name(o.buffer) in self.layout:
                return self.layout[self.name(o.buffer)]
        return parallel_space(par, self.layout, self.name).layout

    def parallel_wants(self, par: tile.ParallelOp) -> list[tuple]:
        out = []
        if len(par.shape) == 1:
            layout = self.parallel_layout(par)
            for o in par.body.block.ops:
                if isinstance(o, tile.LoadOp) and is_vector(o.buffer) and not is_global(o.buffer, self.kernel):
                    out.append((o.buffer, layout, o))
            return out
        space = parallel_space(par, self.layout, self.name)
        for o in par.body.block.ops:
            if isinstance(o, tile.LoadOp) and is_vector(o.buffer) and not is_global(o.buffer, self.kernel):
                pattern = access_pattern(o, par)
                if pattern and pattern[0][0] == "arg":
                    out.append((o.buffer, "col" if pattern[0][1] == space.row_arg else "row", o))
        return out

    # -- deciding and converting -------------------------------------------------------------------

    def run(self) -> None:
        ops = [o for o in self.kernel.walk() if isinstance(o, (tile.ReduceOp, tile.CopyOp, tile.ParallelOp))]
        for _ in range(len(ops) + 1):
            changed = False
            for op in ops:
                for value, layout in self.made(op).items():
                    if self.name(value) not in self.layout:
                        self.layout[self.name(value)] = layout
                        changed = True
            if not changed:
                break
        for op in ops:
            for value, layout, _ in self.wanted(op):
                self.layout.setdefault(self.name(value), layout)
        for op in self.kernel.walk():
            if isinstance(op, tile.AllocOp) and is_vector(op.result):
                self.layout.setdefault(op.buffer_name.data, "row")
        for op in ops:
            for value, layout in self.made(op).items():
                if self.layout[self.name(value)] != layout:
                    self.convert_definition(op, value, layout)
            for value, layout, user in self.wanted(op):
                if self.layout[self.name(value)] != layout:
                    self.convert_use(op, user, value, layout)
        set_attr(self.kernel, "tt.vector_layouts", self.layout)

    def new_vector(self, like, layout: str, anchor: Operation) -> tile.AllocOp:
        base = f"{self.name(like)}_{layout}"
        name, n = base, 1
        while name in self.names:
            name, n = f"{base}{n}", n + 1
        self.names.add(name)
        alloc = insert_before(anchor, tile.AllocOp(name, "fragment", memref_type(like.type.get_shape(),
                                                                                 format_of_memref(like.type),
                                                                                 "fragment")))
        alloc.result.name_hint = name
        self.layout[name] = layout
        return alloc

    def convert_use(self, op: Operation, user: Operation, value, layout: str) -> None:
        """Read a transposed copy of ``value`` (made before ``op``) in ``user``."""
        copy = self.new_vector(value, layout, op)
        insert_before(op, tile.TransposeOp(value, copy.result))
        for i, operand in enumerate(user.operands):
            if operand is value:
                user.operands[i] = copy.result

    def convert_definition(self, op: Operation, value, layout: str) -> None:
        """``op`` makes ``value`` in ``layout``: make a new buffer instead, then transpose it into ``value``."""
        made = self.new_vector(value, layout, op)
        if isinstance(op, tile.ReduceOp) and not op.clear.value.data:
            insert_before(op, tile.TransposeOp(value, made.result))   # the value it adds onto
        for inner in op.walk():
            for i, operand in enumerate(inner.operands):
                if operand is value and (inner is op and not isinstance(op, tile.ParallelOp)
                                         or isinstance(inner, tile.StoreOp)):
                    inner.operands[i] = made.result
        insert_after(op, tile.TransposeOp(made.result, value))


__all__ = ["InferVectorLayout", "VectorLayouts", "OTHER", "is_vector"]
