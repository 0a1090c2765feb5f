"""Dataflow buffers of disjoint lifetimes sharing one circular buffer (TT-Lang's ``--ttl-reuse-user-dfbs``).

Reads: the front end's ``ttl`` module of one operation call (every kernel) and its dataflow buffers.
Writes: nothing; :func:`shared_circular_buffers` returns, for the buffers that may share, which one
each shares with.

A node has 32 circular buffers (64 on Blackhole). When an operation's kernels use more dataflow
buffers than that, buffers whose lifetimes do not overlap may take turns in one circular buffer,
as TT-Lang's compiler arranges. tilefold lets a buffer share only when that is safe by
construction:

* one kernel both fills and drains it (every ``reserve`` / ``push`` / ``wait`` / ``pop`` is in that
  kernel, no pipe sends or receives its blocks, it has no tensor backing and the compiler did not
  make it);
* that kernel pushes exactly as many blocks as it pops — counted through loops (a loop whose body
  is balanced is balanced whatever its trip count) and conditionals (an ``if`` whose branches differ
  counts as its condition; two ``if`` statements on equal conditions, such as ``node_x == 0``
  computed twice, cancel);
* its lifetime is a run of the kernel's statements each executed once — top-level statements,
  or statements inside an ``if`` (a loop counts as one statement, all its iterations): two buffers
  whose runs do not overlap are never live at once, and the first is empty again when the second
  starts;
* both belong to the same kernel (another kernel's statements run at other times) and have the
  same block shape, tile, data format and block count, so one circular buffer configuration
  serves both.

Buffers are given circular buffers in the order their lifetimes start, each the first one of its
configuration whose last user ended before it starts (interval colouring, which is optimal for
intervals).

Buffers that take turns in L1 but not in a circular buffer keep circular buffers of their own at
overlapping offsets of one L1 area of the node, the *arena* (:func:`l1_arena`): the members of a
``ttl.make_dfb_allocation_group()`` (the program uses them one after another) start at one
offset, and, when the node's L1 is short, buffers whose extents are ordered (:mod:`.dfb_order`:
every use of one, by every kernel of the node and through pipes, happens before every use of the
other — any kernels, any shapes) are placed first fit, each at the lowest offset no buffer that may
be in use with it holds. The simulator checks the order again at run time: a reserve of a buffer
while another one on its bytes holds blocks stops the run at that line.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from tilefold.frontend.ttl.dfb_order import BufferOrder, Extent, before, kernel_of, position
from tilefold.frontend.ttl.protocol_check import trip_count
from tilefold.ir import ttl

_CB_OPS = (ttl.CBReserveOp, ttl.CBWaitOp, ttl.CBPushOp, ttl.CBPopOp)


@dataclass
class _Lifetime:
    index: int                 # the buffer's circular buffer index before sharing
    first: tuple               # the positions (see position) of the first and last of its kernel's
    last: tuple                # statements that use it
    config: tuple              # what must match for two buffers to share: the kernel, the bound type


def shared_circular_buffers(module: ModuleOp, candidates: set[int]) -> dict[int, int]:
    """For the buffers of ``candidates`` (indices) that may share, the index of the buffer whose
    circular buffer each one uses (itself for the first of each group)."""
    lifetimes = [life for index in sorted(candidates) if (life := _lifetime(module, index)) is not None]
    lifetimes.sort(key=lambda life: (life.first, life.index))
    owners: list[_Lifetime] = []                 # the first buffer of each group, with the group's last end
    ends: list[int] = []
    shared: dict[int, int] = {}
    for life in lifetimes:
        for k, owner in enumerate(owners):
            if owner.config == life.config and before(ends[k], life.first):
                shared[life.index] = owner.index
                ends[k] = life.last
                break
        else:
            owners.append(life)
            ends.append(life.last)
            shared[life.index] = life.index
    return shared


def l1_arena(module: ModuleOp, buffers: list[tuple[int, int, object]], by_lifetime: bool,
             align: int) -> tuple[dict[int, int], int]:
    """Offsets in the arena for ``buffers`` — ``(index, bytes, allocation group or None)``, sizes
    aligned — and the arena's size per node: each allocation group of two or more at one offset,
    and with ``by_lifetime`` the other buffers by their extents (:func:`_placed_by_extent`); an area
    that would save no L1 is left out (its buffers keep L1 of their own)."""
    groups: dict[int, list[tuple[int, int]]] = {}
    for index, size, group in buffers:
        if group is not None:
            groups.setdefault(id(group), []).append((index, size))
    areas: list[tuple[dict[int, int], int]] = [({index: 0 for index, _ in members}, max(size for _, size in members))
                                               for members in groups.values() if len(members) > 1]
    if by_lifetime:
        area = _placed_by_extent(module, [(index, size) for index, size, group in buffers
                                          if group is None or len(groups[id(group)]) == 1])
        if area is not None:
            areas.append(area)
    offsets: dict[int, int] = {}
    top = 0
    for area, size in areas:
        offsets.update({index: top + offset for index, offset in area.items()})
        top += -(-size // align) * align
    return offsets, top


def _placed_by_extent(module: ModuleOp, buffers: list[tuple[int, int]]) -> tuple[dict[int, int], int] | None:
    """First-fit offsets for ``buffers`` (``(index, bytes)``) whose extents (:mod:`.dfb_order`) are
    known, each at the lowest offset no buffer it may be in use with holds, and the area's size; None
    when that saves no L1."""
    order = BufferOrder(module)
    known = [(index, extent, size) for index, size in buffers if (extent := order.extent(index)) is not None]

    def apart(x: Extent, y: Extent) -> bool:
        return order.before(x, y) or order.before(y, x)

    # a buffer in use with every other one keeps L1 of its own
    extents = [item for item in known if any(apart(item[1], other[1]) for other in known if other is not item)]
    extents.sort(key=lambda item: (min(span[0] for span in item[1].spans.values()), item[0]))
    placed: list[tuple[Extent, int, int]] = []             # a buffer's extent, first byte, end
    offsets: dict[int, int] = {}
    for index, extent, size in extents:
        live = sorted((start, end) for other, start, end in placed if not apart(other, extent))
        offset = 0
        for start, end in live:         # the lowest gap the buffer fits in
            if offset + size <= start:
                break
            offset = max(offset, end)
        placed.append((extent, offset, offset + size))
        offsets[index] = offset
    if not placed:
        return None
    size = max(end for _, _, end in placed)
    if size >= sum(end - start for _, start, end in placed):
        return None
    return offsets, size


def _lifetime(module: ModuleOp, index: int) -> _Lifetime | None:
    """The top-level statements of the one kernel that uses buffer ``index``, or None when the
    buffer may not share (see the module docstring)."""
    binds = [op for op in module.walk() if isinstance(op, ttl.BindCBOp) and op.index == index]
    if len(binds) != 1:
        return None
    bind = binds[0]
    kernel = kernel_of(bind)
    if kernel is None:
        return None
    body = kernel.body.block
    statements = []
    for use in bind.result.uses:
        if not isinstance(use.operation, _CB_OPS) or _moves_through_pipe(use.operation):
            return None
        statements.append(position(use.operation, body))
    if not statements or _net_blocks(body, bind.result) != {}:
        return None
    # only buffers of one kernel take turns: the statements of another kernel run at other times
    return _Lifetime(index, min(statements), max(statements), (id(kernel), bind.result.type))


def _moves_through_pipe(acquire: Operation) -> bool:
    """Whether the block an acquire returns (or a slice of it) is sent or received through a pipe."""
    if not isinstance(acquire, (ttl.CBReserveOp, ttl.CBWaitOp)):
        return False
    pending = [acquire.result]
    while pending:
        value = pending.pop()
        for use in value.uses:
            op = use.operation
            if isinstance(op, (ttl.PipeSendOp, ttl.PipeRecvOp)):
                return True
            if isinstance(op, (ttl.BlockSliceOp, ttl.ReshapeOp)):
                pending.extend(op.results)
    return False


def _net_blocks(block: Block, cb: SSAValue) -> dict | None:
    """Blocks pushed minus blocks popped of ``cb`` by one run of ``block``, as ``{condition: count}``
    (the key ``()`` for what runs unconditionally, a condition key for what runs when that
    condition holds); zero terms are left out, so ``{}`` means balanced. None when that cannot be
    known (a loop whose body is not balanced and whose trip count is not a constant, or a
    conditional inside a loop that does not cancel)."""
    net: dict = {}
    for op in block.ops:
        if isinstance(op, (ttl.CBPushOp, ttl.CBPopOp)) and op.cb is cb:
            _add(net, (), op.blocks if isinstance(op, ttl.CBPushOp) else -op.blocks)
        elif isinstance(op, scf.ForOp):
            inner = _net_blocks(op.body.block, cb)
            if inner is None:
                return None
            if inner:
                trips = trip_count(op)
                if trips is None or set(inner) != {()}:
                    return None
                _add(net, (), inner[()] * trips)
        elif isinstance(op, scf.WhileOp):
            if _net_blocks(op.after_region.block, cb) != {}:
                return None                      # unbalanced iterations of an unknown count
        elif isinstance(op, scf.IfOp):
            then = _net_blocks(op.true_region.block, cb)
            other = _net_blocks(op.false_region.block, cb) if op.false_region.blocks else {}
            if then is None or other is None or set(then) - {()} or set(other) - {()}:
                return None
            _add(net, (), other.get((), 0))
            _add(net, _condition_key(op.cond), then.get((), 0) - other.get((), 0))
        elif op.regions and any(_touches(region_block, cb) for region in op.regions for region_block in region.blocks):
            return None                          # another structured op around its calls: not counted
    return net


def _add(net: dict, key, count: int) -> None:
    total = net.get(key, 0) + count
    if total:
        net[key] = total
    else:
        net.pop(key, None)


def _touches(block: Block, cb: SSAValue) -> bool:
    return any(operand is cb for op in block.walk() for operand in op.operands)


def _condition_key(value: SSAValue, depth: int = 0):
    """A key equal for two values the same pure operations compute from the same inputs (``node_x ==
    0`` written twice), else unique to ``value``."""
    owner = value.owner
    if depth > 16 or not isinstance(owner, Operation) or owner.regions or not _is_pure(owner):
        return ("value", id(value))
    fields = tuple(sorted((k, str(v)) for k, v in {**owner.properties, **owner.attributes}.items()))
    return (owner.name, fields, tuple(_condition_key(o, depth + 1) for o in owner.operands),
            list(owner.results).index(value))


def _is_pure(op: Operation) -> bool:
    return op.name.startswith("arith.") or isinstance(op, ttl.NodeCoordOp)
