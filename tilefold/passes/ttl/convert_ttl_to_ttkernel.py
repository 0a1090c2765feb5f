"""``convert-ttl-to-ttkernel``: replace every ttl op by TT-Metalium API calls (ttkernel dialect).

Reads: kernels after ``ttl-annotate-cb-associations``. Writes: ``ttkernel``, ``arith``, ``scf``
and ``affine`` ops only (``lower-affine`` then removes ``affine.apply``):

* each ``ttl.bind_cb`` becomes ``get_compile_time_arg_val(i)`` — the circular buffer indices are
  the kernel's first compile-time arguments, in binding order, as the TT-Lang multi-tile lowering shows;
* ``ttl.node_coord``, ``ttl.tensor_address`` and the pipe counts become runtime arguments (``get_arg_val``);
* a ``ttkernel.extern_call`` (``ttl.call_extern_func``) stays, its buffer operands replaced by
  their circular buffer indices and its tensor operands by their ``TensorAccessor`` s;
* compute kernels: :mod:`.ttkernel_compute`; data movement kernels: :mod:`.ttkernel_data_movement`.

Written as xDSL ``RewritePattern`` s, as ``xdsl.transforms.lower_affine`` is, under two
``PatternRewriteWalker`` s per kernel: a forward walk in which :class:`LowerTTLOp` inserts each ttl
op's replacement before it and erases it when it yields no value (or its values were replaced:
``ttl.node_coord``, the pipe counts and peers); ops whose values later ttl ops still read (the
circular buffers, blocks, DST tiles) are erased by :class:`EraseLowered` in a reverse walk, users
before definitions.

The function attributes ``ttl.compile_args`` / ``ttl.runtime_args`` say what each argument is
(:mod:`.ttkernel_builder`). Errors: none for valid ttl IR.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from tilefold.ir import ttl
from tilefold.ir.ttkernel import DPrintCBOp, DPrintTilesOp, ExternCallOp
from tilefold.ir.ttl_metadata import RUNTIME_WORDS_ATTR, KernelArgAttr
from tilefold.passes.builder import rewrite_once
from tilefold.passes.ttl.common import kernels
from tilefold.passes.ttl.ttkernel_builder import KernelEmitter, is_ttl
from tilefold.passes.ttl.ttkernel_compute import ComputeLowering
from tilefold.passes.ttl.ttkernel_data_movement import DataMovementLowering


class LowerTTLOp(RewritePattern):
    """One ttl op of a kernel → its ttkernel replacement (by the kernel's compute or data movement
    lowering), inserted before it; the op is erased now when nothing reads it, else recorded in
    ``lowered`` for :class:`EraseLowered`."""

    def __init__(self, module: ModuleOp, kernel: func.FuncOp):
        self.emitter = KernelEmitter(kernel)
        self.cbs = {}
        for bind in [op for op in kernel.walk() if isinstance(op, ttl.BindCBOp)]:
            name = bind.result.name_hint or f"cb{bind.index}"
            self.cbs[bind.index] = self.emitter.compile_arg(KernelArgAttr.of("cb", bind.index), name)
        self.role = kernel.attributes[ttl.KERNEL_ROLE_ATTR].data
        self.lowering = (ComputeLowering(self.emitter, self.cbs) if self.role == "compute"
                         else DataMovementLowering(self.emitter, self.cbs, module))
        self.lowered: set[Operation] = set()

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, ttl.BindCBOp):
            pass                                        # its compile-time argument is in the prologue
        elif isinstance(op, ttl.NodeCoordOp):
            dim = op.dim.value.data
            value = self.emitter.runtime(KernelArgAttr.of("node", dim), ("node_x", "node_y", "device_index")[dim])
            op.result.replace_all_uses_with(value)
        elif isinstance(op, ttl.TensorAddressOp):      # ttl.raw_addr: the address the host passes
            value = self.emitter.tensor_address(op.arg_index.value.data, op.tensor_name.data)
            op.result.replace_all_uses_with(value)
        elif isinstance(op, (ExternCallOp, DPrintTilesOp, DPrintCBOp)):
            # their buffers become their CB indices, an external call's tensors accessors
            op.operands = [self.cbs[v.owner.index] if isinstance(v.owner, ttl.BindCBOp) else
                           self.lowering.accessors[v.owner.arg_index.value.data] if isinstance(v.owner, ttl.TensorOp)
                           else v for v in op.operands]
            return
        elif isinstance(op, ttl.PipeCountOp):
            arg = KernelArgAttr.of("pipe_count", op.net.value.data, op.role.data)
            op.result.replace_all_uses_with(self.emitter.runtime(arg, f"{op.role.data}_pipes"))
        elif not self.lowering.lower(op):
            if is_ttl(op):
                raise AssertionError(f"convert-ttl-to-ttkernel has no rule for {op.name} in a {self.role} kernel")
            return
        if any(r.uses for r in op.results):
            self.lowered.add(op)
        else:
            rewriter.erase(op)


class EraseLowered(RewritePattern):
    """Erase an op :class:`LowerTTLOp` replaced whose values are no longer read (walked in
    reverse, so its users are gone first)."""

    def __init__(self, lowered: set[Operation]):
        self.lowered = lowered

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op not in self.lowered:
            return
        if any(r.uses for r in op.results):
            users = {u.operation.name for r in op.results for u in r.uses}
            raise AssertionError(f"{op.name} still has users {users} after lowering")
        rewriter.erase(op)


def lower_kernel(module: ModuleOp, kernel: func.FuncOp) -> None:
    lower = LowerTTLOp(module, kernel)
    rewrite_once(kernel.body, lower)
    PatternRewriteWalker(EraseLowered(lower.lowered), apply_recursively=False,
                         walk_reverse=True).rewrite_region(kernel.body)
    lower.emitter.finish()
    for name in [n for n in kernel.attributes if n.startswith("ttl.") and n not in (
            ttl.KERNEL_ROLE_ATTR, "ttl.compile_args", "ttl.runtime_args", RUNTIME_WORDS_ATTR)]:
        del kernel.attributes[name]


class ConvertTTLToTTKernel(ModulePass):
    """Lower ttl to ttkernel (see the module docstring)."""

    name = "convert-ttl-to-ttkernel"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op):
            lower_kernel(op, kernel)
