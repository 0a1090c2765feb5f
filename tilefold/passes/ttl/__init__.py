"""The TT-Lang compute lowering (TT-Lang multi-tile lowering, docs/references.md), one module per pass (in pipeline order).

``convert-ttl-to-compute`` → ``ttl-set-compute-kernel-config`` → ``ttl-assign-dst`` →
``ttl-insert-tile-regs-sync`` → ``ttl-lower-to-loops`` → ``ttl-annotate-cb-associations`` →
``convert-ttl-to-ttkernel`` → ``lower-affine`` (xDSL's) → ``ttl-tidy-kernels`` →
``ttl-trim-inits`` → ``ttl-hoist-inits``. :mod:`.common` holds what they share.
The pipeline is listed in :mod:`tilefold.passes.pipelines`.
"""
