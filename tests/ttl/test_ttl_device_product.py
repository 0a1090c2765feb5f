"""Product device domains: ``ttl.DeviceDomain.product(row=..., column=...)``, structured transfer
graphs along one named component (``component=``) and ``ttl.DeviceRef`` naming devices by their
components. A product domain's axes are its components' axes in the order given, so its devices are
numbered row-major over them, as a domain of those extents. Checked against numpy on the simulated
mesh: a ring along one component of a 2x2 product domain, an edges graph naming devices by
components and ``is_current(DeviceRef(...))`` in a kernel; the edges of each structured form;
misuse is one error at the user's line."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelValueError
from ttl_helpers import mesh_tensors, read_mesh

T = 32



def _here() -> int:
    """The line after the caller's."""
    import inspect

    return inspect.currentframe().f_back.f_lineno + 1


def _at(info, line: int) -> None:
    assert info.value.location.file == __file__ and info.value.location.line == line, str(info.value)


# -- a ring along the "column" component: device (r, c) sends its tile to (r, c + 1 mod 2) --------

PRODUCT = ttl.DeviceDomain.product(row=ttl.DeviceDomain((2,)), column=(2,))
COLUMN_RING = ttl.PipeNet(graph=ttl.TransferGraph.axis_neighbor(PRODUCT, component="column", wrap=True))


@ttl.operation(grid=(1, 1), device_domain=PRODUCT)
def column_ring(inp, out, origin):
    """Each device passes its tile to the next device of its row and writes the tile it receives;
    ``origin`` gets, on each device, its tile scaled by the index of the device it came from."""
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    receive_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def idle_compute():
        pass

    @ttl.datamovement()
    def send():
        def to_next(pipe):
            with send_dfb.reserve() as block:
                ttl.copy(inp[0, 0], block).wait()
            with send_dfb.wait() as block:
                ttl.copy(block, pipe).wait()

        COLUMN_RING.if_src(to_next)

    @ttl.datamovement()
    def receive():
        def from_previous(pipe):
            source = pipe.source_device_index
            with receive_dfb.reserve() as block:
                ttl.copy(pipe, block).wait()
            with receive_dfb.wait() as block:
                ttl.copy(block, out[0, 0]).wait()
                ttl.copy(block, origin[source, 0]).wait()

        COLUMN_RING.if_dst(from_previous)


def test_a_ring_along_one_named_component_of_a_product_domain(chips):
    chips(4)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 2))
    v = np.random.default_rng(11).standard_normal((4 * T, T)).astype(np.float32)
    origin = np.zeros((4 * 4 * T, T), np.float32)
    inp, out, where = mesh_tensors(mesh, v, np.zeros_like(v), origin)
    column_ring(inp, out, where)
    shards = np.split(v, 4)                        # device (row r, column c) is shard r * 2 + c
    source = [r * 2 + (c - 1) % 2 for r in range(2) for c in range(2)]
    np.testing.assert_array_equal(read_mesh(out, mesh), np.concatenate([shards[s] for s in source]))
    expected = np.zeros((4, 4, T, T), np.float32)  # [device, row of origin]
    for d, s in enumerate(source):
        expected[d, s] = shards[s]
    np.testing.assert_array_equal(read_mesh(where, mesh).reshape(4, 4, T, T), expected)


# -- an edges graph naming devices by components ------------------------------------------------

NAMED_EDGES = ttl.PipeNet(graph=ttl.TransferGraph.edges(PRODUCT, edges=[
    (ttl.DeviceRef(row=0, column=0), ttl.DeviceRef(row=1, column=1)),
    (ttl.DeviceRef(column=1, row=0), ttl.DeviceRef(column=0, row=1)),      # names in any order
    (ttl.DeviceRef((1,), (1,)), ttl.DeviceRef(0, 1)),                        # one coordinate per component
]))


@ttl.operation(grid=(1, 1), device_domain=PRODUCT)
def named_edges(inp, out):
    """Devices (0, 0) -> (1, 1), (0, 1) -> (1, 0) and (1, 1) -> (0, 1); a receiver adds the tile it
    receives to its own."""
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    own_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    receive_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    sum_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def send():
        def to_peer(pipe):
            with send_dfb.reserve() as block:
                ttl.copy(inp[0, 0], block).wait()
            with send_dfb.wait() as block:
                ttl.copy(block, pipe).wait()

        NAMED_EDGES.if_src(to_peer)

    @ttl.datamovement()
    def receive():
        def from_peer(pipe):
            with own_dfb.reserve() as block:
                ttl.copy(inp[0, 0], block).wait()
            with receive_dfb.reserve() as block:
                ttl.copy(pipe, block).wait()
            with sum_dfb.wait() as block:
                ttl.copy(block, out[0, 0]).wait()

        NAMED_EDGES.if_dst(from_peer)

    @ttl.compute()
    def add():
        if PRODUCT.current_index() != 0:           # device (0, 0) receives nothing
            with own_dfb.wait() as a, receive_dfb.wait() as b, sum_dfb.reserve() as s:
                s.store(a + b)


def test_an_edges_graph_naming_devices_by_components(chips):
    assert NAMED_EDGES.graph.edges == [(0, 3), (1, 2), (3, 1)]
    chips(4)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 2))
    v = np.random.default_rng(12).standard_normal((4 * T, T)).astype(np.float32)
    inp, out = mesh_tensors(mesh, v, np.zeros_like(v))
    named_edges(inp, out)
    shards = [s.astype(np.float32) for s in np.split(v, 4)]
    expected = [np.zeros((T, T), np.float32), shards[1] + shards[3], shards[2] + shards[1], shards[3] + shards[0]]
    np.testing.assert_allclose(read_mesh(out, mesh), np.concatenate(expected), rtol=1e-6, atol=1e-6)


# -- the structured forms along one component ---------------------------------------------------


def test_structured_graphs_act_along_one_component():
    grid = ttl.DeviceDomain.product(row=(2,), column=(3,))           # device (r, c) is r * 3 + c
    assert grid.shape == (2, 3) and grid.size == 6 and grid.component_names == ("row", "column")
    assert ttl.TransferGraph.axis_neighbor(grid, component="column").edges == [(0, 1), (1, 2), (3, 4), (4, 5)]
    assert ttl.TransferGraph.axis_neighbor(grid, component="row", wrap=True).edges == [(0, 3), (1, 4), (2, 5),
                                                                                        (3, 0), (4, 1), (5, 2)]
    assert ttl.TransferGraph.gather(grid, root=2, component="column").edges == [(0, 2), (1, 2), (3, 5), (4, 5)]
    assert ttl.TransferGraph.scatter(grid, source=ttl.DeviceRef(row=1), component="row").edges == [(3, 0), (4, 1),
                                                                                                    (5, 2)]
    assert ttl.TransferGraph.all_to_all(grid, component="row").edges == [(0, 3), (1, 4), (2, 5), (3, 0), (4, 1),
                                                                         (5, 2)]
    assert ttl.TransferGraph.stencil(grid, offsets=[(-1,)], component="column").edges == [(1, 0), (2, 1), (4, 3),
                                                                                          (5, 4)]
    # a component of rank 2 after one of rank 1: axes (galaxy, y, x)
    cluster = ttl.DeviceDomain.product(galaxy=(2,), mesh=(2, 2))
    assert cluster.shape == (2, 2, 2)
    assert ttl.TransferGraph.axis_neighbor(cluster, component="mesh", axis=1).edges == [(0, 1), (2, 3), (4, 5),
                                                                                         (6, 7)]
    assert ttl.TransferGraph.edges(cluster, edges=[(ttl.DeviceRef(galaxy=1, mesh=(1, 0)), (0, 0, 1))]).edges == [
        (6, 1)]
    assert cluster[1, :, 0].indices == [4, 6]
    # a domain of one component is named "device" (or name=) and takes component= too
    line = ttl.DeviceDomain((4,), name="chip")
    assert ttl.TransferGraph.axis_neighbor(line, component="chip").edges == [(0, 1), (1, 2), (2, 3)]
    assert ttl.TransferGraph.gather(ttl.DeviceDomain((3,)), root=ttl.DeviceRef(device=1),
                                    component="device").edges == [(0, 1), (2, 1)]
    assert ttl.DeviceDomain.product(a=(2,), b=(2,)).same_as(ttl.DeviceDomain((2, 2)))


def test_misuse_of_components_is_an_error_at_the_users_line():
    grid = ttl.DeviceDomain.product(row=(2,), column=(3,))
    with pytest.raises(KernelValueError, match=r"axis_neighbor\(component='chip'\): 'chip' is no component of "
                                               r"DeviceDomain.product\(row=\(2,\), column=\(3,\)\); its components "
                                               r"are 'row', 'column'") as info:
        line = _here()
        ttl.TransferGraph.axis_neighbor(grid, component="chip")
    _at(info, line)
    with pytest.raises(KernelValueError, match=r"source ttl.DeviceRef\(row=0, chip=1\): 'chip' is no component") \
            as info:
        line = _here()
        ttl.TransferGraph.edges(grid, edges=[(ttl.DeviceRef(row=0, chip=1), ttl.DeviceRef(row=1, column=0))])
    _at(info, line)
    with pytest.raises(KernelValueError, match="acts along one component; give component='row' or 'column'") as info:
        line = _here()
        ttl.TransferGraph.all_to_all(grid)
    _at(info, line)
    with pytest.raises(KernelValueError, match=r"names no coordinate of component 'column'") as info:
        line = _here()
        ttl.TransferGraph.edges(grid, edges=[(ttl.DeviceRef(row=0), (1, 1))])
    _at(info, line)
    with pytest.raises(KernelValueError, match=r"destination ttl.DeviceRef\(row=1, column=3\) is outside") as info:
        line = _here()
        ttl.TransferGraph.edges(grid, edges=[((0, 0), ttl.DeviceRef(row=1, column=3))])
    _at(info, line)
    with pytest.raises(KernelValueError, match=r"component 'column' of .* has axes 0 to 0") as info:
        line = _here()
        ttl.TransferGraph.axis_neighbor(grid, component="column", axis=1)
    _at(info, line)
    with pytest.raises(KernelValueError, match=r"root ttl.DeviceRef\(row=1, column=0\): give a coordinate of "
                                               r"component 'row' alone") as info:
        line = _here()
        ttl.TransferGraph.gather(grid, root=ttl.DeviceRef(row=1, column=0), component="row")
    _at(info, line)
    with pytest.raises(KernelValueError, match="not a product domain; give its components directly") as info:
        line = _here()
        ttl.DeviceDomain.product(outer=grid, inner=(2,))
    _at(info, line)
    with pytest.raises(KernelValueError, match="an edges graph names whole devices") as info:
        line = _here()
        ttl.TransferGraph.edges(grid, edges=[((0, 0), (0, 1))], component="row")
    _at(info, line)


@ttl.operation(grid=(1, 1), device_domain=PRODUCT)
def only_one_device_copies(inp, out):
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.compute()
    def idle_compute():
        pass

    @ttl.datamovement()
    def copy_on_row_1_column_0():
        if PRODUCT.is_current(ttl.DeviceRef(column=0, row=1)):
            with dfb.reserve() as block:
                ttl.copy(inp[0, 0], block).wait()
                ttl.copy(block, out[0, 0]).wait()


def test_is_current_names_a_device_by_its_components(chips):
    chips(4)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 2))
    v = np.random.default_rng(13).standard_normal((4 * T, T)).astype(np.float32)
    inp, out = mesh_tensors(mesh, v, np.zeros_like(v))
    only_one_device_copies(inp, out)
    expected = np.zeros_like(v)
    expected[2 * T:3 * T] = v[2 * T:3 * T]                 # device (row 1, column 0) is index 2
    np.testing.assert_array_equal(read_mesh(out, mesh), expected)
