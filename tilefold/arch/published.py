"""Published measurements of Tenstorrent devices that the cost model is compared with.

Reads: nothing. Writes: nothing. :data:`GEMM_N150` and :data:`GEMM_P150` hold rows of TT-Metal's
``tech_reports/GEMM_FLOPS/GEMM_FLOPS.md`` ("out of box" results, A, B and C interleaved in DRAM,
traced; N150: 8×8 grid at 1 GHz, P150: 13×10 grid at 1.35 GHz): the measured inference time and
the *device based* utilisation.
The device time of the matmul kernel follows from the report's own formula,
``utilisation = ideal cycles / actual cycles`` with ``ideal cycles = M·K·N / 32³ ·
cycles_per_tile / cores`` (cycles_per_tile 16 / 32 / 48 / 64 for LoFi / HiFi2 / HiFi3 / HiFi4;
the board's full grid of cores at its clock). The inference time is measured from the host and includes dispatch; the
device time is what a kernel cost model estimates.
"""

from __future__ import annotations

from dataclasses import dataclass

GEMM_FLOPS_SOURCE = "tenstorrent/tt-metal tech_reports/GEMM_FLOPS/GEMM_FLOPS.md, N150 out-of-box results, traced"
CYCLES_PER_TILE = {"LoFi": 16, "HiFi2": 32, "HiFi3": 48, "HiFi4": 64}


@dataclass(frozen=True)
class GemmRow:
    """One published GEMM measurement."""

    board: str
    M: int
    K: int
    N: int
    dtype: str
    math_fidelity: str
    inference_ns: float          # host-measured time per matmul
    device_utilization: float    # fraction of the grid's ideal FPU cycles
    cores: int = 64
    clock_hz: float = 1.0e9

    @property
    def ideal_cycles(self) -> float:
        return self.M * self.K * self.N / 32 ** 3 * CYCLES_PER_TILE[self.math_fidelity] / self.cores

    @property
    def device_us(self) -> float:
        """Device time of the kernel implied by the published device-based utilisation."""
        return self.ideal_cycles / self.device_utilization / self.clock_hz * 1e6

    @property
    def inference_us(self) -> float:
        return self.inference_ns / 1e3


GEMM_N150 = (
    GemmRow("n150", 1024, 1024, 1024, "bfloat16", "HiFi2", 68984.03, 0.4164),
    GemmRow("n150", 2048, 2048, 2048, "bfloat16", "HiFi2", 298922.06, 0.6674),
    GemmRow("n150", 3072, 3072, 3072, "bfloat16", "HiFi2", 886178.02, 0.5819),
    GemmRow("n150", 4096, 4096, 4096, "bfloat16", "HiFi2", 2008533.48, 0.5946),
    GemmRow("n150", 1024, 1024, 1024, "bfloat8_b", "LoFi", 40965.08, 0.3354),
    GemmRow("n150", 2048, 2048, 2048, "bfloat8_b", "LoFi", 155975.82, 0.6373),
    GemmRow("n150", 3072, 3072, 3072, "bfloat8_b", "LoFi", 438799.86, 0.6984),
    GemmRow("n150", 4096, 4096, 4096, "bfloat8_b", "LoFi", 927324.30, 0.6435),
)

# P150 rows whose sizes split evenly over the 13×10 grid in whole tiles (the report's P150 sizes are
# multiples of the grid): bfloat16 HiFi2 and bfloat8_b LoFi, traced.
GEMM_P150_SOURCE = "tenstorrent/tt-metal tech_reports/GEMM_FLOPS/GEMM_FLOPS.md, P150 out-of-box results (13x10), traced"
_P150 = dict(cores=130, clock_hz=1.35e9)
GEMM_P150 = (
    GemmRow("p150", 1280, 1664, 1664, "bfloat16", "HiFi2", 48279.76, 0.6185, **_P150),
    GemmRow("p150", 1280, 3328, 3328, "bfloat16", "HiFi2", 127110.48, 0.8107, **_P150),
    GemmRow("p150", 2560, 3328, 3328, "bfloat16", "HiFi2", 239679.81, 0.8566, **_P150),
    GemmRow("p150", 1280, 1664, 1664, "bfloat8_b", "LoFi", 31893.25, 0.4372, **_P150),
    GemmRow("p150", 1280, 3328, 3328, "bfloat8_b", "LoFi", 72801.11, 0.7122, **_P150),
    GemmRow("p150", 2560, 3328, 3328, "bfloat8_b", "LoFi", 126972.20, 0.8131, **_P150),
)

__all__ = ["GemmRow", "GEMM_N150", "GEMM_P150", "GEMM_FLOPS_SOURCE", "GEMM_P150_SOURCE", "CYCLES_PER_TILE"]
