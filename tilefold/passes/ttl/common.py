"""What the TT-Lang passes share: finding kernels, the dataflow buffer behind a block, new buffers, maps.

Reads: ttl IR. Writes: nothing by itself; the helpers create ops for the passes that call them.
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i32
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.rewriter import InsertPoint

from tilefold.errors import CompileError
from tilefold.ir import ttl
from tilefold.ir.locations import source_location
from tilefold.ir.ttkernel import constant_int

SCRATCH_PREFIX = "scratch"
# compute calls that hand DST over or move CB pointers: they neither configure the engines nor use them
HAND_OVER_AND_CB_CALLS = frozenset({"tile_regs_acquire", "tile_regs_commit", "tile_regs_wait", "tile_regs_release",
                                    "cb_wait_front", "cb_reserve_back", "cb_push_back", "cb_pop_front"})


def kernel_option(kernel, name: str):
    """The operation's explicit choice ``name`` on a kernel (the ``ttl.<name>`` attribute
    ``@ttl.operation(...)`` set): a bool, a string, or None when the operation left it open."""
    attr = kernel.attributes.get(f"ttl.{name}")
    if isinstance(attr, IntegerAttr):
        return bool(attr.value.data)
    if isinstance(attr, StringAttr):
        return attr.data
    return None


def runs_at_least_once(loop: scf.ForOp) -> bool:
    """Whether a loop's constant bounds give it at least one trip."""
    lb, ub = constant_int(loop.lb), constant_int(loop.ub)
    return lb is not None and ub is not None and ub > lb


def kernels(module: ModuleOp, role: str | None = None) -> list[func.FuncOp]:
    """The kernel functions of a module (``role``: ``"compute"`` or ``"datamovement"``)."""
    out = []
    for op in module.ops:
        if isinstance(op, func.FuncOp):
            attr = op.attributes.get(ttl.KERNEL_ROLE_ATTR)
            kind = attr.data if isinstance(attr, StringAttr) else None
            if role is None or kind == role:
                out.append(op)
    return out


def bind_of(value: SSAValue) -> ttl.BindCBOp | None:
    """The ``ttl.bind_cb`` a block value lives in (through slices, attachments and acquisitions)."""
    owner = value.owner
    while True:
        if isinstance(owner, ttl.BindCBOp):
            return owner
        if isinstance(owner, (ttl.CBWaitOp, ttl.CBReserveOp)):
            owner = owner.cb.owner
        elif isinstance(owner, ttl.AttachCBOp):
            owner = owner.cb.owner
        elif isinstance(owner, (ttl.BlockSliceOp, ttl.RowPrefixOp)):
            owner = owner.block.owner
        elif isinstance(owner, ttl.ReshapeOp):
            owner = owner.input.owner
        elif owner is not None and owner.name == "tensor.extract":
            owner = owner.operands[0].owner
        else:
            return None


def acquisition_of(value: SSAValue) -> Operation | None:
    """The ``ttl.cb_wait`` / ``ttl.cb_reserve`` a block value comes from (through slices and reshapes)."""
    owner = value.owner
    while isinstance(owner, (ttl.BlockSliceOp, ttl.ReshapeOp, ttl.RowPrefixOp)) or \
            (owner is not None and owner.name == "tensor.extract"):
        owner = owner.operands[0].owner
    return owner if isinstance(owner, (ttl.CBWaitOp, ttl.CBReserveOp)) else None


def next_cb_index(module: ModuleOp) -> int:
    used = [op.index for op in module.walk() if isinstance(op, ttl.BindCBOp)]
    return max(used, default=-1) + 1


def new_scratch_cb(kernel: func.FuncOp, module: ModuleOp, shape, element, name: str, max_cbs: int,
                   block_count: int = 1) -> ttl.BindCBOp:
    """A new dataflow buffer (``ttl.bind_cb``) at the start of ``kernel`` with the next free index
    (below ``max_cbs``, the device's circular buffer count)."""
    index = next_cb_index(module)
    if index >= max_cbs:
        raise CompileError(f"this kernel needs an internal dataflow buffer ({name}) but all {max_cbs} circular buffers of a "
                           "node are in use; split the expression into fewer stores or use fewer buffers",
                           source_location(kernel))
    cb_type = ttl.CircularBufferType(shape, element, block_count)
    op = ttl.BindCBOp(index, cb_type, f"{SCRATCH_PREFIX}:{name}")
    op.location = kernel.location
    entry = kernel.body.block
    first = entry.first_op
    while first is not None and isinstance(first, ttl.BindCBOp):
        first = first.next_op
    if first is None:
        entry.add_op(op)
    else:
        entry.insert_op_before(op, first)
    op.result.name_hint = name.replace(" ", "_").replace(":", "_")
    return op


def runs_before(first: Operation, second: Operation) -> bool:
    """Whether ``first`` ends before ``second`` starts in program order: their outermost differing
    ancestors are ops of one block, ``first``'s earlier (not when one contains the other, or they
    sit in different regions of one op)."""
    def ancestry(op):
        chain = []
        while op is not None:
            chain.append(op)
            op = op.parent_op()
        return chain[::-1]

    for a, b in zip(ancestry(first), ancestry(second)):
        if a is b:
            continue
        return a.parent_block() is b.parent_block() and a.is_before_in_block(b)
    return False


def free_scratch_cb(kernel: func.FuncOp, cb_type, anchor: Operation) -> ttl.BindCBOp | None:
    """An internal dataflow buffer of ``kernel`` of type ``cb_type`` that the kernel is done with
    before ``anchor`` on every path (all its uses run before it), so a block reserved there may
    reuse it; None when there is none."""
    for op in kernel.body.block.ops:
        if not isinstance(op, ttl.BindCBOp):
            break
        scratch = op.buffer_name is not None and op.buffer_name.data.startswith(f"{SCRATCH_PREFIX}:")
        if scratch and op.result.type == cb_type and op.result.uses \
                and all(runs_before(use.operation, anchor) for use in op.result.uses):
            return op
    return None


def insert_before(op: Operation, anchor: Operation) -> Operation:
    """Insert ``op`` before ``anchor`` (xDSL's Builder); an op without a location takes the anchor's."""
    Builder(InsertPoint.before(anchor)).insert(op)
    if op.location is None or str(op.location) == "loc(unknown)":
        op.location = anchor.location
    return op


def insert_after(op: Operation, anchor: Operation) -> Operation:
    """Insert ``op`` after ``anchor`` (xDSL's Builder); an op without a location takes the anchor's."""
    Builder(InsertPoint.after(anchor)).insert(op)
    if str(op.location) == "loc(unknown)":
        op.location = anchor.location
    return op


def ancestor_in(op: Operation, block: Block) -> Operation | None:
    """The op of ``block`` that is ``op`` or contains it."""
    while op is not None and op.parent_block() is not block:
        op = op.parent_op()
    return op


def linear_map(shape, num_dims: int | None = None, dims=None, symbols: int = 0, offsets=None) -> AffineMap:
    """``(d0, ..., dn)[s...] -> Σ (d_i [+ s_i]) · stride_i`` for a row-major ``shape``.

    ``dims`` gives, per dimension of ``shape``, the iteration dimension it reads (or None for a
    constant 0); ``offsets`` gives, per dimension, a symbol index added to it (sub-block offsets)."""
    rank = len(shape)
    num_dims = rank if num_dims is None else num_dims
    dims = list(range(rank)) if dims is None else dims
    strides = [1] * rank
    for i in range(rank - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    expr = AffineExpr.constant(0)
    first = True
    for i in range(rank):
        term = AffineExpr.dimension(dims[i]) if dims[i] is not None else None
        if offsets is not None and offsets[i] is not None:
            sym = AffineExpr.symbol(offsets[i])
            term = sym if term is None else term + sym
        if term is None:
            continue
        if strides[i] != 1:
            term = term * strides[i]
        expr = term if first else expr + term
        first = False
    return AffineMap(num_dims, symbols, (expr,))


def i32_attr(value: int) -> IntegerAttr:
    return IntegerAttr(value, i32)
