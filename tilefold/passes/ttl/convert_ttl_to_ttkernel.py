"""``convert-ttl-to-ttkernel``: replace every ttl op by TT-Metalium API calls (ttkernel dialect).

Reads: kernels after ``ttl-annotate-cb-associations``. Writes: ``ttkernel``, ``arith``, ``scf``
and ``affine`` ops only (``lower-affine`` then removes ``affine.apply``):

* each ``ttl.bind_cb`` becomes ``get_compile_time_arg_val(i)`` — the circular buffer indices are
  the kernel's first compile-time arguments, in binding order, as the TT-Lang multi-tile lowering shows;
* ``ttl.node_coord`` and the pipe counts become runtime arguments (``get_arg_val``);
* compute kernels: :mod:`.ttkernel_compute`; data movement kernels: :mod:`.ttkernel_data_movement`.

The function attributes ``ttl.compile_args`` / ``ttl.runtime_args`` say what each argument is
(:mod:`.ttkernel_builder`). Errors: none for valid ttl IR.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilefold.ir import ttl
from tilefold.ir.ttl_metadata import KernelArgAttr
from tilefold.passes.ttl.common import kernels
from tilefold.passes.ttl.ttkernel_builder import KernelEmitter, erase_lowered, is_ttl
from tilefold.passes.ttl.ttkernel_compute import ComputeLowering
from tilefold.passes.ttl.ttkernel_data_movement import DataMovementLowering


def lower_kernel(module: ModuleOp, kernel) -> None:
    emitter = KernelEmitter(kernel)
    cbs = {}
    for bind in [op for op in kernel.walk() if isinstance(op, ttl.BindCBOp)]:
        name = bind.result.name_hint or f"cb{bind.index}"
        cbs[bind.index] = emitter.compile_arg(KernelArgAttr.of("cb", bind.index), name)
    role = kernel.attributes[ttl.KERNEL_ROLE_ATTR].data
    lowering = ComputeLowering(emitter, cbs) if role == "compute" else DataMovementLowering(emitter, cbs, module)
    lowered = []
    for op in list(kernel.walk()):
        if op is kernel:
            continue
        if isinstance(op, ttl.BindCBOp):
            lowered.append(op)
        elif isinstance(op, ttl.NodeCoordOp):
            dim = op.dim.value.data
            op.result.replace_all_uses_with(emitter.runtime(KernelArgAttr.of("node", dim), ("node_x", "node_y")[dim]))
            lowered.append(op)
        elif isinstance(op, ttl.PipeCountOp):
            arg = KernelArgAttr.of("pipe_count", op.net.value.data, op.role.data)
            op.result.replace_all_uses_with(emitter.runtime(arg, f"{op.role.data}_pipes"))
            lowered.append(op)
        elif lowering.lower(op):
            lowered.append(op)
        elif is_ttl(op):
            raise AssertionError(f"convert-ttl-to-ttkernel has no rule for {op.name} in a {role} kernel")
    emitter.finish()
    erase_lowered(lowered)
    for name in [n for n in kernel.attributes if n.startswith("ttl.") and n not in (
            ttl.KERNEL_ROLE_ATTR, "ttl.compile_args", "ttl.runtime_args")]:
        del kernel.attributes[name]


class ConvertTTLToTTKernel(ModulePass):
    """Lower ttl to ttkernel (see the module docstring)."""

    name = "convert-ttl-to-ttkernel"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op):
            lower_kernel(op, kernel)
