"""An operation body without kernel functions: its statements become reader, compute and writer
kernels, in program order, and it computes what the same body with explicit kernels computes."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error, tile_tensor, zeros


def _bf16(values):
    import ml_dtypes

    return values.astype(ml_dtypes.bfloat16).astype(np.float32)


@ttl.operation(grid=(1, 1))
def _add(a, b, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    a_dst_blk = a_dfb.reserve()
    b_dst_blk = b_dfb.reserve()
    ttl.copy(a[0:1, 0:1], a_dst_blk).wait()
    ttl.copy(b[0:1, 0:1], b_dst_blk).wait()
    a_dst_blk.push()
    b_dst_blk.push()
    out_blk = out_dfb.reserve()
    a_blk = a_dfb.wait()
    b_blk = b_dfb.wait()
    out_blk.store(a_blk + b_blk)
    a_blk.pop()
    b_blk.pop()
    ttl.copy(out_dfb.wait(), out[0:1, 0:1]).wait()     # the block is released after the statement
    out_blk.push()


def test_body_with_explicit_push_and_pop_runs_as_three_kernels():
    a, b, out = tile_tensor((32, 32), seed=1), tile_tensor((32, 32), seed=2), zeros((32, 32))
    _add(a, b, out)
    np.testing.assert_array_equal(out.host_values, _bf16(a.host_values + b.host_values))


@ttl.operation(grid=(1, 1))
def _scaled_rows(x, y):
    rows = x.shape[0] // 32
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 2), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 2), block_count=2)
    for r in range(rows):
        with x_dfb.reserve() as blk:
            ttl.copy(x[r, 0:2], blk).wait()
    for r in range(rows):
        with x_dfb.wait() as xv, y_dfb.reserve() as yv:
            yv.store(xv * xv + xv)
    for r in range(rows):
        with y_dfb.wait() as blk:
            ttl.copy(blk, y[r, 0:2]).wait()


def test_loops_of_with_blocks_run_as_three_kernels():
    x, y = tile_tensor((96, 64), seed=3), zeros((96, 64))
    _scaled_rows(x, y)
    v = x.host_values
    np.testing.assert_array_equal(y.host_values, _bf16(_bf16(v * v) + v))


def test_an_error_in_the_body_names_the_users_line():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        with x_dfb.reserve() as blk:
            ttl.copy(x[0, 0], blk).wait()
        with x_dfb.wait() as xv:
            xv.store(xv + xv, acc=True)  # error

    expect_error(lambda: op(tile_tensor((32, 32)), zeros((32, 32))), test_an_error_in_the_body_names_the_users_line,
                 KernelError, "reserve")


ROW_BLOCKS, CHUNKS = 3, 2


@ttl.operation(grid=(2, 1))
def _chunk_sums(x, y, sums):
    """Per row block (the blocks dealt to the two nodes, the last node getting fewer): the sum of
    the row's chunks and each chunk doubled — reads, compute and writes inside the same loops."""
    node_x, _ = ttl.node(dims=2)
    per_node = (ROW_BLOCKS + 1) // 2
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
    acc_dfb = ttl.make_dataflow_buffer_like(sums, shape=(1, 1), block_count=2)
    for local in range(per_node):
        row = node_x * per_node + local
        if row < ROW_BLOCKS:
            first = acc_dfb.reserve()
            first.store(ttl.block.fill(0.0, shape=first.shape))
            for c in range(CHUNKS):
                xd = x_dfb.reserve()
                ttl.copy(x[row, c], xd)
                xv = x_dfb.wait()
                yw = y_dfb.reserve()
                yw.store(xv + xv)
                old = acc_dfb.wait()
                new = acc_dfb.reserve()
                new.store(old + xv)
                ttl.copy(y_dfb.wait(), y[row, c])
            ttl.copy(acc_dfb.wait(), sums[row, 0])


def test_loops_and_branches_holding_reads_compute_and_writes_are_split():
    x, y, sums = tile_tensor((96, 64), seed=9), zeros((96, 64)), zeros((96, 32))
    _chunk_sums(x, y, sums)
    v = ttnn.to_numpy(x).astype(np.float32)
    np.testing.assert_array_equal(ttnn.to_numpy(y).astype(np.float32), _bf16(v + v))
    want = _bf16(_bf16(v[:, :32]) + v[:, 32:])
    np.testing.assert_allclose(ttnn.to_numpy(sums).astype(np.float32), want, rtol=1e-2, atol=1e-2)


SCALE = 1.0


@ttl.operation(grid=(1, 1))
def _scaled_by_global(x, y):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
    ttl.copy(x[0, 0], x_dfb.reserve()).wait()
    s = x_dfb.wait()
    d = y_dfb.reserve()
    d.store(s * ttl.block.fill(SCALE, shape=s.shape, dtype=s.dtype))
    ttl.copy(y_dfb.wait(), y[0, 0]).wait()


def test_a_global_rebound_between_calls_is_seen_by_the_second_call():
    global SCALE
    x = tile_tensor((32, 32), seed=3)
    try:
        for scale in (1.0, 2.0):
            SCALE = scale
            y = zeros((32, 32))
            _scaled_by_global(x, y)
            np.testing.assert_array_equal(y.host_values, _bf16(x.host_values * scale))
    finally:
        SCALE = 1.0


@ttl.operation(grid=(1, 1))
def _running_sum(x, y):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
    total = ttl.block.fill(0.0, shape=(1, 1))
    for r in range(3):
        ttl.copy(x[r, 0], x_dfb.reserve())
        doubled = x_dfb.wait() * 2.0
        step = total + doubled
        y_dfb.reserve().store(step)
        total = step
        ttl.copy(y_dfb.wait(), y[r, 0])


def test_a_block_value_made_in_the_body_and_carried_across_a_loop_is_computed_where_it_lives():
    """``total = ttl.block.fill(...)`` at the body's top level, and the values computed from the
    blocks a loop waits on, belong to the compute kernel: statements reading them run there."""
    x = ttnn.from_numpy(np.random.default_rng(3).standard_normal((96, 32)).astype(np.float32), dtype=ttnn.float32,
                        layout=ttnn.TILE_LAYOUT)
    y = ttnn.zeros((96, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    _running_sum(x, y)
    want = np.cumsum((ttnn.to_numpy(x).astype(np.float64) * 2).reshape(3, 32, 32), axis=0).reshape(96, 32)
    np.testing.assert_allclose(ttnn.to_numpy(y), want, rtol=1e-5, atol=1e-6)


def test_a_value_of_a_waited_block_kept_past_its_iteration_is_the_kernels_error_not_a_missing_name():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
        prev = None
        for r in range(3):
            ttl.copy(x[r, 0], x_dfb.reserve())
            t = x_dfb.wait() * 2.0  # error
            cur = t if prev is None else prev + t
            y_dfb.reserve().store(cur)
            prev = cur
            ttl.copy(y_dfb.wait(), y[r, 0])

    expect_error(lambda: op(zeros((96, 32)), zeros((96, 32))),
                 test_a_value_of_a_waited_block_kept_past_its_iteration_is_the_kernels_error_not_a_missing_name,
                 KernelError, "is acquired in this loop iteration but not popped before it ends")
