"""Every pass pipeline of tilefold, in order.

Reads: nothing. Writes: nothing. ``PIPELINES[name]`` is the ordered list of pass names of
a pipeline; :func:`build_pipeline` instantiates them for a device. Each front end owns its
entry.
"""

from __future__ import annotations

import importlib

# --- the TileLang pipeline (seeds 001 and 002) ---------------------------------------------------
# Phase 1 (front-end lowering): tensorize_tt, legalize_global_access, serialize_atomic_grid, split_copied_buffers,
#                                infer_vector_layout.
# Phase 2: apply_tt_defaults, tile_pad_tt.
# Stage A (metadata): infer_tt_layout, propagate_tt_layout, attach_tensor_accessor.
# Stage B (partitioning): layout_aware_work_partition, rasterization_tt, grid_to_core_grid.
# Stage C (protocol-less lowering): lower_shared_to_cb, lower_to_sfpu, lower_tt_tile_intrinsics, build_tile_dfg.
# Stage D (late split and protocol): split_device_kernel, configure_tensor_accessor, lower_cb_intrinsics,
#                                    insert_compute_init, insert_dst_management.
# Stage E (finalization): finalize_persistent_signature, then verify_tt_ir.
TILELANG = (
    "tensorize_tt",
    "legalize_global_access",
    "serialize_atomic_grid",
    "split_copied_buffers",
    "infer_vector_layout",
    "apply_tt_defaults",
    "tile_pad_tt",
    "infer_tt_layout",
    "propagate_tt_layout",
    "attach_tensor_accessor",
    "layout_aware_work_partition",
    "rasterization_tt",
    "grid_to_core_grid",
    "lower_shared_to_cb",
    "lower_to_sfpu",
    "lower_tt_tile_intrinsics",
    "build_tile_dfg",
    "split_device_kernel",
    "configure_tensor_accessor",
    "lower_cb_intrinsics",
    "insert_compute_init",
    "insert_dst_management",
    "finalize_persistent_signature",
    "verify_tt_ir",
)

# pass name -> "module:Class" for the TileLang passes (modules under tilefold.passes.tilelang)
_TILELANG_CLASSES = {
    "tensorize_tt": "TensorizeTT",
    "legalize_global_access": "LegalizeGlobalAccess",
    "serialize_atomic_grid": "SerializeAtomicGrid",
    "split_copied_buffers": "SplitCopiedBuffers",
    "infer_vector_layout": "InferVectorLayout",
    "apply_tt_defaults": "ApplyTTDefaults",
    "tile_pad_tt": "TilePadTT",
    "infer_tt_layout": "InferTTLayout",
    "propagate_tt_layout": "PropagateTTLayout",
    "attach_tensor_accessor": "AttachTensorAccessor",
    "layout_aware_work_partition": "LayoutAwareWorkPartition",
    "rasterization_tt": "RasterizationTT",
    "grid_to_core_grid": "GridToCoreGrid",
    "lower_shared_to_cb": "LowerSharedToCB",
    "lower_to_sfpu": "LowerToSFPU",
    "lower_tt_tile_intrinsics": "LowerTTTileIntrinsics",
    "build_tile_dfg": "BuildTileDFG",
    "split_device_kernel": "SplitDeviceKernel",
    "configure_tensor_accessor": "ConfigureTensorAccessor",
    "lower_cb_intrinsics": "LowerCBIntrinsics",
    "insert_compute_init": "InsertComputeInit",
    "insert_dst_management": "InsertDstManagement",
    "finalize_persistent_signature": "FinalizePersistentSignature",
    "verify_tt_ir": "VerifyTTIR",
}


def tilelang_pass(name: str, arch: str = "wormhole_b0"):
    """One pass of the TileLang pipeline, configured for ``arch`` when it takes one."""
    cls = getattr(importlib.import_module(f"tilefold.passes.tilelang.{name}"), _TILELANG_CLASSES[name])
    fields = getattr(cls, "__dataclass_fields__", {})
    return cls(arch=arch) if "arch" in fields else cls()


# --- the TT-Lang pipeline (seed 003) ---------------------------------------------------------------
# ttl dialect -> fused compute regions -> compute config -> DST slots -> DST protocol -> loops ->
# circular-buffer associations -> ttkernel -> lower-affine (xDSL's own pass).
TTL = (
    "convert-ttl-to-compute",
    "ttl-set-compute-kernel-config",
    "ttl-assign-dst",
    "ttl-insert-tile-regs-sync",
    "ttl-lower-to-loops",
    "ttl-annotate-cb-associations",
    "convert-ttl-to-ttkernel",
    "lower-affine",
)

# pass name -> "module:Class" (modules under tilefold.passes.ttl, or xDSL's lower-affine)
_TTL_CLASSES = {
    "convert-ttl-to-compute": "tilefold.passes.ttl.convert_ttl_to_compute:ConvertTTLToCompute",
    "ttl-set-compute-kernel-config": "tilefold.passes.ttl.set_compute_kernel_config:TTLSetComputeKernelConfig",
    "ttl-assign-dst": "tilefold.passes.ttl.assign_dst:TTLAssignDst",
    "ttl-insert-tile-regs-sync": "tilefold.passes.ttl.insert_tile_regs_sync:TTLInsertTileRegsSync",
    "ttl-lower-to-loops": "tilefold.passes.ttl.lower_to_loops:TTLLowerToLoops",
    "ttl-annotate-cb-associations": "tilefold.passes.ttl.annotate_cb_associations:TTLAnnotateCBAssociations",
    "convert-ttl-to-ttkernel": "tilefold.passes.ttl.convert_ttl_to_ttkernel:ConvertTTLToTTKernel",
    "lower-affine": "xdsl.transforms.lower_affine:LowerAffinePass",
}


def ttl_pass(name: str, arch: str = "wormhole_b0"):
    """One pass of the TT-Lang pipeline (none of them depends on the device)."""
    module, cls = _TTL_CLASSES[name].split(":")
    return getattr(importlib.import_module(module), cls)()


PIPELINES: dict[str, tuple[str, ...]] = {
    "tilelang": TILELANG,
    "ttl": TTL,
}

_FACTORIES = {
    "tilelang": tilelang_pass,
    "ttl": ttl_pass,
}


def build_pipeline(name: str, arch: str = "wormhole_b0") -> list:
    """The passes of pipeline ``name``, in order, as ModulePass instances."""
    factory = _FACTORIES[name]
    return [factory(p, arch) for p in PIPELINES[name]]
