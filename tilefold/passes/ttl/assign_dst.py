"""``ttl-assign-dst``: place every tile value of a ``ttl.compute`` body in a DST register slot.

Reads: ``ttl.compute`` ops (after ``convert-ttl-to-compute``) and the kernel's
``ttkernel.compute_config`` (its DST capacity). Writes, in each body:

* one op per value (tile ops equal in name, operands and properties merged), an element-wise
  body reordered so that each op's heavier operand is computed first (when that holds fewer
  values live), and each constant tile (fills and element-wise ops on them) moved just before
  its first reader;

* for ``x + a @ b`` with ``x`` an input tile indexed like the output: a ``ttl.copy_tile`` of ``x``
  into the output slots marked ``ttl.matmul_addend`` instead of the add (the matmul's K steps then
  accumulate onto it in DST);
* ``ttl.tile_fpu_add`` / ``fpu_sub`` / ``fpu_mul %a, %b [%ia, %ib]`` for ``add`` / ``sub`` / ``mul`` of
  two input tiles that are not float32 (the FPU's ``add_tiles`` ..., which reads both from their
  circular buffers), unless the kernel's ``ttl.fpu_binary_ops`` is false;
* ``ttl.copy_tile %arg, %index, %slot`` for each input tile an SFPU op reads (CB → DST), placed
  just before its first reader, with
  ``%index = ttl.linearized_index`` — the tile's index in its block — and a constant slot (when
  the expression does not fit DST so, an input read by several ops is copied again before each
  later reader instead of holding its slot in between);
  ops that read a circular buffer themselves (``tile_bcast``, ``tile_transpose``,
  ``tile_reduce``) get the index as an operand instead;
* ``dst_idx`` on every op that writes DST. Slots come from a linear scan over the body: a binary
  or ternary SFPU op writes over an operand it reads for the last time (else a fresh slot), a
  unary op works in place, a value with a later consumer is first copied (``ttl.copy_dst``) so
  that in-place ops do not destroy it; a slot is free again after its value's last use. The
  result tile (and the chain of in-place ops, or the reduction, that produces it) goes to ``footprint + `` its linear index in the output (``ttl.dst_output``,
  ``ttl.linearized_index {ttl.dst_output_index}``), where the footprint is the number of slots
  the other values need (``ttl.dst_footprint`` on the compute); when the values and the output
  do not fit DST side by side, the output's chain takes a slot free when it starts, renamed to
  DST's last, with ``footprint = capacity - 1`` (one output tile per acquire);
* when the output does not fit in the DST slots left (``capacity - footprint``), the compute is
  split into DST-sized sub-blocks: ``scf.for`` loops over sub-block origins (``ttl.subblock_loop``)
  around a compute on ``ttl.block_slice``s of its operands and of the stored block. A matmul
  block larger than DST becomes ``rt × ct`` output sub-blocks over the whole K.

Errors: :class:`CompileError` at the user's line when one output tile alone needs more DST slots
than one ``tile_regs_acquire`` gives, naming both numbers.
"""

from __future__ import annotations

import math

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects import tensor as tensor_dialect
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, UnitAttr
from xdsl.ir import Block, BlockArgument, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.rewriter import InsertPoint

from tilefold.errors import CompileError
from tilefold.ir import ttl
from tilefold.ir.locations import source_location
from tilefold.ir.ttkernel import compute_config, dst_capacity
from tilefold.layout.formats import DataFormat
from tilefold.passes.device_pass import DevicePass
from tilefold.passes.ttl.common import bind_of, i32_attr, kernel_option, kernels, linear_map

# formats the FPU's source registers hold exactly (float32 would lose bits there)
_FPU_FORMATS = (DataFormat.Float16_b, DataFormat.Float16, DataFormat.Bfp8_b, DataFormat.Bfp4_b)
_IN_PLACE = ("sfpu_unary",)
_REUSES = ("sfpu_binary", "sfpu_ternary")


def _live_peak(ops: list) -> int:
    """The most tile values live at once when ``ops`` run in this order (an input tile from its
    first reader, every value until its last reader)."""
    position = {op: n for n, op in enumerate(ops)}
    first: dict = {}
    last: dict = {}
    for op in ops:
        last[op.result] = first[op.result] = position[op]
        for o in op.tile_operands:
            first.setdefault(o, position[op])
            last[o] = position[op]
    events = sorted([(start, 1) for start in first.values()] + [(end, -1) for end in last.values()],
                    key=lambda e: (e[0], -e[1]))
    peak = live = 0
    for _, change in events:
        live += change
        peak = max(peak, live)
    return peak


def _index_constant(value: int, block: Block, before) -> SSAValue:
    return Builder(InsertPoint.before(before)).insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result


def iteration_shape(compute: ttl.ComputeOp) -> list[int]:
    """The size of each iteration dimension, read from the operands and their maps."""
    n = len(compute.iterator_types)
    sizes = [1] * n
    for value, amap in zip([*compute.inputs, *compute.outputs], compute.indexing_maps):
        shape = value.type.get_shape()
        for j, expr in enumerate(amap.results):
            if isinstance(expr, AffineDimExpr):
                sizes[expr.position] = max(sizes[expr.position], shape[j])
    return sizes


def map_dims(amap) -> list[int | None]:
    """Per result of an indexing map: the iteration dim it reads, or None for a constant."""
    return [expr.position if isinstance(expr, AffineDimExpr) else None for expr in amap.results]


def choose_subblock(sizes: list[int], available: int) -> list[int]:
    """Largest sub-block, innermost dim first, whose sizes divide the block and whose tiles fit."""
    sub = [1] * len(sizes)
    remaining = available
    for i in reversed(range(len(sizes))):
        sub[i] = max(d for d in range(1, sizes[i] + 1) if sizes[i] % d == 0 and d <= remaining)
        remaining //= sub[i]
    return sub


class DstAssignment:
    """Assigns DST slots in one compute (see the module docstring)."""

    def __init__(self, kernel, compute: ttl.ComputeOp, capacity: int):
        self.kernel = kernel
        self.compute = compute
        self.capacity = capacity
        self.body = compute.body.block
        self.n_inputs = len(compute.inputs)
        self.has_reduction = "reduction" in compute.iterator_types or any(
            isinstance(op, ttl.TileOp) and op.info.kind in ttl.REDUCTION_KINDS for op in self.body.ops)

    def run(self) -> None:
        self.merge_duplicates()
        self.schedule_heavier_operands_first()
        self.sink_constants()
        addend = self.fold_addend_into_matmul()
        self.use_fpu_binaries()
        self.insert_copies()
        chain = self.output_chain()
        if addend is not None:
            chain.add(addend.result)             # copied into the matmul's output slots
        footprint = self.fitted_slots(chain)
        if footprint + 1 > self.capacity and self.copy_inputs_per_reader():
            footprint = min(footprint, self.fitted_slots(chain))     # the error names the better of the two
        if footprint + 1 > self.capacity:
            cfg = compute_config(self.kernel)
            raise CompileError(
                f"this expression needs {footprint + 1} DST tiles for each output tile ({footprint} for intermediate "
                f"values and one for the result) but one tile_regs_acquire gives {self.capacity} "
                f"(fp32_dest_acc_en={cfg['fp32_dest_acc_en']}, dst_full_sync_en={cfg['dst_full_sync_en']}); split it "
                "into several store()s through a dataflow buffer", source_location(self.compute))
        self.compute.attributes[ttl.DST_FOOTPRINT_ATTR] = i32_attr(footprint)
        final = self.split(footprint)
        finalize_maps(final)

    # -- the body's order -----------------------------------------------------------------------

    def merge_duplicates(self) -> None:
        """One op per value: a block expression used twice in one store (``n = p + v; o.store(n *
        n - n)``) is built once per use, and computing it again would hold its inputs' slots."""
        seen: dict = {}
        for op in list(self.body.ops):
            if not isinstance(op, ttl.TileOp):
                continue
            key = (op.name, tuple(op.operands), op.result.type,
                   tuple(sorted((name, str(value)) for name, value in op.properties.items())))
            first = seen.setdefault(key, op)
            if first is not op:
                op.result.replace_all_uses_with(first.result)
                op.detach()
                op.erase()

    def schedule_heavier_operands_first(self) -> None:
        """Order an element-wise body so that each op's operand needing more DST slots is computed
        first (Sethi–Ullman numbering over the expression, from the stored value back), when that
        holds fewer values live at once than the order the expression was written in. Only bodies
        of element-wise ops and CB reads (broadcast, transpose) are reordered."""
        tile_ops = [op for op in self.body.ops if isinstance(op, ttl.TileOp)]
        others = [op for op in self.body.ops if not isinstance(op, (ttl.TileOp, ttl.YieldOp))]
        if any(op.info.kind not in (*ttl.ELEMENTWISE_KINDS, "bcast", "transpose") for op in tile_ops) or any(
                isinstance(v.type, ttl.TileType) for op in others for v in (*op.operands, *op.results)):
            return
        need: dict = {}

        def label(value) -> int:
            if not isinstance(value.owner, ttl.TileOp):
                return 1                                  # an input tile, copied into a slot
            if value not in need:
                operands = sorted((label(o) for o in value.owner.tile_operands), reverse=True)
                need[value] = max([1] + [n + i for i, n in enumerate(operands)])
            return need[value]

        order: list = []
        placed: set = set()

        def place(value) -> None:
            op = value.owner
            if not isinstance(op, ttl.TileOp) or op in placed:
                return
            placed.add(op)
            for operand in sorted(op.tile_operands, key=label, reverse=True):
                place(operand)
            order.append(op)

        for value in self.body.last_op.operands:
            place(value)
        order += [op for op in tile_ops if op not in placed]
        if _live_peak(order) >= _live_peak(tile_ops):
            return
        for op in order:
            op.detach()
            self.body.insert_op_before(op, self.body.last_op)

    def sink_constants(self) -> None:
        """Each constant tile — a fill, and element-wise ops on constants only (``neg(fill(x, k))``)
        — computed just before its first reader, so that its slot is held no longer; the last
        constant first, so that a chain moves as a whole."""
        constant: dict = {}            # (in body order)
        for op in self.body.ops:
            if isinstance(op, ttl.TileOp) and op.info.kind in ttl.ELEMENTWISE_KINDS and \
                    all(o in constant for o in op.operands):
                constant[op.result] = None
        for value in reversed(constant):
            op = value.owner
            position = {o: n for n, o in enumerate(self.body.ops)}
            first = min((use.operation for use in value.uses), key=lambda o: position[o], default=None)
            if first is not None and first is not op.next_op:
                op.detach()
                self.body.insert_op_before(op, first)

    def fold_addend_into_matmul(self) -> ttl.CopyTileOp | None:
        """``x + a @ b`` with ``x`` a tile of an input block indexed like the output: ``x`` is copied
        into the matmul's output slots (a ``ttl.copy_tile`` marked ``ttl.matmul_addend``) and the
        matmul adds its K steps onto it, as ``matmul_block`` accumulates into DST. This replaces an
        SFPU add and the DST slot of the product, and rounds the sum to DST's precision once per K
        step instead of rounding the product first. Returns the copy, or None."""
        mm = next((op for op in self.body.ops if isinstance(op, ttl.TileOp) and op.info.kind == "matmul"), None)
        if mm is None:
            return None
        uses = list(mm.result.uses)
        if len(uses) != 1:
            return None
        add = uses[0].operation
        if not (isinstance(add, ttl.TileOp) and add.info.name == "add" and add.result.type == mm.result.type):
            return None
        addend = add.operands[1 - uses[0].index]
        maps = self.compute.indexing_maps
        if not (isinstance(addend, BlockArgument) and addend.block is self.body and addend.index < self.n_inputs
                and maps[addend.index] == maps[-1] and addend not in mm.operands):
            return None
        copy = ttl.CopyTileOp(addend, self._linearized(addend.index, mm), _index_constant(0, self.body, mm))
        copy.attributes[ttl.MATMUL_ADDEND_ATTR] = UnitAttr()
        copy.location = add.location
        self.body.insert_op_before(copy, mm)
        add.result.replace_all_uses_with(mm.result)
        add.detach()
        add.erase()
        return copy

    # -- copies into DST ------------------------------------------------------------------------

    def use_fpu_binaries(self) -> None:
        """``a + b``, ``a - b``, ``a * b`` of two input tiles (not float32: the FPU's source registers
        hold 19 bits, so float32 operands stay on the SFPU, as TT-NN does) become the FPU's
        ``add_tiles`` / ``sub_tiles`` / ``mul_tiles``, which read both tiles from their circular
        buffers into one DST slot: no copies into DST, one slot instead of three (TT-Lang's
        ``enable-fpu-binary-ops``, on unless the operation's options say ``--no-ttl-fpu-binary-ops``)."""
        if kernel_option(self.kernel, "fpu_binary_ops") is False:
            return
        inputs = set(self.body.args[:self.n_inputs])
        for op in list(self.body.ops):
            if not (isinstance(op, ttl.TileOp) and op.info.name in ttl.FPU_BINARY):
                continue
            lhs, rhs = op.tile_operands
            if lhs not in inputs or rhs not in inputs or not all(
                    ttl.data_format_of(v.type) in _FPU_FORMATS for v in (lhs, rhs, op.result)):
                continue
            fpu = ttl.make_tile_op(ttl.FPU_BINARY[op.info.name], [lhs, rhs], op.result.type,
                                   index=self._linearized(lhs.index, op), index_b=self._linearized(rhs.index, op))
            fpu.attributes.update(op.attributes)
            fpu.location = op.location
            self.body.insert_op_before(fpu, op)
            op.result.replace_all_uses_with(fpu.result)
            op.detach()
            op.erase()

    def insert_copies(self) -> None:
        args = self.body.args[:self.n_inputs]
        for i, arg in enumerate(args):
            # (a reduction's scaler, its second operand, is always the first tile of its block)
            cb_users = [u.operation for u in arg.uses if isinstance(u.operation, ttl.TileOp) and u.index == 0
                        and u.operation.info.kind in ("bcast", "transpose", "reduce")]
            for user in dict.fromkeys(cb_users):
                lin = self._linearized(i, user)
                replacement = ttl.make_tile_op(user.info.name, list(user.tile_operands), user.result.type,
                                               extra=dict(user.properties), index=lin)
                replacement.attributes.update(user.attributes)
                replacement.location = user.location
                self.body.insert_op_before(replacement, user)
                user.result.replace_all_uses_with(replacement.result)
                user.detach()
                user.erase()
        position = {op: n for n, op in enumerate(self.body.ops)}
        for i, arg in enumerate(args):
            dst_users = [u for u in arg.uses if isinstance(u.operation, ttl.YieldOp) or (
                isinstance(u.operation, ttl.TileOp) and u.operation.info.kind in ttl.ELEMENTWISE_KINDS)]
            if not dst_users:
                continue
            # copied just before its first reader, so that an input's slot is not held while earlier
            # parts of the expression are computed
            anchor = min((u.operation for u in dst_users), key=lambda op: position[op])
            lin = self._linearized(i, anchor)
            slot = _index_constant(0, self.body, anchor)
            copy = ttl.CopyTileOp(arg, lin, slot)
            copy.location = self.compute.location
            self.body.insert_op_before(copy, anchor)
            for use in dst_users:
                use.operation.operands[use.index] = copy.result

    def copy_inputs_per_reader(self) -> bool:
        """When an expression does not fit DST with each input tile copied once and held until its
        last reader: copy an input read by several ops again just before each later reader (the tile
        is still in its circular buffer), so that it holds no slot in between. Whether any copy was
        added."""
        added = False
        for copy in [op for op in self.body.ops if isinstance(op, ttl.CopyTileOp)]:
            readers = list(dict.fromkeys(u.operation for u in copy.result.uses))
            if len(readers) < 2:
                continue
            operand = next(i for i, a in enumerate(self.body.args) if a is copy.operands[0])
            for reader in readers[1:]:
                if isinstance(reader, ttl.YieldOp):
                    continue
                lin = self._linearized(operand, reader)
                again = ttl.CopyTileOp(copy.operands[0], lin, _index_constant(0, self.body, reader))
                again.location = copy.location
                self.body.insert_op_before(again, reader)
                for i, value in enumerate(reader.operands):
                    if value is copy.result:
                        reader.operands[i] = again.result
                added = True
        return added

    def _linearized(self, operand: int, before) -> SSAValue:
        op = ttl.LinearizedIndexOp(linear_map((1,)))
        op.attributes[ttl.OPERAND_ATTR] = i32_attr(operand)
        op.location = self.compute.location
        self.body.insert_op_before(op, before)
        return op.result

    # -- which values end in the output slots ---------------------------------------------------

    def output_chain(self) -> set:
        """Values computed in the output slot: the yielded tile, back through in-place unary ops (and,
        for a reduction, through every op on the path from the reduction to the result)."""
        yielded = self.body.last_op.operands[0]
        reduction = next((op.result for op in self.body.ops
                          if isinstance(op, ttl.TileOp) and op.info.kind in ttl.REDUCTION_KINDS), None)
        depends: set = set()
        if reduction is not None:
            depends.add(reduction)
            for op in self.body.ops:
                if any(o in depends for o in op.operands):
                    depends.update(op.results)
        chain = set()
        v = yielded
        if reduction is not None:
            for op in self.body.ops:
                if any(r in depends for r in op.results) and op is not self.body.last_op:
                    if len(list(op.results[0].uses)) != 1:
                        raise CompileError("the result of this matmul / reduction is used more than once in the same "
                                           "expression; store it into a block first and read that block",
                                           source_location(op))
        while True:
            chain.add(v)
            op = v.owner
            if not isinstance(op, (ttl.TileOp, ttl.CopyTileOp, ttl.CopyDstOp)):
                break
            if isinstance(op, ttl.TileOp) and op.info.kind in ttl.REDUCTION_KINDS:
                break
            nxt = None
            if reduction is not None:
                nxt = next((o for o in op.operands if o in depends), None)
            elif isinstance(op, ttl.TileOp) and op.info.kind in _IN_PLACE:
                nxt = op.operands[0]
            if nxt is None or not isinstance(nxt.type, ttl.TileType):
                break
            if reduction is None and (len(list(nxt.uses)) > 1 or not isinstance(
                    nxt.owner, (ttl.TileOp, ttl.CopyTileOp, ttl.CopyDstOp))):
                # an in-place op on a value that is needed elsewhere (or an input): copy it into the slot
                copy = ttl.CopyDstOp(nxt) if isinstance(nxt.owner, (ttl.TileOp, ttl.CopyTileOp, ttl.CopyDstOp)) \
                    else None
                if copy is None:
                    break
                copy.location = op.location
                self.body.insert_op_before(copy, op)
                op.operands[0] = copy.result
                chain.add(copy.result)
                break
            v = nxt
        return chain

    # -- linear scan ----------------------------------------------------------------------------

    def fitted_slots(self, chain: set) -> int:
        """:meth:`assign_slots`, and when the values and the output do not fit DST side by side,
        again with one output tile per acquire in a slot the values before it may use."""
        footprint = self.assign_slots(chain)
        if footprint + 1 > self.capacity:
            footprint = self.assign_slots(chain, one_output=True) or footprint
        return footprint

    def assign_slots(self, chain: set, one_output: bool = False) -> int | None:
        """Slots for every value (annotated on the ops); the footprint, the first output slot.
        With ``one_output`` (one output tile per acquire, in DST's last slot): the output's chain
        takes a slot free when it starts, which values computed before it may have used, and that
        slot and the last swap names everywhere — None (nothing annotated) when the slots do not
        fit DST so."""
        ops = [op for op in self.body.ops if not isinstance(op, ttl.YieldOp)]
        position = {op: i for i, op in enumerate(ops)}
        last_use: dict = {}
        for op in ops + [self.body.last_op]:
            for o in op.operands:
                if isinstance(o.type, ttl.TileType):
                    last_use[o] = position.get(op, len(ops))
        slot: dict = {}
        handed: set = set()            # values whose slot an in-place op took over (never freed for them)
        free: list[int] = []
        top = 0
        out_slot = None                # with one_output: the slot the output's chain took when it began

        def take(exclude=()) -> int:
            nonlocal top
            for s in sorted(free):
                if s not in exclude:
                    free.remove(s)
                    return s
            top += 1
            return top - 1

        i = 0
        while i < len(ops):
            op = ops[i]
            result = _dst_result(op)
            if result is not None:
                operands = [o for o in op.operands if isinstance(o.type, ttl.TileType) and o in slot]
                if result in chain:
                    if one_output and out_slot is None:
                        out_slot = take()               # never free again: nothing else takes it
                    slot[result] = "out"
                elif isinstance(op, ttl.TileOp) and op.info.kind in _IN_PLACE:
                    source = op.operands[0]
                    if last_use.get(source) == i and source not in handed and slot.get(source) not in (None, "out"):
                        slot[result] = slot[source]
                        handed.add(source)
                    else:
                        copy = ttl.CopyDstOp(source)
                        copy.location = op.location
                        self.body.insert_op_before(copy, op)
                        op.operands[0] = copy.result
                        return self.assign_slots(chain)     # rescan with the copy in place
                elif (reused := self._dying_operand(op, operands, slot, last_use, handed, i)) is not None:
                    slot[result] = slot[reused]         # written over an operand read for the last time
                    handed.add(reused)
                else:
                    slot[result] = take(exclude=[slot[o] for o in operands if isinstance(slot[o], int)])
            for o in {o for o in op.operands if isinstance(o.type, ttl.TileType)}:
                if last_use.get(o) == i and isinstance(slot.get(o), int) and o not in handed:
                    free.append(slot[o])
            i += 1
        footprint = top
        if one_output:
            if top > self.capacity or out_slot is None:
                return None
            footprint = last = self.capacity - 1
            swap = {out_slot: last, last: out_slot}          # the output's slot becomes the last
            slot = {v: swap.get(s, s) for v, s in slot.items()}
        for value, s in slot.items():
            self._annotate(value, s, footprint)
        return footprint

    @staticmethod
    def _dying_operand(op, operands: list, slot: dict, last_use: dict, handed: set, i: int):
        """The first DST operand of an SFPU binary or ternary op that nothing reads after it (its
        slot can take the result: the op reads its tiles row by row before it writes), or None."""
        if not (isinstance(op, ttl.TileOp) and op.info.kind in _REUSES):
            return None
        return next((o for o in operands if last_use.get(o) == i and o not in handed and isinstance(slot[o], int)),
                    None)

    def _annotate(self, value: SSAValue, s, footprint: int) -> None:
        op = value.owner
        if s is None:
            return
        index = footprint if s == "out" else s
        if isinstance(op, ttl.CopyTileOp):
            constant = op.dst_index.owner
            if s == "out":
                out = self.output_index(op)
                add = arith.AddiOp(out, _index_constant(footprint, self.body, op))
                self.body.insert_op_before(add, op)
                op.operands[2] = add.result
            else:
                new = _index_constant(index, self.body, op)
                op.operands[2] = new
            if isinstance(constant, arith.ConstantOp) and not constant.result.uses:
                constant.detach()
                constant.erase()
            return
        op.properties["dst_idx"] = i32_attr(index)
        if s == "out":
            op.attributes[ttl.DST_OUTPUT_ATTR] = UnitAttr()
            self.output_index(op)

    def output_index(self, before) -> SSAValue:
        existing = next((op for op in self.body.ops if ttl.DST_OUTPUT_INDEX_ATTR in op.attributes), None)
        if existing is not None:
            return existing.results[0]
        op = ttl.LinearizedIndexOp(linear_map((1,)))
        op.attributes[ttl.OPERAND_ATTR] = i32_attr(-1)
        op.attributes[ttl.DST_OUTPUT_INDEX_ATTR] = UnitAttr()
        op.location = self.compute.location
        self.body.insert_op_before(op, self.body.first_op)
        op.result.name_hint = "out_lin"
        return op.result

    # -- sub-blocks -----------------------------------------------------------------------------

    def split(self, footprint: int) -> ttl.ComputeOp:
        compute = self.compute
        sizes = iteration_shape(compute)
        parallel = [d for d, t in enumerate(compute.iterator_types) if t == "parallel"]
        available = self.capacity - footprint
        if math.prod(sizes[d] for d in parallel) <= available:
            return compute
        sub = dict(zip(parallel, choose_subblock([sizes[d] for d in parallel], available)))
        chunked = [d for d in parallel if sub[d] < sizes[d]]
        store = next(u.operation for u in compute.result[0].uses if isinstance(u.operation, ttl.StoreOp))
        # loops over sub-block origins
        offsets: dict[int, SSAValue] = {}
        anchor = compute
        outer = None
        for d in chunked:
            body = Block(arg_types=[IndexType()])
            body.args[0].name_hint = f"sb{d}"
            lb, ub, step = (_index_constant(v, anchor.parent_block(), anchor) for v in (0, sizes[d], sub[d]))
            loop = scf.ForOp(lb, ub, step, [], body)
            loop.location = compute.location
            anchor.parent_block().insert_op_before(loop, anchor)
            if outer is None:
                outer = loop
                loop.attributes[ttl.SUBBLOCK_LOOP_ATTR] = UnitAttr()
            body.add_op(scf.YieldOp())
            offsets[d] = body.args[0]
            anchor = body.last_op
        block = anchor.parent_block()

        def sliced(value: SSAValue, amap) -> SSAValue:
            dims = map_dims(amap)
            if not any(d in offsets for d in dims if d is not None):
                return value
            zero = None
            offs, sz = [], []
            for j, d in enumerate(dims):
                if d in offsets:
                    offs.append(offsets[d])
                    sz.append(sub[d])
                else:
                    if zero is None:
                        zero = _index_constant(0, block, anchor)
                    offs.append(zero)
                    sz.append(value.type.get_shape()[j])
            op = ttl.BlockSliceOp(value, offs, sz)
            op.location = compute.location
            block.insert_op_before(op, anchor)
            return op.result

        maps = compute.indexing_maps
        inputs = [sliced(v, m) for v, m in zip(compute.inputs, maps)]
        out_map = maps[-1]
        out_dims = map_dims(out_map)
        out_shape = [sub[d] if d is not None else 1 for d in out_dims]
        out_type = ttl.block_type(out_shape, compute.result[0].type.element_type)
        empty = tensor_dialect.EmptyOp([], out_type)
        block.insert_op_before(empty, anchor)
        attached = ttl.AttachCBOp(empty.tensor, bind_of(compute.outputs[0]).result)
        block.insert_op_before(attached, anchor)
        region = compute.detach_region(compute.body)
        new = ttl.ComputeOp.build(operands=[inputs, [attached.result]], result_types=[[out_type]], regions=[region],
                                  attributes=dict(compute.attributes))
        new.location = compute.location
        block.insert_op_before(new, anchor)
        target = sliced(store.block, out_map)
        new_store = ttl.StoreOp(new.result[0], target)
        new_store.location = store.location
        new_store.attributes.update(store.attributes)
        block.insert_op_before(new_store, anchor)
        store.detach()
        store.erase()
        old_outs = compute.outputs[0].owner
        compute.detach()
        compute.erase()
        if isinstance(old_outs, ttl.AttachCBOp) and not old_outs.result.uses:
            empty_old = old_outs.tensor.owner
            old_outs.detach()
            old_outs.erase()
            if not empty_old.results[0].uses:
                empty_old.detach()
                empty_old.erase()
        return new


def _dst_result(op) -> SSAValue | None:
    if isinstance(op, ttl.CopyTileOp):
        return op.result
    if isinstance(op, (ttl.TileOp, ttl.CopyDstOp)):
        return op.result
    return None


def finalize_maps(compute: ttl.ComputeOp) -> None:
    """Give each ``ttl.linearized_index`` of the body its map: the operand's tile index in its
    block (through sub-block slices, as symbols), or the output tile's index in the sub-block."""
    maps = compute.indexing_maps
    n_iter = len(compute.iterator_types)
    for op in list(compute.body.block.ops):
        if not isinstance(op, ttl.LinearizedIndexOp) or ttl.OPERAND_ATTR not in op.attributes:
            continue
        which = op.attributes[ttl.OPERAND_ATTR].value.data
        if which < 0:
            value, amap = compute.outputs[0], maps[-1]
            shape = value.type.get_shape()
            new = ttl.LinearizedIndexOp(linear_map(shape, n_iter, map_dims(amap)))
        else:
            value, amap = compute.inputs[which], maps[which]
            dims = map_dims(amap)
            owner = value.owner
            if isinstance(owner, ttl.BlockSliceOp):
                parent, offsets = _slice_origin(owner, compute)
                new = ttl.LinearizedIndexOp(linear_map(parent, n_iter, dims, len(dims), list(range(len(dims)))),
                                            offsets)
            else:
                new = ttl.LinearizedIndexOp(linear_map(value.type.get_shape(), n_iter, dims))
        new.attributes.update(op.attributes)
        new.location = op.location
        compute.body.block.insert_op_before(new, op)
        op.result.replace_all_uses_with(new.result)
        new.result.name_hint = op.result.name_hint
        op.detach()
        op.erase()


def _slice_origin(op: ttl.BlockSliceOp, compute: ttl.ComputeOp) -> tuple[tuple[int, ...], list[SSAValue]]:
    """The shape of the block a slice (of slices, each of the same rank: a sub-block of a user's
    slice ``a[1]``) is cut from, and its offsets in it: each level's offsets added up, with the
    additions placed before ``compute``."""
    offsets = list(op.offsets)
    while isinstance(op.block.owner, ttl.BlockSliceOp) and len(op.block.owner.offsets) == len(offsets):
        op = op.block.owner
        for j, outer in enumerate(op.offsets):
            add = arith.AddiOp(offsets[j], outer)
            add.location = compute.location
            compute.parent_block().insert_op_before(add, compute)
            offsets[j] = add.result
    return op.block.type.get_shape(), offsets


class TTLAssignDst(DevicePass):
    """Assign DST slots in every ``ttl.compute`` (see the module docstring)."""

    name = "ttl-assign-dst"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op, "compute"):
            capacity = dst_capacity(kernel, self.arch)
            for compute in [c for c in kernel.walk() if isinstance(c, ttl.ComputeOp)]:
                DstAssignment(kernel, compute, capacity).run()
