"""Which arithmetic the simulator uses for matrix products: ``faithful`` (the default) or ``fast``.

Reads: the mode a device is made with; else the one :func:`chosen` sets for a ``with`` block (the
command line's ``--numerics``); else the ``TILEFOLD_NUMERICS`` environment variable (``faithful`` or
``fast``). Writes: nothing.

``faithful`` computes what the device computes: DST holds the precision the compute kernel
configures (a 16-bit DST rounds to bfloat16 after every K step of a matmul) and each K step's
products are summed exactly (in float64) and rounded once, so results never depend on how
numpy's BLAS orders its additions.

``fast`` trades those last bits for speed, as TT-Lang's own simulator computes: every compute
kernel's DST holds float32 (no rounding between K steps, so a K loop folds into one product),
float32 operands are multiplied whole (no TF32 source registers, no fidelity phases) and
products are summed in float32 in whatever order BLAS picks. Packing into a circular buffer
still rounds to its format, every check still runs, and cycle counts are identical to
``faithful`` (the cost model does not depend on the numerics). Results may differ from the
device in the last bits of bfloat16 outputs; do not use it to judge numerical accuracy.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from tilefold.errors import ArchError

MODES = ("faithful", "fast")
ENVIRONMENT = "TILEFOLD_NUMERICS"
_chosen: list[str] = []


def resolve(mode: str | None) -> str:
    """``mode``, or the default when None; a clear error for an unknown name."""
    if mode is not None:
        where, name = "numerics", mode
    elif _chosen:
        where, name = "--numerics", _chosen[-1]
    else:
        where, name = ENVIRONMENT, os.environ.get(ENVIRONMENT) or "faithful"
    if name not in MODES:
        raise ArchError(f"{where}={name!r} is not a numerics mode; use one of {', '.join(MODES)}")
    return name


@contextmanager
def chosen(mode: str | None):
    """Devices made without a mode inside the ``with`` block use ``mode`` (None: no change)."""
    if mode is not None:
        resolve(mode)
        _chosen.append(mode)
    try:
        yield
    finally:
        if mode is not None:
            _chosen.pop()
