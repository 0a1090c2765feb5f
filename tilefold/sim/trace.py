"""Chrome trace (Perfetto-viewable) of a simulated run: one track per core thread.

Reads: the trace events the kernel contexts recorded (API call name, start and end cycle
per lane). Writes: a JSON file in the Chrome trace event format, with timestamps in
microseconds of simulated device time.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

MAX_EVENTS = 500_000


def write_chrome_trace(path: str | Path, contexts, clock_hz: float) -> int:
    """Write the trace; returns the number of events written (capped at MAX_EVENTS)."""
    scale = 1e6 / clock_hz
    events = []
    pids: dict = {}
    for ctx in contexts:
        for lane, core in enumerate(ctx.cores):
            pid = pids.setdefault(core, len(pids))
            if len(events) == 0 or pid == len(pids) - 1:
                events.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": f"core {core}"}})
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": ctx.role,
                           "args": {"name": f"{ctx.role}: {ctx.kernel.name}"}})
    count = 0
    for ctx in contexts:
        for ev in ctx.events:
            starts = np.broadcast_to(ev.start, (ctx.L,))
            ends = np.broadcast_to(ev.end, (ctx.L,))
            for lane, core in enumerate(ctx.cores):
                if count >= MAX_EVENTS:
                    break
                events.append({"ph": "X", "name": ev.name, "pid": pids[core], "tid": ctx.role,
                               "ts": float(starts[lane]) * scale,
                               "dur": max(float(ends[lane] - starts[lane]) * scale, 0.001)})
                count += 1
    Path(path).write_text(json.dumps({"traceEvents": events, "displayTimeUnit": "ns",
                                      "otherData": {"note": "estimated by the tilefold cost model"}}))
    return count
