"""``ttl.diagnostics``: ``TTLangCompileError``, what a TT-Lang program catches for a mistake found
when its operation is built — tilefold's :class:`~tilefold.errors.KernelError`. TT-Lang's
formatters of MLIR diagnostics have no counterpart: tilefold reports a mistake as one message at
the user's file and line."""

from tilefold.caller import unsupported_names
from tilefold.errors import KernelError as TTLangCompileError

__all__ = ["TTLangCompileError"]


__getattr__ = unsupported_names("ttl.diagnostics",
                              ": tilefold has no MLIR diagnostics to format (its errors are one message at the user's "
                              "file:line); catch ttl.diagnostics.TTLangCompileError")
