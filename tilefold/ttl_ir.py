"""``ttl.ir``: ``MLIRError``, what a TT-Lang program catches when IR it asked for does not verify —
tilefold's :class:`~tilefold.errors.KernelError` (a dispatcher's argument contracts that do not
hold, for one). TT-Lang's MLIR bindings have no counterpart: tilefold's IR is its own (xDSL)."""

from tilefold.caller import unsupported_names
from tilefold.errors import KernelError as MLIRError

__all__ = ["MLIRError"]


__getattr__ = unsupported_names("ttl.ir",
                              ": tilefold's IR is its own, not TT-Lang's MLIR bindings (catch ttl.ir.MLIRError; "
                              "tilefold compile --print-ir-after-all prints its IR)")
