"""Block rasterization orders: the order in which a kernel's grid of output blocks is walked.

Reads: nothing. Writes: nothing. :func:`block_order` gives, for a grid of ``rows × cols`` blocks
and an order name, the ``(m, n)`` block of every visit position, a permutation of all blocks:

* ``row_major``: rows outer (``m = t / cols``, ``n = t % cols``);
* ``column_major``: columns outer;
* ``block_linear(k)``: panels of ``k`` block rows; inside a panel, column by column, the panel's
  rows of one column consecutive (TileLang's ``T.use_swizzle(panel_size=k)``); the last panel
  holds the rows that are left;
* ``z_order``: the Morton curve: bits of ``t`` alternate between n and m, lowest first; grids
  whose sides are powers of two (a longer side takes the remaining high bits);
* ``hilbert``: the Hilbert curve over a square grid whose side is a power of two.

The same mappings are built as integer arithmetic on the visit position in kernels
(``tilefold.passes.tilelang.rasterization_tt``); these functions are their reference.
"""

from __future__ import annotations

ORDERS = ("row_major", "column_major", "block_linear", "z_order", "hilbert")


def parse_order(spec) -> tuple[str, int]:
    """``"block_linear(4)"`` → ``("block_linear", 4)``; other names → ``(name, 0)``."""
    text = str(spec).strip().replace(" ", "")
    if text.startswith("block_linear"):
        arg = text[len("block_linear"):]
        if not (arg.startswith("(") and arg.endswith(")") and arg[1:-1].isdigit() and int(arg[1:-1]) > 0):
            raise ValueError(f"block_linear needs a positive panel height, e.g. block_linear(4), not {spec!r}")
        return "block_linear", int(arg[1:-1])
    if text not in ORDERS:
        raise ValueError(f"unknown rasterization order {spec!r}; use one of row_major, column_major, "
                         "block_linear(k), z_order, hilbert")
    return text, 0


def _log2(v: int) -> int | None:
    return v.bit_length() - 1 if v > 0 and v & (v - 1) == 0 else None


def check_order(order: str, rows: int, cols: int) -> str | None:
    """Why ``order`` cannot walk a ``rows × cols`` grid, or None."""
    if order == "z_order" and (_log2(rows) is None or _log2(cols) is None):
        return f"z_order needs a grid whose sides are powers of two, not {rows}x{cols} blocks"
    if order == "hilbert" and (rows != cols or _log2(rows) is None):
        return f"hilbert needs a square grid whose side is a power of two, not {rows}x{cols} blocks"
    return None


def morton(t: int, rows: int, cols: int) -> tuple[int, int]:
    bm, bn = _log2(rows), _log2(cols)
    m = n = 0
    shared = min(bm, bn)
    for b in range(shared):
        n |= ((t >> (2 * b)) & 1) << b
        m |= ((t >> (2 * b + 1)) & 1) << b
    rest = t >> (2 * shared)
    if bm > bn:
        m |= rest << shared
    else:
        n |= rest << shared
    return m, n


def hilbert(t: int, side: int) -> tuple[int, int]:
    """The classic d→(x, y) walk of the Hilbert curve; x is the column, y the row."""
    x = y = 0
    s = 1
    while s < side:
        rx = 1 & (t // 2)
        ry = 1 & (t ^ rx)
        if ry == 0:
            if rx == 1:
                x, y = s - 1 - x, s - 1 - y
            x, y = y, x
        x += s * rx
        y += s * ry
        t //= 4
        s *= 2
    return y, x


def block_at(t: int, rows: int, cols: int, order: str, k: int = 0) -> tuple[int, int]:
    """The ``(m, n)`` block visited at position ``t``."""
    if order == "row_major":
        return t // cols, t % cols
    if order == "column_major":
        return t % rows, t // rows
    if order == "block_linear":
        panel = t // (k * cols)
        height = min(k, rows - panel * k)
        r = t - panel * k * cols
        return panel * k + r % height, r // height
    if order == "z_order":
        return morton(t, rows, cols)
    if order == "hilbert":
        return hilbert(t, rows)
    raise ValueError(f"unknown rasterization order {order!r}")


def block_order(rows: int, cols: int, spec="row_major") -> list[tuple[int, int]]:
    """Every block of the grid in visit order."""
    order, k = parse_order(spec)
    problem = check_order(order, rows, cols)
    if problem:
        raise ValueError(problem)
    return [block_at(t, rows, cols, order, k) for t in range(rows * cols)]


__all__ = ["ORDERS", "parse_order", "check_order", "block_at", "block_order", "morton", "hilbert"]
