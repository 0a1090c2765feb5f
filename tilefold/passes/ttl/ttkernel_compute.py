"""The compute half of ``convert-ttl-to-ttkernel``: tile ops, DST slots, packing, circular buffers.

Reads: a compute kernel after ``ttl-annotate-cb-associations``. Writes the TT-Metalium compute API
calls, each preceded by its ``*_init`` as the TT-Lang multi-tile lowering shows:

* ``ttl.copy_tile`` → ``copy_tile_init(cb)``, ``copy_tile(cb, index, slot)``;
* SFPU ops → ``<op>_tile_init()``, ``<op>_tile(slot[, params])`` in place (an op's ``init_params``
  are its init's template arguments instead: ``exp_tile_init<true, scale>()``; ``ttl.tile_typecast`` →
  ``typecast_tile_init<IN, OUT>()`` / ``typecast_tile<IN, OUT>(slot)``, the formats of its operand
  and result tile types), binary ones
  ``<op>_tile(slot_a, slot_b, slot_out)``; ``where_tile``; ``fill_tile(slot, value)``;
  ``copy_dest_values(src, dst)``;
* ``ttl.init_sfpu`` → ``init_sfpu(in, out)``, or ``binary_op_init_common(a, b, out)`` when the region
  starts with an FPU binary, ``mm_block_init`` when it holds a matmul;
* ``ttl.tile_fpu_add`` / ``fpu_sub`` / ``fpu_mul`` → ``add_tiles_init(cb_a, cb_b)``,
  ``add_tiles(cb_a, cb_b, index_a, index_b, slot)`` (the FPU reads both tiles from their buffers);
* ``ttl.tile_bcast`` → ``unary_bcast_init<BroadcastType::ROW|COL|SCALAR>(cb, out_cb)``,
  ``unary_bcast<...>(cb, index, slot)`` (a full init, as TT-Lang lowers it); ``ttl.tile_transpose`` → ``transpose_wh_tile``;
  ``ttl.tile_reduce`` → ``reduce_init<pool, dim>`` / ``reduce_tile<...>(cb, scaler_cb, index, scaler_index, slot)``
  (the scaler tile is its second operand's block's first tile)
  / ``reduce_uninit``; ``ttl.matmul_block`` → ``mm_block_init_short`` / ``matmul_block`` (a compute
  region holding a matmul starts with ``mm_block_init`` instead of ``init_sfpu``);
* the DST slot of a result in the output region is ``footprint + `` its linear index
  (``arith.addi``), the pack writes slot ``footprint + dst_slot`` to tile ``cb_tile`` of the block:
  ``pack_tile<out_of_order>(slot, cb, index)`` (in order when the loop fills the block tile by tile);
  a pack marked ``ttl.row_prefix`` (``Block.store_rows``) is ``pack_rows_init(rows)``,
  ``pack_rows(slot, cb, index)``, ``pack_rows_uninit()``;
* ``ttl.cb_wait`` / ``cb_reserve`` / ``cb_pop`` / ``cb_push`` → ``cb_wait_front`` / ``cb_reserve_back`` /
  ``cb_pop_front`` / ``cb_push_back`` with the block's page count;
* ``ttl.pack_l1_acc {enable}`` → ``pack_reconfig_l1_acc(enable)``.
"""

from __future__ import annotations

from collections import Counter

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue

from tilefold.ir import ttl
from tilefold.ir.ttkernel import float_bits
from tilefold.ir.ttkernel_api import API
from tilefold.passes.ttl.annotate_cb_associations import cb_geometry
from tilefold.passes.ttl.common import acquisition_of, bind_of
from tilefold.passes.ttl.lower_to_loops import OUT_CB_ATTR, SEQUENTIAL_ATTR
from tilefold.passes.ttl.set_compute_kernel_config import FULL_FP32_REDUCE_ATTR
from tilefold.passes.ttl.ttkernel_builder import KernelEmitter

_BROADCAST_TYPES = {"rows": "ROW", "cols": "COL", "scalar": "SCALAR"}


def _offsets(op: Operation) -> list[int]:
    attr = op.attributes.get(ttl.CB_TILE_OFFSET_ATTR)
    return [a.value.data for a in attr.data] if attr is not None else [0] * 4


class ComputeLowering:
    """Lowers the ttl ops of one compute kernel (see the module docstring)."""

    def __init__(self, emitter: KernelEmitter, cbs: dict[int, SSAValue]):
        self.e = emitter
        self.cbs = cbs
        self.slots: dict[Operation, SSAValue] = {}
        # the packs into each block, counted before any is lowered
        self.packs = Counter(op.block for op in emitter.kernel.walk() if isinstance(op, ttl.PackTileOp))
        # the buffers this kernel pushes: a sequential pack's position resets at a push, so a buffer
        # whose pushes were dropped (nothing waits on it) takes each pack at its own index
        self.pushed = {op.cb for op in emitter.kernel.walk() if isinstance(op, ttl.CBPushOp)}
        self.formats = {op.index: ttl.data_format_of(op.result.type) for op in emitter.kernel.walk()
                        if isinstance(op, ttl.BindCBOp)}
        # buffers of several data formats: each FPU read and each pack sets the formats it needs
        self.mixed = len(set(self.formats.values())) > 1

    def cb(self, value: SSAValue) -> SSAValue:
        return self.cbs[bind_of(value).index]

    def cb_index(self, index: int) -> SSAValue:
        return self.cbs[index]

    def sources(self, op: Operation, srca: SSAValue, srcb: SSAValue | None = None) -> None:
        """In a kernel whose buffers differ in data format: set the unpacker's source formats to
        those of ``srca`` (and ``srcb``) before the FPU call at ``op``."""
        if not self.mixed:
            return
        if srcb is None:
            self.e.call("reconfig_data_format_srca", [srca], op)
        else:
            self.e.call("reconfig_data_format", [srca, srcb], op)

    def packer(self, op: Operation, cb: SSAValue) -> None:
        """In a kernel whose buffers differ in data format: the packer's format before a pack."""
        if self.mixed:
            self.e.call("pack_reconfig_data_format", [cb], op)

    # -- DST slots ----------------------------------------------------------------------------

    def _output_index(self, op: Operation) -> SSAValue:
        # the nearest one before ``op``: computes without loops around them share one block
        at = op
        while at is not None:
            candidate = at.prev_op
            while candidate is not None:
                if ttl.DST_OUTPUT_INDEX_ATTR in candidate.attributes:
                    return candidate.results[0]
                candidate = candidate.prev_op
            at = at.parent_op()
        raise AssertionError("no output index for a DST output op")

    def result_slot(self, op: Operation) -> SSAValue:
        """The DST slot ``op`` writes: ``dst_idx``, plus the output tile's index for output ops."""
        if op in self.slots:
            return self.slots[op]
        base = op.properties["dst_idx"].value.data
        constant = self.e.index(base, op)
        if ttl.DST_OUTPUT_ATTR in op.attributes:
            slot = self.e.add(self._output_index(op), constant, op)
            slot.name_hint = "dst_out"
        else:
            slot = constant
        self.slots[op] = slot
        return slot

    def slot_of(self, value: SSAValue) -> SSAValue:
        owner = value.owner
        if isinstance(owner, ttl.CopyTileOp):
            return owner.dst_index
        return self.result_slot(owner)

    def tile_index(self, op: Operation, index: SSAValue, which: int = 0) -> SSAValue:
        offset = _offsets(op)[which]
        return self.e.add(index, self.e.index(offset, op), op) if offset else index

    # -- ops ------------------------------------------------------------------------------------

    def lower(self, op: Operation) -> bool:
        """Emit the replacement of ``op``; False when ``op`` is not a compute-kernel ttl op."""
        e = self.e
        if isinstance(op, ttl.CopyTileOp):
            cb = self.cb(op.tile)
            self.sources(op, cb)
            e.call("copy_tile_init", [cb], op)
            e.call("copy_tile", [cb, self.tile_index(op, op.index), op.dst_index], op)
        elif isinstance(op, ttl.TileOp):
            self.tile_op(op)
        elif isinstance(op, ttl.CopyDstOp):
            e.call("copy_dest_values_init", [], op)
            e.call("copy_dest_values", [self.slot_of(op.input), self.result_slot(op)], op)
        elif isinstance(op, ttl.DstTileOp):
            self.result_slot(op)
        elif isinstance(op, ttl.MatmulBlockOp):
            self.matmul_block(op)
        elif isinstance(op, ttl.PackTileOp):
            self.pack(op)
        elif isinstance(op, ttl.InitSFPUOp):
            self.init(op)
        elif isinstance(op, (ttl.TileRegsAcquireOp, ttl.TileRegsCommitOp, ttl.TileRegsWaitOp, ttl.TileRegsReleaseOp)):
            e.call(op.name.removeprefix("ttl."), [], op)
        elif isinstance(op, (ttl.CBWaitOp, ttl.CBReserveOp, ttl.CBPopOp, ttl.CBPushOp)):
            self.cb_op(op)
        elif isinstance(op, ttl.PackL1AccOp):
            e.call("pack_reconfig_l1_acc", [e.i32(op.enable.value.data, op)], op)
        else:
            return op.name in ("tensor.extract", "tensor.empty", "ttl.attach_cb", "ttl.block_slice",
                               "ttl.reshape")
        return True

    def cb_op(self, op: Operation) -> None:
        cb = self.cb(op.cb)
        _, per_block, _ = cb_geometry(op.cb.type)
        if isinstance(op, (ttl.CBWaitOp, ttl.CBReserveOp)):
            pages = per_block * (op.held_before + 1)
            name = "cb_wait_front" if isinstance(op, ttl.CBWaitOp) else "cb_reserve_back"
        else:
            pages = per_block * op.blocks
            name = "cb_pop_front" if isinstance(op, ttl.CBPopOp) else "cb_push_back"
        self.e.call(name, [cb, self.e.index(pages, op)], op)

    def init(self, op: ttl.InitSFPUOp) -> None:
        matmul = _next_matmul(op)
        if matmul is not None:
            a, b = self.cb(matmul.lhs), self.cb(matmul.rhs)
            args = [a, b, self.cb(op.out_cb), *(self.e.index(v, op) for v in (
                0, matmul.ct.value.data, matmul.rt.value.data, matmul.kt.value.data))]
            self.e.call("mm_block_init", args, op)
            return
        first = _first_tile_op(op)
        if first is not None and first.info.kind == "fpu_binary":     # an FPU binary first: its common init
            a, b = (self.cb(v) for v in first.tile_operands)
            self.e.call("binary_op_init_common", [a, b, self.cb(op.out_cb)], op)
            return
        self.e.call("init_sfpu", [self.cb(op.in_cb), self.cb(op.out_cb)], op)

    def tile_op(self, op: ttl.TileOp) -> None:
        e = self.e
        info = op.info
        if info.kind in ("sfpu_unary", "fill"):
            slot = self.result_slot(op)
            params = []
            for p in info.params:
                if p in info.init_params:
                    continue
                v = op.param(p)
                if info.param_encoding == "bits":
                    params.append(e.i32(float_bits(v), op))
                elif info.param_encoding == "int":
                    params.append(e.i32(int(v), op))
                else:
                    params.append(e.f32(v, op))
            if info.kind == "sfpu_unary" and op.operands:
                source = self.slot_of(op.operands[0])
                if source is not slot and not _same_slot(source, slot):
                    raise AssertionError(f"{op.name} is in place but its operand is in another DST slot")
            templates = None
            if info.name == "typecast":      # the formats are template arguments: the tile types'
                templates = {"in_dtype": ttl.data_format_of(op.operands[0].type).value,
                             "out_dtype": ttl.data_format_of(op.result.type).value}
            elif API[info.call].templates:   # an integer op's format: the tile type's
                templates = {"data_format": ttl.data_format_of(op.result.type).value}
            if info.init_params:             # constants the init programs (exp_tile_init<true, scale>)
                e.call(info.init, [], op, {p: float_bits(op.param(p)) for p in info.init_params})
            else:
                e.call(info.init, [], op, templates if API[info.init].templates else None)
            e.call(info.call, [slot, *params], op, templates)
        elif info.kind == "sfpu_binary":
            slots = [self.slot_of(o) for o in op.tile_operands]
            fmt = {"data_format": ttl.data_format_of(op.result.type).value}     # integer ops' template
            e.call(info.init, [], op, fmt if API[info.init].templates else None)
            e.call(info.call, [*slots, self.result_slot(op)], op, fmt if API[info.call].templates else None)
        elif info.kind == "sfpu_ternary":
            slots = [self.slot_of(o) for o in op.tile_operands]
            fmt = {"data_format": ttl.data_format_of(op.result.type).value}     # where_tile<fmt>
            e.call(info.init, [], op, fmt if API[info.init].templates else None)
            e.call(info.call, [*slots, self.result_slot(op)], op, fmt if API[info.call].templates else None)
        elif info.kind == "fpu_binary":
            a, b = (self.cb(v) for v in op.tile_operands)
            index_a, index_b = op.tile_indices
            self.sources(op, a, b)
            e.call(info.init, [a, b], op)
            e.call(info.call, [a, b, self.tile_index(op, index_a, 0), self.tile_index(op, index_b, 1),
                               self.result_slot(op)], op)
        elif info.kind == "bcast":
            self.bcast(op)
        elif info.kind == "transpose":
            cb = self.cb(op.tile_operands[0])
            self.sources(op, cb)
            e.call("transpose_wh_init_short", [cb], op)
            e.call("transpose_wh_tile", [cb, self.tile_index(op, op.tile_index), self.result_slot(op)], op)
        elif info.kind == "reduce":
            self.reduce(op)
        else:
            raise AssertionError(f"{op.name} should have been lowered by ttl-lower-to-loops")

    def bcast(self, op: ttl.TileOp) -> None:
        e = self.e
        kind = op.properties["bcast_kind"].data
        cb = self.cb(op.tile_operands[0])
        index = self.tile_index(op, op.tile_index)
        if kind == "none":
            self.sources(op, cb)
            e.call("copy_tile_init", [cb], op)
            e.call("copy_tile", [cb, index, self.result_slot(op)], op)
            return
        out = self.cb_index(op.attributes[OUT_CB_ATTR].value.data)
        templates = {"bcast_type": _BROADCAST_TYPES[kind]}
        e.call("unary_bcast_init", [cb, out], op, templates)       # configures the unpacker for cb itself
        e.call("unary_bcast", [cb, index, self.result_slot(op)], op, templates)

    def reduce(self, op: ttl.TileOp) -> None:
        e = self.e
        cb = self.cb(op.tile_operands[0])
        scaler = self.cb(op.tile_operands[1])
        out = self.cb_index(op.attributes[OUT_CB_ATTR].value.data)
        full = FULL_FP32_REDUCE_ATTR in op.attributes
        templates = {"pool_type": "SUM" if op.info.name == "reduce_sum" else "MAX",
                     "reduce_dim": op.properties["reduce_dim"].data, "enforce_fp32_accumulation": full}
        self.sources(op, cb, scaler)
        e.call("reduce_init", [cb, scaler, out], op, templates)
        e.call("reduce_tile", [cb, scaler, self.tile_index(op, op.tile_index), e.index(_offsets(op)[1], op),
                               self.result_slot(op)], op, templates)
        e.call("reduce_uninit", [], op, {"enforce_fp32_accumulation": full})

    def matmul_block(self, op: ttl.MatmulBlockOp) -> None:
        e = self.e
        a, b = self.cb(op.lhs), self.cb(op.rhs)
        ct, rt, kt = (e.index(v.value.data, op) for v in (op.ct, op.rt, op.kt))
        zero = e.index(0, op)
        self.sources(op, b, a)
        e.call("mm_block_init_short", [a, b, zero, ct, rt, kt], op)
        e.call("matmul_block", [a, b, self.tile_index(op, op.lhs_tile, 0), self.tile_index(op, op.rhs_tile, 1),
                                e.index(op.dst_idx.value.data, op), zero, ct, rt, kt], op)

    def pack(self, op: ttl.PackTileOp) -> None:
        e = self.e
        slot = e.add(op.dst_slot, e.index(op.footprint, op), op)
        slot.name_hint = "pack_dst"
        index = self.tile_index(op, op.cb_tile)
        acq = acquisition_of(op.block)
        in_order = (SEQUENTIAL_ATTR in op.attributes and acq is not None and acq.held_before == 0
                    and self.packs[op.block] == 1 and acq.cb in self.pushed)
        self.packer(op, self.cb(op.block))
        if ttl.ROW_PREFIX_ATTR in op.attributes:       # the first rows of DST, 16 values each, from page ``index``
            e.call("pack_rows_init", [e.i32(op.attributes[ttl.ROW_PREFIX_ATTR].value.data, op)], op)
            e.call("pack_rows", [slot, self.cb(op.block), index], op)
            e.call("pack_rows_uninit", [], op)
            return
        e.call("pack_tile", [slot, self.cb(op.block), index], op, {"out_of_order_output": not in_order})


def _same_slot(a: SSAValue, b: SSAValue) -> bool:
    ca, cb = a.owner, b.owner
    if isinstance(ca, arith.ConstantOp) and isinstance(cb, arith.ConstantOp):
        return ca.value == cb.value
    if isinstance(ca, arith.AddiOp) and isinstance(cb, arith.AddiOp):
        return ca.lhs is cb.lhs and _same_slot(ca.rhs, cb.rhs)
    return False


def _region_ops(init: ttl.InitSFPUOp):
    """The ops of the compute region ``init`` starts (up to the next region), nested ones included."""
    op = init.next_op
    while op is not None and not isinstance(op, ttl.InitSFPUOp):
        yield from op.walk()
        op = op.next_op


def _first_tile_op(init: ttl.InitSFPUOp) -> ttl.TileOp | None:
    """The first tile op of the compute region ``init`` starts, unless a ``copy_tile`` comes first."""
    first = next((op for op in _region_ops(init) if isinstance(op, (ttl.TileOp, ttl.CopyTileOp))), None)
    return first if isinstance(first, ttl.TileOp) else None


def _next_matmul(init: ttl.InitSFPUOp):
    """The matmul of the compute region ``init`` starts, if any."""
    return next((op for op in _region_ops(init) if isinstance(op, ttl.MatmulBlockOp)), None)


__all__ = ["ComputeLowering"]
