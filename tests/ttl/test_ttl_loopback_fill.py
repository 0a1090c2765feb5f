"""A multicast whose destinations include its source, written as TT-Lang's pipe matmuls write it:
every node posts the receive into its block first; the source then fills that same block from
DRAM and sends it (to itself too), and the receive's wait follows. Only the node's own send lands
in the block, so the fill is no second writer racing the receive. Simulated against numpy; the
kernel's C++ is checked against the real headers."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import compiled, tile_tensor, zeros

_ROW = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(slice(0, 3), 0))])


@ttl.operation(grid=(3, 1))
def broadcast_row(inp, out):
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.compute()
    def idle():
        pass

    @ttl.datamovement()
    def load():
        with dfb.reserve() as blk:
            def receive_then_send(receiving):
                request = ttl.copy(receiving, blk)

                def send(sending):
                    ttl.copy(inp[0, 0], blk).wait()
                    ttl.copy(blk, sending).wait()

                _ROW.if_src(send)
                request.wait()

            _ROW.if_dst(receive_then_send)

    @ttl.datamovement()
    def store():
        x, _ = ttl.node(dims=2)
        with dfb.wait() as blk:
            ttl.copy(blk, out[0, x]).wait()


def test_the_source_fills_the_block_it_receives_its_own_multicast_into():
    inp, out = tile_tensor((32, 32), seed=6), zeros((32, 96))
    broadcast_row(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.tile(ttnn.to_numpy(inp), (1, 3)))


def test_the_loopback_kernel_compiles_against_the_real_dataflow_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    program = compiled(broadcast_row, tile_tensor((32, 32)), zeros((32, 96))).program
    kernel = next(k for k in program.kernels if k.name == "load")
    path = tmp_path / "load.cpp"
    path.write_text(emit_kernel(kernel.function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader",
                                                            check_kernel.accessor_compile_args(program, kernel)))
