"""Top-k in TileLang: the k largest values of each row and their column numbers.

Each step takes the row maxima (``T.reduce_max``), marks the columns holding them with their
column number (``T.if_then_else`` of an equality), takes the largest marked column, writes value
and column, and masks the taken values out. The equality needs the float32 maximum to the last
bit: a float32 ``T.reduce_max`` whose result the kernel compares with ``==`` is exact on Tensix
(three FPU reductions, each of what the previous one left), where a plain one keeps the
FPU's 10 mantissa bits.

Run: ``.venv/bin/python examples/tilelang/topk.py``.
"""

import numpy as np

import tilefold as tilelang
import tilefold.language as T


@tilelang.jit
def row_topk(scores, k, rows_per_block):
    M, N = T.const("M, N")
    scores: T.Tensor([M, N], T.float32)
    values = T.empty([M, k], T.float32)
    columns = T.empty([M, k], T.int32)

    with T.Kernel(T.ceildiv(M, rows_per_block), threads=128) as bx:
        block = T.alloc_fragment([rows_per_block, N], T.float32)
        best = T.alloc_fragment([rows_per_block], T.float32)
        marked = T.alloc_fragment([rows_per_block, N], T.int32)
        best_column = T.alloc_fragment([rows_per_block], T.int32)
        T.copy(scores[bx * rows_per_block, 0], block)

        for step in T.serial(k):
            T.reduce_max(block, best, dim=1, clear=True)
            for r, c in T.Parallel(rows_per_block, N):
                marked[r, c] = T.if_then_else(block[r, c] == best[r], c, -1)
            T.reduce_max(marked, best_column, dim=1, clear=True)
            for r, c in T.Parallel(rows_per_block, N):
                block[r, c] = T.if_then_else(block[r, c] == best[r], -3.0e38, block[r, c])
            for r in T.Parallel(rows_per_block):
                values[bx * rows_per_block + r, step] = best[r]
                columns[bx * rows_per_block + r, step] = best_column[r]

    return values, columns


def reference(scores: np.ndarray, k: int):
    """The k largest of each row and their columns."""
    order = np.argsort(-scores, axis=1)[:, :k]
    return np.take_along_axis(scores, order, axis=1), order


def main(M=64, N=96, k=5) -> None:
    rng = np.random.default_rng(7)
    # distinct values that TF32 cannot tell apart: equal in their first 10 mantissa bits
    steps = rng.permuted(np.tile(np.arange(2**13), (M, 1)), axis=1)[:, :N]
    scores = (1.0 + steps * 2.0**-23).astype(np.float32)
    scores[::3] = rng.standard_normal((len(scores[::3]), N)).astype(np.float32)
    values, columns = row_topk(scores, k, rows_per_block=32)
    want_values, want_columns = reference(scores, k)
    assert np.array_equal(values, want_values), np.abs(values - want_values).max()
    assert np.array_equal(columns, want_columns)
    print(f"top-{k} of {M}x{N} float32: values and columns exact")


if __name__ == "__main__":
    main()
