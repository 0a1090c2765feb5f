"""``ttl.diagnostics``: ``TTLangCompileError``, what a TT-Lang program catches for a mistake found
when its operation is built — tilefold's :class:`~tilefold.errors.KernelError`. TT-Lang's
formatters of MLIR diagnostics have no counterpart: tilefold reports a mistake as one message at
the user's file and line."""

from tilefold.caller import user_location
from tilefold.errors import KernelError
from tilefold.errors import KernelError as TTLangCompileError

__all__ = ["TTLangCompileError"]


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise KernelError(f"ttl.diagnostics.{name} is not supported by tilefold yet: tilefold has no MLIR diagnostics to "
                      "format (its errors are one message at the user's file:line); catch ttl.diagnostics."
                      "TTLangCompileError", user_location())
