"""``tilefold sim SCRIPT.py``: run a TT-Lang style script on the simulated device.

Reads: a script written for TT-Lang's tools. Writes: whatever the script prints. The
script gets ``ttl`` and the host tensor module the way TT-Lang's own simulator provides them.
"""

from __future__ import annotations

from tilefold.cli.targets import ARCH_HELP, add_numerics_option, positive_int, script_front_end
from tilefold.cli.user_code import check_output_file, script_environment


def add_parser(sub, help: str) -> None:
    p = sub.add_parser("sim", help=help)
    p.add_argument("script", help="the script (.py)")
    p.add_argument("script_args", nargs="*", metavar="ARG",
                   help="arguments the script gets as sys.argv[1:] (options tilefold does not have go to the "
                        "script too; put those it has, such as --arch, after --)")
    p.add_argument("--arch", default=None, help=ARCH_HELP)
    p.add_argument("--trace", default=None, metavar="OUT.json", help="write a Chrome / Perfetto trace")
    p.add_argument("--max-cycles", type=positive_int, default=None, metavar="N",
                   help="stop a kernel thread past N simulated cycles (the watchdog; default 2**36)")
    p.add_argument("--num-devices", type=positive_int, default=None, metavar="N",
                   help="chips the script's ttnn.GetNumAvailableDevices() sees and a mesh may use "
                        "(default: the board's with --arch, else 4; 8 for a T3K)")
    add_numerics_option(p)
    p.set_defaults(handler=run)


def run(args) -> int:
    from tilefold.sim import numerics_mode, watchdog

    if args.trace:
        check_output_file(args.trace, "--trace")
    front_end = script_front_end(args.script)
    if args.num_devices is not None:
        from tilefold.frontend.ttl.mesh import set_num_devices

        set_num_devices(args.num_devices)
    with script_environment(args.script, args.script_args), watchdog.limit(args.max_cycles), \
            numerics_mode.chosen(args.numerics):
        return front_end.run_script(args.script, args.arch, args.trace)
