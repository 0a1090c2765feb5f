"""A pipe multicasting one block to receivers whose receive blocks sit at different positions of
their dataflow buffers: one multicast writes one L1 address on every receiver, so each receiver
checks the address the sender wrote against its own block and a mismatch is an error at the
receive (never a block left unwritten). Receivers at the same, non-first position receive
correctly; run on the simulated device against numpy; the kernels pass check-kernel."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import SimulationError
from ttl_helpers import compiled, tile_tensor, zeros


def _np(t):
    return ttnn.to_numpy(t).astype(np.float32)


@ttl.operation(grid=(3, 1))
def skewed_receivers(a, out):
    """Node 0 multicasts tile 0 to nodes 1 and 2; node 1 holds an older reserved block of the
    buffer while it receives (its block is the buffer's second), node 2 receives into the first."""
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(slice(1, 3), 0))])
    x_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        col, _ = ttl.node(dims=2)

        def send(pipe):
            with x_dfb.reserve() as blk:
                ttl.copy(a[0, 0], blk).wait()
                ttl.copy(blk, pipe).wait()

        def receive(pipe):
            if col == 1:
                with x_dfb.reserve() as first:
                    with x_dfb.reserve() as blk:
                        ttl.copy(pipe, blk).wait()
                    ttl.copy(a[0, 1], first).wait()
            else:
                with x_dfb.reserve() as blk:
                    ttl.copy(pipe, blk).wait()

        net.if_src(send)
        net.if_dst(receive)

    @ttl.datamovement()
    def write():
        col, _ = ttl.node(dims=2)
        with x_dfb.wait() as blk:
            ttl.copy(blk, out[0, col]).wait()
        if col == 1:
            with x_dfb.wait() as blk:
                ttl.copy(blk, out[1, col]).wait()


def test_receivers_at_different_buffer_positions_are_an_error_at_the_receive():
    with pytest.raises(SimulationError) as info:
        skewed_receivers(tile_tensor((32, 64)), zeros((64, 96)))
    message = str(info.value)
    assert "test_ttl_multicast_positions.py:42" in message
    assert "the receivers of one multicast must receive into blocks at the same position" in message


@ttl.operation(grid=(3, 1))
def receivers_after_a_local_block(a, out):
    """Every receiver first passes a block of its own through the buffer, then receives the
    multicast into the buffer's second block: the same position on every receiver."""
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(slice(1, 3), 0))])
    x_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        col, _ = ttl.node(dims=2)
        with x_dfb.reserve() as blk:
            ttl.copy(a[0, 1 + col], blk).wait()

        def send(pipe):
            with x_dfb.reserve() as blk:
                ttl.copy(a[0, 0], blk).wait()
                ttl.copy(blk, pipe).wait()

        def receive(pipe):
            with x_dfb.reserve() as blk:
                ttl.copy(pipe, blk).wait()

        net.if_src(send)
        net.if_dst(receive)

    @ttl.datamovement()
    def write():
        col, _ = ttl.node(dims=2)
        for r in range(2):
            with x_dfb.wait() as blk:
                ttl.copy(blk, out[r, col]).wait()


def test_receivers_at_the_same_later_position_receive_the_multicast():
    a = tile_tensor((32, 128), seed=5)
    out = zeros((64, 96))
    receivers_after_a_local_block(a, out)
    v = _np(a)
    expected = np.concatenate([np.concatenate([v[:, 32 * (1 + c):32 * (2 + c)], v[:, :32]], axis=0)
                               for c in range(3)], axis=1)
    np.testing.assert_array_equal(_np(out), expected)


def test_the_receive_check_passes_check_kernel(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    program = compiled(receivers_after_a_local_block, tile_tensor((32, 128)), zeros((64, 96))).program
    kernel = next(k for k in program.kernels if k.name == "read")
    text = emit_kernel(kernel.function)
    assert "noc_semaphore_wait_min" in text and "ASSERT" in text
    path = tmp_path / "read.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader",
                                                            check_kernel.accessor_compile_args(program, kernel)))
