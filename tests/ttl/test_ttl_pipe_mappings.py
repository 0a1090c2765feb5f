"""Nets over devices made of several transfer graphs: ``ttl.PipeNet(mappings=[ttl.PipeMapping(graph=,
pipes=), ...])`` (an ordered union), pipes that name their devices (``ttl.Pipe(src=domain[d].at_node(x,
y), dst=...)``) and ``ttl.Pipe.pairwise``. Checked against numpy on a simulated 1x4 mesh: a ring shift
built from two graphs, a transfer between different nodes of two devices, and a pairwise exchange
between two rows of a 2x2 mesh; and one error at the user's line for each misuse."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelValueError
from ttl_helpers import mesh_tensors, read_mesh

T = 32



def _transfer(domain, net, grid=(1, 1), sender=(0, 0), receiver=(0, 0)):
    """Each source node sends its device's tile 0; each receiving node writes it to its device's tile 0."""
    @ttl.operation(grid=grid, device_domain=domain)
    def transfer(inp, out):
        send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
        receive_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)

        @ttl.compute()
        def idle():
            pass

        @ttl.datamovement()
        def send():
            def body(pipe):
                with send_dfb.reserve() as blk:
                    ttl.copy(inp[0, 0], blk).wait()
                with send_dfb.wait() as blk:
                    ttl.copy(blk, pipe).wait()

            net.if_src(body)

        @ttl.datamovement()
        def receive():
            def body(pipe):
                with receive_dfb.reserve() as blk:
                    ttl.copy(pipe, blk).wait()
                with receive_dfb.wait() as blk:
                    ttl.copy(blk, out[0, 0]).wait()

            net.if_dst(body)

    return transfer


def _run(transfer, shape, devices):
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*shape))
    x = np.random.default_rng(5).standard_normal((devices * T, T)).astype(np.float32)
    inp, out = mesh_tensors(mesh, x, np.zeros((devices * T, T), np.float32))
    transfer(inp, out)
    return x.reshape(devices, T, T), read_mesh(out, mesh).reshape(devices, T, T)


def test_two_mappings_make_one_ring(chips):
    chips(4)
    domain = ttl.DeviceDomain((1, 4))
    pipe = ttl.Pipe(src=(0, 0), dst=(0, 0))
    net = ttl.PipeNet(mappings=[
        ttl.PipeMapping(graph=ttl.TransferGraph.edges(domain, edges=[((0, 0), (0, 1)), ((0, 1), (0, 2))]), pipes=[pipe]),
        ttl.PipeMapping(graph=ttl.TransferGraph.edges(domain, edges=[((0, 2), (0, 3)), ((0, 3), (0, 0))]), pipes=[pipe]),
    ])
    x, got = _run(_transfer(domain, net), (1, 4), 4)
    np.testing.assert_array_equal(got, np.roll(x, 1, axis=0))     # device d holds device d-1's tile


def test_pipes_that_name_their_devices_and_nodes(chips):
    chips(4)
    domain = ttl.DeviceDomain((1, 4))
    net = ttl.PipeNet([ttl.Pipe(src=domain[0, 0].at_node(0, 0), dst=domain[0, 3].at_node(1, 0)),
                       ttl.Pipe(src=domain[0, 1].at_node(0, 0), dst=domain[0, 2].at_node(1, 0))])
    x, got = _run(_transfer(domain, net, grid=(2, 1)), (1, 4), 4)
    want = np.zeros_like(x)
    want[3], want[2] = x[0], x[1]
    np.testing.assert_array_equal(got, want)


def test_pairwise_joins_the_ith_source_device_to_the_ith_destination(chips):
    chips(4)
    domain = ttl.DeviceDomain((2, 2))
    net = ttl.PipeNet([ttl.Pipe.pairwise(src=domain[0, :].at_node(0, 0), dst=domain[1, :].at_node(0, 0))])
    x, got = _run(_transfer(domain, net), (2, 2), 4)
    want = np.zeros_like(x)
    want[2], want[3] = x[0], x[1]
    np.testing.assert_array_equal(got, want)


def test_misuses_are_one_error_at_the_users_line():
    domain = ttl.DeviceDomain((1, 4))
    graph = ttl.TransferGraph.edges(domain, edges=[((0, 0), (0, 1))])
    pipe = ttl.Pipe(src=(0, 0), dst=(0, 0))
    cases = [
        (lambda: ttl.PipeNet(mappings=[ttl.PipeMapping(graph=graph, pipes=[pipe])], graph=graph),
         "takes no pipes, graph= or local_nodes="),
        (lambda: ttl.PipeMapping(graph=graph, pipes=[]), "needs at least one pipe"),
        (lambda: ttl.PipeMapping(graph=domain, pipes=[pipe]), "graph is a ttl.TransferGraph"),
        (lambda: ttl.PipeNet([ttl.Pipe(src=domain[0, 1].at_node(0, 0), dst=domain[0, 1].at_node(1, 0))]),
         "both ends are on device 1"),
        (lambda: ttl.Pipe.pairwise(src=domain[0, 0:2].at_node(0, 0), dst=domain[0, 1:4].at_node(0, 0)),
         "2 source devices but 3 destination devices"),
        (lambda: ttl.PipeNet([pipe, ttl.Pipe(src=domain[0, 0].at_node(0, 0), dst=domain[0, 1].at_node(0, 0))]),
         "other elements name devices"),
    ]
    for make, message in cases:
        with pytest.raises(KernelValueError, match=message) as info:
            make()
        assert info.value.location.file == __file__, str(info.value)     # the lambda's line in this file


def test_transfer_graphs_in_tt_langs_constructor_form(chips):
    """``ttl.TransferGraph(domain, structured=ttl.AxisNeighborTransfer(...))`` / ``edges=[ttl.TransferEdge
    ...]``: the graphs of the classmethods, with their descriptors and edges as ``TransferEdge`` of
    ``DeviceRef``; a ring built so runs as the classmethod's does."""
    chips(4)
    domain = ttl.DeviceDomain((1, 4))
    ring = ttl.TransferGraph(domain, structured=ttl.AxisNeighborTransfer("device", axis=1, offset=1, wrap=True))
    assert ring.edges == ttl.TransferGraph.axis_neighbor(domain, axis=1, wrap=True).edges
    assert ring.is_structured and ring.explicit_edge_count is None and ring.transfer_edges == ()
    assert next(ring.iter_edges()) == ttl.TransferEdge(ttl.DeviceRef((0, 0)), ttl.DeviceRef((0, 1)))
    explicit = ttl.TransferGraph(domain, edges=[ttl.TransferEdge((0, 3), (0, 0))])
    assert explicit.edges == [(3, 0)] and explicit.explicit_edge_count == 1 and explicit.is_explicit
    assert ttl.TransferGraph.gather(domain, root=(0, 2)).structured == ttl.GatherTransfer("device", (0, 2))
    assert domain.components[0] == ttl.DomainComponent("device", (1, 4)) and domain.components[0].extent == (1, 4)
    net = ttl.PipeNet(graph=ring, pipes=[ttl.Pipe(src=(0, 0), dst=(0, 0))])
    x, got = _run(_transfer(domain, net), (1, 4), 4)
    np.testing.assert_array_equal(got, np.roll(x, 1, axis=0))
    with pytest.raises(KernelValueError, match="give one of them"):
        ttl.TransferGraph(domain)
    with pytest.raises(KernelValueError, match="edge 0 is tuple, not a ttl.TransferEdge"):
        ttl.TransferGraph(domain, edges=[((0, 0), (0, 1))])
