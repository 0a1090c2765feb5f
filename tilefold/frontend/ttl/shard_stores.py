"""Stores into a waited block of a tensor-backed dataflow buffer: the block *is* part of the tensor's
L1 shard, so the value goes into its bytes (TT-Lang's persistent state).

Reads: a waited block of a ``ttl.make_tensor_backed_dfb`` buffer and the value stored into it.
Writes: a hidden *twin* buffer over the same bytes (same address, same blocks) the value is packed
into — reserved, stored, pushed, then waited and popped (the kernel's own round trip: the bytes keep
the value). A pack goes to a circular buffer's write pointer, so the twin's write pointer is kept
on the buffer's read pointer (the waited block's slot): every pop of the buffer in the storing
kernel is followed by as many blocks reserved, pushed, waited and popped on the twin (one at a
time), and a store into the block ``d`` blocks after the oldest one held steps the twin ``d``
blocks on before its round trip and ``block_count - 1 - d`` after it — a whole turn, back on the
oldest held block's slot. A buffer of one block needs no stepping: its one slot is every block's.

Errors (at the store's line): a buffer of several blocks whose blocks a called C++ function
(``ttl.call_extern_func``) may move, whose pops are not seen.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block as IRBlock
from xdsl.ir import Operation

from tilefold.errors import KernelError
from tilefold.frontend.ttl.dataflow_buffers import hidden_dataflow_buffer
from tilefold.frontend.ttl.values import Block, BlockExpression
from tilefold.ir import ttl


class ShardStoreBuilder:
    """The ``store`` of a waited block of a tensor-backed buffer (see the module docstring)."""

    def store_into_shard(self, block: Block, v: BlockExpression, node) -> None:
        """Pack ``v`` into the waited ``block``'s own slot of the tensor's shard."""
        dfb = block.dfb
        twin = self.shard_twin(dfb)
        cb = self.cb_value(twin)
        self.node = node
        self.step_twin(cb, block.depth)
        into = self.emit(ttl.CBReserveOp(cb))
        into.result.name_hint = f"{twin.ir_name}_block"
        self.emit(ttl.StoreOp(v.value, into.result))
        self.emit(ttl.CBPushOp(cb))
        self.emit(ttl.CBWaitOp(cb))
        self.emit(ttl.CBPopOp(cb))
        self.step_twin(cb, dfb.block_count - 1 - block.depth)
        if dfb.block_count > 1:
            self.stored_shards.setdefault(dfb.index, (dfb, twin, self.location(node)))

    def shard_twin(self, dfb):
        """The hidden buffer over ``dfb``'s bytes that stores into its waited blocks go through."""
        twins = self.operation.shard_twins
        twin = twins.get(dfb.index)
        if twin is None:
            twin = hidden_dataflow_buffer(dfb.shape, dfb.data_format, f"{dfb.name} (stores into its shard)",
                                          dfb.location, block_count=dfb.block_count,
                                          what="a store into a tensor's shard", tile=dfb.tile)
            twin.backing, twin.byte_offset = dfb.backing, dfb.byte_offset
            twins[dfb.index] = twin
        return twin

    def step_twin(self, cb, blocks: int, after: Operation | None = None) -> None:
        """Move the twin's pointers ``blocks`` blocks on, one block at a time (reserved, pushed,
        waited, popped, nothing packed; a block at a time, as a circular buffer's pointers wrap at
        its end only on a block's boundary): emitted here, or after the op ``after``."""
        if blocks <= 0:
            return
        ops = _one_block_round_trip(cb)
        if blocks > 1:
            bounds = [arith.ConstantOp(IntegerAttr(v, IndexType())) for v in (0, blocks, 1)]
            body = IRBlock(arg_types=[IndexType()])
            body.add_ops([*ops, scf.YieldOp()])
            ops = [*bounds, scf.ForOp(*(c.result for c in bounds), [], body)]
        if after is None:
            for op in ops:
                self.emit(op)
            location = ops[-1].location
        else:
            after.parent.insert_ops_after(ops, after)
            location = after.location
        for op in ops:
            for inner in op.walk():
                inner.location = location

    def step_twins_with_pops(self, kernel) -> None:
        """After the kernel is built: each pop of a buffer this kernel stored into the waited
        blocks of also steps its twin, so the twin's write pointer follows the buffer's read
        pointer."""
        for index, (dfb, twin, where) in self.stored_shards.items():
            if index in self.extern_effects:
                raise KernelError(f"a store into a waited block of {dfb.name}, "
                                  "a tensor-backed buffer of several blocks, in a kernel whose C++ function calls "
                                  "move its blocks: the store follows the buffer's read pointer through the pops "
                                  "it sees; pop its blocks in Python, or give the buffer block_count=1", where)
            source, cb = self.cbs[index], self.cbs[twin.index]
            pops = [op for op in kernel.walk() if isinstance(op, ttl.CBPopOp) and op.cb is source]
            for pop in pops:
                self.step_twin(cb, pop.blocks, after=pop)


def _one_block_round_trip(cb) -> list[Operation]:
    return [ttl.CBReserveOp(cb), ttl.CBPushOp(cb), ttl.CBWaitOp(cb), ttl.CBPopOp(cb)]


__all__ = ["ShardStoreBuilder"]
