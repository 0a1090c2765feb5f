"""The simulated device: run a Program whose kernels are ttkernel IR, return outputs and an estimate.

Reads: a :class:`~tilefold.program.Program` and host input arrays. Writes: a
:class:`RunResult` with output arrays, detected hazards, a performance estimate and,
on request, a Chrome trace.

A run: validate the program; place buffers, CBs and semaphores (:mod:`.allocator`); write
inputs to DRAM / L1 through the host transfer TT-NN uses (tilize and format conversion,
:mod:`tilefold.layout.host`); emit each kernel function as Python
(:mod:`tilefold.sim.kernel_python`); group each kernel's cores into lanes
(:mod:`.lanes`); run every reader, writer and compute thread concurrently
(:mod:`.scheduler`); check what must hold at the end (no outstanding transfers, DST
released; pages left in CBs are a warning); read outputs back. A run that batched cores into lanes
and hit a divergence or a deadlock is run again one core per thread, so what is reported
never depends on batching.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tilefold.arch import NOC_COLUMNS, NOC_ROWS, Arch, get_arch
from tilefold.arch.cores import CoreCoord
from tilefold.layout.tiles import tile_shape
from tilefold.sim.kernel_python import PythonKernel, emit_python
from tilefold.errors import (
    CircularBufferError,
    LeftoverBlocksWarning,
    DeadlockError,
    ProgramError,
    SemaphoreError,
    SimulationError,
    UnwrittenOutputError,
    warn_at,
)
from tilefold.program import BufferAddress, HalfWords, NocX, NocY, Program, TensorAccessorArgsRef
from tilefold.program.kernels import ComputeConfig
from tilefold.frozen_gc import frozen_gc
from tilefold.huge_pages import ordinary_pages_during
from tilefold.progress import Progress
from tilefold.sim.allocator import DRAM_BASE, Allocation, allocate
from tilefold.sim.blas_threads import one_blas_thread
from tilefold.sim.steady_heap import steady_heap
from tilefold.sim.cb_api import CircularBufferApi
from tilefold.sim.debug_print_api import PRINT_CORES_VARIABLE, DebugPrintApi, cores_to_print
from tilefold.sim.circular_buffers import CircularBuffers
from tilefold.sim.compute_api import ComputeApi
from tilefold.sim.context import KernelContext
from tilefold.sim.dataflow_api import NODE_CORE, NODE_DRAM, DataflowApi
from tilefold.sim.dram_shares import dram_shares, equal_share, needs_reshare
from tilefold.sim.dram_writers import DramWriters
from tilefold.sim.happens_before import SemaphoreOrder
from tilefold.sim.lanes import Divergence, SteeringArgs, group_cores, refine, steering_args
from tilefold.sim.memory import ByteMemory
from tilefold.sim.perf import Counters, PerfReport, ThreadPerf
from tilefold.sim.scheduler import Scheduler, SimThread
from tilefold.sim import numerics_mode, watchdog
from tilefold.sim.tile_math import BF16, TILE_ELEMS


def _page_list(pages: np.ndarray) -> str:
    """``page 7`` / ``pages 30-31`` / ``pages 3, 9-12 and 4 more ranges``: sorted page ids as ranges."""
    breaks = np.nonzero(np.diff(pages) != 1)[0]
    starts, ends = np.r_[pages[0], pages[breaks + 1]], np.r_[pages[breaks], pages[-1]]
    ranges = [f"{a}" if a == b else f"{a}-{b}" for a, b in zip(starts[:3], ends[:3])]
    more = f" and {len(starts) - 3} more ranges" if len(starts) > 3 else ""
    return f"page{'s' if pages.size > 1 else ''} {', '.join(ranges)}{more}"


class DataMovementContext(DataflowApi, CircularBufferApi, DebugPrintApi, KernelContext):
    def __init__(self, *args, role: str):
        super().__init__(*args)
        self.role = role
        self._dataflow_init()


class ComputeContext(ComputeApi, CircularBufferApi, DebugPrintApi, KernelContext):
    role = "compute"

    def __init__(self, *args):
        super().__init__(*args)
        self._compute_init()


@dataclass(frozen=True)
class DevicePages:
    """A buffer's contents already in device format — one row of bytes per page (tilized and packed
    for TILE layout), as a tensor resident on the device holds them. Passed as an input, the
    pages are written as they are; every run also returns its outputs' pages."""

    pages: np.ndarray


class HostOutputs(Mapping):
    """Output buffers converted to host arrays (float32 for float formats) when first asked for."""

    def __init__(self, pages: dict[str, np.ndarray], program: Program):
        self._pages = pages
        self._program = program
        self._values: dict[str, np.ndarray] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._values:
            self._values[name] = self._convert(name, native=False)
        return self._values[name]

    def native(self, name: str) -> np.ndarray:
        """Output ``name`` with bfloat16 buffers as their stored bfloat16 values (not widened;
        a fresh array each call); other formats as ``outputs[name]``."""
        return self._convert(name, native=True)

    def _convert(self, name: str, native: bool) -> np.ndarray:
        from tilefold.layout.host import from_device_pages

        buf = self._program.buffer(name) if name in self._pages else None
        if buf is None:
            raise KeyError(name)
        return from_device_pages(self._pages[name], buf.shape, buf.data_format, buf.layout, buf.tile, native=native)

    def __iter__(self):
        return iter(self._pages)

    def __len__(self) -> int:
        return len(self._pages)


@dataclass
class RunResult:
    """Outputs of a simulated run, the hazards it found and its performance estimate.

    ``outputs``: output buffers as host arrays; ``pages``: the same buffers as device pages."""

    outputs: Mapping[str, np.ndarray]
    perf: PerfReport
    hazards: list[SimulationError] = field(default_factory=list)
    trace_path: Path | None = None
    batched: bool = True
    pages: dict[str, np.ndarray] = field(default_factory=dict)
    numerics: str = "faithful"        # the device's numerics mode (sim.numerics_mode)
    printed: list[str] = field(default_factory=list)   # the kernels' DPRINT lines, in simulated time order
    # per output / inout DRAM buffer, the pages no write of the run touched (None: not in DRAM)
    unwritten: dict[str, np.ndarray | None] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.hazards


# Runs that end in a Divergence, each splitting the diverged thread's cores, before the device gives
# up on lanes and runs one core per thread (every try reruns the program from its start).
MAX_SPLITS = 4

_KERNEL_CACHE: dict[int, tuple[object, PythonKernel, SteeringArgs]] = {}


def kernel_facts(function) -> tuple[PythonKernel, SteeringArgs]:
    """The emitted Python of a ttkernel function and the arguments that steer its control flow
    (cached per function object)."""
    key = id(function)
    hit = _KERNEL_CACHE.get(key)
    if hit is not None and hit[0] is function:
        return hit[1], hit[2]
    facts = emit_python(function), steering_args(function)
    _KERNEL_CACHE[key] = (function, *facts)
    return facts


class _Run:
    """Device state of one run attempt."""

    def __init__(self, program: Program, arch: Arch, tracing: bool, max_cycles: int | None = None,
                 fast_numerics: bool = False, read_bytes: np.ndarray | None = None):
        self.program = program
        self.arch = arch
        self.tracing = tracing
        self.fast_numerics = fast_numerics
        self.printed: list[tuple[float, int, str]] = []      # (core clock, order, text) of each DPRINT
        self.print_cores = cores_to_print(os.environ.get(PRINT_CORES_VARIABLE))   # None: every core's
        self.host_written: set[str] = set()     # buffers the host gave values before the kernels ran
        self.max_cycles = watchdog.current() if max_cycles is None else max_cycles
        self.allocation: Allocation = allocate(program, arch)
        gx, gy = arch.grid
        cores = _cores_in_use(program, arch)
        self.ncores = len(cores)
        self.core_rows = {c: i for i, c in enumerate(cores)}
        self.dram = ByteMemory(arch.dram_banks, self.allocation.dram_top - DRAM_BASE, base=DRAM_BASE)
        self.order = SemaphoreOrder(self.ncores)
        self.dram_writers = DramWriters(arch.dram_banks, DRAM_BASE, self.allocation.dram_top - DRAM_BASE, self.order)
        self.l1 = ByteMemory(self.ncores, self.allocation.l1_top - self.allocation.semaphore_base,
                             base=self.allocation.semaphore_base)
        for sem in program.semaphores:      # CreateSemaphore's initial value, in each of its cores' word
            rows = np.array([self.core_rows[c] for c in sem.cores if c in self.core_rows], dtype=np.int64)
            if sem.initial_value and rows.size:
                self.l1.write_u32(rows, self.allocation.semaphore_address(sem.id), sem.initial_value)
        self.cbs = CircularBuffers(self.allocation, self.core_rows)
        self.cb_formats = {}
        self.cb_tiles = {}        # CB -> its TileShape, when not 32x32 (``set_tile_dims``)
        for cb in program.circular_buffers:
            self.cb_formats.setdefault(cb.index, cb.data_format)
            if tuple(cb.tile) != (32, 32):
                self.cb_tiles.setdefault(cb.index, tile_shape(cb.tile))
        # DST as the hardware holds it: 16-bit (bfloat16) or, with fp32_dest_acc_en, 32-bit values.
        self.dst16 = np.zeros((self.ncores, 16, TILE_ELEMS), dtype=BF16)
        self.dst32 = np.zeros((self.ncores, 16, TILE_ELEMS), dtype=np.float32)
        # DRAM bytes per cycle of each core row (tilefold.sim.dram_shares); the bytes each core reads
        self.equal_share = equal_share(program, arch)
        self.dram_share = (np.full(self.ncores, self.equal_share) if read_bytes is None
                           else dram_shares(self.equal_share, arch, read_bytes))
        self.core_read_bytes = np.zeros(self.ncores)
        self.bank_traffic: list[tuple] = []      # (bank or banks per lane, bytes) of every DRAM transfer
        self.counters = Counters()
        self.progress = 0
        self.output_bytes_written = 0
        self._sem_times: dict[int, np.ndarray] = {}
        self._sem_before: dict[int, np.ndarray] = {}     # per semaphore word: its value before the latest write
        # NOC node tables: (y, x) -> kind / row
        self.node_kind = np.zeros((NOC_ROWS, NOC_COLUMNS), dtype=np.int64)
        self.node_row = np.zeros((NOC_ROWS, NOC_COLUMNS), dtype=np.int64)
        self.dram_coords = np.array([arch.dram_noc_coord(b) for b in range(arch.dram_banks)], dtype=np.int64)
        for b, (x, y) in enumerate(self.dram_coords):
            self.node_kind[y, x], self.node_row[y, x] = NODE_DRAM, b
        banks = [CoreCoord(x, y) for y in range(gy) for x in range(gx)]   # L1 bank b is core (b % gx, b // gx)
        self.l1_bank_coords = np.array([arch.worker_noc_coord(c.x, c.y) for c in banks], dtype=np.int64)
        self.l1_bank_rows = np.array([self.core_rows.get(c, -1) for c in banks], dtype=np.int64)
        for c in cores:
            x, y = arch.worker_noc_coord(c.x, c.y)
            self.node_kind[y, x], self.node_row[y, x] = NODE_CORE, self.core_rows[c]
        # a mesh of chips run as one device (arch.mesh_of): the chip of each core row, for the
        # ethernet time of transfers between chips; None on one chip
        self.row_chip = (np.array([c.x // arch.chip_columns for c in cores], dtype=np.int64)
                         if arch.chip_columns is not None else None)
        # the node tables flat, indexed by a NOC address's node bits (y << 9 | x) as one integer
        self.node_kind_flat = self.node_kind.ravel()
        self.node_row_flat = self.node_row.ravel()

    # -- what contexts ask of the device ---------------------------------------------------

    def rows_core_name(self, row: int) -> str:
        """The core of a row of the per-core arrays, as text."""
        return str(next((c for c, r in self.core_rows.items() if r == row), row))

    def core_row(self, core: CoreCoord) -> int:
        return self.core_rows[core]

    def lane_noc_x(self, ctx):
        xs = np.array([self.arch.worker_noc_coord(c.x, c.y)[0] for c in ctx.cores], dtype=np.int64)
        return int(xs[0]) if (xs == xs[0]).all() else xs

    def lane_noc_y(self, ctx):
        ys = np.array([self.arch.worker_noc_coord(c.x, c.y)[1] for c in ctx.cores], dtype=np.int64)
        return int(ys[0]) if (ys == ys[0]).all() else ys

    def resolve_args(self, args) -> list[int]:
        return [self.resolve_arg(a) for a in args]

    def resolve_arg(self, a) -> int:
        if isinstance(a, BufferAddress):
            return self.allocation.buffers[a.buffer].address
        if isinstance(a, NocX):
            return self.arch.worker_noc_coord(a.core.x, a.core.y)[0]
        if isinstance(a, NocY):
            return self.arch.worker_noc_coord(a.core.x, a.core.y)[1]
        if isinstance(a, HalfWords):
            return a.resolved(self.resolve_arg)
        return int(a)

    def expand_compile_args(self, kernel) -> list[int]:
        out: list[int] = []
        for a in kernel.compile_args:
            if isinstance(a, TensorAccessorArgsRef):
                out += accessor_compile_args(self.program.buffer(a.buffer), self.allocation, self.arch)
            else:
                out.append(int(a))
        return out

    def sem_time(self, rows, addr) -> np.ndarray:
        a = int(np.asarray(addr).flat[0])
        times = self._sem_times.get(a)
        return np.zeros(np.size(rows)) if times is None else times[rows]

    def sem_time_note(self, rows, addr, when, before=None) -> None:
        """A write of the semaphore word at ``addr`` of cores ``rows`` lands at time ``when``;
        ``before``: the word's value before it (what a read earlier than ``when`` sees). ``addr``
        may differ per lane (one per row): each address keeps its own times and values."""
        if np.size(rows) == 1 and np.size(addr) == 1 and np.size(when) == 1:     # one word of one core
            row, a = int(np.asarray(rows).reshape(-1)[0]), int(np.asarray(addr).reshape(-1)[0])
            when = float(np.asarray(when).reshape(-1)[0])
            times = self._sem_times.setdefault(a, np.zeros(self.ncores))
            if before is not None and when >= times[row]:
                self._sem_before.setdefault(a, np.zeros(self.ncores, dtype=np.int64))[row] = \
                    int(np.asarray(before).reshape(-1)[0])
            if when > times[row]:
                times[row] = when
            return
        lanes = np.asarray(addr)
        if lanes.ndim and lanes.size > 1 and (lanes != lanes.flat[0]).any():
            rows = np.broadcast_to(np.asarray(rows, dtype=np.int64), lanes.shape)
            when = np.broadcast_to(when, lanes.shape)
            if before is not None:
                before = np.broadcast_to(np.asarray(before, dtype=np.int64), lanes.shape)
            for a in np.unique(lanes):
                at = lanes == a
                self.sem_time_note(rows[at], int(a), when[at], None if before is None else before[at])
            return
        a = int(lanes.flat[0])
        times = self._sem_times.setdefault(a, np.zeros(self.ncores))
        rows = np.asarray(rows, dtype=np.int64)
        if before is not None:
            held = self._sem_before.setdefault(a, np.zeros(self.ncores, dtype=np.int64))
            latest = np.broadcast_to(when, np.shape(rows)) >= times[rows]
            held[rows[latest]] = np.broadcast_to(np.asarray(before, dtype=np.int64), np.shape(rows))[latest]
        np.maximum.at(times, rows, np.broadcast_to(when, np.shape(rows)))

    def sem_visible(self, rows, addr: int, values, clock):
        """The semaphore word at ``addr`` of cores ``rows`` as a read at time ``clock`` sees it: a
        write that lands later (its sender ran ahead in the simulation) is not visible yet, the
        value before it is."""
        times, before = self._sem_times.get(addr), self._sem_before.get(addr)
        if times is None or before is None:
            return values
        future = times[rows] > clock
        if not future.any():
            return values
        return np.where(future, before[rows], values)

    def dram_bank_bytes(self) -> np.ndarray:
        """Bytes each DRAM bank moved during the run."""
        if not self.bank_traffic:
            return np.zeros(self.arch.dram_banks)
        one = [(b, n) for b, n in self.bank_traffic if b.__class__ is not np.ndarray]    # one bank per entry
        many = [(b.ravel(), n) for b, n in self.bank_traffic if b.__class__ is np.ndarray]
        banks = [np.array([b for b, _ in one], dtype=np.int64)] + [b for b, _ in many]
        nbytes = np.concatenate([np.array([n for _, n in one], dtype=np.float64),
                                 np.repeat(np.array([n for _, n in many], dtype=np.float64),
                                           [b.size for b, _ in many])])
        return np.bincount(np.concatenate(banks), nbytes, minlength=self.arch.dram_banks)

    def note_output_write(self, kind: int, local, nbytes: int) -> None:
        self.output_bytes_written += nbytes

    # -- host transfers ----------------------------------------------------------------------

    def _page_locations(self, name: str):
        place = self.allocation.buffers[name]
        buf = place.buffer
        pages = np.arange(buf.num_pages, dtype=np.int64)
        if buf.is_sharded:
            bank, offset = buf.buffer_layout().page_location(pages, self.arch)
            bank, local = np.asarray(bank, dtype=np.int64), place.address + np.asarray(offset, dtype=np.int64)
        else:
            bank = pages % place.num_banks
            local = place.address + (pages // place.num_banks) * place.aligned_page_size
        if place.is_dram:
            return self.dram, bank, local
        if buf.is_sharded:          # the banks of a sharded buffer are its shard cores
            cores = buf.buffer_layout(self.arch).distribution.cores
            return self.l1, np.array([self.core_rows[c] for c in cores], dtype=np.int64)[bank], local
        return self.l1, self.l1_bank_rows[bank], local

    def write_buffer(self, name: str, array) -> None:
        from tilefold.layout.host import to_device_pages

        buf = self.program.buffer(name)
        if isinstance(array, DevicePages):
            pages = array.pages
            if pages.dtype != np.uint8 or pages.shape != (buf.num_pages, buf.page_size):
                raise ProgramError(f"input {name!r} holds device pages of shape {pages.shape} ({pages.dtype}); buffer "
                                   f"{name!r} needs {buf.num_pages} pages of {buf.page_size} uint8 bytes")
        else:
            pages = to_device_pages(array, buf.data_format, buf.layout, buf.tile)
        if pages.shape != (buf.num_pages, buf.page_size):
            raise ProgramError(f"input {name!r} has shape {tuple(np.shape(array))}, which gives {pages.shape[0]} pages "
                               f"of {pages.shape[1]} B; buffer {name!r} holds {buf.num_pages} pages of "
                               f"{buf.page_size} B (shape {buf.shape})")
        full = self._copy_rounds(name, pages, to_device=True)
        if full < buf.num_pages:
            mem, rows, local = self._page_locations(name)
            mem.write(rows[full:], local[full:], pages[full:])

    def unwritten_pages(self, name: str) -> np.ndarray | None:
        """The pages of DRAM buffer ``name`` (of its logical tensor) that no write of the run
        touched, as page indices; None for a buffer outside DRAM."""
        if not self.allocation.buffers[name].is_dram:
            return None
        buf = self.program.buffers[name]
        _, bank, local = self._page_locations(name)
        untouched = self.dram_writers.untouched(bank, local, buf.page_size)
        logical = buf.logical_pages()
        return np.nonzero(untouched if logical is None else untouched & logical)[0]

    def unwritten_output_error(self) -> UnwrittenOutputError | None:
        """The first DRAM output buffer (role ``output``, not given initial values by the host) with
        pages no kernel wrote, as an error naming them."""
        for name, buf in self.program.buffers.items():
            if buf.role != "output" or name in self.host_written:
                continue
            missing = self.unwritten_pages(name)
            if missing is not None and missing.size:
                return UnwrittenOutputError(
                    f"output buffer {name!r}: {_page_list(missing)} of its {buf.num_pages} pages were never written "
                    "by any kernel, so the host would read whatever DRAM held there; write every page of an output "
                    "(check the grid or the work split over cores, and the pages the writes address)", buf.defined_at)
        return None

    def read_pages(self, name: str) -> np.ndarray:
        """A buffer's pages as the device holds them: (num_pages, page_size) bytes."""
        buf = self.program.buffer(name)
        pages = np.empty((buf.num_pages, buf.page_size), np.uint8)
        full = self._copy_rounds(name, pages, to_device=False)
        if full < buf.num_pages:
            mem, rows, local = self._page_locations(name)
            pages[full:] = mem.read(rows[full:], local[full:], buf.page_size)
        return pages

    def _copy_rounds(self, name: str, pages: np.ndarray, to_device: bool) -> int:
        """Copy the complete rounds of pages of an interleaved DRAM buffer (page ``r * banks + b``
        at slot ``r`` of bank ``b``) between ``pages`` and the banks in one numpy copy; returns
        how many pages that covered (0 for other buffers, or fewer pages than banks)."""
        place = self.allocation.buffers[name]
        buf = place.buffer
        nb = place.num_banks
        if buf.is_sharded or not place.is_dram or buf.num_pages < nb:
            return 0
        per_bank = buf.num_pages // nb
        span = per_bank * place.aligned_page_size
        if to_device:
            banks = self.dram.view(slice(0, nb), int(place.address), span)
        else:
            banks = self.dram.read(slice(0, nb), int(place.address), span)
        device = banks.reshape(nb, per_bank, place.aligned_page_size, copy=False)[:, :, :buf.page_size].transpose(1, 0, 2)
        host = pages[:per_bank * nb].reshape(per_bank, nb, buf.page_size)
        if to_device:
            device[...] = host
        else:
            host[...] = device
        return per_bank * nb


def _cores_in_use(program: Program, arch: Arch) -> list[CoreCoord]:
    """The cores whose L1 the run backs with memory: the bounding rectangle of every core with a
    kernel, circular buffer or semaphore (so multicasts within it land), or the whole grid when
    the program has L1 buffers (their banks are every core)."""
    gx, gy = arch.grid
    if any(b.buffer_type == "L1" for b in program.buffers.values()):
        return [CoreCoord(x, y) for y in range(gy) for x in range(gx)]
    used = [c for k in program.kernels for c in k.cores] + [c for cb in program.circular_buffers for c in cb.cores] \
        + [c for s in program.semaphores for c in s.cores]
    if not used:
        return [CoreCoord(0, 0)]
    xs, ys = [c.x for c in used], [c.y for c in used]
    return [CoreCoord(x, y) for y in range(min(ys), max(ys) + 1) for x in range(min(xs), max(xs) + 1)]


def accessor_compile_args(buffer, allocation: Allocation, arch: Arch) -> list[int]:
    """``TensorAccessorArgs(buffer).append_to(args)``: the compile-time args of a buffer."""
    from tilefold.layout.addressing import tensor_accessor_args

    return list(tensor_accessor_args(buffer.buffer_layout(), arch))


def _printed_lines(run: _Run) -> list[str]:
    return [text for _, _, text in sorted(run.printed)]


def _show_printed(lines) -> None:
    """The kernels' DPRINT lines of a run, on standard output (a rerun of the program, after lanes
    diverged or at other DRAM shares, prints nothing twice: only the final run's lines show)."""
    for line in lines:
        print(line)


class Device:
    """The simulated Tenstorrent device (Wormhole B0 n150 unless told otherwise)."""

    def __init__(self, arch: str | Arch | None = None, numerics: str | None = None):
        self.arch = get_arch(arch)
        self.numerics = numerics_mode.resolve(numerics)   # "faithful" or "fast" (sim.numerics_mode)

    def run(self, program: Program, inputs: dict[str, np.ndarray] | None = None, *, trace: str | Path | None = None,
            progress: bool | None = None, raise_on_hazard: bool = True, batch: bool = True,
            max_cycles: int | None = None) -> RunResult:
        """Run ``program`` with ``inputs`` (buffer name → host array). A thread running past
        ``max_cycles`` cycles (default: :mod:`tilefold.sim.watchdog`'s limit) is a ``WatchdogError``."""
        with watchdog.limit(max_cycles), one_blas_thread(), steady_heap(), ordinary_pages_during(), frozen_gc():
            try:
                result = self._run_checked(program, inputs, trace, progress, raise_on_hazard, batch)
            except SimulationError as err:
                _show_printed(getattr(err, "printed", ()))
                raise
        _show_printed(result.printed)
        return result

    def _run_checked(self, program, inputs, trace, progress, raise_on_hazard, batch) -> RunResult:
        if program.arch is not self.arch and program.arch.name != self.arch.name:
            raise ProgramError(f"program {program.name!r} was built for {program.arch.board} but the device is "
                               f"{self.arch.board}; build it for this device")
        program.validate()
        inputs = dict(inputs or {})
        for name, buf in program.buffers.items():
            if buf.role in ("input", "inout") and name not in inputs:
                raise ProgramError(f"no input data for buffer {name!r}; pass inputs={{{name!r}: array}}")
        for name in inputs:
            program.buffer(name)
        labels: dict = {}
        for _ in range(MAX_SPLITS if batch else 0):
            try:
                return self._timed(program, inputs, trace, progress, raise_on_hazard, True, labels)
            except Divergence as divergence:
                labels = refine(labels, divergence)
                if labels is None:
                    break
            except (DeadlockError, SemaphoreError):
                break
        return self._timed(program, inputs, trace, progress, raise_on_hazard, False, {})

    def _timed(self, program, inputs, trace, progress, raise_on_hazard, batch, labels) -> RunResult:
        """A run at equal DRAM shares; when its cores read unequal bytes from DRAM, the same run
        again at shares by bytes (:mod:`tilefold.sim.dram_shares`), whose estimate is reported."""
        result, run = self._attempt(program, inputs, trace, progress, raise_on_hazard, batch, labels)
        shares = dram_shares(run.equal_share, self.arch, run.core_read_bytes)
        if not needs_reshare(run.equal_share, shares):
            return result
        return self._attempt(program, inputs, trace, progress, raise_on_hazard, batch, labels, run.core_read_bytes)[0]

    def _attempt(self, program, inputs, trace, progress, raise_on_hazard, batch, labels, read_bytes=None):
        run = _Run(program, self.arch, tracing=trace is not None, fast_numerics=self.numerics == "fast",
                   read_bytes=read_bytes)
        try:
            return self._run(run, program, inputs, trace, progress, raise_on_hazard, batch, labels), run
        finally:
            run.dram.release()
            run.l1.release()

    def _run(self, run, program, inputs, trace, progress, raise_on_hazard, batch, labels) -> RunResult:
        with Progress("writing inputs (host tilize)", sum(program.buffer(n).size for n in inputs), "B",
                      enabled=progress) as bar:
            for name, array in inputs.items():
                run.write_buffer(name, array)
                run.host_written.add(name)
                bar.done += program.buffer(name).size
        contexts = self._contexts(run, batch, labels)
        threads = [SimThread(ctx, ctx.pykernel.function) for ctx in contexts]
        scheduler = Scheduler(threads)
        hazards: list[SimulationError] = []
        output_bytes = sum(b.size for b in program.buffers.values() if b.role in ("output", "inout"))
        try:
            with Progress(f"simulating {program.name}", output_bytes, "B", read=lambda: run.output_bytes_written,
                          enabled=progress):
                scheduler.run(lambda t: None)
            scheduler.finish_checks()
            leftovers = run.cbs.leftovers(program.staging_circular_buffers)
            if leftovers:
                warn_at("pages left in circular buffers when the program ended: " + "; ".join(leftovers)
                        + " (each launch starts its buffers empty, so the device itself comes to no harm; "
                          "but pages nothing consumed are results nothing used: if the consumer should have "
                          "used them, make its loop wait for and pop every page the producer pushes)",
                        run.cbs.first_push_location(program.staging_circular_buffers), LeftoverBlocksWarning)
            unwritten = run.unwritten_output_error()
            if unwritten is not None:
                raise unwritten
        except SimulationError as err:
            if raise_on_hazard or isinstance(err, (DeadlockError, SemaphoreError)) and batch:
                err.printed = _printed_lines(run)
                raise
            hazards.append(err)
        finally:
            for ctx in contexts:
                if isinstance(ctx, ComputeContext):
                    ctx.release_scratch()
        pages, unwritten = {}, {}
        with Progress("reading outputs", output_bytes, "B", enabled=progress) as bar:
            for name, buf in program.buffers.items():
                if buf.role in ("output", "inout"):
                    pages[name] = run.read_pages(name)
                    unwritten[name] = run.unwritten_pages(name)
                    bar.done += buf.size
        outputs = HostOutputs(pages, program)
        perf = _perf_report(run, contexts, program)
        trace_path = None
        if trace is not None:
            from tilefold.sim.trace import write_chrome_trace

            write_chrome_trace(trace, contexts, self.arch.clock_hz)
            trace_path = Path(trace)
        return RunResult(outputs, perf, hazards, trace_path, batch, pages, "fast" if run.fast_numerics else "faithful",
                         _printed_lines(run), unwritten)

    def _contexts(self, run: _Run, batch: bool, labels: dict) -> list[KernelContext]:
        contexts: list[KernelContext] = []
        for kernel in run.program.kernels:
            pk, steering = kernel_facts(kernel.function)
            runtime = {c: run.resolve_args(a) for c, a in kernel.runtime_args.items()}
            for group in group_cores(kernel.cores.cores(), runtime, steering, batch, labels):
                if isinstance(kernel.config, ComputeConfig):
                    ctx = ComputeContext(run, kernel, group, pk, f"compute kernel {kernel.name}")
                else:
                    role = "reader" if kernel.config.processor == "RISCV_0" else "writer"
                    ctx = DataMovementContext(run, kernel, group, pk, f"{role} kernel {kernel.name}", role=role)
                contexts.append(ctx)
        return contexts


def _perf_report(run: _Run, contexts, program: Program) -> PerfReport:
    threads = []
    end = 0.0
    for ctx in contexts:
        finish = ctx.finish_clock() if hasattr(ctx, "finish_clock") else ctx.clock
        busy = ctx.busy_cycles()
        end = max(end, float(np.max(finish)) if finish.size else 0.0)
        threads.append(ThreadPerf(ctx.kernel.name, ctx.role, list(ctx.cores), finish.copy(), busy.copy(),
                                  np.maximum(finish - busy, 0.0)))
    # No run can beat the busiest DRAM bank at its share of the bandwidth, nor the chip's DRAM bandwidth.
    bank_bytes = run.dram_bank_bytes()
    achievable = run.arch.costs.dram_achievable_fraction
    end = max(end, float(bank_bytes.max()) / (run.arch.dram_bank_bytes_per_cycle * achievable),
              float(bank_bytes.sum()) * run.arch.clock_hz / (run.arch.dram_bandwidth_per_chip * achievable))
    fidelities = [k.config.math_fidelity for k in program.kernels if isinstance(k.config, ComputeConfig)]
    fidelity = fidelities[0] if fidelities else "HiFi4"
    cores = len({c for k in program.kernels for c in k.cores})
    return PerfReport(run.arch.board, run.arch.clock_hz, end, cores, run.counters, threads,
                      run.arch.dram_bandwidth_per_chip, run.arch.peak_flops(fidelity) / run.arch.num_chips)
