"""A tensor the caller passes keeps its values where the kernel does not write it, as in TileLang:
the host uploads a passed output before the kernels run (elements of a written page and whole pages
alike); an output the kernel allocates (``out_idx``) is not uploaded, and pages no kernel writes
there are still an error."""

import numpy as np
import pytest

import tilefold.language as T
from tilefold.errors import UnwrittenOutputError
from tilefold.run.jit import jit


def head(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1):
            for i in T.Parallel(4):
                A[i] = T.cast(i + 1, "float32")
    return main


@pytest.mark.parametrize("n", [32, 2048])
def test_elements_and_pages_the_kernel_does_not_write_keep_the_callers_values(n):
    a = np.full(n, 9.0, np.float32)
    jit(head(n))(a)
    np.testing.assert_array_equal(a[:4], [1, 2, 3, 4])
    assert (a[4:] == 9.0).all()


def test_an_allocated_output_with_pages_no_kernel_writes_is_still_an_error():
    with pytest.raises(UnwrittenOutputError, match="never written"):
        jit(head(2048), out_idx=[0])()
