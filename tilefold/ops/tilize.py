"""Tilize, multi-core interleaved (TT-NN ``tilize_multi_core_interleaved_program_factory.cpp``).

Reads: a row-major tensor shape and data type (bfloat16 or float32). Writes: a
:class:`~tilefold.program.Program` that turns the row-major DRAM buffer ``src`` into the
tile-layout DRAM buffer ``dst``, and the :class:`~tilefold.ops.base.OpInstance` the command
line runs (registered as ``tilize``).

The work unit is a *block*: one tile row of the tensor, 32 sticks (rows) tall and
``ntiles_per_block = padded_shape[-1] / 32`` tiles wide. :func:`split_blocks_for_tilize` hands
``nblocks_per_core`` blocks to each full core and the remainder to one cliff core, which runs
the same compute kernel with its own compile-time args (a second kernel object). Kernels:
reader :mod:`~tilefold.ops.kernels.reader_unary_stick_layout_split_rows_interleaved` (RISCV_0,
NOC 0), compute :mod:`~tilefold.ops.kernels.tilize`, writer
:mod:`~tilefold.ops.kernels.writer_unary_interleaved_start_id` (RISCV_1, NOC 1); CB c_0 and
CB c_16 each hold ``ntiles_per_block`` tile-sized pages (one block, single-buffered).

Argument tables, in this order:

=========  =======================================================================================
reader CT  ``stick_size``, ``TensorAccessorArgs(src)``
reader RT  ``src_addr, num_sticks, block_size_nbytes, num_tiles_per_block, block_width_size,
           num_full_blocks_in_row (1), num_leftover_tiles (0), leftover_width_in_row (0),
           start_stick_id``
compute CT ``per_core_block_cnt, per_core_block_tile_cnt``
writer CT  ``cb_id_out (16)``, ``TensorAccessorArgs(dst)``
writer RT  ``dst_addr, num_pages, start_id``
=========  =======================================================================================

A row-major input whose last two dims are not multiples of 32 is padded on the host to
TT-NN's padded shape (zeros), so ``stick_size = padded_shape[-1] * element_size``; the output
pages are then bit-identical to the host :func:`~tilefold.layout.tiles.tilize` with pad value 0.

:func:`override_runtime_arguments` rebinds a built program to other buffers of the same spec
by changing only the buffer addresses (reader and writer runtime arg 0), as a cached TT-NN
program does.

Errors: :class:`~tilefold.errors.LayoutError` for an unsupported data type or shape,
:class:`~tilefold.errors.ProgramError` for a grid that does not fit, a block too wide for L1,
or buffers that cannot replace the program's own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tilefold.arch import get_arch
from tilefold.arch.cores import CoreCoord
from tilefold.errors import LayoutError, ProgramError
from tilefold.layout.formats import DataFormat, data_format
from tilefold.layout.tiles import padded_shape as tile_padded_shape
from tilefold.ops.base import EXACT, OpFactory, OpInstance, parse_shape, random_input, register, seed_value
from tilefold.ops.kernels import reader_unary_stick_layout_split_rows_interleaved as tilize_reader
from tilefold.ops.kernels import tilize as tilize_compute
from tilefold.ops.kernels import writer_unary_interleaved_start_id as tile_writer
from tilefold.ops.work_split import BlockSplit, compute_grid, parse_grid, split_blocks_for_tilize
from tilefold.program import BufferAddress, ComputeConfig, DataMovementConfig, Program
from tilefold.program.buffers import Buffer

TILE_HEIGHT = 32
TILE_WIDTH = 32
CB_IN = 0
CB_OUT = 16
DTYPES = ("bfloat16", "float32")


@dataclass(frozen=True)
class StickGeometry:
    """Blocks, sticks and tiles of a row-major tensor on its way to (or from) tile layout."""

    shape: tuple[int, ...]          # logical shape
    padded_shape: tuple[int, ...]   # TT-NN padded shape (last two dims whole tiles)
    data_format: DataFormat
    stick_size: int                 # bytes of one padded stick: padded_shape[-1] * element_size
    ntiles_per_block: int           # tiles in one tile row: padded_shape[-1] / 32
    nblocks: int                    # tile rows of the whole tensor
    tile_size: int                  # bytes of one tile of the data format

    @property
    def ntiles(self) -> int:
        return self.nblocks * self.ntiles_per_block

    @property
    def is_padded(self) -> bool:
        return tuple(self.padded_shape) != tuple(self.shape)


def stick_geometry(shape, dtype) -> StickGeometry:
    """The block geometry of a ``shape`` tensor of ``dtype`` (bfloat16 or float32)."""
    shape = tuple(int(s) for s in shape)
    if not shape or any(s <= 0 for s in shape):
        raise LayoutError(f"shape {shape} needs rank >= 1 and positive sizes")
    fmt = data_format(dtype)
    if fmt.ttnn_name not in DTYPES:
        raise LayoutError(f"dtype {fmt.ttnn_name} is not supported: it has no row-major form here; use one of "
                          f"{', '.join(DTYPES)}")
    padded = tile_padded_shape(shape)
    ntiles_per_block = padded[-1] // TILE_WIDTH
    nblocks = math.prod(padded[:-1]) // TILE_HEIGHT
    return StickGeometry(shape, padded, fmt, padded[-1] * fmt.element_size, ntiles_per_block, nblocks,
                         fmt.tile_size(TILE_HEIGHT, TILE_WIDTH))


def pad_to(x: np.ndarray, padded_shape) -> np.ndarray:
    """``x`` padded with zeros at the end of its last two dims to ``padded_shape`` (TT-NN's
    padded shape; a rank-1 ``x`` is one row)."""
    x = np.asarray(x)
    if x.ndim == 1:
        x = x.reshape(1, -1)
    if tuple(x.shape) == tuple(padded_shape):
        return x
    out = np.zeros(padded_shape, dtype=x.dtype)
    out[tuple(slice(0, s) for s in x.shape)] = x
    return out


def check_block_fits(program: Program, geometry: StickGeometry, what: str) -> None:
    """CB c_0 and c_16 hold a whole block each; refuse a block wider than L1."""
    need = 2 * geometry.ntiles_per_block * geometry.tile_size
    if need > program.arch.l1_free:
        raise ProgramError(
            f"{what}: one block of {geometry.ntiles_per_block} tiles ({geometry.padded_shape[-1]} wide) needs "
            f"{need} B of circular buffers per core but {program.arch.l1_free} B of L1 are free on "
            f"{program.arch.board}; the interleaved factory reads whole rows — use a last dim of at most "
            f"{program.arch.l1_free // (2 * geometry.tile_size) * TILE_WIDTH}")


def create_block_compute(program: Program, function, split, geometry: StickGeometry) -> None:
    """The compute kernel on the full cores and, with its own compile-time args, on the cliff core
    (``[per_core_block_cnt, per_core_block_tile_cnt]``). float32 runs with fp32_dest_acc_en and
    the input CB unpacked straight to DST (``UnpackToDestFp32``), as TT-Metal's tilize and
    untilize factories set it, so no value passes through the 19-bit source registers."""
    fp32 = geometry.data_format is DataFormat.Float32
    config = ComputeConfig(fp32_dest_acc_en=fp32, unpack_to_dest_mode={CB_IN: "UnpackToDestFp32"} if fp32 else {})
    compute = program.create_kernel(function, split.core_range, config,
                                    [split.nblocks_per_core, geometry.ntiles_per_block], name="compute")
    if split.nblocks_per_core_cliff:
        program.create_kernel(compute.function, split.core_range_cliff, config,
                              [split.nblocks_per_core_cliff, geometry.ntiles_per_block], name="compute_cliff")


def unpad(x: np.ndarray, shape) -> np.ndarray:
    """The logical ``shape`` corner of a padded tensor (the inverse of :func:`pad_to`)."""
    shape = tuple(shape)
    lead = (1,) if len(shape) == 1 else ()
    return np.asarray(x)[tuple(slice(0, s) for s in lead + shape)].reshape(shape)


@dataclass(frozen=True)
class CoreArgs:
    """The runtime arguments of one core."""

    core: CoreCoord
    reader: list
    writer: list


def runtime_args(split: BlockSplit, geometry: StickGeometry, src="src", dst="dst") -> list[CoreArgs]:
    """Reader and writer runtime args of every core of ``split`` (the factory's tables)."""
    table = []
    for core, first_block, blocks in split.blocks():
        row_start_id = first_block * TILE_HEIGHT
        tile_start_id = first_block * geometry.ntiles_per_block
        reader = [BufferAddress(src), blocks * TILE_HEIGHT, geometry.stick_size, geometry.ntiles_per_block,
                  geometry.stick_size, 1, 0, 0, row_start_id]
        writer = [BufferAddress(dst), geometry.ntiles_per_block * blocks, tile_start_id]
        table.append(CoreArgs(core, reader, writer))
    return table


@dataclass(frozen=True)
class TilizeKernels:
    """The three kernel functions a tilize program places (PyKernel kernels or ttkernel functions)."""

    reader: object = tilize_reader.reader
    compute: object = tilize_compute.compute
    writer: object = tile_writer.writer


def tilize_multi_core_interleaved(shape, dtype="bfloat16", *, arch=None, grid=None,
                                  kernels: TilizeKernels | None = None) -> Program:
    """The tilize program of a row-major ``shape`` tensor: buffers ``src`` (row-major, padded
    shape) and ``dst`` (tile layout, logical shape)."""
    program, _, _ = _build_program(shape, dtype, arch, grid, kernels or TilizeKernels())
    return program


def _build_program(shape, dtype, arch, grid, kernels: TilizeKernels):
    arch = get_arch(arch)
    geometry = stick_geometry(shape, dtype)
    split = split_blocks_for_tilize(compute_grid(arch, grid), geometry.nblocks)
    program = Program("tilize", arch=arch)
    src = program.add_buffer("src", geometry.padded_shape, geometry.data_format, layout="ROW_MAJOR", role="input")
    dst = program.add_buffer("dst", geometry.shape, geometry.data_format, layout="TILE", role="output")
    check_block_fits(program, geometry, "tilize")
    program.create_circular_buffer(split.all_cores, CB_IN, geometry.tile_size, geometry.ntiles_per_block,
                                   geometry.data_format, name="cb_input")
    program.create_circular_buffer(split.all_cores, CB_OUT, dst.page_size, geometry.ntiles_per_block,
                                   geometry.data_format, name="cb_output")
    reader = program.create_kernel(kernels.reader, split.all_cores, DataMovementConfig("RISCV_0", "NOC_0"),
                                   [geometry.stick_size, src.accessor_args], name="reader")
    create_block_compute(program, kernels.compute, split, geometry)
    writer = program.create_kernel(kernels.writer, split.all_cores, DataMovementConfig("RISCV_1", "NOC_1"),
                                   [CB_OUT, dst.accessor_args], name="writer")
    for entry in runtime_args(split, geometry):
        program.set_runtime_args(reader, entry.core, entry.reader)
        program.set_runtime_args(writer, entry.core, entry.writer)
    return program, split, geometry


def _same_spec(a: Buffer, b: Buffer) -> bool:
    return (a.layout, a.data_format, a.buffer_type, a.page_size, a.num_pages, a.is_sharded, a.memory_config) == \
        (b.layout, b.data_format, b.buffer_type, b.page_size, b.num_pages, b.is_sharded, b.memory_config)


def override_runtime_arguments(program: Program, buffers: dict) -> None:
    """Point a built program at other buffers: ``buffers`` maps a buffer the program was built
    with (``"src"``, ``"dst"``) to a buffer of the same spec already added to ``program``. Only
    the runtime args that hold buffer addresses change — for tilize, arg 0 of the reader and
    of the writer on every core; compile-time args stay, as the specs are equal."""
    renames: dict[str, str] = {}
    for old_name, new in buffers.items():
        old = program.buffer(old_name)
        new_name = new.name if isinstance(new, Buffer) else str(new)
        replacement = program.buffer(new_name)
        if isinstance(new, Buffer) and replacement is not new:
            raise ProgramError(f"buffer {new_name!r} given for {old_name!r} is not this program's buffer of that "
                               "name; add it with program.add_buffer first")
        if not _same_spec(old, replacement):
            raise ProgramError(f"buffer {new_name!r} ({replacement.describe()}) cannot replace {old_name!r} "
                               f"({old.describe()}): a built program only takes buffers of the same layout, format, "
                               "page size and page count — build a new program for it")
        renames[old_name] = new_name
    for kernel in program.kernels:
        for core, args in kernel.runtime_args.items():
            kernel.runtime_args[core] = [BufferAddress(renames.get(a.buffer, a.buffer))
                                         if isinstance(a, BufferAddress) else a for a in args]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def work_split_summary(split: BlockSplit, geometry: StickGeometry, grid, what: str) -> list[str]:
    """The lines ``tilefold compile/run`` print about the blocks and their split over cores."""
    dims = "x".join(str(s) for s in geometry.shape)
    lines = [f"{what} {dims} {geometry.data_format.ttnn_name}: {_count(geometry.nblocks, 'block')} of "
             f"{TILE_HEIGHT} sticks, stick {geometry.stick_size} B"]
    if geometry.is_padded:
        padded = "x".join(str(s) for s in geometry.padded_shape)
        lines.append(f"row-major sticks use the padded shape {padded} (stick size = padded_shape[-1] * "
                     f"{geometry.data_format.element_size} B; padding is zeros)")
    lines.append(f"work split on {grid[0]}x{grid[1]} (split_blocks_for_tilize): {_count(split.ncores, 'core')}, "
                 f"{_count(geometry.ntiles_per_block, 'tile')} per block, {_count(split.nblocks_per_core, 'block')} "
                 "per core")
    if split.nblocks_per_core_cliff:
        lines.append(f"full cores {split.core_range}; cliff core {split.cliff_core} with "
                     f"{_count(split.nblocks_per_core_cliff, 'block')}")
    else:
        lines.append(f"full cores {split.core_range}; no cliff core")
    return lines


def add_arguments(parser) -> None:
    parser.add_argument("--shape", default="1,1,256,512", help="logical shape, e.g. 1,1,256,512 (default)")
    parser.add_argument("--dtype", default="bfloat16", choices=DTYPES, help="data type (default bfloat16)")
    parser.add_argument("--grid", default=None, help="cores to split over, columns,rows (default: the whole grid)")
    parser.add_argument("--seed", type=seed_value, default=0, help="seed of the random input (default 0)")


def build(args) -> OpInstance:
    shape = parse_shape(args.shape)
    arch = get_arch(getattr(args, "arch", None))
    grid = compute_grid(arch, parse_grid(getattr(args, "grid", None)))
    program, split, geometry = _build_program(shape, args.dtype, arch, grid, TilizeKernels())
    x = random_input(shape, args.dtype, seed=getattr(args, "seed", 0))
    return OpInstance(
        name="tilize",
        program=program,
        inputs={"src": pad_to(x, geometry.padded_shape)},
        reference=lambda inputs: {"dst": unpad(inputs["src"], geometry.shape)},
        tolerance={"dst": EXACT},
        summary=work_split_summary(split, geometry, grid, "tilize"),
    )


FACTORY = register(OpFactory("tilize", "Row-major to tile layout, multi-core interleaved (split_blocks_for_tilize).",
                             add_arguments, build))

__all__ = ["tilize_multi_core_interleaved", "override_runtime_arguments", "runtime_args", "stick_geometry",
           "StickGeometry", "TilizeKernels", "CoreArgs", "pad_to", "unpad", "work_split_summary", "check_block_fits",
           "create_block_compute",
           "FACTORY"]
