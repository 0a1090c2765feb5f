"""TensorAccessor on the simulated device: page ids to (bank, local address).

Reads: a kernel's compile-time args (the TensorAccessorArgs the host appended), a base
address and a page size. Writes: nothing.

``TensorAccessorArgs<N>()`` decodes the flags word at CTA[N] (Sharded = 1, IsDram = 2, ...),
CTA[N + 1] (the aligned page size) and, for sharded buffers, rank, bank count, tensor and
shard shapes and bank coordinates. ``TensorAccessor(args, base, page_size)`` then maps a page
id the way the device does: interleaved ``bank = id % banks``,
``address = base + (id / banks) * stride + offset`` with the stride ``page_size`` rounded up to
the bank's allocator alignment (32 B for Wormhole DRAM, 64 B for Blackhole's, 16 B for L1), as
TT-Metalium's ``InterleavedAddrGen`` steps — a row-major page of 400 B sits 416 B after the one
before it in its bank, as the allocator lays them out; sharded per the decoded shard geometry,
``page_size`` apart. ``page_size`` is the size ``noc_async_read_page`` moves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tilefold.errors import ProgramError

FLAG_SHARDED = 1
FLAG_IS_DRAM = 2


@dataclass(frozen=True)
class AccessorArgs:
    """What ``TensorAccessorArgs<offset>()`` decoded from the compile-time args."""

    offset: int
    num_args: int
    is_sharded: bool
    is_dram: bool
    aligned_page_size: int
    sharded_spec: object = None   # decoded shard geometry (tilefold.layout.addressing), sharded only

    @property
    def next_compile_time_args_offset(self) -> int:
        return self.offset + self.num_args


def decode_accessor_args(compile_args: list[int], offset: int) -> AccessorArgs:
    if offset < 0 or offset + 1 >= len(compile_args):
        raise ProgramError(f"TensorAccessorArgs<{offset}>() reads compile-time args {offset} and {offset + 1} "
                           f"but the kernel has {len(compile_args)}; append the buffer's TensorAccessorArgs there")
    flags = compile_args[offset]
    page = compile_args[offset + 1]
    if flags & FLAG_SHARDED:
        from tilefold.layout.addressing import decode_tensor_accessor_args

        spec, nargs = decode_tensor_accessor_args(compile_args, offset)
        return AccessorArgs(offset, nargs, True, bool(flags & FLAG_IS_DRAM), page, spec)
    return AccessorArgs(offset, 2, False, bool(flags & FLAG_IS_DRAM), page)


@dataclass
class Accessor:
    """``TensorAccessor(args, bank_base_address, page_size)``."""

    args: AccessorArgs
    base: int | np.ndarray
    page_size: int
    num_banks: int
    buffer: str | None = None     # the buffer whose address is ``base``, when there is one
    num_pages: int | None = None  # its pages: ids outside [0, num_pages) have no address
    data_format: object = None    # its data format (tilefold.layout.formats.DataFormat)
    bank_nodes: object = field(default=None, compare=False, repr=False)   # NOC node bits per bank, once asked
    l1_rows: object = field(default=None, compare=False, repr=False)      # core row of each L1 bank, once asked
    stride: int = field(kw_only=True)   # bytes between a bank's pages (interleaved: page_size aligned)

    def pages_outside(self, page_id):
        """Per-lane mask (or bool) of page ids outside the buffer; None when all are inside."""
        n = self.num_pages
        if n is None:
            return None
        if page_id.__class__ is int:
            return True if page_id < 0 or page_id >= n else None
        p = np.asarray(page_id)
        bad = (p < 0) | (p >= n)
        return bad if bad.any() else None

    def locate(self, page_id, offset=0):
        """(bank index, local address) of ``page_id`` (ints or per-lane arrays)."""
        if not self.args.is_sharded:
            nb = self.num_banks
            if page_id.__class__ is int:
                return page_id % nb, self.base + (page_id // nb) * self.stride + offset
            page_id = np.asarray(page_id, dtype=np.int64)
            return page_id % nb, self.base + (page_id // nb) * self.stride + offset
        from tilefold.layout.addressing import sharded_page_location

        spec = self.args.sharded_spec
        bank, slot = sharded_page_location(page_id, spec.tensor_shape, spec.shard_shape, spec.num_banks)
        bank = np.asarray(bank, dtype=np.int64)
        local = self.base + np.asarray(slot, dtype=np.int64) * self.page_size + offset
        if page_id.__class__ is int:
            return int(bank.ravel()[0]), int(np.asarray(local).ravel()[0])
        return bank, local
