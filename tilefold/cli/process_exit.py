"""Ending the ``tilefold`` process without the interpreter's teardown.

Reads: the exit status the command returned. Writes: nothing of its own; it ends the process.

When Python exits it first does what anyone can observe — waits for the threads a script left
running, runs ``atexit`` handlers (logging, coverage, Ray), clears the ``__main__`` module's
globals, so the files a script left open in them are flushed and closed, and flushes stdout and
stderr — and then tears down every other imported module one by one. Once a TT-Lang script has
imported torch that teardown alone takes about 0.3 s, a sixth of a small tutorial's whole run.
:func:`run_then_end` does the observable part in the same order and then leaves with
:func:`os._exit`. (Garbage reference cycles are not collected at the end, as they are not by the
interpreter's own exit once :mod:`tilefold.frozen_gc` has run.)
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import Callable

_ends_here = False                  # run_then_end is running: this process ends through end()
_script_globals: list[dict] = []


def run_then_end(command: Callable[[], int]) -> None:
    """Run the command, then :func:`end` the process with the status it returned."""
    global _ends_here
    _ends_here = True
    end(command())


def keep_until_exit(namespace: dict) -> None:
    """A finished script's globals, to be cleared when the process ends, as ``__main__``'s are
    (kept only when this process ends through :func:`end`)."""
    if _ends_here:
        _script_globals.append(namespace)


def end(status: int) -> None:
    """Finish what an interpreter exit would finish that can be observed, then end the process
    with ``status``."""
    _wait_for_threads()
    atexit._run_exitfuncs()
    for namespace in _script_globals:
        namespace.clear()           # files the script left open in its globals are flushed and closed
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):   # a closed pipe or stream: nothing more can be written
            pass
    os._exit(status)


def _wait_for_threads() -> None:
    """Let thread pools stop and join the script's non-daemon threads, as the interpreter does."""
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
        return
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
