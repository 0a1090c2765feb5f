"""The tile space of a ``T.Parallel`` body: which index runs down tile rows and which along them.

Reads: a ``tile.parallel`` op and its ``tile.load`` / ``tile.store`` accesses. Writes: nothing.

A body is computed a whole tile at a time, tile t of its *space*. For a 2-D body the space
is its store target's: ``B[i, j] = ...`` makes ``i`` the row index and ``j`` the column
index (``B[j, i] = X[i, j]`` makes ``j`` the row index, so ``X`` is read transposed). For a 1-D
body over a vector the space is the vector's layout: values down a tile column (``col``, as a
row reduction leaves them) or along a tile row (``row``, as a 1-D tensor holds them); a 1-D
body over a 2-D buffer with a constant index (``A[0, i]``) runs along that buffer's row.

:func:`access_pattern` describes one access: per buffer dim, the parallel index it is
(``("arg", k)``) or a constant (``("const", c)``); anything else is ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilefold.ir import tile
from tilefold.passes.tilelang.affine import affine_of
from tilefold.passes.tilelang.common import compile_error


def access_pattern(access, par: tile.ParallelOp) -> list[tuple[str, int]] | None:
    args = list(par.body.block.args)
    out = []
    for v in access.indices:
        form = affine_of(v)
        if form.is_constant:
            out.append(("const", form.const))
        elif form.const == 0 and len(form.terms) == 1 and next(iter(form.terms.values())) == 1 \
                and next(iter(form.terms)) in args:
            out.append(("arg", args.index(next(iter(form.terms)))))
        else:
            return None
    return out


@dataclass(frozen=True)
class Space:
    """``row_arg`` / ``col_arg``: the parallel index running down / along tile rows (None for a
    1-D space's other axis); ``layout``: ``tile`` (2-D), ``row`` or ``col`` (1-D)."""

    row_arg: int | None
    col_arg: int | None
    layout: str


def parallel_space(par: tile.ParallelOp, vector_layouts: dict[str, str], name_of) -> Space:
    """The space of a body (see the module docstring)."""
    stores = [o for o in par.body.block.ops if isinstance(o, tile.StoreOp)]
    accesses = stores + [o for o in par.body.block.ops if isinstance(o, tile.LoadOp)]
    if len(par.shape) == 2:
        for st in stores:
            pattern = access_pattern(st, par)
            if pattern is not None and len(pattern) == 2 and pattern[0][0] == pattern[1][0] == "arg" \
                    and pattern[0][1] != pattern[1][1]:
                return Space(pattern[0][1], pattern[1][1], "tile")
        for st in stores:
            if len(st.buffer.type.get_shape()) == 1:
                raise compile_error(st, f"this 2-D T.Parallel stores into the vector {name_of(st.buffer)} with one "
                                        "index; store vectors in a 1-D T.Parallel, or reduce with T.reduce_*")
        return Space(0, 1, "tile")
    for acc in accesses:
        if len(acc.buffer.type.get_shape()) == 2:
            pattern = access_pattern(acc, par)
            if pattern and pattern[0] == ("arg", 0) and pattern[1][0] == "const":
                return Space(0, None, "col")
            if pattern and pattern[1] == ("arg", 0) and pattern[0][0] == "const":
                return Space(None, 0, "row")
    for acc in accesses:
        layout = vector_layouts.get(name_of(acc.buffer))
        if layout is not None and len(acc.buffer.type.get_shape()) == 1:
            return Space(0, None, "col") if layout == "col" else Space(None, 0, "row")
    return Space(None, 0, "row")


__all__ = ["access_pattern", "Space", "parallel_space"]
