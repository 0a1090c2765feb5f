"""Pipe receives straight into a tensor slice, ``ttl.copy(pipe, out[...], shape=...)``, as TT-Lang's
main branch writes them: the block sent lands in an L1 block the compiler manages, and the
receive's wait writes it on into the slice. Simulated against numpy on one chip and from one chip
of a mesh to another; the receiving kernel's C++ is checked against the real headers; mistakes
are one error at the line."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import TilefoldError
from ttl_helpers import compiled, expect_error, tile_tensor, zeros


def _column_shift(rows: int, cols: int):
    """Each node (0, y) of a 1×4 grid sends its rows×cols-tile block of ``inp`` to node (0, y + 1),
    which receives it into the same block of ``out``; node 0's block stays as ``out`` held it."""
    net = ttl.PipeNet([ttl.Pipe(src=(0, y), dst=(0, y + 1)) for y in range(3)])

    @ttl.operation(grid=(1, 4))
    def shift(inp, out):
        send = ttl.make_dataflow_buffer_like(inp, shape=(rows, cols), block_count=2)

        @ttl.datamovement()
        def sender():
            def send_block(pipe):
                _, y = ttl.node(dims=2)
                with send.reserve() as blk:
                    ttl.copy(inp[y * rows:(y + 1) * rows, 0:cols], blk).wait()
                    ttl.copy(blk, pipe).wait()

            net.if_src(send_block)

        @ttl.datamovement()
        def receiver():
            def receive(pipe):
                _, y = ttl.node(dims=2)
                ttl.copy(pipe, out[y * rows:(y + 1) * rows, 0:cols], shape=(rows, cols)).wait()

            net.if_dst(receive)

        @ttl.compute()
        def idle():
            pass

    return shift


@pytest.mark.parametrize("rows,cols", [(1, 1), (2, 3)])
def test_a_receive_lands_in_the_tensor_slice(rows, cols):
    shift = _column_shift(rows, cols)
    inp = tile_tensor((4 * rows * 32, cols * 32), seed=rows)
    out = ttnn.from_numpy(np.full((4 * rows * 32, cols * 32), 7.0, np.float32), dtype=ttnn.bfloat16,
                          layout=ttnn.TILE_LAYOUT)
    shift(inp, out)
    v = ttnn.to_numpy(inp)
    expected = np.concatenate([np.full((rows * 32, cols * 32), 7.0, np.float32), v[:3 * rows * 32]])
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)


def test_the_receiving_kernel_compiles_against_the_real_dataflow_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    shift = _column_shift(2, 3)
    program = compiled(shift, tile_tensor((256, 96)), zeros((256, 96))).program
    kernel = next(k for k in program.kernels if k.name == "receiver")
    text = emit_kernel(kernel.function)
    assert "noc_async_write" in text and "noc_semaphore_wait" in text
    path = tmp_path / "receiver.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader",
                                                            check_kernel.accessor_compile_args(program, kernel)))


def test_a_receive_into_another_chips_tensor_piece():
    """TT-Lang's point-to-point DRAM receive: device 0 sends its first block to the last device of
    a 4-device domain, which receives it into its piece of ``out`` and reads it back."""
    ttnn.set_num_devices(4)
    try:
        domain = ttl.DeviceDomain((4,))
        net = ttl.PipeNet(graph=ttl.TransferGraph.edges(domain, edges=[(0, 3)]))

        @ttl.operation(grid=(1, 1), device_domain=domain)
        def direct_receive(inp, out, observed):
            send = ttl.make_dataflow_buffer_like(inp, shape=(1, 2), block_count=2)
            readback = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=2)

            @ttl.compute()
            def idle():
                pass

            @ttl.datamovement()
            def sender():
                def send_block(pipe):
                    blk = send.reserve()
                    ttl.copy(inp[0:1, 0:2], blk).wait()
                    ttl.copy(blk, pipe).wait()

                net.if_src(send_block)

            @ttl.datamovement()
            def receiver():
                def receive(pipe):
                    request = ttl.copy(pipe, out[0:1, 0:2], shape=(1, 2))
                    request.wait()
                    blk = readback.reserve()
                    ttl.copy(out[0:1, 0:2], blk).wait()
                    ready = readback.wait()
                    ttl.copy(ready, observed[0:1, 0:2]).wait()

                net.if_dst(receive)

        mesh = ttnn.open_mesh_device(ttnn.MeshShape((4,)))
        values = np.random.default_rng(3).standard_normal((128, 64)).astype(np.float32)
        mapper = ttnn.ShardTensorToMesh(mesh, dim=0)

        def tensor(v):
            return ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                                   mesh_mapper=mapper)

        inp, out, observed = tensor(values), tensor(np.zeros_like(values)), tensor(np.zeros_like(values))
        direct_receive(inp, out, observed)
        composer = ttnn.ConcatMeshToTensor(mesh, dim=0)
        expected = np.zeros_like(values)
        expected[96:] = values[:32].astype(ml_dtypes.bfloat16).astype(np.float32)
        np.testing.assert_array_equal(ttnn.to_numpy(out, mesh_composer=composer), expected)
        np.testing.assert_array_equal(ttnn.to_numpy(observed, mesh_composer=composer), expected)
    finally:
        ttnn.set_num_devices(1)


_NET = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(0, 1))])


def _send_one_tile(inp):
    """The sending kernel of the operations below: node 0 sends ``inp``'s first tile to node 1."""
    send = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def sender():
        def send_block(pipe):
            with send.reserve() as blk:
                ttl.copy(inp[0:1, 0:1], blk).wait()
                ttl.copy(blk, pipe).wait()

        _NET.if_src(send_block)


def _run(op):
    return lambda: op(tile_tensor((64, 64)), zeros((64, 64)))


def test_a_shape_other_than_the_slices_is_an_error_at_the_line():
    @ttl.operation(grid=(1, 2))
    def op(inp, out):
        _send_one_tile(inp)

        @ttl.datamovement()
        def receiver():
            def receive(pipe):
                ttl.copy(pipe, out[0:1, 0:1], shape=(1, 2)).wait()  # error

            _NET.if_dst(receive)

    expect_error(_run(op), test_a_shape_other_than_the_slices_is_an_error_at_the_line,
                 TilefoldError, "shape=(1, 2)", "1x1 tiles")


def test_a_receive_into_a_tensor_cannot_be_selected_by_wait_any():
    @ttl.operation(grid=(1, 2))
    def op(inp, out):
        _send_one_tile(inp)

        @ttl.datamovement()
        def receiver():
            def receive(pipe):
                request = ttl.copy(pipe, out[0:1, 0:1], shape=(1, 1))
                ttl.wait_any((request,)).index()  # error
                request.wait()

            _NET.if_dst(receive)

    expect_error(_run(op), test_a_receive_into_a_tensor_cannot_be_selected_by_wait_any,
                 TilefoldError, "receives into a tensor", "wait()")


def test_a_receive_into_a_tensor_not_waited_for_lands_where_its_body_ends():
    """As a receive into a block in a kernel that releases its blocks itself: the pipe body's end
    waits for it (and so writes the tensor)."""
    @ttl.operation(grid=(1, 2))
    def op(inp, out):
        _send_one_tile(inp)

        @ttl.datamovement()
        def receiver():
            def receive(pipe):
                ttl.copy(pipe, out[1:2, 1:2], shape=(1, 1))

            _NET.if_dst(receive)

    inp, out = tile_tensor((64, 64), seed=5), zeros((64, 64))
    op(inp, out)
    expected = np.zeros((64, 64), np.float32)
    expected[32:, 32:] = ttnn.to_numpy(inp)[:32, :32]
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)
