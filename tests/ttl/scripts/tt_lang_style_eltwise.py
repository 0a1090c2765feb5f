# A script written for TT-Lang's own tools (``import ttnn`` / ``import ttl``), numpy instead of torch.
import numpy as np
import ttnn

import ttl

TILE_SIZE = 32
GRANULARITY = 2


def from_numpy(array):
    return ttnn.from_numpy(array, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device,
                           memory_config=ttnn.DRAM_MEMORY_CONFIG)


@ttl.operation(grid=(2, 2))
def __tutorial_operation(a: ttnn.Tensor, b: ttnn.Tensor, c: ttnn.Tensor, y: ttnn.Tensor):
    grid_cols, grid_rows = ttl.grid_size(dims=2)
    rows_per_node = a.shape[0] // TILE_SIZE // GRANULARITY // grid_rows
    cols_per_node = a.shape[1] // TILE_SIZE // GRANULARITY // grid_cols
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(GRANULARITY, GRANULARITY), buffer_factor=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(GRANULARITY, GRANULARITY), buffer_factor=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(GRANULARITY, GRANULARITY), buffer_factor=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(GRANULARITY, GRANULARITY), buffer_factor=2)

    @ttl.compute()
    def tutorial_compute():
        for _ in range(rows_per_node):
            for _ in range(cols_per_node):
                with (
                    a_dfb.wait() as a_blk,
                    b_dfb.wait() as b_blk,
                    c_dfb.wait() as c_blk,
                    y_dfb.reserve() as y_blk,
                ):
                    y_blk.store(a_blk * b_blk + c_blk)

    @ttl.datamovement()
    def tutorial_read():
        node_col, node_row = ttl.node(dims=2)
        for local_row in range(rows_per_node):
            row = node_row * rows_per_node + local_row
            start_row_tile = row * GRANULARITY
            end_row_tile = (row + 1) * GRANULARITY
            for local_col in range(cols_per_node):
                col = node_col * cols_per_node + local_col
                start_col_tile = col * GRANULARITY
                end_col_tile = (col + 1) * GRANULARITY
                with (
                    a_dfb.reserve() as a_blk,
                    b_dfb.reserve() as b_blk,
                    c_dfb.reserve() as c_blk,
                ):
                    tx_a = ttl.copy(a[start_row_tile:end_row_tile, start_col_tile:end_col_tile], a_blk)
                    tx_b = ttl.copy(b[start_row_tile:end_row_tile, start_col_tile:end_col_tile], b_blk)
                    tx_c = ttl.copy(c[start_row_tile:end_row_tile, start_col_tile:end_col_tile], c_blk)
                    tx_a.wait()
                    tx_b.wait()
                    tx_c.wait()

    @ttl.datamovement()
    def tutorial_write():
        node_col, node_row = ttl.node(dims=2)
        for local_row in range(rows_per_node):
            row = node_row * rows_per_node + local_row
            start_row_tile = row * GRANULARITY
            end_row_tile = (row + 1) * GRANULARITY
            for local_col in range(cols_per_node):
                col = node_col * cols_per_node + local_col
                start_col_tile = col * GRANULARITY
                end_col_tile = (col + 1) * GRANULARITY
                with y_dfb.wait() as y_blk:
                    tx = ttl.copy(y_blk, y[start_row_tile:end_row_tile, start_col_tile:end_col_tile])
                    tx.wait()


def tutorial_operation(a, b, c):
    y = from_numpy(np.zeros((a.shape[0], a.shape[1]), dtype=np.float32))
    __tutorial_operation(a, b, c, y)
    return y


rng = np.random.default_rng(42)
device = ttnn.open_device(device_id=0)

try:
    shape = (256, 256)
    a, b, c, d = (rng.random(shape, dtype=np.float32) for _ in range(4))
    a, b, c, d = from_numpy(a), from_numpy(b), from_numpy(c), from_numpy(d)
    expected = (ttnn.to_numpy(a) * ttnn.to_numpy(b) + ttnn.to_numpy(c)) * ttnn.to_numpy(d)
    y = ttnn.to_numpy(ttnn.multiply(tutorial_operation(a, b, c), d))
    assert np.allclose(y, expected, rtol=1e-2, atol=1e-2), "Tensors do not match"
    print("PASSED", float(np.abs(y - expected).max()))
finally:
    ttnn.close_device(device)
