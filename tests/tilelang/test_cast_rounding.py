"""``T.cast(x, "bfloat16")`` inside an expression rounds the value to bfloat16 there (the SFPU's
``typecast_tile<Float32, Float16_b>``), so comparisons and arithmetic see the rounding."""

import ml_dtypes
import numpy as np
from checkkernel import check_kernels, require_accepted

import tilefold as tilelang
import tilefold.language as T


@tilelang.jit(out_idx=[1, 2])
def rounding(M, N, block=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), Exact: T.Tensor((M, N), "float32"),
             Lost: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block), T.ceildiv(N, block)) as (bx, by):
            a = T.alloc_fragment((block, block), "float32")
            e = T.alloc_fragment((block, block), "float32")
            d = T.alloc_fragment((block, block), "float32")
            T.copy(A[bx * block, by * block], a)
            for i, j in T.Parallel(block, block):
                e[i, j] = T.if_then_else(T.cast(a[i, j], "bfloat16") == a[i, j], 1.0, 0.0)
                d[i, j] = (a[i, j] - T.cast(a[i, j], "bfloat16")) * 1024.0
            T.copy(e, Exact[bx * block, by * block])
            T.copy(d, Lost[bx * block, by * block])

    return main


def _input():
    a = np.random.default_rng(3).standard_normal((64, 64)).astype(np.float32)
    a[::3] = a[::3].astype(ml_dtypes.bfloat16).astype(np.float32)    # a third of the rows hold bf16 values
    return a


def test_a_bfloat16_cast_rounds_inside_an_expression():
    a = _input()
    exact, lost = rounding(64, 64)(a)
    rounded = a.astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(exact, (rounded == a).astype(np.float32))
    np.testing.assert_array_equal(lost, (a - rounded) * np.float32(1024.0))
    assert 0 < exact.mean() < 1


def test_the_rounding_compute_kernel_passes_check_kernel(tmp_path):
    kernel = rounding(64, 64)
    program = kernel.compiled.program
    sources = kernel.compiled.kernel_sources()
    compute = next(k for k in program.kernels if k.is_compute)
    text = sources[compute.source_file]
    assert "typecast_tile<(uint32_t)DataFormat::Float32, (uint32_t)DataFormat::Float16_b>" in text
    path = tmp_path / "compute.cpp"
    path.write_text(text)
    for result in check_kernels([(path, "compute", None)]):
        require_accepted(result)
