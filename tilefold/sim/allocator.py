"""Placing a Program's buffers, circular buffers and semaphores at device addresses.

Reads: a Program and an Arch. Writes: an :class:`Allocation` (addresses and region maps).

As TT-Metalium does: an interleaved DRAM buffer takes the same address range in every
bank (``ceil(pages / banks)`` aligned pages per bank); an interleaved L1 buffer the same
range on every worker core (L1 banks are cores, numbered row-wise); circular buffers are
placed from the bottom of the unreserved region upwards, each CB at the same address on
every core of its core range set; semaphores sit in the reserved region below the
unreserved base. L1 buffers follow the circular buffers (TT-Metalium places them from the
top of L1 down; any placement is faithful since kernels only see the addresses the host
passes) so that the bytes a program uses form one range, ``semaphore_base`` to ``l1_top``, which is
all the simulator backs with memory. Not fitting in L1 is an :class:`L1OverflowError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilefold.arch import Arch
from tilefold.arch.cores import CoreCoord
from tilefold.errors import L1OverflowError
from tilefold.program import Buffer, Program
from tilefold.sim.memory import RegionMap

DRAM_BASE = 64 * 1024          # first DRAM byte the allocator hands out in each bank
SEMAPHORE_STRIDE = 16
SEMAPHORE_BASE_BELOW_UNRESERVED = 4096


def align(n: int, a: int) -> int:
    return -(-n // a) * a


@dataclass
class BufferPlacement:
    buffer: Buffer
    address: int              # local address in each bank / core
    bank_bytes: int           # bytes taken in each bank (interleaved) or per shard slot
    aligned_page_size: int
    is_dram: bool
    num_banks: int


@dataclass
class CircularBufferPlacement:
    index: int
    address: int
    cores: list[CoreCoord]
    page_size: int
    num_pages: int
    backed: bool = False      # at an L1 buffer's address: its pages are that buffer's data
    name: str = ""            # the program's name for it (a dataflow buffer's)
    takes_turns: bool = False  # in an L1 arena: other CBs use its bytes at other times


@dataclass
class Allocation:
    buffers: dict[str, BufferPlacement] = field(default_factory=dict)
    circular_buffers: list[CircularBufferPlacement] = field(default_factory=list)
    semaphore_base: int = 0
    dram_top: int = DRAM_BASE
    l1_top: int = 0                 # end of the L1 range the program uses (from semaphore_base)
    dram_regions: RegionMap = field(default_factory=RegionMap)
    l1_regions: dict[CoreCoord, RegionMap] = field(default_factory=dict)

    def semaphore_address(self, sem_id: int) -> int:
        return self.semaphore_base + sem_id * SEMAPHORE_STRIDE

    def buffer_at(self, address: int, is_dram: bool) -> BufferPlacement | None:
        """The buffer placed at ``address`` in DRAM (or L1), or None."""
        for place in self.buffers.values():
            if place.address == address and place.is_dram == is_dram:
                return place
        return None


def allocate(program: Program, arch: Arch) -> Allocation:
    alloc = Allocation()
    grid_cores = [CoreCoord(x, y) for y in range(arch.grid[1]) for x in range(arch.grid[0])]
    for core in grid_cores:
        alloc.l1_regions[core] = RegionMap()

    # DRAM buffers, bottom up.
    top = DRAM_BASE
    for buf in program.buffers.values():
        if buf.buffer_type != "DRAM":
            continue
        apage = align(buf.page_size, arch.dram_alignment)
        if buf.is_sharded:
            per_bank = buf.buffer_layout().bytes_per_bank(arch)
        else:
            per_bank = -(-buf.num_pages // arch.dram_banks) * apage
        per_bank = max(per_bank, apage)
        alloc.buffers[buf.name] = BufferPlacement(buf, top, per_bank, apage, True, arch.dram_banks)
        alloc.dram_regions.add(top, per_bank, buf.name)
        top = align(top + per_bank, arch.dram_alignment)
    alloc.dram_top = top

    # Circular buffers, bottom up, one address for all cores of a CB.
    cb_top = {core: arch.l1_unreserved_base for core in grid_cores}
    placed = {}
    for cb in program.circular_buffers:
        if cb.backing_buffer is not None:
            continue        # at its L1 buffer's address, once that is placed (below)
        cores = cb.cores.cores()
        address = align(max(cb_top[c] for c in cores), arch.l1_alignment)
        end = address + cb.total_size
        if end > arch.l1_size:
            raise L1OverflowError(
                f"circular buffer c_{cb.index} ({cb.total_size} B) does not fit in L1 on {cores[0]}: circular "
                f"buffers reach {end} B of {arch.l1_size} B; use fewer or smaller pages", cb.defined_at)
        for c in cores:
            cb_top[c] = end
            alloc.l1_regions[c].add(address, cb.total_size, f"c_{cb.index}")
        placed[id(cb)] = address

    # L1 buffers, after the circular buffers, at one address on every core.
    l1_next = align(max(cb_top.values()), arch.l1_alignment)
    for buf in program.buffers.values():
        if buf.buffer_type != "L1":
            continue
        apage = align(buf.page_size, arch.l1_alignment)
        if buf.is_sharded:
            per_core = buf.buffer_layout().bytes_per_bank(arch)
        else:
            per_core = -(-buf.num_pages // len(grid_cores)) * apage
        per_core = align(max(per_core, apage), arch.l1_alignment)
        if l1_next + per_core > arch.l1_size:
            raise L1OverflowError(f"L1 buffer {buf.name!r} ({per_core} B per core) does not fit in L1 after "
                                  f"{l1_next - arch.l1_unreserved_base} B of circular buffers and earlier L1 buffers "
                                  f"({arch.l1_size} B in all); make it smaller or put it in DRAM", buf.defined_at)
        alloc.buffers[buf.name] = BufferPlacement(buf, l1_next, per_core, apage, False, len(grid_cores))
        for core in grid_cores:
            alloc.l1_regions[core].add(l1_next, per_core, buf.name)
        l1_next += per_core
    alloc.l1_top = l1_next
    for cb in program.circular_buffers:     # in creation order; a backed CB uses its buffer's L1 range
        address = placed[id(cb)] if cb.backing_buffer is None else \
            alloc.buffers[cb.backing_buffer].address + cb.backing_offset
        arena = cb.backing_buffer is not None and program.buffers[cb.backing_buffer].role == "arena"
        alloc.circular_buffers.append(CircularBufferPlacement(cb.index, address, cb.cores.cores(), cb.page_size,
                                                              cb.num_pages, cb.backing_buffer is not None and not arena,
                                                              cb.name, arena))

    # Semaphores in the reserved region.
    alloc.semaphore_base = arch.l1_unreserved_base - SEMAPHORE_BASE_BELOW_UNRESERVED
    for sem in program.semaphores:
        addr = alloc.semaphore_address(sem.id)
        for c in sem.cores:
            alloc.l1_regions[c].add(addr, 4, f"semaphore {sem.id}")
    return alloc
