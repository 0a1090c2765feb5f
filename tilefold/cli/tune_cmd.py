"""``tilefold tune SCRIPT.py``: run a script's autotuned kernels and print each ranked table.

Reads: a TileLang or TT-Lang script whose kernels are decorated with ``@tilefold.autotune`` (or
that runs an :class:`~tilefold.autotuner.AutoTuner`). Writes: for every sweep the script runs, the
ranked table (configuration, modeled time, FPU and DRAM utilisation, L1 use, the numerical check
or why the configuration was rejected); with ``--trace``, a Perfetto trace of the best
configuration; with ``--json``, every sweep's rows.
"""

from __future__ import annotations

import json
from pathlib import Path

from tilefold.cli.targets import ARCH_HELP, script_front_end
from tilefold.errors import TilefoldError


def _workers(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of workers") from None
    if value < 1:
        raise argparse.ArgumentTypeError("the number of workers is at least 1")
    return value


def add_parser(sub, help: str) -> None:
    p = sub.add_parser("tune", help=help, description=help)
    p.add_argument("script", help="the script (.py) that calls autotuned kernels")
    p.add_argument("--arch", default=None, help=ARCH_HELP)
    p.add_argument("--engine", choices=("process", "serial", "ray"), default=None,
                   help="where configurations run: a local process pool (default), this process, or Ray")
    p.add_argument("-j", "--workers", type=_workers, default=None, help="process-pool workers (default: one per core)")
    p.add_argument("--ray", default=None, metavar="ADDRESS",
                   help="run the sweep on the Ray cluster at ADDRESS ('auto', 'ray://host:10001'; needs tilefold[ray])")
    p.add_argument("--cache-dir", default=None, metavar="DIR", help="where results are cached "
                   "(default $TILEFOLD_CACHE_DIR/autotune or ~/.cache/tilefold/autotune)")
    p.add_argument("--no-cache", action="store_true", help="simulate every configuration, store nothing")
    p.add_argument("--trace", default=None, metavar="OUT.json", help="write a Perfetto trace of the best configuration")
    p.add_argument("--json", default=None, metavar="OUT.json", help="write every sweep's rows as JSON")
    p.set_defaults(handler=run)


def _writable(path: str | None, what: str) -> None:
    if path is None:
        return
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        raise TilefoldError(f"cannot write the {what} {path}: folder {parent} does not exist")


def run(args) -> int:
    from tilefold.autotuner import tuner

    _writable(args.trace, "trace")
    _writable(args.json, "JSON file")
    engine = "ray" if args.ray else args.engine
    front_end = script_front_end(args.script)
    before = len(tuner.RESULTS)
    with tuner.tuning_defaults(engine=engine, workers=args.workers, address=args.ray, cache_dir=args.cache_dir,
                               cache=False if args.no_cache else None, trace=args.trace, report=True):
        status = front_end.run_script(args.script, args.arch, None)
    sweeps = tuner.RESULTS[before:]
    if not sweeps and status == 0:
        raise TilefoldError(f"{args.script} ran no autotuned kernel; decorate a kernel factory with "
                            "@tilefold.autotune(configs=...) and call it")
    if args.json:
        Path(args.json).write_text(json.dumps([s.to_dict() for s in sweeps], indent=1))
    return status
