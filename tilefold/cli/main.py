"""Entry point of the ``tilefold`` command.

Reads: the command line. Writes: what the subcommand prints. Each subcommand lives in its
own module of :mod:`tilefold.cli` exposing ``add_parser(subparsers)``; a user mistake
(any :class:`~tilefold.errors.TilefoldError`) is printed as one message without a
traceback and exits with status 1. Set ``TILEFOLD_TRACEBACK=1`` to see the traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from tilefold.errors import TilefoldError

SUBCOMMANDS = ("layout", "compile", "run", "sim")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tilefold",
        description="Compile Python Tensix kernels to TT-Metalium C++ and run them on a simulated device.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"tilefold.cli.{name}_cmd")
        except ModuleNotFoundError as exc:
            if exc.name != f"tilefold.cli.{name}_cmd":
                raise
            continue
        module.add_parser(sub)
    return parser




def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result = args.handler(args)
    except TilefoldError as err:
        if os.environ.get("TILEFOLD_TRACEBACK"):
            raise
        print(f"tilefold {args.command}: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tilefold: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into a command that stopped reading (e.g. head)
        sys.stdout = open(os.devnull, "w")
        return 0
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
