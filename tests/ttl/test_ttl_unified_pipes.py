"""Pipes in an operation body without kernel functions: sends (``net.if_src``, ``ttl.copy(blk,
pipe)``) go to the writer kernel, receives (``net.if_dst``, ``ttl.copy(pipe, blk)``) to the reader,
with their guards and the waits on their handles, also from inlined operations with dataflow buffer
parameters; run on the simulated device against numpy, kernels checked by check-kernel, and a pipe
copy that cannot be placed is one error at the user's line."""

from __future__ import annotations

import numpy as np
from checkkernel import accessor_compile_args, check_kernels, require_accepted

import tilefold.ttl as ttl
from tilefold.codegen.cpp import emit_kernel
from tilefold.errors import KernelError
from ttl_helpers import compiled, expect_error, tile_tensor, zeros

COLS = 2


def _bf16(values):
    import ml_dtypes

    return np.asarray(values, dtype=np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def _expected(a, cols=1):
    """Node x holds columns [x * cols, (x + 1) * cols) of tiles of ``a``; each node doubles its tile,
    node (1, 0) adds node (0, 0)'s partial to its own."""
    v = a.host_values
    w = 32 * cols
    return _bf16(_bf16(v[:, :w] * 2.0) + _bf16(v[:, w:2 * w] * 2.0))


@ttl.operation(grid=(2, 1))
def pair_sum(a, out):
    """Node (0, 0) doubles its tile and sends it to node (1, 0), which adds its own doubled tile and
    writes the sum; one body, no kernel functions."""
    link = ttl.Pipe(src=(0, 0), dst=(1, 0))
    net = ttl.PipeNet([link])
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    stage_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    part_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    peer_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    x, _ = ttl.node(dims=2)
    with a_dfb.reserve() as blk:
        ttl.copy(a[0, x], blk).wait()
    if net.is_src():
        with a_dfb.wait() as av, stage_dfb.reserve() as s:
            s.store(av * 2.0)
    else:
        with a_dfb.wait() as av, part_dfb.reserve() as p:
            p.store(av * 2.0)

    def send(pipe):
        with stage_dfb.wait() as b:
            sent = ttl.copy(b, pipe)
            sent.wait()

    net.if_src(send)
    if net.is_dst():
        got = peer_dfb.reserve()
        received = ttl.copy(link, got)     # a ttl.Pipe named directly
        received.wait()
        got.push()
        with part_dfb.wait() as mine, peer_dfb.wait() as theirs, out_dfb.reserve() as o:
            o.store(mine + theirs)
        with out_dfb.wait() as o:
            ttl.copy(o, out[0, 0]).wait()


def test_a_two_node_partial_sum_over_a_pipe_in_one_body():
    a, out = tile_tensor((32, 64), seed=1), zeros((32, 32))
    pair_sum(a, out)
    np.testing.assert_allclose(out.host_values, _expected(a), rtol=1e-2, atol=1e-2)


def _roles(program):
    """Per kernel role, the C++ of its kernel."""
    return {("compute" if k.is_compute else "reader" if k.processor == "RISCV_0" else "writer"): emit_kernel(k.function)
            for k in program.kernels}


def test_the_send_is_in_the_writer_and_the_receive_in_the_reader_and_they_pass_check_kernel(tmp_path):
    program = compiled(pair_sum, tile_tensor((32, 64)), zeros((32, 32))).program
    roles = _roles(program)
    assert set(roles) == {"reader", "compute", "writer"}
    assert "noc_semaphore_wait" in roles["reader"] and "noc_async_read" in roles["reader"]
    assert "noc_async_write" in roles["writer"]
    jobs = []
    for k in program.kernels:
        path = tmp_path / f"{k.name}.cpp"
        path.write_text(emit_kernel(k.function))
        role = "compute" if k.is_compute else ("reader" if k.processor == "RISCV_0" else "writer")
        jobs.append((path, role, accessor_compile_args(program, k)))
    for check in check_kernels(jobs):
        require_accepted(check)


@ttl.operation()
def send_partial(net: ttl.PipeNet, partial: ttl.DFB, stage: ttl.DFB):
    """Every source node of ``net`` moves its partial into ``stage`` and sends it."""
    s = stage.reserve()
    s.store(partial.wait())

    def ship(pipe):
        b = stage.wait()
        ttl.copy(b, pipe).wait()
        b.pop()

    net.if_src(ship)


@ttl.atom()
def receive_sum(net: ttl.PipeNet, partial: ttl.DFB, peer: ttl.DFB, total: ttl.DFB):
    """Every destination node of ``net`` receives a partial into ``peer`` and adds its own."""
    net.if_dst(lambda pipe: ttl.copy(pipe, peer.reserve()).wait())
    if net.is_dst():
        t = total.reserve()
        t.store(partial.wait() + peer.wait())


@ttl.operation(grid=(2, 1))
def pair_sum_calls(a, out):
    """The same sum over ``COLS`` tiles per node, with the send and the receive in called operations."""
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    part_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    stage_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    peer_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    x, _ = ttl.node(dims=2)
    for c in range(COLS):
        ttl.copy(a[0, x * COLS + c], a_dfb.reserve()).wait()
        p = part_dfb.reserve()
        p.store(a_dfb.wait() * 2.0)
        if x == 0:
            send_partial(net, part_dfb, stage_dfb)
        else:
            receive_sum(net, part_dfb, peer_dfb, out_dfb)
            ttl.copy(out_dfb.wait(), out[0, c]).wait()


def test_send_and_receive_in_inlined_operations_in_a_loop():
    a, out = tile_tensor((32, 32 * 2 * COLS), seed=2), zeros((32, 32 * COLS))
    pair_sum_calls(a, out)
    np.testing.assert_allclose(out.host_values, _expected(a, COLS), rtol=1e-2, atol=1e-2)


def test_sending_a_block_the_compute_kernel_holds_is_an_error_at_the_send():
    @ttl.operation(grid=(2, 1))
    def send_a_computed_block(a, out):
        net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        part_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        ttl.copy(a[0, 0], a_dfb.reserve()).wait()
        p = part_dfb.reserve()
        p.store(a_dfb.wait() * 2.0)
        net.if_src(lambda pipe: ttl.copy(p, pipe).wait())  # error

    expect_error(lambda: send_a_computed_block(tile_tensor((32, 32)), zeros((32, 32))),
                 test_sending_a_block_the_compute_kernel_holds_is_an_error_at_the_send, KernelError,
                 "pipe send here uses block 'p', which the compute kernel holds", "writer kernel")


@ttl.operation()
def broadcast(net: ttl.PipeNet, src, stage: ttl.DFB, dst: ttl.DFB):
    """The source node of ``net`` reads ``src`` (a tensor slice) into ``stage`` and sends it; every
    destination, the source included, receives it into ``dst``."""
    def send(pipe):
        ttl.copy(src, stage.reserve()).wait()
        with stage.wait() as b:
            ttl.copy(b, pipe).wait()

    net.if_src(send)

    def receive(pipe):
        with dst.reserve() as d:
            ttl.copy(pipe, d).wait()

    net.if_dst(receive)


@ttl.operation(grid=(2, 1))
def broadcast_double(a, out):
    """Node (0, 0) reads one tile and multicasts it to both nodes (itself included); each doubles
    it and writes it at its own column."""
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(slice(0, 2), 0))])
    stage_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    got_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    x, _ = ttl.node(dims=2)
    broadcast(net, a[0, 0], stage_dfb, got_dfb)
    o = out_dfb.reserve()
    o.store(got_dfb.wait() * 2.0)
    ttl.copy(out_dfb.wait(), out[0, x]).wait()


def test_a_multicast_whose_send_reads_a_tensor_runs_the_read_in_the_sender():
    a, out = tile_tensor((32, 32), seed=3), zeros((32, 64))
    broadcast_double(a, out)
    doubled = _bf16(a.host_values * 2.0)
    np.testing.assert_allclose(out.host_values, np.concatenate([doubled, doubled], axis=1), rtol=1e-2, atol=1e-2)


def test_a_statement_that_sends_and_receives_is_an_error_at_its_line():
    @ttl.operation(grid=(2, 1))
    def swap(a, out):
        net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0)), ttl.Pipe(src=(1, 0), dst=(0, 0))])
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        x, _ = ttl.node(dims=2)
        ttl.copy(a[0, x], a_dfb.reserve()).wait()
        with a_dfb.wait() as mine, b_dfb.reserve() as theirs:  # error
            net.if_src(lambda pipe: ttl.copy(mine, pipe).wait())
            net.if_dst(lambda pipe: ttl.copy(pipe, theirs).wait())
        ttl.copy(b_dfb.wait(), out[0, x]).wait()

    expect_error(lambda: swap(tile_tensor((32, 64)), zeros((32, 64))),
                 test_a_statement_that_sends_and_receives_is_an_error_at_its_line, KernelError,
                 "both sends over a pipe", "separate statements")


def test_one_function_given_to_if_src_and_if_dst_is_an_error_at_the_second():
    @ttl.operation(grid=(2, 1))
    def both(a, out):
        net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

        def move(pipe):
            with a_dfb.reserve() as b:
                ttl.copy(a[0, 0], b).wait()

        net.if_src(move)
        net.if_dst(move)  # error

    expect_error(lambda: both(tile_tensor((32, 32)), zeros((32, 32))),
                 test_one_function_given_to_if_src_and_if_dst_is_an_error_at_the_second, KernelError,
                 "move() is run both by net.if_src and by net.if_dst")
