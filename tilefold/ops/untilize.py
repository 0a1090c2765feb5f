"""Untilize, multi-core interleaved: tile layout back to row-major sticks (the inverse of tilize).

Reads: a tensor shape and data type (bfloat16 or float32). Writes: a
:class:`~tilefold.program.Program` that turns the tile-layout DRAM buffer ``src`` into the
row-major DRAM buffer ``dst``, and the :class:`~tilefold.ops.base.OpInstance` the command line
runs (registered as ``untilize``).

The work unit is the tilize block — one tile row, ``ntiles_per_block`` tiles wide, 32 sticks
tall — split over cores with :func:`~tilefold.ops.work_split.split_blocks_for_tilize` (full
cores, then one cliff core with its own compute kernel object). Kernels: reader
:mod:`~tilefold.ops.kernels.reader_unary_interleaved_start_id` (RISCV_0, one tile at a time),
compute :mod:`~tilefold.ops.kernels.untilize` (``untilize_block`` per block), writer
:mod:`~tilefold.ops.kernels.writer_unary_stick_layout_split_rows_interleaved` (RISCV_1, the 32
sticks of each block). CB c_0 and CB c_16 hold one block each.

Argument tables:

=========  ==============================================================================
reader CT  ``TensorAccessorArgs(src)``
reader RT  ``src_addr, num_pages (tiles), start_id (first tile)``
compute CT ``per_core_block_cnt, per_core_block_tile_cnt``
writer CT  ``cb_id_out (16), stick_size``, ``TensorAccessorArgs(dst)``
writer RT  ``dst_addr, num_sticks, num_tiles_per_block, block_width_size, start_stick_id``
=========  ==============================================================================

The output keeps TT-NN's padded shape (whole tiles in the last two dims): its sticks are
``padded_shape[-1] * element_size`` bytes, and the result is bit-identical to the host
:func:`~tilefold.layout.tiles.untilize` of the input's tiles (padding included, zeros from the
host's tilize). :func:`~tilefold.ops.tilize.override_runtime_arguments` rebinds an untilize
program as well (reader and writer runtime arg 0).

Errors: those of :mod:`tilefold.ops.tilize` (data type, shape, grid, block width).
"""

from __future__ import annotations

from tilefold.arch import get_arch
from tilefold.ops.base import EXACT, OpFactory, OpInstance, parse_shape, random_input, register, seed_value
from tilefold.ops.kernels import reader_unary_interleaved_start_id as tile_reader
from tilefold.ops.kernels import untilize as untilize_compute
from tilefold.ops.kernels import writer_unary_stick_layout_split_rows_interleaved as stick_writer
from tilefold.ops.tilize import (
    DTYPES,
    TILE_HEIGHT,
    check_block_fits,
    create_block_compute,
    pad_to,
    stick_geometry,
    work_split_summary,
)
from tilefold.ops.work_split import compute_grid, parse_grid, split_blocks_for_tilize
from tilefold.program import BufferAddress, DataMovementConfig, Program

CB_IN = 0
CB_OUT = 16


def untilize_multi_core_interleaved(shape, dtype="bfloat16", *, arch=None, grid=None) -> Program:
    """The untilize program of a tile-layout ``shape`` tensor: buffers ``src`` (tile layout,
    logical shape) and ``dst`` (row-major, padded shape)."""
    return _build_program(shape, dtype, arch, grid)[0]


def _build_program(shape, dtype, arch, grid):
    arch = get_arch(arch)
    geometry = stick_geometry(shape, dtype)
    split = split_blocks_for_tilize(compute_grid(arch, grid), geometry.nblocks)
    program = Program("untilize", arch=arch)
    src = program.add_buffer("src", geometry.shape, geometry.data_format, layout="TILE", role="input")
    dst = program.add_buffer("dst", geometry.padded_shape, geometry.data_format, layout="ROW_MAJOR", role="output")
    check_block_fits(program, geometry, "untilize")
    program.create_circular_buffer(split.all_cores, CB_IN, src.page_size, geometry.ntiles_per_block,
                                   geometry.data_format, name="cb_input")
    program.create_circular_buffer(split.all_cores, CB_OUT, geometry.tile_size, geometry.ntiles_per_block,
                                   geometry.data_format, name="cb_output")
    reader = program.create_kernel(tile_reader.reader, split.all_cores, DataMovementConfig("RISCV_0", "NOC_0"),
                                   [src.accessor_args], name="reader")
    create_block_compute(program, untilize_compute.compute, split, geometry)
    writer = program.create_kernel(stick_writer.writer, split.all_cores, DataMovementConfig("RISCV_1", "NOC_1"),
                                   [CB_OUT, geometry.stick_size, dst.accessor_args], name="writer")
    for core, first_block, blocks in split.blocks():
        program.set_runtime_args(reader, core, [BufferAddress("src"), blocks * geometry.ntiles_per_block,
                                                first_block * geometry.ntiles_per_block])
        program.set_runtime_args(writer, core, [BufferAddress("dst"), blocks * TILE_HEIGHT, geometry.ntiles_per_block,
                                                geometry.stick_size, first_block * TILE_HEIGHT])
    return program, split, geometry


def add_arguments(parser) -> None:
    parser.add_argument("--shape", default="1,1,256,512", help="logical shape, e.g. 1,1,256,512 (default)")
    parser.add_argument("--dtype", default="bfloat16", choices=DTYPES, help="data type (default bfloat16)")
    parser.add_argument("--grid", default=None, help="cores to split over, columns,rows (default: the whole grid)")
    parser.add_argument("--seed", type=seed_value, default=0, help="seed of the random input (default 0)")


def build(args) -> OpInstance:
    shape = parse_shape(args.shape)
    arch = get_arch(getattr(args, "arch", None))
    grid = compute_grid(arch, parse_grid(getattr(args, "grid", None)))
    program, split, geometry = _build_program(shape, args.dtype, arch, grid)
    x = random_input(shape, args.dtype, seed=getattr(args, "seed", 0))
    return OpInstance(
        name="untilize",
        program=program,
        inputs={"src": x},
        reference=lambda inputs: {"dst": pad_to(inputs["src"], geometry.padded_shape)},
        tolerance={"dst": EXACT},
        summary=work_split_summary(split, geometry, grid, "untilize"),
    )


FACTORY = register(OpFactory("untilize", "Tile to row-major layout, multi-core interleaved (split_blocks_for_tilize).",
                             add_arguments, build))

__all__ = ["untilize_multi_core_interleaved", "FACTORY"]
