"""Sharded tensors in TT-Lang operations: each shard lives in the L1 of a core of its shard grid,
and a node reading its own part of the tensor reads its local shard (height, width and block
sharding, on the simulated device against numpy, and in generated C++)."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import compiled

TILE = 32
# strategy -> (tensor shape in tiles, core grid (x, y), the tiles (row, col) node (x, y) holds)
CASES = {
    "height": ((4, 2), (4, 1), lambda x, y: (slice(x, x + 1), slice(0, 2))),
    "width": ((2, 4), (4, 1), lambda x, y: (slice(0, 2), slice(x, x + 1))),
    "block": ((4, 4), (2, 2), lambda x, y: (slice(2 * y, 2 * y + 2), slice(2 * x, 2 * x + 2))),
}


def _operation(strategy: str):
    (rows, cols), (gx, gy), _ = CASES[strategy]
    shard_rows, shard_cols = {"height": (rows // gx, cols), "width": (rows, cols // gx),
                              "block": (rows // gy, cols // gx)}[strategy]

    @ttl.operation(grid=(gx, gy))
    def local_shards(inp, out):
        in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(shard_rows, shard_cols))
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(shard_rows, shard_cols))

        @ttl.compute()
        def compute():
            with in_dfb.wait() as a, out_dfb.reserve() as b:
                b.store(a * 2.0 + 1.0)

        @ttl.datamovement()
        def read():
            x, y = ttl.node(dims=2)
            r, c = (x * shard_rows, 0) if strategy == "height" else \
                ((0, x * shard_cols) if strategy == "width" else (y * shard_rows, x * shard_cols))
            with in_dfb.reserve() as blk:
                ttl.copy(inp[r:r + shard_rows, c:c + shard_cols], blk).wait()

        @ttl.datamovement()
        def write():
            x, y = ttl.node(dims=2)
            r, c = (x * shard_rows, 0) if strategy == "height" else \
                ((0, x * shard_cols) if strategy == "width" else (y * shard_rows, x * shard_cols))
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[r:r + shard_rows, c:c + shard_cols]).wait()

    return local_shards


def _tensors(strategy: str, seed: int = 0):
    (rows, cols), (gx, gy), _ = CASES[strategy]
    shape = (rows * TILE, cols * TILE)
    config = ttnn.create_sharded_memory_config(shape, ttnn.CoreGrid(x=gx, y=gy),
                                               getattr(ttnn.ShardStrategy, strategy.upper()))
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    inp = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, memory_config=config)
    out = ttnn.zeros(shape, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, memory_config=config)
    return inp, out


@pytest.mark.parametrize("strategy", list(CASES))
def test_each_node_reads_and_writes_its_local_shard(strategy):
    from tilefold.arch import get_arch

    inp, out = _tensors(strategy)
    op = _operation(strategy)
    op(inp, out)
    np.testing.assert_allclose(ttnn.to_numpy(out), ttnn.to_numpy(inp).astype(np.float64) * 2 + 1,
                               rtol=0.01, atol=0.02)

    (rows, cols), (gx, gy), holds = CASES[strategy]
    program = compiled(op, inp, out).program
    arch = get_arch(None)
    for name in ("inp", "out"):
        layout = program.buffer(name).buffer_layout(arch)
        assert layout.is_sharded and not layout.is_dram
        banks, _ = layout.page_location(np.arange(rows * cols), arch)
        cores = [layout.distribution.cores[b] for b in banks]
        for y in range(gy):
            for x in range(gx):
                r, c = holds(x, y)
                for page in (np.arange(rows * cols).reshape(rows, cols)[r, c]).ravel():
                    assert (cores[page].x, cores[page].y) == (x, y), (name, page, cores[page])


def test_sharded_reads_compile_against_the_real_dataflow_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    inp, out = _tensors("block")
    program = compiled(_operation("block"), inp, out).program
    kernel = next(k for k in program.kernels if k.name == "read")
    path = tmp_path / "read.cpp"
    path.write_text(emit_kernel(kernel.function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader",
                                                            check_kernel.accessor_compile_args(program, kernel)))


@pytest.mark.parametrize("strategy", ["WIDTH", "BLOCK"])
def test_a_row_major_tensor_sharded_across_its_rows_is_one_error_at_the_operation(strategy):
    """A width- or block-sharded row-major tensor's shards hold parts of rows (pages of shard rows,
    not tensor rows): one error naming the tensor and what to do, not the buffer's page count."""
    from tilefold.errors import KernelError

    @ttl.operation(grid=(1, 1))
    def copy_rows(x, y):
        d = ttl.make_dataflow_buffer_like(x, shape=(1, 64), block_count=2)

        @ttl.datamovement()
        def read():
            for r in range(4):
                with d.reserve() as blk:
                    ttl.copy(x[r:r + 1, :], blk).wait()

        @ttl.datamovement()
        def write():
            for r in range(4):
                with d.wait() as blk:
                    ttl.copy(blk, y[r:r + 1, :]).wait()

    grid = ttnn.CoreGrid(y=1, x=2) if strategy == "WIDTH" else ttnn.CoreGrid(y=2, x=2)
    memory = ttnn.create_sharded_memory_config((4, 64), core_grid=grid, strategy=getattr(ttnn.ShardStrategy, strategy))
    v = np.arange(256, dtype=np.float32).reshape(4, 64)
    x = ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, memory_config=memory)
    y = ttnn.from_numpy(np.zeros_like(v), dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT)
    with pytest.raises(KernelError, match=rf"tensor 'x' is row-major and {strategy.lower()}-sharded; .* shard it by height"):
        copy_rows(x, y)
