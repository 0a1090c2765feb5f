"""The kernel context ``k``: what emitted kernel code calls, for one thread of lanes.

Reads: the running device (memories, CBs, allocation) and one kernel's arguments.
Writes: device state, through the API mixins of :mod:`tilefold.sim.cb_api`,
:mod:`tilefold.sim.dataflow_api` and :mod:`tilefold.sim.compute_api`.

This base holds what every thread needs: its lanes (the cores it stands for, as rows of
the device's per-core arrays), runtime / common / compile-time arguments, the control-flow
helpers the Python emitter prints (``k.range``, ``k.cond``, ``k.index`` ...), its clock
(cycles, one per lane), and the user's file:line for error messages.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np
from greenlet import getcurrent

from tilefold.arch.cores import CoreCoord
from tilefold.errors import (DramAccessError, KernelAssertError, ProgramError, RuntimeArgError, SimulationError,
                             SourceLocation)
from tilefold.sim.lanes import any_lane, even, lane_values, uniform
from tilefold.sim.watchdog import MAX_IDLE_STEPS, MAX_LOOP_TRIPS


def _lane_text(parts: tuple, values: tuple, lane: int) -> str:
    """The texts ``parts`` around lane ``lane``'s runtime integers ``values`` (one more text than
    values; a value is an int or one per lane)."""
    text = parts[0]
    for value, part in zip(values, parts[1:]):
        v = value if value.__class__ is int else np.asarray(value).reshape(-1)[lane if np.size(value) > 1 else 0]
        text += f"{int(v)}{part}"
    return text


def _lane_range(lb, step: int, trips: int):
    for j in range(trips):
        yield lb + j * step


@dataclass
class TraceEvent:
    name: str
    start: np.ndarray | float
    end: np.ndarray | float


class KernelContext:
    """Base of the per-thread kernel API object."""

    role = "thread"  # "reader" / "writer" / "compute", set by subclasses
    from tilefold.sim.extern_calls import extern_call  # ttl.call_extern_func: a simulated run stops there

    def __init__(self, device, kernel, cores: list[CoreCoord], pykernel, thread_name: str):
        self.dev = device
        self.arch = device.arch
        self.costs = device.arch.costs
        self.kernel = kernel
        self.cores = cores
        self.pykernel = pykernel
        self.thread_name = thread_name
        self.scheduler = None  # set by the scheduler
        self.thread = None
        rows = np.array([device.core_row(c) for c in cores], dtype=np.int64)
        self.row_idx = rows
        self.row0 = int(rows[0]) if rows.size else 0     # the first lane's row (the only one when L == 1)
        if rows.size and np.all(np.diff(rows) == 1):
            self.rows = slice(int(rows[0]), int(rows[-1]) + 1)
        else:
            self.rows = rows
        self.L = len(cores)
        self.clock = np.zeros(self.L)
        self.busy = 0.0          # cycles of work; the same on every lane (same calls, same costs)
        self.max_cycles = device.max_cycles   # the watchdog's limit on busy cycles plus loop steps
        self.steps = 0                        # iterations of while loops (each at least a cycle)
        self.idle_steps = 0                   # while-loop iterations in a row that made no device call
        self.busy_at_step = 0.0
        self.stall = np.zeros(self.L)
        self.tracing = device.tracing
        self.events: list[TraceEvent] = []
        self.calls = 0
        self.line_override: int | None = None   # generated line of a queued call being executed
        self.kernel_frame = None   # the running kernel function's frame, once line_of has found it
        self._line_at: dict[int, int] = {}   # the kernel's bytecode offsets -> their lines (f_lineno is slow)
        self.pending_reads: list = []    # (lo, hi, line) of NOC reads into this core's L1 not yet barriered
        self.pending_writes: list = []   # (lo, hi, line) of NOC writes from this core's L1 not yet flushed
        self._cb_cache: dict = {}
        # arguments
        per_core = [device.resolve_args(kernel.runtime_args.get(c, [])) for c in cores]
        self.nargs = min((len(a) for a in per_core), default=0)
        self.max_nargs = max((len(a) for a in per_core), default=0)
        if self.max_nargs:
            table = np.zeros((self.L, self.max_nargs), dtype=np.int64)
            for i, a in enumerate(per_core):
                table[i, :len(a)] = a
            self.arg_values = [lane_values(table[:, i]) for i in range(self.max_nargs)]
        else:
            self.arg_values = []
        self.common_args = device.resolve_args(kernel.common_runtime_args)
        self.compile_args = device.expand_compile_args(kernel)

    # -- where in the user's code ---------------------------------------------------------

    def _kernel_line(self, frame=None) -> int | None:
        frame = frame or sys._getframe(1)
        filename = self.pykernel.filename
        while frame is not None:
            if frame.f_code.co_filename == filename:
                return frame.f_lineno
            frame = frame.f_back
        return None

    def where(self, frame=None) -> SourceLocation | None:
        """The user's file:line of the kernel statement running now (or of the queued call
        being executed, ``line_override``)."""
        line = self.line_override or self._kernel_line(frame or sys._getframe(1))
        return self.pykernel.location_of_line(line) if line is not None else None

    def describe_lane(self, lane: int = 0) -> str:
        return f"{self.thread_name} on core {self.cores[lane]}"

    def fail(self, cls: type[SimulationError], message: str, lanes=None) -> SimulationError:
        """An error of class ``cls`` at the current kernel line, naming the core."""
        lane = 0
        if lanes is not None:
            bad = np.nonzero(np.broadcast_to(lanes, (self.L,)))[0]
            lane = int(bad[0]) if bad.size else 0
        loc = self.where(sys._getframe(1))
        return cls(f"{message} ({self.describe_lane(lane)})", loc)

    def line_of(self, frame_depth: int = 2) -> int:
        """Generated-code line of the caller's caller (cheap; for remembering where a transfer started)."""
        if self.line_override:
            return self.line_override
        kernel = self.kernel_frame
        if kernel is not None:              # the one frame of the kernel's code on this thread's stack
            line = self._line_at.get(kernel.f_lasti)
            if line is None:
                line = self._line_at[kernel.f_lasti] = kernel.f_lineno
            return line
        frame = sys._getframe(frame_depth)
        filename = self.pykernel.filename
        while frame is not None and frame.f_code.co_filename != filename:
            frame = frame.f_back
        if frame is None:
            return 0
        thread = self.thread
        if thread is not None and thread.running_kernel and getcurrent() is thread.greenlet:
            self.kernel_frame = frame
        return frame.f_lineno

    def location_of(self, line: int) -> SourceLocation | None:
        return self.pykernel.location_of_line(line)

    # -- time ---------------------------------------------------------------------------

    def busy_cycles(self) -> np.ndarray:
        return np.full(self.L, self.busy)

    def charge(self, cycles, clock: np.ndarray | None = None, name: str | None = None) -> None:
        clk = self.clock if clock is None else clock
        if self.tracing and name is not None:
            start = clk.copy()
            clk += cycles
            self.events.append(TraceEvent(name, start, clk.copy()))
        elif self.L == 1 and cycles.__class__ is not np.ndarray:
            clk[0] = clk.item() + cycles        # the same double addition, without numpy's dispatch
        else:
            clk += cycles
        self.busy += cycles
        if self.busy + self.steps > self.max_cycles:
            self.scheduler.runaway(self.thread)

    def sync_to(self, when, clock: np.ndarray | None = None) -> None:
        """Advance the clock to ``when`` where it is behind (a wait), counting the stall."""
        clk = self.clock if clock is None else clock
        if self.L == 1:                         # one lane: the same arithmetic on Python floats
            c = clk.item()
            w = when.item() if when.__class__ is np.ndarray else when
            if w > c:
                gap = w - c
                self.stall[0] = self.stall.item() + gap
                clk[0] = c + gap
            return
        if even(clk) and (when.__class__ is not np.ndarray or even(when)):
            # lanes at one time waiting for one time: the same arithmetic once, on Python floats
            c = clk.item(0)
            w = when.item(0) if when.__class__ is np.ndarray else when
            if w > c:
                gap = w - c
                stall = self.stall
                if even(stall):
                    stall.fill(stall.item(0) + gap)
                else:
                    stall += gap
                clk.fill(c + gap)
            return
        gap = when - clk
        if any_lane(gap > 0.0):
            np.maximum(gap, 0.0, out=gap)
            self.stall += gap
            clk += gap

    def block(self, key, description: str, predicate) -> None:
        """Yield to the scheduler until ``predicate()`` holds."""
        while not predicate():
            self.scheduler.block(self.thread, key, description)

    # -- control-flow helpers the Python emitter prints ---------------------------------------

    def range(self, lb, ub, step):
        if lb.__class__ is int and ub.__class__ is int and step.__class__ is int:
            r = range(lb, ub, step)
            if len(r) > min(self.max_cycles - self.busy - self.steps, MAX_LOOP_TRIPS - 1):
                self.scheduler.runaway(self.thread, f"a loop of {len(r)} iterations")
            return r
        step = uniform(step, "loop step")
        if lb.__class__ is int and ub.__class__ is int:
            return self.range(lb, ub, step)
        # Bounds differ per lane: fine as long as every lane runs the same number of iterations.
        trips = max(uniform((np.asarray(ub) - np.asarray(lb) + (step - 1)) // step, "loop trip count"), 0)
        if trips > min(self.max_cycles - self.busy - self.steps, MAX_LOOP_TRIPS - 1):
            self.scheduler.runaway(self.thread, f"a loop of {trips} iterations")
        return _lane_range(lb, step, trips)

    def assert_in_range(self, value, upper: int, message: str) -> None:
        """``ASSERT(value <= upper)`` (unsigned): a watcher assert, here a clear error at the kernel line."""
        if value.__class__ is int:
            if 0 <= value <= upper:
                return
            bad = None
        else:
            bad = (value < 0) | (value > upper)
            if not bad.any():
                return
        first = value if bad is None else int(np.asarray(value)[np.nonzero(bad)[0][0]])
        raise self.fail(DramAccessError, f"{message} starts at {first}, outside 0..{upper}: the copy would reach "
                                         "past the tensor; guard it or shorten the loop", bad)

    def kernel_assert(self, condition, parts: tuple, values: tuple) -> None:
        """The kernel's own ``ASSERT(condition)``: a clear error at its line, with the message's
        runtime values of the first core where it fails."""
        if condition.__class__ is bool or condition.__class__ is int:
            if condition:
                return
            bad, lane = None, 0
        else:
            bad = ~np.asarray(condition, dtype=bool)
            if not bad.any():
                return
            lane = int(np.nonzero(bad)[0][0]) if bad.ndim else 0
        raise self.fail(KernelAssertError, f"assertion failed: {_lane_text(parts, values, lane)}", bad)

    def dprint(self, parts: tuple, values: tuple, thread: str = "math") -> None:
        """``DPRINT``: one line per core of this thread (see :meth:`printed`)."""
        clock = self.print_clock(thread)
        for lane in range(self.L):
            self.printed(clock, lane, _lane_text(parts, values, lane))

    def print_clock(self, thread: str = "math") -> np.ndarray:
        """The clocks a debug print keeps its lines with: a compute thread's unpacker or packer
        clock for ``thread`` "unpack" / "pack", else the thread's own."""
        return self._consumer_clock() if thread == "unpack" else self._producer_clock() if thread == "pack" \
            else self.clock

    def printed(self, clock: np.ndarray, lane: int, text: str) -> None:
        """One printed line of lane ``lane``, kept with its clock; the device prints the lines of its
        final run in the order of their simulated times (:meth:`Device.run`), those of the cores
        ``TT_METAL_DPRINT_CORES`` names when it is set."""
        shown = self.dev.print_cores
        if shown is None or self._chip_core(self.cores[lane]) in shown:
            self.dev.printed.append((float(clock[lane]), len(self.dev.printed), text))

    def _chip_core(self, core: CoreCoord) -> CoreCoord:
        """``core``'s logical coordinates on its own chip (a mesh of chips lays their grids side by side)."""
        columns = self.arch.chip_columns
        return core if not columns or core.x < columns else CoreCoord(core.x % columns, core.y)

    def step(self) -> None:
        """One iteration of a while loop (the watchdog counts them, and the iterations in a row
        without a device call: see :data:`~tilefold.sim.watchdog.MAX_IDLE_STEPS`)."""
        self.steps += 1
        if self.busy + self.steps > self.max_cycles:
            self.scheduler.runaway(self.thread)
        if self.busy != self.busy_at_step:
            self.busy_at_step, self.idle_steps = self.busy, 0
            return
        self.idle_steps += 1
        if self.idle_steps >= MAX_IDLE_STEPS:
            self.scheduler.runaway(self.thread, idle=self.idle_steps)

    def cond(self, c) -> bool:
        if c.__class__ is bool:
            return c
        return bool(uniform(c, "branch condition"))

    def index(self, i) -> int:
        return i if i.__class__ is int else uniform(i, "array index")

    @staticmethod
    def select(c, a, b):
        if isinstance(c, np.ndarray):
            return np.where(c, a, b)
        return a if c else b

    @staticmethod
    def to_int(c):
        return c.astype(np.int64) if isinstance(c, np.ndarray) else int(c)

    @staticmethod
    def signed32(x):
        """A 32-bit value held as ``uint32`` read as ``int32`` (for signed compares, max / min, shifts)."""
        if isinstance(x, np.ndarray):
            return np.where(x >= 1 << 31, x - (1 << 32), x)
        return x - (1 << 32) if x >= 1 << 31 else x

    @staticmethod
    def max(a, b):
        return np.maximum(a, b) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else max(a, b)

    @staticmethod
    def min(a, b):
        return np.minimum(a, b) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else min(a, b)

    @staticmethod
    def ceildiv(a, b):
        return -(-a // b)

    @staticmethod
    def floordiv(a, b):
        return a // b

    @staticmethod
    def divsi(a, b):
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return (np.trunc(np.asarray(a) / np.asarray(b))).astype(np.int64)
        return int(a / b) if b else a // b

    @staticmethod
    def remsi(a, b):
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return np.fmod(a, b)
        return int(math.fmod(a, b))

    @staticmethod
    def bitcast(value, to_type: str):
        if to_type == "i32":
            return int(np.float32(value).view(np.uint32))
        if to_type == "f32":
            return float(np.uint32(value).view(np.float32))
        return value

    # -- arguments ----------------------------------------------------------------------

    def get_arg_val(self, arg_index):
        i = arg_index if arg_index.__class__ is int else uniform(arg_index, "runtime argument index")
        if 0 <= i < self.nargs:
            return self.arg_values[i]
        self.charge(self.costs.riscv_call)
        raise self.fail(RuntimeArgError,
                        f"get_arg_val({i}) reads runtime argument {i} but the core was given "
                        f"{self.nargs} (indices 0-{self.nargs - 1}); pass it with SetRuntimeArgs")

    def get_common_arg_val(self, arg_index):
        i = arg_index if arg_index.__class__ is int else uniform(arg_index, "runtime argument index")
        if 0 <= i < len(self.common_args):
            return self.common_args[i]
        n = len(self.common_args)
        raise self.fail(RuntimeArgError,
                        f"get_common_arg_val({i}) reads common runtime argument {i} but the kernel has {n}; "
                        "pass it with SetCommonRuntimeArgs")

    def get_compile_time_arg_val(self, index: int) -> int:
        if 0 <= index < len(self.compile_args):
            return self.compile_args[index]
        raise ProgramError(f"get_compile_time_arg_val({index}) but kernel {self.kernel.name} has "
                           f"{len(self.compile_args)} compile-time arguments; add it to the kernel's compile_args",
                           self.where(sys._getframe(1)))

    def get_absolute_logical_x(self):
        xs = np.array([c.x for c in self.cores], dtype=np.int64)
        return lane_values(xs)

    def get_absolute_logical_y(self):
        ys = np.array([c.y for c in self.cores], dtype=np.int64)
        return lane_values(ys)
