"""Dataflow buffers taking turns in one L1 area of the node (``dfb_reuse.l1_arena``): buffers whose
uses are ordered (``dfb_order``: in one kernel, or across kernels through the blocks they hand each
other), of different shapes, when the node's L1 is short (first fit: a buffer that may be in use
with another gets bytes of its own; a reader free to run ahead keeps its buffers apart), and the
members of a
``ttl.make_dfb_allocation_group()`` always. Checked against numpy, by where the Program places the
circular buffers, by the host program ``check-host`` accepts, and by the simulator's error when
two buffers of a group are in use at once."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import CircularBufferError, L1OverflowError
from tilefold.program.from_ttl import ARENA_BUFFER
from test_ttl_kernel_handles import handoff_then_copy
from ttl_helpers import compiled, expect_error

A, B, C = 150, 100, 200         # tiles of one block: A and B are live together, C after both


@ttl.atom(grid=(1, 1))
def three_scratches(out):
    a_dfb = ttl.make_dfb("bf16", shape=(1, A), block_count=2)
    b_dfb = ttl.make_dfb("bf16", shape=(1, B), block_count=2)
    c_dfb = ttl.make_dfb("bf16", shape=(1, C), block_count=2)
    r_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    a = a_dfb.reserve(); a.store(ttl.block.fill(1.0, shape=(1, A)))
    b = b_dfb.reserve(); b.store(ttl.block.fill(1.0, shape=(1, B)))
    r = r_dfb.reserve(); r.store(ttl.math.reduce_sum(a_dfb.wait(), dims=[1]))
    ttl.copy(r_dfb.wait(), out[0:1, 0:1])
    r = r_dfb.reserve(); r.store(ttl.math.reduce_sum(b_dfb.wait(), dims=[1]))
    ttl.copy(r_dfb.wait(), out[0:1, 1:2])
    c = c_dfb.reserve(); c.store(ttl.block.fill(1.0, shape=(1, C)))
    r = r_dfb.reserve(); r.store(ttl.math.reduce_sum(c_dfb.wait(), dims=[1]))
    ttl.copy(r_dfb.wait(), out[0:1, 2:3])


def _out():
    return ttnn.zeros((32, 96), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


def test_buffers_of_disjoint_lifetimes_take_turns_in_one_l1_area(tmp_path):
    out = _out()
    three_scratches(out)
    np.testing.assert_array_equal(ttnn.to_numpy(out)[:, ::32], np.tile([A * 32.0, B * 32.0, C * 32.0], (32, 1)))
    program = compiled(three_scratches, _out()).program
    place = {cb.name: (cb.backing_buffer, cb.backing_offset) for cb in program.circular_buffers}
    a_size = A * 2 * 2048
    assert place["a_dfb"] == (ARENA_BUFFER, 0) and place["b_dfb"] == (ARENA_BUFFER, a_size)
    assert place["c_dfb"] == (ARENA_BUFFER, 0) and place["r_dfb"] == (None, 0)
    arena = program.buffer(ARENA_BUFFER)
    assert arena.buffer_type == "L1" and arena.role == "arena"
    assert arena.size == a_size + B * 2 * 2048 < (A + B + C) * 2 * 2048      # C reuses A's and B's bytes
    from checkhost import check_hosts, require_hosts_accepted
    from tilefold.codegen.cpp import HostData, write_project

    write_project(program, tmp_path, HostData(inputs={"out": bytes(program.buffer("out").size)}))
    main = (tmp_path / "main.cpp").read_text()
    assert "CBDescriptor" in main and f".address_offset = {a_size}" in main      # b_dfb, past a_dfb
    require_hosts_accepted(check_hosts([tmp_path / "main.cpp"]))


def test_an_allocation_group_shares_one_offset():
    """The group of ``handoff_then_copy`` (a two-tile block, then two one-tile blocks): one offset,
    the larger's bytes (its numbers are checked where it is defined)."""
    v = np.random.default_rng(4).uniform(-1, 1, (32, 64)).astype(np.float32)
    x = ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    program = compiled(handoff_then_copy, x, ttnn.zeros((32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)).program
    place = {cb.name: (cb.backing_buffer, cb.backing_offset) for cb in program.circular_buffers}
    assert place["first"] == place["second"] == (ARENA_BUFFER, 0)
    assert program.buffer(ARENA_BUFFER).size == 2 * 2048


def test_group_members_in_use_at_once_stop_the_run_at_the_reserve():
    def run():
        @ttl.operation(grid=(1, 1))
        def overlap(y):
            group = ttl.make_dfb_allocation_group()
            first = ttl.make_dfb("bf16", shape=(1, 1), block_count=1, allocation_group=group)
            second = ttl.make_dfb("bf16", shape=(1, 1), block_count=1, allocation_group=group)
            out = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=1)

            @ttl.compute()
            def compute():
                with first.reserve() as f:
                    f.store(ttl.block.fill(1.0, shape=f.shape, dtype=f.dtype))
                with second.reserve() as s:  # error
                    s.store(ttl.block.fill(2.0, shape=s.shape, dtype=s.dtype))
                with first.wait() as f, second.wait() as s, out.reserve() as o:
                    o.store(f + s)

            @ttl.datamovement()
            def write():
                with out.wait() as o:
                    ttl.copy(o, y[0, 0]).wait()

        overlap(ttnn.zeros((32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT))

    expect_error(run, test_group_members_in_use_at_once_stop_the_run_at_the_reserve, CircularBufferError,
                 "shares these L1 bytes and still holds 1 page", "allocation group")


def test_buffers_that_fit_keep_their_own_l1():
    """Without a group and with L1 to spare, no buffer is moved into an arena."""
    @ttl.atom(grid=(1, 1))
    def small(out):
        a_dfb = ttl.make_dfb("bf16", shape=(1, 2), block_count=2)
        r_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
        a = a_dfb.reserve(); a.store(ttl.block.fill(1.0, shape=(1, 2)))
        r = r_dfb.reserve(); r.store(ttl.math.reduce_sum(a_dfb.wait(), dims=[1]))
        ttl.copy(r_dfb.wait(), out[0:1, 0:1])

    program = compiled(small, ttnn.zeros((32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)).program
    assert ARENA_BUFFER not in program.buffers
    assert all(cb.backing_buffer is None for cb in program.circular_buffers)


def test_the_arena_counts_as_l1_of_the_node():
    program = compiled(three_scratches, _out()).program
    usage = program.l1_usage(program.all_cores()[0])
    assert usage["l1_buffers"] == program.buffer(ARENA_BUFFER).size       # the arena, once
    assert usage["circular_buffers"] <= 4 * 2048                            # r_dfb and the reduction's scaler
    assert sum(usage.values()) <= program.arch.l1_free


compute_k = ttl.Kernel(ttl.KernelKind.COMPUTE)
reader_k = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
writer_k = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
phase = ttl.DFBReconfiguration(participants=(compute_k, reader_k, writer_k))


@ttl.operation(grid=(1, 1))
def receive_in_two_phases(inp, out):
    """A node's pipe to itself received into ``first_rx``, then, after a reconfiguration, into
    ``second_rx`` of the same allocation group: each send writes where its receive posted."""
    pipe = ttl.Pipe(src=(0, 0), dst=(0, 0))
    net = ttl.PipeNet([pipe])
    group = ttl.make_dfb_allocation_group()
    send = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
    first_rx = ttl.make_dfb("bf16", shape=(1, 1), block_count=1, allocation_group=group)
    second_rx = ttl.make_dfb("bf16", shape=(1, 1), block_count=1, allocation_group=group)

    @ttl.compute(kernel=compute_k)
    def compute():
        ttl.reconfigure_dfbs(phase)

    @ttl.datamovement(kernel=reader_k)
    def exchange():
        for rx, column in ((first_rx, 0), (second_rx, 1)):
            if column:
                ttl.reconfigure_dfbs(phase)
            with rx.reserve() as r:
                request = ttl.copy(pipe, r)
                with send.reserve() as s:
                    ttl.copy(inp[0, column], s).wait()
                with send.wait() as s:
                    ttl.copy(s, pipe).wait()
                request.wait()
            with rx.wait() as r:
                ttl.copy(r, out[0, column]).wait()

    @ttl.datamovement(kernel=writer_k)
    def meet():
        ttl.reconfigure_dfbs(phase)


def test_a_pipe_to_itself_received_into_two_buffers_of_a_group():
    v = np.random.default_rng(6).uniform(-1, 1, (32, 64)).astype(np.float32)
    x = ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    y = ttnn.zeros((32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    receive_in_two_phases(x, y)
    np.testing.assert_array_equal(ttnn.to_numpy(y), ttnn.to_numpy(x))


# Buffers of different kernels: two blocks of W tiles each fit a node's L1 alone, not together.
W = 400


def _phases(handoff: bool, second_load: bool):
    """Phase 1: the reader loads a row of W tiles of ``x`` in one block, the compute kernel sums it.
    Phase 2: with ``second_load`` the reader loads the next row into a second buffer (after a
    handoff block from the compute kernel, with ``handoff``), else the compute kernel fills one;
    the writer copies the sums and the phase-2 block out."""
    reader = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
    compute = ttl.Kernel(ttl.KernelKind.COMPUTE)
    writer = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)

    @ttl.operation(grid=(1, 1))
    def two_phases(x, y):
        load = ttl.make_dataflow_buffer_like(x, shape=(1, W), block_count=1)
        second = ttl.make_dataflow_buffer_like(x, shape=(1, W), block_count=1)      # error
        done = ttl.make_dfb("bf16", shape=(1, 1), block_count=1) if handoff else None
        total = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.datamovement(kernel=reader)
        def read():
            with load.reserve() as blk:
                ttl.copy(x[0:1, 0:W], blk).wait()
            if second_load:
                if handoff:
                    with done.wait():
                        pass
                with second.reserve() as blk:
                    ttl.copy(x[1:2, 0:W], blk).wait()

        @ttl.compute(kernel=compute)
        def sums():
            with load.wait() as a, total.reserve() as t:
                t.store(ttl.math.reduce_sum(a, dims=[1]))
            if handoff:
                with done.reserve() as d:
                    d.store(ttl.block.fill(0.0, shape=d.shape, dtype=d.dtype))
            if not second_load:
                with second.reserve() as s:
                    s.store(ttl.block.fill(3.0, shape=s.shape, dtype=s.dtype))
            else:
                with second.wait() as b, total.reserve() as t:
                    t.store(ttl.math.reduce_sum(b, dims=[1]))

        @ttl.datamovement(kernel=writer)
        def write():
            with total.wait() as t:
                ttl.copy(t, y[0, 0]).wait()
            if second_load:
                with total.wait() as t:
                    ttl.copy(t, y[0, 1]).wait()
            else:
                with second.wait() as s:
                    ttl.copy(s, y[0:1, 2:2 + W]).wait()

    return two_phases


def _two_rows():
    v = np.zeros((64, 32 * W), np.float32)       # one tile of each row not zero: sums bfloat16 holds exactly
    v[:32, :32], v[32:, 32:64] = 1.0, 0.5
    return ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


def _y():
    return ttnn.zeros((32, 32 * (W + 2)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


def test_buffers_of_two_kernels_ordered_by_their_blocks_take_turns():
    """The reader's block is waited by the compute kernel, which pops it before it fills the block
    the writer waits on: every use of the first happens before every use of the second."""
    operation = _phases(handoff=False, second_load=False)
    y = _y()
    operation(_two_rows(), y)
    out = ttnn.to_numpy(y)
    np.testing.assert_array_equal(out[:, 0], np.full(32, 32.0))
    np.testing.assert_array_equal(out[:, 64:], np.full((32, 32 * W), 3.0))
    place = {cb.name: (cb.backing_buffer, cb.backing_offset) for cb in compiled(operation, _two_rows(), _y())
             .program.circular_buffers}
    assert place["load"] == place["second"] == (ARENA_BUFFER, 0)
    assert place["total"] == (None, 0)


def test_a_reader_running_ahead_of_the_compute_kernel_keeps_its_buffers_apart():
    """The reader may reserve its second block while the compute kernel still sums the first:
    nothing orders them, so they may not share L1, and together they do not fit."""
    operation = _phases(handoff=False, second_load=True)
    expect_error(lambda: operation(_two_rows(), _y()), _phases, L1OverflowError, "need", "B free")


def test_a_handoff_block_orders_the_reader_after_the_compute_kernel():
    """With the compute kernel's handoff block waited before the second reserve, the reader's two
    buffers are in use one after the other, and share L1."""
    operation = _phases(handoff=True, second_load=True)
    y = _y()
    operation(_two_rows(), y)
    np.testing.assert_array_equal(ttnn.to_numpy(y)[:, [0, 32]], np.tile([32.0, 16.0], (32, 1)))
    place = {cb.name: (cb.backing_buffer, cb.backing_offset) for cb in compiled(operation, _two_rows(), _y())
             .program.circular_buffers}
    assert place["load"] == place["second"] == (ARENA_BUFFER, 0)
