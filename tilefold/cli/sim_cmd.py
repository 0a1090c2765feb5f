"""``tilefold sim SCRIPT.py``: run a TT-Lang style script on the simulated device.

Reads: a script written for TT-Lang's tools. Writes: whatever the script prints. The
script gets ``ttl`` and the host tensor module the way TT-Lang's own simulator provides them.
"""

from __future__ import annotations

from tilefold.cli.targets import script_front_end


def add_parser(sub, help: str) -> None:
    p = sub.add_parser("sim", help=help)
    p.add_argument("script", help="the script (.py)")
    p.add_argument("--arch", default=None, help="wormhole_b0 (default), n300, blackhole")
    p.add_argument("--trace", default=None, metavar="OUT.json", help="write a Chrome / Perfetto trace")
    p.set_defaults(handler=run)


def run(args) -> int:
    return script_front_end(args.script).run_script(args.script, args.arch, args.trace)
