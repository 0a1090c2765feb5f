"""The host-side Program: buffers, circular buffers, kernels, semaphores and their arguments.

Reads: ttkernel functions (xDSL ``func.func`` ops, or objects with a ``.function`` such as a
PyKernel kernel). Writes: a :class:`Program` that the C++ host emitter prints as ``main.cpp``
and the simulator runs. :meth:`Program.validate` rejects what a device would reject: L1
overflow on a core (CBs plus L1 buffers plus semaphores, aligned), clashing CB indices, a
kernel without cores, two kernels on one RISC-V of a core, more than 341 runtime args (0.69's limit),
runtime args for a core the kernel does not run on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr

from tilefold.arch import Arch, get_arch
from tilefold.arch.cores import CoreCoord, CoreRange, CoreRangeSet
from tilefold.errors import L1OverflowError, ProgramError, RuntimeArgError, SourceLocation
from tilefold.ir.ttkernel import COMPUTE_CONFIG_ATTR, THREAD_ATTR, compute_config, compute_config_attr
from tilefold.layout.formats import data_format
from tilefold.program.args import BufferAddress, HalfWords, NocX, NocY, TensorAccessorArgsRef
from tilefold.program.buffers import Buffer
from tilefold.caller import user_location
from tilefold.program.circular_buffers import CircularBuffer
from tilefold.program.kernels import ComputeConfig, DataMovementConfig, Kernel, KernelConfig

SEMAPHORE_SIZE = 16  # bytes of L1 per semaphore (one aligned uint32)
U32_MAX = 2**32 - 1


def core_range_set(cores) -> CoreRangeSet:
    """A CoreRangeSet from a CoreRangeSet, CoreRange, CoreCoord, (x, y) or a list of those."""
    if isinstance(cores, CoreRangeSet):
        return cores
    if isinstance(cores, (CoreRange, CoreCoord)):
        return CoreRangeSet([cores])
    if isinstance(cores, tuple) and len(cores) == 2 and all(isinstance(v, int) for v in cores):
        return CoreRangeSet([CoreCoord(*cores)])
    return CoreRangeSet(list(cores))


@dataclass
class Semaphore:
    id: int
    cores: CoreRangeSet
    initial_value: int
    purpose: str = ""        # what a wait on it waits for, in a report ("" when the program does not say)


def _align(n: int, a: int) -> int:
    return -(-n // a) * a


@dataclass
class Program:
    """A TT-Metalium program under construction (``CreateProgram()``)."""

    name: str = "program"
    arch: Arch = field(default_factory=get_arch)
    buffers: dict[str, Buffer] = field(default_factory=dict)
    circular_buffers: list[CircularBuffer] = field(default_factory=list)
    kernels: list[Kernel] = field(default_factory=list)
    semaphores: list[Semaphore] = field(default_factory=list)
    module: ModuleOp = field(default_factory=lambda: ModuleOp([]))
    _adopted: dict = field(default_factory=dict, repr=False)   # id(original function) -> its copy here
    # circular buffers whose pages left at the end are staging blocks read before their push (no news)
    staging_circular_buffers: frozenset = frozenset()
    # compute calls that read float32 CBs through the 19-bit source registers (as TF32)
    float32_source_reads: frozenset = frozenset()

    # -- buffers --------------------------------------------------------------------

    def add_buffer(self, name: str, shape, dtype, layout: str = "TILE", buffer_type: str = "DRAM",
                   tile=None, role: str = "input", memory_config=None, page_size: int | None = None,
                   logical_shape=None) -> Buffer:
        """A device buffer; ``logical_shape`` is the tensor a padded ``shape`` holds (pages wholly in
        the padding need not be written)."""
        if name in self.buffers:
            raise ProgramError(f"a buffer named {name!r} already exists; give each buffer its own name",
                               user_location())
        buf = Buffer(name, tuple(shape), data_format(dtype), layout, buffer_type, tile or (32, 32), role,
                     memory_config, page_size, user_location(),
                     tuple(logical_shape) if logical_shape is not None else None)
        if buf.buffer_type == "DRAM" and not buf.is_sharded:
            self._check_dram_capacity(buf)
        self.buffers[name] = buf
        return buf

    def _dram_bank_bytes(self, buf: Buffer) -> int:
        """Bytes an interleaved DRAM buffer takes in each bank (as the allocator places it)."""
        apage = _align(buf.page_size, self.arch.dram_alignment)
        return max(-(-buf.num_pages // self.arch.dram_banks), 1) * apage

    def _check_dram_capacity(self, buf: Buffer) -> None:
        """Interleaved DRAM buffers must fit in the banks (checked before any host data is made)."""
        arch = self.arch
        used = sum(self._dram_bank_bytes(b) for b in self.buffers.values()
                   if b.buffer_type == "DRAM" and not b.is_sharded)
        need = self._dram_bank_bytes(buf)
        if used + need > arch.dram_bank_size:
            gib = 1 << 30
            after = f" after {used / gib:.2f} GiB of earlier buffers" if used else ""
            raise ProgramError(f"buffer {buf.name!r} ({buf.size / gib:.1f} GiB) does not fit in DRAM: it needs "
                               f"{need / gib:.2f} GiB in each of the {arch.dram_banks} banks{after}, and a bank of "
                               f"{arch.board} holds "
                               f"{arch.dram_bank_size / gib:.0f} GiB; use a smaller shape", buf.defined_at)

    def buffer(self, name: str) -> Buffer:
        try:
            return self.buffers[name]
        except KeyError:
            raise ProgramError(f"no buffer named {name!r}; the program has {', '.join(self.buffers) or 'none'}") \
                from None

    # -- circular buffers -------------------------------------------------------------

    def create_circular_buffer(self, cores, index: int, page_size: int, num_pages: int, dtype,
                               name: str = "", backing_buffer: Buffer | str | None = None,
                               backing_offset: int = 0, defined_at: SourceLocation | None = None,
                               tile: tuple[int, int] = (32, 32)) -> CircularBuffer:
        """``CreateCircularBuffer(program, cores, CircularBufferConfig(num_pages * page_size,
        {{index, format}}).set_page_size(index, page_size))``, at ``backing_offset`` bytes into
        ``backing_buffer``'s range on each core when given; ``tile`` (height, width) other than
        32x32: ``.set_tile_dims(index, Tile({h, w}))``."""
        loc = defined_at or user_location()
        if not 0 <= index < self.arch.max_circular_buffers:
            raise ProgramError(f"circular buffer index {index} is outside 0-{self.arch.max_circular_buffers - 1}",
                               loc)
        if page_size <= 0 or num_pages <= 0:
            raise ProgramError(f"circular buffer c_{index} needs a positive page size and page count "
                               f"(got {page_size} B x {num_pages})", loc)
        backing = backing_buffer.name if isinstance(backing_buffer, Buffer) else backing_buffer
        cb = CircularBuffer(index, core_range_set(cores), page_size, num_pages, data_format(dtype), name,
                            backing, backing_offset, loc, tuple(tile))
        self.circular_buffers.append(cb)
        return cb

    def circular_buffers_on(self, core: CoreCoord) -> list[CircularBuffer]:
        return [cb for cb in self.circular_buffers if core in cb.cores]

    # -- kernels --------------------------------------------------------------------

    def _adopt_function(self, function) -> func.FuncOp:
        fn = getattr(function, "function", function)
        if not isinstance(fn, func.FuncOp):
            raise ProgramError(f"a kernel must be a ttkernel function or a PyKernel kernel, not {type(function).__name__}",
                               user_location())
        adopted = self._adopted.get(id(fn))
        if adopted is not None and adopted[0] is fn:
            return adopted[1]
        for existing in self.module.ops:
            if existing is fn:
                return fn
            if isinstance(existing, func.FuncOp) and existing.sym_name.data == fn.sym_name.data:
                if existing.is_structurally_equivalent(fn):
                    return existing
                raise ProgramError(f"two different kernels are both named {fn.sym_name.data!r}; rename one",
                                   user_location())
        clone = fn.clone() if fn.parent is not None else fn
        self.module.body.block.add_op(clone)
        self._adopted[id(fn)] = (fn, clone)
        return clone

    def create_kernel(self, function, cores, config: KernelConfig, compile_args: Iterable = (),
                      defines: dict | None = None, name: str | None = None) -> Kernel:
        """``CreateKernel(program, file, cores, config)``: place a kernel function on cores."""
        loc = user_location()
        fn = self._adopt_function(function)
        thread = fn.attributes.get(THREAD_ATTR)
        want = config.thread
        if isinstance(thread, StringAttr) and thread.data != want:
            raise ProgramError(f"kernel {fn.sym_name.data!r} is a {thread.data} kernel but was given a "
                               f"{type(config).__name__}", loc)
        fn.attributes[THREAD_ATTR] = StringAttr(want)
        if isinstance(config, DataMovementConfig):
            if config.processor not in ("RISCV_0", "RISCV_1"):
                raise ProgramError(f"data movement processor {config.processor!r} of kernel {fn.sym_name.data!r} is "
                                   "not RISCV_0 (BRISC) or RISCV_1 (NCRISC)", loc)
            if config.noc not in (None, "NOC_0", "NOC_1"):
                raise ProgramError(f"NOC {config.noc!r} of kernel {fn.sym_name.data!r} is not NOC_0 or NOC_1", loc)
        if isinstance(config, ComputeConfig):
            if config.math_fidelity not in ("LoFi", "HiFi2", "HiFi3", "HiFi4"):
                raise ProgramError(f"math_fidelity {config.math_fidelity!r} is not one of LoFi, HiFi2, HiFi3, HiFi4",
                                   loc)
            if COMPUTE_CONFIG_ATTR in fn.attributes:
                stored = compute_config(fn)
                wanted = dict(math_fidelity=config.math_fidelity, fp32_dest_acc_en=config.fp32_dest_acc_en,
                              dst_full_sync_en=config.dst_full_sync_en, math_approx_mode=config.math_approx_mode)
                if stored != wanted:
                    raise ProgramError(f"compute kernel {fn.sym_name.data!r} was compiled for {stored} but is "
                                       f"created with {wanted}; use one ComputeConfig per kernel function", loc)
            fn.attributes[COMPUTE_CONFIG_ATTR] = compute_config_attr(
                config.math_fidelity, config.fp32_dest_acc_en, config.dst_full_sync_en, config.math_approx_mode)
        args = list(compile_args)
        for a in args:
            if not isinstance(a, TensorAccessorArgsRef) and not (isinstance(a, int) and 0 <= a <= U32_MAX):
                raise ProgramError(f"compile-time argument {a!r} of kernel {fn.sym_name.data!r} is not a uint32 "
                                   f"or a buffer's accessor_args", loc)
        shared = [k for k in self.kernels if k.function is fn]
        source_file = shared[0].source_file if shared else f"{fn.sym_name.data}.cpp"
        kernel = Kernel(len(self.kernels), name or fn.sym_name.data, fn, core_range_set(cores), config, args,
                        dict(defines or {}), source_file=source_file, defined_at=loc)
        self.kernels.append(kernel)
        return kernel

    def set_runtime_args(self, kernel: Kernel, core, args: Iterable) -> None:
        """``SetRuntimeArgs(program, kernel, core, args)``."""
        loc = user_location()
        core = core if isinstance(core, CoreCoord) else CoreCoord(*core)
        values = list(args)
        if core not in kernel.cores:
            raise ProgramError(f"runtime args for core {core}, where kernel {kernel.name!r} does not run "
                               f"(it runs on {kernel.cores})", loc)
        self._check_arg_count(kernel, len(values), len(kernel.common_runtime_args), core, loc)
        self._check_arg_values(kernel, values, loc)
        kernel.runtime_args[core] = values

    def set_common_runtime_args(self, kernel: Kernel, args: Iterable) -> None:
        """``SetCommonRuntimeArgs(program, kernel, args)``."""
        loc = user_location()
        values = list(args)
        unique = max(kernel.runtime_args.items(), key=lambda kv: len(kv[1]), default=(None, []))
        self._check_arg_count(kernel, len(unique[1]), len(values), unique[0], loc)
        self._check_arg_values(kernel, values, loc)
        kernel.common_runtime_args = values

    def _check_arg_count(self, kernel, unique: int, common: int, core, loc) -> None:
        """A core's unique runtime args and the kernel's common ones share one table of
        ``max_runtime_args`` words (TT-Metalium checks their sum)."""
        limit = self.arch.max_runtime_args
        if unique + common > limit:
            on = f" on core {core}" if core is not None else ""
            both = f"{unique} runtime args{on} and {common} common runtime args" if common else \
                f"{unique} runtime args{on}"
            raise RuntimeArgError(f"kernel {kernel.name!r} has {both}; at most {limit} are allowed"
                                  f"{' in all' if common else ''}", loc)

    def _check_arg_values(self, kernel, values, loc) -> None:
        for v in values:
            if isinstance(v, BufferAddress):
                self.buffer(v.buffer)
            elif isinstance(v, (NocX, NocY, HalfWords)):       # (a HalfWords checks its halves when made)
                continue
            elif not (isinstance(v, int) and 0 <= v <= U32_MAX):
                raise ProgramError(f"runtime argument {v!r} of kernel {kernel.name!r} is not a uint32, a buffer "
                                   "address or a NOC coordinate", loc)

    # -- semaphores -----------------------------------------------------------------

    def create_semaphore(self, cores, initial_value: int = 0, purpose: str = "") -> int:
        """``CreateSemaphore(program, cores, initial_value)``; returns the semaphore id. ``purpose``
        (not part of the C++): what a wait on it waits for, as a deadlock report says it."""
        sem = Semaphore(len(self.semaphores), core_range_set(cores), int(initial_value), purpose)
        self.semaphores.append(sem)
        return sem.id

    # -- queries ----------------------------------------------------------------------

    def kernels_on(self, core: CoreCoord) -> list[Kernel]:
        return [k for k in self.kernels if core in k.cores]

    def all_cores(self) -> list[CoreCoord]:
        cores = {c for k in self.kernels for c in k.cores}
        return sorted(cores, key=lambda c: (c.y, c.x))

    def l1_buffers_per_core(self) -> int:
        """Bytes each core gives to L1 buffers (sharded shards, or interleaved pages per bank)."""
        total = 0
        for buf in self.buffers.values():
            if buf.buffer_type != "L1":
                continue
            if buf.is_sharded:
                total += _align(buf.buffer_layout().bytes_per_bank(self.arch), self.arch.l1_alignment)
            else:
                banks = self.arch.num_cores
                total += -(-buf.num_pages // banks) * _align(buf.page_size, self.arch.l1_alignment)
        return total

    def l1_usage(self, core: CoreCoord) -> dict[str, int]:
        """L1 bytes used on ``core``, by kind."""
        cbs = sum(_align(cb.total_size, self.arch.l1_alignment)
                  for cb in self.circular_buffers_on(core) if cb.backing_buffer is None)
        sems = SEMAPHORE_SIZE * sum(1 for s in self.semaphores if core in s.cores)
        return {"circular_buffers": cbs, "l1_buffers": self.l1_buffers_per_core(), "semaphores": sems}

    # -- validation -------------------------------------------------------------------

    def validate(self) -> None:
        """Raise what a device would reject; see the module docstring."""
        gx, gy = self.arch.grid
        for k in self.kernels:
            if k.cores.num_cores == 0:
                raise ProgramError(f"kernel {k.name!r} has no cores; give CreateKernel a core range", k.defined_at)
            for c in k.cores:
                if not (0 <= c.x < gx and 0 <= c.y < gy):
                    raise ProgramError(f"kernel {k.name!r} is placed on core {c}, outside the {gx}x{gy} grid of "
                                       f"{self.arch.board}", k.defined_at)
        for i, a in enumerate(self.kernels):
            for b in self.kernels[i + 1:]:
                if a.processor == b.processor and a.cores.intersects(b.cores):
                    raise ProgramError(f"kernels {a.name!r} and {b.name!r} both run on {a.processor} of the same "
                                       "cores; give them disjoint core ranges or different processors", b.defined_at)
        for i, a in enumerate(self.circular_buffers):
            for c in a.cores:
                if not (0 <= c.x < gx and 0 <= c.y < gy):
                    raise ProgramError(f"circular buffer c_{a.index} is placed on core {c}, outside the grid",
                                       a.defined_at)
            for b in self.circular_buffers[i + 1:]:
                if a.index == b.index and a.cores.intersects(b.cores):
                    raise ProgramError(f"circular buffer index c_{a.index} is created twice on the same cores; "
                                       "use another index for the second one", b.defined_at)
            if a.backing_buffer is not None:
                backing = self.buffer(a.backing_buffer)
                if backing.buffer_type != "L1":
                    raise ProgramError(f"circular buffer c_{a.index} is backed by {backing.name!r}, which is not "
                                       "an L1 buffer", a.defined_at)
                room = backing.buffer_layout(self.arch).bytes_per_bank(self.arch)
                if a.backing_offset + a.total_size > room:
                    raise ProgramError(f"circular buffer c_{a.index} ({a.total_size} B from byte {a.backing_offset}) "
                                       f"does not fit the {room} B {backing.name!r} holds on each core", a.defined_at)
        for s in self.semaphores:
            for c in s.cores:
                if not (0 <= c.x < gx and 0 <= c.y < gy):
                    raise ProgramError(f"semaphore {s.id} is placed on core {c}, outside the grid")
        for k in self.kernels:
            for core, args in k.runtime_args.items():
                if core not in k.cores:
                    raise ProgramError(f"runtime args for core {core}, where kernel {k.name!r} does not run",
                                       k.defined_at)
                self._check_arg_count(k, len(args), len(k.common_runtime_args), core, k.defined_at)
        self._validate_l1()

    def _validate_l1(self) -> None:
        budget = self.arch.l1_free
        cores = {c for cb in self.circular_buffers for c in cb.cores} | set(self.all_cores())
        for core in sorted(cores, key=lambda c: (c.y, c.x)):
            usage = self.l1_usage(core)
            total = sum(usage.values())
            if total > budget:
                cbs = sorted(self.circular_buffers_on(core), key=lambda cb: -cb.total_size)
                biggest = ", ".join(f"c_{cb.index} {cb.total_size} B" for cb in cbs[:3])
                culprit, where = self._l1_culprit(core, usage["semaphores"], budget)
                raise L1OverflowError(
                    f"core {core} needs {total} B of L1 ({usage['circular_buffers']} B of circular buffers"
                    f"{', largest ' + biggest if biggest else ''}; {usage['l1_buffers']} B of L1 buffers; "
                    f"{usage['semaphores']} B of semaphores) but only {budget} B are free on {self.arch.board}"
                    f"{culprit}; use fewer or smaller pages", where)

    def _l1_culprit(self, core: CoreCoord, used: int, budget: int):
        """The allocation that crosses ``budget`` on ``core`` (semaphores, then circular buffers
        and L1 buffers in the order they were created), as a phrase, and where it was created."""
        a = self.arch.l1_alignment
        pieces = [(f"circular buffer c_{cb.index} ({cb.total_size} B)", _align(cb.total_size, a), cb.defined_at)
                  for cb in self.circular_buffers_on(core) if cb.backing_buffer is None]
        for buf in self.buffers.values():
            if buf.buffer_type == "L1":
                size = (_align(buf.buffer_layout().bytes_per_bank(self.arch), a) if buf.is_sharded else
                        -(-buf.num_pages // self.arch.num_cores) * _align(buf.page_size, a))
                pieces.append((f"L1 buffer {buf.name!r} ({size} B per core)", size, buf.defined_at))
        for what, size, where in pieces:
            used += size
            if used > budget:
                return f"; {what} is the allocation that does not fit", where
        return "", None

    def describe(self) -> str:
        lines = [f"program {self.name} on {self.arch.describe()}"]
        lines += ["  " + b.describe() for b in self.buffers.values()]
        lines += ["  " + cb.describe() for cb in self.circular_buffers]
        for k in self.kernels:
            lines.append(f"  kernel {k.name} ({k.processor}) on {k.cores.num_cores} cores: {k.cores}")
        return "\n".join(lines)
