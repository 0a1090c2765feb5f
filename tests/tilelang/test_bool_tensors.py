"""A bool tensor is stored as UInt8 pages and read as a condition (a mask kernel)."""

from __future__ import annotations

import numpy as np

import tilefold.language as T
from tilefold.compiler import compile_prim_func
from tilefold.layout.formats import DataFormat


@T.prim_func
def masked(A: T.Tensor((64, 64), "float32"), M: T.Tensor((64, 64), "bool"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(2, 2) as (bx, by):
        a = T.alloc_shared((32, 32), "float32")
        m = T.alloc_shared((32, 32), "bool")
        T.copy(A[by * 32, bx * 32], a)
        T.copy(M[by * 32, bx * 32], m)
        for i, j in T.Parallel(32, 32):
            a[i, j] = T.if_then_else(m[i, j], a[i, j], 0.0)
        T.copy(a, C[by * 32, bx * 32])


def test_a_bool_mask_selects_elements():
    kernel = compile_prim_func(masked)
    assert kernel.tensors[1].data_format is DataFormat.UInt8
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 64)).astype(np.float32)
    mask = rng.random((64, 64)) < 0.5
    np.testing.assert_array_equal(kernel.simulate({"A": x, "M": mask})["C"], np.where(mask, x, 0))
