"""``y = relu(a @ b + c)`` over a mesh of chips, K split between them and the partial products
summed with ``ttnn.all_reduce``.

``a`` is sharded along K (``ShardTensorToMesh(mesh, dim=1)``) and ``b`` along K (``dim=0``): chip
``i`` computes the partial product ``a_i @ b_i`` (plus ``c`` on chip 0 only, zeros elsewhere) with the
same TT-Lang operation, each chip a simulated device of its own. ``ttnn.all_reduce`` then sums the
partial results over ethernet (a ring; its transfers and their time are estimated) and leaves the
sum on every chip; ``ttnn.relu`` runs on each chip's copy.

Run: ``tilefold sim --arch n300 examples/ttl/multidevice_matmul.py`` (two chips), or
``python examples/ttl/multidevice_matmul.py`` (it simulates the chips its mesh needs).
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32
K_BLOCK = 2


@ttl.operation(grid=(2, 1))
def partial_matmul(a, b, c, y):
    m_tiles, k_blocks = a.shape[0] // TILE, a.shape[1] // TILE // K_BLOCK
    n_tiles = b.shape[1] // TILE
    nodes, _ = ttl.grid_size(dims=2)
    n_per_node = n_tiles // nodes
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(m_tiles, K_BLOCK), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(K_BLOCK, n_per_node), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(m_tiles, n_per_node), block_count=1)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(m_tiles, n_per_node), block_count=1)

    @ttl.datamovement()
    def read():
        node_col, _ = ttl.node(dims=2)
        n0 = node_col * n_per_node
        with c_dfb.reserve() as c_blk:
            ttl.copy(c[0:m_tiles, n0:n0 + n_per_node], c_blk).wait()
        for k in range(k_blocks):
            k0 = k * K_BLOCK
            with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk:
                xa = ttl.copy(a[0:m_tiles, k0:k0 + K_BLOCK], a_blk)
                xb = ttl.copy(b[k0:k0 + K_BLOCK, n0:n0 + n_per_node], b_blk)
                xa.wait()
                xb.wait()

    @ttl.compute()
    def compute():
        with c_dfb.wait() as c_blk, y_dfb.reserve() as y_blk:
            y_blk.store(c_blk * 1.0)
            for _ in range(k_blocks):
                with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk:
                    y_blk += a_blk @ b_blk

    @ttl.datamovement()
    def write():
        node_col, _ = ttl.node(dims=2)
        n0 = node_col * n_per_node
        with y_dfb.wait() as y_blk:
            ttl.copy(y_blk, y[0:m_tiles, n0:n0 + n_per_node]).wait()


def main(mesh_shape=(1, 2), m=64, k=256, n=64, seed=0):
    """Run on random bfloat16 inputs over a mesh; returns (result on every chip, reference)."""
    chips = mesh_shape[0] * mesh_shape[1]
    if ttnn.GetNumAvailableDevices() < chips:
        ttnn.set_num_devices(chips)
    ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D)
    mesh_device = ttnn.open_mesh_device(ttnn.MeshShape(*mesh_shape))
    try:
        rng = np.random.default_rng(seed)
        a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (m, n)))

        def spread(values, mapper):
            return ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh_device,
                                   mesh_mapper=mapper)

        a_mesh = spread(a, ttnn.ShardTensorToMesh(mesh_device, dim=1))
        b_mesh = spread(b, ttnn.ShardTensorToMesh(mesh_device, dim=0))
        c_stack = np.zeros((m * chips, n), dtype=np.float32)
        c_stack[:m] = c
        c_mesh = spread(c_stack, ttnn.ShardTensorToMesh(mesh_device, dim=0))
        partial = spread(np.zeros((m * chips, n), dtype=np.float32), ttnn.ShardTensorToMesh(mesh_device, dim=0))
        partial_matmul(a_mesh, b_mesh, c_mesh, partial)
        y = ttnn.relu(ttnn.all_reduce(partial))
        result = ttnn.to_numpy(y, mesh_composer=ttnn.ConcatMeshToTensor(mesh_device, dim=0)).reshape(chips, m, n)
    finally:
        ttnn.close_mesh_device(mesh_device)
        ttnn.set_num_devices(None)
    bf = ttnn.to_numpy(ttnn.from_numpy(a, dtype=ttnn.bfloat16)).astype(np.float64)
    bb = ttnn.to_numpy(ttnn.from_numpy(b, dtype=ttnn.bfloat16)).astype(np.float64)
    bc = ttnn.to_numpy(ttnn.from_numpy(c, dtype=ttnn.bfloat16)).astype(np.float64)
    reference = np.maximum(bf @ bb + bc, 0).astype(np.float32)
    return result, np.broadcast_to(reference, result.shape)


if __name__ == "__main__":
    result, reference = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()))
