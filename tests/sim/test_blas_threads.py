"""The simulator multiplies on one BLAS thread, and gives the thread count back after the run; a large
float64 product is split over two threads by rows, with the same bits and cycles."""

from __future__ import annotations

import contextlib
import io
import runpy

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.sim import matmul_blocks, two_thread_products

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
        halves = two_thread_products.matmul_in_halves(left, right, np.empty_like(whole))
        assert halves.tobytes() == whole.tobytes(), (lhs, rhs)


def test_only_large_products_on_two_cores_are_split(monkeypatch):
    big, small = np.empty((256, 128)), np.empty((128, 128))
    monkeypatch.setattr(two_thread_products, "_cores", 2)
    assert two_thread_products.worth_splitting(big, np.empty((128, 512)), (256, 512))
    assert not two_thread_products.worth_splitting(small, small, (128, 128))
    monkeypatch.setattr(two_thread_products, "_cores", 1)
    assert not two_thread_products.worth_splitting(big, np.empty((128, 512)), (256, 512))


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


def test_a_grid_matmul_gives_the_same_numbers_and_cycles_with_split_products(monkeypatch):
    from tilefold.sim.device import Device

    rng = np.random.default_rng(5)
    size, depth = 2 * 32 * BLOCK, 3 * 32 * BLOCK
    a_values = rng.standard_normal((size, depth)).astype(np.float32)
    b_values = rng.standard_normal((depth, size)).astype(np.float32)
    original_run = Device.run
    halves = two_thread_products.matmul_in_halves

    def run(cores: int, min_flops: int):
        monkeypatch.setattr(two_thread_products, "_cores", cores)
        monkeypatch.setattr(two_thread_products, "MIN_FLOPS", min_flops)
        split, runs = [], []
        monkeypatch.setattr(matmul_blocks, "matmul_in_halves", lambda *a: split.append(1) or halves(*a))
        monkeypatch.setattr(Device, "run", lambda self, *a, **k: runs.append(original_run(self, *a, **k)) or runs[-1])
        a, b = (ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT) for v in (a_values, b_values))
        y = ttnn.zeros((size, size), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
        grid_matmul(a, b, y)
        reference = ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(b)
        return ttnn.to_numpy(y), reference, [r.perf.cycles for r in runs], len(split)

    one = run(1, two_thread_products.MIN_FLOPS)
    two = run(2, 0)
    assert one[3] == 0 and two[3] > 0
    assert one[0].tobytes() == two[0].tobytes() and one[2] == two[2] and one[2]
    assert abs(two[0] - two[1]).max() < 0.05 * abs(two[1]).max()


def test_a_forked_child_splits_products_with_its_own_worker(monkeypatch):
    """A process forked after a split product (a pool of autotuning workers) starts its own worker
    thread instead of waiting on its parent's, which the child does not have."""
    import multiprocessing

    monkeypatch.setattr(two_thread_products, "_cores", 2)
    rng = np.random.default_rng(4)
    left, right = _tf32(rng, (64, 32)), _tf32(rng, (32, 48))
    two_thread_products.matmul_in_halves(left, right, np.empty((64, 48)))
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        product = pool.apply_async(two_thread_products.matmul_in_halves, (left, right, np.empty((64, 48))))
        assert product.get(timeout=60).tobytes() == (left @ right).tobytes()
