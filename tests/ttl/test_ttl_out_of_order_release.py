"""A younger block of a dataflow buffer released while an older one is held: it stays in the FIFO
and leaves it with the older block (one pop or push of both). Compute and data movement kernels,
a loop of younger blocks behind a held one, run on the simulated device against numpy; a loop
whose trip count is known only at run time, and a runtime branch, are clear errors; the kernels
pass check-kernel."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import compiled, tile_tensor, zeros


def _np(t):
    return ttnn.to_numpy(t).astype(np.float32)


def _tiles(values):
    """A (32, 32 * n) bfloat16 tensor whose k-th tile is filled with values[k]."""
    v = np.concatenate([np.full((32, 32), x, np.float32) for x in values], axis=1)
    return ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


@ttl.operation(grid=(1, 1))
def younger_popped_first(inp, out):
    """Compute: ``b`` (younger) is popped before ``a``, which is read afterwards. Writer: waits two
    blocks, pops the younger first and copies the older out after that."""
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with in_dfb.wait() as a:
            b = in_dfb.wait()
            with out_dfb.reserve() as o:
                o.store(a - b)
            b.pop()
            with out_dfb.reserve() as o:
                o.store(a * 2.0)

    @ttl.datamovement()
    def reader():
        for k in range(2):
            with in_dfb.reserve() as blk:
                ttl.copy(inp[0, k], blk).wait()

    @ttl.datamovement()
    def writer():
        first = out_dfb.wait()
        second = out_dfb.wait()
        ttl.copy(second, out[0, 1]).wait()
        second.pop()
        ttl.copy(first, out[0, 0]).wait()
        first.pop()


def test_a_younger_block_popped_before_the_older_one_in_compute_and_data_movement():
    inp = tile_tensor((32, 64), seed=3)
    out = zeros((32, 64))
    younger_popped_first(inp, out)
    v = _np(inp)
    a, b = v[:, :32], v[:, 32:]
    np.testing.assert_allclose(_np(out), np.concatenate([a - b, a * 2.0], axis=1), rtol=2e-2, atol=2e-2)


@ttl.operation(grid=(1, 1))
def younger_pushed_first(inp, out):
    """Reader: reserves two blocks, fills and pushes the younger one first; the consumer still
    receives the older block first."""
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        a = in_dfb.reserve()
        b = in_dfb.reserve()
        ttl.copy(inp[0, 1], b).wait()
        b.push()
        ttl.copy(inp[0, 0], a).wait()
        a.push()

    @ttl.datamovement()
    def writer():
        for k in range(2):
            with in_dfb.wait() as blk:
                ttl.copy(blk, out[0, k]).wait()


def test_a_younger_block_pushed_before_the_older_one_reaches_the_consumer_after_it():
    inp = tile_tensor((32, 64), seed=4)
    out = zeros((32, 64))
    younger_pushed_first(inp, out)
    np.testing.assert_array_equal(_np(out), _np(inp))


N = 3


@ttl.operation(grid=(1, 1))
def deltas_behind_a_held_block(seed, deltas, out):
    """``d0`` stays held while a loop waits and pops ``N`` more blocks of the same buffer; ``d0``
    is read again after the loop (its tiles must still be the first block's)."""
    seed_dfb = ttl.make_dataflow_buffer_like(seed, shape=(1, 1), block_count=1)
    d_dfb = ttl.make_dataflow_buffer_like(deltas, shape=(1, 1), block_count=N + 1)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

    @ttl.compute()
    def compute():
        with seed_dfb.wait() as s, d_dfb.wait() as d0:
            acc = s + d0
            for _ in range(N):
                with d_dfb.wait() as d:
                    acc += d * 2.0
            with out_dfb.reserve() as o:
                o.store(acc + d0 * 100.0)

    @ttl.datamovement()
    def reader():
        with seed_dfb.reserve() as blk:
            ttl.copy(seed[0, 0], blk).wait()
        for k in range(N + 1):
            with d_dfb.reserve() as blk:
                ttl.copy(deltas[0, k], blk).wait()

    @ttl.datamovement()
    def writer():
        with out_dfb.wait() as blk:
            ttl.copy(blk, out[0, 0]).wait()


def test_a_loop_of_younger_blocks_behind_a_held_one():
    seed, deltas = _tiles([1.0]), _tiles([0.5, 1.0, 2.0, 4.0])
    out = zeros((32, 32))
    deltas_behind_a_held_block(seed, deltas, out)
    # 1 + 0.5 + 2 * (1 + 2 + 4) + 100 * 0.5
    np.testing.assert_array_equal(_np(out), np.full((32, 32), 65.5, np.float32))


def test_the_loop_kernels_pass_check_kernel(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    program = compiled(deltas_behind_a_held_block, _tiles([1.0]), _tiles([0.5, 1.0, 2.0, 4.0]),
                       zeros((32, 32))).program
    jobs = []
    for k in program.kernels:
        path = tmp_path / f"{k.name}.cpp"
        path.write_text(emit_kernel(k.function))
        role = "compute" if k.is_compute else ("reader" if k.processor == "RISCV_0" else "writer")
        jobs.append((path, role, check_kernel.accessor_compile_args(program, k)))
    for result in check_kernel.check_kernels(jobs):
        check_kernel.require_accepted(result)


@ttl.operation(grid=(2, 1))
def runtime_trip_count(inp, out):
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=4)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

    @ttl.compute()
    def compute():
        n, _ = ttl.node(dims=2)
        with in_dfb.wait() as first, out_dfb.reserve() as o:
            for _ in range(n + 2):
                with in_dfb.wait() as d:
                    o.store(first + d)

    @ttl.datamovement()
    def reader():
        for k in range(3):
            with in_dfb.reserve() as blk:
                ttl.copy(inp[0, k], blk).wait()

    @ttl.datamovement()
    def writer():
        with out_dfb.wait() as blk:
            ttl.copy(blk, out[0, 0]).wait()


def test_a_runtime_loop_behind_a_held_block_is_an_error_at_the_loop():
    with pytest.raises(KernelError) as info:
        runtime_trip_count(tile_tensor((32, 96)), zeros((32, 32)))
    message = str(info.value)
    assert "test_ttl_out_of_order_release.py:" in message
    assert "in_dfb.wait() in this loop acquires a block of in_dfb while first" in message
    assert "compile-time trip count" in message


@ttl.operation(grid=(2, 1))
def younger_in_a_runtime_branch(inp, out):
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        x, _ = ttl.node(dims=2)
        with in_dfb.reserve() as first:
            ttl.copy(inp[0, 0], first).wait()
            if x == 0:
                with in_dfb.reserve() as second:
                    ttl.copy(inp[0, 1], second).wait()

    @ttl.datamovement()
    def writer():
        with in_dfb.wait() as blk:
            ttl.copy(blk, out[0, 0]).wait()


def test_a_younger_block_released_in_a_runtime_branch_is_an_error():
    with pytest.raises(KernelError) as info:
        younger_in_a_runtime_branch(tile_tensor((32, 64)), zeros((32, 32)))
    message = str(info.value)
    assert "test_ttl_out_of_order_release.py:" in message
    assert "second is pushed in this branch of this if while first" in message
