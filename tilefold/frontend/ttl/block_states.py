"""The life cycle of a block, checked while a kernel is built (TT-Lang's block states).

Reads: what a kernel does with a block, in program order. Writes: the block's new state, or
one :class:`KernelError` at the user's line saying what is wrong and what to do instead.

States: **MW** (must be written: reserved, holds garbage), **MR** (must be read: waited for, or
written), **RW** (read at least once; may be read again or overwritten), **NAW** (no access while
a ``ttl.copy`` writes it), **ROR** (read only while ``n`` copies read it), **OS** (out of scope:
pushed or popped). A compute kernel may store into a block it obtained with ``wait()``: the
block's value is replaced until it is popped (nothing else reads those pages); a data-movement
kernel may overwrite a waited block only after reading it (RW), never before (MR) — that would
destroy data it was sent. A block read or sent unwritten, or copied into twice at once, is an
error, and a warning in a build that runs nothing (``TTLANG_COMPILE_ONLY``), as TT-Lang's compiler
builds such kernels. A block pushed unwritten is a token: the operation checks that no consumer
reads the blocks of its buffer (``check_tokens_unread``). One written by one branch of a runtime ``if`` only, with nothing
written before, is a warning: on the other path it holds what its pages held, which programs that
republish cached pages rely on.
"""

from __future__ import annotations

from tilefold.errors import KernelError, SourceLocation, warn_at
from tilefold.frontend.ttl.session import compile_only_or_raise as _hazard


MW, MR, RW, NAW, ROR, OS = "MW", "MR", "RW", "NAW", "ROR", "OS"


class BlockState:
    """The state of one acquired block."""

    def __init__(self, name: str, acquired: str, kernel_kind: str, location: SourceLocation):
        self.name = name
        self.acquired = acquired          # "reserve" | "wait"
        self.kernel_kind = kernel_kind    # "compute" | "datamovement"
        self.location = location
        self.state = MW if acquired == "reserve" else MR
        self.readers = 0                  # copies reading the block (ROR)
        self.writer_line: SourceLocation | None = None
        self.receiving: int | None = None           # the pipe net a posted receive into it waits on
        self.partly: SourceLocation | None = None   # the if one branch of which released it
        self.partly_conds: list = []      # the conditions of the ifs whose then-branches released it
        self.partly_state = None          # its snapshot() before the first such release
        self.unwritten_on: SourceLocation | None = None   # the if one branch of which left it unwritten
        self.writes = 0                   # stores and completed copies into it
        self.first_read: SourceLocation | None = None   # where a waited block was first read or sent
        self.pushed_unwritten = False     # released by a push with nothing written into it (a token)

    def snapshot(self) -> tuple:
        """What a branch of an ``if`` changes: the state, the line that wrote the block, its readers."""
        return self.state, self.writer_line, self.readers

    def restore(self, snapshot: tuple) -> None:
        """Back to a :meth:`snapshot` (the other path of an ``if`` starts from it)."""
        self.state, self.writer_line, self.readers = snapshot

    def _gone(self, where: SourceLocation) -> None:
        if self.state == OS and self.partly is not None:
            verb = "pushed" if self.acquired == "reserve" else "popped"
            raise KernelError(f"{self.name} is {verb} by one branch of the if at {self.partly} only, so after it "
                              f"whether {self.name} is held is known only at run time; use it inside that branch",
                              where)
        if self.state == OS:
            raise KernelError(f"{self.name} was already released (pushed or popped); acquire a new block with "
                              "reserve() or wait()", where)

    # -- compute kernels ----------------------------------------------------------------------

    def store(self, where: SourceLocation) -> None:
        self._gone(where)
        self.state = RW if self.acquired == "wait" else MR
        self.writer_line = where
        self.unwritten_on = None
        self.writes += 1

    def _maybe_unwritten(self, what: str, where: SourceLocation) -> None:
        """A warning: on one path of an if nothing wrote the block, so there it holds what its slot
        held (pages an earlier block left there — TT-Lang's programs republish cached pages this way —
        or L1 nothing wrote, which the simulator holds as zeros and a device as whatever was there)."""
        if self.unwritten_on is not None:
            warn_at(f"{self.name} is {what} here, but on one path through the if at {self.unwritten_on} nothing was "
                    f"written into it (it was reserved at {self.location}), so there it holds what its pages held "
                    "before; write it on every path of the if (an else too) unless that is meant", where)
            self.unwritten_on = None

    def read(self, where: SourceLocation) -> None:
        self._gone(where)
        self._maybe_unwritten("read", where)
        self.first_read = self.first_read or where
        if self.state == MW:
            _hazard(f"{self.name} is read before anything was written into it (it was reserved at "
                    f"{self.location}); store() into it or copy data into it first", where)
        if self.state == NAW:
            raise KernelError(f"{self.name} is read while ttl.copy (at {self.writer_line}) is still writing it; call "
                              "wait() on that transfer first", where)
        if self.state == MR:
            self.state = RW

    # -- data movement ------------------------------------------------------------------------

    def copy_into(self, where: SourceLocation, own_send: bool = False) -> None:
        """A copy into the block starts; ``own_send``: the copy writing it now is the one its pending
        pipe receive waits for the node's own send of (no other writer lands there)."""
        self._gone(where)
        if self.state == NAW and not own_send:
            _hazard(f"{self.name} is already being written by ttl.copy at {self.writer_line}: the two copies may "
                    "land in either order; wait() on that transfer before copying into the block again", where)
        if self.state == ROR:
            raise KernelError(f"{self.name} is being read by a ttl.copy that has not been waited for; wait() on it "
                              "before overwriting the block", where)
        if self.acquired == "wait" and self.state == MR:
            raise KernelError(f"{self.name} was obtained with wait() and has not been read: copying into it would "
                              "destroy the data it was sent; read it first, or copy into a block obtained with "
                              "reserve()", where)
        self.state = NAW
        self.writer_line = where

    def copy_from(self, where: SourceLocation) -> None:
        self._gone(where)
        self._maybe_unwritten("sent", where)
        self.first_read = self.first_read or where
        if self.state == MW:
            _hazard(f"{self.name} is sent before anything was written into it (it was reserved at "
                    f"{self.location}); copy data into it and wait() for that first", where)
        if self.state == NAW:
            raise KernelError(f"{self.name} is sent while ttl.copy (at {self.writer_line}) is still writing it; "
                              "wait() on that transfer first", where)
        self.state = ROR
        self.readers += 1

    def transfer_done(self, into: bool) -> None:
        if into:
            self.state = MR
            self.unwritten_on = None
            self.writes += 1
        else:
            self.readers -= 1
            if self.readers == 0:
                self.state = RW

    # -- release ------------------------------------------------------------------------------

    def release(self, where: SourceLocation) -> None:
        self._gone(where)
        verb = "pushed" if self.acquired == "reserve" else "popped"
        if self.state == NAW:
            raise KernelError(f"{self.name} is {verb} while ttl.copy (at {self.writer_line}) is still writing it: "
                              "that transfer is never waited for before the block is released; call .wait() on it "
                              "first", where)
        if self.state == ROR:
            raise KernelError(f"{self.name} is {verb} while a ttl.copy still reads it: that transfer is never "
                              "waited for before the block is released; call .wait() on it first", where)
        # a block pushed unwritten is a token (its consumer waits on it and ignores its pages, as
        # TT-Lang's programs signal "done"): the operation checks that no consumer reads such blocks
        self.pushed_unwritten = self.acquired == "reserve" and self.state == MW
        if self.acquired == "reserve":
            self._maybe_unwritten("pushed", where)
        self.state = OS

    def written_on_one_path(self, where: SourceLocation) -> None:
        """After the if at ``where``, one branch of which wrote the block and the other did not
        (nothing had before): on that other path it holds garbage."""
        self.unwritten_on = self.unwritten_on or where

    @property
    def unread(self) -> bool:
        """A reserved block that holds what was written into it and was not read since."""
        return self.acquired == "reserve" and self.state == MR

    @property
    def released(self) -> bool:
        return self.state == OS


def joined_state(a: tuple, b: tuple) -> tuple:
    """Of a block's :meth:`BlockState.snapshot` s at the ends of an ``if`` 's two branches, the one
    what follows must respect: a copy still writing or reading it on one path (NAW, ROR), else
    read on one path (RW: what was written is used), else written and not read yet (MR), else
    reserved and unwritten (MW)."""
    if a == b:
        return a
    for state in (NAW, ROR, RW, MR, MW):
        for snap in (a, b):
            if snap[0] == state:
                return snap
    return b
