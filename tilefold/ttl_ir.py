"""``ttl.ir``: ``MLIRError``, what a TT-Lang program catches when IR it asked for does not verify —
tilefold's :class:`~tilefold.errors.KernelError` (a dispatcher's argument contracts that do not
hold, for one). TT-Lang's MLIR bindings have no counterpart: tilefold's IR is its own (xDSL)."""

from tilefold.caller import user_location
from tilefold.errors import KernelError
from tilefold.errors import KernelError as MLIRError

__all__ = ["MLIRError"]


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise KernelError(f"ttl.ir.{name} is not supported by tilefold yet: tilefold's IR is its own, not TT-Lang's MLIR "
                      "bindings (catch ttl.ir.MLIRError; tilefold compile --print-ir-after-all prints its IR)",
                      user_location())
