"""The compute kernel API: DST, FPU and SFPU tile ops, matmul, reduce, tilize, pack.

Reads: tiles from the lanes' circular buffers (only pages the kernel waited for). Writes:
the DST register file (one per core, float32 values of the configured precision) and packed
tiles into pages the kernel reserved. Numerics are in :mod:`tilefold.sim.tile_math`.

DST follows the tile-register protocol at run time too: math ops write DST only between
``tile_regs_acquire`` and ``tile_regs_commit``, ``pack_tile`` reads only between
``tile_regs_wait`` and ``tile_regs_release``, indices stay within the capacity of the
kernel's config (8 / 4 tiles half-sync for 16-bit / 32-bit DST, 16 / 8 full-sync), and a
packed slot must have been written since the acquire (:class:`DstError`). A slot not yet
written in the current acquire reads as zero, as after the packer clears DST on release.

Timing: the three TRISCs are three clocks. The unpacker waits for and pops input pages and
spends ``tile bytes / unpack rate`` per tile; math starts when its operands are unpacked and
spends the FPU / SFPU cost; the packer starts after ``tile_regs_wait`` (the math commit) and
reserves, fills and pushes output pages. ``tile_regs_acquire`` waits until the packer has
released the DST half it is about to reuse (two halves in half-sync mode), so math and pack
overlap as they do on the device.
"""

from __future__ import annotations

import sys

import numpy as np

from tilefold.errors import CircularBufferError, DstError, InitError
from tilefold.layout.formats import DataFormat
from tilefold.ir.sfpu import (INTEGER_32, INTEGER_ARITHMETIC, INTEGER_RANGES, INTEGER_SFPU, SFPU, TYPECASTS,
                              typecast_values)
from tilefold.ir.tile_loops import QUEUEABLE_TILE_CALLS
from tilefold.ir.ttkernel_api import API, PACK_CALLS
from tilefold.program import ComputeConfig
from tilefold.sim import tile_batches
from tilefold.sim import tile_math as tm
from tilefold.sim.context import KernelContext
from tilefold.sim.engine_config import EngineConfig
from tilefold.sim.lanes import any_lane, even, uniform
from tilefold.sim.matmul_blocks import (MATMUL_TILE_FLOPS, BlockProducts, CbMatrix, OneTileMatmul, PendingMatmul,
                                        bf16_tile_operand, distinct_lanes, lanes_of_content, operand_matrix)

RELEASED, ACQUIRED, COMMITTED, WAITED = "released", "acquired", "committed", "waited"
L1_ACC_FORMATS = (DataFormat.Float32, DataFormat.Float16_b)
_INTEGER_CBS = (DataFormat.Int32, DataFormat.UInt32, DataFormat.UInt16, DataFormat.UInt8)


def _wrap(bits: int, signed: bool):
    """int64 integers wrapped around to ``bits`` bits (two's complement when ``signed``)."""
    mask, half = (1 << bits) - 1, 1 << (bits - 1)
    if signed:
        return lambda v: ((np.asarray(v, np.int64) + half) & mask) - half
    return lambda v: np.asarray(v, np.int64) & mask


# the calls that read tiles of a CB of another tile shape than 32x32 (element-wise: no element's
# result depends on where it sits in the tile); pack_tile and pack_tile_block write them
_SMALL_TILE_CALLS = frozenset({"copy_tile", "add_tiles", "sub_tiles", "mul_tiles", "pack_tile", "pack_tile_block"})
# the calls that depend on where an element sits: they take tiles one face high (at most 16 rows),
# whose faces lie where the top rows of a 32x32 tile do (and the broadcasts, ``*_bcast_*``)
_POSITIONAL_CALLS = frozenset({"reduce_tile", "matmul_block", "matmul_tiles"})

# tt::DataFormat name -> its integers wrapped to the format's width
_INTEGER_WRAP = {"Int32": _wrap(32, True), "UInt32": _wrap(32, False), "UInt16": _wrap(16, False),
                 "UInt8": _wrap(8, False)}
MAX_RECORDED_NESTS = 64     # tile nests (by the values they read) a compute thread keeps the queue of


class ComputeApi:
    """Mixed into the kernel context of compute threads. Each compute row of the API table is
    implemented once: by a method of its name, or — as its row says — by :func:`_configure`
    (a call that only configures the engines) or :func:`_sfpu` (a row of :mod:`tilefold.ir.sfpu`);
    see :func:`register_api`."""

    def _compute_init(self) -> None:
        cfg = self.kernel.config if isinstance(self.kernel.config, ComputeConfig) else ComputeConfig()
        # DST's precision for the numerics: fast numerics (sim.numerics_mode) hold float32 in every
        # DST; its capacity, and so every cost, stay those the kernel configures
        self.fp32_dest = cfg.fp32_dest_acc_en or self.dev.fast_numerics
        self.dest_32bit = cfg.fp32_dest_acc_en           # what the kernel configures
        self.unpack_to_dest_cbs = frozenset(cb for cb, mode in cfg.unpack_to_dest_mode if mode == "UnpackToDestFp32")
        self.fidelity = cfg.math_fidelity
        # fast numerics compute as TT-Lang's simulator does: float32 operands reach the multiplier
        # whole (no TF32 source registers, no fidelity phases); the costs still follow self.fidelity
        self.exact_sources = self.dev.fast_numerics
        self.value_fidelity = "exact" if self.exact_sources else self.fidelity
        self.full_sync = cfg.dst_full_sync_en
        self.dst_capacity = self.arch.dst_capacity(cfg.fp32_dest_acc_en, cfg.dst_full_sync_en)
        self.unpack_clock = np.zeros(self.L)
        self.math_clock = self.clock            # the thread's clock is the math engine's
        self.pack_clock = np.zeros(self.L)
        self.commit_time = np.zeros(self.L)
        self.section_free = [np.zeros(self.L), np.zeros(self.L)]
        self.section = 0
        self.dst_state = RELEASED
        self.dst_written = np.zeros(self.arch.dst_tiles_16bit, dtype=bool)
        # DST slot -> the integers (lanes, 1024) int64 it holds, when copy_tile unpacked an integer
        # CB into it: float32 values cannot tell uint32 values above 2^24 apart, typecast_tile reads these
        self.dst_ints: dict[int, np.ndarray] = {}
        self.dst = self.dev.dst32 if self.fp32_dest else self.dev.dst16   # storing rounds to DST precision
        self.reduce_mode = ("SUM", "REDUCE_ROW")
        self.engines = EngineConfig(self._engine_cb)   # what the *_init calls set up
        self.pack_l1_acc = False                # pack_reconfig_l1_acc(1): packs add to L1's tiles
        self.engine_busy = [0.0, 0.0, 0.0]   # unpack, math, pack
        self._operand_cache: dict = {}
        self._tile_sizes: dict[int, int] = {}     # CB -> bytes of a tile of its format
        self._unpack_cost: dict[tuple, float] = {}  # (bytes, format, tiles) -> unpacker cycles
        self._pack_cost: dict[tuple, float] = {}    # (bytes, format, tiles, L1 accumulation) -> packer cycles
        self._dst_holds: dict = {}                  # data format -> whether DST holds its values as they are
        self._slot_views: dict[tuple, np.ndarray] = {}  # (first slot, rt, ct) -> DST's one-tile block
        self._products = BlockProducts(fast=self.dev.fast_numerics)
        self._matmul_cycles: dict[tuple, tuple[float, float]] = {}  # (cb0, cb1, rt, ct) -> unpack, math cycles
        self._waited_floor: dict[int, tuple[int, int]] = {}     # cb -> (pops, pages all lanes waited)
        # Matmul sub-blocks accumulating in DST, kept row-major between matmul_block calls
        # (first DST slot -> PendingMatmul) and written into DST's face order once, when anything
        # else uses their slots (at the latest at tile_regs_commit); their operands come from
        # CB pages unpacked once into matrices ((cb, role, width, transpose) -> CbMatrix).
        self._pending_matmul: dict[int, PendingMatmul | OneTileMatmul] = {}
        # one-tile matmul_block calls of one lane at one fidelity phase skip the operand matrices
        # (OneTileMatmul): (SrcA, SrcB) multiplier part of that phase, and whether it applies
        terms = tm.FIDELITY_TERMS[self.value_fidelity]
        self._one_tile_parts = terms[0]
        self._one_tile_matmuls = self.L == 1 and len(terms) == 1 and not self.exact_sources
        # cumsum_tile keeps the last row of its sums in SFPU registers for the next tile
        # (first=false); any other SFPU op overwrites those registers.
        self._cumsum_carry: np.ndarray | None = None
        self.tile_queue: list = []              # tile calls queued by *_later calls until flush_tiles()
        self.tile_plans: dict = {}              # queued calls -> plans made for them (tilefold.sim.tile_batches)
        # tile nests queued before, by (nest number, the values of the kernel it reads) -> (queue, plan key)
        self.nest_queues: dict[tuple, tuple[tuple, tuple]] = {}
        self._nest_replay: tuple | None = None  # the recorded queue the next flush_tiles() runs
        self._nest_recording: tuple | None = None   # the nest the next flush_tiles() records the queue of

    def _producer_clock(self) -> np.ndarray:
        return self.pack_clock

    def _consumer_clock(self) -> np.ndarray:
        return self.unpack_clock

    def charge(self, cycles, clock=None, name=None) -> None:
        clk = self.clock if clock is None else clock
        if self.tracing and name is not None:
            KernelContext.charge(self, cycles, clk, name)
        else:
            if self.L == 1 and cycles.__class__ is not np.ndarray:
                clk[0] = clk.item() + cycles    # the same double addition, without numpy's dispatch
            else:
                clk += cycles
            self.busy += cycles
        self.engine_busy[0 if clk is self.unpack_clock else 2 if clk is self.pack_clock else 1] += cycles

    def busy_cycles(self) -> np.ndarray:
        """Busy time of the busiest of the unpack, math and pack engines."""
        return np.full(self.L, max(self.engine_busy))

    def finish_clock(self) -> np.ndarray:
        return np.maximum(np.maximum(self.unpack_clock, self.math_clock), self.pack_clock)

    # -- small helpers ------------------------------------------------------------------

    def _init_call(self, name: str) -> None:
        self.charge(self.costs.compute_call, self.math_clock, name)

    def _engine_cb(self, cb) -> tuple:
        """(index, data format or None) of a CB an init or a compute call names."""
        index = cb if cb.__class__ is int else uniform(cb, "circular buffer index")
        return index, self.dev.cb_formats.get(index)

    def _configured(self, message: str | None) -> None:
        """Raise the InitError of a compute call the engines are not configured for."""
        if message is not None:
            raise self.fail(InitError, message)

    def _dst_index(self, idx, call: str) -> int:
        """A DST index within capacity, with any matmul block pending on it written into DST."""
        i = self._dst_in_range(idx, call)
        if self._pending_matmul:
            self._flush_matmul(i, i + 1)
        return i

    def _dst_in_range(self, idx, call: str) -> int:
        i = idx if idx.__class__ is int else uniform(idx, "DST index")
        if not 0 <= i < self.dst_capacity:
            raise self.fail(DstError, f"{call} uses DST[{i}] but one tile_regs_acquire gives {self.dst_capacity} "
                                      f"tiles (fp32_dest_acc_en={self.fp32_dest}, dst_full_sync_en={self.full_sync}); "
                                      "use fewer tiles per acquire")
        return i

    def _math_slot(self, idx, call: str) -> int:
        if self.dst_state != ACQUIRED:
            raise self.fail(DstError, f"{call} writes DST while it is {self.dst_state}; call it between "
                                      "tile_regs_acquire() and tile_regs_commit()")
        return self._dst_index(idx, call)

    def _read_slot(self, i: int, call: str) -> np.ndarray:
        """float32 values (lanes, 1024) of a DST slot written since the acquire."""
        if not self.dst_written[i]:
            raise self.fail(DstError, f"{call} reads DST[{i}], which nothing wrote since tile_regs_acquire")
        return self.dst[self.rows, i].astype(np.float32)

    def _write_slot(self, i: int, values: np.ndarray) -> None:
        self.dst[self.rows, i] = values   # rounds to bfloat16 (nearest even) in a 16-bit DST
        self.dst_written[i] = True
        if self.dst_ints:
            self.dst_ints.pop(i, None)

    def _cb_format(self, cb: int):
        return self.dev.cb_formats[cb]

    def _tile_size_of(self, cb: int) -> int:
        """Bytes of one tile of CB ``cb``'s data format and tile shape."""
        size = self._tile_sizes.get(cb)
        if size is None:
            tile = self.dev.cb_tiles.get(cb)
            fmt = self.dev.cb_formats[cb]
            size = self._tile_sizes[cb] = fmt.tile_size(tile.height, tile.width) if tile else fmt.tile_size()
        return size

    def _small_tile(self, cb: int, call: str):
        """The tile shape of CB ``cb``, smaller than 32x32, after checking that ``call`` may use it:
        the element-wise calls only (the others depend on where each element sits in a 32x32
        tile), on tiles of fixed-size formats, without L1 accumulation."""
        tile = self.dev.cb_tiles[cb]
        fmt = self._cb_format(cb)
        positional = call in _POSITIONAL_CALLS or "bcast" in call
        if not (call in _SMALL_TILE_CALLS or positional and tile.faces_r == 1) or fmt.is_block_float \
                or self.pack_l1_acc and call in PACK_CALLS:
            raise self.fail(CircularBufferError, f"{call} on c_{cb}, a {fmt.ttnn_name} CB of {tile} tiles: the simulator "
                                                 "computes on tiles other than 32x32 with copy_tile, add_tiles, "
                                                 "sub_tiles, mul_tiles and the SFPU between them, and on tiles at "
                                                 "most 16 rows high with broadcasts, reduce_tile and as matmul's "
                                                 "in0, packed without L1 accumulation (not block floats); use "
                                                 "32x32 tiles")
        return tile

    def _whole_tiles(self, cb: int, raw: np.ndarray, call: str) -> np.ndarray:
        """Tiles of CB ``cb`` of a smaller shape as 32x32 tiles, laid out as the unpacker puts them
        into DST (:func:`~tilefold.sim.tile_math.whole_tile_bytes`)."""
        return tm.whole_tile_bytes(raw, self._small_tile(cb, call), self._cb_format(cb))

    def _page_bytes(self, st) -> int:
        """Page size of a CB on the lanes' cores (one size for every lane of a thread)."""
        return st.uniform_page_size if st.uniform_page_size is not None else int(st.page_size[self.row_idx[0]])

    def _tile_bytes(self, cb: int, st, tile, call: str, count: int = 1, lanes: np.ndarray | None = None):
        """Raw bytes of ``count`` waited tiles of a CB from ``tile``: (lanes, count, tile_size), of
        every lane or of ``lanes`` (indices of the thread's lanes) only."""
        t = tile if tile.__class__ is int else uniform(tile, "CB tile index")
        self._check_waited(cb, st, t + count, call)
        ps = self._page_bytes(st)
        if self._tile_size_of(cb) != ps:
            fmt = self._cb_format(cb)
            raise self.fail(CircularBufferError, f"{call}: c_{cb} has {ps}-byte pages but a {fmt.ttnn_name} tile is "
                                                 f"{self._tile_size_of(cb)} bytes; size the CB pages for its format")
        addr = self._page_address(st, st.rd, t, ps)
        if lanes is not None:           # (callers pass lanes whose CB pointers agree: one address)
            raw = self.dev.l1.read(self.row_idx[lanes], addr, ps * count).reshape(len(lanes), count, ps)
        else:
            raw = self.dev.l1.read(self.rows, addr, ps * count).reshape(self.L, count, ps)
        return self._whole_tiles(cb, raw, call) if cb in self.dev.cb_tiles else raw

    def read_tile_value(self, cb, tile_index, offset):
        """The uint32 word ``offset`` of waited page ``tile_index`` of a CB (TT-Metalium reads it on
        UNPACK and hands it to MATH and PACK through their mailboxes): an int, or one per lane."""
        call = "read_tile_value"
        cbi, st = self._cb(cb, call)
        t = tile_index if tile_index.__class__ is int else uniform(tile_index, "read_tile_value tile index")
        self._check_waited(cbi, st, t + 1, call)
        ps = self._page_bytes(st)
        words = np.asarray(offset, dtype=np.int64)
        if any_lane((words < 0) | (words * 4 + 4 > ps)):
            raise self.fail(CircularBufferError, f"{call}(c_{cbi}, {t}, {offset}): word {offset} lies outside the "
                                                 f"{ps}-byte page")
        addr = self._page_address(st, st.rd, t, ps) + words * 4
        raw = self.dev.l1.read(self.rows, addr if addr.ndim else int(addr), 4).reshape(self.L, 4)
        values = raw.view(np.uint32).reshape(self.L).astype(np.int64)
        self.charge(self.costs.riscv_call, None, call)
        return int(values[0]) if (values == values[0]).all() else values

    def _page_address(self, st, pointer: np.ndarray, page: int, ps: int):
        """L1 address of ``page`` pages past a CB pointer (``st.rd`` or ``st.wr``): an int when
        every lane has the same address, else one per lane."""
        if self.L == 1:
            base = st.uniform_base if st.uniform_base is not None else int(st.base[self.row0])
            return base + int(pointer[self.row0]) * ps + page * ps
        base = st.uniform_base if st.uniform_base is not None else st.base[self.rows]
        ptr = pointer[self.rows]
        return base + (ptr.item(0) if even(ptr) else ptr) * ps + page * ps

    def _unpack(self, cb, tile, call: str, count: int = 1, fpu: bool = True, exact: bool = False) -> np.ndarray:
        """float32 values (lanes, count, 1024) of waited tiles, as the source registers hold them
        (``exact``: float32 whole, a source register in Float32 format)."""
        cbi, st = self._cb(cb, call)
        raw = self._tile_bytes(cbi, st, tile, call, count)
        fmt = self._cb_format(cbi)
        self._charge_unpack(self._tile_size_of(cbi) * count, fmt, count)
        if exact and fmt is DataFormat.Float32:
            return tm.unpack(raw, fmt)
        return self._unpacked_values(raw, fmt, fpu, self._unpacks_to_dest(cbi, fmt))

    def _unpacks_to_dest(self, cbi: int, fmt) -> bool:
        """Whether tiles of CB ``cbi`` bypass the source registers: a float32 CB whose
        ``unpack_to_dest_mode`` is ``UnpackToDestFp32``."""
        return fmt is DataFormat.Float32 and cbi in self.unpack_to_dest_cbs

    def _unpacked_values(self, raw: np.ndarray, fmt, fpu: bool, to_dest: bool = False) -> np.ndarray:
        """Tile bytes (..., tile size) as float32 values (..., 1024): as the FPU's source registers
        hold them (``fpu``), else as they arrive in DST — through SRCA (TF32) unless ``to_dest``,
        then at DST precision."""
        values = tm.unpack(raw, fmt)
        if (fpu or not to_dest) and not self.exact_sources:
            values = tm.source_register(values, fmt)
        if fpu:
            return values
        return values if self.fp32_dest else tm.round_bf16(values)

    def _copied_values(self, raw: np.ndarray, fmt, to_dest: bool = False) -> np.ndarray:
        """Tile bytes (..., tile size) as ``copy_tile`` puts them in DST: bfloat16 into a 16-bit
        DST and float32 unpacked to a 32-bit one as they are, other formats unpacked (float32
        through SRCA unless ``to_dest``)."""
        same = self._dst_holds.get(fmt)
        if same is None:
            same = self._dst_holds[fmt] = tm.tile_value_dtype(fmt) == self.dst.dtype
        if same and (to_dest or fmt is not DataFormat.Float32):
            return raw.view(self.dst.dtype)       # bytes are contiguous within each tile
        return self._unpacked_values(raw, fmt, fpu=False, to_dest=to_dest)

    def _charge_unpack(self, nbytes: int, fmt, tiles: int) -> None:
        self.dev.counters.unpack_tiles += tiles * self.L
        key = (nbytes, fmt, tiles)
        cycles = self._unpack_cost.get(key)
        if cycles is None:
            cycles = self._unpack_cost[key] = self._unpack_cycles(nbytes, fmt, tiles)
        self.charge(cycles, self.unpack_clock)

    def _unpack_cycles(self, nbytes: int, fmt, tiles: int) -> float:
        """Unpacker cycles for ``tiles`` tiles of ``nbytes`` in all."""
        cycles = nbytes / self.costs.unpack_bytes_per_cycle
        if fmt.is_block_float:
            cycles += self.costs.bfp_extra_per_tile * tiles
        return cycles

    def _math_after_unpack(self) -> None:
        """The math engine starts no earlier than the unpacker has delivered (Python floats on one lane)."""
        if self.L == 1:
            u = self.unpack_clock.item()
            if u > self.math_clock.item():
                self.math_clock[0] = u
        else:
            np.maximum(self.math_clock, self.unpack_clock, out=self.math_clock)

    def _math(self, cycles: float, name: str, engine: str = "fpu", tiles: int = 1) -> None:
        self._math_after_unpack()
        self.charge(cycles, self.math_clock, name)
        c = self.dev.counters
        if engine == "fpu":
            c.fpu_tiles += tiles * self.L
        else:
            c.sfpu_tiles += tiles * self.L

    # -- init calls (configuration only; the others are registered from the table below) --

    def reduce_init(self, in_cb, scaler_cb, out_cb, pool_type="SUM", reduce_dim="REDUCE_ROW",
                    enforce_fp32_accumulation=False) -> None:
        if enforce_fp32_accumulation and not self.fp32_dest:
            raise self.fail(InitError, "reduce_init<..., true> (enforce_fp32_accumulation) needs a 32-bit DST: "
                                       "set fp32_dest_acc_en in the compute config")
        self.reduce_mode = (pool_type, reduce_dim)
        self.engines.apply("reduce_init", (in_cb, scaler_cb, out_cb),
                           {"pool_type": pool_type, "reduce_dim": reduce_dim})
        self._init_call("reduce_init")

    # -- tile calls of a loop nest, executed together (tilefold.sim.tile_batches) ----------

    def replay_tile_nest(self, nest: int, values: tuple) -> bool:
        """Whether the tile nest ``nest`` was queued before with the same values of the kernel it reads
        (its calls are then the same: the kernel's Python skips the nest and the next
        :meth:`flush_tiles` runs the recorded queue); False: the nest queues its calls, and the
        flush records them under these values."""
        key = (nest, values)
        try:
            recorded = self.nest_queues.get(key)
        except TypeError:                   # a value per core (an array): not recorded
            return False
        if recorded is not None:
            self._nest_replay = recorded
            return True
        if len(self.nest_queues) < MAX_RECORDED_NESTS:
            self._nest_recording = key
        return False

    def flush_tiles(self) -> None:
        replay, self._nest_replay = self._nest_replay, None
        if replay is not None:
            tile_batches.flush(self, *replay)
            return
        queue = tuple(self.tile_queue)
        self.tile_queue.clear()             # the same list: the *_later calls hold it
        recording, self._nest_recording = self._nest_recording, None
        key = None
        if recording is not None:
            key = ("nest", recording)
            self.nest_queues[recording] = (queue, key)
        tile_batches.flush(self, queue, key)

    # -- tile registers -----------------------------------------------------------------

    def tile_regs_acquire(self) -> None:
        if self.dst_state != RELEASED:
            raise self.fail(DstError, f"tile_regs_acquire while DST is {self.dst_state}; release it first")
        self.dst_state = ACQUIRED
        self.dst_acquired_at = self.line_of()
        self.dst_written[:] = False
        self.dst_ints.clear()
        self.sync_to(self.section_free[self.section], self.math_clock)
        self._init_call("tile_regs_acquire")

    def tile_regs_commit(self) -> None:
        if self.dst_state != ACQUIRED:
            raise self.fail(DstError, f"tile_regs_commit while DST is {self.dst_state}; call tile_regs_acquire first")
        self.dst_state = COMMITTED
        if self._pending_matmul:
            self._flush_matmul()
        self._math_after_unpack()
        self.commit_time = self.math_clock.copy()
        self._init_call("tile_regs_commit")

    def tile_regs_wait(self) -> None:
        if self.dst_state != COMMITTED:
            raise self.fail(DstError, f"tile_regs_wait while DST is {self.dst_state}; call tile_regs_commit first")
        self.dst_state = WAITED
        self.sync_to(self.commit_time, self.pack_clock)
        self.charge(self.costs.compute_call, self.pack_clock, "tile_regs_wait")

    def tile_regs_release(self) -> None:
        if self.dst_state != WAITED:
            raise self.fail(DstError, f"tile_regs_release while DST is {self.dst_state}; call tile_regs_wait first")
        self.dst_state = RELEASED
        self.free_section(self.pack_clock.copy())
        self.charge(self.costs.compute_call, self.pack_clock, "tile_regs_release")

    def free_section(self, when: np.ndarray) -> None:
        """The DST half in use is free for math from ``when`` (per lane); with two halves the next
        round uses the other."""
        self.section_free[self.section] = when
        if not self.full_sync:
            self.section ^= 1

    # -- moving tiles into DST --------------------------------------------------------------

    def copy_tile(self, in_cb, in_tile_index, dst_index) -> None:
        i, cbi, fmt, raw = self._unpack_to_slot("copy_tile", ("copy",), in_cb, in_tile_index, dst_index)
        if self.L == 1 and fmt is DataFormat.Float16_b and self._copy_bf16_tile(i, raw):
            return
        self._write_slot(i, self._copied_values(raw[:, 0], fmt, self._unpacks_to_dest(cbi, fmt)))
        if fmt in _INTEGER_CBS:
            self.dst_ints[i] = np.ascontiguousarray(raw[:, 0]).view(fmt.numpy_dtype).astype(np.int64)

    def unary_bcast(self, in_cb, in_tile_index, dst_index, bcast_type="ROW") -> None:
        """``unary_bcast<BroadcastType::...>``: a tile's first row, first column or first value
        broadcast into DST slot ``dst_index``, moved as ``copy_tile`` moves it (a 32-bit CB unpacked to
        DST whole, else through a source register)."""
        family = ("unary_bcast", bcast_type)
        i, cbi, fmt, raw = self._unpack_to_slot("unary_bcast", family, in_cb, in_tile_index, dst_index)
        bcast = tm.BROADCAST_TYPES[bcast_type]
        values = self._copied_values(raw[:, 0], fmt, self._unpacks_to_dest(cbi, fmt))
        self._write_slot(i, tm.broadcast_values(bcast, values))
        if fmt in _INTEGER_CBS:
            ints = np.ascontiguousarray(raw[:, 0]).view(fmt.numpy_dtype).astype(np.int64)
            self.dst_ints[i] = tm.broadcast_values(bcast, ints)

    def _unpack_to_slot(self, call: str, family: tuple, in_cb, in_tile_index, dst_index):
        """What a call moving one waited tile into DST does before it writes the slot: the slot
        checked, the engines' op family and source format checked, the unpack and the datacopy
        charged; returns (slot, CB index, its format, the tile's bytes (lanes, 1, size))."""
        i = self._math_slot(dst_index, call)
        self._configured(self.engines.check_fpu(call, family, in_cb))
        cbi, st = self._cb(in_cb, call)
        fmt = self._cb_format(cbi)
        raw = self._tile_bytes(cbi, st, in_tile_index, call)
        self._charge_unpack(self._tile_size_of(cbi), fmt, 1)
        self._math(self.costs.fpu_eltwise_tile, call)
        return i, cbi, fmt, raw

    def _copy_bf16_tile(self, i: int, raw: np.ndarray) -> bool:
        """``copy_tile`` of a bfloat16 tile (its bytes ``raw``) into DST slot ``i`` on one lane: the
        values as they are, widened to a 32-bit DST by the store (the cast :meth:`_copied_values`
        makes, without its temporaries)."""
        self.dst[self.row0, i] = raw.reshape(-1).view(tm._BF16)
        self.dst_written[i] = True
        if self.dst_ints:
            self.dst_ints.pop(i, None)
        return True

    def copy_dest_values(self, dst_in, dst_out) -> None:
        self._configured(self.engines.check_sfpu("copy_dest_values"))
        src = self._dst_index(dst_in, "copy_dest_values")
        dst = self._math_slot(dst_out, "copy_dest_values")
        values = self._read_slot(src, "copy_dest_values").copy()
        self._math(self.costs.sfpu("copy"), "copy_dest_values", "sfpu")
        self._write_slot(dst, values)

    # -- FPU element-wise and broadcasts -----------------------------------------------------

    def _fpu_binary(self, call: str, in0_cb, in1_cb, in0_tile, in1_tile, dst_index):
        """An FPU element-wise row (``add_tiles``, ``mul_tiles_bcast_rows`` ...): its operation and
        broadcast are the row's ``eltwise``."""
        op, bcast = API[call].eltwise
        i = self._math_slot(dst_index, call)
        self._configured(self.engines.check_fpu(call, ("binary", op, bcast), in0_cb, in1_cb))
        a = self._unpack(in0_cb, in0_tile, call)[:, 0]
        b = self._unpack(in1_cb, in1_tile, call)[:, 0]
        self._math(self.costs.fpu_eltwise_tile, call)
        self._write_slot(i, tm.fpu_binary_values(op, bcast, a, b, self.value_fidelity))

    # -- matmul -----------------------------------------------------------------------------

    def _flush_matmul(self, lo: int = 0, hi: int | None = None) -> None:
        """Settle pending matmul blocks overlapping DST slots [lo, hi) into DST (all slots by default)."""
        pending = self._pending_matmul
        hi = self.arch.dst_tiles_16bit if hi is None else hi
        for first, block in list(pending.items()):
            if first < hi and lo < first + block.tiles:
                del pending[first]
                block.settle()
                if self.rows.__class__ is not slice:     # the block summed into a copy of DST's rows
                    self.dst[self.rows, first:first + block.tiles] = block.slots.reshape(
                        self.L, block.tiles, tm.TILE_ELEMS)

    def _pending_block(self, first: int, rt: int, ct: int) -> PendingMatmul:
        """The running block of DST[first:first + rt*ct], accumulating onto what DST holds there."""
        block = self._pending_matmul.get(first)
        if block is not None and (block.rt, block.ct) == (rt, ct):
            return block
        count = rt * ct
        if self._pending_matmul:
            self._flush_matmul(first, first + count)
        if count == 1:
            started = bool(self.dst_written[first])
            view = self._slot_views.get((first, rt, ct)) if self.rows.__class__ is slice else None
            if view is None:
                view = self.dst[self.rows, first:first + 1].reshape(self.L, rt, ct, 2, 2, 16, 16)
                if self.rows.__class__ is slice:              # a view of DST: the same every time
                    self._slot_views[(first, rt, ct)] = view
        else:
            written = self.dst_written[first:first + count]
            slots = self.dst[self.rows, first:first + count]  # a view of DST when the lanes are a slice
            started = bool(written.any())
            if started and not written.all():
                slots[:, ~written] = 0                        # tiles nothing wrote add to zero
            view = slots.reshape(self.L, rt, ct, 2, 2, 16, 16)
        block = self._pending_matmul[first] = PendingMatmul(
            rt, ct, view, started, self.fp32_dest, self._products)
        return block

    def matmul_tiles(self, in0_cb, in1_cb, in0_tile_index, in1_tile_index, dst_index) -> None:
        self.matmul_block(in0_cb, in1_cb, in0_tile_index, in1_tile_index, dst_index, 0, 1, 1, 1,
                          _call="matmul_tiles")

    def matmul_block(self, in0_cb, in1_cb, in0_tile_index, in1_tile_index, dst_index, transpose, ct_dim, rt_dim,
                     kt_dim, _call: str = "matmul_block") -> None:
        ct = ct_dim if ct_dim.__class__ is int else uniform(ct_dim, "matmul block dimension")
        rt = rt_dim if rt_dim.__class__ is int else uniform(rt_dim, "matmul block dimension")
        kt = kt_dim if kt_dim.__class__ is int else uniform(kt_dim, "matmul block dimension")
        if self.dst_state != ACQUIRED:
            raise self.fail(DstError, f"{_call} writes DST while it is {self.dst_state}; call it between "
                                      "tile_regs_acquire() and tile_regs_commit()")
        tiles = rt * ct
        first = dst_index if dst_index.__class__ is int else uniform(dst_index, "DST index")
        if first < 0 or first + tiles > self.dst_capacity:
            self._dst_in_range(first, _call)                 # raises, naming the slot out of range
            self._dst_in_range(first + tiles - 1, _call)
        flip = bool(transpose if transpose.__class__ in (int, bool) else uniform(transpose, "transpose flag"))
        if self.dev.cb_tiles:
            in1 = self._cb(in1_cb, _call)[0]
            if in1 in self.dev.cb_tiles:
                raise self.fail(CircularBufferError, f"{_call}: in1 (c_{in1}) holds {self.dev.cb_tiles[in1]} tiles; "
                                                     "a matmul takes smaller tiles as in0 only, in1 of 32x32 tiles")
        cb0, st0 = self._cb(in0_cb, _call)
        cb1, st1 = self._cb(in1_cb, _call)
        self._configured(self.engines.check_fpu(_call, ("matmul",), cb1, cb0))     # in1 is SrcA, in0 SrcB
        t0 = in0_tile_index if in0_tile_index.__class__ is int else uniform(in0_tile_index, "CB tile index")
        t1 = in1_tile_index if in1_tile_index.__class__ is int else uniform(in1_tile_index, "CB tile index")
        if not (tiles == 1 and self._one_tile_matmuls and not flip
                and self._one_tile_matmul(cb0, st0, cb1, st1, t0, t1, first, _call)):
            self.matmul_accumulate(cb0, st0, cb1, st1, t0, t1, first, flip, rt, ct, kt, _call)
        if tiles == 1:
            self.dst_written[first] = True
        else:
            self.dst_written[first:first + tiles] = True
        unpack, math = self.matmul_cycles(cb0, st0, cb1, st1, rt, ct)
        counters = self.dev.counters
        counters.unpack_tiles += (rt + ct) * self.L
        self.charge(unpack, self.unpack_clock)
        self._math(math, _call, tiles=tiles)
        counters.matmul_flops += MATMUL_TILE_FLOPS * tiles * self.L

    def _one_tile_matmul(self, cb0: int, st0, cb1: int, st1, t0: int, t1: int, first: int, call: str) -> bool:
        """A one-tile ``matmul_block`` of bfloat16 tiles as a :class:`OneTileMatmul`, when no
        later call could continue it as a run (its in0 tile is the last waited for, and no run is
        pending at ``first``): the same checks in the same order, the same product. False (nothing
        done) when it does not apply."""
        formats = self.dev.cb_formats
        if formats.get(cb0) is not DataFormat.Float16_b or formats.get(cb1) is not DataFormat.Float16_b:
            return False
        if self._check_waited(cb0, st0, t0 + 1, call) != t0 + 1:
            return False
        pending = self._pending_matmul
        block = pending.get(first)
        if block is not None and block.rt == 1 and block.ct == 1 and block.__class__ is PendingMatmul \
                and block.run is not None:
            return False                                # a run that this call may continue
        raw = self._tile_bytes(cb0, st0, t0, call)
        part_a, part_b = self._one_tile_parts
        a = bf16_tile_operand(raw, "B", part_b)
        self._check_waited(cb1, st1, t1 + 1, call)
        if block is None or block.rt != 1 or block.ct != 1:
            if pending:
                self._flush_matmul(first, first + 1)     # as _pending_block does
            started = bool(self.dst_written[first])
        else:
            block.settle()                              # as PendingMatmul.accumulate does
            started = True
        pending[first] = OneTileMatmul(a, lambda: self._tile_bytes(cb1, st1, t1, call), part_a,
                                       self.dst[self.row0, first], started)
        return True

    def matmul_accumulate(self, cb0: int, st0, cb1: int, st1, t0: int, t1: int, first: int, flip: bool, rt: int,
                          ct: int, kt: int, call: str) -> None:
        """The values half of ``matmul_block``: add the product of the in0 and in1 tiles to the
        pending block at DST[first:first + rt*ct] (starting one onto what DST holds there).
        in0 is rt tiles down the block (kt apart), one tile column of an in0 matrix kt tiles wide;
        in1 is ct consecutive tiles side by side; their product is the whole rt×ct output block."""
        a, in1_matrix = self._matmul_operands(cb0, st0, cb1, st1, t0, t1, flip, rt, ct, kt, call)
        block = self._pending_matmul.get(first)
        if block.__class__ is OneTileMatmul:             # settled, then kept as the block it stands for
            block.settle()
            block = self._pending_matmul[first] = PendingMatmul(
                1, 1, self.dst[self.rows, first:first + 1].reshape(self.L, 1, 1, 2, 2, 16, 16), True,
                self.fp32_dest, self._products)
        if block is None or block.rt != rt or block.ct != ct:
            block = self._pending_block(first, rt, ct)
        block.accumulate(a, t0, t1, (cb1, flip), in1_matrix)

    def _matmul_operands(self, cb0: int, st0, cb1: int, st1, t0: int, t1: int, flip: bool, rt: int, ct: int,
                         kt: int, call: str):
        """The in0 matrix of a ``matmul_block`` step and the function giving its in1 matrix, as
        :meth:`PendingMatmul.accumulate` takes them (both CBs checked as waited far enough)."""
        a = self._cb_matrix(cb0, st0, "in0", kt if rt > 1 else None, False, t0 + (rt - 1) * kt + 1, call)
        self._check_waited(cb1, st1, t1 + ct, call)

        def in1_matrix(width: int | None, pages: int) -> CbMatrix | None:
            return self._cb_matrix(cb1, st1, "in1", width, flip, pages, call, exact=True)

        return a, in1_matrix

    def matmul_values(self, slots: np.ndarray, started: bool, rt: int, ct: int, steps) -> None:
        """An rt×ct output block's K steps ``steps`` (``(cb0, cb1, t0, t1, flip, kt, call)`` each, as
        ``matmul_block`` calls into one DST block) multiplied into ``slots`` — (lanes, rt*ct, 1024) in
        DST's precision, holding the values the block starts from when ``started`` — with the same
        arithmetic as those calls; DST and the pending blocks are not touched."""
        block = PendingMatmul(rt, ct, slots.reshape(self.L, rt, ct, 2, 2, 16, 16), started, self.fp32_dest,
                              self._products)
        for cb0, cb1, t0, t1, flip, kt, call in steps:
            (cb0, st0), (cb1, st1) = self._cb(cb0, call), self._cb(cb1, call)
            a, in1_matrix = self._matmul_operands(cb0, st0, cb1, st1, t0, t1, flip, rt, ct, kt, call)
            block.accumulate(a, t0, t1, (cb1, flip), in1_matrix)
        block.settle()

    def matmul_cycles(self, cb0: int, st0, cb1: int, st1, rt: int, ct: int) -> tuple[float, float]:
        """(unpacker, math) cycles of one ``matmul_block`` of an rt×ct block."""
        key = (cb0, cb1, rt, ct)
        cycles = self._matmul_cycles.get(key)
        if cycles is None:
            cycles = self._matmul_cycles[key] = (
                self._unpack_cycles(self._page_bytes(st0) * rt, self._cb_format(cb0), rt)
                + self._unpack_cycles(self._page_bytes(st1) * ct, self._cb_format(cb1), ct),
                (self.arch.matmul_tile_cycles(self.fidelity)
                 + self.costs.matmul_phase_extra * self.arch.fidelity_phases(self.fidelity)) * (rt * ct))
        return cycles

    def _cb_matrix(self, cb: int, st, role: str, width: int | None, transpose: bool, pages: int,
                   call: str, exact: bool = False) -> CbMatrix | None:
        """The waited pages of CB ``cb`` as a matmul operand matrix covering at least ``pages``
        pages (kept until the CB is popped; unpacked again only when more pages are needed).
        With ``exact``, None if whole rows of ``width`` tiles cannot cover ``pages``. The
        unpacker is charged by the caller for every use, as on the device."""
        key = (cb, role, width, transpose)
        hit = self._operand_cache.get(key)
        if hit is not None and hit.pops == st.pops and pages <= hit.pages:
            return hit
        available = self._check_waited(cb, st, pages, call)
        if exact and width and pages > available - available % width:
            return None
        if hit is not None and not any(b.uses(hit) for b in self._pending_matmul.values()):
            hit.release()
        if self.L == 1:                     # one lane: nothing to share
            raw, lanes = self._tile_bytes(cb, st, 0, call, available), None
        else:
            raw, lanes = self._distinct_pages(cb, st, available, call)
        # matmul feeds in1 to SrcA and in0 to SrcB; one matrix per fidelity phase term
        register = "A" if role == "in1" else "B"
        covered = available - (available % width if width else 0)
        matrix = None
        for terms in reversed(tm.FIDELITY_TERMS[self.value_fidelity]):
            part = terms[0] if register == "A" else terms[1]
            values = operand_matrix(raw, self._cb_format(cb), register, part, transpose, width,
                                    exact=self.exact_sources)
            matrix = CbMatrix(covered, width, values, st.pops, lanes, companion=matrix)
        self._operand_cache[key] = matrix
        return matrix

    def _distinct_pages(self, cb: int, st, pages: int, call: str) -> tuple[np.ndarray, np.ndarray | None]:
        """The first ``pages`` waited pages of a CB as (the distinct contents of the lanes'
        pages (n, pages, page size) bytes, the index of each lane's content), or (every lane's
        pages, None) when most lanes differ. Which lanes hold identical bytes comes from the L1
        memory's content records (see :mod:`tilefold.sim.memory`) when it has one — with the
        bytes themselves for a shared write — else from comparing the bytes."""
        ps = self._page_bytes(st)
        addr = self._page_address(st, st.rd, 0, ps)
        content = None
        if self.L >= 2 and addr.__class__ is int:
            l1 = self.dev.l1
            held = l1.shared_bytes(self.row_idx, addr, addr + pages * ps)
            shared = None if held is None else lanes_of_content(held[1])
            if shared is not None:
                sources, content = held
                first, lanes = shared
                used = content[first]                       # each lane group's string
                if len(used) < len(sources) or (used != np.arange(len(used))).any():
                    sources = sources[used]
                return sources.reshape(len(used), pages, ps), lanes
            content = l1.same_content(self.row_idx, addr, addr + pages * ps)
            shared = None if content is None else lanes_of_content(content)
            if shared is not None:                  # the bytes of one lane of each content only
                first, lanes = shared
                return self._tile_bytes(cb, st, 0, call, pages, first), lanes
        raw = self._tile_bytes(cb, st, 0, call, pages)
        if content is None and self.L < 4:
            return raw, None                        # too few lanes to share (distinct_lanes)
        shared = distinct_lanes(raw) if content is None else None
        if shared is None:
            return raw, None
        first, lanes = shared
        return raw[first], lanes

    def _check_waited(self, cb: int, st, pages: int, call: str) -> int:
        """Pages of CB ``cb`` every lane waited for (at least ``pages``, or a CircularBufferError)."""
        floor = self._waited_floor.get(cb)
        if floor is not None and floor[0] == st.pops and pages <= floor[1]:
            return floor[1]
        waited = st.waited[self.rows]
        available = int(waited[0]) if self.L == 1 else int(np.min(waited))
        if available < pages:
            raise self.fail(CircularBufferError,
                            f"{call} reads tile {pages - 1} of c_{cb} but only {available} pages were "
                            f"waited for; call cb_wait_front(c_{cb}, {pages}) first", waited < pages)
        self._waited_floor[cb] = (st.pops, available)      # waited pages only grow until a pop
        return available

    def release_scratch(self) -> None:
        """At the end of a run: operand matrices and products go back to the scratch pool."""
        for matrix in self._operand_cache.values():
            matrix.release()
        self._operand_cache.clear()
        self._products.release()

    def cb_pop_front(self, cb, num_pages) -> None:
        # matmul runs may still read the pages about to be freed: multiply them first
        for block in self._pending_matmul.values():
            block.settle()
        super().cb_pop_front(cb, num_pages)

    # -- reduce and transpose ---------------------------------------------------------------

    def reduce_tile(self, in_cb, scaler_cb, in_tile_index, scaler_tile_index, dst_index,
                    pool_type=None, reduce_dim=None, enforce_fp32_accumulation=False) -> None:
        pool = pool_type or self.reduce_mode[0]
        dim = reduce_dim or self.reduce_mode[1]
        i = self._math_slot(dst_index, "reduce_tile")
        self._configured(self.engines.check_fpu("reduce_tile", ("reduce", pool, dim), in_cb, scaler_cb))
        # full float32 (enforce_fp32_accumulation): the source registers hold float32 operands whole
        x = tm.faces_to_rows(self._unpack(in_cb, in_tile_index, "reduce_tile",
                                          exact=enforce_fp32_accumulation)[:, 0])
        scaler = tm.faces_to_rows(self._unpack(scaler_cb, scaler_tile_index, "reduce_tile",
                                               exact=enforce_fp32_accumulation)[:, 0])
        small = self.dev.cb_tiles.get(self._cb(in_cb, "reduce_tile")[0]) if self.dev.cb_tiles else None
        red = tm.reduce_values(x, scaler, pool, dim, (small.height, small.width) if small else None)
        written = self.dst_written[i]
        cur = tm.faces_to_rows(self.dst[self.rows, i].astype(np.float32)) if written else np.zeros_like(x)
        out = cur.copy()
        if dim == "REDUCE_ROW":
            out[:, :, 0] = np.maximum(cur[:, :, 0], red) if (pool == "MAX" and written) else \
                (red if pool == "MAX" else cur[:, :, 0] + red)
        elif dim == "REDUCE_COL":
            out[:, 0, :] = np.maximum(cur[:, 0, :], red) if (pool == "MAX" and written) else \
                (red if pool == "MAX" else cur[:, 0, :] + red)
        else:
            out[:, 0, 0] = np.maximum(cur[:, 0, 0], red) if (pool == "MAX" and written) else \
                (red if pool == "MAX" else cur[:, 0, 0] + red)
        self._math(self.costs.reduce_tile, "reduce_tile")
        self._write_slot(i, tm.rows_to_faces(out))

    def transpose_wh_tile(self, in_cb, in_tile_index, dst_index) -> None:
        i = self._math_slot(dst_index, "transpose_wh_tile")
        self._configured(self.engines.check_fpu("transpose_wh_tile", ("transpose",), in_cb))
        x = self._unpack(in_cb, in_tile_index, "transpose_wh_tile", fpu=False)[:, 0]
        self._math(self.costs.transpose_tile, "transpose_wh_tile")
        self._write_slot(i, tm.rows_to_faces(tm.faces_to_rows(x).swapaxes(-1, -2).copy()))

    # -- SFPU -----------------------------------------------------------------------------

    def _sfpu_unary(self, name: str, dst_index, params) -> None:
        call = f"{name}_tile"
        i = self._math_slot(dst_index, call)
        self._configured(self.engines.check_sfpu(call))
        family = SFPU[name].cost
        self._cumsum_carry = None
        if name == "fill":
            # the value may differ between cores (a value computed at run time)
            value = params[0]
            x = np.empty((self.L, tm.TILE_ELEMS), np.float32)
            x[...] = np.asarray(value, np.float32).reshape(-1, 1) if value.__class__ not in (int, float) else value
            self._math(self.costs.sfpu(family), call, "sfpu")
            self._write_slot(i, x)
            return
        x = self._read_slot(i, call)
        ps = [p if p.__class__ in (int, float) else uniform(p, f"{call} parameter") for p in params]
        ps += self.engines.sfpu_init_values(SFPU[name])
        self._math(self.costs.sfpu(family), call, "sfpu")
        self._write_slot(i, tm.sfpu_unary_values(name, x, ps, self.fp32_dest))

    def cumsum_tile(self, dst_index, first=True) -> None:
        """Sums down each column of the tile; with ``first`` false, the previous call's last row
        is added to every row (a column of tiles summed top to bottom)."""
        i = self._math_slot(dst_index, "cumsum_tile")
        self._configured(self.engines.check_sfpu("cumsum_tile"))
        first = first if first.__class__ in (int, bool) else uniform(first, "cumsum_tile first")
        rows = tm.faces_to_rows(self._read_slot(i, "cumsum_tile"))
        sums = np.cumsum(rows, axis=1, dtype=np.float32)
        if not first:
            if self._cumsum_carry is None:
                raise self.fail(DstError, "cumsum_tile(first=false) after another SFPU operation: the running sums "
                                          "kept in the SFPU's registers were overwritten; call cumsum_tile on the "
                                          "tiles of one column back to back")
            sums = sums + self._cumsum_carry[:, None, :]
        self._math(self.costs.sfpu("cumsum"), "cumsum_tile", "sfpu")
        self._write_slot(i, tm.rows_to_faces(sums))
        self._cumsum_carry = tm.faces_to_rows(self._read_slot(i, "cumsum_tile"))[:, -1, :].copy()

    def transpose_wh_dest(self, dst_index) -> None:
        i = self._math_slot(dst_index, "transpose_wh_dest")
        self._configured(self.engines.check_sfpu("transpose_wh_dest"))
        rows = tm.faces_to_rows(self._read_slot(i, "transpose_wh_dest"))
        self._cumsum_carry = None
        self._math(self.costs.transpose_tile, "transpose_wh_dest", "sfpu")
        self._write_slot(i, tm.rows_to_faces(rows.swapaxes(-1, -2).copy()))

    def _sfpu_binary(self, name: str, d0, d1, out) -> None:
        call = f"{name}_tile"
        self._configured(self.engines.check_sfpu(call))
        self._cumsum_carry = None
        a = self._read_slot(self._dst_index(d0, call), call)
        b = self._read_slot(self._dst_index(d1, call), call)
        o = self._math_slot(out, call)
        self._math(self.costs.sfpu(SFPU[name].cost), call, "sfpu")
        self._write_slot(o, tm.sfpu_binary_values(name, a, b, self.fp32_dest))

    def typecast_tile(self, dst_index, in_dtype=None, out_dtype=None) -> None:
        """Converts DST slot ``dst_index`` from ``in_dtype`` to ``out_dtype`` (``tt::DataFormat``
        names) in place: the pairs of :data:`tilefold.ir.sfpu.TYPECASTS`; Int32 and UInt32 need a 32-bit
        DST."""
        call = "typecast_tile"
        i = self._math_slot(dst_index, call)
        self._configured(self.engines.check_sfpu(call, {"in_dtype": in_dtype, "out_dtype": out_dtype}))
        if (in_dtype, out_dtype) not in TYPECASTS:
            raise self.fail(DstError, f"typecast_tile<{in_dtype}, {out_dtype}>: the simulator converts between "
                                      "the float formats (Float32, Float16_b, Bfp8_b, Bfp4_b), from them to Int32 "
                                      "and UInt32, from Int32 and UInt32 to them, from UInt32 to UInt16 and UInt8 "
                                      "and from those to UInt32 only")
        if not self.dest_32bit and (in_dtype in INTEGER_32 or out_dtype in INTEGER_32):
            raise self.fail(DstError, f"typecast_tile<{in_dtype}, {out_dtype}> needs a 32-bit DST "
                                      "(fp32_dest_acc_en) for its integer values")
        self._cumsum_carry = None
        x = self._read_slot(i, call)
        ints = self.dst_ints.get(i) if in_dtype in INTEGER_32 else None
        self._math(self.costs.sfpu("copy"), call, "sfpu")
        values = typecast_values(x, in_dtype, out_dtype, ints)
        self._write_slot(i, values)
        if out_dtype in _INTEGER_WRAP:
            # the integers themselves: a float that large is whole, and a saturated limit (2^32 - 1
            # held as the float32 2^32) is the limit
            lo, hi = INTEGER_RANGES[out_dtype]
            self.dst_ints[i] = np.clip(np.rint(np.asarray(values, np.float64)), lo, hi).astype(np.int64)

    def fill_tile_int(self, dst_index, value, data_format=None) -> None:
        """``fill_tile_int<fmt>(slot, value)``: the slot holds the integer ``value`` (its 32 bits,
        read in ``fmt``) exactly."""
        call = "fill_tile_int"
        self._configured(self.engines.check_sfpu(call))
        if data_format not in INTEGER_ARITHMETIC:
            raise self.fail(DstError, f"{call}<{data_format}>: the data format is Int32, UInt32 or UInt16")
        i = self._math_slot(dst_index, call)
        self._cumsum_carry = None
        self._math(self.costs.sfpu("fill"), call, "sfpu")
        word = np.asarray(value, np.int64) & 0xFFFFFFFF
        ints = _INTEGER_WRAP[data_format](np.broadcast_to(word.reshape(-1, 1), (self.L, tm.TILE_ELEMS)))
        self._write_slot(i, ints.astype(np.float32))
        self.dst_ints[i] = ints

    def _integer_binary(self, op, dst_in0, dst_in1, dst_out, data_format) -> None:
        """An integer SFPU function (a row of :data:`tilefold.ir.sfpu.INTEGER_SFPU_OPS`:
        ``add_int_tile<fmt>``, ``binary_max_int32_tile`` ...): the integers two DST
        slots hold (put there by ``copy_tile`` of an integer CB, ``typecast_tile`` to an integer
        format, ``fill_tile_int`` or another integer function), combined and wrapped around to the
        format's width, as the SFPU computes on 32-bit words."""
        call = op.call
        data_format = op.data_format or data_format
        self._configured(self.engines.check_sfpu(call, {"data_format": data_format} if op.templated_init else None))
        if not op.takes(data_format):
            raise self.fail(DstError, f"{call}<{data_format}>: the data format is one of "
                                      f"{', '.join(INTEGER_ARITHMETIC)}")
        if not self.dest_32bit and data_format != "UInt16":
            raise self.fail(DstError, f"{call}<{data_format}> needs a 32-bit DST (fp32_dest_acc_en) for its integers")
        self._cumsum_carry = None
        operands = []
        for d in (dst_in0, dst_in1):
            i = self._dst_index(d, call)
            self._read_slot(i, call)              # (written since the acquire)
            ints = self.dst_ints.get(i)
            if ints is None:
                raise self.fail(DstError, f"{call} reads DST[{i}], which holds float values: copy_tile an integer "
                                          "tile into it, or typecast_tile it to an integer format first")
            operands.append(ints)
        o = self._math_slot(dst_out, call)
        self._math(self.costs.sfpu(API[call].cost_family), call, "sfpu")
        ints = _INTEGER_WRAP[data_format](op.values(operands[0], operands[1]))
        self._write_slot(o, ints.astype(np.float32))
        self.dst_ints[o] = ints

    def where_tile(self, dst_condition, dst_true, dst_false, dst_out, data_format=None) -> None:
        """``where_tile<fmt>``: the true slot's values where the condition slot is not zero, else the
        false slot's; of an integer format, the integers the slots hold exactly."""
        self._configured(self.engines.check_sfpu("where_tile"))
        self._cumsum_carry = None
        c = self._read_slot(self._dst_index(dst_condition, "where_tile"), "where_tile")
        ti, fi = (self._dst_index(d, "where_tile") for d in (dst_true, dst_false))
        t, f = self._read_slot(ti, "where_tile"), self._read_slot(fi, "where_tile")
        o = self._math_slot(dst_out, "where_tile")
        self._math(self.costs.sfpu("where"), "where_tile", "sfpu")
        ints = (self.dst_ints.get(ti), self.dst_ints.get(fi)) if data_format in INTEGER_ARITHMETIC else (None,)
        if any(i is None for i in ints):
            self._write_slot(o, np.where(c != 0, t, f))
            return
        chosen = np.where(c != 0, *ints)
        self._write_slot(o, chosen.astype(np.float32))
        self.dst_ints[o] = chosen

    # -- pack -------------------------------------------------------------------------------

    def _out_pages(self, cb, first_page, count: int, call: str):
        """L1 address of output page ``first_page`` (relative to the write pointer) after checks."""
        cbi, st = self._cb(cb, call)
        if self.L == 1 and st.reserved[self.row0] >= first_page + count:
            return cbi, st, self._page_address(st, st.wr, first_page, self._page_bytes(st)), self._page_bytes(st)
        reserved = st.reserved[self.rows]
        if even(reserved) and reserved.item(0) >= first_page + count:
            ps = self._page_bytes(st)
            return cbi, st, self._page_address(st, st.wr, first_page, ps), ps
        if any_lane(reserved < first_page + count):
            raise self.fail(CircularBufferError,
                            f"{call} writes page {first_page + count - 1} of c_{cbi} but only "
                            f"{int(np.min(reserved))} pages are reserved; call cb_reserve_back(c_{cbi}, "
                            f"{first_page + count}) first", reserved < first_page + count)
        ps = self._page_bytes(st)
        return cbi, st, self._page_address(st, st.wr, first_page, ps), ps

    def pack_reconfig_l1_acc(self, l1_acc_en) -> None:
        flag = l1_acc_en if l1_acc_en.__class__ is int else uniform(l1_acc_en, "pack_reconfig_l1_acc flag")
        if flag not in (0, 1):
            raise self.fail(DstError, f"pack_reconfig_l1_acc({flag}): the flag is 0 (packs overwrite L1) or 1 "
                                      "(packs add to the tiles in L1)")
        self.pack_l1_acc = bool(flag)
        self._init_call("pack_reconfig_l1_acc")

    def _pack_into(self, cb, first_page, values: np.ndarray, call: str) -> None:
        count = values.shape[1]
        self._configured(self.engines.check_pack(call, cb))
        cbi, st, addr, ps = self._out_pages(cb, first_page, count, call)
        fmt = self._cb_format(cbi)
        if self._tile_size_of(cbi) != ps:
            raise self.fail(CircularBufferError, f"{call}: c_{cbi} has {ps}-byte pages but a {fmt.ttnn_name} tile is "
                                                 f"{self._tile_size_of(cbi)} bytes; size the CB pages for its format")
        nbytes = ps * count
        if cbi in self.dev.cb_tiles:
            small = tm.small_tile_bytes(tm.pack(values, fmt), self._small_tile(cbi, call), fmt)
            self.dev.l1.write(self.rows, addr, small.reshape(self.L, -1))
        elif self.pack_l1_acc:
            self._accumulate_in_l1(cbi, fmt, addr, nbytes, values, call)
        else:
            self._store_in_l1(fmt, addr, nbytes, values)
        self._charge_pack(nbytes, fmt, count, call)

    def _charge_pack(self, nbytes: int, fmt, count: int, call: str) -> None:
        """The packer's cycles for ``nbytes`` of ``count`` tiles of ``fmt`` (twice with L1
        accumulation, which reads them too), and the packed-tiles counter."""
        key = (nbytes, fmt, count, self.pack_l1_acc)
        cycles = self._pack_cost.get(key)
        if cycles is None:
            cycles = (2 if self.pack_l1_acc else 1) * nbytes / self.costs.pack_bytes_per_cycle
            if fmt.is_block_float:
                cycles += self.costs.bfp_extra_per_tile * count
            self._pack_cost[key] = cycles
        self.charge(cycles, self.pack_clock, call)
        self.dev.counters.pack_tiles += count * self.L

    def _store_in_l1(self, fmt, addr, nbytes: int, values: np.ndarray) -> None:
        """Pack ``values`` (lanes, count, 1024) into the tiles at ``addr``: float32 and bfloat16
        tiles are written in place (bfloat16 rounding to nearest even, as ``tm.pack``), others
        through their packed bytes."""
        dtype = tm.tile_value_dtype(fmt)
        held = self.dev.l1.view(self.rows, addr, nbytes) if dtype is not None else None
        if held is not None:
            held.view(dtype).reshape(values.shape)[...] = values
        else:
            self.dev.l1.write(self.rows, addr, tm.pack(values, fmt).reshape(self.L, -1))

    def _accumulate_in_l1(self, cbi: int, fmt, addr, nbytes: int, values: np.ndarray, call: str) -> None:
        """The packer's L1 accumulation: each tile at ``addr`` becomes its value plus ``values``
        (lanes, count, 1024), added in float32 and stored in the CB's format."""
        if fmt not in L1_ACC_FORMATS:
            raise self.fail(CircularBufferError, f"{call} with L1 accumulation into c_{cbi}, a {fmt.ttnn_name} CB: "
                                                 "the packer accumulates into float32 and bfloat16 tiles "
                                                 "only; call pack_reconfig_l1_acc(0) first or change the format")
        shape = values.shape
        if values.dtype != np.float32:
            values = values.astype(np.float32)
        if fmt is DataFormat.Float32:
            held = self.dev.l1.view(self.rows, addr, nbytes)
            if held is not None:                      # the tiles in place: one read-modify-write
                sums = held.view(np.float32).reshape(shape)
                np.add(sums, values, out=sums)
                return
        held = tm.unpack(self.dev.l1.read(self.rows, addr, nbytes).reshape(shape[0], shape[1], -1), fmt)
        self.dev.l1.write(self.rows, addr, tm.pack(held + values, fmt).reshape(self.L, -1))

    def _packed_slots(self, dst_index, count: int, call: str) -> np.ndarray:
        """DST slots [dst_index, dst_index + count) as (lanes, count, 1024), after the checks."""
        if self.dst_state != WAITED:
            raise self.fail(DstError, f"{call} while DST is {self.dst_state}; pack between tile_regs_wait() and "
                                      "tile_regs_release()")
        first = self._dst_in_range(dst_index, call)
        last = self._dst_in_range(first + count - 1, call)
        if self._pending_matmul:
            self._flush_matmul(first, last + 1)
        if first == last:
            unwritten = () if self.dst_written[first] else (first,)
        else:
            unwritten = [i for i in range(first, last + 1) if not self.dst_written[i]]
        if unwritten:
            raise self.fail(DstError, f"{call} reads DST[{unwritten[0]}], which nothing wrote since tile_regs_acquire")
        if self.dst_ints and any(i in self.dst_ints for i in range(first, last + 1)):
            return self._integer_slots(first, last)
        return self.dst[self.rows, first:last + 1]     # bfloat16 or float32, as DST holds it

    def _integer_slots(self, first: int, last: int) -> np.ndarray:
        """DST slots [first, last] as int64 (lanes, count, 1024) where they hold integers exactly
        (the packer writes their words; a float slot among them is rounded)."""
        values = np.rint(self.dst[self.rows, first:last + 1].astype(np.float64)).astype(np.int64)
        for i in range(first, last + 1):
            if i in self.dst_ints:
                values[:, i - first] = self.dst_ints[i]
        return values

    def _next_pages(self, st, count: int) -> int:
        """The CB page in-order packs write next; moves the pack sequence on by ``count``."""
        if self.L == 1:
            page = int(st.pack_seq[self.row0])
            st.pack_seq[self.row0] = page + count
            return page
        seq = st.pack_seq[self.rows]
        page = seq.item(0) if even(seq) else uniform(seq)
        st.pack_seq[self.rows] = page + count
        return page

    def pack_tile(self, dst_index, out_cb, out_tile_index=0, out_of_order_output=False) -> None:
        values = self._packed_slots(dst_index, 1, "pack_tile")
        cbi, st = self._cb(out_cb, "pack_tile")
        if out_of_order_output:
            page = out_tile_index if out_tile_index.__class__ is int else uniform(out_tile_index, "pack index")
        else:
            page = self._next_pages(st, 1)
        self._pack_into(cbi, page, values, "pack_tile")

    def pack_rows_init(self, num_rows) -> None:
        rows = num_rows if num_rows.__class__ is int else uniform(num_rows, "pack_rows_init row count")
        if not 1 <= rows <= 64:
            raise self.fail(DstError, f"pack_rows_init({rows}): a DST tile has 64 rows of 16 values; pack 1 to 64")
        self.engines.apply("pack_rows_init", (rows,), {})
        self._init_call("pack_rows_init")

    def pack_rows(self, dst_index, out_cb, output_index=0) -> None:
        """The first ``pack_rows_init`` rows of DST tile ``dst_index`` (16 values each, in DST's
        order: a 32x32 tile's faces one after another) into ``out_cb``'s pages from its reserved
        page ``output_index`` on, rounded to the CB's format (added to what they hold with L1
        accumulation)."""
        values = self._packed_slots(dst_index, 1, "pack_rows")
        cbi, st = self._cb(out_cb, "pack_rows")
        self._configured(self.engines.check_pack("pack_rows", cbi))
        fmt = self._cb_format(cbi)
        if fmt not in L1_ACC_FORMATS:
            raise self.fail(CircularBufferError, f"pack_rows into c_{cbi}, a {fmt.ttnn_name} CB: rows are packed "
                                                 "into float32 and bfloat16 buffers only")
        page = output_index if output_index.__class__ is int else uniform(output_index, "pack_rows page index")
        count = self.engines.pack_rows * 16
        nbytes = count * fmt.element_size
        _, _, addr, _ = self._out_pages(cbi, page, -(-nbytes // self._page_bytes(st)), "pack_rows")
        dtype = tm.tile_value_dtype(fmt)
        rows = values[:, 0, :count]
        if self.pack_l1_acc:                    # added in float32 to what the pages hold
            held = np.ascontiguousarray(self.dev.l1.read(self.rows, addr, nbytes)).reshape(self.L, nbytes).view(dtype)
            rows = held.astype(np.float32) + rows.astype(np.float32)
        self.dev.l1.write(self.rows, addr, np.ascontiguousarray(rows, dtype=dtype).view(np.uint8))
        self._charge_pack(nbytes, fmt, 1, "pack_rows")

    def pack_tile_block(self, dst_index, out_cb, ntiles) -> None:
        n = ntiles if ntiles.__class__ is int else uniform(ntiles, "pack_tile_block tile count")
        if n < 1:
            raise self.fail(DstError, f"pack_tile_block of {n} tiles; pack at least one")
        values = self._packed_slots(dst_index, n, "pack_tile_block")
        cbi, st = self._cb(out_cb, "pack_tile_block")
        self._pack_into(cbi, self._next_pages(st, n), values, "pack_tile_block")

    # -- tilize / untilize ------------------------------------------------------------------

    def _whole_block(self, call: str) -> None:
        if self.dst_state != RELEASED:
            raise self.fail(DstError, f"{call} manages DST itself; call it while DST is released, not {self.dst_state}")

    def tilize_block(self, in_cb, block, out_cb) -> None:
        self._whole_block("tilize_block")
        self._configured(self.engines.check_fpu("tilize_block", ("tilize",), in_cb))
        n = uniform(block, "tilize block size")
        cbi, st = self._cb(in_cb, "tilize_block")
        raw = self._tile_bytes(cbi, st, 0, "tilize_block", n).reshape(self.L, -1)
        fmt = self._cb_format(cbi)
        values = _rows_from_bytes(raw, fmt, n)                       # (L, 32, n*32)
        self._charge_unpack(raw.shape[-1], fmt, n)
        tiles = tm.row_major_to_tiles(values, n)
        if not self._unpacks_to_dest(cbi, fmt) and not self.exact_sources:
            tiles = tm.source_register(tiles, fmt)                    # through SRCA
        if not (self.fp32_dest and fmt.element_size == 4):
            tiles = tm.round_bf16(tiles)
        np.maximum(self.math_clock, self.unpack_clock, out=self.math_clock)
        self.charge(self.costs.fpu_eltwise_tile * n, self.math_clock, "tilize_block")
        np.maximum(self.pack_clock, self.math_clock, out=self.pack_clock)
        cbi, st = self._cb(out_cb, "tilize_block")
        self._pack_into(cbi, self._next_pages(st, n), tiles, "tilize_block")

    def untilize_block(self, in_cb, block, out_cb) -> None:
        self._whole_block("untilize_block")
        self._configured(self.engines.check_fpu("untilize_block", ("untilize",), in_cb)
                         or self.engines.check_pack("untilize_block", out_cb))
        n = uniform(block, "untilize block size")
        tiles = self._unpack(in_cb, 0, "untilize_block", n, fpu=False)       # (L, n, 1024)
        rows = tm.tiles_to_row_major(tiles)                                   # (L, 32, n*32)
        np.maximum(self.math_clock, self.unpack_clock, out=self.math_clock)
        self.charge(self.costs.fpu_eltwise_tile * n, self.math_clock, "untilize_block")
        np.maximum(self.pack_clock, self.math_clock, out=self.pack_clock)
        cbi, st = self._cb(out_cb, "untilize_block")
        fmt = self._cb_format(cbi)
        raw = _rows_to_bytes(rows, fmt)
        _, _, addr, ps = self._out_pages(cbi, self._next_pages(st, n), n, "untilize_block")
        if raw.shape[-1] != ps * n:
            raise self.fail(CircularBufferError, f"untilize_block: {n} rows of {n * 32} {fmt.ttnn_name} values do not "
                                                 f"fill {n} pages of c_{cbi} ({ps} B each)")
        self.dev.l1.write(self.rows, addr, raw)
        self.charge(raw.shape[-1] / self.costs.pack_bytes_per_cycle, self.pack_clock, "untilize_block")
        self.dev.counters.pack_tiles += n * self.L


def _rows_from_bytes(raw: np.ndarray, fmt, ntiles: int) -> np.ndarray:
    """Row-major bytes of 32 rows × ntiles*32 values → float32 (lanes, 32, ntiles*32)."""
    lanes = raw.shape[0]
    if fmt.ttnn_name == "bfloat16":
        vals = (np.ascontiguousarray(raw).view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    elif fmt.ttnn_name == "float32":
        vals = np.ascontiguousarray(raw).view(np.float32)
    else:
        vals = np.ascontiguousarray(raw).view(fmt.numpy_dtype).astype(np.float32)
    return vals.reshape(lanes, 32, ntiles * 32)


def _rows_to_bytes(rows: np.ndarray, fmt) -> np.ndarray:
    lanes = rows.shape[0]
    if fmt.is_block_float:
        raise CircularBufferError(f"untilize_block cannot write {fmt.ttnn_name}: block-float data exists only as tiles")
    if fmt.ttnn_name == "bfloat16":
        return rows.astype(tm._BF16).view(np.uint8).reshape(lanes, -1)
    return rows.astype(fmt.numpy_dtype).view(np.uint8).reshape(lanes, -1)


# -- the API rows without a method of their own ---------------------------------------------

def _configure(name: str):
    """A call that only configures the engines (:mod:`tilefold.sim.engine_config` keeps what it
    sets up): it costs one compute call."""
    def call(self, *args, **kwargs):
        self.engines.apply(name, args, kwargs)
        self._init_call(name)
    call.configures_only = True
    return call


def _eltwise(name: str):
    """An FPU element-wise row of the API table (tiles of two CBs into DST)."""
    def call(self, in0_cb, in1_cb, in0_tile_index, in1_tile_index, dst_index):
        self._fpu_binary(name, in0_cb, in1_cb, in0_tile_index, in1_tile_index, dst_index)
    return call


def _sfpu(name: str, arity: str):
    """An SFPU function of :mod:`tilefold.ir.sfpu` on DST slots."""
    if arity == "binary":
        def call(self, d0, d1, out):
            self._sfpu_binary(name, d0, d1, out)
    else:
        def call(self, dst_index, *params):
            self._sfpu_unary(name, dst_index, params)
    return call


def _integer(op):
    """An integer SFPU function of :data:`tilefold.ir.sfpu.INTEGER_SFPU_OPS` on DST slots."""
    def call(self, dst_in0, dst_in1, dst_out, data_format=None):
        self._integer_binary(op, dst_in0, dst_in1, dst_out, data_format)
    return call


def _queued(name: str):
    """``<call>_later``: the call queued for :meth:`ComputeApi.flush_tiles` as ``(name, args,
    keyword items, bytecode offset it was called from)`` (a line only if needed): a tuple, so a
    queue of scalar arguments is its own hashable key."""
    def call(self, *args, **kwargs):
        self.tile_queue.append((name, args, tuple(kwargs.items()) if kwargs else (), sys._getframe(1).f_lasti))
    return call


def register_api(cls: type) -> dict[str, str]:
    """Give ``cls`` one implementation of every compute row of the API table; returns how each
    row is implemented (``method``, ``configure``, ``sfpu``, ``integer`` or ``eltwise``). Tile calls a loop nest may batch
    also get their ``<call>_later`` form."""
    how = {}
    for fn in API.values():
        if fn.thread != "compute":
            continue
        if fn.name in cls.__dict__:
            how[fn.name] = "method"
        elif fn.sfpu is not None:
            setattr(cls, fn.name, _sfpu(fn.sfpu, SFPU[fn.sfpu].arity))
            how[fn.name] = "sfpu"
        elif fn.name in INTEGER_SFPU:
            setattr(cls, fn.name, _integer(INTEGER_SFPU[fn.name]))
            how[fn.name] = "integer"
        elif fn.eltwise is not None:
            setattr(cls, fn.name, _eltwise(fn.name))
            how[fn.name] = "eltwise"
        elif fn.configures:
            setattr(cls, fn.name, _configure(fn.name))
            how[fn.name] = "configure"
    for name in QUEUEABLE_TILE_CALLS:
        setattr(cls, f"{name}_later", _queued(name))
    return how


IMPLEMENTATIONS = register_api(ComputeApi)
