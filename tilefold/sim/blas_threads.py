"""numpy's BLAS on one thread while the simulator runs.

Reads / writes: the thread count of the BLAS libraries loaded in the process (through
``threadpoolctl``), for the duration of a run, restored after it.

The simulator multiplies small blocks between Python steps: a few tiles on a side, thousands
of times. A multi-threaded BLAS wakes its worker threads for each product; when the machine's
cores are busy (another process, or torch's own threads), each wake-up waits for a scheduler
time slice, and a product of microseconds takes milliseconds — measured, a one-core matmul
tutorial's products 13 times slower on a loaded two-core machine. On one thread a product
costs what its arithmetic costs, whatever else runs.
"""

from __future__ import annotations

from contextlib import contextmanager

_controller = None


@contextmanager
def one_blas_thread():
    """Run the body with every loaded BLAS library on one thread."""
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()     # finds the loaded libraries once
    with _controller.limit(limits=1, user_api="blas"):
        yield
