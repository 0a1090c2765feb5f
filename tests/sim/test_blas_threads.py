"""The simulator multiplies on one BLAS thread, and gives the thread count back after the run."""

from __future__ import annotations

import contextlib
import io
import runpy

from threadpoolctl import threadpool_info, threadpool_limits

from tilefold.sim import matmul_blocks

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
