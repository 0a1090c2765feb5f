"""TT-Lang on the simulated device: wall time of two operations as a ratio to numpy doing the same math.

* ``a * b + c`` on 2048 × 2048 bfloat16 tensors over a 4 × 4 grid (4 × 4-tile blocks);
* a 2048³ matmul of bfloat16 tensors over an 8 × 8 grid (4 × 4 output blocks over the whole K,
  float32 accumulation in DST).

"The same math" is what the device computes: the bfloat16 inputs upcast to float32, the operation,
the result rounded to bfloat16 (numpy works on ``ml_dtypes.bfloat16`` arrays). Each operation is called once to compile it (and to check its result)
and then timed over a few warm calls; the ratio is the best simulated wall time over the best numpy
time. Prints a table and, as its last line, one JSON object.

Run: ``.venv/bin/python bench/ttl.py``.
"""

from __future__ import annotations

import json
import time

import ml_dtypes
import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32
ELTWISE_BLOCK = 4
MM_BLOCK = 4
REPEATS = 5


@ttl.operation(grid=(4, 4))
def eltwise(a, b, c, y):
    grid_cols, grid_rows = ttl.grid_size(dims=2)
    rows_per_node = a.shape[0] // TILE // ELTWISE_BLOCK // grid_rows
    cols_per_node = a.shape[1] // TILE // ELTWISE_BLOCK // grid_cols
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(ELTWISE_BLOCK, ELTWISE_BLOCK), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(ELTWISE_BLOCK, ELTWISE_BLOCK), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(ELTWISE_BLOCK, ELTWISE_BLOCK), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(ELTWISE_BLOCK, ELTWISE_BLOCK), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(rows_per_node * cols_per_node):
            with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, c_dfb.wait() as c_blk, y_dfb.reserve() as y_blk:
                y_blk.store(a_blk * b_blk + c_blk)

    @ttl.datamovement()
    def read():
        node_col, node_row = ttl.node(dims=2)
        for local_row in range(rows_per_node):
            r0 = (node_row * rows_per_node + local_row) * ELTWISE_BLOCK
            for local_col in range(cols_per_node):
                c0 = (node_col * cols_per_node + local_col) * ELTWISE_BLOCK
                with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk, c_dfb.reserve() as c_blk:
                    xa = ttl.copy(a[r0:r0 + ELTWISE_BLOCK, c0:c0 + ELTWISE_BLOCK], a_blk)
                    xb = ttl.copy(b[r0:r0 + ELTWISE_BLOCK, c0:c0 + ELTWISE_BLOCK], b_blk)
                    xc = ttl.copy(c[r0:r0 + ELTWISE_BLOCK, c0:c0 + ELTWISE_BLOCK], c_blk)
                    xa.wait()
                    xb.wait()
                    xc.wait()

    @ttl.datamovement()
    def write():
        node_col, node_row = ttl.node(dims=2)
        for local_row in range(rows_per_node):
            r0 = (node_row * rows_per_node + local_row) * ELTWISE_BLOCK
            for local_col in range(cols_per_node):
                c0 = (node_col * cols_per_node + local_col) * ELTWISE_BLOCK
                with y_dfb.wait() as y_blk:
                    ttl.copy(y_blk, y[r0:r0 + ELTWISE_BLOCK, c0:c0 + ELTWISE_BLOCK]).wait()


@ttl.operation(grid=(8, 8), fp32_dest_acc_en=True, dst_full_sync_en=True)
def matmul(a, b, y):
    k_tiles = a.shape[1] // TILE
    grid_cols, grid_rows = ttl.grid_size(dims=2)
    m_per_node = a.shape[0] // TILE // MM_BLOCK // grid_rows
    n_per_node = b.shape[1] // TILE // MM_BLOCK // grid_cols
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(MM_BLOCK, k_tiles), block_count=1)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(k_tiles, MM_BLOCK), block_count=1)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(MM_BLOCK, MM_BLOCK), block_count=2)

    @ttl.datamovement()
    def read():
        node_col, node_row = ttl.node(dims=2)
        for i in range(m_per_node):
            m0 = (node_row * m_per_node + i) * MM_BLOCK
            with a_dfb.reserve() as a_blk:
                ttl.copy(a[m0:m0 + MM_BLOCK, 0:k_tiles], a_blk).wait()
            for j in range(n_per_node):
                n0 = (node_col * n_per_node + j) * MM_BLOCK
                with b_dfb.reserve() as b_blk:
                    ttl.copy(b[0:k_tiles, n0:n0 + MM_BLOCK], b_blk).wait()

    @ttl.compute()
    def compute():
        for _ in range(m_per_node):
            with a_dfb.wait() as a_blk:
                for _ in range(n_per_node):
                    with b_dfb.wait() as b_blk, y_dfb.reserve() as y_blk:
                        y_blk.store(a_blk @ b_blk)

    @ttl.datamovement()
    def write():
        node_col, node_row = ttl.node(dims=2)
        for i in range(m_per_node):
            m0 = (node_row * m_per_node + i) * MM_BLOCK
            for j in range(n_per_node):
                n0 = (node_col * n_per_node + j) * MM_BLOCK
                with y_dfb.wait() as y_blk:
                    ttl.copy(y_blk, y[m0:m0 + MM_BLOCK, n0:n0 + MM_BLOCK]).wait()


def _bf16(x: np.ndarray) -> np.ndarray:
    return x.astype(ml_dtypes.bfloat16).astype(np.float32)


def _best(fn) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _tensor(rng, shape):
    return ttnn.from_numpy(rng.standard_normal(shape).astype(np.float32), dtype=ttnn.bfloat16,
                           layout=ttnn.TILE_LAYOUT)


def bench_eltwise(size: int = 2048) -> dict:
    rng = np.random.default_rng(0)
    a, b, c = (_tensor(rng, (size, size)) for _ in range(3))
    y = ttnn.zeros((size, size), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    start = time.perf_counter()
    eltwise(a, b, c, y)
    cold = time.perf_counter() - start
    av, bv, cv = a.host_values, b.host_values, c.host_values
    expected = _bf16(_bf16(av * bv) + cv)          # DST holds bfloat16 between the multiply and the add
    assert np.array_equal(ttnn.to_numpy(y), expected), "a * b + c differs from numpy"
    sim = _best(lambda: eltwise(a, b, c, y))
    a16, b16, c16 = (x.astype(ml_dtypes.bfloat16) for x in (av, bv, cv))
    ref = _best(lambda: (a16.astype(np.float32) * b16.astype(np.float32) + c16.astype(np.float32))
                .astype(ml_dtypes.bfloat16))
    return {"sim": sim, "cold": cold, "numpy": ref}


def bench_matmul(size: int = 2048) -> dict:
    rng = np.random.default_rng(1)
    a, b = _tensor(rng, (size, size)), _tensor(rng, (size, size))
    y = ttnn.zeros((size, size), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    start = time.perf_counter()
    matmul(a, b, y)
    cold = time.perf_counter() - start
    av, bv = a.host_values, b.host_values
    expected = _bf16(av @ bv)
    error = np.abs(ttnn.to_numpy(y) - expected).max() / np.abs(expected).max()
    assert error < 0.01, f"matmul differs from numpy by {error:.3%} of its largest value"
    sim = _best(lambda: matmul(a, b, y))
    a16, b16 = av.astype(ml_dtypes.bfloat16), bv.astype(ml_dtypes.bfloat16)
    ref = _best(lambda: (a16.astype(np.float32) @ b16.astype(np.float32)).astype(ml_dtypes.bfloat16))
    return {"sim": sim, "cold": cold, "numpy": ref}


def main() -> dict:
    rows = [("a * b + c, 2048x2048 bf16, 4x4 grid", bench_eltwise()),
            ("matmul 2048^3 bf16, 8x8 grid, fp32 DST", bench_matmul())]
    print(f"{'operation':<42} {'simulator (s)':>14} {'first call (s)':>15} {'numpy (s)':>10} {'ratio':>7}")
    for name, r in rows:
        print(f"{name:<42} {r['sim']:>14.3f} {r['cold']:>15.3f} {r['numpy']:>10.3f} {r['sim'] / r['numpy']:>7.2f}")
    figures = {"ttl_eltwise_vs_numpy": round(rows[0][1]["sim"] / rows[0][1]["numpy"], 2),
               "ttl_matmul_vs_numpy": round(rows[1][1]["sim"] / rows[1][1]["numpy"], 2)}
    print(json.dumps(figures))
    return figures


if __name__ == "__main__":
    main()
