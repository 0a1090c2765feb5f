"""2-D multicast matmul ``C = A @ B`` (TT-Metal's ``matmul_multicore_reuse_mcast``): every core of
a grid computes one output block; A blocks travel along grid rows and B blocks down grid columns
by NOC multicast, so DRAM serves each A and B tile once.

Reads: sizes M, K, N, the input and output data types (bfloat16, float32, bfloat8_b, bfloat4_b
inputs), a math fidelity, whether DST accumulates in float32, whether the packer accumulates
partial sums in L1, the grid and optionally the K block width. Writes: a
:class:`~tilefold.program.Program` over the tile-layout DRAM buffers ``src0`` (M×K), ``src1``
(K×N) and ``dst`` (M×N), and the :class:`~tilefold.ops.base.OpInstance` the command line runs
(registered as ``matmul_mcast``).

Work split: core (x, y) computes the ``per_core_M × per_core_N`` tiles at tile row ``y ·
per_core_M``, column ``x · per_core_N`` (as ``matmul_multicore``). K is cut into ``num_blocks``
blocks of ``in0_block_w`` tiles. Column 0 reads A blocks and multicasts them along its row
(:mod:`~tilefold.ops.kernels.reader_bmm_in0_mcast`, RISCV_0 / NOC_0); row 0 reads B blocks and
multicasts them down its column, and every core writes its output
(:mod:`~tilefold.ops.kernels.reader_bmm_in1_mcast_writer`, RISCV_1 / NOC_1); the compute kernel
is :mod:`~tilefold.ops.kernels.bmm_large_block`. Four semaphores per core carry the handshake
(in0 sender, in0 receiver, in1 sender, in1 receiver).

Blocking, chosen together: the output sub-block is the first of TT-NN's ``SUBBLOCK_HW_CHOICES``
dividing the core's block and fitting one DST acquire; ``in0_block_w`` the widest divisor of Kt
(at most 8) whose circular buffers fit in L1: A and B blocks double-buffered (c_0, c_1), the
partial sums of the whole output block (c_24: float32 with a float32 DST, else bfloat16 unless the
output is float32), two output sub-blocks (c_16).

Errors: :class:`~tilefold.errors.LayoutError` for bad sizes or data types,
:class:`~tilefold.errors.ProgramError` for a grid, fidelity or blocking that cannot work.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace

import numpy as np

from tilefold.arch import MATH_FIDELITY_PHASES, get_arch
from tilefold.arch.cores import CoreCoord, CoreRange
from tilefold.errors import LayoutError, ProgramError
from tilefold.layout.formats import DataFormat, data_format
from tilefold.ops import matmul as single
from tilefold.ops.base import OpFactory, OpInstance, Tolerance, parse_shape, random_input, register
from tilefold.ops.kernels import bmm_large_block
from tilefold.ops.kernels import reader_bmm_in0_mcast as in0_kernels
from tilefold.ops.kernels import reader_bmm_in1_mcast_writer as in1_kernels
from tilefold.ops.matmul_multicore import _per_core
from tilefold.ops.work_split import compute_grid, parse_grid
from tilefold.program import BufferAddress, ComputeConfig, DataMovementConfig, NocX, NocY, Program

TILE = 32
CB_IN0, CB_IN1, CB_OUT, CB_PARTIALS = 0, 1, 16, 24
IN_DTYPES = ("bfloat16", "float32", "bfloat8_b", "bfloat4_b")
OUT_DTYPES = ("bfloat16", "float32", "bfloat8_b", "bfloat4_b")
IN0_BLOCK_W_MAX = 8
# semaphore ids, created in this order on every core
SEM_IN0_SENDER, SEM_IN0_RECEIVER, SEM_IN1_SENDER, SEM_IN1_RECEIVER = range(4)


@dataclass(frozen=True)
class McastMatmulConfig:
    """Sizes, formats, the per-core block and its blocking."""

    M: int
    K: int
    N: int
    in_format: DataFormat
    out_format: DataFormat
    math_fidelity: str
    fp32_dest_acc_en: bool
    packer_l1_acc: bool
    per_core_M: int
    per_core_N: int
    in0_block_w: int
    out_subblock_h: int
    out_subblock_w: int

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
    def num_blocks(self) -> int:
        return self.Kt // self.in0_block_w

    @property
    def partials_format(self) -> DataFormat:
        if self.fp32_dest_acc_en or self.out_format is DataFormat.Float32:
            return DataFormat.Float32
        return DataFormat.Float16_b

    @property
    def compute_config(self) -> ComputeConfig:
        return ComputeConfig(math_fidelity=self.math_fidelity, fp32_dest_acc_en=self.fp32_dest_acc_en)

    def cb_bytes(self) -> dict[int, tuple[int, DataFormat]]:
        """Pages and format of each circular buffer: c_0, c_1, c_16 and (with more than one K block) c_24."""
        pm, pn, w = self.per_core_M, self.per_core_N, self.in0_block_w
        cbs = {CB_IN0: (2 * pm * w, self.in_format), CB_IN1: (2 * w * pn, self.in_format),
               CB_OUT: (2 * self.out_subblock_h * self.out_subblock_w, self.out_format)}
        if self.num_blocks > 1:
            cbs[CB_PARTIALS] = (pm * pn, self.partials_format)
        return cbs

    def l1_bytes(self) -> int:
        return sum(pages * fmt.tile_size(TILE, TILE) for pages, fmt in self.cb_bytes().values())

    def dram_bytes(self) -> int:
        """Bytes the program moves to and from DRAM: A and B once each, C once."""
        tile_in = self.in_format.tile_size(TILE, TILE)
        return (self.Mt * self.Kt + self.Kt * self.Nt) * tile_in + self.Mt * self.Nt * self.out_format.tile_size(TILE, TILE)


def _check(M, K, N, dtype, out_dtype, math_fidelity) -> tuple[DataFormat, DataFormat]:
    for name, value in (("M", M), ("K", K), ("N", N)):
        if not isinstance(value, (int, np.integer)) or value <= 0:
            raise LayoutError(f"matmul {name} = {value!r} must be a positive integer")
    fmt = data_format(dtype)
    if fmt.ttnn_name not in IN_DTYPES:
        raise LayoutError(f"matmul dtype {fmt.ttnn_name} is not supported; use one of {', '.join(IN_DTYPES)}")
    out = fmt if out_dtype is None else data_format(out_dtype)
    if out.ttnn_name not in OUT_DTYPES:
        raise LayoutError(f"matmul output dtype {out.ttnn_name} is not supported; use one of {', '.join(OUT_DTYPES)}")
    if math_fidelity not in MATH_FIDELITY_PHASES:
        raise ProgramError(f"math fidelity {math_fidelity!r} is not one of {', '.join(MATH_FIDELITY_PHASES)}")
    return fmt, out


def mcast_matmul_config(M: int, K: int, N: int, dtype="bfloat16", *, out_dtype=None, math_fidelity: str = "HiFi2",
                        fp32_dest_acc_en: bool | None = None, packer_l1_acc: bool = True, grid=None,
                        in0_block_w: int | None = None, arch=None) -> McastMatmulConfig:
    """Check the options, split the output over ``grid`` (default: the whole compute grid) and
    choose the sub-block and K block width."""
    arch = get_arch(arch)
    fmt, out = _check(M, K, N, dtype, out_dtype, math_fidelity)
    fp32 = fmt is DataFormat.Float32 if fp32_dest_acc_en is None else bool(fp32_dest_acc_en)
    cols, rows = compute_grid(arch, grid)
    Mt, Kt, Nt = (-(-v // TILE) for v in (M, K, N))
    pm, pn = _per_core(Mt, rows), _per_core(Nt, cols)
    dst_tiles = arch.dst_capacity(fp32)
    h, w = next((h, w) for h, w in single.SUBBLOCK_HW_CHOICES if h * w <= dst_tiles and pm % h == 0 and pn % w == 0)
    base = McastMatmulConfig(int(M), int(K), int(N), fmt, out, math_fidelity, fp32, bool(packer_l1_acc), pm, pn, 1,
                             h, w)
    if in0_block_w is not None:
        widths = [int(in0_block_w)]
        if widths[0] <= 0 or Kt % widths[0]:
            raise ProgramError(f"in0_block_w = {in0_block_w} must be a positive divisor of the {Kt} K tiles")
    else:
        widths = [d for d in range(min(IN0_BLOCK_W_MAX, Kt), 0, -1) if Kt % d == 0]
    for width in widths:
        c = replace(base, in0_block_w=width)
        if c.l1_bytes() <= arch.l1_free:
            return c
    c = replace(base, in0_block_w=widths[-1])
    raise ProgramError(f"matmul {M}x{K}x{N}: the {pm}x{pn}-tile output block per core needs {c.l1_bytes()} B of "
                       f"circular buffers but {arch.l1_free} B of L1 are free on {arch.board}; use more cores")


def _mcast_rect(arch, first: CoreCoord, last: CoreCoord, noc: int) -> list:
    """A multicast rectangle as runtime args, NOC coordinates; NOC 1 runs the other way, so its
    start is the far corner (as TT-Metal's multicast on NOC 1 requires)."""
    a, b = (first, last) if noc == 0 else (last, first)
    return [NocX(a), NocY(a), NocX(b), NocY(b)]


def matmul_mcast(config: McastMatmulConfig, *, arch=None) -> Program:
    """The program of ``config``: ``dst = src0 @ src1`` over ``config.grid`` cores."""
    arch = get_arch(arch)
    c = config
    program = Program("matmul_mcast", arch=arch)
    src0 = program.add_buffer("src0", (c.M, c.K), c.in_format, layout="TILE", role="input")
    src1 = program.add_buffer("src1", (c.K, c.N), c.in_format, layout="TILE", role="input")
    dst = program.add_buffer("dst", (c.M, c.N), c.out_format, layout="TILE", role="output")
    cols, rows = c.grid
    everyone = CoreRange((0, 0), (cols - 1, rows - 1))
    for index, (pages, fmt) in c.cb_bytes().items():
        program.create_circular_buffer(everyone, index, fmt.tile_size(TILE, TILE), pages, fmt, name=f"cb_{index}")
    for _ in range(4):
        program.create_semaphore(everyone, 0)
    pm, pn, w, nb = c.per_core_M, c.per_core_N, c.in0_block_w, c.num_blocks
    h, sw = c.out_subblock_h, c.out_subblock_w
    noc0, noc1 = DataMovementConfig("RISCV_0", "NOC_0"), DataMovementConfig("RISCV_1", "NOC_1")
    in0_sender = program.create_kernel(in0_kernels.in0_sender, CoreRange((0, 0), (0, rows - 1)), noc0,
                                       [src0.accessor_args], name="in0_sender")
    in1_ct = [src1.accessor_args, dst.accessor_args]
    in1_sender = program.create_kernel(in1_kernels.in1_sender_writer, CoreRange((0, 0), (cols - 1, 0)), noc1,
                                       in1_ct, name="in1_sender_writer")
    in0_receiver = in1_receiver = None
    if cols > 1:
        in0_receiver = program.create_kernel(in0_kernels.in0_receiver, CoreRange((1, 0), (cols - 1, rows - 1)), noc0,
                                             name="in0_receiver")
    if rows > 1:
        in1_receiver = program.create_kernel(in1_kernels.in1_receiver_writer, CoreRange((0, 1), (cols - 1, rows - 1)),
                                             noc1, in1_ct, name="in1_receiver_writer")
    program.create_kernel(bmm_large_block.compute, everyone, c.compute_config,
                          [w, pm // h, pn // sw, nb, h, sw, int(c.packer_l1_acc)], name="compute")
    for y in range(rows):
        m0 = y * pm
        row_sender = CoreCoord(0, y)
        rect = _mcast_rect(arch, CoreCoord(1, y), CoreCoord(cols - 1, y), 0) if cols > 1 else [0, 0, 0, 0]
        program.set_runtime_args(in0_sender, row_sender, [BufferAddress("src0"), c.Kt, pm, w, nb, m0, *rect, cols - 1,
                                                          SEM_IN0_SENDER, SEM_IN0_RECEIVER])
        for x in range(1, cols):
            program.set_runtime_args(in0_receiver, (x, y), [pm, w, nb, NocX(row_sender), NocY(row_sender),
                                                            SEM_IN0_SENDER, SEM_IN0_RECEIVER])
    for x in range(cols):
        n0 = x * pn
        col_sender = CoreCoord(x, 0)
        rect = _mcast_rect(arch, CoreCoord(x, 1), CoreCoord(x, rows - 1), 1) if rows > 1 else [0, 0, 0, 0]
        program.set_runtime_args(in1_sender, col_sender, [BufferAddress("src1"), BufferAddress("dst"), c.Nt, pm, pn,
                                                          w, nb, 0, n0, h, sw, *rect, rows - 1, SEM_IN1_SENDER,
                                                          SEM_IN1_RECEIVER])
        for y in range(1, rows):
            program.set_runtime_args(in1_receiver, (x, y), [BufferAddress("dst"), c.Nt, pm, pn, w, nb, y * pm, n0, h,
                                                            sw, NocX(col_sender), NocY(col_sender), SEM_IN1_SENDER,
                                                            SEM_IN1_RECEIVER])
    return program


def stored(x: np.ndarray, fmt: DataFormat) -> np.ndarray:
    """``x`` as the device stores it in ``fmt`` (block floats share exponents per face row)."""
    from tilefold.layout.host import from_device_pages, to_device_pages

    if not fmt.is_block_float:
        return x
    return from_device_pages(to_device_pages(x, fmt), x.shape, fmt)


def error_bound(a: np.ndarray, b: np.ndarray, c: McastMatmulConfig) -> float:
    """Largest ``|device C − exact A @ B|`` a correct result can have: the single-core matmul's
    accumulation bound for the stored inputs, plus rounding the partial sums between K blocks to
    their CB format, plus the output's block-float rounding."""
    fmt = DataFormat.Float32 if c.in_format is DataFormat.Float32 else DataFormat.Float16_b
    like = single.MatmulConfig(c.M, c.K, c.N, fmt, c.math_fidelity, c.fp32_dest_acc_en, 1, 1, 1)
    bound = single.accumulation_error_bound(a, b, like)
    magnitude = float((np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))).max())
    if c.partials_format is DataFormat.Float16_b:
        bound = bound + c.num_blocks * single.BF16_UNIT_ROUNDOFF * magnitude
    if c.out_format.is_block_float:
        bound = bound + 2.0 ** -(c.out_format.mantissa_bits - 1) * magnitude
    return float(np.max(bound))


def _summary(c: McastMatmulConfig) -> list[str]:
    cols, rows = c.grid
    return [
        f"matmul {c.M}x{c.K} @ {c.K}x{c.N} {c.in_format.ttnn_name} -> {c.out_format.ttnn_name}: {c.Mt}x{c.Kt} @ "
        f"{c.Kt}x{c.Nt} tiles on {cols}x{rows} cores, {c.per_core_M}x{c.per_core_N} output tiles per core",
        f"A multicast along rows, B down columns, {c.num_blocks} K blocks of {c.in0_block_w} tiles; output sub-blocks "
        f"{c.out_subblock_h}x{c.out_subblock_w}; {'float32' if c.fp32_dest_acc_en else 'bfloat16'} DST, partial sums "
        f"in {c.partials_format.ttnn_name} {'by packer L1 accumulation' if c.packer_l1_acc else 'reloaded into DST'}; "
        f"math fidelity {c.math_fidelity}",
    ]


def add_arguments(parser) -> None:
    parser.add_argument("--shape", default="512,512,512", help="M,K,N (default 512,512,512)")
    parser.add_argument("--dtype", default="bfloat16", choices=IN_DTYPES, help="input data type (default bfloat16)")
    parser.add_argument("--out-dtype", default=None, choices=OUT_DTYPES, help="output data type (default: the input's)")
    parser.add_argument("--math-fidelity", default="HiFi2", choices=tuple(MATH_FIDELITY_PHASES),
                        help="multiplier fidelity (default HiFi2)")
    parser.add_argument("--fp32-dest-acc-en", default=None, action=argparse.BooleanOptionalAction,
                        help="accumulate in float32 DST (default: on for float32 inputs)")
    parser.add_argument("--packer-l1-acc", default=True, action=argparse.BooleanOptionalAction,
                        help="add partial sums in L1 with the packer (default on)")
    parser.add_argument("--in0-block-w", type=int, default=None, help="K tiles per block (default: chosen)")
    parser.add_argument("--grid", default=None, help="cores to use, columns,rows (default: the whole grid)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")


def build(args) -> OpInstance:
    sizes = parse_shape(args.shape)
    if len(sizes) != 3:
        raise LayoutError(f"--shape {args.shape!r} must be M,K,N (three sizes), e.g. 512,512,512")
    M, K, N = sizes
    arch = get_arch(getattr(args, "arch", None))
    config = mcast_matmul_config(M, K, N, args.dtype, out_dtype=args.out_dtype, math_fidelity=args.math_fidelity,
                                 fp32_dest_acc_en=args.fp32_dest_acc_en, packer_l1_acc=args.packer_l1_acc,
                                 grid=parse_grid(getattr(args, "grid", None)), in0_block_w=args.in0_block_w, arch=arch)
    program = matmul_mcast(config, arch=arch)
    seed = getattr(args, "seed", 0)
    a = stored(random_input((M, K), args.dtype, seed=seed), config.in_format)
    b = stored(random_input((K, N), args.dtype, seed=seed + 1), config.in_format)
    pcc_floor = 0.999 if config.math_fidelity == "LoFi" or config.in_format is DataFormat.Bfp4_b else 0.9999
    if config.in_format is DataFormat.Bfp4_b or config.out_format is DataFormat.Bfp4_b:
        pcc_floor = 0.99
    return OpInstance(
        name="matmul_mcast",
        program=program,
        inputs={"src0": a, "src1": b},
        reference=lambda inputs: {"dst": single.reference(inputs["src0"], inputs["src1"])},
        tolerance={"dst": Tolerance(atol=error_bound(a, b, config), min_pcc=pcc_floor)},
        summary=_summary(config),
    )


FACTORY = register(OpFactory("matmul_mcast", "2-D multicast matmul: A blocks multicast along grid rows, B blocks "
                                             "down columns, K blocks with packer L1 accumulation.",
                             add_arguments, build))

__all__ = ["McastMatmulConfig", "mcast_matmul_config", "matmul_mcast", "error_bound", "FACTORY"]
