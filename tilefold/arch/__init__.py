"""Descriptions of the Tenstorrent devices tilefold targets: one place, used by everything.

Reads: nothing. Writes: nothing. Provides :class:`Arch` values for Wormhole B0 (n150, n300)
and Blackhole (p150, with the full 13×10 or the commonly usable 11×10 grid), and
:func:`get_arch` to look one up by name.

Published figures (grid, L1, DRAM banks and bandwidth, clock, NOC widths, DST capacity,
FPU rate) come from Tenstorrent's board specifications and the TT-Metalium sources of
ttnn 0.69 (``dev_mem_map.h`` for L1 sizes, the HAL for alignments). Per-operation cycle
costs used by the simulator's cost model are in :mod:`tilefold.arch.costs`, each with
where it comes from. Everything here is a *description*; what the simulator derives
from it is a model, labelled as such.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from tilefold.arch.costs import OpCosts, BLACKHOLE_COSTS, WORMHOLE_COSTS
from tilefold.errors import ArchError

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

MATH_FIDELITY_PHASES = {"LoFi": 1, "HiFi2": 2, "HiFi3": 3, "HiFi4": 4}

# Bits of a 64-bit NOC address as the simulator encodes it: the local address, then x, then y.
# TT-Metalium's are 36, 6 and 6; the simulator's local part holds any L1 or DRAM bank address (a
# Blackhole bank is 4 GiB) in 33 bits, so that x takes 9 and y 5: a mesh of chips simulated as one
# device (mesh_of) has up to NOC_COLUMNS - 2 node columns (a multicast's two corners and the local
# address fill 61 bits; bit 63 marks a multicast). Kernels only make and pass these addresses.
NOC_ADDR_LOCAL_BITS = 33
NOC_ADDR_X_BITS = 9
NOC_ADDR_Y_BITS = 5
NOC_ADDR_NODE_BITS = NOC_ADDR_X_BITS + NOC_ADDR_Y_BITS
NOC_COLUMNS = 1 << NOC_ADDR_X_BITS
NOC_ROWS = 1 << NOC_ADDR_Y_BITS
# a runtime argument is a 32-bit word: two values below this may share one, a half each
HALF_WORD = 1 << 16


@dataclass(frozen=True)
class Arch:
    """One device (a chip or a board of chips) as tilefold sees it; calling it gives itself, as
    TT-NN's ``device.arch()`` gives the device's architecture."""

    def __call__(self) -> "Arch":
        return self

    name: str                       # "wormhole_b0" | "blackhole"
    board: str                      # "n150" | "n300" | "p150"
    grid: tuple[int, int]           # compute grid per chip, (x columns, y rows)
    num_chips: int
    l1_size: int                    # bytes of L1 per Tensix core
    l1_unreserved_base: int         # first L1 byte the allocator may give to CBs and buffers
    l1_alignment: int               # bytes
    dram_alignment: int             # bytes
    dram_banks: int                 # per chip
    dram_bank_size: int             # bytes per bank
    dram_bandwidth: float           # bytes/s for the whole board
    noc_link_bytes_per_cycle: int
    num_nocs: int
    noc_max_burst: int              # bytes per NOC packet
    clock_hz: float
    fpu_flops_per_cycle_lofi: int   # per Tensix core
    dst_tiles_16bit: int = 16       # DST capacity in 32×32 tiles, full-sync, 16-bit data
    costs: OpCosts = field(default_factory=OpCosts)
    max_runtime_args: int = 341     # 0.69's max_runtime_args: a 4096-byte dispatch packet over 3 kernels
    max_circular_buffers: int = 32
    chip_columns: int | None = None  # a mesh of chips run as one device (mesh_of): node columns per chip
    l1_kernel_config_base: int = 31 * KiB  # first L1 byte of the kernel-config ring (below: firmware, mailboxes)

    # -- derived figures --------------------------------------------------------------

    @property
    def num_cores(self) -> int:
        return self.grid[0] * self.grid[1]

    @property
    def l1_free(self) -> int:
        """Bytes of L1 available to circular buffers and L1 buffers on one core."""
        return self.l1_size - self.l1_unreserved_base

    @property
    def max_worker_l1_unreserved_size(self) -> int:
        """Bytes of L1 above the firmware that the kernel-config ring and the allocator share."""
        return self.l1_size - self.l1_kernel_config_base

    def with_worker_l1_size(self, worker_l1_size: int) -> Arch:
        """This device with ``worker_l1_size`` bytes at the top of each core's L1 for the allocator;
        the kernel-config ring gets the rest of :attr:`max_worker_l1_unreserved_size`."""
        if not 0 < worker_l1_size <= self.max_worker_l1_unreserved_size:
            raise ArchError(f"worker_l1_size {worker_l1_size} is outside 1..{self.max_worker_l1_unreserved_size}, "
                            f"the L1 bytes above the firmware of a {self.board} core")
        return replace(self, l1_unreserved_base=self.l1_size - worker_l1_size)

    def dst_capacity(self, fp32_dest_acc_en: bool = False, dst_full_sync_en: bool = False) -> int:
        """Tiles of DST one ``tile_regs_acquire`` gives: 8 (bf16) / 4 (fp32) in the default
        half-sync double buffering, 16 / 8 with full sync."""
        tiles = self.dst_tiles_16bit // (2 if fp32_dest_acc_en else 1)
        return tiles if dst_full_sync_en else tiles // 2

    def fidelity_phases(self, math_fidelity: str) -> int:
        try:
            return MATH_FIDELITY_PHASES[math_fidelity]
        except KeyError:
            raise ArchError(
                f"unknown math fidelity {math_fidelity!r}; use one of {', '.join(MATH_FIDELITY_PHASES)}"
            ) from None

    def matmul_tile_cycles(self, math_fidelity: str = "HiFi4") -> float:
        """FPU cycles for one 32×32×32 tile matmul (2·32³ flops) at the given fidelity."""
        return 2 * 32**3 / self.fpu_flops_per_cycle_lofi * self.fidelity_phases(math_fidelity)

    def call_cycles(self, cost: str, family: str | None = None, math_fidelity: str = "HiFi4") -> float:
        """Cycles one kernel API call costs in the cost model, by the ``cost`` of its API row
        (:data:`tilefold.ir.ttkernel_api.COSTS`): an :class:`OpCosts` term; ``matmul`` is one
        32×32×32 tile product at ``math_fidelity``, ``pack`` one bfloat16 32×32 tile, ``sfpu`` one
        tile of SFPU function ``family``, ``noc_issue`` one packet, ``free`` nothing."""
        c = self.costs
        if cost == "free":
            return 0
        if cost == "sfpu":
            return c.sfpu(family)
        if cost == "matmul":
            return self.matmul_tile_cycles(math_fidelity) + c.matmul_phase_extra * self.fidelity_phases(math_fidelity)
        if cost == "pack":
            return 32 * 32 * 2 / c.pack_bytes_per_cycle
        if cost in ("riscv_call", "cb_op", "noc_issue", "barrier", "compute_call", "fpu_eltwise_tile", "reduce_tile",
                    "transpose_tile"):
            return getattr(c, cost)
        raise ArchError(f"no cost-model term {cost!r}")

    def peak_flops(self, math_fidelity: str = "LoFi") -> float:
        """Board FPU peak in flop/s over all chips' compute grids."""
        per_core = self.fpu_flops_per_cycle_lofi * self.clock_hz / self.fidelity_phases(math_fidelity)
        return per_core * self.num_cores * self.num_chips

    @property
    def dram_bandwidth_per_chip(self) -> float:
        return self.dram_bandwidth / self.num_chips

    @property
    def dram_bank_bytes_per_cycle(self) -> float:
        """Bandwidth of one DRAM bank in bytes per core clock cycle."""
        return self.dram_bandwidth_per_chip / self.dram_banks / self.clock_hz

    def alignment(self, buffer_type: str) -> int:
        """Page alignment of a buffer type ("DRAM" or "L1")."""
        kind = str(buffer_type).upper()
        if kind == "DRAM":
            return self.dram_alignment
        if kind == "L1":
            return self.l1_alignment
        raise ArchError(f"unknown buffer type {buffer_type!r}; use DRAM or L1")

    # -- NOC coordinates ----------------------------------------------------------------
    # tilefold's simulated NOC numbers worker cores (x + 1, y + 1) and DRAM banks (0, bank)
    # on the first NOC column; kernels only ever see coordinates the host computed with
    # worker_core_from_logical_core, so any consistent numbering is faithful.

    def worker_noc_coord(self, x: int, y: int) -> tuple[int, int]:
        if not (0 <= x < self.grid[0] and 0 <= y < self.grid[1]):
            raise ArchError(f"core ({x}, {y}) is outside the {self.grid[0]}x{self.grid[1]} grid of {self.board}")
        return (x + 1, y + 1)

    def logical_from_noc_coord(self, nx: int, ny: int) -> tuple[int, int] | None:
        x, y = nx - 1, ny - 1
        if 0 <= x < self.grid[0] and 0 <= y < self.grid[1]:
            return (x, y)
        return None

    def dram_noc_coord(self, bank: int) -> tuple[int, int]:
        return (0, bank + 1)

    def dram_bank_from_noc_coord(self, nx: int, ny: int) -> int | None:
        if nx == 0 and 1 <= ny <= self.dram_banks:
            return ny - 1
        return None

    def describe(self) -> str:
        gx, gy = self.grid
        chips = f"{self.num_chips} chips of " if self.num_chips > 1 else ""
        return (
            f"{self.name} {self.board}: {chips}{gx}x{gy} Tensix cores at {self.clock_hz / 1e9:g} GHz, "
            f"{self.l1_size // KiB} KiB L1 each, {self.dram_banks} DRAM banks, "
            f"{self.dram_bandwidth / 1e9:g} GB/s DRAM"
        )


def mesh_of(arch: Arch, chips: int, chip_grid: tuple[int, int]) -> Arch:
    """``chips`` chips of ``arch`` run as one simulated device: each gives ``chip_grid`` nodes, chip
    ``k`` the columns ``k * chip_grid[0]`` onwards; transfers between chips cross ethernet (see
    :data:`ETHERNET_BYTES_PER_CYCLE`). Their DRAM is one memory, at one chip's bandwidth."""
    return replace(arch, board=f"{chips}-chip mesh of {arch.board}", grid=(chips * chip_grid[0], chip_grid[1]),
                   num_chips=chips, chip_columns=chip_grid[0], dram_bandwidth=arch.dram_bandwidth_per_chip * chips)


# One Wormhole ethernet link (100 Gb/s) and a hop's latency through the fabric router, at 1 GHz.
ETHERNET_BYTES_PER_CYCLE = 12.5
ETHERNET_LATENCY_CYCLES = 1000


def noc_addr(x: int, y: int, local: int) -> int:
    """Encode a 64-bit NOC address from a node's coordinates and a local address."""
    return (((y << NOC_ADDR_X_BITS) | x) << NOC_ADDR_LOCAL_BITS) | local


def decode_noc_addr(addr: int) -> tuple[int, int, int]:
    """Split a 64-bit NOC address into (x, y, local address)."""
    local = addr & ((1 << NOC_ADDR_LOCAL_BITS) - 1)
    node = addr >> NOC_ADDR_LOCAL_BITS
    x = node & (NOC_COLUMNS - 1)
    y = node >> NOC_ADDR_X_BITS
    return x, y, local


def noc_multicast_addr(x0: int, y0: int, x1: int, y1: int, local: int) -> int:
    """Encode a multicast NOC address for the rectangle (x0, y0)-(x1, y1), both inclusive."""
    node = (((y1 << NOC_ADDR_X_BITS | x1) << NOC_ADDR_NODE_BITS) | (y0 << NOC_ADDR_X_BITS) | x0)
    return (node << NOC_ADDR_LOCAL_BITS) | local | (1 << 63)


def decode_noc_multicast_addr(addr: int) -> tuple[int, int, int, int, int]:
    """Split a multicast NOC address into (x0, y0, x1, y1, local)."""
    local = addr & ((1 << NOC_ADDR_LOCAL_BITS) - 1)
    node = (addr & ~(1 << 63)) >> NOC_ADDR_LOCAL_BITS
    x0, y0 = node & (NOC_COLUMNS - 1), (node >> NOC_ADDR_X_BITS) & (NOC_ROWS - 1)
    end = node >> NOC_ADDR_NODE_BITS
    x1, y1 = end & (NOC_COLUMNS - 1), (end >> NOC_ADDR_X_BITS) & (NOC_ROWS - 1)
    return x0, y0, x1, y1, local


def is_multicast_addr(addr: int) -> bool:
    return bool(addr >> 63)


# Wormhole B0: 1464 KiB L1 (dev_mem_map.h MEM_L1_SIZE); 12 GDDR6 banks of 1 GiB; 1 GHz;
# 32 B/cycle NOC links, two NOCs, 8 KiB max burst; n150 288 GB/s, n300 576 GB/s (two chips).
# FPU: 4.096 TFLOP/s per core at LoFi and 1 GHz -> 4096 flop/cycle.
# L1 below 100 KiB holds firmware, mailboxes and the kernel-config ring (model of
# L1_UNRESERVED_BASE; the exact value depends on the dispatch configuration): the firmware below
# 31 KiB, then the ring at its default 69 KiB.
_WORMHOLE = dict(
    name="wormhole_b0",
    l1_size=1464 * KiB,
    l1_unreserved_base=100 * KiB,
    l1_alignment=16,
    dram_alignment=32,
    dram_banks=12,
    dram_bank_size=1 * GiB,
    noc_link_bytes_per_cycle=32,
    num_nocs=2,
    noc_max_burst=8 * KiB,
    clock_hz=1.0e9,
    fpu_flops_per_cycle_lofi=4096,
    costs=WORMHOLE_COSTS,
)

WORMHOLE_B0_N150 = Arch(board="n150", grid=(8, 8), num_chips=1, dram_bandwidth=288e9, **_WORMHOLE)
WORMHOLE_B0_N300 = Arch(board="n300", grid=(8, 7), num_chips=2, dram_bandwidth=576e9, **_WORMHOLE)

# Blackhole p150: 1536 KiB L1; 8 GDDR6 banks of 4 GiB (32 GB); 1.35 GHz; 64 B/cycle NOC,
# 16 KiB max burst; 512 GB/s. FPU rate per core per cycle as Wormhole (664 TFLOPS
# BLOCKFP8 over 140 cores at 1.35 GHz is about 3.5 kflop/cycle/core at LoFi-equivalent).
_BLACKHOLE = dict(
    name="blackhole",
    board="p150",
    num_chips=1,
    l1_size=1536 * KiB,
    l1_unreserved_base=100 * KiB,
    l1_alignment=16,
    dram_alignment=64,
    dram_banks=8,
    dram_bank_size=4 * GiB,
    dram_bandwidth=512e9,
    noc_link_bytes_per_cycle=64,
    num_nocs=2,
    noc_max_burst=16 * KiB,
    clock_hz=1.35e9,
    fpu_flops_per_cycle_lofi=4096,
    max_circular_buffers=64,        # TT-Metal 0.69: 64 on Blackhole, 32 on Wormhole (2 KB TRISC memory)
    costs=BLACKHOLE_COSTS,
)

BLACKHOLE_P150 = Arch(grid=(11, 10), **_BLACKHOLE)
BLACKHOLE_P150_FULL = Arch(grid=(13, 10), **_BLACKHOLE)

ARCHS: dict[str, Arch] = {
    "wormhole_b0": WORMHOLE_B0_N150,
    "wormhole_b0:n150": WORMHOLE_B0_N150,
    "n150": WORMHOLE_B0_N150,
    "wormhole_b0:n300": WORMHOLE_B0_N300,
    "n300": WORMHOLE_B0_N300,
    "blackhole": BLACKHOLE_P150,
    "blackhole:p150": BLACKHOLE_P150,
    "p150": BLACKHOLE_P150,
    "blackhole:p150-full": BLACKHOLE_P150_FULL,
    "p150-full": BLACKHOLE_P150_FULL,
}

DEFAULT_ARCH = WORMHOLE_B0_N150


def arch_key(arch: Arch) -> str:
    """A name :func:`get_arch` maps back to ``arch`` (``wormhole_b0``, ``n300``, ``blackhole`` ...)."""
    return next((key for key, value in ARCHS.items() if value is arch), arch.name)


def get_arch(name: str | Arch | None = None) -> Arch:
    """Look up a device by name: ``wormhole_b0`` (n150, the default), ``n300``,
    ``blackhole`` (p150, 11×10 usable grid) or ``p150-full`` (13×10)."""
    if name is None:
        return DEFAULT_ARCH
    if isinstance(name, Arch):
        return name
    key = str(name).strip().lower()
    if key in ARCHS:
        return ARCHS[key]
    raise ArchError(f"unknown device {name!r}; use one of: wormhole_b0, n150, n300, blackhole, p150, p150-full")


__all__ = [
    "HALF_WORD",
    "Arch",
    "mesh_of",
    "ETHERNET_BYTES_PER_CYCLE",
    "ETHERNET_LATENCY_CYCLES",
    "OpCosts",
    "ARCHS",
    "DEFAULT_ARCH",
    "arch_key",
    "WORMHOLE_B0_N150",
    "WORMHOLE_B0_N300",
    "BLACKHOLE_P150",
    "BLACKHOLE_P150_FULL",
    "MATH_FIDELITY_PHASES",
    "get_arch",
    "noc_addr",
    "decode_noc_addr",
    "noc_multicast_addr",
    "decode_noc_multicast_addr",
    "is_multicast_addr",
]
