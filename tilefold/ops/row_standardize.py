"""row_standardize: ``y = (x − mean) / sqrt(var + eps)`` along each row of a row-major bfloat16
tensor in DRAM, written back row-major.

Reads: a 2-D shape (rows and width multiples of 32), eps, the grid. Writes: a
:class:`~tilefold.program.Program` over the row-major DRAM buffers ``src`` and ``dst``, and the
:class:`~tilefold.ops.base.OpInstance` the command line runs (registered as ``row_standardize``).

The work unit is a block of 32 rows (one tile row, ``Wt = W / 32`` tiles), split over the cores
as tilize splits them (:func:`~tilefold.ops.work_split.split_blocks_for_tilize`, a cliff core
taking the remainder). Kernels: reader :mod:`~tilefold.ops.kernels.reader_row_standardize`
(RISCV_0: the reduce scaler, then 32 sticks per block), compute
:mod:`~tilefold.ops.kernels.row_standardize` (tilize, reduce, broadcast subtract and multiply,
rsqrt, untilize), writer :mod:`~tilefold.ops.kernels.writer_unary_stick_layout_split_rows_interleaved`
(RISCV_1). The input and output blocks are double-buffered (c_0, c_17) so reads, compute and
writes of consecutive blocks overlap; each intermediate (c_1, c_4, c_5, c_16) holds one block.
DST accumulates in float32 (``fp32_dest_acc_en``); intermediates are bfloat16.

Errors: :class:`~tilefold.errors.LayoutError` for a shape that is not 2-D whole tiles,
:class:`~tilefold.errors.ProgramError` for rows too wide for L1.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from tilefold.arch import get_arch
from tilefold.errors import LayoutError, ProgramError
from tilefold.ir.ttkernel import float_bits
from tilefold.layout.formats import DataFormat
from tilefold.ops.base import OpFactory, OpInstance, Tolerance, parse_shape, register
from tilefold.ops.kernels import reader_row_standardize as rs_reader
from tilefold.ops.kernels import row_standardize as rs_compute
from tilefold.ops.kernels import writer_unary_stick_layout_split_rows_interleaved as stick_writer
from tilefold.ops.work_split import compute_grid, parse_grid, split_blocks_for_tilize
from tilefold.program import BufferAddress, ComputeConfig, DataMovementConfig, Program

TILE = 32
FMT = DataFormat.Float16_b
# circular buffers: index -> pages in blocks of Wt tiles (0: one tile)
CB_BLOCKS = {0: 2, 1: 1, 2: 0, 3: 0, 4: 1, 5: 1, 6: 0, 16: 1, 17: 2}


def _bf16_pair(value: float) -> int:
    half = int(np.array([value], np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)[0])
    return half << 16 | half


def _check(shape) -> tuple[int, int]:
    if len(shape) != 2 or any(s <= 0 or s % TILE for s in shape):
        raise LayoutError(f"row_standardize shape {tuple(shape)} must be rows,width with both multiples of 32")
    return int(shape[0]), int(shape[1])


def row_standardize_program(shape, eps: float = 1e-5, *, grid=None, arch=None) -> Program:
    """The program standardizing each row of the row-major ``shape`` buffer ``src`` into ``dst``."""
    arch = get_arch(arch)
    rows, width = _check(shape)
    wt = width // TILE
    tile = FMT.tile_size(TILE, TILE)
    need = sum(max(n * wt, 1) for n in CB_BLOCKS.values()) * tile
    if need > arch.l1_free:
        raise ProgramError(f"row_standardize: rows of {width} values need {need} B of circular buffers per core but "
                           f"{arch.l1_free} B of L1 are free on {arch.board}; use rows of at most "
                           f"{(arch.l1_free // tile - 3) // 9 * TILE} values")
    split = split_blocks_for_tilize(compute_grid(arch, grid), rows // TILE)
    program = Program("row_standardize", arch=arch)
    src = program.add_buffer("src", (rows, width), FMT, layout="ROW_MAJOR", role="input")
    dst = program.add_buffer("dst", (rows, width), FMT, layout="ROW_MAJOR", role="output")
    for index, blocks in CB_BLOCKS.items():
        program.create_circular_buffer(split.all_cores, index, tile, max(blocks * wt, 1), FMT, name=f"cb_{index}")
    stick = width * FMT.element_size
    reader = program.create_kernel(rs_reader.reader, split.all_cores, DataMovementConfig("RISCV_0", "NOC_0"),
                                   [stick, src.accessor_args], name="reader")
    config = ComputeConfig(fp32_dest_acc_en=True)
    eps_bits = float_bits(eps) & 0xFFFFFFFF        # a uint32_t compile-time argument
    compute = program.create_kernel(rs_compute.compute, split.core_range, config,
                                    [split.nblocks_per_core, wt, eps_bits], name="compute")
    if split.nblocks_per_core_cliff:
        program.create_kernel(compute.function, split.core_range_cliff, config,
                              [split.nblocks_per_core_cliff, wt, eps_bits], name="compute_cliff")
    writer = program.create_kernel(stick_writer.writer, split.all_cores, DataMovementConfig("RISCV_1", "NOC_1"),
                                   [17, stick, dst.accessor_args], name="writer")
    scaler = _bf16_pair(1.0 / width)
    for core, first, blocks in split.blocks():
        program.set_runtime_args(reader, core, [BufferAddress("src"), blocks, wt, first * TILE, scaler])
        program.set_runtime_args(writer, core, [BufferAddress("dst"), blocks * TILE, wt, stick, first * TILE])
    return program


def reference(x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    x64 = np.asarray(x, np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=1, keepdims=True)
    return ((x64 - mean) / np.sqrt(var + eps)).astype(np.float32)


def dram_roofline_seconds(shape, arch=None) -> float:
    """The time moving the input once and the output once takes at the board's peak DRAM bandwidth."""
    arch = get_arch(arch)
    return 2 * shape[0] * shape[1] * FMT.element_size / arch.dram_bandwidth_per_chip


def add_arguments(parser) -> None:
    parser.add_argument("--shape", default="256,1024", help="rows,width, multiples of 32 (default 256,1024)")
    parser.add_argument("--eps", type=float, default=1e-5, help="added to the variance (default 1e-5)")
    parser.add_argument("--grid", default=None, help="cores to use, columns,rows (default: the whole grid)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")


def build(args) -> OpInstance:
    shape = parse_shape(args.shape)
    rows, width = _check(shape)
    arch = get_arch(getattr(args, "arch", None))
    program = row_standardize_program((rows, width), args.eps, grid=parse_grid(getattr(args, "grid", None)),
                                      arch=arch)
    rng = np.random.default_rng(getattr(args, "seed", 0))
    x = (rng.standard_normal((rows, width)) * 3 + rng.uniform(-4, 4, (rows, 1))).astype(np.float32)
    x = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    split = split_blocks_for_tilize(compute_grid(arch, parse_grid(getattr(args, "grid", None))), rows // TILE)
    return OpInstance(
        name="row_standardize",
        program=program,
        inputs={"src": x},
        reference=lambda inputs: {"dst": reference(inputs["src"], args.eps)},
        tolerance={"dst": Tolerance(atol=0.05, min_pcc=0.9995)},
        summary=[f"row_standardize {rows}x{width} bfloat16 row-major: {rows // TILE} blocks of 32 rows "
                 f"({width // TILE} tiles each) on {split.ncores} cores; tilize, reduce_tile mean and variance, "
                 "rsqrt, untilize"],
    )


FACTORY = register(OpFactory("row_standardize", "Standardize each row of a row-major bfloat16 tensor in DRAM "
                                                "(tilize, reduce_tile mean and variance, untilize).",
                             add_arguments, build))

__all__ = ["row_standardize_program", "reference", "dram_roofline_seconds", "FACTORY"]
