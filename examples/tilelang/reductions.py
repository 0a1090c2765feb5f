"""Reductions in TileLang: sum, max, min, abssum and absmax of each row or column.

``T.reduce_*(src, dst, dim)`` reduces a 2-D fragment along ``dim`` into a 1-D fragment; on
Tensix sum and max are ``reduce_tile`` (REDUCE_ROW or REDUCE_COL), min is the max of the
negated values, and abssum / absmax reduce ``abs_tile`` of the block. The result vector is
copied straight to a 1-D global tensor (``T.copy(B_local, B)``).

Run: ``.venv/bin/python examples/tilelang/reductions.py``.
"""

import numpy as np

import tilefold as tilelang
import tilefold.language as T

OPS = ("sum", "max", "min", "abssum", "absmax")


def reduce_test(M, N, op, dim=1, dtype="float32"):
    out_shape = (M,) if dim == 1 else (N,)

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor(out_shape, dtype)):
        with T.Kernel(1) as _:
            A_local = T.alloc_fragment((M, N), dtype)
            B_local = T.alloc_fragment(out_shape, dtype)
            T.copy(A, A_local)
            if op == "sum":
                T.reduce_sum(A_local, B_local, dim=dim)
            elif op == "max":
                T.reduce_max(A_local, B_local, dim=dim)
            elif op == "min":
                T.reduce_min(A_local, B_local, dim=dim)
            elif op == "abssum":
                T.reduce_abssum(A_local, B_local, dim=dim)
            elif op == "absmax":
                T.reduce_absmax(A_local, B_local, dim=dim)
            T.copy(B_local, B)

    return main


REFERENCES = {
    "sum": lambda a, dim: a.sum(axis=dim),
    "max": lambda a, dim: a.max(axis=dim),
    "min": lambda a, dim: a.min(axis=dim),
    "abssum": lambda a, dim: np.abs(a).sum(axis=dim),
    "absmax": lambda a, dim: np.abs(a).max(axis=dim),
}


def main(M=64, N=64) -> None:
    a = np.random.default_rng(0).standard_normal((M, N)).astype(np.float32)
    # reduce_tile reads float32 through the FPU's 19-bit source registers: each value keeps 10
    # mantissa bits (truncated), so a sum is off by at most 2^-10 of the sum of magnitudes
    bound = {dim: 2.0**-10 * np.abs(a).sum(axis=dim).max() + 1e-6 for dim in (0, 1)}
    for op in OPS:
        for dim in (1, 0):
            kernel = tilelang.compile(reduce_test(M, N, op, dim), out_idx=-1)
            err = np.abs(kernel(a) - REFERENCES[op](a, dim)).max()
            print(f"reduce_{op:6s} dim={dim} of {M}x{N}: max |error| {err:.5f} (bound {bound[dim]:.5f})")
            assert err <= bound[dim]
    print("PASS")


if __name__ == "__main__":
    main()
