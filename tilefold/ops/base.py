"""What a program factory produces, how results are compared, and the registry of factories.

Reads: command-line options of a factory. Writes: an :class:`OpInstance` — a Program, the
host inputs to run it with, the numpy reference of its outputs and the tolerance to compare
with. ``tilefold compile OP`` and ``tilefold run OP`` and the tests all go through this.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Callable

import ml_dtypes
import numpy as np

from tilefold.errors import LayoutError
from tilefold.program import Program


@dataclass(frozen=True)
class Tolerance:
    """How outputs are compared with the reference: exact bytes, ulps of a format, or
    relative / absolute error with a minimum Pearson correlation (PCC)."""

    exact: bool = False
    max_ulp: float | None = None          # ulps of bfloat16 (when set)
    rtol: float = 0.0
    atol: float = 0.0
    min_pcc: float | None = None


EXACT = Tolerance(exact=True)


@dataclass
class Comparison:
    name: str
    passed: bool
    max_abs_error: float
    max_ulp: float
    pcc: float
    detail: str = ""

    def __str__(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        return (f"{self.name}: {verdict} (max abs error {self.max_abs_error:.3g}, max {self.max_ulp:g} bf16 ulp, "
                f"PCC {self.pcc:.6f}){' — ' + self.detail if self.detail else ''}")


CHECK_CHUNK = 1 << 22      # values compared per step (bounded temporaries, a progress bar that moves)


def bf16_ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in bfloat16 units in the last place between two arrays of finite values (each
    rounded to bfloat16, nearest even, first)."""
    def ordered(x):
        u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
        bits = ((u + ((u >> 16) & 1) + 0x7FFF) >> 16).astype(np.int32)
        return np.where(bits & 0x8000, 0x8000 - (bits & 0x7FFF), bits + 0x8000)
    return np.abs(ordered(a) - ordered(b))


def pcc(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation of two arrays (1.0 when they are equal or both constant and close)."""
    return _Stats.of(a, b).pcc()


@dataclass
class _Stats:
    """What a comparison accumulates over chunks of finite values."""

    count: int = 0
    sum_a: float = 0.0
    sum_b: float = 0.0
    max_abs: float = 0.0
    max_ulp: float = 0.0
    close: bool = True        # numpy's allclose of the values
    within: bool = True       # every error within the tolerance's atol + rtol * |expected|
    cross: list = field(default_factory=lambda: [0.0, 0.0, 0.0])    # centred sums aa, bb, ab

    def add(self, a: np.ndarray, b: np.ndarray, tol: "Tolerance | None" = None) -> None:
        if not a.size:
            return
        err = np.abs(a - b)
        self.count += a.size
        self.sum_a += float(a.sum(dtype=np.float64))
        self.sum_b += float(b.sum(dtype=np.float64))
        self.max_abs = max(self.max_abs, float(err.max()))
        self.max_ulp = max(self.max_ulp, float(bf16_ulp_distance(a, b).max()))
        self.close &= bool(np.all(err <= 1e-8 + 1e-5 * np.abs(b)))
        if tol is not None and (tol.rtol or tol.atol):
            self.within &= bool(np.all(err <= tol.atol + tol.rtol * np.abs(b)))

    def add_centred(self, a: np.ndarray, b: np.ndarray) -> None:
        if not a.size:
            return
        da = a.astype(np.float64) - self.sum_a / self.count
        db = b.astype(np.float64) - self.sum_b / self.count
        self.cross[0] += float(da @ da)
        self.cross[1] += float(db @ db)
        self.cross[2] += float(da @ db)

    def pcc(self) -> float:
        saa, sbb, sab = self.cross
        if self.count == 0 or self.max_abs == 0:
            return 1.0
        if saa == 0 or sbb == 0:
            return 1.0 if self.close else 0.0
        return float(np.clip(sab / np.sqrt(saa * sbb), -1.0, 1.0))

    @classmethod
    def of(cls, a, b) -> "_Stats":
        a = np.asarray(a, dtype=np.float32).ravel()
        b = np.asarray(b, dtype=np.float32).ravel()
        stats = cls()
        stats.add(a, b)
        stats.add_centred(a, b)
        return stats


def compare(name: str, actual: np.ndarray, expected: np.ndarray, tol: Tolerance) -> Comparison:
    """Compare ``actual`` with ``expected`` (in chunks of :data:`CHECK_CHUNK` values, each widened
    to float32 on its own, with a progress bar when that takes long): bit-identical arrays need no
    measuring. Neither array is copied whole, so bfloat16 outputs are checked in their own bytes."""
    from tilefold.progress import Progress

    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.shape != expected.shape:
        return Comparison(name, False, float("inf"), float("inf"), 0.0,
                          f"shape {actual.shape} differs from the reference's {expected.shape}")
    a, e = actual.reshape(-1), expected.reshape(-1)
    chunks = [slice(i, i + CHECK_CHUNK) for i in range(0, a.size, CHECK_CHUNK)]

    def widened(part: slice) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(a[part], dtype=np.float32), np.asarray(e[part], dtype=np.float32)

    if all(np.array_equal(ac.view(np.uint32), ec.view(np.uint32)) for ac, ec in map(widened, chunks)):
        return Comparison(name, True, 0.0, 0.0, 1.0)
    stats, same_nonfinite = _Stats(), True
    finite = []
    with Progress(f"checking {name}", 2 * a.size, "values") as bar:
        for part in chunks:
            ac, ec = widened(part)
            ok = np.isfinite(ec) & np.isfinite(ac)
            inf = np.isinf(ec)
            same_nonfinite &= (np.array_equal(np.isfinite(ac), np.isfinite(ec))
                               and np.array_equal(np.isnan(ac), np.isnan(ec)) and np.array_equal(ac[inf], ec[inf]))
            finite.append(None if ok.all() else ok)
            stats.add(ac if finite[-1] is None else ac[ok], ec if finite[-1] is None else ec[ok], tol)
            bar.done += ac.size
        for part, ok in zip(chunks, finite):
            ac, ec = widened(part)
            stats.add_centred(ac if ok is None else ac[ok], ec if ok is None else ec[ok])
            bar.done += ac.size
    corr = stats.pcc()
    if tol.exact:
        return Comparison(name, False, stats.max_abs, stats.max_ulp, corr, "outputs are not bit-identical")
    ok = same_nonfinite
    if tol.max_ulp is not None:
        ok &= stats.max_ulp <= tol.max_ulp
    if tol.rtol or tol.atol:
        ok &= stats.within
    if tol.min_pcc is not None:
        ok &= corr >= tol.min_pcc
    return Comparison(name, bool(ok), stats.max_abs, stats.max_ulp, corr)


@dataclass
class OpInstance:
    """A built program with the data to run it and the reference to check it."""

    name: str
    program: Program
    inputs: dict[str, np.ndarray]
    reference: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]
    tolerance: dict[str, Tolerance] = field(default_factory=dict)
    summary: list[str] = field(default_factory=list)   # e.g. the work split, printed by the CLI

    def expected(self) -> dict[str, np.ndarray]:
        return self.reference(self.inputs)

    def check(self, outputs: dict[str, np.ndarray]) -> list[Comparison]:
        """Each output against the reference; a simulator's bfloat16 outputs are compared in their
        stored values (``outputs.native``), not widened to float32 first."""
        expected = self.expected()
        native = getattr(outputs, "native", None)
        return [compare(name, native(name) if native else outputs[name], expected[name],
                        self.tolerance.get(name, EXACT)) for name in expected]


@dataclass(frozen=True)
class OpFactory:
    """A named program factory the command line can build."""

    name: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    build: Callable[[argparse.Namespace], OpInstance]


REGISTRY: dict[str, OpFactory] = {}


def register(factory: OpFactory) -> OpFactory:
    REGISTRY[factory.name] = factory
    return factory


def seed_value(text: str) -> int:
    """A ``--seed`` option: a non-negative integer (argparse reports anything else)."""
    import argparse

    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if seed < 0:
        raise argparse.ArgumentTypeError(f"{seed} is negative; seeds are 0 or more")
    return seed


def parse_shape(text: str) -> tuple[int, ...]:
    parts = str(text).replace("x", ",").split(",")
    if any(not p.strip() for p in parts):
        raise LayoutError(f"--shape {text!r} has an empty size; write sizes separated by single commas, "
                          "e.g. 1,1,256,512")
    try:
        shape = tuple(int(v) for v in parts)
    except ValueError:
        raise LayoutError(f"--shape {text!r} is not a comma-separated list of sizes, e.g. 1,1,256,512") from None
    if not shape or any(s <= 0 for s in shape):
        raise LayoutError(f"--shape {text!r} needs positive sizes")
    return shape


def random_input(shape, dtype, seed: int = 0, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    """Random host data, already representable in ``dtype`` for bfloat16 (so the reference sees
    exactly what the device gets)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(low, high, size=shape).astype(np.float32)
    from tilefold.layout.formats import DataFormat, data_format

    fmt = data_format(dtype)
    if fmt is DataFormat.Float16_b:
        x = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    return x


def host_data(instance: OpInstance):
    """Input bytes and golden bytes (device page format) for the C++ host program of ``instance``."""
    from tilefold.codegen.cpp import Golden, HostData
    from tilefold.layout.host import to_device_pages

    program = instance.program
    inputs = {}
    for name, array in instance.inputs.items():
        buf = program.buffer(name)
        inputs[name] = to_device_pages(array, buf.data_format, buf.layout, buf.tile)
    outputs = {}
    for name, array in instance.expected().items():
        buf = program.buffer(name)
        tol = instance.tolerance.get(name, EXACT)
        golden = to_device_pages(array, buf.data_format, buf.layout, buf.tile)
        if tol.exact:
            outputs[name] = Golden(golden, rtol=0.0, atol=0.0, min_pcc=1.0)
        else:
            rtol = tol.rtol or (0.0079 * (tol.max_ulp or 1) if tol.max_ulp is not None else 0.01)
            outputs[name] = Golden(golden, rtol=rtol, atol=tol.atol or 1e-6, min_pcc=tol.min_pcc or 0.999)
    return HostData(inputs, outputs)
