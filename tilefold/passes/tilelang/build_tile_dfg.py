"""build_tile_dfg (Stage C3): the tile dataflow graph, and where each CB version is handed over.

Reads: the statements of the kernel — ``tile.read_block`` / ``tile.read_rows`` (the reader
defines a block of a buffer), ``tile.write_block`` / ``tile.write_rows`` (the writer uses
one), ``tile.stmt`` (compute uses its ``reads`` and defines its ``writes``) and the
``tile.for`` / ``tile.if`` ops holding them — and ``tt.cb.*``.

Every definition of a buffer is a new *version* of its CB: one block of pages. A version
lives from its definition to its last use before the buffer is defined again, in the same
block of statements. Loops and ifs are statements of their block too:

- a loop *uses* the versions its body reads before defining them, and *defines* the buffers
  its body defines that are read after it (their last version in the body comes out);
- a buffer the body reads and then defines again is *carried*: each iteration waits for
  the version the previous iteration (or the code before the loop) left, pops it after its
  last use, and leaves its own last version for the next one (online softmax, flash
  attention, an accumulator updated in ``T.serial``);
- a buffer the body defines without reading first but that is read after the loop keeps
  each iteration's last version until the next iteration defines it again (a pop guarded
  by ``k > start``);
- an ``if`` uses the versions its branches read; what a branch defines stays in it, unless
  the code after the ``if`` reads it: then the ``if`` updates a version made before it — a
  branch that defines the buffer pops the old version and leaves its own at the front of
  the CB, a branch that does not keeps the old one there (a conditional accumulation,
  ``if mask: T.gemm(A_s, B_s, C)`` in a K loop).

So the protocol points are ``produce_begin`` / ``produce_end`` (reserve / push) around a
defining statement, ``consume`` (wait) before a version's first use and ``release`` (pop)
after its last — right after the definition if nothing uses it. A statement that reads a
buffer and defines it again (``x = f(x)``) holds both versions at once, so that CB gets two
blocks of pages.

Writes: ``tile.cb_event`` ops at those points; ``tt.cb.<name>`` updated (depth for in-place
updates, consumer ``compute`` for a buffer nothing reads, which compute drains);
``tt.tile_dfg`` = {"edges": [{buffer, cb, producer, consumer, pages, depth}]}.

Errors: a buffer defined in a branch of an ``if`` and read after it that has no version
before the ``if``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.builder import Builder
from xdsl.rewriter import InsertPoint

from tilefold.ir import tile
from tilefold.ir.attributes import kernel_function, set_attr
from tilefold.passes.tilelang.common import compile_error, insert_after, insert_before
from tilefold.ir.attributes import cb_entries

STATEMENTS = (*tile.TRANSFERS, tile.StmtOp, tile.ForOp, tile.IfOp)


@dataclass
class Version:
    buffer: str
    definition: Operation | None          # None: the version entering a loop body
    uses: list[Operation] = field(default_factory=list)
    in_place: bool = False
    flows_out: bool = False               # left for the next iteration or the code after the block
    handed_to: Operation | None = None    # a loop that carries it: the loop body pops it


class BuildTileDFG(ModulePass):
    """CB versions and their protocol points (see the module docstring)."""

    name = "build-tile-dfg"

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
        self.guarded: list[tuple[str, Operation, tile.ForOp]] = []
        self.block(kernel.body.block, live_out=set(), carried=set())
        in_place = {v.buffer for v in self.versions if v.in_place}
        drained = {v.buffer for v in self.versions if not v.uses and not v.flows_out}
        self.drains: list[tuple[Operation, Operation]] = []
        for v in self.versions:
            self.place(v)
        for consume, release in self.drains:
            self.after_older_pops(consume, release)
        for name, first_def, loop in self.guarded:
            self.guarded_release(name, first_def, loop)
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
        """(buffers it defines, buffers it uses) as seen from the block it is in."""
        if isinstance(op, tile.READS):
            return [self.by_index[op.cb_index]], []
        if isinstance(op, tile.WRITES):
            return [], [self.by_index[op.cb_index]]
        if isinstance(op, tile.StmtOp):
            return op.write_names, op.read_names
        if isinstance(op, (tile.ForOp, tile.IfOp)):
            return self.defined_inside(op), self.imports(op)
        return [], []

    def regions(self, op) -> list[Block]:
        if isinstance(op, tile.ForOp):
            return [op.body.block]
        return [op.then_region.block, op.else_region.block]

    def imports(self, op: Operation) -> list[str]:
        """Buffers a loop or if uses before defining them: versions that enter it."""
        out: list[str] = []
        for block in self.regions(op):
            defined: set[str] = set()
            for inner in block.ops:
                if not isinstance(inner, STATEMENTS):
                    continue
                defs, uses = self.interface(inner)
                for b in uses:
                    if b not in defined and b not in out:
                        out.append(b)
                defined |= set(defs)
        return out

    def defined_inside(self, op: Operation) -> list[str]:
        out: list[str] = []
        for inner in op.walk():
            if inner is not op and isinstance(inner, STATEMENTS) and not isinstance(inner, (tile.ForOp, tile.IfOp)):
                for b in self.interface(inner)[0]:
                    if b not in out:
                        out.append(b)
        return out

    def used_after(self, op: Operation, live_out: set[str]) -> set[str]:
        """Buffers read after ``op`` in its block before being defined again, or leaving the block."""
        out: set[str] = set()
        defined: set[str] = set()
        nxt = op.next_op
        while nxt is not None:
            if isinstance(nxt, STATEMENTS):
                defs, uses = self.interface(nxt)
                out |= {b for b in uses if b not in defined}
                if not isinstance(nxt, (tile.ForOp, tile.IfOp)):
                    defined |= set(defs)
            nxt = nxt.next_op
        return out | {b for b in live_out if b not in defined}

    # -- versions ---------------------------------------------------------------------------------------

    def block(self, block: Block, live_out: set[str], carried: set[str]) -> None:
        """Versions of one block of statements. ``live_out``: buffers whose last version leaves the
        block; ``carried``: buffers the block (a loop body) receives from the previous iteration."""
        current: dict[str, Version] = {}
        for op in block.ops:
            if not isinstance(op, STATEMENTS):
                continue
            defs, uses = self.interface(op)
            loop_carries: set[str] = set()
            if isinstance(op, tile.ForOp):
                loop_carries = set(uses) & set(defs)
            for b in uses:
                if b not in current:
                    if b in carried:
                        current[b] = Version(b, None)
                    else:
                        continue  # owned by an enclosing block
                current[b].uses.append(op)
                if b in loop_carries:
                    current[b].handed_to = op
            if isinstance(op, (tile.ForOp, tile.IfOp)):
                after = self.used_after(op, live_out)
                if isinstance(op, tile.IfOp):
                    self.branches(op, [b for b in defs if b in after], current, carried)
                    continue
                exported = [b for b in defs if b in after or b in loop_carries]
                self.loop(op, set(exported) | loop_carries, loop_carries)
                for b in exported:
                    if b in current:
                        self.versions.append(current.pop(b))
                    current[b] = Version(b, op)
                continue
            for b in defs:
                if b in current:
                    self.versions.append(current[b])
                current[b] = Version(b, op, in_place=b in uses)
        for b, v in current.items():
            if b in live_out:
                v.flows_out = True
        self.versions.extend(current.values())

    def branches(self, op: tile.IfOp, updated: list[str], current: dict[str, Version], carried: set[str]) -> None:
        """The versions of an ``if``'s branches. A buffer a branch defines and the code after the
        ``if`` reads is made anew by every branch, or had a version before the ``if``, which the
        ``if`` then *updates*. A branch that
        defines it pops that version (after its last use there, or before the definition if the
        branch does not read it) and leaves its own last one at the front of the CB; a branch that
        does not keeps the old one there. So after the ``if`` exactly one version is at the front
        either way, and the code after it waits for that one."""
        defined = [{b for inner in region.ops if isinstance(inner, STATEMENTS) for b in self.interface(inner)[0]}
                   for region in self.regions(op)]
        for b in updated:
            if b not in current and b not in carried and all(b in d for d in defined):
                continue               # each branch makes it anew: nothing came before to pop
            if b not in current and b not in carried:
                raise compile_error(op, f"{b} is computed inside this `if` and read after it, but has no value before "
                                        "it: the branch not taken would leave it undefined. Give it a value before "
                                        "the `if` (T.clear, T.fill or T.copy), or compute it in both branches' code "
                                        "after it")
            if b not in current:
                current[b] = Version(b, None)
            current[b].uses.append(op)
            current[b].handed_to = op
        before = {b for b in updated if b in current}
        for region, made in zip(self.regions(op), defined):
            own = [b for b in updated if b in made]
            for b in own:
                first = next(inner for inner in region.ops if isinstance(inner, STATEMENTS)
                             and b in self.defined_here(inner))
                if b in before and b not in self.imports_before(region, first):
                    self.pop_before(b, first)
            self.block(region, live_out=set(own), carried={b for b in own if b in before})
        for b in updated:
            if b in current:
                self.versions.append(current.pop(b))
            current[b] = Version(b, op)

    def imports_before(self, region: Block, first: Operation) -> set[str]:
        """The buffers ``region``'s statements before ``first`` (and ``first`` itself) read."""
        out: set[str] = set()
        for inner in region.ops:
            if isinstance(inner, STATEMENTS):
                out |= set(self.interface(inner)[1])
            if inner is first:
                break
        return out

    def pop_before(self, name: str, first_def: Operation) -> None:
        """Pop the version that entered a branch right before the branch defines ``name`` anew."""
        for kind in ("consume", "release"):
            self.event(first_def, kind, name, after=False)

    def loop(self, loop: tile.ForOp, live_out: set[str], carried: set[str]) -> None:
        body = loop.body.block
        for b in live_out - carried:
            first = next(op for op in body.ops if isinstance(op, STATEMENTS) and b in self.defined_here(op))
            self.guarded.append((b, first, loop))
        self.block(body, live_out=live_out, carried=carried)

    def defined_here(self, op) -> list[str]:
        return self.interface(op)[0]

    # -- protocol points --------------------------------------------------------------------------------

    def event(self, anchor: Operation, kind: str, name: str, after: bool) -> Operation:
        cb = self.cbs[name]
        op = tile.CbEventOp(kind, cb["index"], cb["block_tiles"][0] * cb["block_tiles"][1], name)
        (insert_after if after else insert_before)(anchor, op)
        op.location = anchor.location
        return op

    def place(self, v: Version) -> None:
        """Reserve / push around the definition; wait before the first use, pop after the last.
        (For ``x = f(x)`` the pop of the old version follows the push of the new one.)"""
        d = v.definition
        end = None
        if d is not None and not isinstance(d, (tile.ForOp, tile.IfOp)):
            self.event(d, "produce_begin", v.buffer, after=False)
            end = self.event(d, "produce_end", v.buffer, after=True)
        uses = v.uses
        if v.handed_to is not None:
            uses = uses[:uses.index(v.handed_to)]
            if not uses:
                return
            self.event(uses[0], "consume", v.buffer, after=False)
            return
        if not uses:
            if v.flows_out or d is None:
                return
            # nothing reads it: drain it right after its definition (or after the loop that left it)
            consume = self.event(end if end is not None else d, "consume", v.buffer, after=True)
            self.drains.append((consume, self.event(consume, "release", v.buffer, after=True)))
            return
        self.event(uses[0], "consume", v.buffer, after=False)
        if not v.flows_out:
            self.event(uses[-1], "release", v.buffer, after=True)

    @staticmethod
    def after_older_pops(consume: Operation, release: Operation) -> None:
        """A drained version (``x = f(x)`` that nothing reads) sits behind the old version in its CB:
        the pop of the old one, placed after the same statement, goes first, so that the wait for
        the new one counts from the front."""
        nxt = release.next_op
        while isinstance(nxt, tile.CbEventOp):
            after = nxt.next_op
            if nxt.kind.data == "release" and nxt.cb.value.data == consume.cb.value.data:
                nxt.detach()
                Builder(InsertPoint.before(consume)).insert(nxt)
            nxt = after

    def guarded_release(self, name: str, first_def: Operation, loop: tile.ForOp) -> None:
        """Before the first definition of ``name`` in the loop body: pop the version the previous
        iteration left (not in the first iteration)."""
        cond = insert_before(first_def, arith.CmpiOp(loop.iv, loop.lb, "ne"))
        guard = insert_before(first_def, tile.IfOp(cond.result))
        then = guard.then_region.block
        for kind in ("consume", "release"):
            cb = self.cbs[name]
            ev = tile.CbEventOp(kind, cb["index"], cb["block_tiles"][0] * cb["block_tiles"][1], name)
            ev.location = first_def.location
            then.add_op(ev)
