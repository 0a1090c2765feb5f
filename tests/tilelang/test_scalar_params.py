"""Scalar kernel parameters (``n: T.int32``, ``alpha: T.float32``): the kernel is built for the
values each call passes, once per values; asking for its code before a call is one clear line."""

import numpy as np
from tilelang_helpers import expect_error

import tilefold as tilelang
import tilefold.language as T
from tilefold.errors import KernelError


def scaled_prefix(max_len):
    @T.prim_func
    def main(A: T.Tensor((max_len,), "float32"), B: T.Tensor((max_len,), "float32"), valid_len: T.int32,  # error
             alpha: T.float32):
        with T.Kernel(1, threads=128) as _:
            for i in T.Parallel(max_len):
                B[i] = 0.0
            span = T.min(valid_len, max_len)
            for i in T.Parallel(span):
                B[i] = A[i] * alpha

    return main


def test_scalar_parameters_take_the_values_of_each_call():
    a = np.random.default_rng(4).standard_normal(256).astype(np.float32)
    kernel = tilelang.compile(scaled_prefix(256), out_idx=[1])
    for n, alpha in ((100, 2.0), (256, -0.5), (100, 2.0)):
        want = np.zeros(256, np.float32)
        want[:n] = a[:n] * alpha
        np.testing.assert_allclose(kernel(a, n, alpha), want, rtol=1e-6)
    assert len(kernel.by_scalars) == 2


def test_asking_for_the_code_without_the_scalars_is_one_line():
    prim = scaled_prefix(64)
    kernel = tilelang.jit(prim, out_idx=[1])
    expect_error(lambda: kernel.get_kernel_source(), KernelError, prim, "takes the scalar valid_len (int32)")
