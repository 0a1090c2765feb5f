"""tilefold: a compiler, runtime model and simulator for Tenstorrent Tensix kernels.

Write a kernel in Python (TileLang style with :mod:`tilefold.language`, TT-Lang style with
:mod:`tilefold.ttl`, or TT-Metalium style with :mod:`tilefold.pykernel`), get TT-Metalium
C++ out, and run the very same lowered program on a simulated Wormhole or Blackhole.
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    # ``@tilefold.jit`` (TileLang-style kernels) without importing the compiler at ``import tilefold``.
    if name == "jit":
        from tilefold.frontend.tilelang.jit import jit

        return jit
    raise AttributeError(f"module 'tilefold' has no attribute {name!r}")


__all__ = ["jit", "__version__"]
