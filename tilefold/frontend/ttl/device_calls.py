"""The TT-Lang functions that describe device work: ``ttl.copy``, ``ttl.wait_any``, ``ttl.GroupTransfer``,
``ttl.signpost``; ``ttl.static_range`` (a loop unrolled when the kernel is built).

Reads / writes: nothing. The front end recognizes these objects inside kernel functions
(:mod:`.expressions`); called by Python anywhere else they raise an error naming the user's
line (but ``ttl.signpost``, a region that does nothing on the host). :mod:`.api` re-exports them as ``ttl.*``.
"""

from __future__ import annotations

import contextlib

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


def copy_tensor_page(tensor, page_id, block):
    """``ttl.copy_tensor_page(tensor, page_id, block)``: start reading page ``page_id`` of a row-major
    tensor (one row of its last dimension) into ``block``'s bytes as they are (in a data movement
    kernel); returns a transfer handle with ``.wait()``."""
    _device_only("copy_tensor_page")


def wait_any(requests, start=0):
    """``ttl.wait_any((recv0, recv1, ...), start)``: wait until at least one of the pipe receives
    (handles of ``ttl.copy(pipe, block)`` not waited yet) is complete and complete it; returns a
    ready receive whose ``index()`` is its position in ``requests``, the first complete one scanning
    cyclically from ``start % len(requests)``. The other receives stay pending."""
    _device_only("wait_any")


class GroupTransfer:
    """``ttl.GroupTransfer()``: wait for several transfers at once with ``add(xf)`` and ``wait_all()``."""

    def __init__(self):
        _device_only("GroupTransfer")


def signpost(name: str):
    """``with ttl.signpost(name):`` marks a region for profiling (no effect on the program). Inside a
    kernel function the front end reads it; on the host (around a call of an operation), as TT-Lang's
    simulator, it is a region that does nothing."""
    if not isinstance(name, str):
        raise KernelError(f"ttl.signpost(name) takes the region's name as a string, not "
                          f"{type(name).__name__} {name!r}", user_location())
    return contextlib.nullcontext()


def static_range(*bounds):
    """``for i in ttl.static_range(n)`` / ``(start, stop[, step])``: a loop unrolled when the kernel is
    built, so ``i`` is a Python integer in each copy of the body. The bounds must be compile-time
    integers. Outside a kernel it is ``range``."""
    return range(*static_range_bounds(bounds, lambda message: KernelError(message, user_location())))


def static_range_bounds(bounds, error) -> tuple[int, ...]:
    """The validated bounds of ``ttl.static_range(*bounds)``; ``error(message)`` makes the exception."""
    if not 1 <= len(bounds) <= 3:
        raise error(f"ttl.static_range() takes 1 to 3 integers (start, stop, step), not {len(bounds)}")
    for position, bound in enumerate(bounds, 1):
        if isinstance(bound, bool) or not isinstance(bound, int):
            raise error(f"ttl.static_range() argument {position} must be a compile-time integer; "
                        "use range(...) for a loop whose bounds are known only at run time")
    if len(bounds) == 3 and bounds[2] == 0:
        raise error("ttl.static_range() step must not be zero")
    return tuple(bounds)
