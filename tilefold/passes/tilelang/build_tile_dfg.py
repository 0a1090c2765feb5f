"""build_tile_dfg (Stage C3): the tile dataflow graph, and where each CB version is handed over.

Reads: the statements of the kernel — ``tile.read_block`` (the reader defines a block of a
buffer), ``tile.write_block`` (the writer uses one), ``tile.stmt`` (compute uses its
``reads`` and defines its ``writes``) and the ``tile.for`` loops holding them — and
``tt.cb.*``.

Every definition of a buffer is a new *version* of its CB: one block of pages. A version
lives from its definition to its last use before the buffer is defined again, in the same
block of statements; a loop uses the versions that enter it and keeps its own versions
inside. So the protocol points are:

- ``produce_begin`` / ``produce_end`` (reserve / push) around the defining statement;
- ``consume`` (wait) before the first statement that uses the version, ``release`` (pop)
  after the last — right after the definition if nothing uses it.

A statement that reads a buffer and defines it again (``x = f(x)``) holds both versions at
once, so that CB gets two blocks of pages.

Writes: ``tile.cb_event`` ops at those points; ``tt.cb.<name>`` updated (depth for in-place
updates, consumer ``compute`` for a buffer nothing reads, which compute drains);
``tt.tile_dfg`` = {"edges": [{buffer, cb, producer, consumer, pages, depth}]}.

Errors: a buffer updated in a loop and read in its next iteration (a loop-carried block
other than a gemm accumulator), or computed in a loop and read after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from tilefold.ir import tile
from tilefold.passes.tilelang.attributes import kernel_function, set_attr
from tilefold.passes.tilelang.common import compile_error, insert_after, insert_before
from tilefold.passes.tilelang.internal_buffers import cb_entries

STATEMENTS = (tile.ReadBlockOp, tile.WriteBlockOp, tile.StmtOp, tile.ForOp)


@dataclass
class Version:
    buffer: str
    definition: Operation
    uses: list[Operation] = field(default_factory=list)
    in_place: bool = False


class BuildTileDFG(ModulePass):
    """CB versions and their protocol points (see the module docstring)."""

    name = "build_tile_dfg"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        TileDFG(kernel_function(op)).build()


class TileDFG:
    """The versions of one kernel's CBs."""

    def __init__(self, kernel):
        self.kernel = kernel

    def build(self) -> None:
        kernel = self.kernel
        self.cbs = cb_entries(kernel)
        self.by_index = {cb["index"]: name for name, cb in self.cbs.items()}
        self.versions: list[Version] = []
        self.block(kernel.body.block, loop=None)
        in_place = {v.buffer for v in self.versions if v.in_place}
        drained = {v.buffer for v in self.versions if not v.uses}
        for v in self.versions:
            self.place(v)
        edges = []
        for name, cb in sorted(self.cbs.items(), key=lambda kv: kv[1]["index"]):
            pages = cb["block_tiles"][0] * cb["block_tiles"][1]
            if name in in_place:
                cb["depth"] = max(cb["depth"], 2 * pages)
            if cb["consumer"] == "none" and name in drained:
                cb["consumer"] = "compute"
            set_attr(kernel, f"tt.cb.{name}", cb)
            edges.append({"buffer": name, "cb": cb["index"], "producer": cb["producer"], "consumer": cb["consumer"],
                          "pages": pages, "depth": cb["depth"]})
        set_attr(kernel, "tt.tile_dfg", {"edges": edges})

    # -- the interface of a statement -------------------------------------------------------------

    def interface(self, op: Operation) -> tuple[list[str], list[str]]:
        """(buffers it defines for the block it is in, versions it uses from that block)."""
        if isinstance(op, tile.ReadBlockOp):
            return [self.by_index[op.cb_index]], []
        if isinstance(op, tile.WriteBlockOp):
            return [], [self.by_index[op.cb_index]]
        if isinstance(op, tile.StmtOp):
            return op.write_names, op.read_names
        if isinstance(op, tile.ForOp):
            return [], self.imports(op)
        return [], []

    def imports(self, loop: tile.ForOp) -> list[str]:
        """Buffers a loop body uses before defining them: versions that enter the loop."""
        defined: set[str] = set()
        out: list[str] = []
        for op in loop.body.block.ops:
            if not isinstance(op, STATEMENTS):
                continue
            defs, uses = self.interface(op)
            for b in uses:
                if b not in defined and b not in out:
                    out.append(b)
            defined |= set(defs)
        return out

    def defined_inside(self, loop: tile.ForOp) -> set[str]:
        out: set[str] = set()
        for op in loop.walk():
            if isinstance(op, STATEMENTS) and op is not loop and not isinstance(op, tile.ForOp):
                out |= set(self.interface(op)[0])
        return out

    # -- versions ---------------------------------------------------------------------------------------

    def block(self, block: Block, loop: tile.ForOp | None) -> None:
        current: dict[str, Version] = {}
        stale: dict[str, Operation] = {}
        imported = set(self.imports(loop)) if loop is not None else set()
        for op in block.ops:
            if not isinstance(op, STATEMENTS):
                continue
            defs, uses = self.interface(op)
            for b in uses:
                if b in stale and b not in current:
                    raise compile_error(op, f"{b} is computed inside the loop above and read after it; a loop keeps "
                                            "the blocks it computes (only gemm accumulators leave a loop). Compute "
                                            f"{b} after the loop")
                if b in current:
                    current[b].uses.append(op)
            for b in defs:
                if b in imported:
                    raise compile_error(op, f"{b} is read at the start of this loop body and updated in it, so each "
                                            "iteration reads the previous one's block; loop-carried blocks are not "
                                            "supported (only gemm accumulators). Restructure the loop")
                if b in current:
                    self.versions.append(current[b])
                version = Version(b, op, in_place=b in uses)
                current[b] = version
                stale.pop(b, None)
            if isinstance(op, tile.ForOp):
                self.block(op.body.block, op)
                for b in self.defined_inside(op):
                    if b not in current:
                        stale[b] = op
        self.versions.extend(current.values())

    def event(self, anchor: Operation, kind: str, v: Version, after: bool) -> Operation:
        cb = self.cbs[v.buffer]
        op = tile.CbEventOp(kind, cb["index"], cb["block_tiles"][0] * cb["block_tiles"][1], v.buffer)
        (insert_after if after else insert_before)(anchor, op)
        op.location = anchor.location
        return op

    def place(self, v: Version) -> None:
        """Reserve / push around the definition; wait before the first use, pop after the last.
        (For ``x = f(x)`` the pop of the old version follows the push of the new one.)"""
        d = v.definition
        self.event(d, "produce_begin", v, after=False)
        end = self.event(d, "produce_end", v, after=True)
        if not v.uses:
            consume = self.event(end, "consume", v, after=True)
            self.event(consume, "release", v, after=True)
            return
        self.event(v.uses[0], "consume", v, after=False)
        self.event(v.uses[-1], "release", v, after=True)
