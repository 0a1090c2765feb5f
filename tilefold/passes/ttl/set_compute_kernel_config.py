"""``ttl-set-compute-kernel-config``: decide the compute config of each compute kernel.

Reads: compute kernels (their tile types) and the operation's explicit choices, the function
attributes ``ttl.fp32_dest_acc_en``, ``ttl.dst_full_sync_en``, ``ttl.math_fidelity`` and
``ttl.math_approx_mode`` (from ``@ttl.operation(...)``). Writes: ``ttkernel.compute_config``
(math fidelity, fp32 DST accumulation, full-sync DST, approximate SFPU) on each compute kernel;
the DST capacity the next pass allocates against follows from it (8 / 4 tiles per acquire for
16-bit / 32-bit DST in half-sync mode, 16 / 8 in full sync).

Policy: an explicit choice wins; otherwise DST is 32-bit when any tile the kernel computes on
is float32 (a 16-bit DST would round it), int32 or uint32, or, as TT-Lang compiles it (its ``matmul-full-fp32``
option, on unless ``ttl.matmul_full_fp32`` is false), when the kernel has a matmul — so the K
products accumulate in float32 — and no bfloat16 broadcast (TT-Lang keeps DST 16-bit for those);
math fidelity is HiFi4 and DST is double buffered.

Reductions in full float32 (TT-Lang's ``reduce-full-fp32`` option, on unless
``ttl.reduce_full_fp32`` is false): on Blackhole, as TT-Lang compiles them, every reduction except
a row reduction (``REDUCE_ROW``, which that lowering gets wrong on Blackhole) is marked
``ttl.full_fp32`` — it lowers to ``reduce_init`` / ``reduce_tile`` / ``reduce_uninit`` with
``enforce_fp32_accumulation``, reads float32 operands whole instead of as TF32, and makes the
kernel's DST 32-bit. Wormhole keeps the TF32 path (TT-Lang never uses full float32 there).

Errors: none.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr

from tilefold.ir import ttl
from tilefold.ir.ttkernel import COMPUTE_CONFIG_ATTR, compute_config_attr
from tilefold.layout.formats import DataFormat
from tilefold.passes.device_pass import DevicePass
from tilefold.passes.ttl.common import kernel_option, kernels

FULL_FP32_REDUCE_ATTR = "ttl.full_fp32"      # on a reduction computed in full float32


# formats a 16-bit DST cannot hold (typecast_tile to or from an integer format needs 32-bit DST)
_DEST_32BIT = (DataFormat.Float32, DataFormat.Int32, DataFormat.UInt32, DataFormat.UInt16, DataFormat.UInt8)


def _uses_float32(kernel) -> bool:
    for op in kernel.walk():
        for value in (*op.results, *op.operands):
            try:
                if ttl.data_format_of(value.type) in _DEST_32BIT:
                    return True
            except TypeError:
                continue
    return False


def _matmul_wants_float32(kernel) -> bool:
    """A matmul in ``kernel`` and no broadcast of a non-float32 tile."""
    kinds = [(op.info.kind, op) for op in kernel.walk() if isinstance(op, ttl.TileOp)]
    if not any(kind == "matmul" for kind, _ in kinds):
        return False
    return not any(kind == "bcast" and ttl.data_format_of(op.input.type) is not DataFormat.Float32
                   for kind, op in kinds)


def _mark_full_fp32_reductions(kernel, arch) -> bool:
    """Mark the reductions of ``kernel`` TT-Lang computes in full float32; whether there is one."""
    if arch.name != "blackhole" or kernel_option(kernel, "reduce_full_fp32") is False:
        return False
    marked = False
    for op in kernel.walk():
        if isinstance(op, ttl.TileOp) and op.info.kind == "reduce" and op.properties["reduce_dim"].data != "REDUCE_ROW":
            op.attributes[FULL_FP32_REDUCE_ATTR] = UnitAttr()
            marked = True
    return marked


class TTLSetComputeKernelConfig(DevicePass):
    """Attach ``ttkernel.compute_config`` to every compute kernel (see the module docstring)."""

    name = "ttl-set-compute-kernel-config"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op, "compute"):
            fp32 = kernel_option(kernel, "fp32_dest_acc_en")
            if fp32 is not False and _mark_full_fp32_reductions(kernel, self.arch):
                fp32 = True
            if fp32 is None:
                fp32 = _uses_float32(kernel) or (kernel_option(kernel, "matmul_full_fp32") is not False
                                                 and _matmul_wants_float32(kernel))
            kernel.attributes[COMPUTE_CONFIG_ATTR] = compute_config_attr(
                math_fidelity=kernel_option(kernel, "math_fidelity") or "HiFi4",
                fp32_dest_acc_en=bool(fp32),
                dst_full_sync_en=bool(kernel_option(kernel, "dst_full_sync_en") or False),
                math_approx_mode=bool(kernel_option(kernel, "math_approx_mode") or False),
            )
