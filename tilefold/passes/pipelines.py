"""Every pass pipeline of tilefold, in order.

Reads: nothing. Writes: nothing. ``PIPELINES[name]`` is the ordered list of pass names of a
pipeline (the names the :mod:`~tilefold.passes.registry` knows); :func:`pipeline_passes` makes
the pass instances for a device. Each front end owns its entry; :mod:`tilefold.compiler` runs
them.
"""

from __future__ import annotations

from xdsl.passes import ModulePass

from tilefold.arch import Arch, get_arch
from tilefold.passes.registry import parse_passes

# --- the TileLang pipeline (docs/references.md: TileLang, TT-Metalium) ------------------------------
# Phase 1 (front-end lowering): tensorize-tt, legalize-global-access, serialize-atomic-grid,
#                               split-copied-buffers, hoist-vector-values, infer-vector-layout.
# Phase 2: apply-tt-defaults, tile-pad-tt.
# Stage A (metadata): infer-tt-layout, propagate-tt-layout, attach-tensor-accessor.
# Stage B (partitioning): layout-aware-work-partition, rasterization-tt, grid-to-core-grid.
# Stage C (protocol-less lowering): lower-shared-to-cb, lower-to-sfpu, lower-tt-tile-intrinsics, build-tile-dfg.
# Stage D (late split and protocol): split-device-kernel, configure-tensor-accessor, tt-multicast-reuse,
#                                    lower-cb-intrinsics,
#                                    insert-compute-init, insert-dst-management.
# Stage E (finalization): finalize-persistent-signature, then verify-tt-ir.
TILELANG = (
    "tensorize-tt",
    "legalize-global-access",
    "serialize-atomic-grid",
    "split-copied-buffers",
    "hoist-vector-values",
    "infer-vector-layout",
    "apply-tt-defaults",
    "tile-pad-tt",
    "infer-tt-layout",
    "propagate-tt-layout",
    "attach-tensor-accessor",
    "layout-aware-work-partition",
    "rasterization-tt",
    "grid-to-core-grid",
    "lower-shared-to-cb",
    "lower-to-sfpu",
    "lower-tt-tile-intrinsics",
    "build-tile-dfg",
    "split-device-kernel",
    "configure-tensor-accessor",
    "tt-multicast-reuse",
    "lower-cb-intrinsics",
    "insert-compute-init",
    "insert-dst-management",
    "finalize-persistent-signature",
    "verify-tt-ir",
)

# --- the TT-Lang pipeline (docs/references.md: TT-Lang) ---------------------------------------------
# ttl dialect -> fused compute regions -> compute config -> DST slots -> DST protocol -> loops ->
# circular-buffer associations -> ttkernel -> lower-affine (xDSL's own pass) -> index arithmetic tidied -> repeated full inits
# shortened, replaced ones dropped -> inits a loop repeats hoisted.
TTL = (
    "convert-ttl-to-compute",
    "ttl-set-compute-kernel-config",
    "ttl-assign-dst",
    "ttl-insert-tile-regs-sync",
    "ttl-lower-to-loops",
    "ttl-annotate-cb-associations",
    "convert-ttl-to-ttkernel",
    "lower-affine",
    "ttl-tidy-kernels",
    "ttl-trim-inits",
    "ttl-hoist-inits",
)

PIPELINES: dict[str, tuple[str, ...]] = {
    "tilelang": TILELANG,
    "ttl": TTL,
}


def pipeline_passes(pipeline: str, arch: Arch | str | None = None) -> tuple[ModulePass, ...]:
    """The passes of ``pipeline`` — a name of :data:`PIPELINES` or a pass spec
    (``a,b{option=value}``) — configured for ``arch``."""
    spec = ",".join(PIPELINES[pipeline]) if pipeline in PIPELINES else pipeline
    return parse_passes(spec, get_arch(arch))


def pass_named(name: str, arch: Arch | str | None = None) -> ModulePass:
    """One pass by its spec (``name`` or ``name{option=value}``), configured for ``arch``."""
    (instance,) = parse_passes(name, get_arch(arch))
    return instance
