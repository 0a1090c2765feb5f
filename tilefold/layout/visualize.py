"""Pictures of a tensor layout: the tensor split over the core grid, padding highlighted.

Reads: a :class:`~tilefold.layout.metal_layout.MetalLayout` with a grid, or a
:class:`~tilefold.layout.metal_layout.LinearMetalLayout` (2-D grid).
Writes: a PNG (matplotlib, drawn on an Agg canvas so no display or global backend is touched).

Each core's shard is a block of the picture in its own colour; padding is drawn in a pale
red, blended by how much of each drawn cell is padding when the tensor is larger than the
picture's resolution. Cores are placed on a 2-D grid: all grid dims but the last become
rows, the last one columns; inside a block a shard's leading dims become rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tilefold.errors import LayoutError
from tilefold.layout.metal_layout import LinearMetalLayout, MetalLayout

PADDING_COLOUR = (0xf4 / 255, 0xa6 / 255, 0xa6 / 255)   # "#f4a6a6"
MAX_CELLS = 768  # drawn cells per axis; larger tensors are averaged into cells


@dataclass(frozen=True)
class LayoutPicture:
    """What gets drawn. ``rows``/``cols`` are the real-data masks along the picture's rows
    and columns when real data is separable (an element is real iff its row and its column
    are); otherwise ``mask`` is the full 2-D mask. ``block`` is one core's block (rows, cols)
    and ``grid`` the cores (rows, cols)."""

    title: str
    grid: tuple[int, int]
    block: tuple[int, int]
    rows: np.ndarray | None = None
    cols: np.ndarray | None = None
    mask: np.ndarray | None = None
    tile: tuple[int, int] | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return (self.grid[0] * self.block[0], self.grid[1] * self.block[1])


def _grid_first(mask: np.ndarray, grid: tuple[int, ...], shard: tuple[int, ...]) -> np.ndarray:
    """Reorder a flat mask over dims (g0 s0, g1 s1, ...) to (g0, g1, ..., s0, s1, ...)."""
    n = len(grid)
    arr = mask.reshape([v for pair in zip(grid, shard) for v in pair])
    return arr.transpose(list(range(0, 2 * n, 2)) + list(range(1, 2 * n, 2))).reshape(-1)


def metal_layout_picture(layout: MetalLayout, grid) -> LayoutPicture:
    """The picture of ``layout`` split over ``grid`` (grid dims as in :meth:`MetalLayout.shard_shape`)."""
    shard = layout.shard_shape(grid, tiled=False)
    grid = tuple(int(g) for g in grid)
    masks = layout.real_masks()
    if len(masks) < 2:
        raise LayoutError("the layout collapses to one physical dim; a picture needs two")
    lead_grid, lead_shard = grid[:-1], shard[:-1]
    rows = masks[0]
    for m in masks[1:-1]:
        rows = np.logical_and.outer(rows, m).reshape(-1)
    rows = _grid_first(rows, lead_grid, lead_shard)
    title = (
        f"{'x'.join(map(str, layout.logical_shape))} on grid {'x'.join(map(str, grid))}: "
        f"shard {'x'.join(map(str, shard))}, {layout.core_padding(grid).total} padding elements"
    )
    return LayoutPicture(
        title=title,
        grid=(math.prod(lead_grid), grid[-1]),
        block=(math.prod(lead_shard), shard[-1]),
        rows=rows,
        cols=masks[-1],
        tile=(layout.tile.height, layout.tile.width) if len(grid) == 2 else None,
    )


def linear_layout_picture(layout: LinearMetalLayout) -> LayoutPicture:
    """The picture of a tt-mlir tensor layout: each core's allocated shard (tile padded when
    tilized) with the data that lands on it."""
    mask = layout.real_mask_2d()
    padded = layout.padded_shard_shape
    title = (
        f"{'x'.join(map(str, layout.logical_shape))} on grid {'x'.join(map(str, layout.grid))}: "
        f"memref {'x'.join(map(str, layout.memref_shape))}, {int((~mask).sum())} padding elements"
    )
    tile = (layout.tile.height, layout.tile.width) if layout.tile is not None else None
    return LayoutPicture(title=title, grid=layout.grid, block=padded, mask=mask, tile=tile)


def _cell_fractions(picture: LayoutPicture, step: tuple[int, int]) -> np.ndarray:
    """Fraction of real data in each drawn cell of ``step`` elements."""
    rows, cols = picture.shape
    sr, sc = step

    def reduce_1d(mask: np.ndarray, s: int, n: int) -> np.ndarray:
        padded = np.zeros(-(-n // s) * s)
        padded[: mask.size] = mask
        return padded.reshape(-1, s).mean(axis=1)

    if picture.mask is None:
        return np.multiply.outer(reduce_1d(picture.rows, sr, rows), reduce_1d(picture.cols, sc, cols))
    m = np.zeros((-(-rows // sr) * sr, -(-cols // sc) * sc))
    m[:rows, :cols] = picture.mask
    return m.reshape(m.shape[0] // sr, sr, m.shape[1] // sc, sc).mean(axis=(1, 3))


def draw_layout(picture: LayoutPicture, path: str | Path) -> Path:
    """Draw ``picture`` to a PNG at ``path`` and return the path."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg   # matplotlib only when a picture is drawn
    from matplotlib.colors import to_rgb
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    rows, cols = picture.shape
    step = (max(1, -(-rows // MAX_CELLS)), max(1, -(-cols // MAX_CELLS)))
    frac = _cell_fractions(picture, step)
    n_r, n_c = frac.shape
    # Colour of the core owning each cell.
    cell_rows = np.minimum(np.arange(n_r) * step[0] // picture.block[0], picture.grid[0] - 1)
    cell_cols = np.minimum(np.arange(n_c) * step[1] // picture.block[1], picture.grid[1] - 1)
    core = np.add.outer(cell_rows * picture.grid[1], cell_cols)
    palette = np.array([to_rgb(f"C{i}") for i in range(10)])
    # Checkerboard the palette so neighbours differ even on wide grids.
    colour = palette[(core + cell_rows[:, None] * 3) % len(palette)]
    pad = np.array(PADDING_COLOUR)
    image = frac[..., None] * colour + (1 - frac[..., None]) * pad

    height = min(9.0, 2.5 + 6.5 * rows / max(rows, cols))
    width = min(12.0, max(6.0, 3.0 + 8.0 * cols / max(rows, cols)))
    fig = Figure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.imshow(image, extent=(0, n_c * step[1], n_r * step[0], 0), interpolation="nearest", aspect="auto")
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    if picture.tile is not None:
        th, tw = picture.tile
        if rows // th <= 64 and cols // tw <= 64:
            for y in range(th, rows, th):
                ax.axhline(y, color="white", linewidth=0.4, alpha=0.7)
            for x in range(tw, cols, tw):
                ax.axvline(x, color="white", linewidth=0.4, alpha=0.7)
    for y in range(picture.block[0], rows, picture.block[0]):
        ax.axhline(y, color="black", linewidth=1.2)
    for x in range(picture.block[1], cols, picture.block[1]):
        ax.axvline(x, color="black", linewidth=1.2)
    if picture.grid[0] * picture.grid[1] <= 256:
        for gy in range(picture.grid[0]):
            for gx in range(picture.grid[1]):
                ax.text(
                    (gx + 0.5) * picture.block[1], (gy + 0.5) * picture.block[0], f"({gy},{gx})",
                    ha="center", va="center", fontsize=7 if picture.grid[1] > 8 else 9, color="black",
                )
    ax.set_xlabel("physical column (elements)")
    ax.set_ylabel("physical row (elements)")
    ax.set_title(picture.title, fontsize=10)
    ax.legend(handles=[Patch(color=PADDING_COLOUR, label="padding")], loc="upper right", fontsize=8)
    fig.tight_layout()
    path = Path(path)
    try:
        fig.savefig(path)
    except OSError as err:
        raise LayoutError(f"--png {path}: cannot write the picture ({err.strerror}); choose a writable path") from None
    return path


__all__ = ["LayoutPicture", "metal_layout_picture", "linear_layout_picture", "draw_layout"]
