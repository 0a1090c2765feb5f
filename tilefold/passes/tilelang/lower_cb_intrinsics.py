"""lower_cb_intrinsics (Stage D3): CB protocol points and block transfers → TT-Metalium calls.

Reads: ``tile.cb_event``, ``tile.read_block`` / ``tile.write_block`` (with their accessors)
in the device kernels; ``tt.cb.*`` (page sizes).
Writes:

- ``consume`` → ``cb_wait_front``, ``release`` → ``cb_pop_front``, ``produce_begin`` →
  ``cb_reserve_back``, ``produce_end`` → ``cb_push_back`` (CB index and page count);
- a block read → ``get_write_ptr`` and, for each tile (r, c) of the block,
  ``noc_async_read_page(first_page + r * row_stride + c, accessor, write_ptr + (r * cols +
  c) * page_size)``, then ``noc_async_read_barrier`` (before the push that follows);
- a block write → ``get_read_ptr``, ``noc_async_write_page`` per tile, then
  ``noc_async_writes_flushed`` (before the pop that follows), and one
  ``noc_async_write_barrier`` at the end of the writer.

- a column of the tensor into a vector (``tile.read_rows`` / ``write_rows`` with ``column``) →
  element by element through the scratch page, each from its own tensor row;
- a tensor element (``tile.read_element``) in a data-movement kernel → the 64 bytes holding it
  (aligned: a DRAM read keeps its address modulo the DRAM alignment) read (``get_noc_addr`` +
  ``noc_async_read`` + barrier) into the kernel's scratch
  page, or into a page of its mailbox CB (reserved before, pushed after) when compute needs it
  too, and the element loaded from L1; in the compute kernel → ``cb_wait_front`` of the mailbox,
  ``read_tile_value`` of the word holding the element (shifted and masked for 8- and 16-bit
  elements), ``cb_pop_front``.

Each CB protocol point, transfer and element is rewritten in place by a ``RewritePattern``
(:class:`LowerCbEvent`, :class:`LowerTransfer`) under xDSL's pattern walker.

Errors: none.
"""

from __future__ import annotations

from typing import NamedTuple

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from tilefold.ir import tile
from tilefold.ir.ttkernel import THREAD_ATTR, L1LoadOp, L1StoreOp, api_call
from tilefold.ir.attributes import kernel_function
from tilefold.passes.builder import LocatedBuilder, rewrite_once
from tilefold.passes.tilelang.configure_tensor_accessor import device_kernels
from tilefold.ir.attributes import cb_entries

ELEMENT_WINDOW = 64          # bytes read around a tensor element: the largest DRAM alignment

EVENT_CALLS = {"consume": "cb_wait_front", "release": "cb_pop_front", "produce_begin": "cb_reserve_back",
               "produce_end": "cb_push_back"}


def _arith(at: LocatedBuilder, cls):
    """``cls(a, b)`` placed by ``at``, as its result value."""
    return lambda a, b: at(cls(a, b)).result


class LowerCbEvent(RewritePattern):
    """A CB protocol point → its ``cb_*`` call on the CB index and page count."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, event: tile.CbEventOp, rewriter: PatternRewriter) -> None:
        at = LocatedBuilder.before(event)
        at(api_call(EVENT_CALLS[event.event], [at.c(event.cb_index), at.c(event.num_pages)]))
        rewriter.erase(event)


class LowerTransfer(RewritePattern):
    """A block read or write → its NOC page, face-row or element transfers (see the module docstring)."""

    def __init__(self, page_sizes: dict[int, int], scratch):
        self.page_sizes = page_sizes
        self.scratch = scratch

    def match_and_rewrite(self, t: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(t, tile.TRANSFERS):
            return
        page_size = self.page_sizes[t.cb_index]
        if isinstance(t, (tile.ReadRowsOp, tile.WriteRowsOp)) and t.is_column:
            _column(t, page_size, self.scratch)
        elif isinstance(t, (tile.ReadRowsOp, tile.WriteRowsOp)) and t.by_element:
            _elements(t, page_size, self.scratch)
        elif isinstance(t, (tile.ReadRowsOp, tile.WriteRowsOp)):
            _rows(t, page_size)
        else:
            _transfer(t, page_size)
        rewriter.erase(t)


class LowerElement(RewritePattern):
    """A tensor element → its read (data movement) or its hand-over from the reader (compute);
    see the module docstring."""

    def __init__(self, compute: bool, scratch):
        self.compute = compute
        self.scratch = scratch

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tile.ReadElementOp, rewriter: PatternRewriter) -> None:
        at = LocatedBuilder.before(op)
        add, mul = _arith(at, arith.AddiOp), _arith(at, arith.MuliOp)
        div, rem = _arith(at, arith.DivUIOp), _arith(at, arith.RemUIOp)
        eb = op.element_bytes.value.data
        mailbox = op.mailbox_cb
        # the element's byte in its tile, and in the 64-byte window read around it (DRAM reads
        # keep their address modulo the DRAM alignment, 32 B on Wormhole and 64 B on Blackhole)
        face_row = add(_face_row(at, rem(op.row, at.c(32))), mul(div(rem(op.col, at.c(32)), at.c(16)), at.c(256)))
        in_tile = mul(add(face_row, rem(op.col, at.c(16))), at.c(eb))
        in_window = rem(in_tile, at.c(ELEMENT_WINDOW))
        if self.compute:
            at(api_call("cb_wait_front", [at.c(mailbox), at.c(1)]))
            word = at(api_call("read_tile_value", [at.c(mailbox), at.c(0), div(in_window, at.c(4))])).result
            value = word
            if eb < 4:
                shift = mul(rem(in_window, at.c(4)), at.c(8))
                value = at(arith.AndIOp(at(arith.ShRUIOp(word, shift)).result, at.c((1 << (8 * eb)) - 1))).result
            at(api_call("cb_pop_front", [at.c(mailbox), at.c(1)]))
        else:
            if mailbox is not None:
                at(api_call("cb_reserve_back", [at.c(mailbox), at.c(1)]))
                buf = at(api_call("get_write_ptr", [at.c(mailbox)])).result
            else:
                buf = self.scratch
            tiles_per_row = op.tiles_per_row.value.data
            page = add(mul(div(op.row, at.c(32)), at.c(tiles_per_row)), div(op.col, at.c(32)))
            window = mul(div(in_tile, at.c(ELEMENT_WINDOW)), at.c(ELEMENT_WINDOW))
            noc = at(api_call("get_noc_addr", [page, op.accessor, window])).result
            at(api_call("noc_async_read", [noc, buf, at.c(ELEMENT_WINDOW)]))
            at(api_call("noc_async_read_barrier", []))
            value = at(L1LoadOp(add(buf, in_window), at.c(0), 8 * eb)).result
            if mailbox is not None:
                at(api_call("cb_push_back", [at.c(mailbox), at.c(1)]))
        op.result.replace_all_uses_with(value)
        rewriter.erase(op)


class LowerCBIntrinsics(ModulePass):
    """CB protocol and block transfers → ttkernel calls (see the module docstring)."""

    name = "lower-cb-intrinsics"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        entries = cb_entries(kernel_function(op))
        page_sizes = {cb["index"]: cb["page_size"] for cb in entries.values()}
        scratch = {thread: _scratch(kernel, entries.get(f"{thread}_scratch"))
                   for kernel in device_kernels(op) for thread in [kernel.sym_name.data]}
        for kernel in device_kernels(op):
            writes = any(isinstance(o, tile.WRITES) for o in kernel.walk())
            thread_scratch = scratch[kernel.sym_name.data]
            compute = kernel.attributes[THREAD_ATTR].data == "compute"
            rewrite_once(kernel.body, LowerCbEvent(), LowerTransfer(page_sizes, thread_scratch),
                         LowerElement(compute, thread_scratch))
            if writes:
                ret = kernel.body.block.last_op
                assert isinstance(ret, func.ReturnOp)
                LocatedBuilder.before(ret)(api_call("noc_async_write_barrier", []))


def _transfer(t, page_size: int) -> None:
    reading = isinstance(t, tile.ReadBlockOp)
    rows, cols, stride = t.geometry()
    at = LocatedBuilder.before(t)
    cb = at.c(t.cb_index)
    base = at(api_call("get_write_ptr" if reading else "get_read_ptr", [cb])).result
    base.name_hint = "l1_write_addr" if reading else "l1_read_addr"
    body_r, r = at.loop(rows, "r") if rows > 1 else (at, at.c(0))
    row_page = body_r(arith.AddiOp(t.first_page, body_r(arith.MuliOp(r, body_r.c(stride))))).result
    row_addr = body_r(arith.AddiOp(base, body_r(arith.MuliOp(r, body_r.c(cols * page_size))))).result
    body, c = body_r.loop(cols, "c") if cols > 1 else (body_r, body_r.c(0))
    page = body(arith.AddiOp(row_page, c)).result
    addr = body(arith.AddiOp(row_addr, body(arith.MuliOp(c, body.c(page_size))))).result
    if reading:
        body(api_call("noc_async_read_page", [page, t.accessor, addr, body.c(0)]))
        at(api_call("noc_async_read_barrier", []))
    else:
        body(api_call("noc_async_write_page", [page, t.accessor, addr, body.c(0), body.c(0)]))
        at(api_call("noc_async_writes_flushed", []))

class _RowWalk(NamedTuple):
    """The loop over a block's local rows ``q`` that both row copies share: the CB's L1 base, and
    per row the tensor's first page of its tile row, the tensor's and the CB tile's face-row offsets."""

    reading: bool
    cols: int
    eb: int                      # bytes per element
    at: LocatedBuilder           # before the copy
    base: object                 # the CB's write (reading) or read pointer
    body: LocatedBuilder         # inside the row loop
    page_row: object
    src_face_row: object
    local_row_tile: object
    dst_face_row: object

    @staticmethod
    def of(t, page_size: int) -> "_RowWalk":
        reading = isinstance(t, tile.ReadRowsOp)
        rows, cols, row_step, tiles_per_row, eb = t.geometry()
        local_tiles_per_row = -(-cols // 32)
        at = LocatedBuilder.before(t)
        cb = at.c(t.cb_index)
        base = at(api_call("get_write_ptr" if reading else "get_read_ptr", [cb])).result
        body_q, q = at.loop(rows, "q") if rows > 1 else (at, at.c(0))
        add, mul = _arith(body_q, arith.AddiOp), _arith(body_q, arith.MuliOp)
        div, rem = _arith(body_q, arith.DivUIOp), _arith(body_q, arith.RemUIOp)
        g = add(t.first_row, mul(q, body_q.c(row_step)))
        page_row = mul(div(g, body_q.c(32)), body_q.c(tiles_per_row))
        src_face_row = _face_row(body_q, rem(g, body_q.c(32)))
        local_row_tile = mul(div(q, body_q.c(32)), body_q.c(local_tiles_per_row * page_size))
        dst_face_row = _face_row(body_q, rem(q, body_q.c(32)))
        return _RowWalk(reading, cols, eb, at, base, body_q, page_row, src_face_row, local_row_tile, dst_face_row)


def _rows(t, page_size: int) -> None:
    """A block moved one face row (16 values) at a time: local row q is tensor row
    ``first_row + q * row_step``; each 16-value piece goes between its place in the tensor's
    tile and its place in the CB's tile (``noc_async_read`` / ``noc_async_write`` of
    ``get_noc_addr(page, accessor, offset)``)."""
    w = _RowWalk.of(t, page_size)
    reading, cols, eb, at, base, body_q = w.reading, w.cols, w.eb, w.at, w.base, w.body
    base.name_hint = "l1_write_addr" if reading else "l1_read_addr"
    page_row, src_face_row, local_row_tile, dst_face_row = w.page_row, w.src_face_row, w.local_row_tile, w.dst_face_row
    pieces = -(-cols // 16)
    body, h = body_q.loop(pieces, "h") if pieces > 1 else (body_q, body_q.c(0))
    add, mul = _arith(body, arith.AddiOp), _arith(body, arith.MuliOp)
    div, rem = _arith(body, arith.DivUIOp), _arith(body, arith.RemUIOp)
    col = add(t.first_col, mul(h, body.c(16)))
    page = add(page_row, div(col, body.c(32)))
    src_half = div(rem(col, body.c(32)), body.c(16))
    tensor_offset = mul(add(src_face_row, mul(src_half, body.c(256))), body.c(eb))
    local_tile = add(local_row_tile, mul(div(h, body.c(2)), body.c(page_size)))
    local_offset = mul(add(dst_face_row, mul(rem(h, body.c(2)), body.c(256))), body.c(eb))
    l1 = add(base, add(local_tile, local_offset))
    noc = body(api_call("get_noc_addr", [page, t.accessor, tensor_offset])).result
    if reading:
        body(api_call("noc_async_read", [noc, l1, body.c(16 * eb)]))
        at(api_call("noc_async_read_barrier", []))
    else:
        body(api_call("noc_async_write", [l1, noc, body.c(16 * eb)]))
        at(api_call("noc_async_writes_flushed", []))

def _scratch(kernel, entry):
    """The L1 address of a kernel's scratch page: reserved at the kernel's start, pushed and
    popped at its end (the kernel is its CB's only producer and consumer)."""
    if entry is None:
        return None
    cb = entry["index"]
    top = LocatedBuilder.before(kernel.body.block.first_op)
    top(api_call("cb_reserve_back", [top.c(cb), top.c(1)]))
    addr = top(api_call("get_write_ptr", [top.c(cb)])).result
    addr.name_hint = "scratch"
    end = LocatedBuilder.before(kernel.body.block.last_op)
    end(api_call("cb_push_back", [end.c(cb), end.c(1)]))
    end(api_call("cb_wait_front", [end.c(cb), end.c(1)]))
    end(api_call("cb_pop_front", [end.c(cb), end.c(1)]))
    return addr

def _elements(t, page_size: int, scratch) -> None:
    """A block whose columns are not whole face rows, one element at a time: the 16-value
    face row holding the element in the tensor is read into the scratch page, then the
    element is copied into the CB's tile (a read) or patched into the face row, which is
    written back (a write: read-modify-write, so the rest of the face row keeps its values)."""
    w = _RowWalk.of(t, page_size)
    reading, cols, eb, base, body_q = w.reading, w.cols, w.eb, w.base, w.body
    page_row, src_face_row, local_row_tile, dst_face_row = w.page_row, w.src_face_row, w.local_row_tile, w.dst_face_row
    body, e = body_q.loop(cols, "e") if cols > 1 else (body_q, body_q.c(0))
    add, mul = _arith(body, arith.AddiOp), _arith(body, arith.MuliOp)
    div, rem = _arith(body, arith.DivUIOp), _arith(body, arith.RemUIOp)
    col = add(t.first_col, e)
    page = add(page_row, div(col, body.c(32)))
    piece = mul(add(src_face_row, mul(div(rem(col, body.c(32)), body.c(16)), body.c(256))), body.c(eb))
    in_piece = add(scratch, mul(rem(col, body.c(16)), body.c(eb)))
    local_tile = add(local_row_tile, mul(div(e, body.c(32)), body.c(page_size)))
    local_elem = add(dst_face_row, add(mul(div(rem(e, body.c(32)), body.c(16)), body.c(256)), rem(e, body.c(16))))
    l1 = add(base, add(local_tile, mul(local_elem, body.c(eb))))
    noc = body(api_call("get_noc_addr", [page, t.accessor, piece])).result
    _through_scratch(body, reading, noc, scratch, in_piece, l1, eb)


def _through_scratch(body, reading: bool, noc, scratch, in_piece, l1, eb: int) -> None:
    """One element between the tensor's face row at ``noc`` and the CB at ``l1``: the face row is
    read into the scratch page; a read copies the element (at ``in_piece``) into the CB, a write
    patches it into the face row and writes the face row back."""
    body(api_call("noc_async_read", [noc, scratch, body.c(16 * eb)]))
    body(api_call("noc_async_read_barrier", []))
    width = 8 * eb
    if reading:
        body(L1StoreOp(l1, body.c(0), body(L1LoadOp(in_piece, body.c(0), width)).result, width))
    else:
        body(L1StoreOp(in_piece, body.c(0), body(L1LoadOp(l1, body.c(0), width)).result, width))
        body(api_call("noc_async_write", [scratch, noc, body.c(16 * eb)]))
        body(api_call("noc_async_write_barrier", []))


def _column(t, page_size: int, scratch) -> None:
    """A vector of one column of the tensor, one element at a time: local element ``c`` (at (0, c)
    of the CB's tiles) is tensor element (``first_row + c * row_step``, ``first_col``); the face row
    holding it is read into the scratch page (and, for a write, patched and written back)."""
    reading = isinstance(t, tile.ReadRowsOp)
    _, cols, row_step, tiles_per_row, eb = t.geometry()
    at = LocatedBuilder.before(t)
    base = at(api_call("get_write_ptr" if reading else "get_read_ptr", [at.c(t.cb_index)])).result
    body, c = at.loop(cols, "c") if cols > 1 else (at, at.c(0))
    add, mul = _arith(body, arith.AddiOp), _arith(body, arith.MuliOp)
    div, rem = _arith(body, arith.DivUIOp), _arith(body, arith.RemUIOp)
    row = add(t.first_row, mul(c, body.c(row_step)))
    page = add(mul(div(row, body.c(32)), body.c(tiles_per_row)), div(t.first_col, body.c(32)))
    piece = mul(add(_face_row(body, rem(row, body.c(32))), mul(div(rem(t.first_col, body.c(32)), body.c(16)),
                                                               body.c(256))), body.c(eb))
    in_piece = add(scratch, mul(rem(t.first_col, body.c(16)), body.c(eb)))
    local = add(mul(div(c, body.c(32)), body.c(page_size)),
                mul(add(mul(div(rem(c, body.c(32)), body.c(16)), body.c(256)), rem(c, body.c(16))), body.c(eb)))
    noc = body(api_call("get_noc_addr", [page, t.accessor, piece])).result
    _through_scratch(body, reading, noc, scratch, in_piece, add(base, local), eb)


def _face_row(at, r):
    """The element offset of row ``r`` (0..31) of a tile's first face column: face
    ``(r // 16) * 2``, row ``r % 16``."""
    add, mul = _arith(at, arith.AddiOp), _arith(at, arith.MuliOp)
    div, rem = _arith(at, arith.DivUIOp), _arith(at, arith.RemUIOp)
    return add(mul(div(r, at.c(16)), at.c(512)), mul(rem(r, at.c(16)), at.c(16)))
