"""An operation whose 4-D grid ``(mesh rows, mesh columns, x, y)`` spans several chips runs as one
simulated device of those chips (a 3-D grid ``(chips, x, y)`` too: leading dimensions are mesh axes) (``tilefold.arch.mesh_of``): a pipe from a node of chip 0 to a node
of every chip, each chip's node then working on its own column of tiles; checked against numpy.
Too few simulated chips is a clear error, and the C++ of such an operation is refused clearly."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import CompileError, KernelError
from tilefold.frontend.ttl.mesh import set_num_devices

MESH_R, MESH_C, CX, CY = 1, 2, 8, 2     # 16 columns: more than one 8x8 chip holds


@ttl.operation(grid=(MESH_R, MESH_C, CX, CY))
def scale_on_each_chip(a, s, out):
    """Node (0, 0) of chip 0 reads the scale tile and sends it to node (0, 0) of every chip; that
    node of chip k writes ``a[:, k] * s`` to column k of ``out``."""
    pipe = ttl.Pipe((0, 0, 0, 0), (slice(0, MESH_R), slice(0, MESH_C), 0, 0))
    net = ttl.PipeNet([pipe])
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    s_dfb = ttl.make_dataflow_buffer_like(s, shape=(1, 1), block_count=1)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        if net.is_active():
            with s_dfb.wait() as sv, a_dfb.wait() as av, o_dfb.reserve() as o:
                o.store(av * sv)

    @ttl.datamovement()
    def read():
        if not net.is_active():
            return
        chip = ttl.node(dims=1) // (CX * CY)
        with s_dfb.reserve() as blk:
            def send(p):
                ttl.copy(s[0, 0], blk).wait()
                ttl.copy(blk, p).wait()

            def receive(p):
                ttl.copy(p, blk).wait()

            net.if_src(send)
            net.if_dst(receive)
        with a_dfb.reserve() as blk:
            ttl.copy(a[0, chip], blk).wait()

    @ttl.datamovement()
    def write():
        if net.is_active():
            chip = ttl.node(dims=1) // (CX * CY)
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[0, chip]).wait()


def _tensors():
    rng = np.random.default_rng(3)
    a = rng.random((32, 64), dtype=np.float32)
    s = np.full((32, 32), 1.5, np.float32)
    made = [ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT) for v in (a, s, np.zeros_like(a))]
    return a, made


@pytest.fixture
def two_chips():
    set_num_devices(2)
    yield
    set_num_devices(None)


def test_a_pipe_between_chips_on_a_mesh_grid(two_chips):
    a, tensors = _tensors()
    scale_on_each_chip(*tensors)
    np.testing.assert_allclose(ttnn.to_numpy(tensors[2]), a * 1.5, rtol=1e-6)


def test_a_mesh_grid_needs_its_chips():
    from tilefold.frontend.ttl.mesh import set_num_devices

    _, tensors = _tensors()
    set_num_devices(1)
    try:
        with pytest.raises(KernelError, match="spans 2 chips .* but 1 are simulated; run with --num-devices 2"):
            scale_on_each_chip(*tensors)
    finally:
        set_num_devices(None)


def test_the_cpp_of_a_mesh_operation_is_refused(two_chips):
    from tilefold.codegen.cpp.host_data import HostData
    from tilefold.codegen.cpp.project import project_files
    from tilefold.run.ttl import compile_built

    _, tensors = _tensors()
    built = scale_on_each_chip.build(tensors, {})
    program = compile_built(built, built.capture.arch).program
    assert program.arch.num_chips == 2 and program.arch.grid == (16, 2)
    with pytest.raises(CompileError, match="does not write their C\\+\\+ yet"):
        project_files(program, HostData())


def test_transfers_between_chips_cost_an_ethernet_hop(two_chips, monkeypatch):
    """The same run with free ethernet is at least one hop faster: the tile crosses to the other
    chip on the critical path (the receiver's ready signal crosses earlier, hidden by the sender's
    DRAM read)."""
    import tilefold.sim.dataflow_api as dataflow_api
    from tilefold.arch import ETHERNET_LATENCY_CYCLES
    from tilefold.frontend.ttl import session

    def cycles():
        _, tensors = _tensors()
        scale_on_each_chip(*tensors)
        return session.settings().runs[-1][1].perf.cycles

    with_ethernet = cycles()
    monkeypatch.setattr(dataflow_api, "ETHERNET_LATENCY_CYCLES", 0)
    monkeypatch.setattr(dataflow_api, "ETHERNET_BYTES_PER_CYCLE", float("inf"))
    assert with_ethernet - cycles() >= ETHERNET_LATENCY_CYCLES


def test_a_3d_grid_larger_than_a_chip_takes_its_first_dimension_as_a_mesh_axis(two_chips):
    """``grid=(2, 8, 1)``: two chips of 8x1 nodes; node ``(chip, x, 0)`` doubles tile ``chip * 8 + x``."""
    @ttl.operation(grid=(2, 8, 1))
    def double(a, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with a_dfb.wait() as av, o_dfb.reserve() as o:
                o.store(av + av)

        @ttl.datamovement()
        def read():
            chip, x, _ = ttl.node(dims=3)
            with a_dfb.reserve() as blk:
                ttl.copy(a[0, chip * 8 + x], blk).wait()

        @ttl.datamovement()
        def write():
            chip, x, _ = ttl.node(dims=3)
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[0, chip * 8 + x]).wait()

    values = np.random.default_rng(4).random((32, 16 * 32), dtype=np.float32)
    a = ttnn.from_numpy(values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.from_numpy(np.zeros_like(values), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    double(a, out)
    np.testing.assert_allclose(ttnn.to_numpy(out), values * 2, rtol=1e-6)
    assert double.build((a, out), {}).capture.arch.num_chips == 2


def _mesh_axes_op(grid, rank: int, cross: bool = False, out_row=lambda r: r, out_col: int = 0):
    """Node ``r`` (its first coordinate, a mesh axis) doubles tile ``r`` of a tensor sharded over the
    mesh along rows, indexing the whole tensor, into tile ``(out_row(r), out_col)`` of ``o``; with
    ``cross`` every node reads tile 0."""
    @ttl.operation(grid=grid)
    def double_own_rows(a, o):
        dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(o, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with dfb.wait() as blk, out_dfb.reserve() as out_blk:
                out_blk.store(blk + blk)

        @ttl.datamovement()
        def read():
            r = ttl.node(dims=rank)[0]
            with dfb.reserve() as blk:
                ttl.copy(a[0 if cross else r, 0], blk).wait()  # read

        @ttl.datamovement()
        def write():
            r = ttl.node(dims=rank)[0]
            with out_dfb.wait() as blk:
                ttl.copy(blk, o[out_row(r), out_col]).wait()

    return double_own_rows


@pytest.mark.parametrize("grid", [(2, 1, 1), (2, 1, 1, 1)])
def test_a_grid_with_mesh_axes_indexes_mesh_tensors_as_the_whole(grid, two_chips):
    """TT-Lang's grid with mesh axes over mesh tensors: chip ``k`` runs the nodes whose leading
    coordinate is ``k`` and a kernel indexes a mesh-sharded tensor as the whole, reaching its own
    chip's piece; a node reaching another chip's piece is an error at the copy."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 1))
    values = np.random.default_rng(6).random((64, 32), dtype=np.float32)
    a = ttnn.from_numpy(values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh,
                        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
    o = ttnn.from_numpy(np.zeros_like(values), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh,
                        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
    _mesh_axes_op(grid, len(grid))(a, o)
    got = ttnn.to_numpy(o, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
    np.testing.assert_allclose(got, values * 2, rtol=1e-6)
    with pytest.raises(RuntimeError, match="Cross-device access") as info:      # as TT-Lang's simulator
        _mesh_axes_op(grid, len(grid), cross=True)(a, o)
    assert isinstance(info.value, KernelError) and info.value.location is not None
    assert "tiles 0..0 of dimension 0 are on another chip" in str(info.value)
    assert "holds tiles 1..1 of it" in str(info.value)
    ttnn.close_mesh_device(mesh)


def test_a_tensor_of_the_whole_mesh_takes_each_chips_pages(two_chips):
    """TT-Lang's ``test_mesh_access``: with mesh axes, a tensor that is not a mesh tensor is one
    tensor of the whole mesh; each chip writes its own tiles of it and the others keep their values.
    Two chips writing one tile is an error at the call."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 1))
    rng = np.random.default_rng(8)
    values = rng.random((64, 32), dtype=np.float32)
    before = rng.random((64, 64), dtype=np.float32)
    a = ttnn.from_numpy(values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh,
                        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
    o = ttnn.from_numpy(before, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    _mesh_axes_op((2, 1, 1), 3, out_col=1)(a, o)
    want = before.copy()
    want[:, 32:] = values * 2
    np.testing.assert_allclose(ttnn.to_numpy(o), want, rtol=1e-6)
    o = ttnn.from_numpy(before, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    with pytest.raises(KernelError, match="writes tensor 'o' from chips 0 and 1 at its page 1") as info:
        _mesh_axes_op((2, 1, 1), 3, out_row=lambda r: 0, out_col=1)(a, o)
    assert info.value.location is not None and info.value.location.file == __file__
    np.testing.assert_allclose(ttnn.to_numpy(o), before, rtol=1e-6)     # an error leaves the tensor as it was
    ttnn.close_mesh_device(mesh)


@ttl.operation(grid=(MESH_R, MESH_C, CX, CY))
def print_chips(a):
    @ttl.datamovement()
    def read():
        print("chip", ttl.node(dims=1) // (CX * CY))


def test_dprint_cores_name_each_chips_own_nodes(two_chips, capsys, monkeypatch):
    """TT_METAL_DPRINT_CORES names logical cores of each chip, as TT-Metal applies it on every device."""
    monkeypatch.setenv("TT_METAL_DPRINT_CORES", "0,0")
    print_chips(_tensors()[1][0])
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("chip")]
    assert sorted(lines) == ["chip 0", "chip 1"]
