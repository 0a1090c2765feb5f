"""The passes of the TileLang pipeline (docs/references.md: TileLang-TT architecture and pass reference), one module per pass.

The order they run in is :data:`tilefold.passes.pipelines.PIPELINES` ``["tilelang"]``.
"""
