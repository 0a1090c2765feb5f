"""T.atomic_add / T.atomic_max / T.atomic_min: grid blocks that update one block of a tensor run in
turn on one core, the update kept in a fragment between them, element form and block form."""

import numpy as np
import pytest
from checkkernel import check_kernels, compiled_kernel_jobs, require_accepted

import tilefold as tilelang
import tilefold.language as T

UPDATES = {"atomic_add": np.add, "atomic_max": np.maximum, "atomic_min": np.minimum}


def column_blocks(M, N, block, what, element_form):
    update = getattr(T, what)

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((block, N), "float32")):
        with T.Kernel(T.ceildiv(M, block)) as bx:
            a = T.alloc_shared((block, N), "float32")
            T.copy(A[bx * block, 0], a)
            if element_form:
                for i, j in T.Parallel(block, N):
                    update(C[i, j], a[i, j])
            else:
                update(C[0, 0], a)

    return main


@pytest.mark.parametrize("element_form", [True, False], ids=["element", "block"])
@pytest.mark.parametrize("what", sorted(UPDATES))
def test_atomic_updates_of_one_block_from_every_grid_block(what, element_form):
    M, N, block = 128, 64, 32
    rng = np.random.default_rng(5)
    a = rng.standard_normal((M, N)).astype(np.float32)
    c = rng.standard_normal((block, N)).astype(np.float32)
    want = c.copy()
    for b in range(M // block):
        want = UPDATES[what](want, a[b * block:(b + 1) * block])
    kernel = tilelang.compile(column_blocks(M, N, block, what, element_form))
    kernel(a, c)
    if what == "atomic_add":
        np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(c, want)


def test_atomic_max_kernels_pass_check_kernel(tmp_path):
    kernel = tilelang.compile(column_blocks(128, 64, 32, "atomic_max", True))
    jobs = compiled_kernel_jobs(kernel.compiled, tmp_path)
    program, sources = kernel.compiled.program, kernel.compiled.kernel_sources()
    assert "binary_max_tile" in sources[next(k.source_file for k in program.kernels if k.is_compute)]
    for result in check_kernels(jobs):
        require_accepted(result)


def test_an_atomic_add_that_returns_the_previous_value():
    """``old[i] = T.atomic_add(B[i], A[i], return_prev=True)``: B gets the sums, old what B held."""
    @T.prim_func
    def k(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32"), old: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            for i in T.Parallel(128):
                old[i] = T.atomic_add(B[i], A[i], return_prev=True)

    a = np.arange(128, dtype=np.float32)
    b = np.full(128, 3.0, np.float32)
    before = b.copy()
    old = np.zeros(128, np.float32)
    tilelang.jit(k)(a, b, old)
    np.testing.assert_array_equal(b, before + a)
    np.testing.assert_array_equal(old, before)


def test_every_element_atomically_added_into_one():
    """``T.atomic_add(Out[0], A[bx * 128 + i])`` over ``T.Parallel(128)`` in each of 3 blocks: the sum of
    A added onto what Out held."""
    @T.prim_func
    def k(A: T.Tensor((384,), "float32"), Out: T.Tensor((1,), "float32")):
        with T.Kernel(3, threads=128) as bx:
            for i in T.Parallel(128):
                T.atomic_add(Out[0], A[bx * 128 + i])

    a = np.random.default_rng(3).standard_normal(384).astype(np.float32)
    out = np.array([2.0], np.float32)
    tilelang.jit(k)(a, out)
    np.testing.assert_allclose(out[0], 2.0 + a.sum(), rtol=1e-2, atol=5e-2)
