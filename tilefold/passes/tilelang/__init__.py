"""The passes of the TileLang pipeline, one module per pass (docs/references.md: TileLang-TT architecture).

The order they run in is :data:`tilefold.passes.pipelines.PIPELINES` ``["tilelang"]``.
"""
