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

Errors: none.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ModuleOp, i32
from xdsl.ir import Block
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tilefold.ir import tile
from tilefold.ir.ttkernel import api_call
from tilefold.passes.tilelang.affine import constant_op
from tilefold.passes.tilelang.attributes import kernel_function
from tilefold.passes.tilelang.configure_tensor_accessor import device_kernels
from tilefold.passes.tilelang.internal_buffers import cb_entries

EVENT_CALLS = {"consume": "cb_wait_front", "release": "cb_pop_front", "produce_begin": "cb_reserve_back",
               "produce_end": "cb_push_back"}


class _Before:
    """Inserts ops before an anchor with the anchor's location."""

    def __init__(self, anchor):
        self.anchor = anchor
        self.point = InsertPoint.before(anchor)

    def __call__(self, op):
        Rewriter.insert_op(op, self.point)
        op.location = self.anchor.location
        return op

    def c(self, n: int):
        return self(constant_op(n)).result


def _in_loop(outer: _Before, count: int, name: str):
    """``scf.for %name = 0 to count``; returns (inserter into its body, induction variable)."""
    body = Block(arg_types=[i32])
    body.args[0].name_hint = name
    yield_ = scf.YieldOp()
    body.add_op(yield_)
    yield_.location = outer.anchor.location
    outer(scf.ForOp(outer.c(0), outer.c(count), outer.c(1), [], body))
    inner = _Before(yield_)
    inner.anchor = outer.anchor
    return inner, body.args[0]


class LowerCBIntrinsics(ModulePass):
    """CB protocol and block transfers → ttkernel calls (see the module docstring)."""

    name = "lower_cb_intrinsics"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        page_sizes = {cb["index"]: cb["page_size"] for cb in cb_entries(kernel_function(op)).values()}
        for kernel in device_kernels(op):
            for event in [o for o in kernel.walk() if isinstance(o, tile.CbEventOp)]:
                at = _Before(event)
                at(api_call(EVENT_CALLS[event.event], [at.c(event.cb_index), at.c(event.num_pages)]))
                Rewriter.erase_op(event)
            writes = False
            for t in [o for o in kernel.walk() if isinstance(o, (tile.ReadBlockOp, tile.WriteBlockOp))]:
                self._transfer(t, page_sizes[t.cb_index])
                writes |= isinstance(t, tile.WriteBlockOp)
            if writes:
                ret = kernel.body.block.last_op
                assert isinstance(ret, func.ReturnOp)
                _Before(ret)(api_call("noc_async_write_barrier", []))

    def _transfer(self, t, page_size: int) -> None:
        reading = isinstance(t, tile.ReadBlockOp)
        rows, cols, stride = t.geometry()
        at = _Before(t)
        cb = at.c(t.cb_index)
        base = at(api_call("get_write_ptr" if reading else "get_read_ptr", [cb])).result
        base.name_hint = "l1_write_addr" if reading else "l1_read_addr"
        body_r, r = _in_loop(at, rows, "r") if rows > 1 else (at, at.c(0))
        row_page = body_r(arith.AddiOp(t.first_page, body_r(arith.MuliOp(r, body_r.c(stride))))).result
        row_addr = body_r(arith.AddiOp(base, body_r(arith.MuliOp(r, body_r.c(cols * page_size))))).result
        body, c = _in_loop(body_r, cols, "c") if cols > 1 else (body_r, body_r.c(0))
        page = body(arith.AddiOp(row_page, c)).result
        addr = body(arith.AddiOp(row_addr, body(arith.MuliOp(c, body.c(page_size))))).result
        if reading:
            body(api_call("noc_async_read_page", [page, t.accessor, addr, body.c(0)]))
            at(api_call("noc_async_read_barrier", []))
        else:
            body(api_call("noc_async_write_page", [page, t.accessor, addr, body.c(0), body.c(0)]))
            at(api_call("noc_async_writes_flushed", []))
        Rewriter.erase_op(t)
