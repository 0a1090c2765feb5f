"""A chain of eight element-wise operations fused into one pass over DST.

``y = max(sigmoid(exp(x / 2) - sqrt(|x| + 1)) * 2, tanh(x)) / (sqrt(|x| + 1) + exp(x / 2))``:
every operation works on tiles already in DST registers; ``ttl-assign-dst`` reuses the slots of
values whose last use has passed, so the whole chain needs a handful of slots per tile and the
block is read once and written once.

Run: ``python examples/ttl/fused_chain.py``.
"""

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

TILE = 32
GRANULARITY = 2


@ttl.operation(grid=(2, 1))
def fused_chain(x, y):
    cols_per_node = x.shape[1] // TILE // GRANULARITY // 2
    rows = x.shape[0] // TILE // GRANULARITY
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(GRANULARITY, GRANULARITY), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(GRANULARITY, GRANULARITY), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(rows * cols_per_node):
            with x_dfb.wait() as x_blk, y_dfb.reserve() as y_blk:
                growth = ttl.math.exp(x_blk * 0.5)
                spread = ttl.math.sqrt(abs(x_blk) + 1.0)
                gate = ttl.math.sigmoid(growth - spread)
                y_blk.store(ttl.math.max(gate * 2.0, ttl.math.tanh(x_blk)) / (spread + growth))

    @ttl.datamovement()
    def read():
        node_col, _ = ttl.node(dims=2)
        for r in range(rows):
            for local in range(cols_per_node):
                c0 = (node_col * cols_per_node + local) * GRANULARITY
                with x_dfb.reserve() as x_blk:
                    ttl.copy(x[r * GRANULARITY:(r + 1) * GRANULARITY, c0:c0 + GRANULARITY], x_blk).wait()

    @ttl.datamovement()
    def write():
        node_col, _ = ttl.node(dims=2)
        for r in range(rows):
            for local in range(cols_per_node):
                c0 = (node_col * cols_per_node + local) * GRANULARITY
                with y_dfb.wait() as y_blk:
                    ttl.copy(y_blk, y[r * GRANULARITY:(r + 1) * GRANULARITY, c0:c0 + GRANULARITY]).wait()


def reference(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    growth = np.exp(x * 0.5)
    spread = np.sqrt(np.abs(x) + 1.0)
    gate = 1.0 / (1.0 + np.exp(-(growth - spread)))
    return np.maximum(gate * 2.0, np.tanh(x)) / (spread + growth)


def main(shape=(128, 256), seed=0):
    """Run on random bfloat16 input; returns (result, reference) — reference in float64."""
    rng = np.random.default_rng(seed)
    x = ttnn.from_numpy(rng.standard_normal(shape).astype(np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    y = ttnn.zeros(shape, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    fused_chain(x, y)
    return ttnn.to_numpy(y), reference(ttnn.to_numpy(x))


if __name__ == "__main__":
    result, ref = main()
    print("max abs error vs numpy:", float(np.abs(result - ref).max()))
