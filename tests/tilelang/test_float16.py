"""float16 tensors are stored as Float16 (IEEE half, 10 mantissa bits), not as bfloat16."""

from __future__ import annotations

import numpy as np

import tilefold.language as T
from tilefold.compiler import compile_prim_func
from tilefold.layout.formats import DataFormat


@T.prim_func
def add_half(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float16")):
    with T.Kernel(2, 2) as (bx, by):
        a = T.alloc_shared((32, 32), "float16")
        b = T.alloc_shared((32, 32), "float16")
        T.copy(A[by * 32, bx * 32], a)
        T.copy(B[by * 32, bx * 32], b)
        for i, j in T.Parallel(32, 32):
            a[i, j] = a[i, j] + b[i, j]
        T.copy(a, C[by * 32, bx * 32])


def test_float16_tensors_keep_half_precision():
    kernel = compile_prim_func(add_half)
    assert [t.data_format for t in kernel.tensors] == [DataFormat.Float16] * 3
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 64)).astype(np.float16)
    y = rng.standard_normal((64, 64)).astype(np.float16)
    got = kernel.simulate({"A": x, "B": y})["C"].astype(np.float32)
    want = x.astype(np.float32) + y.astype(np.float32)
    # rounded once to float16: within half a float16 ulp of the exact sum (bfloat16 would be 8x coarser)
    ulp = np.spacing(np.abs(want).astype(np.float16)).astype(np.float32)
    assert (np.abs(got - want) <= ulp / 2 + 1e-7).all()
    np.testing.assert_array_equal(got, want.astype(np.float16).astype(np.float32))
