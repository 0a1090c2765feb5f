"""Uncaught tilefold errors in a user's own script: one line, no traceback.

Reads: an exception nobody caught (``sys.excepthook``). Writes: for a
:class:`tilefold.errors.TilefoldError`, its message (which starts with the user's ``file:line``)
on stderr, as ``tilefold sim`` prints it; any other exception goes to the hook that was there
before. ``TILEFOLD_TRACEBACK=1`` keeps the full traceback. Installed when a script imports
``tilefold.ttl`` or ``tilefold.ttnn``.
"""

from __future__ import annotations

import os
import sys

_previous = None


def _hook(kind, value, tb) -> None:
    from tilefold.errors import reported_error

    error = reported_error(value)
    if error is not None and not os.environ.get("TILEFOLD_TRACEBACK"):
        print(f"tilefold: {error}", file=sys.stderr)
        return
    _previous(kind, value, tb)


def install() -> None:
    """Print uncaught tilefold errors as one line (once per process)."""
    global _previous
    if _previous is None:
        _previous = sys.excepthook
        sys.excepthook = _hook
