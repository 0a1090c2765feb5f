"""The passes of the TileLang pipeline (seeds 001 and 002), one module per pass.

The order they run in is :data:`tilefold.passes.pipelines.PIPELINES` ``["tilelang"]``.
"""
