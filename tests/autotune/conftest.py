"""Small tuned kernels shared by the autotuner's tests."""

import numpy as np
import pytest

import tilefold
import tilefold.language as T


def add_reference(a, b):
    return a.astype(np.float32) + b.astype(np.float32)


def make_eltwise(M, N, block_M=32, block_N=32, op="add", num_stages=2):
    """An element-wise kernel whose ``op`` can be wrong on purpose (``sub``) and whose blocks can
    be too large for L1."""

    @T.prim_func
    def eltwise(A: T.Tensor((M, N), "bfloat16"), B: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M)) as (bx, by):
            A_s = T.alloc_shared((block_M, block_N), "bfloat16")
            B_s = T.alloc_shared((block_M, block_N), "bfloat16")
            C_l = T.alloc_fragment((block_M, block_N), "bfloat16")
            T.copy(A[by * block_M, bx * block_N], A_s)
            T.copy(B[by * block_M, bx * block_N], B_s)
            for i, j in T.Parallel(block_M, block_N):
                if op == "add":
                    C_l[i, j] = A_s[i, j] + B_s[i, j]
                else:
                    C_l[i, j] = A_s[i, j] - B_s[i, j]
            T.copy(C_l, C[by * block_M, bx * block_N])

    return eltwise


CONFIGS = [
    {"block_M": 32, "block_N": 32},
    {"block_M": 64, "block_N": 32},
    {"block_M": 32, "block_N": 64},
    {"block_M": 64, "block_N": 64},
]


@pytest.fixture
def tuner_factory(tmp_path):
    """``tuner(configs, **options)``: an AutoTuner over the element-wise kernel at 64x64."""
    from tilefold.autotuner import AutoTuner

    def make(configs=CONFIGS, shape=(64, 64), ref=add_reference):
        tuner = AutoTuner(tilefold.jit(make_eltwise, out_idx=[-1]), configs, args=shape, name="eltwise")
        tuner.set_profile_args(ref_prog=ref, rtol=2e-2, atol=2e-2)
        return tuner

    return make
