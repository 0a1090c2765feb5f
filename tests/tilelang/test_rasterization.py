"""Block rasterization: every order visits every block of its grid exactly once, kernels compiled
with each order compute the same GEMM as numpy, the plan lists each core's blocks in the order,
and an order the grid's shape does not allow is a clear error at the annotation."""


import json

import numpy as np
import pytest

import tilefold
import tilefold.language as T
from tilefold.errors import CompileError
from tilefold.ops.base import random_input
from tilefold.layout.block_orders import block_order, check_order

SHAPES = [(1, 1), (1, 7), (5, 3), (4, 4), (8, 8), (2, 16), (16, 4), (6, 9), (32, 32)]
ORDERS = ["row_major", "column_major", "block_linear(1)", "block_linear(2)", "block_linear(3)", "block_linear(8)",
          "z_order", "hilbert"]


@pytest.mark.parametrize("spec", ORDERS)
def test_orders_are_permutations_of_the_grid(spec):
    order = spec.split("(")[0]
    for rows, cols in SHAPES:
        if check_order(order, rows, cols):
            continue
        visits = block_order(rows, cols, spec)
        assert sorted(visits) == [(m, n) for m in range(rows) for n in range(cols)], (spec, rows, cols)


def test_orders_keep_neighbours_close():
    # consecutive Hilbert positions are grid neighbours; a block_linear panel walks k rows per column
    visits = block_order(8, 8, "hilbert")
    assert all(abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1 for a, b in zip(visits, visits[1:]))
    assert block_order(4, 3, "block_linear(2)")[:4] == [(0, 0), (1, 0), (0, 1), (1, 1)]
    assert block_order(2, 4, "z_order")[:4] == [(0, 0), (0, 1), (1, 0), (1, 1)]


def gemm_kernel(size, block, order=None, swizzle=None):
    @tilefold.jit
    def matmul(M, N, K, bM, bN, bK):
        @T.prim_func
        def gemm(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
            with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM)) as (bx, by):
                if order is not None:
                    T.annotate_tt_schedule(order=order)
                if swizzle is not None:
                    T.use_swizzle(swizzle)
                A_s = T.alloc_shared((bM, bK), "bfloat16")
                B_s = T.alloc_shared((bK, bN), "bfloat16")
                C_l = T.alloc_fragment((bM, bN), "float")
                T.clear(C_l)
                for k in T.Pipelined(T.ceildiv(K, bK), num_stages=2):
                    T.copy(A[by * bM, k * bK], A_s)
                    T.copy(B[k * bK, bx * bN], B_s)
                    T.gemm(A_s, B_s, C_l)
                T.copy(C_l, C[by * bM, bx * bN])
        return gemm
    return matmul(size, size, 32, block, block, 32)


@pytest.mark.parametrize("order, swizzle, expect", [
    ("hilbert", None, "hilbert"), ("z_order", None, "z_order"), ("column_major", None, "column_major"),
    ("block_linear(3)", None, "block_linear(3)"), (None, 2, "block_linear(2)"),
], ids=["hilbert", "z_order", "column_major", "block_linear", "use_swizzle"])
def test_kernels_follow_the_order(order, swizzle, expect):
    kernel = gemm_kernel(512, 32, order, swizzle)           # 16 x 16 blocks, 4 per core
    a = random_input((512, 32), "bfloat16")
    b = random_input((32, 512), "bfloat16", seed=1)
    c = np.asarray(kernel(a, b), np.float32)
    assert np.abs(c - a @ b).max() <= 2 ** -6 * np.abs(a @ b).max()
    plan = json.loads(kernel.get_artifact("tt.plan.json"))
    visits = block_order(16, 16, expect)
    walked = []
    for x, y in ((i % 8, i // 8) for i in range(64)):          # cores in row-major order own runs of positions
        items = plan["work_partition"][f"({x},{y})"]
        assert {i["tile_order"] for i in items} == {expect}
        walked += [(i["io"], i["jo"]) for i in items]
    assert walked == visits


def test_an_order_the_grid_does_not_allow_is_a_clear_error():
    kernel = gemm_kernel(384, 64, "hilbert")                 # 6 x 6 blocks
    with pytest.raises(CompileError, match="hilbert needs a square grid") as caught:
        kernel(random_input((384, 32), "bfloat16"), random_input((32, 384), "bfloat16"))
    assert "test_rasterization.py" in str(caught.value)
