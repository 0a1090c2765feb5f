"""split_device_kernel (Stage D1): one persistent program → reader, compute and writer kernels.

Reads: the kernel function after Stage C (``tile.read_block`` for the reader,
``tile.write_block`` for the writer, ``tile.stmt`` for compute, ``tile.cb_event`` for the
thread on its side of the CB — producer events to the CB's producer, consumer events to its
consumer — and the loops and index arithmetic around them) and ``tt.cb.*``,
``tt.compute_config``.

Writes the ``func.func`` kernels, ``@reader`` and ``@writer`` (``ttkernel.thread =
"noc"``) and ``@compute`` (``"compute"``, with ``ttkernel.compute_config``) — each one that
has work (a kernel that only copies blocks has no compute kernel). Each gets the
loops and ``if`` statements that hold something of its own, as ``scf.for`` / ``scf.if``, with the
index arithmetic it needs;
compute statements are inlined (their DST sections stay for Stage D to lower). The
TileLang function keeps its ``tt.*`` attributes and an empty body; it describes the host
side (``tt.kernels`` names the kernels by role).

Errors: none.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.transforms.dead_code_elimination import region_dce

from tilefold.ir import tile
from tilefold.ir.ttkernel import COMPUTE_CONFIG_ATTR, THREAD_ATTR, compute_config_attr
from tilefold.ir.attributes import get_attr, kernel_function, set_attr
from tilefold.ir.buffer_layouts import entry_format
from tilefold.passes.tilelang.common import compile_error
from tilefold.passes.tilelang.internal_buffers import add_cb, scratch_for
from tilefold.ir.attributes import cb_entries

THREADS = ("reader", "compute", "writer")


def owner_thread(op: Operation, cbs_by_index: dict[int, dict]) -> str | None:
    """The thread an op of the persistent program belongs to (None: anyone may need it)."""
    if isinstance(op, tile.READS):
        return "reader"
    if isinstance(op, tile.WRITES):
        return "writer"
    if isinstance(op, tile.StmtOp):
        return "compute"
    if isinstance(op, tile.CbEventOp):
        cb = cbs_by_index[op.cb_index]
        side = cb["producer"] if op.by_producer else cb["consumer"]
        return "compute" if side == "none" else side
    return None


class _Splitter:
    def __init__(self, thread: str, cbs_by_index: dict[int, dict]):
        self.thread = thread
        self.cbs = cbs_by_index

    def wanted(self, op: Operation) -> bool:
        """Does ``op`` (or something inside it) belong to this thread?"""
        return any(owner_thread(o, self.cbs) == self.thread for o in op.walk())

    def block(self, src: Block, dst: Block, mapper: dict) -> None:
        for op in src.ops:
            if isinstance(op, (func.ReturnOp, tile.AllocOp)):
                continue
            if isinstance(op, tile.ForOp):
                if self.wanted(op):
                    self.loop(op, dst, mapper)
                continue
            if isinstance(op, tile.IfOp):
                if self.wanted(op):
                    self.branch(op, dst, mapper)
                continue
            owner = owner_thread(op, self.cbs)
            if owner is None:
                if op.regions:
                    raise compile_error(op, f"{op.name} cannot be split into reader / compute / writer kernels")
                dst.add_op(op.clone(value_mapper=mapper))
            elif owner == self.thread:
                if isinstance(op, tile.StmtOp):
                    for inner in op.body.block.ops:
                        dst.add_op(inner.clone(value_mapper=mapper))
                else:
                    dst.add_op(op.clone(value_mapper=mapper))

    def branch(self, op: tile.IfOp, dst: Block, mapper: dict) -> None:
        blocks = []
        for region in (op.then_region, op.else_region):
            block = Block()
            self.block(region.block, block, mapper)
            block.add_op(scf.YieldOp())
            blocks.append(block)
        has_else = len(blocks[1].ops) > 1
        new = scf.IfOp(mapper.get(op.cond, op.cond), [], [blocks[0]], [blocks[1]] if has_else else None)
        new.location = op.location
        for inner in new.walk():
            if isinstance(inner, scf.YieldOp):
                inner.location = op.location
        dst.add_op(new)

    def loop(self, op: tile.ForOp, dst: Block, mapper: dict) -> None:
        step = arith.ConstantOp.from_int_and_width(op.step.value.data, 32)
        step.location = op.location
        dst.add_op(step)
        body = Block(arg_types=[op.iv.type])
        body.args[0].name_hint = op.iv.name_hint
        mapper[op.iv] = body.args[0]
        self.block(op.body.block, body, mapper)
        body.add_op(scf.YieldOp())
        loop = scf.ForOp(mapper.get(op.lb, op.lb), mapper.get(op.ub, op.ub), step.result, [], body)
        loop.location = op.location
        dst.add_op(loop)


def hand_over_elements(host: func.FuncOp, kernels: dict[str, func.FuncOp]) -> None:
    """Tensor elements the kernels read (``tile.read_element``): the data-movement kernels read
    theirs through a scratch page; one the compute kernel needs (it cannot read the NOC) the
    reader reads at the same point into a two-page mailbox CB and pushes, for compute to wait
    for, read and pop."""
    def elements(thread: str) -> dict:
        fn = kernels.get(thread)
        return {} if fn is None else {o.key.value.data: o for o in fn.walk() if isinstance(o, tile.ReadElementOp)}

    for thread in ("compute", "writer", "reader"):      # the reader keeps the ones it hands to compute
        if thread in kernels:
            drop_unused_elements(kernels[thread], set(elements("compute")) if thread == "reader" else set())
    found = {t: elements(t) for t in kernels}
    for key, op in found.get("compute", {}).items():
        reader = found.get("reader", {}).get(key)
        if reader is None:
            raise compile_error(op, f"an element of {op.buffer_name} steers the compute kernel here, where the "
                                    "reader kernel has nothing to read: tilefold hands such an element to compute "
                                    "from the reader, so read a block (T.copy) under the same loops and conditions")
        fmt = entry_format(get_attr(host, f"tt.buffer.{op.buffer_name}"))
        mailbox = add_cb(host, f"{op.buffer_name}_element{key}", (32, 32), fmt, 2, "reader", "compute")
        for side in (op, reader):
            new = side.rebuilt(mailbox=mailbox)
            new.location = side.location
            Rewriter.replace_op(side, new)
    for thread in ("reader", "writer"):
        if thread in kernels and any(o.mailbox_cb is None for o in kernels[thread].walk()
                                     if isinstance(o, tile.ReadElementOp)):
            scratch_for(host, thread)


def drop_unused_elements(kernel: func.FuncOp, keep: set[int]) -> None:
    """Remove the tensor elements a kernel got with the loops around them but does not use (and
    the index arithmetic only they used), except those whose key is in ``keep``."""
    while True:
        unused = [o for o in kernel.walk() if isinstance(o, tile.ReadElementOp) and o.result.first_use is None
                  and o.key.value.data not in keep]
        if not unused:
            return
        for o in unused:
            Rewriter.erase_op(o)
        region_dce(kernel.body)


class SplitDeviceKernel(ModulePass):
    """Reader / compute / writer kernels (see the module docstring)."""

    name = "split-device-kernel"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = kernel_function(op)
        cbs_by_index = {cb["index"]: cb for cb in cb_entries(kernel).values()}
        config = get_attr(kernel, "tt.compute_config")
        kernels, built = {}, {}
        for thread in THREADS:
            splitter = _Splitter(thread, cbs_by_index)
            if not splitter.wanted(kernel):
                continue
            fn = func.FuncOp(thread, FunctionType.from_lists([], []))
            fn.location = kernel.location
            fn.attributes[THREAD_ATTR] = StringAttr("compute" if thread == "compute" else "noc")
            if thread == "compute":
                fn.attributes[COMPUTE_CONFIG_ATTR] = compute_config_attr(**config)
            splitter.block(kernel.body.block, fn.body.block, {})
            ret = func.ReturnOp()
            ret.location = kernel.location
            fn.body.block.add_op(ret)
            region_dce(fn.body)
            op.body.block.add_op(fn)
            kernels[thread] = thread
            built[thread] = fn
        hand_over_elements(kernel, built)
        for inner in reversed(list(kernel.body.block.ops)):
            if not isinstance(inner, func.ReturnOp):
                Rewriter.erase_op(inner, safe_erase=False)
        set_attr(kernel, "tt.kernels", kernels)
