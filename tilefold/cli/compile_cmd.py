"""``tilefold compile OP|SCRIPT.py -o DIR``: write the C++ project (kernels, main.cpp, CMake, data).

Reads: an op name and its options, or a kernel script. Writes: the project folder; prints
the op's summary (e.g. its work split) and the files written.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tilefold.cli.targets import ARCH_HELP, is_script, script_front_end
from tilefold.cli.user_code import check_output_dir, script_environment


def add_parser(sub, help: str) -> None:
    p = sub.add_parser("compile", help=help,
                       description="Compile a built-in op (tilize, untilize, eltwise, matmul, ...) or a kernel "
                                   "script to a TT-Metalium project: kernels/*.cpp, main.cpp, CMakeLists.txt, data/.")
    p.add_argument("target", help="an op name or a kernel script (.py)")
    p.add_argument("-o", "--output", default=None, help="output folder (default build/<target>)")
    p.add_argument("--arch", default=None, help=ARCH_HELP)
    p.add_argument("--print-ir-after-all", action="store_true", help="print the IR after every pass")
    p.add_argument("op_args", nargs=argparse.REMAINDER, help="options of the op (see tilefold compile OP --help)")
    p.set_defaults(handler=run)


def op_namespace(target: str, args: argparse.Namespace, prog: str, common: argparse.ArgumentParser):
    """The op's factory and its parsed options. Options of ``tilefold compile/run`` itself
    (``-o``, ``--arch``, ``--trace`` ...) may also come after the op's options; ``common``
    parses those and they are set on ``args``."""
    from tilefold.ops import get_factory

    factory = get_factory(target)
    parser = argparse.ArgumentParser(prog=f"tilefold {prog} {target}", description=factory.description)
    factory.add_arguments(parser)
    op_args, rest = parser.parse_known_args(args.op_args)
    if rest:
        late = common.parse_args(rest)
        for key, value in vars(late).items():
            if value is not None and value is not False:
                setattr(args, key, value)
    op_args.arch = args.arch
    return factory, op_args


def _late_options() -> argparse.ArgumentParser:
    late = argparse.ArgumentParser(prog="tilefold compile", add_help=False)
    late.add_argument("-o", "--output", dest="output", default=None)
    late.add_argument("--arch", default=None)
    late.add_argument("--print-ir-after-all", action="store_true", dest="print_ir_after_all")
    return late


def late_options(args: argparse.Namespace, common: argparse.ArgumentParser) -> None:
    """Options of the command itself given after a script target (``tilefold compile x.py -o DIR``)."""
    late = common.parse_args(args.op_args)
    for key, value in vars(late).items():
        if value is not None and value is not False:
            setattr(args, key, value)


def run(args) -> int:
    if is_script(args.target):
        late_options(args, _late_options())
        out = Path(args.output or Path("build") / Path(args.target).stem)
        check_output_dir(out, "-o")
        front_end = script_front_end(args.target)
        with script_environment(args.target):
            paths = front_end.compile_script(args.target, out, args.print_ir_after_all)
        print(f"wrote {len(paths)} files to {out}/")
        return 0
    from tilefold.codegen.cpp import write_project
    from tilefold.ops import host_data

    factory, op_args = op_namespace(args.target, args, "compile", _late_options())
    out = Path(args.output or Path("build") / Path(args.target).stem)
    check_output_dir(out, "-o")
    instance = factory.build(op_args)
    if args.print_ir_after_all:
        from tilefold.ir.context import print_ir

        print(print_ir(instance.program.module, debuginfo=True))
    for line in instance.summary:
        print(line)
    paths = write_project(instance.program, out, host_data(instance))
    names = sorted({p.name for p in paths if p.suffix in (".cpp", ".txt", ".hpp")})
    print(f"wrote {', '.join(names)} and {sum(1 for p in paths if p.suffix == '.bin')} data files to {out}/")
    return 0
