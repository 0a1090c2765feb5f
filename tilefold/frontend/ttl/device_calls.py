"""The TT-Lang functions that describe device work: ``ttl.copy``, ``ttl.GroupTransfer``, ``ttl.signpost``.

Reads / writes: nothing. The front end recognizes these objects inside kernel functions
(:mod:`.expressions`); called by Python anywhere else they raise an error naming the user's
line. :mod:`.api` re-exports them as ``ttl.*``.
"""

from __future__ import annotations

from tilefold.caller import user_location
from tilefold.errors import KernelError

# what ``with ttl.signpost(name):`` evaluates to inside a kernel function
SIGNPOST = object()


def _device_only(name: str):
    raise KernelError(f"ttl.{name} describes work on the device; call it inside a @ttl.compute() or "
                      "@ttl.datamovement() kernel function", user_location())


def copy(src, dst):
    """``ttl.copy(src, dst)``: start a transfer between a tensor slice, a block or a pipe (in a data
    movement kernel); returns a transfer handle with ``.wait()``."""
    _device_only("copy")


class GroupTransfer:
    """``ttl.GroupTransfer()``: wait for several transfers at once with ``add(xf)`` and ``wait_all()``."""

    def __init__(self):
        _device_only("GroupTransfer")


def signpost(name: str):
    """``with ttl.signpost(name):`` marks a region for profiling (no effect on the program)."""
    _device_only("signpost")
