"""Single-core matmul ``C = A @ B`` with the K loop accumulating in DST.

Reads: sizes M, K, N, a data type (bfloat16 or float32), a math fidelity and whether DST
accumulates in float32 (``fp32_dest_acc_en``). Writes: a :class:`~tilefold.program.Program`
on core (0, 0) over the tile-layout DRAM buffers ``src0`` (M×K), ``src1`` (K×N) and ``dst``
(M×N), and the :class:`~tilefold.ops.base.OpInstance` the command line runs (registered as
``matmul``).

The output is computed in sub-blocks of ``out_subblock_h × out_subblock_w`` tiles, the first
of TT-NN's ``SUBBLOCK_HW_CHOICES`` that divides ``Mt × Nt`` and fits one DST acquire (8 tiles,
or 4 with ``fp32_dest_acc_en``, in half-sync mode). For each sub-block the compute kernel
acquires DST once, runs one ``matmul_block`` per K tile (each adds an ``out_subblock_h ×
out_subblock_w`` block of tile products to DST), then commits, packs and releases. B comes in
column blocks of ``Kt × in1_block_w`` tiles, the widest whose circular buffers fit in L1 (all of
B when it fits: then A and B are each read once); for each column block A comes in row blocks
of ``out_subblock_h × Kt`` tiles. Kernels: reader :mod:`~tilefold.ops.kernels.reader_bmm`
(RISCV_0), compute :mod:`~tilefold.ops.kernels.bmm`, writer
:mod:`~tilefold.ops.kernels.writer_bmm` (RISCV_1). CB c_0 holds A row blocks, CB c_1
B column blocks (each double-buffered when more than one comes), CB c_16 two output sub-blocks.

Argument tables:

=========  =================================================================================
reader CT  ``TensorAccessorArgs(src0)``, ``TensorAccessorArgs(src1)``
reader RT  ``src0_addr, src1_addr, Mt, Kt, Nt, out_subblock_h, in1_block_w, 0, 0, Nt``
compute CT ``num_blocks_n, in0_num_subblocks, in1_num_subblocks, Kt, out_subblock_h, out_subblock_w``
writer CT  ``cb_id_out (16)``, ``TensorAccessorArgs(dst)``
writer RT  ``dst_addr, Mt, Nt, out_subblock_h, out_subblock_w, in1_block_w, 0, 0, Nt``
=========  =================================================================================

Sizes that are not multiples of 32 are padded with zeros by the host's tilize (zeros add
nothing to the sums). :func:`accumulation_error_bound` gives the per-element error bound the
result is checked against.

Errors: :class:`~tilefold.errors.LayoutError` for bad sizes or an unsupported data type,
:class:`~tilefold.errors.ProgramError` for a math fidelity, sub-block or K that cannot work.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np

from tilefold.arch import MATH_FIDELITY_PHASES, get_arch
from tilefold.errors import LayoutError, ProgramError
from tilefold.layout.formats import DataFormat, data_format
from tilefold.ops.base import OpFactory, OpInstance, Tolerance, parse_shape, random_input, register, seed_value
from tilefold.ops.kernels import bmm as bmm_compute
from tilefold.ops.kernels import reader_bmm as bmm_reader
from tilefold.ops.kernels import writer_bmm as bmm_writer
from tilefold.program import BufferAddress, ComputeConfig, DataMovementConfig, Program

TILE = 32
CB_IN0 = 0
CB_IN1 = 1
CB_OUT = 16
DTYPES = ("bfloat16", "float32")
CORE = (0, 0)
# TT-NN's preferred output sub-block shapes (out_subblock_h, out_subblock_w), best first.
SUBBLOCK_HW_CHOICES = ((4, 2), (2, 4), (8, 1), (1, 8), (7, 1), (1, 7), (3, 2), (2, 3), (6, 1), (1, 6), (5, 1),
                       (1, 5), (2, 2), (4, 1), (1, 4), (3, 1), (1, 3), (2, 1), (1, 2), (1, 1))

FP32_UNIT_ROUNDOFF = 2.0 ** -24
BF16_UNIT_ROUNDOFF = 2.0 ** -8


@dataclass(frozen=True)
class MatmulConfig:
    """Sizes in tiles, the sub-block and the compute config of one single-core matmul."""

    M: int
    K: int
    N: int
    data_format: DataFormat
    math_fidelity: str
    fp32_dest_acc_en: bool
    out_subblock_h: int
    out_subblock_w: int
    in1_block_w: int           # tiles of N per column block of B (a multiple of out_subblock_w)

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
    def tile_size(self) -> int:
        return self.data_format.tile_size(TILE, TILE)

    @property
    def compute_config(self) -> ComputeConfig:
        return ComputeConfig(math_fidelity=self.math_fidelity, fp32_dest_acc_en=self.fp32_dest_acc_en)

    @property
    def num_blocks_n(self) -> int:
        return self.Nt // self.in1_block_w

    def cb_pages(self, out_subblock_h: int, out_subblock_w: int, in1_block_w: int) -> tuple[int, int, int]:
        """Pages of CB c_0, c_1 and c_16: A row blocks and B column blocks double-buffered when
        more than one comes, two output sub-blocks."""
        in0 = out_subblock_h * self.Kt * (2 if self.Mt > out_subblock_h else 1)
        in1 = self.Kt * in1_block_w * (2 if self.Nt > in1_block_w else 1)
        return in0, in1, 2 * out_subblock_h * out_subblock_w

    def l1_bytes(self, out_subblock_h: int, out_subblock_w: int, in1_block_w: int) -> int:
        return sum(self.cb_pages(out_subblock_h, out_subblock_w, in1_block_w)) * self.tile_size

    def widest_in1_block(self, out_subblock_h: int, out_subblock_w: int, budget: int) -> int | None:
        """The widest B column block (a multiple of ``out_subblock_w`` dividing Nt) whose CBs fit
        in ``budget`` bytes, or None."""
        for width in range(self.Nt, 0, -out_subblock_w):
            if self.Nt % width == 0 and width % out_subblock_w == 0 and \
                    self.l1_bytes(out_subblock_h, out_subblock_w, width) <= budget:
                return width
        return None


def check_options(M: int, K: int, N: int, dtype, math_fidelity: str) -> DataFormat:
    """The data format of a matmul of these options, or a clear error for a bad one."""
    for name, value in (("M", M), ("K", K), ("N", N)):
        if not isinstance(value, (int, np.integer)) or value <= 0:
            raise LayoutError(f"matmul {name} = {value!r} must be a positive integer")
    fmt = data_format(dtype)
    if fmt.ttnn_name not in DTYPES:
        raise LayoutError(f"matmul dtype {fmt.ttnn_name} is not supported; use one of {', '.join(DTYPES)}")
    if math_fidelity not in MATH_FIDELITY_PHASES:
        raise ProgramError(f"math fidelity {math_fidelity!r} is not one of {', '.join(MATH_FIDELITY_PHASES)}")
    return fmt


def matmul_config(M: int, K: int, N: int, dtype="bfloat16", *, math_fidelity: str = "HiFi4",
                  fp32_dest_acc_en: bool | None = None, subblock=None, arch=None) -> MatmulConfig:
    """Check the options and choose the output sub-block (unless ``subblock`` = (h, w) is given)."""
    arch = get_arch(arch)
    fmt = check_options(M, K, N, dtype, math_fidelity)
    if fp32_dest_acc_en is None:
        fp32_dest_acc_en = fmt is DataFormat.Float32
    base = MatmulConfig(int(M), int(K), int(N), fmt, math_fidelity, bool(fp32_dest_acc_en), 1, 1, 1)
    dst_tiles = arch.dst_capacity(base.fp32_dest_acc_en)
    budget = arch.l1_free
    if subblock is not None:
        h, w = (int(v) for v in subblock)
        problems = []
        if h <= 0 or w <= 0 or base.Mt % h or base.Nt % w:
            problems.append(f"it must be positive and divide the output's {base.Mt}x{base.Nt} tiles")
        if h * w > dst_tiles:
            problems.append(f"{h * w} tiles exceed the {dst_tiles} tiles of one DST acquire "
                            f"(fp32_dest_acc_en={base.fp32_dest_acc_en})")
        width = None if problems else base.widest_in1_block(h, w, budget)
        if not problems and width is None:
            problems.append(f"its blocks need {base.l1_bytes(h, w, w)} B of L1 but {budget} B are free")
        if problems:
            raise ProgramError(f"sub-block {h}x{w}: " + "; ".join(problems))
        return MatmulConfig(base.M, base.K, base.N, fmt, math_fidelity, base.fp32_dest_acc_en, h, w, width)
    for h, w in SUBBLOCK_HW_CHOICES:
        if h * w <= dst_tiles and base.Mt % h == 0 and base.Nt % w == 0:
            width = base.widest_in1_block(h, w, budget)
            if width is not None:
                return MatmulConfig(base.M, base.K, base.N, fmt, math_fidelity, base.fp32_dest_acc_en, h, w, width)
    raise ProgramError(f"matmul K = {K}: even a 1x1 output sub-block needs {base.l1_bytes(1, 1, 1)} B of circular "
                       f"buffers ({base.Kt} K tiles of A and of B, double-buffered) but {budget} B of L1 are free on "
                       f"{arch.board}; the single-core matmul keeps whole-K blocks in L1 — use K of at most "
                       f"{(budget // base.tile_size - 2) // 4 * TILE}")


def matmul_single_core(config: MatmulConfig, *, arch=None) -> Program:
    """The program of ``config``: ``dst = src0 @ src1`` on core (0, 0)."""
    arch = get_arch(arch)
    c = config
    program = Program("matmul", arch=arch)
    fmt = c.data_format
    src0 = program.add_buffer("src0", (c.M, c.K), fmt, layout="TILE", role="input")
    src1 = program.add_buffer("src1", (c.K, c.N), fmt, layout="TILE", role="input")
    dst = program.add_buffer("dst", (c.M, c.N), fmt, layout="TILE", role="output")
    h, w, width = c.out_subblock_h, c.out_subblock_w, c.in1_block_w
    in0_pages, in1_pages, out_pages = c.cb_pages(h, w, width)
    program.create_circular_buffer(CORE, CB_IN0, c.tile_size, in0_pages, fmt, name="cb_in0")
    program.create_circular_buffer(CORE, CB_IN1, c.tile_size, in1_pages, fmt, name="cb_in1")
    program.create_circular_buffer(CORE, CB_OUT, c.tile_size, out_pages, fmt, name="cb_out")
    reader = program.create_kernel(bmm_reader.reader, CORE, DataMovementConfig("RISCV_0", "NOC_0"),
                                   [src0.accessor_args, src1.accessor_args], name="reader")
    program.create_kernel(bmm_compute.compute, CORE, c.compute_config,
                          [c.num_blocks_n, c.Mt // h, width // w, c.Kt, h, w], name="compute")
    writer = program.create_kernel(bmm_writer.writer, CORE, DataMovementConfig("RISCV_1", "NOC_1"),
                                   [CB_OUT, dst.accessor_args], name="writer")
    program.set_runtime_args(reader, CORE, [BufferAddress("src0"), BufferAddress("src1"), c.Mt, c.Kt, c.Nt, h,
                                            width, 0, 0, c.Nt])
    program.set_runtime_args(writer, CORE, [BufferAddress("dst"), c.Mt, c.Nt, h, w, width, 0, 0, c.Nt])
    return program


def _operand_error(fmt: DataFormat, math_fidelity: str, operand: str) -> float:
    """Relative error of one multiplier operand: float32 truncated to TF32 (10 mantissa bits) in
    the source registers, then the mantissa slices the fidelity's phases multiply (in1 is SrcA:
    4 mantissa bits at LoFi, else 9; in0 is SrcB: 6 bits at LoFi and HiFi2; HiFi3 leaves out only
    A_lo·B_lo, below 2^-4 · 2^-6 of the product, counted here on in0). Truncating to ``k``
    mantissa bits is a relative error below ``2^-k``."""
    bits = 7 if fmt is DataFormat.Float16_b else 23
    if operand == "in1":
        keep = 4 if math_fidelity == "LoFi" else 9
    elif math_fidelity in ("LoFi", "HiFi2"):
        keep = 6
    else:
        keep = 10
    error = 2.0 ** -keep if keep < bits else 0.0
    if operand == "in0" and math_fidelity == "HiFi3":
        error = (1 + error) * (1 + 2.0 ** -10) - 1
    return error


def accumulation_error_bound(a: np.ndarray, b: np.ndarray, config: MatmulConfig) -> np.ndarray:
    """Per-element bound of ``|device C − exact A @ B|`` for the inputs ``a``, ``b`` as stored.

    With ``P = |A| @ |B|``, ``e`` the relative error of a product (operand rounding and
    fidelity, :func:`_operand_error`), ``g = 32u/(1 − 32u)`` (float32 sum of one K tile's 32
    products) and ``s`` the rounding of one DST accumulation step (bfloat16: a float32 add then
    rounding to bfloat16, ``s = u_bf16 + u_fp32 + u_bf16·u_fp32``; float32: ``u_fp32``):

    * each of the ``Kt`` K steps rounds the running sum, so DST ends within
      ``E = [e + g(1 + e) + ((1 + s)^Kt − 1)(1 + e)(1 + g)] · P`` of the exact result;
    * packing float32 DST to bfloat16 adds ``u_bf16 · (|C| + E)``; other packs are exact.

    With bfloat16 accumulation the ``(1 + s)^Kt − 1 ≈ Kt · 2^-8`` term dominates; with
    ``fp32_dest_acc_en`` it shrinks to ``Kt · 2^-24`` and the output rounding is what is left.
    """
    a64 = np.abs(np.asarray(a, np.float64))
    b64 = np.abs(np.asarray(b, np.float64))
    magnitude = a64 @ b64
    fmt = config.data_format
    ea = _operand_error(fmt, config.math_fidelity, "in0")
    eb = _operand_error(fmt, config.math_fidelity, "in1")
    e = (1 + ea) * (1 + eb) - 1
    g = 32 * FP32_UNIT_ROUNDOFF / (1 - 32 * FP32_UNIT_ROUNDOFF)
    if config.fp32_dest_acc_en:
        step = FP32_UNIT_ROUNDOFF
    else:
        step = BF16_UNIT_ROUNDOFF + FP32_UNIT_ROUNDOFF + BF16_UNIT_ROUNDOFF * FP32_UNIT_ROUNDOFF
    accumulate = (1 + step) ** config.Kt - 1
    dst_bound = (e + g * (1 + e) + accumulate * (1 + e) * (1 + g)) * magnitude
    if config.fp32_dest_acc_en and fmt is DataFormat.Float16_b:
        exact = np.abs(np.asarray(a, np.float64) @ np.asarray(b, np.float64))
        return dst_bound + BF16_UNIT_ROUNDOFF * (exact + dst_bound)
    return dst_bound


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``A @ B`` in float64 of the stored inputs, as float32."""
    return (np.asarray(a, np.float64) @ np.asarray(b, np.float64)).astype(np.float32)


def min_pcc(config: MatmulConfig) -> float:
    """The correlation a correct result reaches. Rounding the running sums to bfloat16 at each
    of Kt steps leaves a relative error of about ``u·sqrt(Kt/6)`` (u = 2^-8), which costs about
    ``u²·Kt/12`` of correlation; allow four times that, and at least 1e-4. LoFi (5-bit in0)
    gets 1e-3."""
    if config.math_fidelity == "LoFi":
        return 0.999
    if config.fp32_dest_acc_en:
        return 0.9999
    return min(0.9999, 1 - BF16_UNIT_ROUNDOFF ** 2 * config.Kt / 3)


def _summary(config: MatmulConfig) -> list[str]:
    c = config
    return [
        f"matmul {c.M}x{c.K} @ {c.K}x{c.N} {c.data_format.ttnn_name} on core (0,0): {c.Mt}x{c.Kt} @ {c.Kt}x{c.Nt} "
        "tiles",
        f"output sub-blocks {c.out_subblock_h}x{c.out_subblock_w} tiles ({c.Mt // c.out_subblock_h}x"
        f"{c.Nt // c.out_subblock_w} of them), {c.Kt} matmul_block steps each, accumulating in "
        f"{'float32' if c.fp32_dest_acc_en else 'bfloat16'} DST; math fidelity {c.math_fidelity}",
        f"B read in {c.num_blocks_n} column block(s) of {c.Kt}x{c.in1_block_w} tiles, A in row blocks of "
        f"{c.out_subblock_h}x{c.Kt} tiles ({c.num_blocks_n} pass(es) over A)",
    ]


def add_arguments(parser) -> None:
    parser.add_argument("--shape", default="256,256,256", help="M,K,N (default 256,256,256)")
    parser.add_argument("--dtype", default="bfloat16", choices=DTYPES, help="data type (default bfloat16)")
    parser.add_argument("--math-fidelity", default="HiFi4", choices=tuple(MATH_FIDELITY_PHASES),
                        help="multiplier fidelity (default HiFi4)")
    parser.add_argument("--fp32-dest-acc-en", default=None, action=argparse.BooleanOptionalAction,
                        help="accumulate in float32 DST (default: on for float32, off for bfloat16)")
    parser.add_argument("--subblock", default=None, help="output sub-block h,w in tiles (default: chosen)")
    parser.add_argument("--seed", type=seed_value, default=0, help="seed of the random inputs (default 0)")


def _parse_subblock(text) -> tuple[int, int] | None:
    if text is None:
        return None
    try:
        h, w = (int(v) for v in str(text).replace("x", ",").split(","))
    except ValueError:
        raise ProgramError(f"--subblock {text!r} must be h,w in tiles, e.g. 4,2") from None
    return h, w


def build(args) -> OpInstance:
    sizes = parse_shape(args.shape)
    if len(sizes) != 3:
        raise LayoutError(f"--shape {args.shape!r} must be M,K,N (three sizes), e.g. 256,256,256")
    M, K, N = sizes
    arch = get_arch(getattr(args, "arch", None))
    subblock = _parse_subblock(getattr(args, "subblock", None))
    config = matmul_config(M, K, N, args.dtype, math_fidelity=args.math_fidelity,
                           fp32_dest_acc_en=args.fp32_dest_acc_en, subblock=subblock, arch=arch)
    program = matmul_single_core(config, arch=arch)
    seed = getattr(args, "seed", 0)
    a = random_input((M, K), args.dtype, seed=seed)
    b = random_input((K, N), args.dtype, seed=seed + 1)
    bound = accumulation_error_bound(a, b, config)
    return OpInstance(
        name="matmul",
        program=program,
        inputs={"src0": a, "src1": b},
        reference=lambda inputs: {"dst": reference(inputs["src0"], inputs["src1"])},
        tolerance={"dst": Tolerance(atol=float(bound.max()), min_pcc=min_pcc(config))},
        summary=_summary(config),
    )


FACTORY = register(OpFactory("matmul", "Single-core matmul, K loop accumulating in DST (matmul_block sub-blocks).",
                             add_arguments, build))

__all__ = ["MatmulConfig", "check_options", "matmul_config", "matmul_single_core", "accumulation_error_bound", "reference", "min_pcc",
           "SUBBLOCK_HW_CHOICES", "FACTORY"]
