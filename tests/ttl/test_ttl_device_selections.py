"""Selected devices of a domain: ``domain[0, :]`` / ``domain.select([...])`` ``.at_node(x, y)`` as the
ends of ``ttl.Pipe.all_to_all(src=, dst=, include_self=True)``, and
``@ttl.operation(mesh_program_placements=[...])`` (only the listed devices run kernels). Checked
against numpy: an all-gather between two selected devices with each device's transfer to itself, a
pipe from a node to itself with the send and the receive in different kernels, and a placement that
leaves the other devices' tensors as they were. Also: ``ttnn.to_memory_config`` of mesh tensors,
``ttnn.get_num_devices``, a compile of a domain larger than the simulated chips, and one error at
the user's line for a pipe receive straight into a tensor and for placements without a domain."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError, KernelValueError
from ttl_helpers import mesh_tensors, read_mesh

T = 32



def _here() -> int:
    return inspect.currentframe().f_back.f_lineno + 1


def _at(info, line: int) -> None:
    assert info.value.location.file == __file__ and info.value.location.line == line, str(info.value)


def _selected_allgather(mesh_shape, first, second):
    domain = ttl.DeviceDomain(mesh_shape)
    pair = domain.select([domain[first], domain[second]])
    net = ttl.PipeNet([ttl.Pipe.all_to_all(src=pair.at_node(0, 0), dst=pair.at_node(0, 0), include_self=True)])

    @ttl.operation(grid=(1, 1), device_domain=domain, mesh_program_placements=[first, second])
    def allgather(inp, out):
        send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
        receive_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)

        @ttl.compute()
        def idle():
            pass

        @ttl.datamovement()
        def sender():
            def send(pipe):
                with send_dfb.reserve() as blk:
                    ttl.copy(inp[0, 0], blk).wait()
                with send_dfb.wait() as blk:
                    ttl.copy(blk, pipe).wait()

            net.if_src(send)

        @ttl.datamovement()
        def receiver():
            def receive(pipe):
                source = pipe.source_device_index
                with receive_dfb.reserve() as blk:
                    ttl.copy(pipe, blk).wait()
                with receive_dfb.wait() as blk:
                    ttl.copy(blk, out[source, 0]).wait()

            net.if_dst(receive)

    return allgather


@pytest.mark.parametrize("l1", [False, True], ids=["dram", "l1"])
def test_an_all_gather_between_selected_devices_includes_each_devices_own_tile(chips, l1):
    chips(4)
    assert ttnn.get_num_devices() == 4
    assert tuple(ttnn._ttnn.multi_device.SystemMeshDescriptor().shape()) == (1, 4)     # as TT-Lang's utilities ask
    allgather = _selected_allgather((2, 2), (0, 0), (0, 1))
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 2))
    x = np.random.default_rng(3).standard_normal((4 * T, T)).astype(np.float32)
    inp, out = mesh_tensors(mesh, x, np.zeros((8 * T, T), np.float32), l1=l1)
    allgather(inp, out)
    want = np.zeros((8 * T, T), np.float32)
    for device in (0, 1):                     # devices 0 and 1 gather the first tiles of both
        want[device * 2 * T:device * 2 * T + 2 * T] = x[:2 * T]
    np.testing.assert_array_equal(read_mesh(out, mesh), want)


def test_a_domain_slice_names_its_devices_row_major():
    domain = ttl.DeviceDomain((2, 3))
    assert domain[1, :].indices == [3, 4, 5]
    assert domain[:, 2].indices == [2, 5]
    assert domain.select([domain[1, 0], domain[0, :]]).indices == [3, 0, 1, 2]
    with pytest.raises(KernelValueError, match=r"give 2 integers or slices") as info:
        line = _here()
        domain[1]
    _at(info, line)


@ttl.operation(grid=(1, 1))
def to_itself(inp, out):
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(0, 0))])
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
    receive_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)

    @ttl.compute()
    def idle():
        pass

    @ttl.datamovement()
    def sender():
        def send(pipe):
            with send_dfb.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()
            with send_dfb.wait() as blk:
                ttl.copy(blk, pipe).wait()

        net.if_src(send)

    @ttl.datamovement()
    def receiver():
        def receive(pipe):
            with receive_dfb.reserve() as blk:
                ttl.copy(pipe, blk).wait()
            with receive_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()

        net.if_dst(receive)


def test_a_pipe_from_a_node_to_itself_received_by_another_kernel():
    device = ttnn.open_device(device_id=0)
    x = np.random.default_rng(5).standard_normal((T, T)).astype(np.float32)
    inp = ttnn.from_numpy(x, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    out = ttnn.from_numpy(np.zeros((T, T), np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    to_itself(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), x)


PLACED_DOMAIN = ttl.DeviceDomain((4,))


@ttl.operation(grid=(1, 1), device_domain=PLACED_DOMAIN, mesh_program_placements=[0, 2])
def placed_copy(inp, out):
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.compute()
    def idle():
        pass

    @ttl.datamovement()
    def read():
        with dfb.reserve() as blk:
            ttl.copy(inp[0, 0], blk).wait()

    @ttl.datamovement()
    def write():
        with dfb.wait() as blk:
            ttl.copy(blk, out[0, 0]).wait()


def test_only_the_placed_devices_run_kernels(chips):
    chips(4)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape((4,)))
    x = np.arange(4 * T * T, dtype=np.float32).reshape(4 * T, T)
    inp, out = mesh_tensors(mesh, x, np.full((4 * T, T), -1.0, np.float32))
    placed_copy(inp, out)
    want = np.full((4 * T, T), -1.0, np.float32)
    for device in (0, 2):
        want[device * T:(device + 1) * T] = x[device * T:(device + 1) * T]
    np.testing.assert_array_equal(read_mesh(out, mesh), want)


def test_placements_need_devices_of_a_domain():
    with pytest.raises(KernelValueError, match="give device_domain=ttl.DeviceDomain") as info:
        line = _here()
        ttl.operation(grid=(1, 1), mesh_program_placements=[0])
    _at(info, line)
    with pytest.raises(KernelValueError, match=r"mesh_program_placements: item 1 \(5,\) is outside DeviceDomain\(\(4,\)\)"):
        ttl.operation(grid=(1, 1), device_domain=PLACED_DOMAIN, mesh_program_placements=[0, 5])


class _Template:
    dtype = "bfloat16"          # an object with only a data type, as TT-Lang's compile tests use


def test_a_compile_of_a_larger_domain_than_the_simulated_chips(chips, monkeypatch):
    chips(1)
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")
    domain = ttl.DeviceDomain((1, 8))
    net = ttl.PipeNet(graph=ttl.TransferGraph.axis_neighbor(domain, axis=1), pipes=[ttl.Pipe(src=(1, 0), dst=(0, 0))])

    @ttl.operation(grid=(2, 1), device_domain=domain, options="--ttl-pipe-global-semaphores-only")
    def neighbours():
        template = _Template()
        send_dfb = ttl.make_dataflow_buffer_like(template, shape=(1, 1), block_count=1)
        receive_dfb = ttl.make_dataflow_buffer_like(template, shape=(1, 1), block_count=1)

        @ttl.compute()
        def fill():
            with send_dfb.reserve() as blk:
                blk.store(ttl.math.fill(blk, 1.0))

        @ttl.datamovement()
        def sender():
            def send(pipe):
                with send_dfb.wait() as blk:
                    ttl.copy(blk, pipe).wait()

            net.if_src(send)

        @ttl.datamovement()
        def receiver():
            def receive(pipe):
                with receive_dfb.reserve() as blk:
                    ttl.copy(pipe, blk).wait()
                with receive_dfb.wait() as blk:
                    pass

            net.if_dst(receive)

    neighbours()           # builds the kernels and their C++, runs nothing


def test_a_pipe_receive_into_another_chips_tensor(chips):
    """Device 0's first tile lands in device 1's piece of ``out`` (see test_ttl_pipe_into_tensor)."""
    chips(2)
    domain = ttl.DeviceDomain((2,))
    net = ttl.PipeNet(graph=ttl.TransferGraph.edges(domain, edges=[(0, 1)]))

    @ttl.operation(grid=(1, 1), device_domain=domain)
    def receive_to_dram(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)

        @ttl.datamovement()
        def sender():
            def send(pipe):
                blk = dfb.reserve()
                ttl.copy(inp[0, 0], blk).wait()
                ttl.copy(blk, pipe).wait()

            net.if_src(send)

        @ttl.datamovement()
        def receiver():
            def receive(pipe):
                ttl.copy(pipe, out[0:1, 0:1]).wait()
            net.if_dst(receive)

    mesh = ttnn.open_mesh_device(ttnn.MeshShape((2,)))
    values = np.arange(2 * T * T, dtype=np.float32).reshape(2 * T, T)
    inp, out = mesh_tensors(mesh, values, np.zeros((2 * T, T), np.float32))
    receive_to_dram(inp, out)
    expected = np.zeros_like(values)
    expected[T:] = ttnn.to_numpy(inp, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))[:T]
    np.testing.assert_array_equal(ttnn.to_numpy(out, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)), expected)


def test_the_self_pipe_and_placed_kernels_pass_check_kernel(chips, tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel
    from tilefold.run.ttl import compile_built

    chips(4)
    device = ttnn.open_device(device_id=0)
    zeros = np.zeros((T, T), np.float32)
    inp, out = (ttnn.from_numpy(zeros, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device) for _ in range(2))
    mesh = ttnn.open_mesh_device(ttnn.MeshShape((4,)))
    mesh_inp, mesh_out = mesh_tensors(mesh, np.zeros((4 * T, T), np.float32), np.zeros((4 * T, T), np.float32))
    checks = []
    for op, args in ((to_itself, (inp, out)), (placed_copy, (mesh_inp, mesh_out))):
        built = op.build(args, {})
        program = compile_built(built, built.capture.arch).program
        for kernel in program.kernels:
            if kernel.name == "idle":
                continue
            path = tmp_path / f"{op.name}_{kernel.name}.cpp"
            path.write_text(emit_kernel(kernel.function))
            checks.append((path, "reader" if kernel.name in ("receiver", "read") else "writer",
                           check_kernel.accessor_compile_args(program, kernel)))
    assert len(checks) == 4
    for path, role, args in checks:
        check_kernel.require_accepted(check_kernel.check_kernel(path, role, args))
