"""Element-wise binary add / sub / mul of two tile-layout tensors, multi-core interleaved.

Reads: a shape, a data type (bfloat16 or float32) and an operation. Writes: a
:class:`~tilefold.program.Program` computing ``dst = src0 (op) src1`` over DRAM buffers and the
:class:`~tilefold.ops.base.OpInstance` the command line runs (registered as ``eltwise``).

Tiles are split with :func:`~tilefold.ops.work_split.split_work_to_cores` (column-major core
order; group 1 takes one tile more than group 2). Each group runs the compute kernel of the
operation (:func:`~tilefold.ops.kernels.eltwise_binary.compute_for`) with its own compile-time
args — a second kernel object for group 2. Kernels: reader
:mod:`~tilefold.ops.kernels.reader_binary_interleaved_start_id` (RISCV_0), writer
:mod:`~tilefold.ops.kernels.writer_unary_interleaved_start_id` (RISCV_1). CB c_0, c_1 and c_16
hold two blocks each (double-buffered).

Argument tables:

=========  ================================================================================
reader CT  ``TensorAccessorArgs(src0)``, ``TensorAccessorArgs(src1)``
reader RT  ``src0_addr, src1_addr, num_tiles, start_id``
compute CT ``per_core_block_cnt, per_core_block_size`` (``per_core_block_size``: the largest
           divisor of the core's tile count that fits one DST acquire)
writer CT  ``cb_id_out (16)``, ``TensorAccessorArgs(dst)``
writer RT  ``dst_addr, num_pages, start_id``
=========  ================================================================================

Numerics: the FPU adds / multiplies in float32 and DST rounds to bfloat16 (round to nearest
even) unless ``fp32_dest_acc_en`` (set for float32). For bfloat16 the result is within one
bfloat16 ulp of numpy's float32 result rounded to bfloat16. For float32 the FPU's source
registers keep 10 mantissa bits (TF32), which :func:`float32_error_bound` accounts for.

Errors: :class:`~tilefold.errors.LayoutError` for an unsupported data type or shape,
:class:`~tilefold.errors.ProgramError` for an unknown operation or a grid that does not fit.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from tilefold.arch import get_arch
from tilefold.errors import LayoutError
from tilefold.layout.formats import DataFormat, data_format
from tilefold.layout.tiles import num_tiles
from tilefold.ops.base import OpFactory, OpInstance, Tolerance, parse_shape, random_input, register, seed_value
from tilefold.ops.kernels import reader_binary_interleaved_start_id as binary_reader
from tilefold.ops.kernels import writer_unary_interleaved_start_id as tile_writer
from tilefold.ops.kernels.eltwise_binary import BINARY_OPS, compute_for
from tilefold.ops.work_split import WorkSplit, compute_grid, parse_grid, split_work_to_cores
from tilefold.program import BufferAddress, ComputeConfig, DataMovementConfig, Program

CB_IN0 = 0
CB_IN1 = 1
CB_OUT = 16
DTYPES = ("bfloat16", "float32")
NUMPY_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply}
TF32_UNIT_ROUNDOFF = 2.0 ** -10       # source registers: 10 explicit mantissa bits, truncated
FP32_UNIT_ROUNDOFF = 2.0 ** -24


def block_size(tiles_per_core: int, dst_tiles: int) -> int:
    """``per_core_block_size``: the largest divisor of ``tiles_per_core`` of at most ``dst_tiles``."""
    for size in range(min(tiles_per_core, dst_tiles), 0, -1):
        if tiles_per_core % size == 0:
            return size
    return 1


def eltwise_binary_multi_core(shape, op: str = "add", dtype="bfloat16", *, arch=None, grid=None) -> Program:
    """``dst = src0 op src1`` for tile-layout tensors of ``shape``."""
    return _build_program(shape, op, dtype, arch, grid)[0]


def _check_dtype(dtype) -> DataFormat:
    fmt = data_format(dtype)
    if fmt.ttnn_name not in DTYPES:
        raise LayoutError(f"eltwise dtype {fmt.ttnn_name} is not supported; use one of {', '.join(DTYPES)}")
    return fmt


def _build_program(shape, op, dtype, arch, grid):
    arch = get_arch(arch)
    fmt = _check_dtype(dtype)
    kernel = compute_for(op)
    split = split_work_to_cores(compute_grid(arch, grid), num_tiles(shape))
    program = Program(f"eltwise_{op}", arch=arch)
    src0 = program.add_buffer("src0", shape, fmt, layout="TILE", role="input")
    src1 = program.add_buffer("src1", shape, fmt, layout="TILE", role="input")
    dst = program.add_buffer("dst", shape, fmt, layout="TILE", role="output")
    config = ComputeConfig(fp32_dest_acc_en=fmt is DataFormat.Float32)
    dst_tiles = arch.dst_capacity(config.fp32_dest_acc_en, config.dst_full_sync_en)
    groups = [(split.core_group_1, split.units_per_core_group_1, "compute"),
              (split.core_group_2, split.units_per_core_group_2, "compute_group_2")]
    groups = [(cores, tiles, block_size(tiles, dst_tiles), name) for cores, tiles, name in groups if cores.num_cores]
    pages = 2 * max(size for _, _, size, _ in groups)
    for index, name in ((CB_IN0, "cb_src0"), (CB_IN1, "cb_src1"), (CB_OUT, "cb_output")):
        program.create_circular_buffer(split.all_cores, index, dst.page_size, pages, fmt, name=name)
    reader = program.create_kernel(binary_reader.reader, split.all_cores, DataMovementConfig("RISCV_0", "NOC_0"),
                                   [src0.accessor_args, src1.accessor_args], name="reader")
    for cores, tiles, size, name in groups:
        program.create_kernel(kernel, cores, config, [tiles // size, size], name=name)
    writer = program.create_kernel(tile_writer.writer, split.all_cores, DataMovementConfig("RISCV_1", "NOC_1"),
                                   [CB_OUT, dst.accessor_args], name="writer")
    for core, start, count in split.units():
        program.set_runtime_args(reader, core, [BufferAddress("src0"), BufferAddress("src1"), count, start])
        program.set_runtime_args(writer, core, [BufferAddress("dst"), count, start])
    return program, split, groups


def reference(op: str, a: np.ndarray, b: np.ndarray, dtype) -> np.ndarray:
    """numpy's float32 result, rounded to bfloat16 for bfloat16 data."""
    with np.errstate(all="ignore"):
        out = NUMPY_OPS[op](np.asarray(a, np.float32), np.asarray(b, np.float32))
    if data_format(dtype) is DataFormat.Float16_b:
        return out.astype(ml_dtypes.bfloat16).astype(np.float32)
    return out


def float32_error_bound(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-element bound of |device − numpy| for float32 data: each operand is truncated to TF32
    (relative error < 2^-10) in the FPU's source registers, the result rounded to float32; the
    multiplier (HiFi4) uses 9 of SrcA's 10 mantissa bits, so in0 is truncated to 9 bits for
    ``mul`` (relative error < 2^-9)."""
    a = np.abs(np.asarray(a, np.float64))
    b = np.abs(np.asarray(b, np.float64))
    u = TF32_UNIT_ROUNDOFF
    if op == "mul":
        ua = 2 * u                        # SrcA: 9 mantissa bits reach the multiplier
        core = (ua + u + ua * u) * a * b
        exact = a * b
    else:
        core = u * (a + b)
        exact = a + b
    return core + FP32_UNIT_ROUNDOFF * (exact + core)


def _summary(shape, op, fmt, split: WorkSplit, groups, grid) -> list[str]:
    dims = "x".join(str(s) for s in shape)
    lines = [f"eltwise {op} {dims} {fmt.ttnn_name}: {num_tiles(shape)} tiles",
             f"work split on {grid[0]}x{grid[1]} (split_work_to_cores, column-major): {split.num_cores} cores"]
    for (cores, tiles, size, name), label in zip(groups, ("group 1", "group 2")):
        lines.append(f"  {label} {cores}: {tiles} tiles per core in blocks of {size} ({name})")
    return lines


def add_arguments(parser) -> None:
    parser.add_argument("--op", default="add", choices=tuple(BINARY_OPS), help="operation (default add)")
    parser.add_argument("--shape", default="1,1,256,512", help="shape, e.g. 1,1,256,512 (default)")
    parser.add_argument("--dtype", default="bfloat16", choices=DTYPES, help="data type (default bfloat16)")
    parser.add_argument("--grid", default=None, help="cores to split over, columns,rows (default: the whole grid)")
    parser.add_argument("--seed", type=seed_value, default=0, help="seed of the random inputs (default 0)")


def build(args) -> OpInstance:
    shape = parse_shape(args.shape)
    arch = get_arch(getattr(args, "arch", None))
    grid = compute_grid(arch, parse_grid(getattr(args, "grid", None)))
    fmt = _check_dtype(args.dtype)
    program, split, groups = _build_program(shape, args.op, fmt, arch, grid)
    seed = getattr(args, "seed", 0)
    a = random_input(shape, args.dtype, seed=seed, low=-4.0, high=4.0)
    b = random_input(shape, args.dtype, seed=seed + 1, low=-4.0, high=4.0)
    if fmt is DataFormat.Float16_b:
        tolerance = Tolerance(max_ulp=1)
    else:
        tolerance = Tolerance(atol=float(float32_error_bound(args.op, a, b).max()))
    return OpInstance(
        name="eltwise",
        program=program,
        inputs={"src0": a, "src1": b},
        reference=lambda inputs: {"dst": reference(args.op, inputs["src0"], inputs["src1"], fmt)},
        tolerance={"dst": tolerance},
        summary=_summary(shape, args.op, fmt, split, groups, grid),
    )


FACTORY = register(OpFactory("eltwise", "Element-wise binary add / sub / mul, multi-core (split_work_to_cores).",
                             add_arguments, build))

__all__ = ["eltwise_binary_multi_core", "block_size", "reference", "float32_error_bound", "FACTORY"]
