"""``ttl.diagnostics``: ``TTLangCompileError``, what a TT-Lang program catches for a mistake found
when its operation is built — tilefold's :class:`~tilefold.errors.KernelError`."""

from tilefold.errors import KernelError as TTLangCompileError

__all__ = ["TTLangCompileError"]
