"""How a ``tile.gemm`` accumulates: over a K loop from zero, once from zero, or onto C's value.

Reads: a ``tile.gemm``, its block and enclosing loop, the ops before them that touch its
accumulator C. Writes: nothing. Shared by :mod:`.lower_shared_to_cb` (does the gemm read
C's previous value?) and :mod:`.lower_tt_tile_intrinsics` (which form to lower to).

- ``loop``: the gemm sits in a serial / pipelined loop that touches C nowhere else, and C
  was last cleared before the loop (``T.clear`` / ``T.fill(C, 0)``, absorbed) or never
  written: C = Σ_k A_k @ B_k, defined when the loop ends.
- ``single``: a gemm from zero outside such a loop (``clear_accum=True``, C cleared just
  before in the same block, or nothing before it — in no loop, nor before the ``if`` s around
  it — touching C): C = A @ B.
- ``update``: anything else: C = C + A @ B, reading C's previous value.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from tilefold.ir import tile


@dataclass
class Accumulation:
    gemm: tile.GemmOp
    kind: str                           # "loop" | "single" | "update"
    loop: tile.ForOp | None = None      # the K loop of a "loop" accumulation
    clear: tile.FillOp | None = None    # the clear it absorbs


def _name(value: SSAValue) -> str | None:
    owner = value.owner
    return owner.buffer_name.data if isinstance(owner, tile.AllocOp) else None


def touches(op: Operation, value: SSAValue) -> bool:
    """Whether ``op`` (or an op inside it) uses ``value`` — directly, or by name in a lowered
    ``tile.stmt``."""
    name = _name(value)
    for o in op.walk():
        if value in o.operands:
            return True
        if name is not None and isinstance(o, tile.StmtOp) and (name in o.read_names or name in o.write_names):
            return True
    return False


def previous_touch(op: Operation, value: SSAValue) -> Operation | None:
    """The last op before ``op`` in its block that uses ``value`` (directly or nested)."""
    prev = op.prev_op
    while prev is not None:
        if touches(prev, value):
            return prev
        prev = prev.prev_op
    return None


def _is_clear(op: Operation | None, value: SSAValue) -> bool:
    return isinstance(op, tile.FillOp) and op.buffer == value and op.fill_value == 0.0


def analyze(gemm: tile.GemmOp) -> Accumulation:
    c = gemm.c
    if gemm.clear_accum.value.data:
        return Accumulation(gemm, "single")
    parent = gemm.parent_op()
    if isinstance(parent, tile.ForOp) and parent.kind.data in ("serial", "pipelined"):
        others = [o for o in parent.body.block.ops if o is not gemm and touches(o, c)]
        if not others:
            prev = previous_touch(parent, c)
            if prev is None or _is_clear(prev, c):
                return Accumulation(gemm, "loop", parent, prev if prev is not None else None)
    prev = previous_touch(gemm, c)
    if _is_clear(prev, c):
        return Accumulation(gemm, "single", clear=prev)
    if prev is None and _first_touch_outside_loops(gemm, c):
        return Accumulation(gemm, "single")
    return Accumulation(gemm, "update")


def _first_touch_outside_loops(op: Operation, value: SSAValue) -> bool:
    """Whether nothing before ``op`` touches ``value``: not in its block, nor before the ``if`` s
    around it, and ``op`` is in no loop body (where the previous iteration's value comes first)."""
    parent = op.parent_op()
    while isinstance(parent, tile.IfOp):
        if previous_touch(parent, value) is not None:
            return False
        parent = parent.parent_op()
    return not isinstance(parent, tile.ForOp)
