"""Running front-end programs: the front ends build IR, this package hands it to the compile
driver (:mod:`tilefold.compiler`) and the simulator and gives the results back to the user.

Modules: :mod:`.jit` (``@tilefold.jit`` / ``tilefold.compile``: a TileLang kernel as a callable
on numpy or torch arrays), :mod:`.sequence` (a kernel of several grids, run one after another),
:mod:`.profiler` (TileLang's profiler: check against a reference, estimate the time) and
:mod:`.ttl` (one call of a TT-Lang operation, installed by :mod:`tilefold.ttl` as the session's
runner).
"""
