"""Per-operation costs of the simulator's cost model, in core clock cycles.

Reads: nothing. Writes: nothing. :mod:`tilefold.sim` charges every simulated API call one
of these costs on its thread's clock.

This is a model, not a measurement of a device. ``docs/cost-model.md`` lists every published
figure used, with its source, and how modeled times compare with published measurements.
Where each number comes from:

* **RISC-V API call overhead** (``riscv_call``, ``cb_op``): the dataflow and CB calls are a
  few tens of RISC-V instructions at about one instruction per cycle (TT-Metalium's
  ``dataflow_api.h``: pointer arithmetic and one or two memory-mapped register accesses).
* **NOC** (``noc_issue``, ``noc_latency``): issuing a command writes about ten NOC command
  registers; the round trip across a Wormhole NOC is a few hundred cycles for reads
  (public TT-Metalium data-movement tech reports). Transfer time is the size divided by
  the link width (:attr:`Arch.noc_link_bytes_per_cycle`), split into packets of at most
  :attr:`Arch.noc_max_burst` bytes.
* **DRAM** (``dram_latency``): GDDR6 access latency seen from a Tensix core, on top of
  the NOC latency; bandwidth per bank is the board bandwidth divided by the banks
  (:attr:`Arch.dram_bank_bytes_per_cycle`); the board bandwidth is shared among the cores
  reading from DRAM by the bytes they move (:mod:`tilefold.sim.dram_shares`).
* **DRAM rates** (``dram_achievable_fraction``, ``dram_core_bytes_per_cycle``): the fraction of
  the board's DRAM bandwidth a one-reader-per-bank microbenchmark reaches (Wormhole 267 of
  288 GB/s, TT-Metal's "Saturating DRAM bandwidth" report; Blackhole 500 of 512 GB/s, its
  Blackhole companion) and one core's DRAM read rate under ideal conditions (22 B/cycle
  Wormhole, 33 Blackhole; TT-Metal's data-movement "ideal performance" table).
* **Multicast** (``noc_mcast_bytes_per_cycle``): one-to-all linked multicast, 22 B/cycle on
  Wormhole and 41 on Blackhole (the same table), below the 32 / 64 B/cycle link width.
* **FPU**: a 32×32×32 matmul is 65,536 flops at 4,096 flop/cycle (LoFi), times the number
  of fidelity phases (HiFi2 ×2, HiFi3 ×3, HiFi4 ×4): 16 / 32 / 48 / 64 cycles per tile, the
  ideal cycles TT-Metal's GEMM_FLOPS report uses. ``matmul_phase_extra`` adds cycles per tile
  and fidelity phase on top (the engine does not sustain its ideal rate inside a
  ``matmul_block``: face and phase sequencing); it is not published: 6 cycles is fitted so the
  modeled 2-D multicast GEMM matches the published device utilisation of the bfloat16 HiFi2
  rows on n150 (``bench/device_perf.py`` compares every row). An element-wise FPU tile op moves 1,024 values through the engine at 8×16 per
  cycle (8 cycles, TT-Metal's matrix-engine report); ``fpu_eltwise_tile`` adds the per-tile
  issue and setup.
* **Unpack / pack**: one 32×32 tile moves at about 64 bytes/cycle through the unpacker
  and packer; block-float formats add the exponent handling (``*_bfp`` costs). Blackhole's
  Tensix has more L1 bandwidth than Wormhole's (tt-isa-documentation, ``BlackholeA0/TensixTile``);
  its unpacker is modeled at twice the rate, 128 bytes/cycle, the rate GEMM_FLOPS.md's P150
  bfloat8_b LoFi rows need (up to 81 % device utilisation, where a 4×2 sub-block unpacks six
  block-float tiles per eight 16-cycle tile products: at 64 bytes/cycle that alone caps it at 65 %).
* **SFPU**: a 32-lane vector unit processes a tile in 32 rows of 32 values, with a cost
  per row that depends on the function (about 4 cycles for simple arithmetic, 8 for
  exp/log/recip style approximations, 16 for transcendental compositions like gelu).
* **tilize / untilize**: the unpacker's tilize mode and the packer's untilize mode run at
  about the unpack / pack rate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# SFPU cycles per tile by function family (32 rows x cycles per row).
_SFPU_SIMPLE = 32 * 4
_SFPU_APPROX = 32 * 8
_SFPU_COMPOSED = 32 * 16

DEFAULT_SFPU_TILE_CYCLES: dict[str, int] = {
    "copy": _SFPU_SIMPLE,
    "add": _SFPU_SIMPLE, "sub": _SFPU_SIMPLE, "mul": _SFPU_SIMPLE, "rsub": _SFPU_SIMPLE,
    "max": _SFPU_SIMPLE, "min": _SFPU_SIMPLE, "abs": _SFPU_SIMPLE, "neg": _SFPU_SIMPLE,
    "relu": _SFPU_SIMPLE, "square": _SFPU_SIMPLE, "fill": _SFPU_SIMPLE, "floor": _SFPU_SIMPLE,
    "ceil": _SFPU_SIMPLE, "where": _SFPU_SIMPLE, "clamp": _SFPU_SIMPLE, "compare": _SFPU_SIMPLE,
    "exp": _SFPU_APPROX, "exp2": _SFPU_APPROX, "log": _SFPU_APPROX, "sqrt": _SFPU_APPROX,
    "rsqrt": _SFPU_APPROX, "recip": _SFPU_APPROX, "div": _SFPU_APPROX, "sigmoid": _SFPU_APPROX,
    "tanh": _SFPU_APPROX, "sin": _SFPU_APPROX, "cos": _SFPU_APPROX, "power": _SFPU_COMPOSED,
    "gelu": _SFPU_COMPOSED, "silu": _SFPU_COMPOSED, "trig": _SFPU_COMPOSED, "cumsum": _SFPU_APPROX,
}


@dataclass(frozen=True)
class OpCosts:
    """Cycle costs of simulated operations (see the module docstring for their sources)."""

    riscv_call: int = 8             # any dataflow API call not listed below
    cb_op: int = 12                 # cb_reserve_back / push_back / wait_front / pop_front
    noc_issue: int = 24             # issuing one NOC command
    noc_latency: int = 180          # NOC round trip to another Tensix core
    dram_latency: int = 320         # extra latency of a DRAM access
    barrier: int = 8                # barrier / flush when nothing is outstanding
    compute_call: int = 4           # init calls, tile_regs_* handshakes
    unpack_bytes_per_cycle: int = 64
    pack_bytes_per_cycle: int = 64
    bfp_extra_per_tile: int = 16    # shared-exponent handling for bfp8_b / bfp4_b
    fpu_eltwise_tile: int = 20      # add/sub/mul_tiles, including bcast variants
    reduce_tile: int = 32
    matmul_phase_extra: int = 6     # per tile and fidelity phase, on top of the ideal 16 (fitted)
    transpose_tile: int = 32
    sfpu_tile: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_SFPU_TILE_CYCLES))
    # DRAM and NOC rates measured on devices (docs/cost-model.md gives each source)
    dram_achievable_fraction: float = 267 / 288     # one-reader-per-bank microbenchmark, n150
    dram_core_bytes_per_cycle: float = 22.0         # one core's DRAM reads, ideal-conditions test
    noc_mcast_bytes_per_cycle: float = 22.0         # one-to-all multicast (linked), ideal-conditions test

    def sfpu(self, family: str) -> int:
        """Cycles per tile of an SFPU function of ``family`` (the ``cost`` of its row in
        :mod:`tilefold.ir.sfpu`; every family has one)."""
        return self.sfpu_tile[family]


WORMHOLE_COSTS = OpCosts()
# Blackhole: the same Tensix pipeline costs per cycle (the matrix engine is the same per clock);
# its own DRAM and NOC rates: 500 of 512 GB/s with bank-adjacent readers, 33 B/cycle DRAM reads
# per core and 41 B/cycle linked multicast over the 64-byte NOC; NOC round trips in cycles grow
# with the faster 1.35 GHz clock. Its matrix engine sustains more of its ideal rate inside a
# matmul_block: GEMM_FLOPS.md's P150 rows reach 87.4 % device utilisation at HiFi2 (2560×4992×4992),
# which Wormhole's 6 extra cycles per tile-phase (at most 32 / 44 = 73 %) cannot; 2 cycles (at most
# 89 %) is the bound those rows set. Its unpacker runs at twice Wormhole's rate (more L1 bandwidth per
# tile; fitted to the bfloat8_b LoFi rows, which reach 81 % where 64 bytes/cycle would cap them at 65 %).
BLACKHOLE_COSTS = OpCosts(noc_latency=240, dram_latency=430, dram_achievable_fraction=500 / 512,
                          dram_core_bytes_per_cycle=33.0, noc_mcast_bytes_per_cycle=41.0, matmul_phase_extra=2,
                          unpack_bytes_per_cycle=128)
