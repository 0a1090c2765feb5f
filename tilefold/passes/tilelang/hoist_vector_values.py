"""hoist_vector_values: values a 2-D ``T.Parallel`` computes per row (or per column) computed once.

Reads: 2-D ``tile.parallel`` bodies. A subexpression whose leaves are constants and vectors indexed
by one of the body's two indices — ``total[i] * (1.0 / N)``, ``T.rsqrt(ss[i] * (1.0 / N) + eps)`` —
has one value per row (per column). Inside the body it is computed a whole tile at a time for every
tile of the block: each vector broadcast into a tile and every SFPU op run again per tile, though
a row of tiles shares the values.

Only one vector through unary and scalar ops is hoisted: two vectors combined would make an FPU
op of the loop over the vector, which reads float32 as TF32, where the body's SFPU op is exact.

Writes: for each maximal such subexpression (not a bare vector load) of a body whose other index
spans more than one tile, a fragment vector ``<first vector>_v`` (float32 when any of its vectors
is, else their format), a 1-D ``tile.parallel`` just before the body that computes the
subexpression into it, and a load of it in the body where the subexpression was; the ops left
unused are erased. The body then only broadcasts the vector, and the 1-D loop runs once over the
vector's tiles. A vector the body itself stores into is not hoisted.
Errors: none.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import Float32Type, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from tilefold.ir import tile
from tilefold.layout.formats import DataFormat
from tilefold.ir.attributes import kernel_function, param_names
from tilefold.ir.tile_types import format_of_memref, memref_type
from tilefold.passes.tilelang.common import insert_after, insert_before
from tilefold.passes.tilelang.parallel_space import access_pattern

TILE = 32


class HoistVectorValues(ModulePass):
    """Per-row / per-column values of 2-D parallel bodies computed once (see the module docstring)."""

    name = "hoist-vector-values"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = kernel_function(op)
        names = set(param_names(kernel)) | {o.buffer_name.data for o in kernel.walk() if isinstance(o, tile.AllocOp)}
        for par in [o for o in kernel.walk() if isinstance(o, tile.ParallelOp) and len(o.shape) == 2]:
            Body(par, names).run()


def _computes(op: Operation) -> bool:
    """An op of a body that computes a value from its operands alone."""
    return isinstance(op, tile.MathOp) or (op.dialect_name() == "arith" and not op.regions)


class Body:
    """The hoisting of one 2-D parallel body."""

    def __init__(self, par: tile.ParallelOp, names: set[str]):
        self.par = par
        self.names = names
        self.args = list(par.body.block.args)
        self.stored = {o.buffer for o in par.body.block.ops if isinstance(o, tile.StoreOp)}
        # value -> the one parallel index it depends on (None: none), for values a 1-D loop can compute
        self.index: dict[SSAValue, int | None] = {}
        self.leaves: dict[SSAValue, list[SSAValue]] = {}     # value -> the vectors it reads

    def classify(self) -> None:
        for op in self.par.body.block.ops:
            if isinstance(op, tile.LoadOp):
                pattern = access_pattern(op, self.par)
                if len(op.indices) == 1 and pattern and pattern[0][0] == "arg" and op.buffer not in self.stored \
                        and isinstance(op.buffer.owner, tile.AllocOp):
                    self.index[op.result] = pattern[0][1]
                    self.leaves[op.result] = [op.buffer]
            elif isinstance(op, arith.ConstantOp):
                self.index[op.result] = None
                self.leaves[op.result] = []
            elif _computes(op) and len(op.results) == 1 and all(v in self.index for v in op.operands):
                found = {self.index[v] for v in op.operands} - {None}
                if len(found) <= 1 and sum(bool(self.leaves[v]) for v in op.operands) <= 1:
                    self.index[op.results[0]] = next(iter(found), None)
                    self.leaves[op.results[0]] = list(dict.fromkeys(b for v in op.operands for b in self.leaves[v]))

    def candidates(self) -> list[SSAValue]:
        """Maximal hoistable values: computed (not loaded), of one index whose other index spans more
        than a tile, and used by an op that is not such a value of the same index."""
        out = []
        for op in self.par.body.block.ops:
            if not _computes(op) or isinstance(op, arith.ConstantOp) or len(op.results) != 1:
                continue
            v = op.results[0]
            k = self.index.get(v)
            if k is None or not isinstance(v.type, Float32Type) or self.par.shape[1 - k] <= TILE:
                continue
            if any(len(u.operation.results) != 1 or self.index.get(u.operation.results[0], -1) != k for u in v.uses):
                out.append(v)
        return out

    def run(self) -> None:
        self.classify()
        for value in self.candidates():
            self.hoist(value)
        for op in reversed(list(self.par.body.block.ops)):
            if (isinstance(op, (tile.LoadOp, arith.ConstantOp)) or _computes(op)) and op.results \
                    and not any(r.uses for r in op.results):
                op.detach()
                op.erase()

    def hoist(self, value: SSAValue) -> None:
        k = self.index[value]
        leaves = self.leaves[value]
        formats = [format_of_memref(b.type) for b in leaves]
        fmt = DataFormat.Float32 if DataFormat.Float32 in formats else formats[0]
        base = leaves[0].owner.buffer_name.data
        name, n = f"{base}_v", 1
        while name in self.names:
            name, n = f"{base}_v{n}", n + 1
        self.names.add(name)
        alloc = tile.AllocOp(name, "fragment", memref_type((self.par.shape[k],), fmt, "fragment"))
        alloc.result.name_hint = name
        insert_after(leaves[0].owner, alloc)
        vector = tile.ParallelOp((self.par.shape[k],))
        insert_before(self.par, vector)
        arg = vector.body.block.args[0]
        arg.name_hint = self.args[k].name_hint
        mapping: dict[SSAValue, SSAValue] = {}
        needed = self._tree(value)
        for op in self.par.body.block.ops:
            if op.results and op.results[0] in needed:
                if isinstance(op, tile.LoadOp):
                    copy = tile.LoadOp(op.buffer, [arg])
                else:
                    copy = op.clone(value_mapper=mapping)
                copy.location = op.location
                vector.body.block.add_op(copy)
                mapping[op.results[0]] = copy.results[0]
        store = tile.StoreOp(mapping[value], alloc.result, [arg])
        store.location = value.owner.location
        vector.body.block.add_op(store)
        load = tile.LoadOp(alloc.result, [self.args[k]])
        insert_before(value.owner, load)
        value.replace_all_uses_with(load.result)

    def _tree(self, value: SSAValue) -> set[SSAValue]:
        seen: set[SSAValue] = set()
        stack = [value]
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            if not isinstance(v.owner, tile.LoadOp):
                stack.extend(v.owner.operands)
        return seen


__all__ = ["HoistVectorValues"]
