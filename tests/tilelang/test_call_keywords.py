"""Keyword arguments to T.* calls may come from a ``**`` mapping, as TileLang code passes options."""

from __future__ import annotations

import numpy as np

import tilefold.language as T
from tilefold.compiler import compile_prim_func

OPTIONS = {"dim": 1}


@T.prim_func
def row_sums(A: T.Tensor((64, 64), "float32"), S: T.Tensor((64,), "float32")):
    with T.Kernel(2) as bx:
        a = T.alloc_shared((32, 64), "float32")
        s = T.alloc_fragment((32,), "float32")
        T.copy(A[bx * 32, 0], a)
        T.reduce_sum(a, s, **OPTIONS)
        T.copy(s, S[bx * 32])


def test_keywords_from_a_mapping():
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    got = compile_prim_func(row_sums).simulate({"A": x})["S"]
    want = x.astype(np.float64).sum(axis=1)
    assert np.abs(got - want).max() < 2e-3 * np.abs(x).sum(axis=1).max()
