"""Progress bars for long work: a tqdm bar on stderr once a task has run for about two seconds.

Reads: how much of a task is done (an integer the task updates, or a function returning one),
polled by a background thread, so the work itself never calls into tqdm. Writes: a tqdm bar on
stderr, removed when the task ends; short tasks print nothing.

Bars show when stderr is a terminal, unless turned off with :func:`set_enabled` or
:func:`disabled` (the CLI's ``--quiet``); a task can also force them on or off.
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager
from typing import Callable

DELAY = 2.0          # seconds before a bar appears
INTERVAL = 0.25      # seconds between refreshes

_enabled: bool | None = None     # None: when stderr is a terminal


def set_enabled(flag: bool | None) -> None:
    """Turn progress bars on (True), off (False) or back to "when stderr is a terminal" (None)."""
    global _enabled
    _enabled = flag


@contextmanager
def disabled():
    """No progress bars inside the ``with`` block."""
    saved = _enabled
    set_enabled(False)
    try:
        yield
    finally:
        set_enabled(saved)


def is_enabled(override: bool | None = None) -> bool:
    if override is not None:
        return override
    if _enabled is not None:
        return _enabled
    return sys.stderr.isatty()


def _columns() -> int:
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 0


class Progress:
    """``with Progress("simulating", total, "B") as p: ... p.done += n``.

    ``read``, when given, returns the amount done instead of ``p.done``."""

    def __init__(self, desc: str, total: float | None = None, unit: str = "it", *,
                 read: Callable[[], float] | None = None, enabled: bool | None = None, delay: float = DELAY):
        self.desc = desc
        self.total = total or None
        self.unit = unit
        self.done = 0
        self.shown = False
        self._read = read
        self._delay = delay
        self._on = is_enabled(enabled)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> "Progress":
        if self._on:
            self._thread = threading.Thread(target=self._watch, name=f"progress: {self.desc}", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _amount(self) -> float:
        done = self._read() if self._read is not None else self.done
        return min(done, self.total) if self.total else done

    def _watch(self) -> None:
        if self._stop.wait(self._delay):
            return
        from tqdm import tqdm

        # A terminal that reports no size (a bare pty) would get no bar from tqdm: 80 × 24 then.
        sized = _columns() > 0
        bar = tqdm(total=self.total, desc=self.desc, unit=self.unit, unit_scale=True, leave=False,
                   file=sys.stderr, dynamic_ncols=sized, ncols=None if sized else 80,
                   nrows=None if sized else 24)
        self.shown = True
        try:
            while True:
                bar.n = self._amount()
                bar.refresh()
                if self._stop.wait(INTERVAL):
                    break
        finally:
            bar.close()
