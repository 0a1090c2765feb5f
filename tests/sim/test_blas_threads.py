"""The simulator multiplies on one BLAS thread, and gives the thread count back after the run; a large
product is computed in two halves of rows (on two threads when there are two cores), with the same
bits and cycles whatever the cores."""

from __future__ import annotations

import contextlib
import io
import runpy

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.sim import matmul_blocks, two_threads

from simhelpers import EXAMPLES


def _blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_products_run_on_one_blas_thread(monkeypatch):
    seen: list[list[int]] = []
    multiply = matmul_blocks.exact_matmul

    def watched(*args, **kwargs):
        seen.append(_blas_threads())
        return multiply(*args, **kwargs)

    monkeypatch.setattr(matmul_blocks, "exact_matmul", watched)
    with threadpool_limits(2, user_api="blas"):
        with contextlib.redirect_stdout(io.StringIO()):
            result, reference = runpy.run_path(str(EXAMPLES / "ttl" / "matmul_single_node.py"),
                                               run_name="example")["main"]()
        after = _blas_threads()
    assert seen and all(threads == [1] * len(threads) for threads in seen), seen[:3]
    assert after and all(n == 2 for n in after), after
    assert abs(result - reference).max() < 0.1 * abs(reference).max()


def _tf32(rng, shape):
    """float64 values a source register can hold (10 mantissa bits), as exact_matmul multiplies."""
    values = rng.standard_normal(shape).astype(np.float32)
    return (values.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)


def test_a_product_in_two_halves_is_the_same_bits():
    rng = np.random.default_rng(3)
    for lhs, rhs in [((256, 128), (128, 512)), ((2, 1, 64, 96), (1, 3, 96, 80)), ((5, 32), (32, 7))]:
        left, right = _tf32(rng, lhs), _tf32(rng, rhs)
        whole = np.matmul(left, right)
        halves = two_threads.matmul_in_halves(left, right, np.empty_like(whole))
        assert halves.tobytes() == whole.tobytes(), (lhs, rhs)


def test_large_products_are_halved_on_two_threads_or_in_sequence_on_one_core(monkeypatch):
    assert two_threads.is_large(np.empty((256, 128)), (256, 512))
    assert not two_threads.is_large(np.empty((128, 128)), (128, 128))
    assert not two_threads.is_large(np.empty((1, 4096)), (1, 4096))
    rng = np.random.default_rng(6)
    left, right = _tf32(rng, (256, 128)), _tf32(rng, (128, 512))
    monkeypatch.setattr(two_threads, "_cores", 1)
    monkeypatch.setattr(two_threads, "_worker", None)
    one_core = two_threads.matmul_in_halves(left, right, np.empty((256, 512)))
    assert two_threads._worker is None
    monkeypatch.setattr(two_threads, "_cores", 2)
    two_cores = two_threads.matmul_in_halves(left, right, np.empty((256, 512)))
    assert two_threads._worker is not None
    assert one_core.tobytes() == two_cores.tobytes() == (left @ right).tobytes()


BLOCK = 4          # 4x4-tile blocks: each lane's operands are above the size multiplied without the pool


@ttl.operation(grid=(2, 2))
def grid_matmul(a, b, y):
    """Each node multiplies its row of ``a`` blocks by its column of ``b`` blocks, accumulating in DST."""
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(BLOCK, BLOCK), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(BLOCK, BLOCK), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(BLOCK, BLOCK), block_count=2)
    k_blocks = a.shape[1] // (32 * BLOCK)

    @ttl.compute()
    def compute():
        with y_dfb.reserve() as out:
            for _ in range(k_blocks):
                with a_dfb.wait() as x, b_dfb.wait() as w:
                    out += x @ w

    @ttl.datamovement()
    def read():
        col, row = ttl.node(dims=2)
        for k in range(k_blocks):
            with a_dfb.reserve() as x, b_dfb.reserve() as w:
                ttl.copy(a[row * BLOCK:(row + 1) * BLOCK, k * BLOCK:(k + 1) * BLOCK], x).wait()
                ttl.copy(b[k * BLOCK:(k + 1) * BLOCK, col * BLOCK:(col + 1) * BLOCK], w).wait()

    @ttl.datamovement()
    def write():
        col, row = ttl.node(dims=2)
        with y_dfb.wait() as out:
            ttl.copy(out, y[row * BLOCK:(row + 1) * BLOCK, col * BLOCK:(col + 1) * BLOCK]).wait()


@pytest.mark.parametrize("numerics", ["faithful", "fast"])
def test_a_grid_matmul_gives_the_same_numbers_and_cycles_on_one_core_or_two(monkeypatch, numerics):
    """Products of a grid's stacked operands are halved on two threads, or in sequence on one core:
    the same bits and cycles (fast numerics' float32 sums included); in faithful numerics the same
    as one product too. The passes over DST blocks around them, halved as well, change nothing."""
    from tilefold.sim import numerics_mode
    from tilefold.sim.device import Device

    monkeypatch.setenv(numerics_mode.ENVIRONMENT, numerics)
    rng = np.random.default_rng(5)
    size, depth = 2 * 32 * BLOCK, 3 * 32 * BLOCK
    a_values = rng.standard_normal((size, depth)).astype(np.float32)
    b_values = rng.standard_normal((depth, size)).astype(np.float32)
    original_run = Device.run
    halves, pool = two_threads.matmul_in_halves, two_threads._pool

    def run(cores: int, min_flops: int, min_values: int = 1 << 62):
        monkeypatch.setattr(two_threads, "_cores", cores)
        monkeypatch.setattr(two_threads, "MIN_FLOPS", min_flops)
        monkeypatch.setattr(two_threads, "MIN_VALUES", min_values)
        split, runs, handed = [], [], []
        monkeypatch.setattr(matmul_blocks, "matmul_in_halves", lambda *a, **k: split.append(1) or halves(*a, **k))
        monkeypatch.setattr(two_threads, "_pool", lambda: handed.append(1) or pool())
        monkeypatch.setattr(Device, "run", lambda self, *a, **k: runs.append(original_run(self, *a, **k)) or runs[-1])
        a, b = (ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT) for v in (a_values, b_values))
        y = ttnn.zeros((size, size), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
        grid_matmul(a, b, y)
        reference = ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(b)
        return ttnn.to_numpy(y), reference, [r.perf.cycles for r in runs], len(split), len(handed)

    one_core, two_cores = run(1, 0), run(2, 0)
    assert one_core[3] > 0 and two_cores[3] > 0
    assert one_core[0].tobytes() == two_cores[0].tobytes() and one_core[2] == two_cores[2] and one_core[2]
    passes = run(2, 0, 0)                 # every pass over DST blocks in halves as well
    assert passes[4] > two_cores[4] and passes[0].tobytes() == two_cores[0].tobytes() and passes[2] == two_cores[2]
    assert abs(two_cores[0] - two_cores[1]).max() < 0.05 * abs(two_cores[1]).max()
    if numerics == "faithful":
        whole = run(2, 1 << 62)
        assert whole[3] == 0 and whole[0].tobytes() == two_cores[0].tobytes() and whole[2] == two_cores[2]


def test_a_forked_child_splits_products_with_its_own_worker(monkeypatch):
    """A process forked after a split product (a pool of autotuning workers) starts its own worker
    thread instead of waiting on its parent's, which the child does not have."""
    import multiprocessing

    monkeypatch.setattr(two_threads, "_cores", 2)
    rng = np.random.default_rng(4)
    left, right = _tf32(rng, (64, 32)), _tf32(rng, (32, 48))
    two_threads.matmul_in_halves(left, right, np.empty((64, 48)))
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        product = pool.apply_async(two_threads.matmul_in_halves, (left, right, np.empty((64, 48))))
        assert product.get(timeout=60).tobytes() == (left @ right).tobytes()
