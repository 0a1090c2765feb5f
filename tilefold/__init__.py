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
    if name == "tvm":                   # ``from tilelang import tvm``
        raise ImportError("TVM is not part of tilefold: tilefold builds TileLang kernels from their Python source "
                          "(tilelang.language) without TVM; write the kernel with T.* only")
    raise AttributeError(f"module 'tilefold' has no attribute {name!r}")


__all__ = ["jit", "compile", "autotune", "PassConfigKey", "TensorSupplyType", "cdiv", "__version__"]
