"""``y = a * b + c`` with ``bfloat8_b`` inputs and a ``bfloat16`` output.

``bfloat8_b`` stores 16 values per shared exponent (one face row), 8 bits each — about half the
bytes of ``bfloat16``. The tensors' values are already quantized when they are made (as TT-NN does
on the host); the unpacker expands them exactly to DST, the packer rounds the result to bfloat16.

Run: ``python examples/ttl/bfp8_inputs.py``.
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32
GRANULARITY = 2


@ttl.operation(grid=(2, 2))
def bfp8_inputs(a, b, c, y):
    grid_cols, grid_rows = ttl.grid_size(dims=2)
    rows_per_node = a.shape[0] // TILE // GRANULARITY // grid_rows
    cols_per_node = a.shape[1] // TILE // GRANULARITY // grid_cols
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(GRANULARITY, GRANULARITY), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(GRANULARITY, GRANULARITY), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(GRANULARITY, GRANULARITY), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(GRANULARITY, GRANULARITY), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(rows_per_node * cols_per_node):
            with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, c_dfb.wait() as c_blk, y_dfb.reserve() as y_blk:
                y_blk.store(a_blk * b_blk + c_blk)

    @ttl.datamovement()
    def read():
        node_col, node_row = ttl.node(dims=2)
        for lr in range(rows_per_node):
            r0 = (node_row * rows_per_node + lr) * GRANULARITY
            for lc in range(cols_per_node):
                c0 = (node_col * cols_per_node + lc) * GRANULARITY
                with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk, c_dfb.reserve() as c_blk:
                    xa = ttl.copy(a[r0:r0 + GRANULARITY, c0:c0 + GRANULARITY], a_blk)
                    xb = ttl.copy(b[r0:r0 + GRANULARITY, c0:c0 + GRANULARITY], b_blk)
                    xc = ttl.copy(c[r0:r0 + GRANULARITY, c0:c0 + GRANULARITY], c_blk)
                    xa.wait()
                    xb.wait()
                    xc.wait()

    @ttl.datamovement()
    def write():
        node_col, node_row = ttl.node(dims=2)
        for lr in range(rows_per_node):
            r0 = (node_row * rows_per_node + lr) * GRANULARITY
            for lc in range(cols_per_node):
                c0 = (node_col * cols_per_node + lc) * GRANULARITY
                with y_dfb.wait() as y_blk:
                    ttl.copy(y_blk, y[r0:r0 + GRANULARITY, c0:c0 + GRANULARITY]).wait()


def main(shape=(256, 256), seed=0):
    """Run on random bfloat8_b inputs; returns (result, reference) as float32 arrays."""
    rng = np.random.default_rng(seed)
    a, b, c = (ttnn.from_numpy(rng.standard_normal(shape).astype(np.float32), dtype=ttnn.bfloat8_b,
                               layout=ttnn.TILE_LAYOUT) for _ in range(3))
    y = ttnn.zeros(shape, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    bfp8_inputs(a, b, c, y)
    product = ttnn.from_numpy(ttnn.to_numpy(a) * ttnn.to_numpy(b), dtype=ttnn.bfloat16)
    reference = ttnn.from_numpy(ttnn.to_numpy(product) + ttnn.to_numpy(c), dtype=ttnn.bfloat16)
    return ttnn.to_numpy(y), ttnn.to_numpy(reference)


if __name__ == "__main__":
    result, reference = main()
    print("max abs error vs numpy:", float(np.abs(result - reference).max()))
