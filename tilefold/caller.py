"""Where in the user's code a host object was created, for error messages.

Reads: the Python call stack. Writes: nothing.
"""

from __future__ import annotations

import os
import sys

from tilefold.errors import SourceLocation

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# launchers, not user code: the ``tilefold`` console script and ``python -m``
_LAUNCHERS = (os.path.join(os.path.abspath(sys.prefix), "bin") + os.sep,)


def user_location() -> SourceLocation | None:
    """The first frame on the stack outside the tilefold package (the user's file:line); None
    when tilefold itself was launched (a built-in op from the command line)."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        generated = frame.f_code.co_filename == "<string>" and frame.f_code.co_name == "__init__"   # a dataclass's
        importing = frame.f_code.co_filename.startswith("<frozen importlib")      # the import machinery
        if not filename.startswith(_PACKAGE_DIR + os.sep) and not generated and not importing:
            if filename.startswith(_LAUNCHERS) or os.path.basename(filename) == "runpy.py" \
                    or frame.f_code.co_filename == "<frozen runpy>":
                return None
            return SourceLocation(frame.f_code.co_filename, frame.f_lineno)
        frame = frame.f_back
    return None


def unsupported_names(module: str, advice: str):
    """A module ``__getattr__`` for which every name the module lacks is one error at the user's line:
    ``<module>.<name> is not supported by tilefold yet`` followed by ``advice``."""
    from tilefold.errors import KernelError

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise KernelError(f"{module}.{name} is not supported by tilefold yet{advice}", user_location())
    return __getattr__
