"""The data movement half of ``convert-ttl-to-ttkernel``: accessors, page copies, barriers, pipes.

Reads: a data movement kernel after ``ttl-annotate-cb-associations``, and the module's pipe-net
table (``ttl.pipe_nets``: per net, the buffer blocks are received into and the block size). Writes:

* per operation tensor, at the kernel's start: ``TensorAccessorArgs<n>()`` (chained), the buffer
  address as a runtime argument and ``TensorAccessor(args, address, page_size)``;
* ``ttl.cb_reserve`` / ``ttl.cb_wait`` → ``cb_reserve_back`` / ``cb_wait_front`` and the block's L1
  address ``get_write_ptr`` / ``get_read_ptr`` (plus the blocks held before it);
* ``ttl.copy`` of a tensor slice → a loop over the slice's pages (tiles, or rows of a row-major
  tensor, at the block's row pitch in L1): ``noc_async_read_page(page, accessor, l1)`` into the
  block, or ``noc_async_write_page`` from it; a slice of part of each row reads
  ``noc_async_read(get_noc_addr(page, accessor, byte offset), l1, bytes)`` and writes
  ``noc_async_write_page(page, accessor, l1, bytes, byte offset)``; ``ttl.wait`` → ``noc_async_read_barrier`` /
  ``noc_async_write_barrier``; ``ttl.group_wait`` → both as needed;
* ``ttl.copy`` between two blocks (``byte_count`` bytes) → ``noc_async_write(src, get_noc_addr(my_x,
  my_y, dst), byte_count)`` to the node's own L1; its ``wait`` is a write barrier;
* pipes, with semaphores per net (a ``valid`` per receive slot, on a receiver, says the block of
  the pipe with that slot arrived — pipes reaching a common node have different slots, so flags of
  two senders never merge; ``one`` holds the value multicast into it, then a ``ready`` per pipe a node
  sources, on the sender, counting the receivers of that pipe ready for the next block):
  a receiver's ``ttl.pipe_recv`` posts the L1 address of its block to the sender's ``address``
  word (through its ``outbox``) and increments the sender's ``ready`` (unless it is the sender and
  this kernel sends on the net too: a receive of its own node's pipe in another kernel credits it),
  and its ``wait`` waits for its slot's ``valid`` and clears it; a sender's ``ttl.pipe_send`` waits
  for every remote receiver, clears ``ready``, multicasts the block (its first ``byte_count``
  bytes when the send has one) to the destination rectangle
  (``noc_async_write_multicast``, ``_loopback_src`` when it is one of the destinations) at the
  address its receivers posted (its own write pointer when it only sends to itself), then
  multicasts the pipe's slot's ``valid`` set to that address (``one`` holds it); its ``wait`` is a
  write barrier; a receiver's ``wait`` checks (a kernel assert) that it is its block's address: a
  multicast writes one address on every receiver, so receivers whose blocks sit at different
  positions of their buffers are an error, never a block written elsewhere;
* ``ttl.wait_any``: a ``while`` loop reading the candidates' ``valid`` semaphores as volatile L1
  words (never blocking) until one is set or was completed before, taking the one nearest the
  start in cyclic order, then that receive's completion as its ``wait`` does it (a receive from a
  landing net, below: its slot's semaphore, and the copy out of the slot);
* a net whose nodes both send and receive (a ring, a scatter-gather with loopback) has a landing
  buffer, one slot per pipe reaching a common node, each slot with a semaphore: a receiving kernel
  holds the whole buffer from its start and credits the ``ready`` of each of its sources once, a
  send waits for its credits and multicasts into its slot and sets the slot's semaphore, and the
  receive's ``wait`` waits for that semaphore, copies the slot into the block (a NOC read of the
  node's own L1, ``byte_count`` bytes when the receive has one), clears it and credits the sender
  again — so no send waits for a receiver to reach its receive. When every pipe of the net reaches
  one other node, a slot holds ``landing_depth`` blocks (the deepest ``block_count`` of the buffers
  the net's kernels send from or receive into), each with
  its own flag and, on the sender, its own credit; sender and receiver count the blocks they sent
  and received (words each keeps for itself) to take the next block of the slot in turn;
* a landing net whose receives all land in tensor slices has a DRAM mailbox instead (its
  ``mailbox_depth``: blocks per node and receive slot): a send waits until its ``ready`` counts
  one more block than it sent (the receiver gives it the depth at its start and one per block
  taken), writes the block's pages into the receiver's next mailbox block, and after a write
  barrier increments the receiver's slot ``flag``; the receive's ``wait`` waits for the flag to
  count one more block than it took, reads that block's pages into its own and credits the sender.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, i1, i32
from xdsl.ir import Block, Operation, SSAValue

from tilefold.ir import ttl
from tilefold.errors import CompileError
from tilefold.ir.locations import source_location
from tilefold.ir.ttkernel import (AssertInRangeOp, KernelAssertOp, L1LoadOp, L1StoreOp, MyXOp, MyYOp,
                                  TensorAccessorArgsOp, TensorAccessorOp, api_call, constant_int)
from tilefold.layout.formats import DataFormat
from tilefold.passes.ttl.annotate_cb_associations import cb_geometry
from tilefold.passes.ttl.common import bind_of
from tilefold.ir.ttl_metadata import KernelArgAttr, landing_layout, net_layout, net_semaphores, pipe_semaphores
from tilefold.passes.ttl.ttkernel_builder import KernelEmitter


def pipe_table(module: ModuleOp) -> dict[int, dict]:
    """Pipe net index -> {position, recv_cb, block_bytes} from the module's ``ttl.pipe_nets``."""
    attr = module.attributes.get("ttl.pipe_nets")
    out = {}
    if attr is None:
        return out
    entries = [entry.to_dict() for entry in attr.data]
    base = 0
    flags = sum(net_semaphores(f) for f in entries)      # the landing slots' semaphores follow the nets' own
    for position, fields in enumerate(entries):
        out[fields["net"]] = {"position": position, "recv_cb": fields["recv_cb"], "block_bytes": fields["block_bytes"],
                              "landing_cb": fields.get("landing_cb"), "receive_slots": fields.get("receive_slots"),
                              "ready_slots": fields.get("ready_slots") or 1,
                              "valid_slots": fields.get("valid_slots") or 1, "layout": net_layout(fields),
                              "depth": fields.get("landing_depth") or 1, "base": base,
                              "mailbox": fields.get("mailbox_depth"),
                              "receive_buffers": fields.get("receive_buffers") or 1}
        landing = landing_layout(fields)
        out[fields["net"]].update({f"first_{kind}": flags + at for kind, at in landing.items() if kind != "count"})
        base += net_semaphores(fields)
        flags += landing["count"]
    return out


def _page_size(tensor_type) -> int:
    fmt = ttl.data_format_of(tensor_type)
    element = tensor_type.element_type
    if isinstance(element, ttl.TileType):
        return fmt.tile_size(element.height.data, element.width.data)
    return tensor_type.get_shape()[-1] * fmt.element_size


class _Rows(NamedTuple):
    """Elements a converting copy walks: ``count`` rows of ``width`` elements, the rows
    ``src_stride`` / ``dst_stride`` elements apart (tiles: one row of all the block's elements)."""

    count: int
    width: int
    src_stride: int
    dst_stride: int


class DataMovementLowering:
    """Lowers the ttl ops of one data movement kernel (see the module docstring)."""

    def __init__(self, emitter: KernelEmitter, cbs: dict[int, SSAValue], module: ModuleOp):
        self.e = emitter
        self.cbs = cbs
        self.module = module
        self.pipes = pipe_table(module)
        # a sender writes at its own write pointer of the receiving buffer, which may be a buffer
        # only other kernels use: bind it too, among the leading circular-buffer arguments
        for op in emitter.kernel.walk():
            if isinstance(op, ttl.PipeSendOp):
                recv_cb = self.pipes[op.net_index]["recv_cb"]
                if recv_cb not in cbs:
                    cbs[recv_cb] = emitter.compile_arg(KernelArgAttr.of("cb", recv_cb), f"recv_cb{recv_cb}")
        # the nets this kernel sends on / receives from: a node's receive of its own pipe (loopback)
        # made by another kernel of the node credits the sender as a remote receiver does
        self.sent_nets = {op.net_index for op in emitter.kernel.walk() if isinstance(op, ttl.PipeSendOp)}
        self.received_nets = {op.net_index for op in emitter.kernel.walk() if isinstance(op, ttl.PipeRecvOp)}
        self.accessors: dict[int, SSAValue] = {}
        self.last_args: SSAValue | None = None
        self.addresses: dict[SSAValue, SSAValue] = {}     # block value -> its L1 address (i32)
        self.semaphores: dict[tuple[int, int], SSAValue] = {}
        self.opened: set[int] = set()         # landing nets whose buffer this kernel holds (open_landing)
        binds = [b for b in emitter.kernel.walk() if isinstance(b, ttl.BindCBOp)]
        self.cb_pages = {b.index: cb_geometry(b.result.type)[2] for b in binds}
        self.cb_block_pages = {b.index: cb_geometry(b.result.type)[1] for b in binds}
        # a read between data formats -> (staging address, block address, elements, tensor format)
        self.pending_conversions: dict[SSAValue, tuple] = {}

    def cb(self, value: SSAValue) -> SSAValue:
        return self.cbs[bind_of(value).index]

    # -- tensors ------------------------------------------------------------------------------

    def tensor(self, op: ttl.TensorOp) -> None:
        index = op.arg_index.value.data
        name = op.tensor_name.data
        self.accessors[index] = self.accessor(KernelArgAttr.of("accessor", index),
                                              lambda: self.e.tensor_address(index, name),
                                              _page_size(op.result.type), name)

    def accessor(self, compile_arg: KernelArgAttr, address, page_size: int, name: str) -> SSAValue:
        """A ``TensorAccessor`` in the kernel's prologue: its ``TensorAccessorArgs`` the next
        compile-time arguments (chained after the previous accessor's), ``address()`` its base."""
        e = self.e
        e.compile_args.append(compile_arg)
        if self.last_args is None:
            args = e.at_start(TensorAccessorArgsOp(cta_offset=len(e.compile_args) - 1))
        else:
            args = e.at_start(TensorAccessorArgsOp(prev=self.last_args))
        args.result.name_hint = f"{name}_args"
        self.last_args = args.result
        base = address()
        size = e.at_start(arith.ConstantOp.from_int_and_width(page_size, 32))
        accessor = e.at_start(TensorAccessorOp(args.result, base, size.result))
        accessor.result.name_hint = name
        return accessor.result

    # -- ops ------------------------------------------------------------------------------------

    def lower(self, op: Operation) -> bool:
        e = self.e
        if isinstance(op, ttl.TensorOp):
            self.tensor(op)
        elif isinstance(op, (ttl.CBReserveOp, ttl.CBWaitOp)):
            self.acquire(op)
        elif isinstance(op, (ttl.CBPushOp, ttl.CBPopOp)):
            _, per_block, _ = cb_geometry(op.cb.type)
            name = "cb_push_back" if isinstance(op, ttl.CBPushOp) else "cb_pop_front"
            e.call(name, [self.cb(op.cb), e.index(per_block * op.blocks, op)], op)
        elif isinstance(op, ttl.BlockSliceOp):
            self.view(op)
        elif isinstance(op, ttl.CBDrainedOp):
            waiting = e.call("cb_pages_available_at_front", [self.cb(op.cb), e.index(1, op)], op).results[0]
            drained = e.before(arith.CmpiOp(waiting, e.i32(0, op), "eq"), op).result
            e.before(KernelAssertOp(drained, [op.message.data]), op, op.location)
        elif isinstance(op, ttl.CopyOp):
            self.copy(op)
        elif isinstance(op, ttl.WaitOp):
            self.wait(op)
        elif isinstance(op, ttl.WaitAnyOp):
            self.wait_any(op)
        elif isinstance(op, ttl.GroupWaitOp):
            for kind in op.kind_names:
                e.call("noc_async_read_barrier" if kind == "read" else "noc_async_write_barrier", [], op)
        elif isinstance(op, ttl.PipePeerOp):
            net, slot, role, name = op.net.value.data, op.slot.value.data, op.role.data, op.field.data
            value = e.runtime(KernelArgAttr.of("pipe_peer", net, role, slot, name), f"{role}{slot}_peer_{name}")
            op.result.replace_all_uses_with(value)
        elif isinstance(op, ttl.SemaphoreOp):
            self.user_semaphore(op)
        elif isinstance(op, ttl.PipeSendOp):
            self.send(op)
        elif isinstance(op, ttl.PipeRecvOp):
            self.receive(op)
        elif isinstance(op, (ttl.UnsafeElementReadOp, ttl.UnsafeElementWriteOp)):
            self.element(op)
        else:
            return isinstance(op, ttl.TensorSliceOp)
        return True

    def acquire(self, op) -> None:
        e = self.e
        cb = self.cb(op.cb)
        page, per_block, _ = cb_geometry(op.cb.type)
        reserve = isinstance(op, ttl.CBReserveOp)
        pages = per_block * (op.held_before + 1)
        e.call("cb_reserve_back" if reserve else "cb_wait_front", [cb, e.index(pages, op)], op)
        pointer = e.call("get_write_ptr" if reserve else "get_read_ptr", [cb], op).results[0]
        if op.held_before:
            pointer = e.add(pointer, e.i32(op.held_before * per_block * page, op), op)
        pointer.name_hint = f"{op.result.name_hint or 'blk'}_addr"
        self.addresses[op.result] = pointer

    def view(self, op: ttl.BlockSliceOp) -> None:
        """``ttl.block.subview``: the L1 address of its first tile (its tiles follow one another)."""
        e = self.e
        page, _, _ = cb_geometry(bind_of(op.block).result.type)
        shape = op.block.type.get_shape()
        offset = None
        for d, value in enumerate(op.offsets):
            known = constant_int(value)
            if known == 0:
                continue
            stride = math.prod(shape[d + 1:]) * page
            term = e.i32(known * stride, op) if known is not None else e.mul(e.to_i32(value, op), e.i32(stride, op), op)
            offset = term if offset is None else e.add(offset, term, op)
        address = self.addresses[op.block]
        if offset is not None:
            address = e.add(address, offset, op)
            address.name_hint = f"{op.result.name_hint or 'view'}_addr"
        self.addresses[op.result] = address

    # -- element access -------------------------------------------------------------------------

    def element(self, op) -> None:
        """``ttl.unsafe_element_read`` / ``_write``: an L1 load / store of one element of a held block, at
        its index in the block's pages (tiles in face order, or rows at the block's row pitch)."""
        e = self.e
        block_type = op.block.type
        fmt = ttl.data_format_of(block_type)
        if fmt not in (DataFormat.Float16_b, DataFormat.Float32):
            raise CompileError(f"ttl.unsafe element access needs a bfloat16 or float32 block, not {fmt.ttnn_name}",
                               source_location(op))
        width = 16 if fmt is DataFormat.Float16_b else 32
        row, col = e.to_i32(op.row, op), e.to_i32(op.col, op)

        def const(v):
            return e.i32(v, op)

        def div(a, v):
            return e.before(arith.DivUIOp(a, const(v)), op).result

        def rem(a, v):
            return e.before(arith.RemUIOp(a, const(v)), op).result

        shape = block_type.get_shape()
        if isinstance(block_type.element_type, ttl.TileType):
            tile = e.add(e.mul(div(row, 32), const(shape[-1]), op), div(col, 32), op)
            r, c = rem(row, 32), rem(col, 32)
            face = e.add(e.mul(div(r, 16), const(2), op), div(c, 16), op)
            within = e.add(e.mul(rem(r, 16), const(16), op), rem(c, 16), op)
            index = e.add(e.mul(tile, const(1024), op), e.add(e.mul(face, const(256), op), within, op), op)
        else:
            index = e.add(e.mul(row, const(ttl.row_major_pitch(shape)), op), col, op)
        address = self.addresses[op.block]
        if isinstance(op, ttl.UnsafeElementReadOp):
            load = e.before(L1LoadOp(address, index, width), op)
            op.result.replace_all_uses_with(load.result)
        else:
            e.before(L1StoreOp(address, index, op.value, width), op)

    # -- copies ---------------------------------------------------------------------------------

    def copy(self, op: ttl.CopyOp) -> None:
        e = self.e
        if not isinstance(op.src.owner, ttl.TensorSliceOp) and not isinstance(op.dst.owner, ttl.TensorSliceOp):
            self.copy_bytes(op)
            return
        reading = isinstance(op.src.owner, ttl.TensorSliceOp)
        piece = (op.src if reading else op.dst).owner
        block = op.dst if reading else op.src
        tensor_op = piece.tensor.owner
        accessor = self.accessors[tensor_op.arg_index.value.data]
        units = tensor_op.result.type.get_shape()
        sizes = list(piece.static_sizes)
        tiled = isinstance(tensor_op.result.type.element_type, ttl.TileType)
        page, _, _ = cb_geometry(bind_of(block).result.type)
        part = None
        if not tiled:          # pages are rows: drop the last (element) dimension
            units, sizes = units[:-1], sizes[:-1]
            offsets = list(piece.offsets)[:-1]
            block_format = ttl.data_format_of(block.type)
            width = piece.static_sizes[-1]
            raw = op.attributes.get(ttl.RAW_PAGE_ATTR)
            if raw is not None:         # ttl.copy_tensor_page: the row's bytes into the block as they are
                page = raw.value.data
            else:
                page = ttl.row_major_pitch(bind_of(block).result.type.block_shape) * block_format.element_size
                if width != tensor_op.result.type.get_shape()[-1]:      # a part of each row: bytes of a page
                    part = (self.byte_offset(piece.offsets[-1], block_format.element_size, op),
                            e.i32(width * block_format.element_size, op))
        else:
            offsets = list(piece.offsets)
        strides = [math.prod(units[i + 1:]) for i in range(len(units))]
        self.check_offsets(op, piece, tensor_op)
        address = self.addresses[block]
        staging = op.attributes.get(ttl.STAGING_CB_ATTR)
        if staging is not None:
            # between data formats: the NOC moves the tensor's pages through a staging area, which
            # this core converts from (a read, at its wait) or into (a write, before it starts)
            staging_cb = self.cbs[staging.value.data]
            e.call("cb_reserve_back", [staging_cb, e.index(math.prod(sizes), op)], op)    # private: never pushed
            scratch = e.call("get_write_ptr", [staging_cb], op).results[0]
            scratch.name_hint = "staging"
            page = _page_size(tensor_op.result.type)
            tensor_format = ttl.data_format_of(tensor_op.result.type)
            block_format = ttl.data_format_of(block.type)
            if tiled:
                tile = tensor_op.result.type.element_type
                rows = _Rows(1, math.prod(sizes) * tile.height.data * tile.width.data, 0, 0)
            else:               # rows padded to the L1 alignment, differently in each format
                width = piece.static_sizes[-1]
                tensor_row = page // tensor_format.element_size
                block_row = ttl.row_major_pitch(bind_of(block).result.type.block_shape)
                rows = _Rows(math.prod(sizes), width, tensor_row if reading else block_row,
                             block_row if reading else tensor_row)
            if reading:
                self.pending_conversions[op.result] = (scratch, address, rows, tensor_format)
            else:
                self.convert(address, scratch, rows, block_format, op)
            address = scratch
        self.page_loop(op, offsets, sizes, strides, accessor, address, page,
                       "noc_async_read_page" if reading else "noc_async_write_page", part)

    def copy_bytes(self, op: ttl.CopyOp) -> None:
        """A copy between two blocks of this node: a NOC write of the source block's first
        ``byte_count`` bytes to this node's own NOC address of the destination block."""
        e = self.e
        x = e.before(MyXOp(), op).result
        y = e.before(MyYOp(), op).result
        target = e.call("get_noc_addr_xy", [x, y, self.addresses[op.dst]], op).results[0]
        e.call("noc_async_write", [self.addresses[op.src], target, e.i32(op.byte_count.value.data, op)], op)

    def byte_offset(self, offset: SSAValue, element_size: int, anchor: Operation) -> SSAValue:
        """The byte offset in its row of a row-major slice starting at element ``offset``."""
        known = constant_int(offset)
        if known is not None:
            return self.e.i32(known * element_size, anchor)
        value = self.e.to_i32(offset, anchor)
        return self.e.mul(value, self.e.i32(element_size, anchor), anchor) if element_size != 1 else value

    def convert(self, src: SSAValue, dst: SSAValue, rows: "_Rows", src_format: DataFormat,
                anchor: Operation, copy: bool = False) -> None:
        """Convert ``rows`` of elements at L1 ``src`` (bfloat16 or float32) into the other format at
        ``dst``, one element per iteration: bfloat16 widens exactly, float32 rounds to nearest even
        (``copy``: 32-bit words copied as they are)."""
        e = self.e
        end = anchor
        row = None
        if rows.count > 1:
            outer = Block(arg_types=[IndexType()])
            outer.args[0].name_hint = "row"
            e.before(scf.ForOp(e.index(0, anchor), e.index(rows.count, anchor), e.index(1, anchor), [], outer),
                     anchor)
            outer.add_op(scf.YieldOp())
            end, row = outer.last_op, outer.args[0]
        body = Block(arg_types=[IndexType()])
        body.args[0].name_hint = "element"
        e.before(scf.ForOp(e.index(0, end), e.index(rows.width, end), e.index(1, end), [], body), end)
        body.add_op(scf.YieldOp())
        end = body.last_op
        i = j = body.args[0]
        if row is not None:
            i = e.add(e.mul(row, e.index(rows.src_stride, end), end), i, end)
            j = e.add(e.mul(row, e.index(rows.dst_stride, end), end), j, end)
        i, j = e.to_i32(i, end), e.to_i32(j, end)
        if copy:
            e.before(L1StoreOp(dst, j, e.before(L1LoadOp(src, i, 32), end).result, 32), end)
            return
        sixteen = e.i32(16, end)
        if src_format is DataFormat.Float16_b:
            bits = e.before(L1LoadOp(src, i, 16), end).result
            wide = e.before(arith.ShLIOp(bits, sixteen), end).result
            e.before(L1StoreOp(dst, j, wide, 32), end)
            return
        bits = e.before(L1LoadOp(src, i, 32), end).result
        lsb = e.before(arith.AndIOp(e.before(arith.ShRUIOp(bits, sixteen), end).result, e.i32(1, end)), end).result
        biased = e.add(e.add(bits, e.i32(0x7FFF, end), end), lsb, end)
        narrow = e.before(arith.ShRUIOp(biased, sixteen), end).result
        e.before(L1StoreOp(dst, j, narrow, 16), end)

    def check_offsets(self, op: ttl.CopyOp, piece: ttl.TensorSliceOp, tensor_op: ttl.TensorOp) -> None:
        """A watcher ``ASSERT`` before the copy for each offset the front end could not bound: it must
        leave room for the slice inside its dimension (else the copy would wrap into other rows)."""
        units = tensor_op.result.type.get_shape()
        unit = "tile" if isinstance(tensor_op.result.type.element_type, ttl.TileType) else "element"
        sizes = piece.static_sizes
        for d in piece.checked_dims:
            last = units[d] - sizes[d]
            message = (f"{tensor_op.tensor_name.data}[...]: dimension {d} (a {sizes[d]}-{unit} slice of "
                       f"{units[d]} {unit}s)")
            self.e.before(AssertInRangeOp(piece.offsets[d], last, message), op, op.location)

    def page_loop(self, op, offsets, sizes, strides, accessor, address, page_size, call, part=None) -> None:
        """One page transfer per page of the slice, ``page_size`` bytes apart in L1; ``part``
        ``(byte offset, bytes)``: of a part of each page (rows of a row-major tensor) — a read from
        the page's NOC address plus the offset, a write of that many bytes at the offset."""
        e = self.e
        anchor = op
        base = None
        folded = 0
        for off, stride in zip(offsets, strides):
            known = constant_int(off)
            if known is not None:
                folded += known * stride
                continue
            term = off if stride == 1 else e.mul(off, e.index(stride, op), op)
            base = term if base is None else e.add(base, term, op)
        if base is not None and folded:
            base = e.add(base, e.index(folded, op), op)
        elif base is None and (folded or all(size == 1 for size in sizes)):
            base = e.index(folded, op)
        if base is not None:
            base.name_hint = "first_page"
        ivs = []
        if any(size > 1 for size in sizes):
            zero, one = e.index(0, op), e.index(1, op)
            bounds = {size: e.index(size, op) for size in sizes if size > 1}
        for size in sizes:
            if size == 1:
                ivs.append(None)
                continue
            body = Block(arg_types=[IndexType()])
            body.args[0].name_hint = "t"
            e.before(scf.ForOp(zero, bounds[size], one, [], body), anchor, op.location)
            body.add_op(scf.YieldOp())
            anchor = body.last_op
            ivs.append(body.args[0])
        page, local = base, None
        local_strides = [math.prod(sizes[i + 1:]) for i in range(len(sizes))]
        for iv, stride, lstride in zip(ivs, strides, local_strides):
            if iv is None:
                continue
            step = iv if stride == 1 else e.mul(iv, e.index(stride, anchor), anchor)
            page = step if page is None else e.add(page, step, anchor)
            term = iv if lstride == 1 else e.mul(iv, e.index(lstride, anchor), anchor)
            local = term if local is None else e.add(local, term, anchor)
        l1 = address
        if local is not None:
            offset = e.mul(local, e.index(page_size, anchor), anchor)
            l1 = e.add(address, e.to_i32(offset, anchor), anchor)
        if not isinstance(page.owner, Block):
            page.name_hint = "page"
        if part is None:
            e.call(call, [page, accessor, l1], anchor, location=op.location)
        elif call == "noc_async_read_page":
            source = e.call("get_noc_addr", [page, accessor, part[0]], anchor, location=op.location).results[0]
            e.call("noc_async_read", [source, l1, part[1]], anchor, location=op.location)
        else:
            e.call(call, [page, accessor, l1, part[1], part[0]], anchor, location=op.location)

    def wait(self, op: ttl.WaitOp) -> None:
        e = self.e
        source = op.transfer.owner
        if isinstance(source, ttl.CopyOp):
            reading = isinstance(source.src.owner, ttl.TensorSliceOp)
            e.call("noc_async_read_barrier" if reading else "noc_async_write_barrier", [], op)
            pending = self.pending_conversions.pop(source.result, None)
            if pending is not None:
                self.convert(*pending, op)
        elif isinstance(source, ttl.PipeSendOp):
            e.call("noc_async_write_barrier", [], op)
        elif self.pipes[source.net_index]["mailbox"]:
            self.mailbox_receive(source, op)
        elif self.pipes[source.net_index]["landing_cb"] is not None:
            self.land(source, op)
        else:
            self.complete_receive(source, op)

    def complete_receive(self, source: ttl.PipeRecvOp, anchor: Operation) -> None:
        """Wait for the ``valid`` semaphore of a receive (the address its sender wrote the block at),
        check that address is this receiver's block and clear it."""
        e = self.e
        valid = self.valid(source, "dst", anchor)
        e.call("noc_semaphore_wait_min", [valid, e.i32(1, anchor)], anchor)
        written = e.before(L1LoadOp(valid, e.i32(0, anchor), 32), anchor).result
        written.name_hint = "written_addr"
        mine = self.e_address(source)
        same = e.before(arith.CmpiOp(written, mine, "eq"), anchor).result
        e.before(KernelAssertOp(same, [
            "the pipe's sender wrote the block at L1 address ", " but this receiver's block is at ",
            "; the receivers of one multicast must receive into blocks at the same position of their "
            "dataflow buffer (the same number of blocks reserved and pushed before it on every receiver)"],
            [written, mine]), anchor)
        e.call("noc_semaphore_set", [valid, e.i32(0, anchor)], anchor)

    def wait_any(self, op: ttl.WaitAnyOp) -> None:
        """``ttl.wait_any``: a loop polling the receives' ``valid`` semaphores (plain volatile reads of
        L1, which never block) until one is set or was completed before; of those it takes the first
        from ``start % n`` on (Python's ``%``, for a negative start too), cyclically, then completes that one as its ``wait`` does (the semaphore
        wait there returns at once)."""
        e = self.e
        sources = [value.owner for value in op.requests]
        n = len(sources)
        landed = [self.pipes[source.net_index]["landing_cb"] is not None for source in sources]
        count = e.index(n, op)
        known = constant_int(op.start)
        if known is not None:
            start = e.index(known % n, op)
        else:
            # a runtime start is a signed 32-bit number: its truncated remainder, moved up by n when
            # negative, is Python's start % n (an unsigned remainder would be wrong below zero)
            rest = e.before(arith.RemSIOp(op.start, count), op).result
            below = e.before(arith.CmpiOp(rest, e.index(0, op), "slt"), op).result
            lifted = e.before(arith.AddiOp(rest, count), op).result
            start = e.before(arith.SelectOp(below, lifted, rest), op).result
        start.name_hint = "scan_from"
        # a net with a landing buffer flags its pipe's slot (1 once the block landed there); a deep
        # slot's flag is its next block's, read again on every poll (None here)
        deep = [land and self.pipes[source.net_index]["depth"] > 1 for source, land in zip(sources, landed)]
        valids = [None if d else self.landing_slot(source, "dst")[1] if land else self.valid(source, "dst", op)
                  for source, land, d in zip(sources, landed, deep)]
        # the distance of each candidate from the first one scanned: its rank in the scan
        ranks = []
        for k in range(n):
            ahead = e.before(arith.SubiOp(e.index(k + n, op), start), op).result
            ranks.append(e.before(arith.RemUIOp(ahead, count), op).result)
        before, after = Block(), Block(arg_types=[IndexType()])
        mark = scf.YieldOp()
        before.add_op(mark)
        mark.location = op.location
        best_rank, best = count, e.index(0, mark)
        zero = e.i32(0, mark)
        for k, (valid, done) in enumerate(zip(valids, op.done)):
            if deep[k]:
                received = self.blocks_received(sources[k], mark)[1]
                valid = self.landing_slot(sources[k], "dst", received, mark)[1]
            word = e.before(L1LoadOp(valid, e.i32(0, mark), 32), mark).result
            word.name_hint = "posted"
            ready = e.before(arith.CmpiOp(word, zero, "ne"), mark).result
            if constant_int(done) != 0:          # completed before (or maybe): counts as complete
                ready = e.before(arith.OrIOp(ready, done), mark).result
            rank = e.before(arith.SelectOp(ready, ranks[k], count), mark).result
            nearer = e.before(arith.CmpiOp(rank, best_rank, "ult"), mark).result
            best_rank = e.before(arith.SelectOp(nearer, rank, best_rank), mark).result
            best = e.before(arith.SelectOp(nearer, e.index(k, mark), best), mark).result
        none = e.before(arith.CmpiOp(best_rank, count, "eq"), mark).result
        e.before(scf.ConditionOp(none, best), mark)
        mark.detach()
        mark.erase()
        after.add_op(scf.YieldOp())
        after.last_op.location = op.location
        loop = e.before(scf.WhileOp([], [IndexType()], [before], [after]), op)
        selected = loop.results[0]
        selected.name_hint = op.result.name_hint or "ready"
        for k, (source, done) in enumerate(zip(sources, op.done)):
            known = constant_int(done)
            if known is not None and known != 0:
                continue                  # completed before: nothing to do when selected
            take = e.before(arith.CmpiOp(selected, e.index(k, op), "eq"), op).result
            if known is None:
                fresh = e.before(arith.XOrIOp(done, e.before(arith.ConstantOp(IntegerAttr(1, i1)), op).result),
                                 op).result
                take = e.before(arith.AndIOp(take, fresh), op).result
            then_block = Block()
            e.before(scf.IfOp(take, [], [then_block]), op)
            end = scf.YieldOp()
            then_block.add_op(end)
            end.location = op.location
            if landed[k]:
                self.land(source, end)
            else:
                self.complete_receive(source, end)
        op.result.replace_all_uses_with(selected)

    # -- pipes ----------------------------------------------------------------------------------

    def semaphore(self, net: int, which: int, anchor: Operation) -> SSAValue:
        key = (net, which)
        if key not in self.semaphores:
            const = self.e.at_start(arith.ConstantOp.from_int_and_width(self.pipes[net]["base"] + which, 32))
            op = self.e.at_start(api_call("get_semaphore", [const.result]))
            layout = self.pipes[net]["layout"]
            op.results[0].name_hint = next(f"{name}_sem" for name in ("address", "outbox", "ready", "one", "valid")
                                           if which >= layout[name])
            self.semaphores[key] = op.results[0]
        return self.semaphores[key]

    def ready(self, net: int, slot, anchor: Operation | None) -> SSAValue:
        """The ``ready`` semaphore of a source's ``slot``-th pipe (an int, or a runtime value at
        ``anchor``; ``anchor`` None: in the prologue) — the same address on every node."""
        return self.slot_semaphore(net, self.pipes[net]["layout"]["ready"], slot, anchor)

    def valid(self, op, role: str, anchor: Operation) -> SSAValue:
        """The ``valid`` semaphore of the receive slot of ``op``'s pipe (the pipe's ``index``): the
        same address on every receiver of the pipe, another one for each pipe a node receives from,
        so two senders' flags never merge into one."""
        if self.pipes[op.net_index]["valid_slots"] == 1:
            return self.semaphore(op.net_index, self.pipes[op.net_index]["layout"]["valid"], anchor)
        return self.slot_semaphore(op.net_index, self.pipes[op.net_index]["layout"]["valid"],
                                   self._field(op, role, "index"), anchor)

    def address_word(self, net: int, slot, anchor: Operation | None) -> SSAValue:
        """The semaphore on a source where the receivers of its ``slot``-th pipe post the L1
        address of the block they receive into (see :meth:`post_address`)."""
        return self.slot_semaphore(net, self.pipes[net]["layout"]["address"], slot, anchor)

    def slot_semaphore(self, net: int, first: int, slot, anchor: Operation | None) -> SSAValue:
        """Semaphore ``first + slot`` of net ``net`` (``slot`` an int or a runtime value)."""
        if isinstance(slot, int):
            return self.semaphore(net, first + slot, anchor)
        base = self.pipes[net]["base"] + first
        if anchor is None:
            wide = self.e.at_start(arith.IndexCastOp(slot, i32)).result
            offset = self.e.at_start(arith.ConstantOp.from_int_and_width(base, 32)).result
            sid = self.e.at_start(arith.AddiOp(wide, offset)).result
            return self.e.at_start(api_call("get_semaphore", [sid])).results[0]
        sid = self.e.to_i32(slot, anchor)
        if base:
            sid = self.e.add(sid, self.e.i32(base, anchor), anchor)
        return self.e.call("get_semaphore", [sid], anchor).results[0]

    def _field(self, op, role: str, field: str) -> SSAValue:
        if op.named is not None:
            return self.e.runtime(KernelArgAttr.of("pipe_named", op.net_index, role, op.slot_index, field),
                                  f"pipe{op.slot_index}_{role}_{field}")
        return self.e.runtime(KernelArgAttr.of("pipe", op.net_index, role, op.slot_index, field),
                              f"{role}{op.slot_index}_{field}")

    def send(self, op: ttl.PipeSendOp) -> None:
        e = self.e
        net = op.net_index
        info = self.pipes[net]
        if info["mailbox"]:
            self.mailbox_send(op)
            return
        ready = self.ready(net, op.slot_index if op.named is None else self._field(op, "src", "src_slot"), op)
        one = self.semaphore(net, info["layout"]["one"], op)
        remote = self._field(op, "src", "remote")
        if net not in self.received_nets:   # its own node's receive, if the pipe reaches it, credits too
            remote = e.before(arith.AddiOp(remote, self._field(op, "src", "loopback")), op).result
        rect = [self._field(op, "src", f) for f in ("x0", "y0", "x1", "y1")]
        deep = info["landing_cb"] is not None and info["depth"] > 1
        loopback = e.before(arith.CmpiOp(self._field(op, "src", "loopback"), e.index(0, op), "ne"), op).result
        if info["landing_cb"] is None and net in self.received_nets and info["receive_buffers"] == 1:
            self.reserve_own_block(op, loopback)
        if deep:            # the next block of the slot (the blocks sent so far, modulo depth): its own credit
            source_slot = op.slot_index if op.named is None else self._field(op, "src", "src_slot")
            sent_word, sent = self.counter(info["first_sent"], source_slot, op, "sent")
            ready = self.credit_word(info, source_slot, sent, op)
        e.call("noc_semaphore_wait", [ready, remote], op)
        e.call("noc_semaphore_set", [ready, e.i32(0, op)], op)
        if deep:
            dst, valid = self.landing_slot(op, "src", sent)
        elif info["landing_cb"] is not None:
            dst, valid = self.landing_slot(op, "src")
        else:
            valid = self.valid(op, "src", op)
            # the receivers' block: the address they posted (a receiver's write pointer of the
            # buffer need not match the sender's, which may never use that buffer); a sender
            # sending only to itself uses its own
            word = self.address_word(net, op.slot_index if op.named is None else self._field(op, "src", "src_slot"),
                                     op)
            posted = e.before(L1LoadOp(word, e.i32(0, op), 32), op).result
            if info["receive_buffers"] > 1:     # its own receive posted too: which buffer it took
                dst = posted
            else:
                # its own write pointer only when it sends to itself alone (a node without that
                # buffer, a tensor-backed one over a tensor without a shard there, never reads it)
                has_remote = e.before(arith.CmpiOp(remote, e.index(0, op), "ne"), op).result
                posted_block, own_block = Block(), Block()
                posted_block.add_op(scf.YieldOp(posted))
                own_block.add_op(own_yield := scf.YieldOp())
                own = e.call("get_write_ptr", [self.cbs[info["recv_cb"]]], own_yield).results[0]
                own_yield.detach()
                own_yield.erase()
                own_block.add_op(scf.YieldOp(own))
                dst = e.before(scf.IfOp(has_remote, [i32], [posted_block], [own_block]), op).results[0]
            dst.name_hint = "recv_addr"
        data = e.call("get_noc_multicast_addr", [*rect, dst], op).results[0]
        flag = e.call("get_noc_multicast_addr", [*rect, valid], op).results[0]
        dests = self._field(op, "src", "dests")
        size = e.i32(op.byte_count.value.data if op.byte_count is not None else info["block_bytes"], op)
        # a landing slot's flag is 1; a receiver's block's flag is the address written, which each
        # receiver checks against its own block (a multicast writes one address on every receiver)
        if deep:
            e.before(L1StoreOp(sent_word, e.i32(0, op), e.add(sent, e.i32(1, op), op), 32), op)
        e.call("noc_semaphore_set", [one, e.i32(1, op) if info["landing_cb"] is not None else dst], op)
        then_block, else_block = Block(), Block()
        branch = e.before(scf.IfOp(loopback, [], [then_block], [else_block]), op)
        for block, suffix in ((then_block, "_loopback_src"), (else_block, "")):
            block.add_op(scf.YieldOp())
            end = block.last_op
            e.call(f"noc_async_write_multicast{suffix}", [self.e_address(op), data, size, dests], end,
                   location=op.location)
            e.call(f"noc_semaphore_set_multicast{suffix}", [one, flag, dests], end, location=op.location)
        del branch

    def reserve_own_block(self, op: ttl.PipeSendOp, loopback: SSAValue) -> None:
        """Before a multicast that reaches its own source (loopback) lands straight in the receivers'
        blocks: on the source, hold a block of the receiving buffer, which this kernel's own receive
        reserves anyway, so the write cannot land in a block its consumer still reads (the remote
        receivers hold theirs before they credit the sender); ``loopback``: whether the pipe reaches
        its source. (A net received into several buffers has its own receive post the block instead.)"""
        e = self.e
        recv_cb = self.pipes[op.net_index]["recv_cb"]
        body = Block()
        e.before(scf.IfOp(loopback, [], [body]), op)
        body.add_op(end := scf.YieldOp())
        e.call("cb_reserve_back", [self.cbs[recv_cb], e.index(self.cb_block_pages[recv_cb], end)], end,
               location=op.location)

    def user_semaphore(self, op: ttl.SemaphoreOp) -> None:
        """A ``ttl.Semaphore`` call: the operation's semaphores follow the pipe nets' (see
        :func:`pipe_semaphores`)."""
        e = self.e
        sid = e.i32(pipe_semaphores(self.module) + op.semaphore.value.data, op)
        address = e.call("get_semaphore", [sid], op).results[0]
        value = e.to_i32(op.value, op)
        action = op.action.data
        if action in ("wait_eq", "wait_min", "set"):
            name = {"wait_eq": "noc_semaphore_wait", "wait_min": "noc_semaphore_wait_min",
                    "set": "noc_semaphore_set"}[action]
            e.call(name, [address, value], op)
            return
        remote = op.remote.value.data
        if action in ("inc_remote", "set_remote"):
            x, y = (e.runtime(KernelArgAttr.from_dict({"kind": "noc", "index": remote, "field": f}), f"node{remote}_{f}")
                    for f in ("x", "y"))
            target = e.call("get_noc_addr_xy", [x, y, address], op).results[0]
            # a set writes the word itself (no copy of it in this node's L1 to send)
            e.call("noc_semaphore_inc" if action == "inc_remote" else "noc_inline_dw_write", [target, value], op)
            return
        rect = [e.runtime(KernelArgAttr.from_dict({"kind": "noc_rect", "index": remote, "field": f}),
                          f"rect{remote}_{f}") for f in ("x0", "y0", "x1", "y1", "dests")]
        e.call("noc_semaphore_set", [address, value], op)
        target = e.call("get_noc_multicast_addr", [*rect[:4], address], op).results[0]
        e.call("noc_semaphore_set_multicast", [address, target, rect[4]], op)

    def landing_slot(self, op, role: str, count: SSAValue | None = None,
                     anchor: Operation | None = None) -> tuple[SSAValue, SSAValue]:
        """The L1 address of the slot of ``op``'s pipe in its net's landing buffer (the same on every
        node: the buffer is never pushed, its write pointer stays put) and the slot's semaphore; with
        ``count`` (the blocks sent or received on it so far) the block of a deep slot it lands in; its
        ops go before ``anchor`` (``op`` by default)."""
        e = self.e
        pipe, op = op, anchor or op
        info = self.pipes[pipe.net_index]
        base = e.call("get_write_ptr", [self.cbs[info["landing_cb"]]], op).results[0]
        block = self.landing_block(info, self._field(pipe, role, "index"), count, op)
        slot = e.add(base, e.mul(block, e.i32(info["block_bytes"], op), op), op)
        flag = e.call("get_semaphore", [e.add(block, e.i32(info["first_flag"], op), op)], op).results[0]
        slot.name_hint, flag.name_hint = "landing_slot", "landing_flag"
        return slot, flag

    def landing_block(self, info: dict, slot, count: SSAValue | int | None, anchor: Operation) -> SSAValue:
        """The block of landing slot ``slot`` a transfer takes: the slot itself on a net one block
        deep; on a deeper one ``slot * depth``, plus ``count`` (the blocks sent or received on it so
        far) modulo the depth when given."""
        e = self.e
        slot = e.to_i32(slot, anchor)
        if info["depth"] == 1:
            return slot
        block = e.mul(slot, e.i32(info["depth"], anchor), anchor)
        if count is None:
            return block
        if isinstance(count, int):
            return e.add(block, e.i32(count % info["depth"], anchor), anchor)
        return e.add(block, e.before(arith.RemUIOp(count, e.i32(info["depth"], anchor)), anchor).result, anchor)

    def counter(self, first: int, index, anchor: Operation, hint: str) -> tuple[SSAValue, SSAValue]:
        """The L1 word (semaphore ``first + index``, which this node keeps for itself) counting the
        blocks a deep landing slot received, or a pipe sent, and its value read before ``anchor``."""
        e = self.e
        word = e.call("get_semaphore", [e.add(e.to_i32(index, anchor), e.i32(first, anchor), anchor)],
                      anchor).results[0]
        word.name_hint = "count_word"
        value = e.before(L1LoadOp(word, e.i32(0, anchor), 32), anchor).result
        value.name_hint = hint
        return word, value

    def blocks_received(self, recv: ttl.PipeRecvOp, anchor: Operation) -> tuple[SSAValue, SSAValue]:
        """The word counting the blocks a deep landing slot of ``recv``'s pipe received so far, and
        its value, read before ``anchor``."""
        return self.counter(self.pipes[recv.net_index]["first_received"], self._field(recv, "dst", "index"), anchor,
                            "received")

    def credit_word(self, info: dict, source_slot, count: SSAValue | int, anchor: Operation) -> SSAValue:
        """The ``ready`` of block ``count`` (modulo the depth) of a deep landing slot, on the sender:
        a credit per block, so each word has one write in flight at a time."""
        e = self.e
        block = self.landing_block(info, source_slot, count, anchor)
        word = e.call("get_semaphore", [e.add(block, e.i32(info["first_credit"], anchor), anchor)],
                      anchor).results[0]
        word.name_hint = "credit"
        return word

    def open_landing(self, net: int) -> None:
        """At the start of a kernel receiving from landing net ``net``: hold the whole landing buffer
        (never pushed: the senders write into it) and tell the source of each pipe the node receives
        from that its slot is free — the first credit of each sender's ``ready``."""
        if net in self.opened:
            return
        self.opened.add(net)
        e, info = self.e, self.pipes[net]
        cb = self.cbs[info["landing_cb"]]
        pages = e.at_start(arith.ConstantOp(IntegerAttr(self.cb_pages[info["landing_cb"]], IndexType()))).result
        e.at_start(api_call("cb_reserve_back", [cb, pages]))
        count = e.runtime(KernelArgAttr.of("pipe_count", net, "dst"), "dst_pipes")
        for slot in range(info["receive_slots"]):
            x, y, me, src_slot = (e.runtime(KernelArgAttr.of("pipe", net, "dst", slot, f), f"dst{slot}_{f}")
                                  for f in ("x", "y", "self", "src_slot"))
            ready = self.ready(net, src_slot, None)
            n = e.at_start(arith.ConstantOp(IntegerAttr(slot, IndexType()))).result
            zero = e.at_start(arith.ConstantOp(IntegerAttr(0, IndexType()))).result
            has = e.at_start(arith.CmpiOp(n, count, "ult")).result
            if net in self.sent_nets:       # its own pipe's slot: this kernel's send needs no credit
                remote = e.at_start(arith.CmpiOp(me, zero, "eq")).result
                cond = e.at_start(arith.AndIOp(has, remote)).result
            else:
                cond = has
            body, end = Block(), scf.YieldOp()
            body.add_op(end)
            one = e.i32(1, end)
            # the credit of each block of the sender's slot
            words = [ready] if info["depth"] == 1 else [self.credit_word(info, src_slot, k, end)
                                                         for k in range(info["depth"])]
            for word in words:
                address = e.call("get_noc_addr_xy", [x, y, word], end).results[0]
                e.call("noc_semaphore_inc", [address, one], end)
            e.at_start(scf.IfOp(cond, [], [body]))

    def land(self, recv: ttl.PipeRecvOp, op: ttl.WaitOp) -> None:
        """The wait of a receive from a landing net: wait for the pipe's flag, copy its slot into
        the block (a NOC read of the node's own L1: the whole block, or the receive's
        ``byte_count`` bytes), clear the flag and give the sender its slot back."""
        e = self.e
        info = self.pipes[recv.net_index]
        received = None
        if info["depth"] > 1:       # the next block of the slot: the blocks received so far, modulo depth
            word, received = self.blocks_received(recv, op)
        slot, flag = self.landing_slot(recv, "dst", received, op)
        e.call("noc_semaphore_wait", [flag, e.i32(1, op)], op)
        size = recv.byte_count.value.data if recv.byte_count is not None else info["block_bytes"]
        x = e.before(MyXOp(), op).result
        y = e.before(MyYOp(), op).result
        source = e.call("get_noc_addr_xy", [x, y, slot], op).results[0]
        e.call("noc_async_read", [source, self.e_address(recv), e.i32(size, op)], op)
        e.call("noc_async_read_barrier", [], op)
        e.call("noc_semaphore_set", [flag, e.i32(0, op)], op)
        if received is not None:
            e.before(L1StoreOp(word, e.i32(0, op), e.add(received, e.i32(1, op), op), 32), op)
        if recv.net_index in self.sent_nets:
            remote = e.before(arith.CmpiOp(self._field(recv, "dst", "self"), e.index(0, op), "eq"), op).result
        else:                                    # the send is another node's, or another kernel's
            remote = e.before(arith.ConstantOp(IntegerAttr(1, i1)), op).result
        then_block = Block()
        e.before(scf.IfOp(remote, [], [then_block]), op)
        then_block.add_op(scf.YieldOp())
        end = then_block.last_op
        if received is None:
            ready = self.ready(recv.net_index, self._field(recv, "dst", "src_slot"), end)
        else:                                   # the credit of the block taken
            ready = self.credit_word(info, self._field(recv, "dst", "src_slot"), received, end)
        sender = e.call("get_noc_addr_xy", [self._field(recv, "dst", "x"), self._field(recv, "dst", "y"), ready], end,
                        location=op.location).results[0]
        e.call("noc_semaphore_inc", [sender, e.i32(1, end)], end, location=op.location)

    # -- DRAM mailboxes ------------------------------------------------------------------------

    def mailbox_accessor(self, net: int, page_size: int) -> SSAValue:
        """The ``TensorAccessor`` of net ``net``'s DRAM mailbox (its pages: blocks of the net's block
        size one after another), made once in the kernel's prologue after the tensors' accessors."""
        key = -1 - net
        if key not in self.accessors:
            self.accessors[key] = self.accessor(
                KernelArgAttr.of("mailbox_accessor", net),
                lambda: self.e.runtime(KernelArgAttr.of("mailbox_address", net), f"mailbox{net}_addr"),
                page_size, f"mailbox{net}")
        return self.accessors[key]

    def mailbox_pages(self, pipe, role: str, count: SSAValue, call: str, op: Operation) -> None:
        """Move ``pipe``'s block to (``noc_async_write_page``) or from (``noc_async_read_page``) block
        ``count`` modulo the depth of its slot in its net's mailbox, page by page, before ``op``."""
        e = self.e
        info = self.pipes[pipe.net_index]
        block = self.e_address(pipe)
        page_size, _, _ = cb_geometry(bind_of(pipe.block).result.type)
        pages = info["block_bytes"] // page_size      # the net's block: a subview sent moves its own tiles
        depth = e.i32(info["mailbox"], op)
        first = e.add(e.to_i32(self._field(pipe, role, "mailbox_block"), op),
                      e.before(arith.RemUIOp(count, depth), op).result, op)
        page = e.mul(first, e.i32(pages, op), op)
        page = e.before(arith.IndexCastOp(page, IndexType()), op).result
        page.name_hint = "mailbox_page"
        self.page_loop(op, [page], [pages], [1], self.mailbox_accessor(pipe.net_index, page_size), block,
                       page_size, call)

    def arrival_flag(self, pipe, role: str, op: Operation) -> SSAValue:
        """The semaphore counting the blocks that arrived in the receive slot of ``pipe``'s route
        (the same address on the sender, which increments it remotely, and the receiver)."""
        e = self.e
        first = self.pipes[pipe.net_index]["first_flag"]
        flag = e.call("get_semaphore", [e.add(e.to_i32(self._field(pipe, role, "index"), op), e.i32(first, op), op)],
                      op).results[0]
        flag.name_hint = "arrived"
        return flag

    def mailbox_send(self, op: ttl.PipeSendOp) -> None:
        """A send on a mailbox net: wait until the receiver has room for one more block (the net's
        ``ready`` counts the blocks it may hold: its depth at the start, one more per block it takes),
        write the block's pages into the receiver's next mailbox block, and once they are written
        count the block on the receiver's slot ``flag``. No receive needs to be posted first."""
        e = self.e
        info = self.pipes[op.net_index]
        source_slot = op.slot_index if op.named is None else self._field(op, "src", "src_slot")
        sent_word, sent = self.counter(info["first_sent"], source_slot, op, "sent")
        ready = self.ready(op.net_index, source_slot, op)
        e.call("noc_semaphore_wait_min", [ready, e.add(sent, e.i32(1, op), op)], op)
        self.mailbox_pages(op, "src", sent, "noc_async_write_page", op)
        e.call("noc_async_write_barrier", [], op)
        flag = self.arrival_flag(op, "src", op)
        x, y = self._field(op, "src", "x0"), self._field(op, "src", "y0")
        e.call("noc_semaphore_inc", [e.call("get_noc_addr_xy", [x, y, flag], op).results[0], e.i32(1, op)], op,
               location=op.location)
        e.before(L1StoreOp(sent_word, e.i32(0, op), e.add(sent, e.i32(1, op), op), 32), op)

    def mailbox_receive(self, recv: ttl.PipeRecvOp, op: ttl.WaitOp) -> None:
        """The wait of a receive from a mailbox net: wait until the slot's ``flag`` counts one block
        more than this node took, read that block's pages from the mailbox into the block, and give
        the sender the room back."""
        e = self.e
        word, received = self.blocks_received(recv, op)
        flag = self.arrival_flag(recv, "dst", op)
        e.call("noc_semaphore_wait_min", [flag, e.add(received, e.i32(1, op), op)], op)
        self.mailbox_pages(recv, "dst", received, "noc_async_read_page", op)
        e.call("noc_async_read_barrier", [], op)
        e.before(L1StoreOp(word, e.i32(0, op), e.add(received, e.i32(1, op), op), 32), op)
        ready = self.ready(recv.net_index, self._field(recv, "dst", "src_slot"), op)
        sender = e.call("get_noc_addr_xy", [self._field(recv, "dst", "x"), self._field(recv, "dst", "y"), ready], op,
                        location=op.location).results[0]
        e.call("noc_semaphore_inc", [sender, e.i32(1, op)], op, location=op.location)

    def open_mailbox(self, net: int) -> None:
        """At the start of a kernel receiving from mailbox net ``net``: give the source of each pipe
        the node receives from room for the depth of its slot."""
        if net in self.opened:
            return
        self.opened.add(net)
        e, info = self.e, self.pipes[net]
        count = e.runtime(KernelArgAttr.of("pipe_count", net, "dst"), "dst_pipes")
        for slot in range(info["receive_slots"]):
            x, y, src_slot = (e.runtime(KernelArgAttr.of("pipe", net, "dst", slot, f), f"dst{slot}_{f}")
                              for f in ("x", "y", "src_slot"))
            ready = self.ready(net, src_slot, None)
            n = e.at_start(arith.ConstantOp(IntegerAttr(slot, IndexType()))).result
            has = e.at_start(arith.CmpiOp(n, count, "ult")).result
            body, end = Block(), scf.YieldOp()
            body.add_op(end)
            address = e.call("get_noc_addr_xy", [x, y, ready], end).results[0]
            e.call("noc_semaphore_inc", [address, e.i32(info["mailbox"], end)], end)
            e.at_start(scf.IfOp(has, [], [body]))

    def e_address(self, op) -> SSAValue:
        return self.addresses[op.block]

    def receive(self, op: ttl.PipeRecvOp) -> None:
        e = self.e
        if self.pipes[op.net_index]["mailbox"]:
            self.open_mailbox(op.net_index)
            return                  # the block lands in the mailbox; the wait reads it
        if self.pipes[op.net_index]["landing_cb"] is not None:
            self.open_landing(op.net_index)
            return                  # the block lands in the landing buffer; the wait copies it
        if op.net_index in self.sent_nets:      # a receive of its own send in this kernel needs no credit
            remote = e.before(arith.CmpiOp(self._field(op, "dst", "self"), e.index(0, op), "eq"), op).result
        else:                                    # the send is another node's, or another kernel's
            remote = e.before(arith.ConstantOp(IntegerAttr(1, i1)), op).result
        then_block = Block()
        own_block = None
        if op.net_index in self.sent_nets and self.pipes[op.net_index]["receive_buffers"] > 1:
            # a receive of this kernel's own send posts its block for that send, which has no
            # other way to know which of the net's buffers it took
            own_block = Block()
            own_block.add_op(own_end := scf.YieldOp())
            word = self.address_word(op.net_index, self._field(op, "dst", "src_slot"), own_end)
            e.before(L1StoreOp(word, e.i32(0, own_end), self.e_address(op), 32), own_end)
        e.before(scf.IfOp(remote, [], [then_block], [own_block] if own_block is not None else None), op)
        then_block.add_op(scf.YieldOp())
        end = then_block.last_op
        self.post_address(op, end)
        ready = self.ready(op.net_index, self._field(op, "dst", "src_slot"), end)
        sender = e.call("get_noc_addr_xy", [self._field(op, "dst", "x"), self._field(op, "dst", "y"), ready], end,
                        location=op.location).results[0]
        e.call("noc_semaphore_inc", [sender, e.i32(1, end)], end, location=op.location)

    def post_address(self, op: ttl.PipeRecvOp, anchor: Operation) -> None:
        """Before a remote receiver credits its sender: write the L1 address of the block it
        receives into to the sender's address word of the pipe (through the net's outbox
        semaphore), and wait until that write landed, so the sender reads it once credited."""
        e = self.e
        net = op.net_index
        outbox = self.semaphore(net, self.pipes[net]["layout"]["outbox"], anchor)
        e.call("noc_semaphore_set", [outbox, self.e_address(op)], anchor, location=op.location)
        word = self.address_word(net, self._field(op, "dst", "src_slot"), anchor)
        mailbox = e.call("get_noc_addr_xy", [self._field(op, "dst", "x"), self._field(op, "dst", "y"), word], anchor,
                         location=op.location).results[0]
        e.call("noc_semaphore_set_remote", [outbox, mailbox], anchor, location=op.location)
        e.call("noc_async_write_barrier", [], anchor, location=op.location)
