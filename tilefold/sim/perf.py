"""Performance counters and the estimate a run reports.

Reads: the simulated threads' clocks, busy and stall times, and the device's counters.
Writes: a :class:`PerfReport`. Every figure is an estimate of tilefold's cost model
(:mod:`tilefold.arch.costs`), not a measurement of a device.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Counters:
    dram_read_bytes: int = 0
    dram_write_bytes: int = 0
    noc_bytes: int = 0
    unpack_tiles: int = 0
    pack_tiles: int = 0
    fpu_tiles: int = 0
    sfpu_tiles: int = 0
    matmul_flops: int = 0


@dataclass
class ThreadPerf:
    kernel: str
    role: str
    cores: list
    end_cycles: np.ndarray      # per core
    busy_cycles: np.ndarray
    stall_cycles: np.ndarray


@dataclass
class PerfReport:
    """Estimated kernel time and counters of one simulated run (a model)."""

    arch_name: str
    clock_hz: float
    cycles: float
    cores_used: int
    counters: Counters
    threads: list[ThreadPerf] = field(default_factory=list)
    dram_bandwidth: float = 0.0      # bytes/s of the board
    peak_flops: float = 0.0          # FPU peak at the program's fidelity, flop/s

    @property
    def seconds(self) -> float:
        return self.cycles / self.clock_hz

    @property
    def dram_bytes(self) -> int:
        return self.counters.dram_read_bytes + self.counters.dram_write_bytes

    @property
    def dram_bandwidth_fraction(self) -> float:
        return self.dram_bytes / self.seconds / self.dram_bandwidth if self.seconds and self.dram_bandwidth else 0.0

    @property
    def fpu_fraction(self) -> float:
        return self.counters.matmul_flops / self.seconds / self.peak_flops if self.seconds and self.peak_flops else 0.0

    def per_core(self) -> dict:
        """{core: {role: (busy, stall)}} in cycles."""
        out: dict = {}
        for t in self.threads:
            for i, core in enumerate(t.cores):
                out.setdefault(core, {})[t.role] = (float(t.busy_cycles[i]), float(t.stall_cycles[i]))
        return out

    def summary(self) -> str:
        c = self.counters
        us = self.seconds * 1e6
        lines = [
            f"estimated device time (cost model): {us:,.1f} us ({self.cycles:,.0f} cycles at "
            f"{self.clock_hz / 1e9:g} GHz on {self.arch_name})",
            f"cores used: {self.cores_used}",
            f"DRAM traffic: {c.dram_read_bytes:,} B read, {c.dram_write_bytes:,} B written "
            f"({self.dram_bandwidth_fraction:.1%} of peak DRAM bandwidth)",
            f"NOC traffic: {c.noc_bytes:,} B",
            f"tiles: {c.unpack_tiles:,} unpacked, {c.fpu_tiles:,} FPU, {c.sfpu_tiles:,} SFPU, {c.pack_tiles:,} packed",
        ]
        if c.matmul_flops:
            lines.append(f"matmul: {c.matmul_flops / 1e9:,.2f} GFLOP ({self.fpu_fraction:.1%} of FPU peak)")
        by_role: dict[str, list] = {}
        for t in self.threads:
            by_role.setdefault(t.role, []).append(t)
        for role, ts in by_role.items():
            busy = np.concatenate([t.busy_cycles for t in ts])
            stall = np.concatenate([t.stall_cycles for t in ts])
            lines.append(f"{role}: busy {busy.mean():,.0f} cycles, stalled {stall.mean():,.0f} cycles "
                         f"(mean over {busy.size} cores)")
        return "\n".join(lines)
