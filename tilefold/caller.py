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



def missing_name(prefix: str, name: str, names) -> str:
    """The message for ``prefix.name`` that tilefold lacks, with the public name it probably is a typo
    of (``ttnn.TILE`` -> ``ttnn.TILE_LAYOUT``): a longer name it begins, the same name in other case,
    or a close spelling."""
    import difflib

    public = [n for n in names if isinstance(n, str) and not n.startswith("_")]
    close = sorted((n for n in public if n.lower().startswith(name.lower() + "_")), key=len) \
        or [n for n in public if n.lower() == name.lower()] \
        or difflib.get_close_matches(name, public, n=1, cutoff=0.75)
    hint = f" (did you mean {' or '.join(f'{prefix}.{n}' for n in close[:2])}?)" if close else ""
    return f"{prefix}.{name} is not supported by tilefold yet{hint}"


def argument_mismatch(what: str, signature, kwargs: dict, exc: TypeError) -> str:
    """The message for a call of ``what`` whose arguments ``signature`` cannot bind (``exc``): an
    unknown keyword first, with the one meant when it is close to a parameter's name, then the
    parameters the function takes."""
    import difflib

    names = [p.name for p in signature.parameters.values()
             if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "self"]
    unknown = [k for k in kwargs if k not in signature.parameters]
    message = f"got an unexpected keyword argument {unknown[0]!r}" if unknown else str(exc)
    close = difflib.get_close_matches(unknown[0], names, n=1) if unknown else []
    hint = f" (did you mean {close[0]}=?)" if close else ""
    return f"{what}(): {message}{hint}; it takes {', '.join(names) if names else 'no arguments'}"


def checked_arguments(what: str):
    """Decorator of a public function (or ``__init__``) a user's script calls: arguments its
    signature cannot take (an unknown keyword, one missing or too many) are one
    :class:`~tilefold.errors.KernelArgumentError` (a ``TypeError``) at the user's line naming
    ``what`` (``ttl.make_dataflow_buffer_like``), with the keyword meant when a misspelt one is close
    to one the function takes — not Python's ``TypeError`` with tilefold's frames."""
    import functools
    import inspect

    def decorate(function):
        signature = inspect.signature(function)

        @functools.wraps(function)
        def checked(*args, **kwargs):
            try:
                signature.bind(*args, **kwargs)
            except TypeError as exc:
                from tilefold.errors import KernelArgumentError

                raise KernelArgumentError(argument_mismatch(what, signature, kwargs, exc), user_location()) from None
            return function(*args, **kwargs)

        return checked

    return decorate
