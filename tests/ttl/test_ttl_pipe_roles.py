"""``net.is_src()`` / ``net.is_dst()`` / ``net.is_active()``: per-node booleans from the node's pipe
counts, in data movement and compute kernels, on nets made inside an operation or at module level;
run on the simulated device against numpy, and the generated C++ checked against the real headers."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import compiled, tile_tensor, zeros

COLS = 4

# a net made outside any operation, as TT-Lang's main branch allows: node x of row 0 sends its tile
# to node x of row 1
DOWN = ttl.PipeNet([ttl.Pipe(src=(x, 0), dst=(slice(x, x + 1), 1)) for x in range(COLS)])


@ttl.operation(grid=(COLS, 2))
def shift_down(inp, out):
    """Row 0 reads its tile and sends it down; row 1 receives it, adds one in compute and writes it.
    The compute and writer kernels run their work only where ``DOWN.is_dst()``."""
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    recv_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        if DOWN.is_dst():
            with recv_dfb.wait() as x, out_dfb.reserve() as y:
                y.store(x + 1.0)

    @ttl.datamovement()
    def send_dm():
        nx, _ = ttl.node(dims=2)
        if DOWN.is_src():
            with send_dfb.reserve() as blk:
                ttl.copy(inp[0, nx], blk).wait()
                DOWN.if_src(lambda pipe: ttl.copy(blk, pipe).wait())

    @ttl.datamovement()
    def recv_dm():
        nx, _ = ttl.node(dims=2)

        def recv(pipe):
            with recv_dfb.reserve() as blk:
                ttl.copy(pipe, blk).wait()

        DOWN.if_dst(recv)
        if not DOWN.is_active():
            return
        if DOWN.is_dst():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[1, nx]).wait()


def test_kernels_guarded_by_the_nodes_role_in_a_module_level_net():
    inp = tile_tensor((64, COLS * 32), seed=3)
    out = zeros((64, COLS * 32))
    shift_down(inp, out)
    v = ttnn.to_numpy(inp).astype(np.float32)
    expected = np.zeros_like(v)
    expected[32:] = (v[:32].astype(np.float64) + 1).astype(ttnn.to_numpy(out).dtype)
    np.testing.assert_allclose(ttnn.to_numpy(out), expected, rtol=1e-2, atol=1e-2)


@ttl.operation(grid=(3, 1))
def role_map(inp, out):
    """A net from node 0 to node 1; node 2 takes no part. Each node copies tile 0 of ``inp`` if it
    is a source, tile 1 if a destination, else tile 2, into row 0 (active nodes) or row 1 of
    ``out`` at its column."""
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def reader():
        with dfb.reserve() as blk:
            if net.is_src():
                ttl.copy(inp[0, 0], blk).wait()
            elif net.is_dst():
                ttl.copy(inp[0, 1], blk).wait()
            else:
                ttl.copy(inp[0, 2], blk).wait()

    @ttl.datamovement()
    def writer():
        nx, _ = ttl.node(dims=2)
        with dfb.wait() as blk:
            if net.is_active():
                ttl.copy(blk, out[0, nx]).wait()
            else:
                ttl.copy(blk, out[1, nx]).wait()


def test_each_node_sees_its_own_role():
    inp = tile_tensor((32, 96), seed=5)
    out = zeros((64, 96))
    role_map(inp, out)
    v = ttnn.to_numpy(inp)
    expected = np.zeros((64, 96), v.dtype)
    expected[:32, :64] = v[:, :64]            # node 0 (source) tile 0, node 1 (destination) tile 1
    expected[32:, 64:] = v[:, 64:]            # node 2 (neither) tile 2, in row 1
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)


def test_role_predicates_compile_against_the_real_headers(tmp_path, check_kernel):
    """The compute kernel reads its pipe counts with get_arg_val like the data movement kernels
    (whose pipe code the named-pipe and pipe-peer tests check)."""
    from tilefold.codegen.cpp import emit_kernel

    inp = tile_tensor((64, COLS * 32))
    program = compiled(shift_down, inp, zeros((64, COLS * 32))).program
    kernel = next(k for k in program.kernels if k.name == "compute")
    text = emit_kernel(kernel.function)
    assert "get_arg_val" in text
    path = tmp_path / "compute.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute",
                                                            check_kernel.accessor_compile_args(program, kernel)))
