"""``tilelang.profiler`` as tilefold gives it: :func:`do_bench` times a function (the simulated
device's modeled time of the kernels it runs, or its host wall time when it runs none) and
:class:`Profiler` is a kernel's profiler (``kernel.get_profiler()``).

Reads / writes: nothing of its own; see :mod:`tilefold.run.profiler`.
"""

from __future__ import annotations

from tilefold.run.profiler import Profiler, do_bench

__all__ = ["Profiler", "do_bench"]
