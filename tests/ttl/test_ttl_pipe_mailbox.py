"""Pipe nets whose receives land in tensor slices and whose sends wait on each other in a cycle (a
relay ring, as TT-Lang's ring all-gather) send into a DRAM mailbox: a sender never waits for its
receiver to reach the receive, so a ring relaying more chunks than its buffers hold blocks does not
stop, and no landing buffer takes L1. Simulated against numpy on one chip and over a device domain
of four chips; the kernels' C++ and the host program are checked against the real headers."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import compiled, tile_tensor, zeros

NODES = 4


def _ring_all_gather(rows: int, shard: int, chunk_rows: int, block_count: int = 2, relay_view: bool = False):
    """Node (0, y) of a 1×4 grid owns columns ``y * shard ...`` of ``inp`` and gathers every node's
    shard into its row block of ``out``: its own shard directly, the others around a ring, each
    chunk received into ``out`` and relayed on from there (``relay_view``: through the lower half
    of a relay block twice the chunk's height, sent as a ``ttl.block.subview``)."""
    chunks = rows // chunk_rows
    seed = ttl.PipeNet([ttl.Pipe(src=(0, y), dst=(0, (y + 1) % NODES)) for y in range(NODES)])
    relay = ttl.PipeNet([ttl.Pipe(src=(0, y), dst=(0, (y + 1) % NODES)) for y in range(NODES)])

    @ttl.operation(grid=(1, NODES))
    def ring_gather(inp, out):
        local = ttl.make_dataflow_buffer_like(inp, shape=(chunk_rows, shard), block_count=block_count)
        hop = ttl.make_dataflow_buffer_like(inp, shape=((2 if relay_view else 1) * chunk_rows, shard),
                                            block_count=block_count)

        @ttl.datamovement()
        def send_local():
            _, y = ttl.node(dims=2)
            for c in range(chunks):
                with local.reserve() as blk:
                    ttl.copy(inp[c * chunk_rows:(c + 1) * chunk_rows, y * shard:(y + 1) * shard], blk).wait()
                with local.wait() as blk:
                    first = y * rows + c * chunk_rows
                    ttl.copy(blk, out[first:first + chunk_rows, y * shard:(y + 1) * shard]).wait()

                    def send(pipe):
                        ttl.copy(blk, pipe).wait()

                    seed.if_src(send)

        @ttl.datamovement()
        def relay_chunks():
            _, y = ttl.node(dims=2)
            for distance in range(1, NODES):
                owner = (y + NODES - distance) % NODES
                for c in range(chunks):
                    first = y * rows + c * chunk_rows
                    region = out[first:first + chunk_rows, owner * shard:(owner + 1) * shard]

                    def receive(pipe):
                        ttl.copy(pipe, region, shape=(chunk_rows, shard)).wait()

                    if distance == 1:
                        seed.if_dst(receive)
                    else:
                        relay.if_dst(receive)
                    if distance < NODES - 1:
                        if relay_view:
                            with hop.reserve() as blk:
                                ttl.copy(region, ttl.block.subview(blk, offsets=(chunk_rows, 0),
                                                                   shape=(chunk_rows, shard))).wait()
                            with hop.wait() as blk:
                                def forward_view(pipe):
                                    view = ttl.block.subview(blk, offsets=(chunk_rows, 0), shape=(chunk_rows, shard))
                                    ttl.copy(view, pipe).wait()

                                relay.if_src(forward_view)
                        else:
                            with hop.reserve() as blk:
                                ttl.copy(region, blk).wait()
                            with hop.wait() as blk:
                                def forward(pipe):
                                    ttl.copy(blk, pipe).wait()

                                relay.if_src(forward)

        @ttl.compute()
        def idle():
            pass

    return ring_gather


def _tensors(rows: int, shard: int, dtype: str = "bfloat16"):
    inp = tile_tensor((rows * 32, NODES * shard * 32), seed=rows + shard, dtype=dtype)
    return inp, zeros((NODES * rows * 32, NODES * shard * 32), dtype=dtype)


@pytest.mark.parametrize("rows,shard,chunk_rows", [(3, 2, 1), (4, 1, 1), (4, 2, 2)])
def test_a_relay_ring_sends_more_chunks_than_its_buffers_hold(rows, shard, chunk_rows):
    inp, out = _tensors(rows, shard)
    _ring_all_gather(rows, shard, chunk_rows)(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.concatenate([ttnn.to_numpy(inp)] * NODES))


def test_a_relay_ring_sending_views_of_larger_blocks_through_its_mailbox():
    """The relayed chunk is a ``ttl.block.subview`` of a block twice its height: the mailbox moves the
    view's pages, not its block's."""
    inp, out = _tensors(3, 2)
    _ring_all_gather(3, 2, 1, relay_view=True)(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.concatenate([ttnn.to_numpy(inp)] * NODES))


def test_the_ring_takes_no_landing_buffer_in_l1_but_a_dram_mailbox():
    rows, shard = 3, 2
    program = compiled(_ring_all_gather(rows, shard, 1), *_tensors(rows, shard)).program
    names = [cb.name for cb in program.circular_buffers]
    assert not any("landing" in n for n in names), names
    mailboxes = [b for name, b in program.buffers.items() if "mailbox" in name]
    assert len(mailboxes) == 2 and all(b.role == "scratch" and b.buffer_type == "DRAM" for b in mailboxes)
    # per node and receive slot, as many blocks as its receives can take: the relay net is received
    # (NODES - 1) * chunks times at most (its loops), each block a chunk of 2 tiles
    pages = {b.name: b.num_pages for b in mailboxes}
    assert sorted(pages.values()) == [NODES * 1 * (NODES - 1) * rows * shard] * 2, pages


def test_the_mailbox_kernels_and_host_compile_against_the_real_headers(tmp_path, check_kernel):
    from checkhost import check_hosts, require_hosts_accepted
    from tilefold.codegen.cpp import HostData, emit_kernel, write_project

    rows, shard = 3, 2
    program = compiled(_ring_all_gather(rows, shard, 1), *_tensors(rows, shard)).program
    jobs = []
    for name, role in (("relay_chunks", "writer"), ("send_local", "reader")):
        kernel = next(k for k in program.kernels if k.name == name)
        text = emit_kernel(kernel.function)
        assert "noc_async_write_page" in text and "noc_semaphore_wait_min" in text and "noc_semaphore_inc" in text
        path = tmp_path / f"{name}.cpp"
        path.write_text(text)
        jobs.append((path, role, check_kernel.accessor_compile_args(program, kernel)))
    for result in check_kernel.check_kernels(jobs):
        check_kernel.require_accepted(result)
    project = tmp_path / "project"
    inputs = {n: bytes(b.size) for n, b in program.buffers.items() if b.role in ("input", "inout")}
    write_project(program, project, HostData(inputs=inputs))
    require_hosts_accepted(check_hosts([project / "main.cpp"]))


def test_a_float32_ring_over_four_chips_relays_every_chunk():
    """TT-Lang's multi-device ring all-gather: each device's shard goes around a ring of devices,
    both directions at once, several chunks per lane; before the mailbox, its relays stopped as a
    deadlock from the third chunk on, and float32 chunks overflowed L1 with landing buffers."""
    devices, m_tiles, k_tiles, chunk = 4, 4, 2, (1, 1)
    half = k_tiles // 2
    chunks = m_tiles // chunk[0]
    domain = ttl.DeviceDomain((devices, 1))

    def ring(direction: int, offset: int):
        return ttl.PipeNet(graph=ttl.TransferGraph.axis_neighbor(domain, axis=0, offset=offset, wrap=True),
                           pipes=[ttl.Pipe(src=(0, direction), dst=(0, direction))])

    seeds = [ring(0, 1), ring(1, devices - 1)]
    relays = [ring(0, 1), ring(1, devices - 1)]

    @ttl.operation(grid=(1, 2), device_domain=domain)
    def all_gather(source, destination):
        local = ttl.make_dataflow_buffer_like(source, shape=chunk, block_count=2)
        hop = ttl.make_dataflow_buffer_like(source, shape=chunk, block_count=2)

        @ttl.compute()
        def idle():
            pass

        @ttl.datamovement()
        def send_local():
            _, direction = ttl.node(dims=2)
            for m in range(chunks):
                with local.reserve() as blk:
                    col = (1 - direction) * half
                    ttl.copy(source[m * chunk[0]:(m + 1) * chunk[0], col:col + chunk[1]], blk).wait()
                with local.wait() as blk:
                    def send(pipe):
                        ttl.copy(blk, pipe).wait()

                    if direction == 0:
                        seeds[0].if_src(send)
                    else:
                        seeds[1].if_src(send)

        @ttl.datamovement()
        def relay():
            _, direction = ttl.node(dims=2)
            for distance in range(1, devices):
                for m in range(chunks):
                    col = (distance - 1) * k_tiles + (1 - direction) * half
                    region = destination[m * chunk[0]:(m + 1) * chunk[0], col:col + chunk[1]]

                    def receive(pipe):
                        ttl.copy(pipe, region, shape=chunk).wait()

                    if distance == 1:
                        if direction == 0:
                            seeds[0].if_dst(receive)
                        else:
                            seeds[1].if_dst(receive)
                    elif direction == 0:
                        relays[0].if_dst(receive)
                    else:
                        relays[1].if_dst(receive)
                    if distance < devices - 1:
                        with hop.reserve() as blk:
                            ttl.copy(region, blk).wait()
                        with hop.wait() as blk:
                            def forward(pipe):
                                ttl.copy(blk, pipe).wait()

                            if direction == 0:
                                relays[0].if_src(forward)
                            else:
                                relays[1].if_src(forward)

    rng = np.random.default_rng(3)
    full = rng.standard_normal((m_tiles * 32, devices * k_tiles * 32)).astype(np.float32)
    ttnn.set_num_devices(devices)
    mesh = ttnn.open_mesh_device(ttnn.MeshShape((devices, 1)))
    try:
        source = ttnn.from_numpy(full, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh,
                                 mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=1))
        empty = np.zeros((m_tiles * 32, (devices - 1) * k_tiles * 32), np.float32)
        destination = ttnn.from_numpy(np.concatenate([empty] * devices, axis=1), dtype=ttnn.float32,
                                      layout=ttnn.TILE_LAYOUT, device=mesh,
                                      mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=1))
        all_gather(source, destination)
        got = ttnn.to_numpy(destination, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=1))
    finally:
        ttnn.close_mesh_device(mesh)
        ttnn.set_num_devices(None)
    k = k_tiles * 32
    h = k // 2
    width = (devices - 1) * k
    for device in range(devices):
        piece = got[:, device * width:(device + 1) * width]
        for distance in range(1, devices):
            slot = (distance - 1) * k
            left, right = (device + distance) % devices, (device - distance) % devices
            np.testing.assert_array_equal(piece[:, slot:slot + h], full[:, left * k:left * k + h])
            np.testing.assert_array_equal(piece[:, slot + h:slot + k], full[:, right * k + h:(right + 1) * k])
