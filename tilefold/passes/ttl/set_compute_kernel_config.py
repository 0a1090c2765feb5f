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

Errors: none.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilefold.ir import ttl
from tilefold.ir.ttkernel import COMPUTE_CONFIG_ATTR, compute_config_attr
from tilefold.layout.formats import DataFormat
from tilefold.passes.ttl.common import kernel_option, kernels


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


class TTLSetComputeKernelConfig(ModulePass):
    """Attach ``ttkernel.compute_config`` to every compute kernel (see the module docstring)."""

    name = "ttl-set-compute-kernel-config"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op, "compute"):
            fp32 = kernel_option(kernel, "fp32_dest_acc_en")
            if fp32 is None:
                fp32 = _uses_float32(kernel) or (kernel_option(kernel, "matmul_full_fp32") is not False
                                                 and _matmul_wants_float32(kernel))
            kernel.attributes[COMPUTE_CONFIG_ATTR] = compute_config_attr(
                math_fidelity=kernel_option(kernel, "math_fidelity") or "HiFi4",
                fp32_dest_acc_en=bool(fp32),
                dst_full_sync_en=bool(kernel_option(kernel, "dst_full_sync_en") or False),
                math_approx_mode=bool(kernel_option(kernel, "math_approx_mode") or False),
            )
