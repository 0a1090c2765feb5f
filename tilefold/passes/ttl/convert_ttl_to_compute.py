"""``convert-ttl-to-compute``: fuse the block expression of each ``ttl.store`` into one ``ttl.compute``.

Reads: compute kernels with ``ttl.store %expr, %block`` where ``%expr`` is a tree of block-level
ops (``ttl.add``, ``ttl.exp``, ``ttl.bcast``, ``ttl.matmul``, ``ttl.reduce_sum`` ...) over blocks.
Writes: for each store, ``%r = ttl.compute ins(<blocks>) outs(ttl.attach_cb(tensor.empty, %cb))
{indexing_maps, iterator_types}`` whose body computes one output tile with ``ttl.tile_<op>``
ops and ``ttl.yield``, and ``ttl.store %r, %block``; the block-level ops become dead and are
removed.

* Element-wise chains fuse into one body over the output's tiles (all ``parallel``).
* ``ttl.bcast`` is pushed to the blocks it reads: a block read under a broadcast gets an indexing
  map with 0 in the broadcast dims and, when the broadcast crosses a tile's rows or columns, a
  ``ttl.tile_bcast {bcast_kind = rows | cols | scalar}`` (the tile's first row, first column
  or first value broadcast into DST as it is unpacked).
* One reduction per compute: ``ttl.matmul`` (iterators ``(batch..., M, N, K)``, ``K`` a ``reduction``) or
  ``ttl.reduce_*`` (the reduced dims are ``reduction``; ``ttl.tile_reduce %x, %scaler`` reads its
  scaler tile as a second input, the first tile of the program's scaler block, or else a tile of
  ones filled at the kernel's start into an internal one-tile buffer); element-wise ops on its
  result fuse after it.
* A value the hardware must read from a circular buffer — the operand of a matmul, reduction or
  transpose that is not a block, a reduction under a broadcast or inside another reduction's
  expression — is materialized first into an internal buffer: ``ttl.cb_reserve``, a ``ttl.store``
  of its own (converted the same way), ``ttl.cb_push``, ``ttl.cb_wait``, and ``ttl.cb_pop`` after
  the store that needed it.

* ``ttl.reshape`` (``ttl.block.squeeze`` / ``unsqueeze``) of a block is a view of the block's
  buffer: the compute reads it as an input of the reshaped shape (the tiles keep their order).
  A reshape of an expression materializes the expression first.

Errors: :class:`CompileError` when a kernel would need more circular buffers than the device has
(``Arch.max_circular_buffers``, 32).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects import tensor as tensor_dialect
from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from tilefold.ir import ttl
from tilefold.passes.device_pass import DevicePass
from tilefold.passes.ttl.common import (bind_of, free_scratch_cb, i32_attr, insert_after, insert_before, kernels,
                                        new_scratch_cb)

SCALER_CB_ATTR = "ttl.scaler_cb"


class NeedsMaterialization(Exception):
    """The value must be in a circular buffer before the current store can be computed."""

    def __init__(self, value: SSAValue):
        super().__init__()
        self.value = value


@dataclass
class Plan:
    reduction: object | None
    iter_shape: tuple[int, ...]
    iter_types: list[str]
    out_dims: list[int | None]          # per output dim: the iteration dim it is, or None (a reduced dim)


@dataclass
class Body:
    block: Block
    inputs: list = field(default_factory=list)       # (tensor value, AffineMap)
    keys: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)       # (block value, broadcast dims) -> its tile in the body


def _is_block_op(value: SSAValue) -> bool:
    return isinstance(value.owner, ttl.BlockOp)


def _is_expression(value: SSAValue) -> bool:
    return isinstance(value.owner, (ttl.BlockOp, ttl.ReshapeOp))


def _under_view(value: SSAValue) -> SSAValue | None:
    """The block expression a chain of reshapes and slices reads, if it does not read a block."""
    while isinstance(value.owner, (ttl.ReshapeOp, ttl.BlockSliceOp)):
        value = value.owner.operands[0]
    return value if isinstance(value.owner, ttl.BlockOp) else None


def _shape(value: SSAValue) -> tuple[int, ...]:
    return tuple(value.type.get_shape())


def _bcast_kind(ctx: frozenset[int], rank: int) -> str:
    rows, cols = rank - 2 in ctx, rank - 1 in ctx
    if rows and cols:
        return "scalar"
    if rows:
        return "rows"
    if cols:
        return "cols"
    return "none"


class StoreConverter:
    """Converts the stores of one compute kernel."""

    def __init__(self, module: ModuleOp, kernel: func.FuncOp, max_cbs: int):
        self.module = module
        self.kernel = kernel
        self.max_cbs = max_cbs
        self.ones = None

    # -- the kernel ---------------------------------------------------------------------------

    def run(self) -> None:
        queue = deque(op for op in self.kernel.walk() if isinstance(op, ttl.StoreOp))
        while queue:
            store = queue.popleft()
            queue.extendleft(reversed(self.convert(store)))
        self._remove_dead_block_ops()

    def _remove_dead_block_ops(self) -> None:
        changed = True
        while changed:
            changed = False
            for op in list(self.kernel.walk(reverse=True)):
                if isinstance(op, (ttl.BlockOp, ttl.ReshapeOp)) and not op.result.uses:
                    op.detach()
                    op.erase()
                    changed = True

    # -- one store ------------------------------------------------------------------------------

    def convert(self, store: ttl.StoreOp) -> list[ttl.StoreOp]:
        """Build the compute of ``store``; returns the stores of values it had to materialize."""
        if isinstance(store.value.owner, ttl.ComputeOp):
            return []
        value = self._private_copy(store.value, store, {})
        if value is not store.value:
            store.operands[0] = value
        created: list[ttl.StoreOp] = []
        while True:
            try:
                plan = self.plan(store.value)
                body = self.translate_all(store, plan)
            except NeedsMaterialization as need:
                created.append(self.materialize(need.value, store))
                continue
            self.emit_compute(store, plan, body)
            return created

    def _private_copy(self, value: SSAValue, store, mapping: dict) -> SSAValue:
        """Clone the block ops of the store's tree right before it, so the store owns them."""
        op = value.owner
        if not _is_expression(value):
            return value
        if op in mapping:
            return mapping[op].result
        operands = [self._private_copy(o, store, mapping) for o in op.operands]
        clone = op.clone(value_mapper=dict(zip(op.operands, operands)))
        insert_before(clone, store)
        clone.location = op.location
        mapping[op] = clone
        return clone.result

    # -- planning -------------------------------------------------------------------------------

    def plan(self, root: SSAValue) -> Plan:
        reductions: list[tuple] = []

        def visit(v: SSAValue, ctx: frozenset[int]) -> None:
            op = v.owner
            if not isinstance(op, ttl.BlockOp):
                return
            kind = op.info.kind
            if kind in ttl.REDUCTION_KINDS:
                reductions.append((op, ctx))
                return
            if kind == "bcast":
                visit(op.operands[0], ctx | frozenset(op.dim_list))
                return
            if kind == "transpose":
                return
            for o in op.operands:
                visit(o, ctx)

        visit(root, frozenset())
        chosen = None
        for op, ctx in reductions:
            if ctx or chosen is not None:
                raise NeedsMaterialization(op.result)
            chosen = op
        out_shape = _shape(root)
        if chosen is None:
            return Plan(None, out_shape, ["parallel"] * len(out_shape), list(range(len(out_shape))))
        for o in chosen.operands:
            if _is_block_op(o):
                raise NeedsMaterialization(o)
        if chosen.info.kind == "matmul":      # iterators (batch..., M, N, K)
            *batch, m, k = _shape(chosen.operands[0])
            n = _shape(chosen.operands[1])[-1]
            nb = len(batch)
            return Plan(chosen, (*batch, m, n, k), ["parallel"] * (nb + 2) + ["reduction"], list(range(nb + 2)))
        dims = set(chosen.dim_list)
        in_shape = _shape(chosen.operands[0])
        return Plan(chosen, in_shape, ["reduction" if i in dims else "parallel" for i in range(len(in_shape))],
                    [None if i in dims else i for i in range(len(in_shape))])

    # -- the body -------------------------------------------------------------------------------

    def translate_all(self, store: ttl.StoreOp, plan: Plan) -> Body:
        body = Body(Block())
        result = self.translate(store.value, frozenset(), plan, body)
        out_type = store.block.type.element_type
        body.block.insert_arg(out_type, len(body.block.args))
        yield_op = ttl.YieldOp(result)
        yield_op.location = store.location
        body.block.add_op(yield_op)
        return body

    def _input(self, body: Body, tensor: SSAValue, dims: list[int | None], plan: Plan) -> SSAValue:
        inner = _under_view(tensor)
        if inner is not None:
            raise NeedsMaterialization(inner)
        amap = AffineMap(len(plan.iter_shape), 0,
                         tuple(AffineExpr.dimension(d) if d is not None else AffineExpr.constant(0) for d in dims))
        key = (tensor, str(amap))
        if key not in body.keys:
            body.keys[key] = body.block.insert_arg(tensor.type.element_type, len(body.block.args))
            body.inputs.append((tensor, amap))
        return body.keys[key]

    def _emit(self, body: Body, op, location):
        op.location = location
        body.block.add_op(op)
        return op.result

    def translate(self, v: SSAValue, ctx: frozenset[int], plan: Plan, body: Body) -> SSAValue:
        """The tile of ``v`` in the body; a value the expression reads several times (``f = exp(a)`` then
        ``f + f * f``) is computed once and its tile reused."""
        key = (v, ctx)
        if key not in body.values:
            body.values[key] = self._translate(v, ctx, plan, body)
        return body.values[key]

    def _translate(self, v: SSAValue, ctx: frozenset[int], plan: Plan, body: Body) -> SSAValue:
        op = v.owner
        if not isinstance(op, ttl.BlockOp):
            return self.leaf(v, ctx, plan, body)
        info = op.info
        tile = v.type.element_type
        if info.kind in ("sfpu_unary", "sfpu_binary", "sfpu_ternary"):
            args = [self.translate(o, ctx, plan, body) for o in op.operands]
            params = {p: op.param(p) for p in info.params}
            return self._emit(body, ttl.make_tile_op(info.name, args, tile, params), op.location)
        if info.kind == "fill":
            name = "fill" if ttl.data_format_of(tile).is_float else "fill_int"     # integers: their bits
            return self._emit(body, ttl.make_tile_op(name, [], tile, {"value": op.param("value")}), op.location)
        if info.kind == "bcast":
            return self.translate(op.operands[0], ctx | frozenset(op.dim_list), plan, body)
        if info.kind == "transpose":
            x = op.operands[0]
            if ctx:
                raise NeedsMaterialization(v)
            if _is_block_op(x):
                raise NeedsMaterialization(x)
            dims = [*plan.out_dims[:-2], plan.out_dims[-1], plan.out_dims[-2]]     # each batch index's matrix
            arg = self._input(body, x, dims, plan)
            return self._emit(body, ttl.make_tile_op("transpose", [arg], tile), op.location)
        if op is not plan.reduction:
            raise NeedsMaterialization(v)
        if info.kind == "matmul":
            nb = len(plan.iter_shape) - 3
            batch = list(range(nb))
            a = self._input(body, op.operands[0], [*batch, nb, nb + 2], plan)
            b = self._input(body, op.operands[1], [*batch, nb + 2, nb + 1], plan)
            return self._emit(body, ttl.make_tile_op("matmul", [a, b], tile), op.location)
        rank = len(plan.iter_shape)
        x = self._input(body, op.operands[0], list(range(rank)), plan)
        # the scaler: the first tile of the user's block, else a tile of ones
        scaler = op.operands[1] if len(op.operands) > 1 else self._ones_tile(op.operands[0].type.element_type)
        s = self._input(body, scaler, [None] * len(_shape(scaler)), plan)
        dims = set(op.dim_list)
        rows, cols = rank - 2 in dims, rank - 1 in dims
        reduce_dim = "REDUCE_SCALAR" if rows and cols else ("REDUCE_ROW" if cols else "REDUCE_COL")
        return self._emit(body, ttl.make_tile_op(info.name, [x, s], tile,
                                                 extra={"reduce_dim": StringAttr(reduce_dim)}), op.location)

    def leaf(self, v: SSAValue, ctx: frozenset[int], plan: Plan, body: Body) -> SSAValue:
        rank = len(_shape(v))
        dims = [None if (i in ctx or plan.out_dims[i] is None) else plan.out_dims[i] for i in range(rank)]
        arg = self._input(body, v, dims, plan)
        kind = _bcast_kind(ctx, rank)
        if kind == "none":
            return arg
        op = ttl.make_tile_op("bcast", [arg], v.type.element_type, extra={"bcast_kind": StringAttr(kind)})
        return self._emit(body, op, v.owner.location if hasattr(v.owner, "location") else None)

    # -- building the compute -------------------------------------------------------------------

    def emit_compute(self, store: ttl.StoreOp, plan: Plan, body: Body) -> None:
        out_type: TensorType = store.block.type
        cb = bind_of(store.block)
        empty = insert_before(tensor_dialect.EmptyOp([], out_type), store)
        attached = insert_before(ttl.AttachCBOp(empty.tensor, cb.result), store)
        out_map = AffineMap(len(plan.iter_shape), 0, tuple(
            AffineExpr.dimension(d) if d is not None else AffineExpr.constant(0) for d in plan.out_dims))
        maps = [AffineMapAttr(m) for _, m in body.inputs] + [AffineMapAttr(out_map)]
        compute = ttl.ComputeOp.build(
            operands=[[t for t, _ in body.inputs], [attached.result]], result_types=[[out_type]],
            regions=[Region(body.block)],
            attributes={"indexing_maps": ArrayAttr(maps),
                        "iterator_types": ArrayAttr([StringAttr(t) for t in plan.iter_types])})
        insert_before(compute, store)
        compute.location = store.value.owner.location if hasattr(store.value.owner, "location") else store.location
        store.operands[0] = compute.result[0]

    def _ones_tile(self, tile) -> SSAValue:
        """The kernel's tile of ones (a reduction's scaler when the program gives none), made once."""
        if self.ones is None:
            self.ones = self._scaler_tile(tile)
        return self.ones

    def _scaler_tile(self, tile) -> SSAValue | None:
        """A one-tile internal buffer holding ones, filled at the kernel's start, in the data format
        of the operand it is read with (the unpacker reads both with one configuration); returns the
        waited block."""
        which, value, attr = "scaler", 1.0, SCALER_CB_ATTR
        if attr in self.kernel.attributes:
            return None
        tile = tile or ttl.tile_type(ttl.TILE_DTYPES["bf16"])
        cb = new_scratch_cb(self.kernel, self.module, (1, 1), tile, f"{which} tile", self.max_cbs)
        self.kernel.attributes[attr] = i32_attr(cb.index)
        anchor = cb.next_op
        while isinstance(anchor, ttl.BindCBOp):
            anchor = anchor.next_op
        reserve = insert_before(ttl.CBReserveOp(cb.result), anchor)
        fill = insert_before(ttl.make_block_op("fill", [], ttl.block_type((1, 1), tile), {"value": value}), anchor)
        store = insert_before(ttl.StoreOp(fill.result, reserve.result), anchor)
        insert_before(ttl.CBPushOp(cb.result), anchor)
        waited = insert_before(ttl.CBWaitOp(cb.result), anchor)
        waited.result.name_hint = f"{which}_tile"
        ret = self.kernel.body.block.last_op
        insert_before(ttl.CBPopOp(cb.result), ret)
        self.convert(store)
        return waited.result

    def materialize(self, value: SSAValue, store: ttl.StoreOp) -> ttl.StoreOp:
        """Put ``value`` in an internal buffer before ``store``; pop it after. A buffer of the same
        type that the kernel is done with by then is reused."""
        where = value.owner.location
        anchor = value.owner.next_op          # right after the value, before its first use
        cb = free_scratch_cb(self.kernel, ttl.CircularBufferType(_shape(value), value.type.element_type, 1), anchor) \
            or new_scratch_cb(self.kernel, self.module, _shape(value), value.type.element_type,
                              value.owner.name.removeprefix("ttl."), self.max_cbs)
        reserve = insert_before(ttl.CBReserveOp(cb.result), anchor)
        stored = insert_before(ttl.StoreOp(value, reserve.result), anchor)
        push = insert_before(ttl.CBPushOp(cb.result), anchor)
        waited = insert_before(ttl.CBWaitOp(cb.result), anchor)
        for op in (reserve, stored, push, waited):
            op.location = where
        for use in list(value.uses):
            if use.operation is not stored:
                use.operation.operands[use.index] = waited.result
        insert_after(ttl.CBPopOp(cb.result), store)
        return stored


class ConvertTTLToCompute(DevicePass):
    """Fuse block expressions into ``ttl.compute`` regions (see the module docstring)."""

    name = "convert-ttl-to-compute"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op, "compute"):
            StoreConverter(op, kernel, self.arch.max_circular_buffers).run()
