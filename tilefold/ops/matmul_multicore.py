"""Multi-core matmul ``C = A @ B``: every core of a grid computes one block of output tiles.

Reads: sizes M, K, N, a data type (bfloat16 or float32), a math fidelity, whether DST
accumulates in float32 and the grid to use. Writes: a :class:`~tilefold.program.Program` over
the tile-layout DRAM buffers ``src0`` (M×K), ``src1`` (K×N) and ``dst`` (M×N), and the
:class:`~tilefold.ops.base.OpInstance` the command line runs (registered as ``matmul_multicore``).

Work split: the output's ``Mt × Nt`` tiles are cut into equal blocks of ``per_core_M ×
per_core_N`` tiles — ``per_core_M`` the smallest divisor of Mt that needs at most the grid's rows
of cores, ``per_core_N`` likewise over its columns (every core gets the same block, as TT-NN's
block-reuse matmul requires ``Mt % per_core_M == 0``). Core (x, y) computes the block at tile
row ``y · per_core_M`` and column ``x · per_core_N``, reading its A rows and B columns from DRAM
over the whole K.

Each core runs the kernels of the single-core matmul (:mod:`~tilefold.ops.kernels.reader_bmm`,
:mod:`~tilefold.ops.kernels.bmm`, :mod:`~tilefold.ops.kernels.writer_bmm`) on its block; the
runtime args give the block's origin. The output sub-block, the width of the B column blocks
and whether A and B blocks are double-buffered are chosen together: fewest tiles read per core
within the free L1, then double buffering, then the largest sub-block.

=========  =================================================================================
reader CT  ``TensorAccessorArgs(src0)``, ``TensorAccessorArgs(src1)``
reader RT  ``src0_addr, src1_addr, per_core_M, Kt, per_core_N, out_subblock_h, in1_block_w, m0, n0, Nt``
compute CT ``num_blocks_n, in0_num_subblocks, in1_num_subblocks, Kt, out_subblock_h, out_subblock_w``
writer CT  ``cb_id_out (16)``, ``TensorAccessorArgs(dst)``
writer RT  ``dst_addr, per_core_M, per_core_N, out_subblock_h, out_subblock_w, in1_block_w, m0, n0, Nt``
=========  =================================================================================

Errors: :class:`~tilefold.errors.LayoutError` for bad sizes or data type,
:class:`~tilefold.errors.ProgramError` for a grid, fidelity or K whose blocks cannot fit.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from tilefold.arch import MATH_FIDELITY_PHASES, get_arch
from tilefold.arch.cores import CoreRange
from tilefold.errors import LayoutError, ProgramError
from tilefold.layout.formats import DataFormat
from tilefold.ops import matmul as single
from tilefold.ops.base import OpFactory, OpInstance, Tolerance, parse_shape, random_input, register, seed_value
from tilefold.ops.kernels import bmm as bmm_compute
from tilefold.ops.kernels import reader_bmm as bmm_reader
from tilefold.ops.kernels import writer_bmm as bmm_writer
from tilefold.ops.work_split import compute_grid, parse_grid
from tilefold.program import BufferAddress, ComputeConfig, DataMovementConfig, Program

TILE = 32


@dataclass(frozen=True)
class MultiCoreMatmulConfig:
    """Sizes in tiles, the per-core block, its blocking and the compute config."""

    M: int
    K: int
    N: int
    data_format: DataFormat
    math_fidelity: str
    fp32_dest_acc_en: bool
    per_core_M: int            # output tile rows per core
    per_core_N: int            # output tile columns per core
    out_subblock_h: int
    out_subblock_w: int
    in1_block_w: int           # B column block width in tiles (divides per_core_N)
    in0_buffers: int           # A row blocks the CB holds (1 or 2)
    in1_buffers: int           # B column blocks the CB holds (1 or 2)

    @property
    def Mt(self) -> int:
        return -(-self.M // TILE)

    @property
    def Kt(self) -> int:
        return -(-self.K // TILE)

    @property
    def Nt(self) -> int:
        return -(-self.N // TILE)

    @property
    def grid(self) -> tuple[int, int]:
        """Cores used, (columns, rows)."""
        return self.Nt // self.per_core_N, self.Mt // self.per_core_M

    @property
    def tile_size(self) -> int:
        return self.data_format.tile_size(TILE, TILE)

    @property
    def compute_config(self) -> ComputeConfig:
        return ComputeConfig(math_fidelity=self.math_fidelity, fp32_dest_acc_en=self.fp32_dest_acc_en)

    def cb_pages(self) -> tuple[int, int, int]:
        """Pages of CB c_0 (A row blocks), c_1 (B column blocks) and c_16 (two output sub-blocks)."""
        h, w = self.out_subblock_h, self.out_subblock_w
        return self.in0_buffers * h * self.Kt, self.in1_buffers * self.Kt * self.in1_block_w, 2 * h * w

    def tiles_read(self) -> int:
        """Tiles one core reads: its A rows once per B column block, its B columns once."""
        return self.per_core_N // self.in1_block_w * self.per_core_M * self.Kt + self.Kt * self.per_core_N


def _per_core(tiles: int, cores: int) -> int:
    """The smallest divisor of ``tiles`` that needs at most ``cores`` cores."""
    return next(d for d in range(1, tiles + 1) if tiles % d == 0 and tiles // d <= cores)


def multicore_matmul_config(M: int, K: int, N: int, dtype="bfloat16", *, math_fidelity: str = "HiFi4",
                            fp32_dest_acc_en: bool | None = None, grid=None, arch=None) -> MultiCoreMatmulConfig:
    """Check the options, split the output over ``grid`` (default: the whole compute grid) and
    choose the blocking of each core's block."""
    arch = get_arch(arch)
    fmt = single.check_options(M, K, N, dtype, math_fidelity)
    fp32 = fmt is DataFormat.Float32 if fp32_dest_acc_en is None else bool(fp32_dest_acc_en)
    cols, rows = compute_grid(arch, grid)
    Mt, Kt, Nt = (-(-v // TILE) for v in (M, K, N))
    pm, pn = _per_core(Mt, rows), _per_core(Nt, cols)
    dst_tiles = arch.dst_capacity(fp32)
    best, best_score = None, None
    for h, w in single.SUBBLOCK_HW_CHOICES:
        if h * w > dst_tiles or pm % h or pn % w:
            continue
        for width in range(w, pn + 1, w):
            if pn % width:
                continue
            for in0_buffers in (2, 1) if pn // width * pm > h else (1,):
                for in1_buffers in (2, 1) if pn > width else (1,):
                    c = MultiCoreMatmulConfig(int(M), int(K), int(N), fmt, math_fidelity, fp32, pm, pn, h, w, width,
                                              in0_buffers, in1_buffers)
                    if sum(c.cb_pages()) * c.tile_size > arch.l1_free:
                        continue
                    score = (c.tiles_read(), -(in0_buffers + in1_buffers), -h * w)
                    if best_score is None or score < best_score:
                        best, best_score = c, score
    if best is None:
        need = (Kt + Kt + 2) * fmt.tile_size(TILE, TILE)
        raise ProgramError(f"matmul K = {K}: even a 1x1 output sub-block needs {need} B of circular buffers "
                           f"({Kt} K tiles of A and of B) but {arch.l1_free} B of L1 are free on {arch.board}; "
                           "each core keeps whole-K blocks in L1 — use a smaller K")
    return best


def matmul_multi_core(config: MultiCoreMatmulConfig, *, arch=None) -> Program:
    """The program of ``config``: ``dst = src0 @ src1`` over ``config.grid`` cores."""
    arch = get_arch(arch)
    c = config
    program = Program("matmul_multicore", arch=arch)
    fmt = c.data_format
    src0 = program.add_buffer("src0", (c.M, c.K), fmt, layout="TILE", role="input")
    src1 = program.add_buffer("src1", (c.K, c.N), fmt, layout="TILE", role="input")
    dst = program.add_buffer("dst", (c.M, c.N), fmt, layout="TILE", role="output")
    cols, rows = c.grid
    cores = CoreRange((0, 0), (cols - 1, rows - 1))
    h, w, width = c.out_subblock_h, c.out_subblock_w, c.in1_block_w
    in0_pages, in1_pages, out_pages = c.cb_pages()
    program.create_circular_buffer(cores, single.CB_IN0, c.tile_size, in0_pages, fmt, name="cb_in0")
    program.create_circular_buffer(cores, single.CB_IN1, c.tile_size, in1_pages, fmt, name="cb_in1")
    program.create_circular_buffer(cores, single.CB_OUT, c.tile_size, out_pages, fmt, name="cb_out")
    reader = program.create_kernel(bmm_reader.reader, cores, DataMovementConfig("RISCV_0", "NOC_0"),
                                   [src0.accessor_args, src1.accessor_args], name="reader")
    program.create_kernel(bmm_compute.compute, cores, c.compute_config,
                          [c.per_core_N // width, c.per_core_M // h, width // w, c.Kt, h, w], name="compute")
    writer = program.create_kernel(bmm_writer.writer, cores, DataMovementConfig("RISCV_1", "NOC_1"),
                                   [single.CB_OUT, dst.accessor_args], name="writer")
    for y in range(rows):
        for x in range(cols):
            m0, n0 = y * c.per_core_M, x * c.per_core_N
            program.set_runtime_args(reader, (x, y), [BufferAddress("src0"), BufferAddress("src1"), c.per_core_M, c.Kt,
                                                      c.per_core_N, h, width, m0, n0, c.Nt])
            program.set_runtime_args(writer, (x, y), [BufferAddress("dst"), c.per_core_M, c.per_core_N, h, w, width,
                                                      m0, n0, c.Nt])
    return program


def _summary(c: MultiCoreMatmulConfig) -> list[str]:
    cols, rows = c.grid
    return [
        f"matmul {c.M}x{c.K} @ {c.K}x{c.N} {c.data_format.ttnn_name}: {c.Mt}x{c.Kt} @ {c.Kt}x{c.Nt} tiles on "
        f"{cols}x{rows} cores, {c.per_core_M}x{c.per_core_N} output tiles per core",
        f"output sub-blocks {c.out_subblock_h}x{c.out_subblock_w} tiles, {c.Kt} matmul_block steps each, "
        f"accumulating in {'float32' if c.fp32_dest_acc_en else 'bfloat16'} DST; math fidelity {c.math_fidelity}",
        f"per core: B in column blocks of {c.Kt}x{c.in1_block_w} tiles ({c.in1_buffers} buffered), A in row blocks "
        f"of {c.out_subblock_h}x{c.Kt} tiles ({c.in0_buffers} buffered); {c.tiles_read()} tiles read",
    ]


def add_arguments(parser) -> None:
    parser.add_argument("--shape", default="512,512,512", help="M,K,N (default 512,512,512)")
    parser.add_argument("--dtype", default="bfloat16", choices=single.DTYPES, help="data type (default bfloat16)")
    parser.add_argument("--math-fidelity", default="HiFi4", choices=tuple(MATH_FIDELITY_PHASES),
                        help="multiplier fidelity (default HiFi4)")
    parser.add_argument("--fp32-dest-acc-en", default=None, action=argparse.BooleanOptionalAction,
                        help="accumulate in float32 DST (default: on for float32, off for bfloat16)")
    parser.add_argument("--grid", default=None, help="cores to use, columns,rows (default: the whole grid)")
    parser.add_argument("--seed", type=seed_value, default=0, help="seed of the random inputs (default 0)")


def build(args) -> OpInstance:
    sizes = parse_shape(args.shape)
    if len(sizes) != 3:
        raise LayoutError(f"--shape {args.shape!r} must be M,K,N (three sizes), e.g. 512,512,512")
    M, K, N = sizes
    arch = get_arch(getattr(args, "arch", None))
    config = multicore_matmul_config(M, K, N, args.dtype, math_fidelity=args.math_fidelity,
                                     fp32_dest_acc_en=args.fp32_dest_acc_en,
                                     grid=parse_grid(getattr(args, "grid", None)), arch=arch)
    program = matmul_multi_core(config, arch=arch)
    seed = getattr(args, "seed", 0)
    a = random_input((M, K), args.dtype, seed=seed)
    b = random_input((K, N), args.dtype, seed=seed + 1)
    bound = single.accumulation_error_bound(a, b, config)
    return OpInstance(
        name="matmul_multicore",
        program=program,
        inputs={"src0": a, "src1": b},
        reference=lambda inputs: {"dst": single.reference(inputs["src0"], inputs["src1"])},
        tolerance={"dst": Tolerance(atol=float(bound.max()), min_pcc=single.min_pcc(config))},
        summary=_summary(config),
    )


FACTORY = register(OpFactory("matmul_multicore", "Multi-core matmul, one block of output tiles per core "
                                                 "(whole-K A and B blocks, matmul_block sub-blocks).",
                             add_arguments, build))

__all__ = ["MultiCoreMatmulConfig", "multicore_matmul_config", "matmul_multi_core", "FACTORY"]
