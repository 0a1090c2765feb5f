"""Opens a mesh of every chip ``ttnn.GetNumAvailableDevices()`` reports and all-reduces one tile
per chip: run by tests/ttl/test_ttl_script.py with ``tilefold sim --num-devices 4``."""

import numpy as np
import ttnn

n = ttnn.GetNumAvailableDevices()
mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, n))
parts = np.stack([np.full((32, 32), float(i + 1), np.float32) for i in range(n)])
t = ttnn.from_numpy(parts.reshape(n * 32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                    mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
total = ttnn.all_reduce(t)
out = ttnn.to_numpy(total, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
assert np.all(out == n * (n + 1) / 2), out
print(f"chips {n} sum {out[0, 0]:g}")
