"""Work over nodes: even splits of work units and per-node matmul blocks.

Reads: grid sizes and tile counts. Writes: numbers and node ranges (inclusive ``(start, end)``
coordinate tuples, as TT-Lang programs take them).

``get_large_matmul_params`` follows TT-Metal's choice of per-core blocks for its 2-D multicast
matmul: a per-core block ``block_h x block_w`` of output tiles must split ``Mt x Nt`` over at most
``num_nodes_y x num_nodes_x`` nodes and, with double-buffered operand blocks of K width
``in0_block_w``, fit a budget of 400 tiles of circular buffers
(``2·K·block_h + 2·K·block_w + block_h·block_w <= 400``). A prime factor of ``Mt`` (``Nt``)
larger than the grid's height (width) cannot be spread over nodes, so every block holds it. Of the
rest, widths are tried from the smallest up, each with the tallest height the budget allows, and
the first that fits the grid wins, with the largest output sub-block (of up to 8 tiles) that
divides it. Every block returned keeps to the budget (where TT-Metal's search can return a width
whose tallest budgeted height is zero, this one tries the next width).
"""

from __future__ import annotations

import math
from collections import namedtuple

MatmulParams = namedtuple("MatmulParams", ["block_h", "block_w", "subblock_h", "subblock_w"])
NO_PARAMS = MatmulParams(0, 0, 0, 0)
CB_TILE_BUDGET = 400
# output sub-blocks (h, w) that fit DST (8 tiles), by preference: the most tiles, then the
# squarer, then the taller
SUBBLOCKS = sorted(((h, w) for h in range(1, 9) for w in range(1, 9) if h * w <= 8),
                   key=lambda hw: (-hw[0] * hw[1], abs(hw[0] - hw[1]), -hw[0]))


def _prime_factors(n: int) -> list[int]:
    factors, p = [], 2
    while p * p <= n:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    return factors + ([n] if n > 1 else [])


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _widest_other(block: int, k: int) -> int:
    """The largest other block side that fits the circular-buffer budget beside ``block``."""
    return max(0, (CB_TILE_BUDGET - 2 * k * block) // (2 * k + block))


def _subblock(h: int, w: int) -> tuple[int, int]:
    return next((sh, sw) for sh, sw in SUBBLOCKS if h % sh == 0 and w % sw == 0)


def get_large_matmul_params(Mt: int, Nt: int, num_nodes_y: int, num_nodes_x: int, in0_block_w: int) -> MatmulParams:
    """Per-node ``(block_h, block_w)`` output tiles and an output sub-block for a matmul of ``Mt x Nt``
    tiles on a grid of ``num_nodes_y x num_nodes_x`` nodes (see the module's docstring);
    ``MatmulParams(0, 0, 0, 0)`` when none fits."""
    m_fixed = math.prod(f for f in _prime_factors(Mt) if f > num_nodes_y)
    n_fixed = math.prod(f for f in _prime_factors(Nt) if f > num_nodes_x)
    if n_fixed > _widest_other(m_fixed, in0_block_w):
        return NO_PARAMS
    widths = [n_fixed * d for d in _divisors(Nt // n_fixed)]
    heights = [m_fixed * d for d in _divisors(Mt // m_fixed)]
    if m_fixed > 1:          # the height is fixed: the widest width the budget allows
        room = _widest_other(m_fixed, in0_block_w)
        widths = [max(w for w in widths if w <= room)]
        heights = [m_fixed]
    elif n_fixed > 1:        # the width is fixed: the tallest height the budget allows
        room = _widest_other(n_fixed, in0_block_w)
        heights = [max(h for h in heights if h <= room)]
        widths = [n_fixed]
    for w in widths:
        room = _widest_other(w, in0_block_w)
        fitting = [h for h in heights if h <= room]
        if not fitting:
            continue
        h = max(fitting)
        if Mt // h <= num_nodes_y and Nt // w <= num_nodes_x:
            return MatmulParams(h, w, *_subblock(h, w))
        if m_fixed > 1 or n_fixed > 1:
            break
    return NO_PARAMS


def split_work_to_nodes(grid_size, units_to_divide: int, row_wise: bool = True):
    """``units_to_divide`` over the nodes of a 1-D or 2-D grid, as ``ttnn.split_work_to_cores``:
    ``(nodes used, group 1 ranges, group 2 ranges, units per node of group 1, of group 2)``, each
    group a list of inclusive ``(start, end)`` node coordinate ranges; group 1 nodes take one unit
    more. Nodes are taken in TT-Lang's order: ``row_wise`` walks the last coordinate fastest."""
    from tilefold import ttnn

    grid = tuple(grid_size)
    one_d = len(grid) == 1
    rows, cols = (grid[0], 1) if one_d else grid
    # TT-Metal's row-wise order walks x fastest: x is the grid's last coordinate
    used, _, group1, group2, per1, per2 = ttnn.split_work_to_cores(
        ttnn.CoreCoord(cols, rows), units_to_divide, row_wise=row_wise)

    def ranges(group):
        out = [((r.start.y, r.start.x), (r.end.y, r.end.x)) for r in group.ranges()]
        return [((a[0],), (b[0],)) for a, b in out] if one_d else out

    return used, ranges(group1), ranges(group2), per1, per2


def split_work_to_cores(grid_size, units_to_divide: int, row_wise: bool = True):
    """TT-Lang's name before :func:`split_work_to_nodes`: the same split, each group as one
    ``(start, end)`` pair, its first node and its last (``()`` for an empty group)."""
    used, group1, group2, per1, per2 = split_work_to_nodes(grid_size, units_to_divide, row_wise)

    def bounds(ranges):
        return (ranges[0][0], ranges[-1][1]) if ranges else ()

    return used, bounds(group1), bounds(group2), per1, per2


def get_number_of_cores(grid_size) -> int:
    """TT-Lang's name before 1.0 for the number of nodes of a grid shape."""
    return math.prod(grid_size)


def get_number_of_nodes_from_ranges(ranges) -> int:
    """The nodes of a list of inclusive ``(start, end)`` coordinate ranges."""
    return sum(math.prod(e - s + 1 for s, e in zip(start, end)) for start, end in ranges)
