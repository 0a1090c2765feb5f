"""TT-NN's device-profiler calls, answered by the cost model: each program's modeled device time.

Reads: the operations run so far in this session (``session.settings().runs``: each run's
:class:`~tilefold.sim.perf.PerfReport`). Writes: nothing but the latest read it keeps.

On a device, ``ttnn.ReadDeviceProfiler(device)`` collects the profiler records of the programs run
since the previous read and ``ttnn.get_latest_programs_perf_data()`` returns them: per device id,
one entry per program with its ``program_execution_uid``, ``core_count`` and
``program_analyses_results`` (``"DEVICE FW DURATION [ns]"``, ``"DEVICE KERNEL DURATION [ns]"`` ...,
each with ``start_timestamp``, ``end_timestamp`` and ``duration``). Here each operation call is
one program on device 0, its durations the cost model's estimate of its device time (both
analyses the same: the model has no firmware start-up), laid end to end from the first program's
start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from tilefold.frontend.ttl import session

FW_DURATION = "DEVICE FW DURATION [ns]"
KERNEL_DURATION = "DEVICE KERNEL DURATION [ns]"


class ProgramExecutionUid(NamedTuple):
    """Which run of which program (``runtime_id`` counts the session's operation calls from 1)."""

    runtime_id: int
    trace_id: int = 0
    trace_id_counter: int = 0


@dataclass(frozen=True)
class AnalysisResult:
    """One analysis of a program's records, in nanoseconds."""

    start_timestamp: int
    end_timestamp: int
    duration: int


@dataclass(frozen=True)
class ProgramAnalysisData:
    """One program's entry of ``get_latest_programs_perf_data()``."""

    program_execution_uid: ProgramExecutionUid
    core_count: int
    program_analyses_results: dict = field(hash=False, compare=False)
    name: str = ""


_read_up_to = 0          # session runs already read
_latest: dict[int, list[ProgramAnalysisData]] = {}
_clock_ns = 0            # where the next program starts on the modeled timeline


def ReadDeviceProfiler(device=None) -> None:  # noqa: N802 - TT-NN's name
    """Collect the programs run since the previous read as the latest perf data."""
    global _read_up_to, _latest, _clock_ns
    runs = session.settings().runs
    if _read_up_to > len(runs):          # a new session started: its runs are all new
        _read_up_to = 0
    programs = []
    for runtime_id, (name, result) in enumerate(runs[_read_up_to:], start=_read_up_to + 1):
        if result is None:               # not simulated (a call of C++ from a user's header)
            continue
        duration = round(result.perf.seconds * 1e9)
        span = AnalysisResult(_clock_ns, _clock_ns + duration, duration)
        _clock_ns += duration
        programs.append(ProgramAnalysisData(ProgramExecutionUid(runtime_id), result.perf.cores_used,
                                            {FW_DURATION: span, KERNEL_DURATION: span}, name))
    _read_up_to = len(runs)
    _latest = {0: programs} if programs else {}


def get_latest_programs_perf_data() -> dict[int, list[ProgramAnalysisData]]:
    """Per device id, the programs of the latest ``ReadDeviceProfiler``."""
    return {device: list(programs) for device, programs in _latest.items()}
