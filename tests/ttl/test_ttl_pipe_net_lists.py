"""Pipe nets picked from Python lists and dicts in kernel loops, and ``net.destination_count()``.

A ``range()`` loop whose body indexes a list of nets (``nets[i]``, ``groups["key"][i]``, or
``nets[j]`` with ``j`` computed from ``i``) is unrolled, so each copy picks its net when the
kernel is built; a block released in one copy may be acquired again in the next copy's runtime
branch. ``net.destination_count()`` is how many pipes of the net end at this node: the number of
times ``net.if_dst(body)`` runs ``body`` there."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import compiled, tile_tensor, zeros

# node 3 receives from nodes 0, 1 and 2; node 2 also receives from node 0
GATHER = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(3, 0)), ttl.Pipe(src=(1, 0), dst=(3, 0)),
                      ttl.Pipe(src=(2, 0), dst=(3, 0)), ttl.Pipe(src=(0, 0), dst=(2, 0))])


@ttl.operation(grid=(4, 1))
def _gather(inp, out):
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    recv_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=3)

    @ttl.datamovement()
    def dm():
        node_x, _ = ttl.node(dims=2)

        def receive(pipe):
            with recv_dfb.reserve() as blk:
                ttl.copy(pipe, blk).wait()

        GATHER.if_dst(receive)

        def send(pipe):
            with send_dfb.reserve() as blk:
                ttl.copy(inp[0, node_x], blk).wait()
            with send_dfb.wait() as blk:
                ttl.copy(blk, pipe).wait()

        GATHER.if_src(send)
        for k in range(GATHER.destination_count()):
            with recv_dfb.wait() as blk:
                ttl.copy(blk, out[k, node_x]).wait()

    @ttl.datamovement()
    def idle():
        pass


def test_destination_count_bounds_the_receives():
    inp, out = tile_tensor((32, 128), seed=7), zeros((96, 128))
    _gather(inp, out)
    x, got = ttnn.to_numpy(inp), ttnn.to_numpy(out)
    want = np.zeros_like(got)
    want[0:32, 64:96] = x[:, 0:32]
    for k in range(3):
        want[32 * k:32 * (k + 1), 96:128] = x[:, 32 * k:32 * (k + 1)]
    np.testing.assert_array_equal(got, want)


def test_destination_count_compiles_against_the_real_dataflow_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    program = compiled(_gather, tile_tensor((32, 128)), zeros((96, 128))).program
    kernel = next(k for k in program.kernels if k.name == "dm")
    path = tmp_path / "dm.cpp"
    path.write_text(emit_kernel(kernel.function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader",
                                                            check_kernel.accessor_compile_args(program, kernel)))


GROUPS = {"left": [ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(slice(2, 4), 0))]),
                   ttl.PipeNet([ttl.Pipe(src=(1, 0), dst=(slice(2, 4), 0))])]}


@ttl.operation(grid=(4, 1))
def _sum_of_two_sources(inp, out):
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    first_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    second_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        if GROUPS["left"][0].is_dst():
            with first_dfb.wait() as a, second_dfb.wait() as b, out_dfb.reserve() as o:
                o.store(a + b)

    @ttl.datamovement()
    def read():
        for i in range(2):
            j = i + 0                                     # an index computed from the loop's
            if GROUPS["left"][j].is_src():
                with send_dfb.reserve() as blk:           # blk: acquired again in each copy
                    ttl.copy(inp[0, j], blk).wait()
                    GROUPS["left"][j].if_src(lambda pipe: ttl.copy(blk, pipe).wait())
        for i in range(2):
            net = GROUPS["left"][i]
            if net.is_dst():
                dfb = [first_dfb, second_dfb][i]
                with dfb.reserve() as blk:
                    net.if_dst(lambda pipe: ttl.copy(pipe, blk).wait())

    @ttl.datamovement()
    def write():
        node_x, _ = ttl.node(dims=2)
        if GROUPS["left"][0].is_dst():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0, node_x]).wait()


def test_nets_picked_from_a_dict_of_lists_in_loops():
    inp, out = tile_tensor((32, 64), seed=8), zeros((32, 128))
    _sum_of_two_sources(inp, out)
    x = ttnn.to_numpy(inp).astype(np.float32)
    total = x[:, :32] + x[:, 32:]
    got = ttnn.to_numpy(out).astype(np.float32)
    np.testing.assert_allclose(got[:, 64:], np.tile(total, (1, 2)), rtol=1e-2, atol=2e-2)
    np.testing.assert_array_equal(got[:, :64], 0)
