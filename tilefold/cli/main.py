"""Entry point of the ``tilefold`` command.

Reads: the command line. Writes: what the subcommand prints. Each subcommand lives in its
own module of :mod:`tilefold.cli` exposing ``add_parser(subparsers, help)``, imported only
when that subcommand runs (``tilefold --help`` lists them from :data:`SUBCOMMANDS` without
importing the compiler, the simulator or matplotlib); a user mistake
(any :class:`~tilefold.errors.TilefoldError`) is printed as one message without a
traceback and exits with status 1; so is an exception a user's script raised (with the
script's own frames only; a syntax error in one line). Set ``TILEFOLD_TRACEBACK=1`` to see
the whole traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys

from tilefold.errors import TilefoldError, reported_error

# subcommand -> its one-line help (the module tilefold.cli.<name>_cmd implements it)
SUBCOMMANDS = {
    "layout": "show a tensor layout, its shards, padding and pages",
    "compile": "write TT-Metalium C++ for an op or a kernel script",
    "run": "simulate an op or a kernel script and check it against numpy",
    "sim": "run a TT-Lang style script on the simulated device",
    "passes": "list the compiler's passes with their summaries",
    "tune": "autotune the kernels of a script: rank configurations by modeled time",
}


QUIET = ("-q", "--quiet")     # accepted anywhere on the command line


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; only the subcommand named in ``argv`` (all of them when ``argv`` is None)
    gets its full options, so only its module is imported."""
    parser = argparse.ArgumentParser(
        prog="tilefold",
        description="Compile Python Tensix kernels to TT-Metalium C++ and run them on a simulated device.",
    )
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bars (they show on a terminal for work over two seconds); "
                             "may also follow the subcommand")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    chosen = next((a for a in argv if not a.startswith("-")), None) if argv is not None else None
    for name, help in SUBCOMMANDS.items():
        if argv is None or name == chosen:
            importlib.import_module(f"tilefold.cli.{name}_cmd").add_parser(sub, help)
        else:
            sub.add_parser(name, help=help)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if any(a in QUIET for a in argv):
        from tilefold import progress

        with progress.disabled():
            return _run([a for a in argv if a not in QUIET])
    return _run(argv)


# a list of sizes with a negative first one ("-1,32"): argparse would take it for an option
_NEGATIVE_SIZES = re.compile(r"^-\d+([,x]-?\d*)+$")


def _run(argv: list[str]) -> int:
    parser = build_parser(argv)
    for token in argv:
        if _NEGATIVE_SIZES.match(token):
            parser.error(f"{token}: sizes must be positive")
    extra: list[str] = []
    if "--" in argv:                    # what follows goes to the script as it is (``tilefold sim s.py -- --flag``)
        argv, extra = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    args, unknown = parser.parse_known_args(argv)
    if unknown:                         # a script's own options (``tilefold sim s.py --no-ttl-maximize-dst``)
        if not hasattr(args, "script_args"):
            parser.error(f"unrecognized arguments: {' '.join(unknown)}")
        extra = [*unknown, *extra]
    if extra:
        if not hasattr(args, "script_args"):
            parser.error(f"unrecognized arguments: -- {' '.join(extra)}")
        args.script_args = [*args.script_args, *extra]
    try:
        result = args.handler(args)
    except TilefoldError as err:
        if os.environ.get("TILEFOLD_TRACEBACK"):
            raise
        print(f"tilefold {args.command}: {err}", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"tilefold {args.command}: out of host memory; use a smaller shape", file=sys.stderr)
        return 1
    except Exception as exc:  # the user's script raised, or a bug in tilefold (then re-raised)
        from tilefold.cli.user_code import user_error_text

        refused = reported_error(exc)     # ``from ttl import name`` of a name tilefold refused
        if refused is not None and not os.environ.get("TILEFOLD_TRACEBACK"):
            print(f"tilefold {args.command}: {refused}", file=sys.stderr)
            return 1

        text = None if os.environ.get("TILEFOLD_TRACEBACK") else user_error_text(exc)
        if text is None:
            raise
        print(f"tilefold {args.command}: {text}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tilefold: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into a command that stopped reading (e.g. head)
        sys.stdout = open(os.devnull, "w")
        return 0
    return int(result or 0)


def entry() -> None:
    """The ``tilefold`` command: :func:`main`, then the process ends without tearing down the
    modules it imported (:mod:`tilefold.cli.process_exit`)."""
    from tilefold.cli.process_exit import run_then_end

    run_then_end(main)


if __name__ == "__main__":
    sys.exit(main())
