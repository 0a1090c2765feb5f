"""A row of a 2-D local buffer at a loop index (``T.copy(L[k, :], v)``, ``L[k, j]`` in T.Parallel), as
flash decoding combines its splits: the rows masked to row k and summed by reduce_tile."""

import numpy as np
from checkkernel import check_kernels, compiled_kernel_jobs, require_accepted

import tilefold as tilelang
import tilefold.language as T


def weighted_rows(R, C):
    @T.prim_func
    def main(A: T.Tensor((R, C), "float32"), B: T.Tensor((C,), "float32")):
        with T.Kernel(1) as _:
            rows = T.alloc_fragment((R, C), "float32")
            row = T.alloc_fragment((C,), "float32")
            acc = T.alloc_fragment((C,), "float32")
            T.copy(A, rows)
            T.clear(acc)
            for k in T.serial(R):
                T.copy(rows[k, :], row)
                for j in T.Parallel(C):
                    acc[j] += row[j] * (k + 1) + T.exp2(rows[k, j] - rows[R - 1 - k, j])
            T.copy(acc, B)

    return main


def test_rows_at_a_loop_index_match_numpy():
    a = np.random.default_rng(6).standard_normal((4, 64)).astype(np.float32)
    b = np.zeros(64, np.float32)
    kernel = tilelang.compile(weighted_rows(4, 64))
    kernel(a, b)
    want = sum(a[k] * (k + 1) + np.exp2(a[k] - a[3 - k]) for k in range(4))
    # the rows pass through the FPU's reduction, which reads float32 as TF32 (10 mantissa bits)
    np.testing.assert_allclose(b, want, rtol=5e-3, atol=5e-3)
    program, sources = kernel.compiled.program, kernel.compiled.kernel_sources()
    assert "reduce_tile" in sources[next(k.source_file for k in program.kernels if k.is_compute)]


def test_row_reads_pass_check_kernel(tmp_path):
    kernel = tilelang.compile(weighted_rows(4, 64))
    jobs = compiled_kernel_jobs(kernel.compiled, tmp_path)
    for result in check_kernels(jobs):
        require_accepted(result)
