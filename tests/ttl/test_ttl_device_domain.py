"""Operations over several logical devices: ``@ttl.operation(device_domain=ttl.DeviceDomain(...))``
with ``ttl.PipeNet(graph=ttl.TransferGraph...)`` between the same nodes of different devices, as
TT-Lang's multi-device pipe examples write them. Each device is one chip of a simulated mesh run as
one device; each takes its own pieces of the mesh tensors. Checked against numpy: a ring copy
(``axis_neighbor(wrap=True)``), an all-to-all exchange selected by ``pipe.source_device_index`` /
``destination_device_index``, a tree all-reduce over ``TransferGraph.edges`` stages, row and column
rings of a 2-D domain; the data movement kernels' C++ is checked against the real headers; misuse is
one error at the user's line."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError, KernelValueError
from ttl_helpers import mesh_tensors, read_mesh

T = 32



# -- a ring: every node sends its tile to the same node of the next device ----------------------

RING_DOMAIN = ttl.DeviceDomain((4,))
RING_NET = ttl.PipeNet(graph=ttl.TransferGraph.axis_neighbor(RING_DOMAIN, axis=0, wrap=True))


@ttl.operation(grid=(2, 2), device_domain=RING_DOMAIN)
def ring_copy(inp, out):
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    receive_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def idle_compute():
        pass

    @ttl.datamovement()
    def send_to_next_device():
        node_column, node_row = ttl.node(dims=2)

        def send(pipe):
            block = send_dfb.reserve()
            ttl.copy(inp[node_row, node_column], block).wait()
            block.push()
            ready = send_dfb.wait()
            ttl.copy(ready, pipe).wait()
            ready.pop()

        RING_NET.if_src(send)

    @ttl.datamovement()
    def receive_from_previous_device():
        def receive(pipe):
            block = receive_dfb.reserve()
            ttl.copy(pipe, block).wait()
            block.push()
            ready = receive_dfb.wait()
            source_column, source_row = pipe.src      # the same node, on the previous device
            ttl.copy(ready, out[source_row, source_column]).wait()
            ready.pop()

        RING_NET.if_dst(receive)


def _ring_inputs(n=4):
    mesh = ttnn.open_mesh_device(ttnn.MeshShape((n,)))
    v = np.random.default_rng(1).standard_normal((n * 2 * T, 2 * T)).astype(np.float32)
    return mesh, v, mesh_tensors(mesh, v, np.zeros_like(v))


def test_a_ring_copies_each_device_shard_to_the_next_device(chips):
    chips(4)
    mesh, v, (inp, out) = _ring_inputs()
    ring_copy(inp, out)
    shards = np.split(v, 4)
    np.testing.assert_array_equal(read_mesh(out, mesh), np.concatenate([shards[(d - 1) % 4] for d in range(4)]))


def test_a_mesh_reshaped_to_the_domain_runs_the_ring(chips):
    """``MeshDevice.reshape``: a 2x2 mesh arranged as a line of 4 chips takes the 4-device ring."""
    from tilefold.errors import LayoutError

    chips(4)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 2))
    mesh.reshape(ttnn.MeshShape((4,)))
    v = np.random.default_rng(2).standard_normal((4 * 2 * T, 2 * T)).astype(np.float32)
    inp, out = mesh_tensors(mesh, v, np.zeros_like(v))
    ring_copy(inp, out)
    shards = np.split(v, 4)
    np.testing.assert_array_equal(read_mesh(out, mesh), np.concatenate([shards[(d - 1) % 4] for d in range(4)]))
    with pytest.raises(LayoutError, match=r"MeshDevice.reshape\(3x1\): the mesh has 4 chips"):
        mesh.reshape(ttnn.MeshShape(3, 1))


def test_the_ring_transfers_cross_ethernet(chips):
    """The tiles cross between chips: the run takes at least one ethernet hop."""
    from tilefold.arch import ETHERNET_LATENCY_CYCLES
    from tilefold.frontend.ttl import session

    chips(4)
    _, _, (inp, out) = _ring_inputs()
    ring_copy(inp, out)
    assert session.settings().runs[-1][1].perf.cycles >= ETHERNET_LATENCY_CYCLES


def test_ring_kernels_compile_against_the_real_dataflow_headers(chips, tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel
    from tilefold.run.ttl import compile_built

    chips(4)
    _, _, (inp, out) = _ring_inputs()
    built = ring_copy.build((inp, out), {})
    program = compile_built(built, built.capture.arch).program
    assert program.arch.num_chips == 4
    checks = []
    for kernel in program.kernels:
        if kernel.name == "idle_compute":
            continue
        path = tmp_path / f"{kernel.name}.cpp"
        path.write_text(emit_kernel(kernel.function))
        checks.append((path, "reader" if "receive" in kernel.name else "writer",
                       check_kernel.accessor_compile_args(program, kernel)))
    assert len(checks) == 2
    for path, role, args in checks:
        check_kernel.require_accepted(check_kernel.check_kernel(path, role, args))


# -- an all-to-all exchange: what each device sends and where it lands chosen by device index ----

EXCHANGE_DOMAIN = ttl.DeviceDomain((1, 4))
EXCHANGE_NET = ttl.PipeNet(graph=ttl.TransferGraph.all_to_all(EXCHANGE_DOMAIN))


@ttl.operation(grid=(1, 1), device_domain=EXCHANGE_DOMAIN)
def all_to_all_exchange(inp, out):
    """Device d sends its tile j to device j, and writes the tile from device s at row s of out;
    its own tile d stays (out = the transpose of the devices' tiles)."""
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    receive_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    local_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)

    @ttl.compute()
    def idle_compute():
        pass

    @ttl.datamovement()
    def sender():
        me = EXCHANGE_DOMAIN.current_index()
        with local_dfb.reserve() as block:
            ttl.copy(inp[me, 0], block).wait()
            ttl.copy(block, out[me, 0]).wait()

        def send_to_peer(pipe):
            with send_dfb.reserve() as block:
                ttl.copy(inp[pipe.destination_device_index, 0], block).wait()
            with send_dfb.wait() as block:
                ttl.copy(block, pipe).wait()

        EXCHANGE_NET.if_src(send_to_peer)

    @ttl.datamovement()
    def receiver():
        def receive_from_peer(pipe):
            source_device_index = pipe.source_device_index
            with receive_dfb.reserve() as block:
                ttl.copy(pipe, block).wait()
            with receive_dfb.wait() as block:
                ttl.copy(block, out[source_device_index, 0]).wait()

        EXCHANGE_NET.if_dst(receive_from_peer)


def test_an_all_to_all_exchange_selected_by_device_index(chips):
    chips(4)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 4))
    v = np.random.default_rng(2).standard_normal((4 * 4 * T, T)).astype(np.float32)
    inp, out = mesh_tensors(mesh, v, np.zeros_like(v))
    all_to_all_exchange(inp, out)
    tiles = v.reshape(4, 4, T, T)                  # [device, tile]
    np.testing.assert_array_equal(read_mesh(out, mesh).reshape(4, 4, T, T), tiles.transpose(1, 0, 2, 3))


# the two-device exchange of TT-Lang's identity-selected test: each sends the tile the other's
# index names, and a branch on the index picks the buffer
PAIR_DOMAIN = ttl.DeviceDomain((1, 2))
PAIR_NET = ttl.PipeNet(graph=ttl.TransferGraph.all_to_all(PAIR_DOMAIN))


@ttl.operation(grid=(1, 1), device_domain=PAIR_DOMAIN)
def identity_selected_exchange(inp, out):
    send_low_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    send_high_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    receive_low_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    receive_high_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.compute()
    def idle_compute():
        pass

    @ttl.datamovement()
    def sender_node():
        def send_to_peer(pipe):
            if pipe.destination_device_index == 0:
                with send_low_dfb.reserve() as send_block:
                    ttl.copy(inp[0, 0], send_block).wait()
                with send_low_dfb.wait() as send_block:
                    ttl.copy(send_block, pipe).wait()
            else:
                with send_high_dfb.reserve() as send_block:
                    ttl.copy(inp[0, 1], send_block).wait()
                with send_high_dfb.wait() as send_block:
                    ttl.copy(send_block, pipe).wait()

        PAIR_NET.if_src(send_to_peer)

    @ttl.datamovement()
    def receiver_node():
        def receive_from_peer(pipe):
            source_device_index = pipe.source_device_index
            if source_device_index == 0:
                with receive_low_dfb.reserve() as receive_block:
                    ttl.copy(pipe, receive_block).wait()
                with receive_low_dfb.wait() as receive_block:
                    ttl.copy(receive_block, out[0, 0]).wait()
            else:
                with receive_high_dfb.reserve() as receive_block:
                    ttl.copy(pipe, receive_block).wait()
                with receive_high_dfb.wait() as receive_block:
                    ttl.copy(receive_block, out[0, 1]).wait()

        PAIR_NET.if_dst(receive_from_peer)


def test_a_pair_exchange_branches_on_the_device_index(chips):
    chips(32)
    parent = ttnn.open_mesh_device(ttnn.MeshShape(4, 8))       # a Galaxy, of which the operation takes 1x2
    mesh = parent.create_submesh(ttnn.MeshShape(1, 2))
    v = np.arange(2 * T * 2 * T, dtype=np.float32).reshape(2 * T, 2 * T)
    inp, out = mesh_tensors(mesh, v, np.zeros_like(v))
    identity_selected_exchange(inp, out)
    expected = np.zeros_like(v)
    expected[:T, T:] = v[T:, :T]
    expected[T:, :T] = v[:T, T:]
    np.testing.assert_array_equal(read_mesh(out, mesh), expected)


# -- a tree all-reduce over explicit edges: reduce stages toward device 0, then broadcast back ----

TREE_DEVICES = 4
TREE_DOMAIN = ttl.DeviceDomain((1, TREE_DEVICES))


def _reduce_stages(n):
    """Per stage, the (source, destination) devices: at distance 1, 2, 4 ... toward device 0."""
    stages, distance = [], 1
    while distance < n:
        stages.append([((0, d + distance), (0, d)) for d in range(0, n, 2 * distance)])
        distance *= 2
    return stages


REDUCE_STAGES = _reduce_stages(TREE_DEVICES)
REDUCE_NETS = [ttl.PipeNet(graph=ttl.TransferGraph.edges(TREE_DOMAIN, edges=e)) for e in REDUCE_STAGES]
BROADCAST_NETS = [ttl.PipeNet(graph=ttl.TransferGraph.edges(TREE_DOMAIN, edges=[(d, s) for s, d in e]))
                  for e in reversed(REDUCE_STAGES)]


@ttl.operation(grid=(2, 1), device_domain=TREE_DOMAIN)
def tree_all_reduce(inp, out):
    """Every node sums its tile over the devices: partial sums climb the tree to device 0, whose
    total goes back down the same edges reversed."""
    local_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    reduce_recv = [ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2) for _ in REDUCE_NETS]
    partial = [ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2) for _ in REDUCE_NETS]
    broadcast_recv = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    total_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def exchange():
        node_column, node_row = ttl.node(dims=2)
        with local_dfb.reserve() as block:
            ttl.copy(inp[node_row, node_column], block).wait()
        for level, net in enumerate(REDUCE_NETS):
            send_dfb = local_dfb if level == 0 else partial[level - 1]
            recv_dfb = reduce_recv[level]

            def send_partial(pipe, send_dfb=send_dfb):
                with send_dfb.wait() as value:
                    ttl.copy(value, pipe).wait()

            def receive_partial(pipe, recv_dfb=recv_dfb):
                with recv_dfb.reserve() as block:
                    ttl.copy(pipe, block).wait()

            net.if_src(send_partial)
            net.if_dst(receive_partial)

        def receive_total(pipe):
            with broadcast_recv.reserve() as block:
                ttl.copy(pipe, block).wait()

        for net in BROADCAST_NETS:
            net.if_dst(receive_total)

    @ttl.compute()
    def add():
        for level, net in enumerate(REDUCE_NETS):
            if net.is_dst():
                mine = local_dfb if level == 0 else partial[level - 1]
                with mine.wait() as a, reduce_recv[level].wait() as b, partial[level].reserve() as s:
                    s.store(a + b)
        last = len(REDUCE_NETS) - 1
        if REDUCE_NETS[last].is_dst():             # the root: its total is the result
            with partial[last].wait() as t, total_dfb.reserve() as o:
                o.store(t)
        else:                                      # the others: the total their parent sends
            with broadcast_recv.wait() as t, total_dfb.reserve() as o:
                o.store(t)

    @ttl.datamovement()
    def forward_and_write():
        node_column, node_row = ttl.node(dims=2)
        with total_dfb.wait() as total:
            def send_total(pipe):
                ttl.copy(total, pipe).wait()

            for net in BROADCAST_NETS:
                net.if_src(send_total)
            ttl.copy(total, out[node_row, node_column]).wait()


def test_a_tree_all_reduce_over_edge_graphs(chips):
    chips(TREE_DEVICES)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, TREE_DEVICES))
    v = np.random.default_rng(3).standard_normal((TREE_DEVICES * T, 2 * T)).astype(np.float32)
    inp, out = mesh_tensors(mesh, v, np.zeros_like(v))
    tree_all_reduce(inp, out)
    shards = np.split(v, TREE_DEVICES)
    # the order of the tree's additions, each rounded to float32 as the device packs it
    pairs = [shards[0] + shards[1], shards[2] + shards[3]]
    total = pairs[0] + pairs[1]
    np.testing.assert_allclose(read_mesh(out, mesh), np.concatenate([total] * TREE_DEVICES), rtol=1e-6, atol=1e-6)


# -- row and column rings of a 2-D domain ---------------------------------------------------------

GRID_DOMAIN = ttl.DeviceDomain((2, 3))
ROW_RING = ttl.PipeNet(graph=ttl.TransferGraph.axis_neighbor(GRID_DOMAIN, axis=1, wrap=True))
COLUMN_RING = ttl.PipeNet(graph=ttl.TransferGraph.axis_neighbor(GRID_DOMAIN, axis=0, wrap=True))


@ttl.operation(grid=(2, 1), device_domain=GRID_DOMAIN)
def row_and_column_rings(inp, row_out, column_out):
    row_send = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    column_send = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    row_receive = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    column_receive = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.compute()
    def idle_compute():
        pass

    @ttl.datamovement()
    def send():
        column, _ = ttl.node(dims=2)
        for net, dfb in ((ROW_RING, row_send), (COLUMN_RING, column_send)):
            def send_tile(pipe, dfb=dfb):
                with dfb.reserve() as block:
                    ttl.copy(inp[0, column], block).wait()
                with dfb.wait() as block:
                    ttl.copy(block, pipe).wait()

            net.if_src(send_tile)

    @ttl.datamovement()
    def receive():
        column, _ = ttl.node(dims=2)
        for net, dfb, out in ((ROW_RING, row_receive, row_out), (COLUMN_RING, column_receive, column_out)):
            def receive_tile(pipe, dfb=dfb, out=out):
                with dfb.reserve() as block:
                    ttl.copy(pipe, block).wait()
                with dfb.wait() as block:
                    ttl.copy(block, out[0, column]).wait()

            net.if_dst(receive_tile)


def test_row_and_column_rings_of_a_2d_domain(chips):
    chips(6)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 3))
    v = np.random.default_rng(4).standard_normal((6 * T, 2 * T)).astype(np.float32)
    inp, row_out, column_out = mesh_tensors(mesh, v, np.zeros_like(v), np.zeros_like(v))
    row_and_column_rings(inp, row_out, column_out)
    shards = np.split(v, 6)                        # device (r, c) is shard r * 3 + c
    rows = [shards[r * 3 + (c - 1) % 3] for r in range(2) for c in range(3)]
    columns = [shards[((r - 1) % 2) * 3 + c] for r in range(2) for c in range(3)]
    np.testing.assert_array_equal(read_mesh(row_out, mesh), np.concatenate(rows))
    np.testing.assert_array_equal(read_mesh(column_out, mesh), np.concatenate(columns))


# -- local_nodes, gather, nets without a graph ----------------------------------------------------

GATHER_DOMAIN = ttl.DeviceDomain((3,))
GATHER_NET = ttl.PipeNet(graph=ttl.TransferGraph.gather(GATHER_DOMAIN, root=0), local_nodes=[(1, 0)])
LOCAL_NET = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])


@ttl.operation(grid=(2, 1), device_domain=GATHER_DOMAIN)
def gather_through_one_node(inp, out):
    """On every device node (0, 0) reads the tile and passes it to node (1, 0) over a net without a
    graph (each device's own copy of it); node (1, 0) of devices 1 and 2 sends it to node (1, 0) of
    device 0, which writes each at the row of its source device; every device writes its own tile
    at row 0."""
    stage = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    local = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    gathered = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.compute()
    def idle_compute():
        pass

    @ttl.datamovement()
    def move():
        def read_and_pass(pipe):
            with stage.reserve() as block:
                ttl.copy(inp[0, 0], block).wait()
            with stage.wait() as block:
                ttl.copy(block, pipe).wait()

        def take(pipe):
            with local.reserve() as block:
                ttl.copy(pipe, block).wait()
            with local.wait() as block:
                ttl.copy(block, out[0, 0]).wait()

                def send(pipe):
                    ttl.copy(block, pipe).wait()

                GATHER_NET.if_src(send)

        LOCAL_NET.if_src(read_and_pass)
        LOCAL_NET.if_dst(take)

    @ttl.datamovement()
    def collect():
        def receive(pipe):
            row = pipe.source_device_index
            with gathered.reserve() as block:
                ttl.copy(pipe, block).wait()
            with gathered.wait() as block:
                ttl.copy(block, out[row, 0]).wait()

        GATHER_NET.if_dst(receive)


def test_a_gather_between_listed_nodes_and_per_device_local_pipes(chips):
    chips(3)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 3))
    v = np.random.default_rng(5).standard_normal((3 * T, T)).astype(np.float32)
    out_values = np.zeros((3 * 3 * T, T), np.float32)
    inp, out = mesh_tensors(mesh, v, out_values)
    gather_through_one_node(inp, out)
    shards = np.split(v, 3)
    expected = np.zeros((3, 3 * T, T), np.float32)
    for d in range(3):
        expected[d, :T] = shards[d]
    expected[0, T:2 * T], expected[0, 2 * T:] = shards[1], shards[2]
    np.testing.assert_array_equal(read_mesh(out, mesh).reshape(3, 3 * T, T), expected)


# -- semaphores and the node's own device ------------------------------------------------------

PAIR_LINE = ttl.DeviceDomain((2,))


@ttl.operation(grid=(2, 2), device_domain=PAIR_LINE)
def broadcast_on_each_device(inp, scratch, out):
    """On each device node 0 stages a tile (tile 1 on device 1, tile 0 elsewhere) and sets every
    node's barrier of its own device; the others wait for it and copy the staged tile to theirs."""
    node_num = ttl.node(dims=1)
    barrier = ttl.Semaphore(initial_value=0)
    everyone = barrier.get_remote_multicast()
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def dm():
        if node_num == 0:
            with dfb.reserve() as blk:
                if PAIR_LINE.is_current((1,)):
                    ttl.copy(inp[0, 1], blk).wait()
                else:
                    ttl.copy(inp[0, 0], blk).wait()
                ttl.copy(blk, scratch[0, 0]).wait()
            everyone.set(1)
        else:
            barrier.wait_eq(1)
            with dfb.reserve() as blk:
                ttl.copy(scratch[0, 0], blk).wait()
                ttl.copy(blk, out[0, node_num]).wait()

    @ttl.compute()
    def compute():
        pass


def test_semaphores_and_is_current_on_each_device(chips):
    chips(2)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape((2,)))
    v = np.random.default_rng(6).standard_normal((2 * T, 4 * T)).astype(np.float32)
    inp, scratch, out = mesh_tensors(mesh, v, np.zeros_like(v), np.zeros_like(v))
    broadcast_on_each_device(inp, scratch, out)
    expected = np.zeros((2, T, 4 * T), np.float32)
    for d, tile in ((0, 0), (1, 1)):
        staged = v[d * T:(d + 1) * T, tile * T:(tile + 1) * T]
        expected[d, :, T:] = np.tile(staged, (1, 3))
    np.testing.assert_array_equal(read_mesh(out, mesh).reshape(2, T, 4 * T), expected)


@ttl.operation(grid=(4, 1), device_domain=PAIR_LINE)
def named_gather_on_each_device(inp, out):
    """Pipes named in the kernel, of a net without a graph: on each device nodes 1..3 send a block
    to node 0 of that device."""
    pipes = [ttl.Pipe(src=(k, 0), dst=(0, 0)) for k in range(1, 4)]
    net = ttl.PipeNet(pipes)
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 2), block_count=2)
    recv_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=1)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def dm():
        node_x, _ = ttl.node(dims=2)
        for k, pipe in enumerate(pipes):
            if net.is_dst():
                with recv_dfb.reserve() as blk:
                    ttl.copy(pipe, blk).wait()
                with recv_dfb.wait() as blk:
                    ttl.copy(blk, out[0, 2 * k:2 * k + 2]).wait()
            elif net.is_src() and node_x == k + 1:
                with send_dfb.reserve() as blk:
                    ttl.copy(inp[0, 2 * k:2 * k + 2], blk).wait()
                with send_dfb.wait() as blk:
                    ttl.copy(blk, pipe).wait()


def test_named_pipes_of_a_net_without_a_graph_on_each_device(chips):
    chips(2)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape((2,)))
    v = np.random.default_rng(7).standard_normal((2 * T, 6 * T)).astype(np.float32)
    inp, out = mesh_tensors(mesh, v, np.zeros_like(v))
    named_gather_on_each_device(inp, out)
    np.testing.assert_array_equal(read_mesh(out, mesh), v)


# -- misuse: one error at the user's line ---------------------------------------------------------


def _here() -> int:
    """The line after the caller's."""
    import inspect

    return inspect.currentframe().f_back.f_lineno + 1


def _at(info, line: int) -> None:
    assert info.value.location.file == __file__ and info.value.location.line == line, str(info.value)


def test_an_edge_to_a_device_outside_the_domain():
    domain = ttl.DeviceDomain((1, 4))
    with pytest.raises(KernelValueError, match=r"edge 1: destination \(0, 4\) is outside DeviceDomain\(\(1, 4\)\)") \
            as info:
        line = _here()
        ttl.TransferGraph.edges(domain, edges=[((0, 1), (0, 0)), ((0, 3), (0, 4))])
    _at(info, line)
    with pytest.raises(KernelValueError, match="source must differ from the destination") as info:
        line = _here()
        ttl.TransferGraph.edges(domain, edges=[((0, 2), (0, 2))])
    _at(info, line)
    with pytest.raises(KernelValueError, match=r"axis_neighbor\(axis=2\): DeviceDomain\(\(1, 4\)\) has axes 0 to 1"):
        ttl.TransferGraph.axis_neighbor(domain, axis=2)


def test_a_domain_larger_than_the_simulated_chips(chips):
    chips(2)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
    inp, out = mesh_tensors(mesh, np.zeros((2 * T, T), np.float32), np.zeros((2 * T, T), np.float32))
    with pytest.raises(KernelError, match=r"DeviceDomain\(\(4,\)\), 4 devices, but 2 chips are simulated; run with "
                                          r"--num-devices 4 \(or call ttnn.set_num_devices\(4\)\)") as info:
        line = _here()
        ring_copy(inp, out)
    _at(info, line)


def test_mesh_tensors_of_another_shape_than_the_domain(chips):
    chips(4)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 2))
    inp, out = mesh_tensors(mesh, np.zeros((16 * T, T), np.float32), np.zeros((16 * T, T), np.float32))
    with pytest.raises(KernelError, match=r"on a 2x2 mesh, and the operation runs over DeviceDomain\(\(1, 4\)\)") as info:
        line = _here()
        all_to_all_exchange(inp, out)
    _at(info, line)


def test_a_graph_net_needs_the_operations_domain(chips):
    chips(4)
    other = ttl.DeviceDomain((2, 2))
    line = _here()
    net = ttl.PipeNet(graph=ttl.TransferGraph.all_to_all(other))

    @ttl.operation(grid=(1, 1), device_domain=EXCHANGE_DOMAIN)
    def mismatched(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def dm():
            def send(pipe):
                with dfb.reserve() as block:
                    ttl.copy(inp[0, 0], block).wait()
                    ttl.copy(block, pipe).wait()

            net.if_src(send)

    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 4))
    inp, out = mesh_tensors(mesh, np.zeros((16 * T, T), np.float32), np.zeros((16 * T, T), np.float32))
    with pytest.raises(KernelError, match=r"graph spans DeviceDomain\(\(2, 2\)\), but operation 'mismatched' runs over "
                                          r"DeviceDomain\(\(1, 4\)\)") as info:
        mismatched(inp, out)
    _at(info, line)

    @ttl.operation(grid=(1, 1))
    def without_domain(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def dm():
            def send(pipe):
                with dfb.reserve() as block:
                    ttl.copy(inp[0, 0], block).wait()
                    ttl.copy(block, pipe).wait()

            net.if_src(send)

    plain = ttnn.from_numpy(np.zeros((T, T), np.float32), layout=ttnn.TILE_LAYOUT)
    with pytest.raises(KernelError, match="has no device domain; give it @ttl.operation\\(..., device_domain=...\\)"):
        without_domain(plain, plain)


def test_a_device_index_only_at_the_pipes_other_end(chips):
    chips(4)

    @ttl.operation(grid=(1, 1), device_domain=EXCHANGE_DOMAIN)
    def wrong_end(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def dm():
            def send(pipe):
                with dfb.reserve() as block:
                    ttl.copy(inp[pipe.source_device_index, 0], block).wait()
                    ttl.copy(block, pipe).wait()

            EXCHANGE_NET.if_src(send)

    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 4))
    inp, out = mesh_tensors(mesh, np.zeros((16 * T, T), np.float32), np.zeros((16 * T, T), np.float32))
    with pytest.raises(KernelError, match=r"pipe.source_device_index: in net.if_src's body a pipe has .dst \(the node "
                                          r"at its other end\) and .destination_device_index"):
        wrong_end(inp, out)


def test_an_operation_over_devices_writes_mesh_tensors(chips):
    chips(4)
    plain = [ttnn.from_numpy(np.zeros((4 * T, 2 * T), np.float32), layout=ttnn.TILE_LAYOUT) for _ in range(2)]
    with pytest.raises(KernelError, match="writes tensor 'out', which is one device tensor; give a mesh tensor"):
        ring_copy(*plain)


def test_misuse_of_the_device_api():
    with pytest.raises(KernelValueError, match=r"all_to_all\(component='column'\): 'column' is no component of "
                                               r"DeviceDomain\(\(2, 3\)\); its components are 'device'") as info:
        line = _here()
        ttl.TransferGraph.all_to_all(ttl.DeviceDomain((2, 3)), component="column")
    _at(info, line)
    with pytest.raises(KernelValueError, match="device_domain=\\(4,\\)\\): give one ttl.DeviceDomain") as info:
        line = _here()
        ttl.operation(grid=(1, 1), device_domain=(4,))
    _at(info, line)
    with pytest.raises(KernelValueError, match="give the extents as a tuple of positive integers"):
        ttl.DeviceDomain((0, 2))


def test_structured_graphs_list_their_edges():
    line4 = ttl.DeviceDomain((4,))
    assert ttl.TransferGraph.axis_neighbor(line4, axis=0).edges == [(0, 1), (1, 2), (2, 3)]
    assert ttl.TransferGraph.axis_neighbor(line4, axis=0, offset=-1, wrap=True).edges == [(0, 3), (1, 0), (2, 1),
                                                                                        (3, 2)]
    assert ttl.TransferGraph.scatter(line4, source=(2,)).edges == [(2, 0), (2, 1), (2, 3)]
    assert ttl.TransferGraph.gather(line4, root=1).edges == [(0, 1), (2, 1), (3, 1)]
    plane = ttl.DeviceDomain((2, 2))
    assert ttl.TransferGraph.stencil(plane, offsets=[(0, 1), (1, 0)]).edges == [(0, 1), (0, 2), (1, 3), (2, 3)]
    assert len(ttl.TransferGraph.all_to_all(plane).edges) == 12


# -- a destination range: one device sends its tile to every device of a box ----------------------

BROADCAST_DOMAIN = ttl.DeviceDomain((4,))
RANGE_NET = ttl.PipeNet(graph=ttl.TransferGraph.edges(
    BROADCAST_DOMAIN, edges=[(ttl.DeviceRef(0), ttl.DeviceRange(lo=ttl.DeviceRef(1), hi=ttl.DeviceRef(4)))]))


@ttl.operation(grid=(2, 2), device_domain=BROADCAST_DOMAIN)
def broadcast_from_device_0(inp, out):
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.compute()
    def idle_compute():
        pass

    @ttl.datamovement()
    def send_own_tile():
        node_column, node_row = ttl.node(dims=2)
        if BROADCAST_DOMAIN.current_index() == 0:
            with dfb.reserve() as block:
                ttl.copy(inp[node_row, node_column], block).wait()
                ttl.copy(block, out[node_row, node_column]).wait()

                def send(pipe):
                    ttl.copy(block, pipe).wait()

                RANGE_NET.if_src(send)

    @ttl.datamovement()
    def receive_tile():
        node_column, node_row = ttl.node(dims=2)

        def receive(pipe):
            with dfb.reserve() as block:
                ttl.copy(pipe, block).wait()
                ttl.copy(block, out[node_row, node_column]).wait()

        RANGE_NET.if_dst(receive)


def test_a_device_range_destination_reaches_every_device_of_the_box(chips):
    chips(4)
    mesh, v, (inp, out) = _ring_inputs()
    broadcast_from_device_0(inp, out)
    first = np.split(v, 4)[0]
    np.testing.assert_array_equal(read_mesh(out, mesh), np.concatenate([first] * 4))


def test_a_device_range_lists_an_edge_to_each_device_of_its_box():
    plane = ttl.DeviceDomain((2, 3))
    box = ttl.DeviceRange(lo=ttl.DeviceRef((0, 1)), hi=ttl.DeviceRef((2, 3)))
    assert ttl.TransferGraph.edges(plane, edges=[((0, 0), box)]).edges == [(0, 1), (0, 2), (0, 4), (0, 5)]
    assert ttl.TransferGraph.edges(plane, edges=[((1, 0), ttl.DeviceRange(lo=(0, 0), hi=(1, 3)))]).edges == \
        [(3, 0), (3, 1), (3, 2)]
    with pytest.raises(KernelValueError, match="the source lies in its destination range") as info:
        line = _here()
        ttl.TransferGraph.edges(plane, edges=[((0, 1), box)])
    _at(info, line)
    with pytest.raises(KernelValueError, match=r"holds no device; hi must exceed lo on every axis") as info:
        line = _here()
        ttl.TransferGraph.edges(plane, edges=[((0, 0), ttl.DeviceRange(lo=(1, 1), hi=(1, 3)))])
    _at(info, line)
    with pytest.raises(KernelValueError, match=r"hi \(3, 3\) is beyond DeviceDomain\(\(2, 3\)\)"):
        ttl.TransferGraph.edges(plane, edges=[((0, 0), ttl.DeviceRange(lo=(1, 1), hi=(3, 3)))])
    with pytest.raises(KernelValueError, match=r"lo \(2, 0\) is outside"):
        ttl.TransferGraph.edges(plane, edges=[((0, 0), ttl.DeviceRange(lo=(2, 0), hi=(2, 3)))])


# -- a domain wider than 64 node columns --------------------------------------------------------------

WIDE_DOMAIN = ttl.DeviceDomain((16,))
WIDE_NET = ttl.PipeNet(graph=ttl.TransferGraph.axis_neighbor(WIDE_DOMAIN, axis=0, wrap=True))


@ttl.operation(grid=(8, 1), device_domain=WIDE_DOMAIN)
def wide_ring_copy(inp, out):
    """16 devices of 8 node columns (128 columns of the simulated mesh; NOC coordinates of 7 bits
    and more): each node sends its tile to the same node of the next device."""
    send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    receive_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def idle_compute():
        pass

    @ttl.datamovement()
    def send():
        column, _ = ttl.node(dims=2)

        def forward(pipe):
            with send_dfb.reserve() as block:
                ttl.copy(inp[0, column], block).wait()
            with send_dfb.wait() as block:
                ttl.copy(block, pipe).wait()

        WIDE_NET.if_src(forward)

    @ttl.datamovement()
    def receive():
        column, _ = ttl.node(dims=2)

        def land(pipe):
            with receive_dfb.reserve() as block:
                ttl.copy(pipe, block).wait()
            with receive_dfb.wait() as block:
                ttl.copy(block, out[0, column]).wait()

        WIDE_NET.if_dst(land)


def test_a_domain_of_more_than_64_node_columns_runs(chips):
    chips(16)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape((16,)))
    v = np.random.default_rng(3).standard_normal((16 * T, 8 * T)).astype(np.float32)
    inp, out = mesh_tensors(mesh, v, np.zeros_like(v))
    wide_ring_copy(inp, out)
    shards = np.split(v, 16)
    np.testing.assert_array_equal(read_mesh(out, mesh), np.concatenate([shards[(d - 1) % 16] for d in range(16)]))
