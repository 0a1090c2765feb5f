"""Source locations on IR ops: between xDSL ``FileLineColLoc`` and :class:`SourceLocation`.

Reads: op locations. Writes: op locations. Front ends stamp every op they build with the
user's file:line; passes copy locations to the ops they create; errors and the simulator
read them back to name the user's line.
"""

from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr, UnknownLoc
from xdsl.ir import Operation

from tilefold.errors import SourceLocation


def file_line_loc(file: str, line: int, column: int = 0) -> FileLineColLoc:
    return FileLineColLoc(StringAttr(file), IntAttr(line), IntAttr(column))


def source_location(op: Operation | None) -> SourceLocation | None:
    """The user's file:line of ``op``, looking at enclosing ops when it has none."""
    while op is not None:
        loc = op.location
        if isinstance(loc, FileLineColLoc):
            return SourceLocation(loc.filename.data, loc.line.data, loc.column.data)
        op = op.parent_op()
    return None


def set_location(op: Operation, loc: SourceLocation | FileLineColLoc | None) -> Operation:
    if isinstance(loc, SourceLocation):
        loc = file_line_loc(loc.file, loc.line, loc.column)
    op.location = loc if loc is not None else UnknownLoc()
    return op


def copy_location(dst: Operation, src: Operation) -> Operation:
    dst.location = src.location
    return dst
