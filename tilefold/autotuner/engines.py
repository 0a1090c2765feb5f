"""Where a sweep's configurations are evaluated: in this process, a local process pool, or Ray.

Reads: a :class:`~.sweep.Sweep` and the indices of the configurations to evaluate. Writes:
nothing; each engine calls ``on_result`` with every :class:`~.sweep.ConfigResult` as it arrives
(in completion order; the tuner sorts them).

- ``serial``: one configuration after another in this process.
- ``process`` (the default): a pool of forked worker processes, one per core. Workers inherit the
  sweep when they are forked, so the tuned function, its closures and the inputs need not be
  picklable; only configuration indices go out and plain results come back.
- ``ray``: tasks on a Ray cluster (``address``: ``"auto"``, ``"ray://host:10001"``, or None for a
  local instance started on this machine). The sweep is shipped once to the object store with
  Ray's serialiser (functions of the user's script go by value). Ray is an optional extra:
  ``pip install tilefold[ray]``.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Callable

from tilefold.errors import TilefoldError

ENGINES = ("serial", "process", "ray")

_SWEEP = None     # the sweep a forked worker evaluates


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def run(engine: str, sweep, indices: list[int], on_result: Callable, workers: int | None = None,
        address: str | None = None) -> None:
    if engine not in ENGINES:
        raise TilefoldError(f"unknown tuning engine {engine!r}; use one of {', '.join(ENGINES)}")
    if engine == "ray":
        return run_ray(sweep, indices, on_result, address)
    workers = workers or default_workers()
    if engine == "serial" or workers <= 1 or len(indices) <= 1:
        for i in indices:
            on_result(sweep.evaluate(i))
        return
    run_process_pool(sweep, indices, on_result, workers)


def _evaluate_in_worker(i: int):
    return _SWEEP.evaluate(i)


def _start_worker() -> None:
    """A worker owns one core: Ctrl-C is handled by the parent, and numpy's BLAS runs one thread,
    as do the simulator's products (a pool of workers each starting a thread per core would
    oversubscribe the cores)."""
    import signal

    from threadpoolctl import threadpool_limits

    from tilefold.sim.two_threads import keep_to_one_thread

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threadpool_limits(1)
    keep_to_one_thread()


def run_process_pool(sweep, indices: list[int], on_result: Callable, workers: int) -> None:
    global _SWEEP
    _SWEEP = sweep
    context = multiprocessing.get_context("fork")
    try:
        with ProcessPoolExecutor(max_workers=min(workers, len(indices)), mp_context=context,
                                 initializer=_start_worker) as pool:
            futures = [pool.submit(_evaluate_in_worker, i) for i in indices]
            try:
                for future in as_completed(futures):
                    on_result(future.result())
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
    finally:
        _SWEEP = None


def _evaluate_remote(sweep, i: int):
    return sweep.evaluate(i)


def _user_modules(sweep) -> set:
    """The modules of the tuned functions that a Ray worker may not be able to import (the
    user's scripts and test files; not tilefold or installed packages)."""
    import sys

    found = set()
    stack = [sweep.target]
    seen = set()
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        for attr in ("factory", "fn", "function", "__wrapped__"):
            inner = getattr(obj, attr, None)
            if inner is not None and inner is not obj:
                stack.append(inner)
        name = getattr(obj, "__module__", None)
        module = sys.modules.get(name) if name else None
        path = getattr(module, "__file__", None) or ""
        if module is not None and name != "__main__" and not name.startswith("tilefold") and \
                "site-packages" not in path and "dist-packages" not in path:
            found.add(module)
    return found


def _ship_user_code_by_value(sweep) -> None:
    from ray import cloudpickle

    for module in _user_modules(sweep):
        cloudpickle.register_pickle_by_value(module)


def run_ray(sweep, indices: list[int], on_result: Callable, address: str | None) -> None:
    try:
        import ray
    except ImportError:
        raise TilefoldError("the ray engine needs Ray: pip install 'tilefold[ray]'") from None
    if not ray.is_initialized():
        try:
            ray.init(address=address, ignore_reinit_error=True, include_dashboard=False, log_to_driver=False,
                     logging_level="ERROR")
        except Exception as err:  # Ray raises plain Exceptions for a cluster that does not answer
            raise TilefoldError(f"cannot reach the Ray cluster at {address or 'a new local instance'}: "
                                f"{str(err).splitlines()[0] if str(err) else type(err).__name__}") from None
    _ship_user_code_by_value(sweep)
    evaluate = ray.remote(_evaluate_remote)
    shipped = ray.put(sweep)
    pending = [evaluate.remote(shipped, i) for i in indices]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        for ref in done:
            on_result(ray.get(ref))


__all__ = ["ENGINES", "default_workers", "run"]
