"""One sweep: every configuration of one tuned call, and how a single configuration is judged.

Reads: the tuned function and the call's arguments, the configurations (:mod:`.configs`), the
inputs and reference outputs, the check tolerances and the result cache (:mod:`.cache`).
Writes: one :class:`ConfigResult` per configuration (and cache entries).

A configuration goes through cheap checks before it is simulated: it must build (the tuned
function accepts it and returns a kernel), lower (the pipeline accepts it) and fit in L1 (the
allocator places every circular buffer and L1 buffer). Then the cache is asked by a key of the
lowered program; only a miss is simulated. A run that deadlocks, trips the simulator's watchdog
or exceeds the wall-clock ``timeout`` is a hang; a run whose outputs differ from the reference
fails the check. Each of these is a result with its one-line reason, never an exception: a sweep
always returns a row per configuration.

Evaluating is deterministic — the inputs are fixed before the sweep, the simulator's timing is a
model — so the serial, process-pool and Ray engines (:mod:`.engines`) give the same rows.
"""

from __future__ import annotations

import signal
import threading
from dataclasses import asdict, dataclass, field

from tilefold.autotuner import cache as result_cache
from tilefold.autotuner.candidates import TTLangCandidate, compare, make_candidate
from tilefold.errors import DeadlockError, L1OverflowError, TilefoldError


@dataclass
class ConfigResult:
    """What one configuration gave: its modeled time, or why it was rejected."""

    index: int
    config: dict
    status: str = "ok"                 # "ok" or "rejected"
    stage: str | None = None           # where a rejection happened: build, compile, L1, hang, simulation, check
    reason: str | None = None
    seconds: float | None = None       # modeled device time
    cycles: float | None = None
    fpu_fraction: float | None = None
    dram_fraction: float | None = None
    l1_bytes: int | None = None        # per core: circular buffers and L1 buffers
    check: str = "not run"             # "pass", "fail", "skipped" (no reference) or "not run"
    key: str | None = None
    cached: bool = False               # the result came from the cache
    simulated: bool = False            # this sweep ran the simulator for it

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_record(self) -> dict:
        record = asdict(self)
        record.pop("cached")
        record.pop("simulated")
        return record

    @classmethod
    def from_record(cls, record: dict, index: int, config: dict) -> "ConfigResult":
        fields = {k: v for k, v in record.items() if k in cls.__dataclass_fields__}
        fields.update(index=index, config=config, cached=True, simulated=False)
        return cls(**fields)


@dataclass
class Check:
    """The numerical check: outputs against ``reference`` with numpy's ``isclose``."""

    reference: list | None = None
    rtol: float = 1e-2
    atol: float = 1e-2
    max_mismatched_ratio: float = 0.0

    def digest(self) -> str:
        if self.reference is None:
            return "no check"
        return f"{self.rtol}:{self.atol}:{self.max_mismatched_ratio}:{result_cache.array_digest(self.reference)}"


class SweepTimeout(BaseException):
    """Raised by the wall-clock deadline; a BaseException so no stage records it as its own fault."""

    pass


@dataclass
class Sweep:
    """Everything a worker needs to evaluate configuration ``i`` on its own."""

    target: object                      # the tuned function, or a TT-Lang operation tuned over constants
    args: tuple
    kwargs: dict
    configs: list[dict]
    inputs: list                        # TileLang: arrays; TT-Lang: device tensors
    check: Check = field(default_factory=Check)
    cache_dir: str | None = None        # None: no cache
    timeout: float | None = None        # wall-clock seconds per configuration
    location: object = None

    def candidate(self, i: int):
        config = self.configs[i]
        from tilefold.frontend.ttl.operation import Operation

        if isinstance(self.target, Operation):
            return TTLangCandidate(self.target, {**self.kwargs, **config})
        made = self.target(*self.args, **{**self.kwargs, **config})
        return make_candidate(made, {}, self.location)

    def evaluate(self, i: int) -> ConfigResult:
        """Configuration ``i``'s result (see the module docstring); never raises for the kernel's faults."""
        result = ConfigResult(i, self.configs[i])
        try:
            with _deadline(self.timeout):
                self._evaluate(result)
        except SweepTimeout:
            _reject(result, "hang", f"no result within {self.timeout:g} s of wall-clock time")
        return result

    def _evaluate(self, result: ConfigResult) -> None:
        from tilefold.sim.allocator import allocate

        try:
            candidate = self.candidate(result.index)
        except Exception as err:  # the user's function rejected the configuration
            return _reject(result, "build", _one_line(err))
        try:
            lowered = candidate.lower(self.inputs)
        except L1OverflowError as err:
            return _reject(result, "L1", _one_line(err))
        except TilefoldError as err:
            return _reject(result, "compile", _one_line(err))
        except Exception as err:  # a compiler fault on this configuration: the sweep goes on
            return _reject(result, "compile", f"internal error: {_one_line(err)}")
        try:
            allocation = allocate(lowered.program, lowered.arch)
        except L1OverflowError as err:
            return _reject(result, "L1", _one_line(err))
        result.l1_bytes = int(allocation.l1_top - lowered.arch.l1_unreserved_base)
        store = result_cache.ResultCache(self.cache_dir) if self.cache_dir is not None else None
        result.key = result_cache.key(lowered.text, lowered.arch.name, lowered.arch.board,
                                      result_cache.array_digest(host_arrays(self.inputs)), self.check.digest())
        if store is not None:
            record = store.get(result.key)
            if record is not None:
                cached = ConfigResult.from_record(record, result.index, result.config)
                result.__dict__.update(cached.__dict__)
                return
        self._simulate(candidate, result)
        if store is not None and result.stage != "hang":
            store.put(result.key, result.to_record())

    def _simulate(self, candidate, result: ConfigResult) -> None:
        result.simulated = True
        try:
            outputs, run = candidate.run(self.inputs)
        except DeadlockError as err:
            return _reject(result, "hang", _one_line(err))
        except TilefoldError as err:
            stage = "hang" if "watchdog" in str(err).lower() else "simulation"
            return _reject(result, stage, _one_line(err))
        perf = run.perf
        result.seconds = float(perf.seconds)
        result.cycles = float(perf.cycles)
        result.fpu_fraction = float(perf.fpu_fraction)
        result.dram_fraction = float(perf.dram_bandwidth_fraction)
        if self.check.reference is None:
            result.check = "skipped"
            return
        mismatch = compare(outputs, self.check.reference, self.check.rtol, self.check.atol,
                           self.check.max_mismatched_ratio)
        if mismatch is None:
            result.check = "pass"
        else:
            result.check = "fail"
            _reject(result, "check", mismatch)

    def trace_best(self, i: int, path) -> None:
        """Run configuration ``i`` again, writing a Chrome / Perfetto trace to ``path``."""
        self.candidate(i).run(self.inputs, trace=str(path))


def host_arrays(inputs) -> list:
    """The inputs as numpy arrays (device tensors read back to the host)."""
    import numpy as np

    out = []
    for x in inputs:
        out.append(x.to_numpy() if hasattr(x, "to_numpy") else np.asarray(x))
    return out


def _reject(result: ConfigResult, stage: str, reason: str) -> None:
    result.status = "rejected"
    result.stage = stage
    result.reason = reason


def _one_line(err: Exception) -> str:
    text = str(err).strip().splitlines()
    line = text[0] if text else ""
    return line if isinstance(err, TilefoldError) else f"{type(err).__name__}: {line}".rstrip(": ")


class _deadline:
    """Raise :class:`SweepTimeout` in this thread after ``seconds`` (main thread only)."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.armed = False

    def __enter__(self):
        if self.seconds and threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
            self.armed = True
        return self

    def _fire(self, *_):
        raise SweepTimeout()

    def __exit__(self, *exc):
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
        return False


__all__ = ["Check", "ConfigResult", "Sweep"]
