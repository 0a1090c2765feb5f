"""``tilefold run OP|SCRIPT.py``: compile, simulate, check against numpy, report the estimate.

Reads: an op name and its options, or a kernel script. Writes: the correctness of every
output against the numpy reference, the estimated device time, cores used, DRAM traffic and
the achieved fraction of DRAM bandwidth or FPU peak; with ``--trace``, a Chrome trace.
Exits 1 when an output does not match.
"""

from __future__ import annotations

import argparse
import time

from tilefold.cli.compile_cmd import op_namespace
from tilefold.cli.targets import ARCH_HELP, add_numerics_option, is_script, positive_int, script_front_end
from tilefold.cli.user_code import check_output_file, script_environment


def add_parser(sub, help: str) -> None:
    p = sub.add_parser("run", help=help,
                       description="Compile and run on the simulated device, compare with numpy, report the "
                                   "cost model's estimate.")
    p.add_argument("target", help="an op name or a kernel script (.py)")
    p.add_argument("--arch", default=None, help=ARCH_HELP)
    p.add_argument("--trace", default=None, metavar="OUT.json", help="write a Chrome / Perfetto trace")
    p.add_argument("--max-cycles", type=positive_int, default=None, metavar="N",
                   help="stop a kernel thread past N simulated cycles (the watchdog; default 2**36)")
    add_numerics_option(p)
    p.add_argument("op_args", nargs=argparse.REMAINDER, help="options of the op (see tilefold run OP --help), or "
                                                                "the script's own arguments (its sys.argv[1:])")
    p.set_defaults(handler=run)


def _late_options() -> argparse.ArgumentParser:
    late = argparse.ArgumentParser(prog="tilefold run", add_help=False, allow_abbrev=False)
    late.add_argument("--arch", default=None)
    late.add_argument("--trace", default=None)
    late.add_argument("--max-cycles", type=positive_int, default=None)
    late.add_argument("--numerics", choices=("faithful", "fast"), default=None)
    return late


def run(args) -> int:
    from tilefold.sim import numerics_mode, watchdog

    if is_script(args.target):
        # tilefold's own options after the script; the rest are the script's (``--is_causal``, ``--m 256``)
        late, script_args = _late_options().parse_known_args(args.op_args)
        for key, value in vars(late).items():
            if value is not None:
                setattr(args, key, value)
        if args.trace:
            check_output_file(args.trace, "--trace")
        front_end = script_front_end(args.target)
        with script_environment(args.target, script_args), watchdog.limit(args.max_cycles), \
            numerics_mode.chosen(args.numerics):
            return front_end.run_script(args.target, args.arch, args.trace)
    from tilefold.sim import Device

    factory, op_args = op_namespace(args.target, args, "run", _late_options())
    if args.trace:
        check_output_file(args.trace, "--trace")
    instance = factory.build(op_args)
    for line in instance.summary:
        print(line)
    start = time.perf_counter()
    result = Device(instance.program.arch, numerics=args.numerics).run(instance.program, instance.inputs, trace=args.trace,
                                               max_cycles=args.max_cycles)
    wall = time.perf_counter() - start
    comparisons = instance.check(result.outputs)
    for c in comparisons:
        print(c)
    print(result.perf.summary())
    numerics = " with fast numerics (float32 accumulation)" if result.numerics == "fast" else ""
    print(f"simulated{numerics} in {wall:.2f} s of host time")
    if args.trace:
        print(f"trace written to {args.trace} (open it in https://ui.perfetto.dev or chrome://tracing)")
    return 0 if all(c.passed for c in comparisons) else 1
