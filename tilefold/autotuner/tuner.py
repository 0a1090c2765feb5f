"""The autotuner: run a sweep on an engine, rank what passed, report it.

Reads: the tuned function, its configurations and options (:func:`autotune`, :class:`AutoTuner`),
the inputs set by :func:`set_autotune_inputs`, and defaults set by :func:`tuning_defaults` (the
``tilefold tune`` command sets them). Writes: a :class:`TuneResult` (and, when asked, its table on
stdout and a Chrome / Perfetto trace of the best configuration).

Ranking: configurations that ran and passed the numerical check, by modeled device time, ties by
their order in ``configs``; then the rejected ones, in order, each with its reason. The modeled
time is tilefold's cost model, so ``warmup`` and ``rep`` (TileLang's measurement repeats) are
accepted and change nothing: every run of a configuration gives the same time.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tilefold.autotuner import engines
from tilefold.autotuner.cache import default_directory
from tilefold.autotuner.candidates import TileLangCandidate
from tilefold.autotuner.configs import describe, expand
from tilefold.autotuner.sweep import Check, ConfigResult, Sweep, host_arrays
from tilefold.errors import KernelError
from tilefold.caller import user_location

_DEFAULTS = {"engine": "process", "workers": None, "address": None, "cache_dir": None, "cache": True,
             "trace": None, "report": False}
_INPUTS: list | None = None
RESULTS: list = []          # every sweep this process ran, in order (``tilefold tune`` reads it)


@contextlib.contextmanager
def tuning_defaults(**changes):
    """Defaults for every sweep inside the ``with`` block: ``engine``, ``workers``, ``address``
    (Ray), ``cache_dir``, ``cache`` (False: no cache), ``trace`` (the best configuration's trace)
    and ``report`` (print each sweep's table)."""
    unknown = set(changes) - set(_DEFAULTS)
    if unknown:
        raise TypeError(f"unknown tuning defaults: {', '.join(sorted(unknown))}")
    saved = dict(_DEFAULTS)
    _DEFAULTS.update({k: v for k, v in changes.items() if v is not None})
    try:
        yield
    finally:
        _DEFAULTS.clear()
        _DEFAULTS.update(saved)


@contextlib.contextmanager
def set_autotune_inputs(*tensors):
    """Tune on these inputs (TileLang: arrays for the kernel's parameters, with or without its
    outputs; TT-Lang: the operation's device tensors) instead of seeded random ones."""
    global _INPUTS
    saved = _INPUTS
    _INPUTS = list(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else list(tensors)
    try:
        yield
    finally:
        _INPUTS = saved


@dataclass
class TuneResult:
    """A sweep's ranked rows; ``config``, ``latency`` (ms) and ``kernel`` are the best one's."""

    name: str
    rows: list[ConfigResult]
    simulated: int
    elapsed: float
    kernel: object = None
    trace: str | None = None
    engine: str = "serial"
    ref_latency: float | None = None
    extra: dict = field(default_factory=dict)

    @property
    def best(self) -> ConfigResult | None:
        return self.rows[0] if self.rows and self.rows[0].ok else None

    @property
    def config(self) -> dict | None:
        return dict(self.best.config) if self.best else None

    @property
    def latency(self) -> float | None:
        return self.best.seconds * 1e3 if self.best else None

    @property
    def passed(self) -> list[ConfigResult]:
        return [r for r in self.rows if r.ok]

    @property
    def rejected(self) -> list[ConfigResult]:
        return [r for r in self.rows if not r.ok]

    def table(self) -> str:
        """The ranked table, one configuration per line."""
        width = max([len("configuration")] + [len(describe(r.config)) for r in self.rows])
        cached = sum(r.cached for r in self.rows)
        lines = [f"autotune {self.name}: {len(self.rows)} configurations, {len(self.passed)} passed, "
                 f"{len(self.rejected)} rejected; {self.simulated} simulated, {cached} from the cache; "
                 f"{self.elapsed:.1f} s ({self.engine})",
                 f"{'rank':>4}  {'configuration':<{width}}  {'modeled us':>10}  {'FPU %':>6}  {'DRAM %':>6}  "
                 f"{'L1 KiB':>7}  check"]
        rank = 0
        for r in self.rows:
            if r.ok:
                rank += 1
                lines.append(f"{rank:>4}  {describe(r.config):<{width}}  {r.seconds * 1e6:>10.1f}  "
                             f"{r.fpu_fraction * 100:>6.1f}  {r.dram_fraction * 100:>6.1f}  "
                             f"{r.l1_bytes / 1024:>7.1f}  {r.check}")
            else:
                timing = f"{r.seconds * 1e6:>10.1f}" if r.seconds is not None else f"{'-':>10}"
                l1 = f"{r.l1_bytes / 1024:>7.1f}" if r.l1_bytes is not None else f"{'-':>7}"
                lines.append(f"{'-':>4}  {describe(r.config):<{width}}  {timing}  {'':>6}  {'':>6}  {l1}  "
                             f"rejected ({r.stage}): {r.reason}")
        if self.trace:
            lines.append(f"trace of the best configuration: {self.trace}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"name": self.name, "simulated": self.simulated, "elapsed": self.elapsed,
                "rows": [r.to_record() | {"cached": r.cached, "simulated": r.simulated} for r in self.rows]}


def rank(results: list[ConfigResult]) -> list[ConfigResult]:
    passed = sorted((r for r in results if r.ok), key=lambda r: (r.seconds, r.index))
    rejected = sorted((r for r in results if not r.ok), key=lambda r: r.index)
    return passed + rejected


class AutoTuner:
    """TileLang's programmatic autotuner: ``AutoTuner.from_kernel(kernel=fn, configs=[...])``,
    ``.set_compile_args(...)``, ``.set_profile_args(ref_prog=...)``, ``.run()``."""

    def __init__(self, fn, configs, *, args: tuple = (), kwargs: dict | None = None, name: str | None = None,
                 location=None):
        self.fn = fn
        self.configs = configs
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})
        self.name = name or getattr(fn, "__name__", "kernel")
        self.location = location or user_location()
        self.compile_args: dict = {}
        self.profile_args: dict = {"ref_prog": None, "rtol": 1e-2, "atol": 1e-2, "max_mismatched_ratio": 0.0,
                                   "skip_check": False}

    @classmethod
    def from_kernel(cls, kernel, configs):
        return cls(kernel, configs)

    def set_compile_args(self, out_idx=None, target=None, execution_backend=None, target_host=None, verbose=None,
                         pass_configs=None, **_ignored) -> "AutoTuner":
        """TileLang's compile options: ``out_idx`` and ``pass_configs`` go to :func:`tilefold.jit`
        for functions that return a bare ``@T.prim_func``; the target is the simulated device."""
        self.compile_args = {"out_idx": out_idx, "pass_configs": pass_configs}
        return self

    def set_profile_args(self, supply_type=None, ref_prog=None, supply_prog=None, rtol=1e-2, atol=1e-2,
                         max_mismatched_ratio=0.0, skip_check=False, manual_check_prog=None,
                         cache_input_tensors=None, **_ignored) -> "AutoTuner":
        self.profile_args = {"ref_prog": ref_prog, "rtol": rtol, "atol": atol,
                             "max_mismatched_ratio": max_mismatched_ratio, "skip_check": skip_check,
                             "supply_prog": supply_prog}
        return self

    def run(self, warmup: int = 25, rep: int = 100, timeout: float | None = None, *, engine: str | None = None,
            workers: int | None = None, address: str | None = None, cache: bool | None = None,
            cache_dir=None, trace=None, report: bool | None = None) -> TuneResult:
        """Evaluate every configuration and rank them (see the module docstring)."""
        engine = engine or ("ray" if address else _DEFAULTS["engine"])
        workers = workers or _DEFAULTS["workers"]
        address = address or _DEFAULTS["address"]
        use_cache = _DEFAULTS["cache"] if cache is None else cache
        cache_dir = cache_dir or _DEFAULTS["cache_dir"] or default_directory()
        trace = trace or _DEFAULTS["trace"]
        report = _DEFAULTS["report"] if report is None else report

        configs = expand(self.configs, self.args, self.kwargs, self.location)
        sweep = Sweep(self._target(), self.args, self.kwargs, configs, [], cache_dir=str(cache_dir) if use_cache
                      else None, timeout=timeout, location=self.location)
        sweep.inputs = self._inputs(sweep)
        sweep.check = self._check(sweep)

        from tilefold.progress import Progress

        results: list[ConfigResult] = []
        start = time.perf_counter()
        with Progress(f"tuning {self.name}", len(configs), "config", read=lambda: len(results)):
            engines.run(engine, sweep, list(range(len(configs))), results.append, workers, address)
        rows = rank(results)
        result = TuneResult(self._title(), rows, sum(r.simulated for r in results), time.perf_counter() - start,
                            engine=engine if engine == "ray" or (workers or engines.default_workers()) > 1
                            else "serial")
        if result.best is not None:
            result.kernel = sweep.candidate(result.best.index).result_object
            if trace:
                sweep.trace_best(result.best.index, trace)
                result.trace = str(trace)
        RESULTS.append(result)
        if report:
            print(result.table(), flush=True)
        return result

    # -- what the sweep runs on --------------------------------------------------------------------------

    def _title(self) -> str:
        shown = [repr(a) for a in self.args if isinstance(a, (int, float, str, bool))]
        shown += [f"{k}={v!r}" for k, v in self.kwargs.items() if isinstance(v, (int, float, str, bool))]
        return f"{self.name}({', '.join(shown)})"

    def _target(self):
        fn = self.fn
        from tilefold.frontend.tilelang.eager import EagerFunction
        from tilefold.frontend.ttl.operation import Operation

        if isinstance(fn, EagerFunction):     # an eager kernel called with its arrays: compile each configuration
            def compiled(*args, **kwargs):
                return fn.compile(*args, **kwargs)

            compiled.__name__ = fn.__name__
            return compiled
        if isinstance(fn, Operation) or not self.compile_args.get("out_idx") and not self.compile_args.get(
                "pass_configs"):
            return fn
        from tilefold.run.jit import jit

        options = self.compile_args

        def jitted(*args, **kwargs):
            return jit(fn(*args, **kwargs), out_idx=options.get("out_idx"), pass_configs=options.get("pass_configs"))

        jitted.__name__ = getattr(fn, "__name__", "kernel")
        return jitted

    def _first_candidate(self, sweep: Sweep):
        """The first configuration that builds (built once; the others are rejected later, with their reason)."""
        if not hasattr(self, "_first"):
            self._first = None
            for i in range(len(sweep.configs)):
                try:
                    self._first = sweep.candidate(i)
                    break
                except Exception:
                    continue
        return self._first

    def _inputs(self, sweep: Sweep) -> list:
        from tilefold.frontend.ttl.operation import Operation

        if isinstance(self.fn, Operation):
            given = list(self.args)
            sweep.args = ()
            return given
        if _INPUTS is not None:
            return list(_INPUTS)
        candidate = self._first_candidate(sweep)
        if candidate is None:
            return []
        if not isinstance(candidate, TileLangCandidate):
            raise KernelError(f"tuning {self.name} needs the operation's tensors: call it inside "
                              "`with tilefold.autotuner.set_autotune_inputs(a, b, out):`", self.location)
        from tilefold.run.profiler import Profiler

        supply = self.profile_args.get("supply_prog")
        kernel = candidate.kernel
        if supply is not None:
            params = [p for i, p in enumerate(kernel.prim.params) if i not in kernel.outputs()]
            return list(supply(params))
        return Profiler(kernel).inputs(seed=0)

    def _check(self, sweep: Sweep) -> Check:
        p = self.profile_args
        ref_prog = p.get("ref_prog")
        if ref_prog is None or p.get("skip_check"):
            return Check(None)
        from tilefold.frontend.ttl.operation import Operation

        arrays = host_arrays(sweep.inputs)
        if not isinstance(self.fn, Operation):
            candidate = self._first_candidate(sweep)
            if isinstance(candidate, TileLangCandidate):
                kernel = candidate.kernel
                outs = kernel.outputs()
                if len(arrays) == len(kernel.prim.params):
                    arrays = [a for i, a in enumerate(arrays) if i not in outs]
        want = ref_prog(*arrays)
        want = list(want) if isinstance(want, (tuple, list)) else [want]
        want = [w.detach().cpu().float().numpy() if type(w).__module__.startswith("torch") else np.asarray(w)
                for w in want]
        return Check(want, p["rtol"], p["atol"], p["max_mismatched_ratio"])


class AutoTunedFunction:
    """``@tilefold.autotune(configs=...)`` over a kernel factory or a TT-Lang operation: each
    distinct call tunes once and returns the best kernel (an operation: runs the best one on the
    call's tensors)."""

    def __init__(self, fn, configs, options: dict, location):
        self.fn = fn
        self.configs = configs
        self.options = options
        self.location = location
        self.results: dict = {}
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def tuner(self, *args, **kwargs) -> AutoTuner:
        tuner = AutoTuner(self.fn, self.configs, args=args, kwargs=kwargs, name=self.__name__,
                          location=self.location)
        o = self.options
        tuner.set_compile_args(out_idx=o.get("out_idx"))
        tuner.set_profile_args(ref_prog=o.get("ref_prog"), supply_prog=o.get("supply_prog"), rtol=o["rtol"],
                               atol=o["atol"], max_mismatched_ratio=o["max_mismatched_ratio"],
                               skip_check=o["skip_check"])
        return tuner

    def tune(self, *args, **kwargs) -> TuneResult:
        from tilefold.frontend.tilelang.eager import freeze

        key = freeze((tuple(a if _is_constant(a) else id(a) for a in args),
                      tuple(sorted((k, v if _is_constant(v) else id(v)) for k, v in kwargs.items()))))
        if key not in self.results:
            o = self.options
            self.results[key] = self.tuner(*args, **kwargs).run(
                o["warmup"], o["rep"], o["timeout"], engine=o["engine"], workers=o["workers"], address=o["address"],
                cache=o["cache"], cache_dir=o["cache_dir"], trace=o["trace"], report=o["report"])
        return self.results[key]

    def given_by_caller(self, args, kwargs) -> bool:
        """Whether the call sets every tuned parameter itself: then it is compiled as given, untuned."""
        import inspect

        try:
            keys = {k for config in expand(self.configs, args, kwargs, self.location) for k in config}
        except Exception:
            return False
        target = self.fn
        for attr in ("fn", "factory"):
            target = getattr(target, attr, target)
        try:
            bound = inspect.signature(target).bind_partial(*args, **kwargs).arguments
        except (TypeError, ValueError):
            bound = kwargs
        return bool(keys) and all(k in bound or k in kwargs for k in keys)

    def compile(self, *args, **kwargs):
        """TileLang's ``autotuned.compile(...)``: the kernel for these arguments, to call later — as
        given when they set every tuned parameter, else with the best configuration's."""
        from tilefold.frontend.ttl.operation import Operation

        if isinstance(self.fn, Operation):
            raise KernelError(f"{self.__name__} is a TT-Lang operation: call it with its tensors (it has no "
                              "compile())", self.location)
        if not self.given_by_caller(args, kwargs):
            result = self.tune(*args, **kwargs)
            if result.best is None:
                raise KernelError(f"no configuration of {self.__name__} passed ({len(result.rows)} tried)",
                                  self.location)
            kwargs = {**kwargs, **result.config}
        compile_ = getattr(self.fn, "compile", None)
        return compile_(*args, **kwargs) if compile_ is not None else self.fn(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        from tilefold.frontend.ttl.operation import Operation

        if not isinstance(self.fn, Operation) and self.given_by_caller(args, kwargs):
            return self.fn(*args, **kwargs)
        result = self.tune(*args, **kwargs)
        if result.best is None:
            reasons = "; ".join(f"{describe(r.config)}: {r.stage}: {r.reason}" for r in result.rows[:3])
            raise KernelError(f"no configuration of {self.__name__} passed ({len(result.rows)} tried; {reasons})",
                              self.location)
        from tilefold.frontend.ttl.operation import Operation

        if isinstance(self.fn, Operation):
            self.fn(*args, **{**kwargs, **result.config})
            return None
        from tilefold.frontend.tilelang.eager import EagerFunction

        if isinstance(self.fn, EagerFunction):   # eager: the best kernel runs on the call's arrays
            return self.fn(*args, **{**kwargs, **result.config})
        best = result.kernel
        for name, value in (("config", result.config), ("latency", result.latency), ("tune_result", result)):
            try:
                setattr(best, name, value)
            except AttributeError:
                pass
        return best

    @property
    def last_result(self) -> TuneResult | None:
        return next(reversed(self.results.values()), None)


def _is_constant(value) -> bool:
    return isinstance(value, (int, float, str, bool, type(None))) or (
        isinstance(value, tuple) and all(_is_constant(v) for v in value))


def autotune(fn=None, *, configs, warmup: int = 25, rep: int = 100, timeout: float | None = None, ref_prog=None,
             supply_prog=None, supply_type=None, rtol: float = 1e-2, atol: float = 1e-2,
             max_mismatched_ratio: float = 0.0, skip_check: bool = False, out_idx=None, engine: str | None = None,
             workers: int | None = None, ray_address: str | None = None, cache: bool | None = None,
             cache_dir=None, trace=None, report: bool | None = None, **_ignored):
    """``@tilefold.autotune(configs=...)``: tune a TileLang kernel factory (stacked on
    ``@tilefold.jit``) or a TT-Lang operation over its Python constants on the simulated device.

    ``configs``: a list of keyword-argument dicts, a dict of lists, or a function of the call's
    arguments. ``ref_prog``: the numpy (or torch) reference each configuration's outputs must
    match (``rtol`` / ``atol``); without one the check is skipped. ``engine``: ``"process"``
    (default, one worker per core), ``"serial"`` or ``"ray"`` (``ray_address``). Results are cached
    on disk (``cache_dir``; ``cache=False`` turns it off); ``trace`` writes a Perfetto trace of the
    best configuration; ``report`` prints the ranked table."""
    location = user_location()
    options = {"warmup": warmup, "rep": rep, "timeout": timeout, "ref_prog": ref_prog, "supply_prog": supply_prog,
               "rtol": rtol, "atol": atol, "max_mismatched_ratio": max_mismatched_ratio, "skip_check": skip_check,
               "out_idx": out_idx, "engine": engine, "workers": workers, "address": ray_address, "cache": cache,
               "cache_dir": cache_dir, "trace": trace, "report": report}

    def decorate(function):
        return AutoTunedFunction(function, configs, options, location)

    return decorate if fn is None else decorate(fn)


__all__ = ["AutoTuner", "AutoTunedFunction", "TuneResult", "autotune", "rank", "set_autotune_inputs",
           "tuning_defaults"]
