"""How the chip's DRAM bandwidth is divided among the cores that move data to and from DRAM.

Reads: a :class:`~tilefold.program.Program`, its architecture and, for a second timing pass, the
bytes each core read from DRAM in the first. Writes: nothing; returns bytes per cycle per core.

A DRAM channel serves the requests queued at it in turn, so a core's part of the bandwidth follows
the bytes it keeps in flight, not a fixed slot per core: while some cores have nothing to read,
the others get what they leave. The model serves each core's transfers at a fixed rate for the
whole run (so a transfer's time depends only on its own core's earlier work, never on how cores
are grouped into threads or in which order the simulator runs them), chosen in two steps:

* **Equal share** (:func:`equal_share`): the achievable board bandwidth over the cores that issue
  NOC reads from a data-movement kernel (a core that only receives multicasts — its kernel has
  no reads, or its runtime arguments steer it past them, :mod:`~tilefold.sim.dram_readers` — or
  only writes results does not compete all run long), at most one core's measured read rate
  (``OpCosts.dram_core_bytes_per_cycle``). Every core starts at it.
* **Shares by bytes** (:func:`dram_shares`): once a run has shown how many bytes each core reads,
  a core reading more than an equal part gets the board bandwidth in proportion to its bytes
  (``board * bytes / all bytes``: when every reader streams through the run, that is the rate
  channels shared by bytes in flight serve it at, and the heavy readers end together with the
  light ones instead of after them), never less than the equal share (a light reader is not
  slowed: its bursts find the channels as free as an equal split) and never more than one core's
  read rate. :class:`~tilefold.sim.Device` times such a run again at these shares; a program
  whose readers move equal bytes keeps the equal share and runs once.

The board total and the busiest bank still bound every run (the device's perf report).
"""

from __future__ import annotations

import numpy as np

from tilefold.arch import Arch
from tilefold.program import Program
from tilefold.program.kernels import ComputeConfig
from tilefold.sim.dram_readers import has_reads, issues_reads

# A second timing pass only when some core's share grows by more than this fraction.
RESHARE_THRESHOLD = 0.02


def board_bytes_per_cycle(arch: Arch) -> float:
    """The chip's achievable DRAM bandwidth in bytes per core cycle."""
    return arch.dram_bandwidth_per_chip * arch.costs.dram_achievable_fraction / arch.clock_hz


def equal_share(program: Program, arch: Arch) -> float:
    """Bytes per cycle of every core before any run: the board over the cores issuing reads."""
    readers: set = set()
    for k in program.kernels:
        if isinstance(k.config, ComputeConfig) or not has_reads(k.function):
            continue
        readers.update(c for c in k.cores if issues_reads(k.function, k.runtime_args.get(c, [])))
    if not readers:
        readers = {c for k in program.kernels if not isinstance(k.config, ComputeConfig) for c in k.cores}
    return min(board_bytes_per_cycle(arch) / max(len(readers), 1), arch.costs.dram_core_bytes_per_cycle)


def dram_shares(equal: float, arch: Arch, read_bytes: np.ndarray) -> np.ndarray:
    """Bytes per cycle of each core (``read_bytes`` indexed by core row) given the bytes each read."""
    total = float(read_bytes.sum())
    if total <= 0:
        return np.full(read_bytes.shape, equal)
    by_bytes = board_bytes_per_cycle(arch) * read_bytes / total
    return np.minimum(np.maximum(by_bytes, equal), max(arch.costs.dram_core_bytes_per_cycle, equal))


def needs_reshare(equal: float, shares: np.ndarray) -> bool:
    """Whether ``shares`` differ enough from the equal share to time the run again."""
    return bool(shares.size) and float(shares.max()) > equal * (1 + RESHARE_THRESHOLD)


__all__ = ["board_bytes_per_cycle", "equal_share", "dram_shares", "needs_reshare", "RESHARE_THRESHOLD"]
