"""Tune kernels without hardware: compile every configuration, reject what does not fit, build,
finish or match, and rank the rest by the simulator's modeled device time.

Reads: a TileLang kernel factory or a TT-Lang operation and its configurations. Writes: ranked
results (:class:`TuneResult`), a result cache on disk and, when asked, a trace of the best
configuration. ``@tilefold.autotune(configs=...)`` is the decorator (the shape of TileLang's
``@tilelang.autotune``); :class:`AutoTuner` the programmatic form; ``tilefold tune SCRIPT.py``
the command. Modules: :mod:`.configs` (the sweep's configurations), :mod:`.candidates` (one
configuration through its front end), :mod:`.sweep` (judging one configuration), :mod:`.cache`
(results on disk), :mod:`.engines` (serial, process pool, Ray), :mod:`.tuner` (ranking and
reporting).
"""

from tilefold.autotuner.sweep import ConfigResult
from tilefold.autotuner.tuner import (AutoTuner, AutoTunedFunction, TuneResult, autotune, set_autotune_inputs,
                                      tuning_defaults)

__all__ = ["AutoTuner", "AutoTunedFunction", "ConfigResult", "TuneResult", "autotune", "set_autotune_inputs",
           "tuning_defaults"]
