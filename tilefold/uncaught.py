"""Uncaught tilefold errors in a user's own script: one line, no traceback.

Reads: an exception nobody caught (``sys.excepthook``). Writes: for a
:class:`tilefold.errors.TilefoldError`, its message (which starts with the user's ``file:line``)
on stderr, as ``tilefold sim`` prints it; an exception the user's own code raised under tilefold's
frames (in an operation's body) as its traceback through the user's frames only, as ``tilefold sim``
shows it; any other exception goes to the hook that was there before. A failed ``assert`` after
operations read float32 as TF32 is preceded by a note saying so (``session.tf32_note``). ``TILEFOLD_TRACEBACK=1``
keeps the full traceback. Installed when a script imports
``tilefold.ttl`` or ``tilefold.ttnn``.
"""

from __future__ import annotations

import os
import sys

_previous = None


def _hook(kind, value, tb) -> None:
    from tilefold.errors import reported_error

    if isinstance(value, AssertionError) and "tilefold.frontend.ttl.session" in sys.modules:
        note = sys.modules["tilefold.frontend.ttl.session"].tf32_note()     # (the script's assert failed)
        if note:
            print(note, file=sys.stderr)
    error = reported_error(value)
    if error is not None and not os.environ.get("TILEFOLD_TRACEBACK"):
        print(f"tilefold: {error}", file=sys.stderr)
        return
    text = None if error is not None or os.environ.get("TILEFOLD_TRACEBACK") else _users_traceback(value, tb)
    if text is not None:
        print(text, file=sys.stderr)
        return
    _previous(kind, value, tb)


def _users_traceback(value, tb) -> str | None:
    """For an exception the user's own code raised (its innermost frame is theirs) under frames of
    tilefold (an operation's body runs under them): its traceback without tilefold's frames; else
    None."""
    import traceback

    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frames = traceback.extract_tb(tb)

    def ours(frame) -> bool:
        return os.path.abspath(frame.filename).startswith(package)

    if not frames or not any(ours(f) for f in frames) or ours(frames[-1]) or frames[-1].filename.startswith("<"):
        return None
    lines = ["Traceback (most recent call last):"]
    lines += [line.rstrip("\n") for line in traceback.format_list([f for f in frames if not ours(f)])]
    return "\n".join(lines + exception_lines(value))


def exception_lines(exc: BaseException) -> list[str]:
    """The last lines of a traceback for ``exc``, as Python prints them, with its "Did you mean"
    for a misspelt attribute or name (which ``traceback`` leaves to the interpreter before 3.12)."""
    import builtins
    import difflib
    import traceback

    lines = [line.rstrip("\n") for line in traceback.format_exception_only(type(exc), exc)]
    name = getattr(exc, "name", None)
    if isinstance(exc, (AttributeError, NameError)) and isinstance(name, str) and "Did you mean" not in lines[-1]:
        if isinstance(exc, AttributeError):
            names = dir(getattr(exc, "obj", None)) if getattr(exc, "obj", None) is not None else []
        else:
            frame = exc.__traceback__
            while frame is not None and frame.tb_next is not None:
                frame = frame.tb_next
            names = [*frame.tb_frame.f_locals, *frame.tb_frame.f_globals, *dir(builtins)] if frame else []
        close = difflib.get_close_matches(name, [n for n in names if isinstance(n, str)], n=1)
        if close:
            lines[-1] += f". Did you mean: {close[0]!r}?"
    return lines


def install() -> None:
    """Print uncaught tilefold errors as one line (once per process)."""
    global _previous
    if _previous is None:
        _previous = sys.excepthook
        sys.excepthook = _hook
