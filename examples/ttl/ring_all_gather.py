"""A ring all-gather over logical devices: every device ends with all the devices' shards.

The operation runs over ``ttl.DeviceDomain((device_count,))`` with the same grid on each device.
Each node owns some tiles of its device's shard; it writes its own tile into its device's slot of
``gathered`` and forwards it to the same node of the next device in the ring
(``TransferGraph.axis_neighbor(..., wrap=True)``). In each of the ``device_count - 1`` steps a node
sends the block it holds and receives the previous device's, writes it into the slot of the device
it came from first (``device_domain.current_index()`` minus the step, around the ring) and keeps it
to forward in the next step.

Run: ``tilefold sim --num-devices 4 examples/ttl/ring_all_gather.py``, or
``python examples/ttl/ring_all_gather.py`` (it simulates the chips its mesh needs).
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE_SIZE = 32


def make_ring_all_gather(device_count: int, grid="full"):
    if device_count < 2:
        raise ValueError("a ring requires at least two logical devices")

    device_domain = ttl.DeviceDomain((device_count,))
    ring_net = ttl.PipeNet(graph=ttl.TransferGraph.axis_neighbor(device_domain, axis=0, wrap=True))

    @ttl.operation(grid=grid, device_domain=device_domain)
    def ring_all_gather(shard, gathered):
        row_tile_count = shard.shape[0] // TILE_SIZE
        column_tile_count = shard.shape[1] // TILE_SIZE

        grid_columns, grid_rows = ttl.grid_size(dims=2)
        rows_per_node = -(-row_tile_count // grid_rows)
        columns_per_node = -(-column_tile_count // grid_columns)

        forward_dfb = ttl.make_dataflow_buffer_like(shard, shape=(1, 1), block_count=2)

        @ttl.compute()
        def idle_compute():
            pass

        @ttl.datamovement()
        def relay():
            node_column, node_row = ttl.node(dims=2)
            device = device_domain.current_index()

            for local_row in range(rows_per_node):
                row_tile = node_row * rows_per_node + local_row
                if row_tile < row_tile_count:
                    for local_column in range(columns_per_node):
                        column_tile = node_column * columns_per_node + local_column
                        if column_tile < column_tile_count:
                            with forward_dfb.reserve() as own_block:
                                ttl.copy(shard[row_tile, column_tile], own_block).wait()
                                ttl.copy(own_block, gathered[device * row_tile_count + row_tile, column_tile]).wait()

                            for step in range(device_count - 1):
                                origin = (device - step - 1) % device_count

                                def send(pipe):
                                    with forward_dfb.wait() as held_block:
                                        ttl.copy(held_block, pipe).wait()

                                def receive(pipe):
                                    with forward_dfb.reserve() as received_block:
                                        ttl.copy(pipe, received_block).wait()
                                        ttl.copy(
                                            received_block,
                                            gathered[origin * row_tile_count + row_tile, column_tile],
                                        ).wait()

                                ring_net.if_src(send)
                                ring_net.if_dst(receive)

                            with forward_dfb.wait():      # the last block received goes no further
                                pass

    return ring_all_gather


def main(device_count=4, shard_shape=(64, 128), grid="full", seed=0):
    """All-gather random shards over ``device_count`` devices; returns (what each device gathered,
    the shards concatenated by numpy, once per device)."""
    if ttnn.GetNumAvailableDevices() < device_count:
        ttnn.set_num_devices(device_count)
    ring_all_gather = make_ring_all_gather(device_count, grid)
    ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D_RING)
    mesh_device = ttnn.open_mesh_device(ttnn.MeshShape((device_count,)))
    try:
        rng = np.random.default_rng(seed)
        shards = [rng.standard_normal(shard_shape).astype(np.float32) for _ in range(device_count)]
        height, width = shard_shape
        shard = ttnn.from_numpy(np.concatenate(shards), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                                device=mesh_device, mesh_mapper=ttnn.ShardTensorToMesh(mesh_device, dim=0))
        gathered = ttnn.from_numpy(np.zeros((device_count * device_count * height, width), np.float32),
                                   dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh_device,
                                   mesh_mapper=ttnn.ShardTensorToMesh(mesh_device, dim=0))
        ring_all_gather(shard, gathered)
        result = ttnn.to_numpy(gathered, mesh_composer=ttnn.ConcatMeshToTensor(mesh_device, dim=0))
    finally:
        ttnn.close_mesh_device(mesh_device)
        ttnn.set_num_devices(None)
    whole = np.concatenate([ttnn.to_numpy(ttnn.from_numpy(s, dtype=ttnn.bfloat16)) for s in shards])
    return result.reshape(device_count, device_count * height, width), np.stack([whole] * device_count)


if __name__ == "__main__":
    result, reference = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()))
