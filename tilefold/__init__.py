"""tilefold: a compiler, runtime model and simulator for Tenstorrent Tensix kernels.

Write a kernel in Python (TileLang style with :mod:`tilefold.language`, TT-Lang style with
:mod:`tilefold.ttl`, or TT-Metalium style with :mod:`tilefold.pykernel`), get TT-Metalium
C++ out, and run the very same lowered program on a simulated Wormhole or Blackhole.
"""

__version__ = "0.1.0"


_TILELANG_NAMES = ("jit", "compile", "PassConfigKey", "TensorSupplyType")


def __getattr__(name: str):
    # The TileLang entry points (``@tilefold.jit``, ``tilefold.compile`` ...) without importing the
    # compiler at ``import tilefold``; ``import tilefold as tilelang`` runs TileLang scripts.
    if name in _TILELANG_NAMES:
        from tilefold.run import jit as _jit

        return getattr(_jit, name)
    if name == "autotune":
        from tilefold.autotuner import autotune

        return autotune
    if name == "cdiv":
        from tilefold.frontend.tilelang.api import ceildiv

        return ceildiv
    if name == "language":
        import importlib

        return importlib.import_module("tilefold.language")
    if name == "JITKernel":
        from tilefold.run.jit import JITKernel

        return JITKernel
    if name in _CACHE_SWITCHES:         # tilefold keeps compiled kernels in memory only: nothing to switch
        return _CACHE_SWITCHES[name]
    from tilefold.caller import user_location
    from tilefold.errors import KernelAttributeError, KernelImportError

    if name == "tvm":                   # ``from tilelang import tvm``
        raise KernelImportError("TVM is not part of tilefold: tilefold builds TileLang kernels from their Python "
                                "source (tilelang.language) without TVM; write the kernel with T.* only",
                                user_location())
    if name.startswith("__"):
        raise AttributeError(name)
    from tilefold.frontend.tilelang.names import unknown_module_name

    raise KernelAttributeError(unknown_module_name(name, __all__ + ["language", "testing", "profiler",
                                                                    "utils", "carver"]), user_location())


def _no_op(*args, **kwargs) -> None:
    return None


_CACHE_SWITCHES = {"disable_cache": _no_op, "enable_cache": _no_op, "clear_cache": _no_op,
                   "set_log_level": _no_op, "is_cache_enabled": lambda: False}


__all__ = ["jit", "compile", "autotune", "PassConfigKey", "TensorSupplyType", "cdiv", "JITKernel", "disable_cache",
           "enable_cache", "clear_cache", "set_log_level", "is_cache_enabled", "__version__"]
