"""The simulated device: tilefold's embedded default device.

It runs a :class:`~tilefold.program.Program` whose kernels are ttkernel IR — the same IR the
C++ is emitted from, printed as Python by :mod:`tilefold.sim.kernel_python` — on a simulated
Wormhole B0 (n150, default) or Blackhole, with real bytes in DRAM banks and L1, the
hardware's rounding, hazard detection and a cost model.

Kernel threads are greenlets rather than generators: a blocking TT-Metalium call
(``cb_wait_front`` ...) switches to the scheduler from inside the call, so the emitted
Python reads exactly like the C++ kernel (no ``yield`` at every call site, no generator
plumbing through helper calls), a switch costs about a microsecond, and a suspended
kernel's frame stays inspectable, which is how a deadlock report names the line each thread
is parked on.
"""

from tilefold.sim.device import Device, DevicePages, RunResult
from tilefold.sim.perf import PerfReport

__all__ = ["Device", "DevicePages", "RunResult", "PerfReport"]
