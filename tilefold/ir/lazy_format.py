"""Generated IRDL operations whose declarative assembly format is compiled on first use.

Reads: an operation class and its format string. Writes: the class's ``parse`` and ``print``.

xDSL compiles an operation's ``assembly_format`` when the class is defined, about a millisecond
each; the ttkernel and ttl dialects generate a few hundred classes from their tables, and a run
prints or parses few of them. :func:`op_with_format` defines the class without the format and
gives it ``parse`` / ``print`` methods that compile the same format the first time either is
called, so the text is exactly what the declared format gives.
"""

from __future__ import annotations

from xdsl.irdl import irdl_op_definition


def op_with_format(cls: type, assembly_format: str) -> type:
    """``irdl_op_definition(cls)`` printed and parsed with ``assembly_format``, compiled lazily."""
    cls = irdl_op_definition(cls)
    program = None

    def compiled():
        nonlocal program
        if program is None:
            from xdsl.irdl.declarative_assembly_format import FormatProgram

            program = FormatProgram.from_str(assembly_format, cls.get_irdl_definition())
        return program

    def parse(klass, parser):
        return compiled().parse(parser, klass)

    def print_(self, printer):
        return compiled().print(printer, self)

    cls.parse = classmethod(parse)
    cls.print = print_
    return cls
