"""The runaway-loop watchdog: a limit on the simulated cycles of each kernel thread.

Reads: the limit given to ``Device.run(max_cycles=...)``, set for a block of code with
:func:`limit` (the command line's ``--max-cycles``), or :data:`DEFAULT_MAX_CYCLES`. Writes:
nothing. A thread's cycles are its busy cycles plus one per iteration of a ``while`` loop, and a
``while`` loop may not run :data:`MAX_IDLE_STEPS` iterations in a row without a device call;
a ``for`` loop of more iterations than remain, or of :data:`MAX_LOOP_TRIPS` or more, is over the
limit before it starts (each iteration costs at least a cycle on the device). Past the limit the scheduler raises
:class:`~tilefold.errors.WatchdogError` naming each running thread's line, the way a
kernel that never ends (a loop count that wrapped around) shows up on hardware as a hang.
"""

from __future__ import annotations

from contextlib import contextmanager

# 2**36 cycles (about 69 s of device time at 1 GHz) per thread: above any kernel a program runs in
# earnest (TT-Lang's one-node matmul tutorial at 8192³ keeps its compute thread busy 2.2e9 cycles).
DEFAULT_MAX_CYCLES = 1 << 36
# A for loop of 2**31 iterations or more is a runaway from its start whatever the cycle limit: a
# uint32 loop count that wrapped around (0 - 1) has that many.
MAX_LOOP_TRIPS = 1 << 31
# A while loop that iterates 2**24 times in a row without one device call (no buffer, NOC, semaphore,
# tile or argument call: integer arithmetic only) is a runaway too: on the device that is a core
# spinning a tenth of a second on values nothing else can change, and simulating it to the cycle limit
# would take hours (this limit takes seconds).
MAX_IDLE_STEPS = 1 << 24

_limit = [DEFAULT_MAX_CYCLES]


def current() -> int:
    """The limit in force."""
    return _limit[-1]


@contextmanager
def limit(max_cycles: int | None):
    """Runs inside the block stop past ``max_cycles`` cycles per thread (None: unchanged)."""
    if max_cycles is None:
        yield
        return
    if max_cycles <= 0:
        from tilefold.errors import ProgramError

        raise ProgramError(f"the cycle limit must be positive, not {max_cycles}")
    _limit.append(int(max_cycles))
    try:
        yield
    finally:
        _limit.pop()
