"""Which loops of a ttkernel function are *page-transfer nests*.

Reads: an ``scf.for`` and everything nested in it. Writes: nothing. A page-transfer nest only
computes integers (arith, CBs, local variables, nested loops) and issues page reads or page writes
(``noc_async_read_page`` / ``noc_async_write_page``), at least one. Those calls never block
and nothing else happens between them, so a runner may queue them and issue them together
after the nest (the Python emitter does, for :mod:`tilefold.sim.page_batches`).
"""

from __future__ import annotations

from xdsl.dialects import memref, scf

from tilefold.ir.ttkernel import ApiCallOp, CBOp

QUEUEABLE_CALLS = frozenset({"noc_async_read_page", "noc_async_write_page"})


def is_page_transfer_nest(loop: scf.ForOp) -> bool:
    """Whether ``loop`` is a page-transfer nest (see the module docstring)."""
    transfers = 0
    for inner in loop.body.walk():
        if isinstance(inner, ApiCallOp):
            if inner.api.name not in QUEUEABLE_CALLS:
                return False
            transfers += 1
        elif not (inner.name.startswith("arith.") or isinstance(
                inner, (CBOp, scf.ForOp, scf.YieldOp, memref.AllocaOp, memref.LoadOp, memref.StoreOp))):
            return False
    return transfers > 0
