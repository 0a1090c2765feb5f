"""A multicast that reaches its own source (loopback) lands straight in the receivers' blocks, as
TT-Lang's multicast matmuls expect: no hidden landing buffer takes L1 beside the user's buffers, so
blocks that fit the node are not refused. The source holds its own receiving block before it
sends, so its loopback write never lands in a block its consumer still reads. Nets whose sends
wait on each other in a cycle (rings) keep their landing buffer. Simulated against numpy; the
kernels' C++ is checked against the real headers."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.frontend.ttl.pipes import PipeNet
from ttl_helpers import compiled, tile_tensor, zeros

BIG = 16                    # a (16, 16)-tile bfloat16 block: 512 KiB
STEPS = 6


@ttl.operation(grid=(2, 1))
def broadcast_big(inp, out):
    stage = ttl.make_dataflow_buffer_like(inp, shape=(BIG, BIG), block_count=1)
    recv = ttl.make_dataflow_buffer_like(inp, shape=(BIG, BIG), block_count=1)
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(slice(0, 2), 0))])
    x, _ = ttl.node(dims=2)

    def send(pipe):
        s = stage.reserve()
        ttl.copy(inp[0:BIG, 0:BIG], s).wait()
        ttl.copy(s, pipe).wait()
        s.push()
        stage.wait().pop()

    net.if_src(send)

    def receive(pipe):
        d = recv.reserve()
        ttl.copy(pipe, d).wait()
        d.push()

    net.if_dst(receive)

    blk = recv.wait()
    ttl.copy(blk, out[0:BIG, x * BIG:(x + 1) * BIG]).wait()
    blk.pop()


@ttl.operation(grid=(2, 1))
def broadcast_stream(inp, out):
    stage = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    recv = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
    res = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(slice(0, 2), 0))])

    @ttl.datamovement()
    def load():
        for i in range(STEPS):
            def send(pipe):
                s = stage.reserve()
                ttl.copy(inp[0, i], s).wait()
                ttl.copy(s, pipe).wait()
                s.push()
                stage.wait().pop()

            net.if_src(send)

            def receive(pipe):
                d = recv.reserve()
                ttl.copy(pipe, d).wait()
                d.push()

            net.if_dst(receive)

    @ttl.compute()
    def slow():              # the source's next send must wait until this read its block
        for _ in range(STEPS):
            with recv.wait() as r, res.reserve() as o:
                o.store(ttl.math.exp(ttl.math.exp(ttl.math.exp(r))))

    @ttl.datamovement()
    def store():
        x, _ = ttl.node(dims=2)
        for i in range(STEPS):
            with res.wait() as b:
                ttl.copy(b, out[x, i]).wait()


def test_a_loopback_multicast_of_blocks_that_fit_l1_runs_without_a_landing_buffer():
    inp, out = tile_tensor((BIG * 32, BIG * 32), seed=3), zeros((BIG * 32, 2 * BIG * 32))
    program = compiled(broadcast_big, inp, out).program
    assert not [cb for cb in program.circular_buffers if "landing" in cb.name]
    broadcast_big(inp, out)
    expected = ttnn.to_numpy(inp)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.concatenate([expected, expected], axis=1))


def test_the_source_holds_its_own_block_before_it_sends_to_itself():
    inp, out = tile_tensor((32, STEPS * 32), seed=4, scale=0.1), zeros((64, STEPS * 32))
    broadcast_stream(inp, out)
    x = ttnn.to_numpy(inp).astype(np.float64)
    expected = np.exp(np.exp(np.exp(x)))
    got = ttnn.to_numpy(out).astype(np.float64)
    np.testing.assert_allclose(got[:32], expected, rtol=3e-2)
    np.testing.assert_allclose(got[32:], expected, rtol=3e-2)


def test_the_loopback_kernels_compile_against_the_real_dataflow_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    program = compiled(broadcast_stream, tile_tensor((32, STEPS * 32)), zeros((64, STEPS * 32))).program
    kernel = next(k for k in program.kernels if k.name == "load")
    source = emit_kernel(kernel.function)
    # the source's own block, then the remote receivers' credits, then the multicast
    reserve = source.index("cb_reserve_back(recv, 1)")
    assert reserve < source.index("noc_semaphore_wait(") < source.index("noc_async_write_multicast_loopback_src")
    path = tmp_path / "load.cpp"
    path.write_text(source)
    for result in check_kernel.check_kernels([(path, "reader", check_kernel.accessor_compile_args(program, kernel))]):
        check_kernel.require_accepted(result)


def _net(pipes) -> PipeNet:
    """``pipes`` resolved on a 4x4 grid, as an operation's body resolves them."""
    from types import SimpleNamespace

    op = SimpleNamespace(grid=(4, 4), grid_dims=(4, 4), arch=None, pipe_nets=[], bound_nets={}, device_domain=None)
    return PipeNet(pipes, _operation=op)


def test_only_nets_whose_sends_wait_on_each_other_in_a_cycle_take_a_landing_buffer():
    ring = _net([ttl.Pipe(src=(i, 0), dst=((i + 1) % 4, 0)) for i in range(4)])
    gather = _net([ttl.Pipe(src=(i, 0), dst=(slice(0, 4), 0)) for i in range(4)])
    loopback = _net([ttl.Pipe(src=(0, 0), dst=(slice(0, 4), 0))])
    rows = _net([ttl.Pipe(src=(0, y), dst=(slice(0, 4), y)) for y in range(4)])
    chain = _net([ttl.Pipe(src=(0, 0), dst=(slice(0, 2), 0)), ttl.Pipe(src=(1, 0), dst=(slice(1, 3), 0))])
    assert ring.needs_landing() and gather.needs_landing()
    assert not loopback.needs_landing() and not rows.needs_landing() and not chain.needs_landing()
