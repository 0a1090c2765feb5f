"""Kernels of a Program: a ttkernel function placed on cores with its configuration and args.

Reads: nothing. Writes: nothing. A data-movement kernel runs on RISCV_0 (BRISC, NOC 0 by
default) or RISCV_1 (NCRISC, NOC 1); a compute kernel runs on the three TRISCs with a
:class:`ComputeConfig`. Several kernels may share one function (for example a full-core
and a cliff-core compute kernel with different compile-time args); they then share one
C++ source file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import func

from tilefold.arch import ARCHS
from tilefold.arch.cores import CoreCoord, CoreRangeSet
from tilefold.errors import SourceLocation
from tilefold.program.args import CompileArg, RuntimeArg

# the circular buffers a device may have (a compute config is not tied to one device; a program checks its own)
_NUM_CBS = max(a.max_circular_buffers for a in ARCHS.values())

MATH_FIDELITIES = ("LoFi", "HiFi2", "HiFi3", "HiFi4")


@dataclass(frozen=True)
class DataMovementConfig:
    processor: str = "RISCV_0"   # RISCV_0 = BRISC (reader by convention), RISCV_1 = NCRISC (writer)
    noc: str | None = None        # NOC_0 / NOC_1; default: RISCV_0 -> NOC_0, RISCV_1 -> NOC_1

    @property
    def noc_index(self) -> int:
        noc = self.noc or ("NOC_0" if self.processor == "RISCV_0" else "NOC_1")
        return 0 if noc == "NOC_0" else 1

    @property
    def thread(self) -> str:
        return "noc"


UNPACK_TO_DEST_MODES = ("Default", "UnpackToDestFp32")


@dataclass(frozen=True)
class ComputeConfig:
    """TT-Metalium's ``ComputeConfig``. ``unpack_to_dest_mode`` maps CB indices to an
    ``UnpackToDestMode`` (every CB not named is ``Default``): with ``UnpackToDestFp32`` the
    unpacker writes a float32 CB's tiles straight into a 32-bit DST (``copy_tile``,
    ``transpose_wh_tile``, ``tilize_block``, ``untilize_block``) instead of through the FPU's
    19-bit source registers. Given as a dict, kept as sorted ``(cb, mode)`` pairs."""

    math_fidelity: str = "HiFi4"
    fp32_dest_acc_en: bool = False
    dst_full_sync_en: bool = False
    math_approx_mode: bool = False
    unpack_to_dest_mode: tuple[tuple[int, str], ...] = ()

    def __post_init__(self):
        modes = self.unpack_to_dest_mode
        pairs = sorted((modes.items() if isinstance(modes, dict) else modes))
        for cb, mode in pairs:
            if not (isinstance(cb, int) and 0 <= cb < _NUM_CBS) or mode not in UNPACK_TO_DEST_MODES:
                raise ValueError(f"unpack_to_dest_mode[{cb!r}] = {mode!r}: CB indices are 0-{_NUM_CBS - 1} and modes one of "
                                 f"{', '.join(UNPACK_TO_DEST_MODES)}")
        object.__setattr__(self, "unpack_to_dest_mode", tuple((cb, m) for cb, m in pairs if m != "Default"))

    def unpacks_to_dest(self, cb: int) -> bool:
        """Whether CB ``cb`` is unpacked straight to DST as float32 (``UnpackToDestFp32``)."""
        return any(index == cb for index, _ in self.unpack_to_dest_mode)

    @property
    def thread(self) -> str:
        return "compute"

    @property
    def processor(self) -> str:
        return "COMPUTE"


KernelConfig = DataMovementConfig | ComputeConfig


@dataclass
class Kernel:
    id: int
    name: str
    function: func.FuncOp
    cores: CoreRangeSet
    config: KernelConfig
    compile_args: list[CompileArg] = field(default_factory=list)
    defines: dict[str, str] = field(default_factory=dict)
    runtime_args: dict[CoreCoord, list[RuntimeArg]] = field(default_factory=dict)
    common_runtime_args: list[RuntimeArg] = field(default_factory=list)
    source_file: str = ""           # e.g. "reader.cpp"; shared by kernels of the same function
    defined_at: SourceLocation | None = None

    @property
    def function_name(self) -> str:
        return self.function.sym_name.data

    @property
    def is_compute(self) -> bool:
        return isinstance(self.config, ComputeConfig)

    @property
    def processor(self) -> str:
        return self.config.processor
