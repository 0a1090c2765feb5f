"""``ttl-lower-to-loops``: materialize each ``ttl.compute`` and its ``ttl.store`` as loop nests.

Reads: computes with DST slots assigned and the DST protocol around them. Writes:

* a **compute loop nest** (``scf.for`` over ``index``, one loop per iteration dimension larger
  than 1, the outermost marked ``ttl.dst_footprint``) whose body reads input tiles with
  ``tensor.extract %block[...]`` at the indexing maps, evaluates each ``ttl.linearized_index`` as
  ``affine.apply`` of the loop indices (and sub-block offsets), and holds the body's tile ops;
* for a reduction: ``ttl.tile_reduce`` runs in an inner nest over the reduced dims, a matmul
  becomes one ``ttl.matmul_block`` per K step over the whole ``rt × ct`` sub-block
  (``scf.for`` over K; a batched matmul has one per batch index of the sub-block, unrolled),
  after a nest copying the tiles it adds onto (``ttl.matmul_addend``) into its output slots;
  ops on the result follow in a loop over the output tiles, reading it
  with ``ttl.dst_tile``;
* a **pack loop nest** over the output tiles for the store: ``ttl.pack_tile %dst_slot, %cb_tile,
  %block`` with the tile's index in the DST sub-block and in the CB block (into a ``ttl.row_prefix``
  view, the pack of the view's rows into the block's first page, marked ``ttl.row_prefix``).

The two nests sit on either side of ``tile_regs_commit`` / ``tile_regs_wait``, as the TT-Lang multi-tile lowering
shows. Errors: none.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import affine, arith, scf
from xdsl.dialects import tensor as tensor_dialect
from xdsl.dialects.builtin import AffineMapAttr, IndexType, IntegerAttr, ModuleOp, UnitAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from tilefold.ir import ttl
from tilefold.passes.ttl.assign_dst import iteration_shape, map_dims
from tilefold.passes.ttl.common import bind_of, i32_attr, kernels, linear_map

SEQUENTIAL_ATTR = "ttl.sequential"    # the pack loop fills its whole block in tile order
OUT_CB_ATTR = "ttl.out_cb"            # on a reduction or broadcast: the circular buffer its result is packed to


class Cursor:
    """Where new ops go: before ``anchor`` in its block."""

    def __init__(self, anchor: Operation):
        self.anchor = anchor

    @property
    def block(self) -> Block:
        return self.anchor.parent_block()

    def add(self, op: Operation, location) -> Operation:
        """Insert ``op`` before the anchor (xDSL's Builder), at ``location``."""
        op.location = location
        return Builder(InsertPoint.before(self.anchor)).insert(op)

    def index(self, value: int, location) -> SSAValue:
        return self.add(arith.ConstantOp(IntegerAttr(value, IndexType())), location).result


def loop_nest(cursor: Cursor, sizes: list[int], location, names: list[str], marker: int | None = None):
    """Loops over every dim of ``sizes`` larger than 1; returns the cursor inside the innermost loop,
    the index per dim (a constant 0 for dims of size 1) and the outermost loop (or None)."""
    ivs: list[SSAValue | None] = [None] * len(sizes)
    outer = None
    current = cursor
    looped = [d for d, size in enumerate(sizes) if size > 1]
    if looped:
        zero, one = cursor.index(0, location), cursor.index(1, location)
        bounds = {}
        for d in looped:
            bounds.setdefault(sizes[d], None)
        for size in bounds:
            bounds[size] = cursor.index(size, location)
    for d in looped:
        body = Block(arg_types=[IndexType()])
        body.args[0].name_hint = names[d] if d < len(names) else f"i{d}"
        loop = current.add(scf.ForOp(zero, bounds[sizes[d]], one, [], body), location)
        body.add_op(scf.YieldOp())
        if outer is None:
            outer = loop
            if marker is not None:
                loop.attributes[ttl.DST_FOOTPRINT_ATTR] = i32_attr(marker)
        ivs[d] = body.args[0]
        current = Cursor(body.last_op)
    for d in range(len(sizes)):
        if ivs[d] is None:
            ivs[d] = current.index(0, location)
    return current, ivs, outer


class ComputeLowering:
    def __init__(self, compute: ttl.ComputeOp):
        self.compute = compute
        self.store = next(u.operation for u in compute.result[0].uses if isinstance(u.operation, ttl.StoreOp))
        self.sizes = iteration_shape(compute)
        self.types = compute.iterator_types
        self.maps = compute.indexing_maps
        self.footprint = compute.footprint or 0
        self.body = compute.body.block
        self.n_inputs = len(compute.inputs)
        self.location = compute.location
        self.reduction = next((op for op in self.body.ops if isinstance(op, ttl.TileOp)
                               and op.info.kind in ttl.REDUCTION_KINDS), None)

    # -- the compute nest -------------------------------------------------------------------------

    def run(self) -> None:
        out_cb = i32_attr(bind_of(self.compute.outputs[0]).index)
        for op in self.body.ops:
            if op is self.reduction or (isinstance(op, ttl.TileOp) and op.info.kind == "bcast"):
                op.attributes[OUT_CB_ATTR] = out_cb
        if self.reduction is not None and self.reduction.info.kind == "matmul":
            self.lower_matmul()
        else:
            self.lower_elementwise()
        self.lower_pack()
        self.compute.detach()
        self.compute.erase()

    def _clone_body(self, cursor: Cursor, ivs, ops, mapping: dict, extracts: dict) -> None:
        for op in ops:
            if isinstance(op, ttl.YieldOp):
                continue
            if isinstance(op, ttl.LinearizedIndexOp):
                operands = [*ivs, *[mapping.get(s, s) for s in op.symbols]]
                new = affine.ApplyOp(operands, AffineMapAttr(op.map.data))
                new.attributes.update(op.attributes)
                cursor.add(new, op.location)
                new.result.name_hint = op.result.name_hint
                mapping[op.result] = new.result
                continue
            for o in op.operands:
                if o in mapping or not isinstance(o.owner, Block) or o.owner is not self.body:
                    continue
                mapping[o] = self._extract(cursor, ivs, o, extracts)
            new = op.clone(value_mapper=mapping)
            cursor.add(new, op.location)
            for old, res in zip(op.results, new.results):
                mapping[old] = res

    def _extract(self, cursor: Cursor, ivs, arg: SSAValue, extracts: dict) -> SSAValue:
        key = (arg, cursor.block)
        if key in extracts:
            return extracts[key]
        i = arg.index
        tensor = self.compute.inputs[i] if i < self.n_inputs else self.compute.outputs[0]
        dims = map_dims(self.maps[i])
        zero = None
        indices = []
        for d in dims:
            if d is None:
                zero = zero or cursor.index(0, self.location)
                indices.append(zero)
            else:
                indices.append(ivs[d])
        op = cursor.add(tensor_dialect.ExtractOp(tensor, indices, tensor.type.element_type), self.location)
        op.result.name_hint = "extracted"
        extracts[key] = op.result
        return op.result

    def lower_elementwise(self) -> None:
        cursor = Cursor(self.compute)
        parallel = [self.sizes[d] if t == "parallel" else 1 for d, t in enumerate(self.types)]
        inner, ivs, _ = loop_nest(cursor, parallel, self.location, [f"i{d}" for d in range(len(self.sizes))],
                                  self.footprint)
        mapping: dict = {}
        extracts: dict = {}
        if self.reduction is None:
            self._clone_body(inner, ivs, list(self.body.ops), mapping, extracts)
            return
        # reduce: the reduction in an inner nest over the reduced dims, the rest per output tile
        reduced = [self.sizes[d] if t == "reduction" else 1 for d, t in enumerate(self.types)]
        feeds = self._feeding(self.reduction)
        before = [op for op in self.body.ops if op is not self.reduction and op not in feeds
                  and ttl.DST_OUTPUT_INDEX_ATTR in op.attributes]
        self._clone_body(inner, ivs, before, mapping, extracts)
        red_cursor, red_ivs, _ = loop_nest(inner, reduced, self.location, [f"r{d}" for d in range(len(self.sizes))])
        all_ivs = [red_ivs[d] if t == "reduction" else ivs[d] for d, t in enumerate(self.types)]
        self._clone_body(red_cursor, all_ivs, [op for op in self.body.ops if op in feeds or op is self.reduction],
                         mapping, extracts)
        placeholder = inner.add(ttl.DstTileOp(self.footprint, self.reduction.result.type), self.location)
        placeholder.attributes[ttl.DST_OUTPUT_ATTR] = UnitAttr()
        mapping[self.reduction.result] = placeholder.result
        rest = [op for op in self.body.ops if op is not self.reduction and op not in feeds and op not in before]
        self._clone_body(inner, ivs, rest, mapping, extracts)

    def _feeding(self, op: Operation) -> set:
        """The body ops that only compute operands of ``op`` (its tile index)."""
        out = set()
        work = [o.owner for o in op.operands if isinstance(o.owner, Operation)]
        while work:
            w = work.pop()
            if w in out or w.parent_block() is not self.body:
                continue
            out.add(w)
            work += [o.owner for o in w.operands if isinstance(o.owner, Operation)]
        return out

    def lower_matmul(self) -> None:
        """One ``ttl.matmul_block`` per K step and batch index (batches unrolled: a sub-block holds
        at most a DST's worth of them), each filling its ``rt × ct`` tiles of the DST sub-block."""
        mm = self.reduction
        cursor = Cursor(self.compute)
        rank = len(self.sizes)
        nb = rank - 3
        k_dim = self.types.index("reduction")
        a_arg, b_arg = mm.operands
        a, b = self.compute.inputs[a_arg.index], self.compute.inputs[b_arg.index]
        batch, (rt, ct) = self.sizes[:nb], self.sizes[nb:nb + 2]
        a_parent = a.owner.block.type.get_shape() if isinstance(a.owner, ttl.BlockSliceOp) else a.type.get_shape()
        b_parent = b.owner.block.type.get_shape() if isinstance(b.owner, ttl.BlockSliceOp) else b.type.get_shape()
        names = [f"b{d}" for d in range(nb)] + ["i", "j", "k"]
        addend_ops, addend_only = self._addend_ops()
        if addend_ops:                  # the tiles it adds onto, copied into its output slots first
            pre, pre_ivs, _ = loop_nest(cursor, [*batch, rt, ct, 1], self.location, names, self.footprint)
            self._clone_body(pre, pre_ivs, [op for op in self.body.ops if op in addend_ops], {}, {})
        k_cursor, k_ivs, _ = loop_nest(cursor, [1 if d != k_dim else self.sizes[d] for d in range(rank)],
                                       self.location, names, self.footprint)
        k_iv = k_ivs[k_dim]
        zero = k_cursor.index(0, self.location)
        a_dims = [*range(nb), nb, nb + 2]
        b_dims = [*range(nb), nb + 2, nb + 1]
        for flat in range(math.prod(batch)):
            position = list(np.unravel_index(flat, batch)) if nb else []
            ivs = [k_cursor.index(int(p), self.location) if p else zero for p in position] + [zero, zero, k_iv]
            indices = []
            for value, dims, parent in ((a, a_dims, a_parent), (b, b_dims, b_parent)):
                if isinstance(value.owner, ttl.BlockSliceOp):
                    amap = linear_map(parent, rank, dims, len(dims), list(range(len(dims))))
                    symbols = list(value.owner.offsets)
                else:
                    amap = linear_map(parent, rank, dims)
                    symbols = []
                op = k_cursor.add(affine.ApplyOp([*ivs, *symbols], AffineMapAttr(amap)), self.location)
                indices.append(op.result)
            indices[0].name_hint, indices[1].name_hint = "a_tile", "b_tile"
            k_cursor.add(ttl.MatmulBlockOp(a, b, indices[0], indices[1], rt, ct, a_parent[-1],
                                           self.footprint + flat * rt * ct), mm.location)
        rest = [op for op in self.body.ops if op is not mm and not isinstance(op, ttl.YieldOp)
                and op not in addend_only]
        yielded = self.body.last_op.operands[0]
        if yielded is mm.result and not [op for op in rest if ttl.DST_OUTPUT_INDEX_ATTR not in op.attributes]:
            return
        inner, ivs, _ = loop_nest(cursor, [*batch, rt, ct, 1], self.location,
                                  [f"b{d}" for d in range(nb)] + ["i", "j", "k"], self.footprint)
        mapping: dict = {}
        first = [op for op in rest if ttl.DST_OUTPUT_INDEX_ATTR in op.attributes]
        self._clone_body(inner, ivs, first, mapping, {})
        placeholder = inner.add(ttl.DstTileOp(self.footprint, mm.result.type), self.location)
        placeholder.attributes[ttl.DST_OUTPUT_ATTR] = UnitAttr()
        mapping[mm.result] = placeholder.result
        self._clone_body(inner, ivs, [op for op in rest if op not in first], mapping, {})

    def _addend_ops(self) -> tuple[set, set]:
        """The copy of the tiles a matmul adds onto (``ttl.matmul_addend``) with the ops computing
        its operands, and those of them nothing else reads; empty when the matmul starts from zero."""
        copy = next((op for op in self.body.ops if ttl.MATMUL_ADDEND_ATTR in op.attributes), None)
        if copy is None:
            return set(), set()
        ops = {copy} | self._feeding(copy)
        only = {op for op in ops if ttl.DST_OUTPUT_INDEX_ATTR not in op.attributes
                and all(use.operation in ops for r in op.results for use in r.uses)}
        return ops, only

    # -- the pack nest ----------------------------------------------------------------------------

    def lower_pack(self) -> None:
        store = self.store
        target = store.block
        shape = list(target.type.get_shape())
        cursor = Cursor(store)
        inner, ivs, _ = loop_nest(cursor, shape, store.location, [f"p{d}" for d in range(len(shape))], self.footprint)
        local = inner.add(affine.ApplyOp(ivs, AffineMapAttr(linear_map(shape))), store.location)
        local.result.name_hint = "dst_slot"
        if isinstance(target.owner, ttl.RowPrefixOp):      # the block's bytes as the prefix of one tile
            parent, index = target.owner.block, local
        elif isinstance(target.owner, ttl.BlockSliceOp):
            parent = target.owner.block
            amap = linear_map(parent.type.get_shape(), len(shape), None, len(shape), list(range(len(shape))))
            index = inner.add(affine.ApplyOp([*ivs, *target.owner.offsets], AffineMapAttr(amap)), store.location)
        else:
            parent = target
            index = local
        index.result.name_hint = "cb_tile"
        pack = inner.add(ttl.PackTileOp(local.result, index.result, parent, self.footprint), store.location)
        if ttl.ROW_PREFIX_ATTR in store.attributes:
            pack.attributes[ttl.ROW_PREFIX_ATTR] = store.attributes[ttl.ROW_PREFIX_ATTR]
        elif parent is target:
            pack.attributes[SEQUENTIAL_ATTR] = UnitAttr()
        store.detach()
        store.erase()


class TTLLowerToLoops(ModulePass):
    """Lower computes and their stores to compute and pack loop nests (see the module docstring)."""

    name = "ttl-lower-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op, "compute"):
            for compute in [c for c in kernel.walk() if isinstance(c, ttl.ComputeOp)]:
                ComputeLowering(compute).run()
            for dead in list(kernel.walk(reverse=True)):
                if isinstance(dead, (ttl.AttachCBOp, tensor_dialect.EmptyOp, ttl.BlockSliceOp, ttl.ReshapeOp,
                                     ttl.RowPrefixOp)) \
                        and not any(r.uses for r in dead.results):
                    dead.detach()
                    dead.erase()
