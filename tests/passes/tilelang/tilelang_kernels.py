"""Small TileLang kernels the pass tests lower."""

import tilefold.language as T


def gemm(M=256, N=256, K=256, bm=64, bn=64, bk=32, stages=3):
    @T.prim_func
    def gemm_kernel(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"),
                    C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm)) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "bfloat16")
            B_s = T.alloc_shared((bk, bn), "bfloat16")
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):
                T.copy(A[by * bm, k * bk], A_s)
                T.copy(B[k * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * bm, bx * bn])

    return gemm_kernel


@T.prim_func
def tile_notation_matmul(A: T.Buffer((256, 256), "float16"), B: T.Buffer((256, 256), "float16"),
                C: T.Buffer((256, 256), "float16")):
    with T.Kernel(8, 8) as (bx, by):
        for kt in T.serial(8):
            for i, j in T.Parallel(32, 32):
                C[bx * 32 + i, by * 32 + j] += A[bx * 32 + i, kt * 32 + j] * B[kt * 32 + i, by * 32 + j]


@T.prim_func
def tile_add(A: T.Tensor((64, 96), "bfloat16"), B: T.Tensor((64, 96), "bfloat16"),
             C: T.Tensor((64, 96), "bfloat16")):
    with T.Kernel(3, 2) as (bx, by):
        for i, j in T.Parallel(32, 32):
            C[by * 32 + i, bx * 32 + j] = A[by * 32 + i, bx * 32 + j] + B[by * 32 + i, bx * 32 + j]


def fused(M=128, N=128, bm=64, bn=64):
    @T.prim_func
    def fused_kernel(A: T.Tensor((M, N), "bfloat16"), B: T.Tensor((M, N), "bfloat16"),
                     C: T.Tensor((M, N), "bfloat16"), Y: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm)) as (bx, by):
            a = T.alloc_shared((bm, bn), "bfloat16")
            b = T.alloc_shared((bm, bn), "bfloat16")
            c = T.alloc_shared((bm, bn), "bfloat16")
            y = T.alloc_fragment((bm, bn), "bfloat16")
            T.copy(A[by * bm, bx * bn], a)
            T.copy(B[by * bm, bx * bn], b)
            T.copy(C[by * bm, bx * bn], c)
            for i, j in T.Parallel(bm, bn):
                y[i, j] = T.max(a[i, j] * b[i, j] + c[i, j], 0)
            T.copy(y, Y[by * bm, bx * bn])

    return fused_kernel


@T.prim_func
def row_softmax(X: T.Tensor((64, 64), "bfloat16"), Y: T.Tensor((64, 64), "bfloat16")):
    with T.Kernel(2) as bx:
        x = T.alloc_shared((32, 64), "bfloat16")
        m = T.alloc_fragment((32,), "float32")
        e = T.alloc_fragment((32, 64), "float32")
        s = T.alloc_fragment((32,), "float32")
        y = T.alloc_fragment((32, 64), "bfloat16")
        T.copy(X[bx * 32, 0], x)
        T.reduce_max(x, m, dim=1)
        for i, j in T.Parallel(32, 64):
            e[i, j] = T.exp(x[i, j] - m[i])
        T.reduce_sum(e, s, dim=1)
        for i, j in T.Parallel(32, 64):
            y[i, j] = e[i, j] / s[i]
        T.copy(y, Y[bx * 32, 0])


def sharded_add(layout_c=None, layout_a=None, M=256, N=256, bm=64, bn=64):
    @T.prim_func
    def add(A: T.Tensor((M, N), "bfloat16"), B: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm)) as (bx, by):
            a = T.alloc_shared((bm, bn), "bfloat16")
            b = T.alloc_shared((bm, bn), "bfloat16")
            c = T.alloc_fragment((bm, bn), "bfloat16")
            T.copy(A[by * bm, bx * bn], a)
            T.copy(B[by * bm, bx * bn], b)
            for i, j in T.Parallel(bm, bn):
                c[i, j] = a[i, j] + b[i, j]
            T.copy(c, C[by * bm, bx * bn])

    layout = {k: v for k, v in (("A", layout_a), ("C", layout_c)) if v}
    return T.annotate_tt_layout(add, layout) if layout else add
