"""numpy's transparent-huge-page advice, off for the process of a simulated device.

Reads: the environment (``NUMPY_MADVISE_HUGEPAGE``). Writes: numpy's process-wide advice setting.

numpy asks the kernel for transparent huge pages (``madvise``) for each array of 4 MiB or more. Where
the kernel honours that advice, every fresh 2 MiB page of such an array is zeroed whole on its first
touch, and the kernel compacts memory to find more; for the short-lived arrays of a simulation and
of its host-side tensors (a tensor converted, a TT-NN operation on the host) that is system time and
no gain. Measured here, a host ``ttnn.multiply`` of two 2048 x 2048 tensors took 0.32-0.41 s with the
advice and 0.05 s without; TT-Lang's full-grid matmul tutorial at 4096³ spent 2.3 s of system time
in a 7.3 s simulation with it, 0.7 s in 5.4 s without. The host front ends (``tilefold.ttnn``,
TileLang's ``tilefold.jit``) turn it off when they are imported, and a simulator run
(``Device.run``) while it runs; ``NUMPY_MADVISE_HUGEPAGE`` set in the environment keeps numpy's own
choice.
"""

from __future__ import annotations

import os
from contextlib import contextmanager


def set_advice(enabled: bool) -> bool | None:
    """Set numpy's huge-page advice; its setting before, or None where this numpy has none."""
    try:
        from numpy._core.multiarray import _set_madvise_hugepage
    except ImportError:
        return None
    return bool(_set_madvise_hugepage(enabled))


def _chosen_by_environment() -> bool:
    return "NUMPY_MADVISE_HUGEPAGE" in os.environ


def ordinary_pages() -> None:
    """Turn the advice off for the process, unless the environment chooses it."""
    if not _chosen_by_environment():
        set_advice(False)


@contextmanager
def ordinary_pages_during():
    """Run the body with the advice off (unless the environment chooses it), then set it back."""
    before = None if _chosen_by_environment() else set_advice(False)
    try:
        yield
    finally:
        if before is not None:
            set_advice(before)
