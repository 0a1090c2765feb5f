"""What names in a kernel function can be bound to while the front end builds it.

Reads: nothing. Writes: nothing. Besides ordinary Python values (ints, floats, tuples, the
operation's tensors, dataflow buffers, pipe nets, ``ttl`` functions), a kernel's names hold:

* :class:`~tilefold.frontend.ttl.scalars.Scalar` — a runtime integer;
* :class:`MutableScalar` — a runtime integer variable assigned in a loop or a branch
  (a rank-0 ``memref.alloca``);
* :class:`ElementValue` / :class:`MutableElement` — a float element read with
  ``ttl.raw_element_read`` (its bits and format), and such a variable assigned in a loop or branch;
* :class:`Block` — a block acquired with ``reserve()`` / ``wait()``, with its life-cycle state;
* :class:`BlockExpression` — the value of a block expression (``a_blk * b_blk + 1``);
* :class:`Accumulator` — a block-expression variable whose value crosses loop iterations, kept
  in a dataflow buffer of its own;
* :class:`Transfer` / :class:`GroupTransfer` — handles of ``ttl.copy``;
* :class:`ReadyReceive` — what ``ttl.wait_any`` returns;
* :class:`TensorSlice` — ``tensor[...]`` in a data movement kernel;
* :class:`PipeIdentity` — the pipe a ``net.if_src`` / ``net.if_dst`` body runs for;
* :class:`LocalFunction` — a ``def`` inside a kernel: a pipe condition body, or a helper called there.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field

from xdsl.ir import SSAValue

from tilefold.errors import SourceLocation
from tilefold.frontend.ttl.block_states import BlockState
from tilefold.frontend.ttl.dataflow_buffers import device_block_shape  # noqa: F401 - re-exported
from tilefold.layout.formats import DataFormat


@dataclass
class MutableScalar:
    slot: SSAValue            # memref<index>
    name: str


@dataclass
class ElementValue:
    """One float element of a block read by a data movement kernel: its bits (an ``i32``, the
    low 16 of a bfloat16) and its data format (float32 or bfloat16)."""

    value: SSAValue
    data_format: DataFormat


@dataclass
class MutableElement:
    slot: SSAValue            # memref<i32>
    name: str
    data_format: DataFormat


@dataclass
class BlockExpression:
    """A block-level value (the result of a ``ttl`` block op), of ``shape`` in tiles as the program
    sees it (``(n,)`` for a 1-D block; its IR type has :func:`device_block_shape`). A ``row_major``
    value has ``shape`` in elements and the IR type of its block's tile-sized pages, ``(1, n)``
    tiles (``ttl.row_major_tiles``). ``tile`` is the (height, width) of the tiles of the blocks it
    reads (None when it reads none: a fill); element-wise math keeps a smaller tile shape."""

    value: SSAValue
    shape: tuple[int, ...]
    data_format: DataFormat
    row_major: bool = False
    tile: tuple[int, int] | None = (32, 32)


@dataclass
class Block:
    """A block acquired from a dataflow buffer."""

    dfb: object               # DataflowBuffer
    value: SSAValue           # the ttl.cb_reserve / ttl.cb_wait result
    status: BlockState
    depth: int                # blocks of the same buffer end held before this one
    stored: SSAValue | None = None        # the last value stored into it (compute kernels)
    accumulator: Accumulator | None = None
    summed_in_l1: bool = False             # its loop adds to it in its own L1 (packer L1 accumulation)
    assigned: bool = False                 # acquired as name = dfb.reserve() / wait() (may be released implicitly)
    inline: bool = False                   # acquired inside an expression (``dfb.reserve().store(x)``): no name
    level: int = 0                         # runtime loops and branches around its acquisition
    explicit: bool = False                 # its kernel pushes / pops it itself (the rest are released implicitly)
    holds_rows: bool = False               # store_rows() stored into it (accumulate_rows() may add to it)
    released_at: object = None             # where it was pushed / popped (it leaves its FIFO with older blocks)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.dfb.shape

    @property
    def block_bytes(self) -> int:
        """Bytes of L1 the block spans."""
        return self.dfb.block_bytes

    @property
    def data_format(self) -> DataFormat:
        return self.dfb.data_format

    @property
    def name(self) -> str:
        return self.status.name

    @property
    def acquired(self) -> str:
        return self.status.acquired


@dataclass
class BlockView(Block):
    """``ttl.block.subview(block, offsets=..., shape=...)``: tiles of a held block that lie one after
    another in its L1 (part of one row, or whole rows), copied and sent as a block of ``view_shape``;
    it shares the block's state (a copy into it writes the block)."""

    parent: Block | None = None
    view_shape: tuple[int, ...] = ()

    @property
    def shape(self) -> tuple[int, ...]:
        return self.view_shape

    @property
    def block_bytes(self) -> int:
        return math.prod(self.view_shape) * self.dfb.page_size


@dataclass
class Accumulator:
    """A block value kept in a hidden dataflow buffer between loop iterations.

    Two blocks (the general form): assigning reserves a block, stores the value, pops the previous
    block and pushes the new one; reading waits for the current block. One block (``l1_acc``, a
    value the loop only adds to): a step frees the block and reserves it again — the same L1 —
    and packs the addend with the packer's L1 accumulation. ``holds`` says whether a block is
    pushed (it must be the same at the start and the end of every loop iteration)."""

    dfb: object
    cb: SSAValue
    name: str
    location: SourceLocation
    holds: bool = False
    l1_acc: bool = False


@dataclass
class Transfer:
    value: SSAValue
    kind: str                 # "read" | "write" | "send" | "recv" | "local" (block to block)
    block: Block
    location: SourceLocation
    waited: bool = False
    group: GroupTransfer | None = None
    converts: bool = False    # a copy between data formats, through a staging buffer
    more: tuple = ()          # the other sends of a named pipe that takes several routes; wait() waits for all
    waits: list = field(default_factory=list)        # the IR blocks its exact waits were emitted in
    selections: list = field(default_factory=list)   # (ttl.wait_any result, position, location) it took part in
    landed: object = None     # a receive into a tensor slice: what its first wait does after the block lands
    implicit: bool = False    # waited for by the compiler where its block's scope ended, not by wait()
    peer: Block | None = None  # a copy between blocks ("local"): the block copied into (``block`` is read)
    wait_ops: list = field(default_factory=list)     # the ttl.wait ops of a receive, in order
    done_slot: SSAValue | None = None   # a receive waited in a branch that ended: 1 once waited, at run time

    @property
    def into_block(self) -> bool:
        return self.kind in ("read", "recv")

    def touches(self, block: Block) -> bool:
        """Whether it copies into or out of ``block`` (either end of a copy between blocks)."""
        return self.block is block or self.peer is block


@dataclass
class ReadyReceive:
    """What ``ttl.wait_any(requests, start)`` returns: ``index()`` is the position in ``requests`` of
    the receive it completed (a runtime integer)."""

    index: object             # Scalar
    requests: tuple
    location: SourceLocation


@dataclass
class GroupTransfer:
    location: SourceLocation
    transfers: list = field(default_factory=list)
    kinds: set = field(default_factory=set)
    waited: bool = False


@dataclass
class TensorSlice:
    argument: object          # TensorArgument
    tensor_value: SSAValue    # the ttl.tensor op result
    offsets: list             # ints or Scalars, in the tensor's shape unit
    sizes: tuple[int, ...]
    location: SourceLocation
    checked: tuple[int, ...] = ()   # dimensions whose runtime offset the copy checks when it runs
    ranges: tuple[bool, ...] = ()   # per dimension: written as a range (a slice), not a scalar index


@dataclass
class PipeIdentity:
    net: object               # PipeNet
    slot: int
    role: str                 # "src" | "dst"


@dataclass(frozen=True)
class RaisedValue:
    """What a helper that ends in ``raise`` gives its caller: no value (a kernel has no exceptions;
    the raise is an assert that fails where it is reached), named in the error of any use."""

    helper: str                # the helper's name
    raised: str                # the raise's exception, as written
    location: SourceLocation | None


@dataclass
class LocalFunction:
    node: ast.FunctionDef
    scope: object             # the Scope it was defined in
    defaults: dict | None = None   # its parameters' default values, evaluated where the def is (as Python does)

    def __call__(self, *args, **kwargs):
        # callable, so that functools.partial takes it; a kernel's call builds it inline instead
        raise TypeError(f"{self.node.name}, defined in a kernel, is built where the kernel calls it, not by "
                        "Python code run while the kernel is built")
