"""Matmul in DST: operand matrices unpacked from CB pages, and output blocks accumulating K steps.

Reads: waited pages of a compute thread's input circular buffers (through its ``_tile_bytes``).
Writes: the DST tiles of an output block (face order), when a run of K steps is multiplied —
at the latest when anything else uses those slots or at ``tile_regs_commit``.

:class:`CbMatrix` — the first ``pages`` waited pages of a CB unpacked once, as the multiplier
sees them (source-register precision, math fidelity, optional per-tile transpose), laid out
row-major with ``width`` tiles per tile row, or as one row of all pages (``width`` None). An
operand of any ``matmul_block`` call is then a strided view of it, without copying. A matrix
stays valid until the CB is next popped: pushes never overwrite pages that are waited for.
Lanes whose pages hold the same bytes (the cores of a grid row all read the same in0 block)
share one unpacked matrix (:func:`distinct_lanes`), and :class:`LaneProducts` multiplies such
shared operands as one matrix product over all pairs of distinct in0 and in1 matrices.

:class:`PendingMatmul` — an ``rt × ct`` output block and the current *run* of its K steps:
calls whose in0 tiles move one tile right per step and whose in1 tiles move a fixed ``step``
tiles on, which is how every K loop walks its blocks. A run is multiplied when it ends (a call
that does not continue it, or DST being read): with a 32-bit DST as one float32 product over
the whole run — the same precision as step by step, only the order of float32 additions
differs; with a 16-bit DST as one batched product of all steps, each step added to DST in
turn (storing rounds the running sum to bfloat16, as each step does on the device).

:class:`OneTileMatmul` — a one-tile block of bfloat16 tiles on one lane that no later call can
extend into a run: the same product, without operand matrices (a stream of one-tile blocks).
"""

from __future__ import annotations

import numpy as np

from tilefold.layout.formats import DataFormat
from tilefold.sim import scratch, tile_math as tm
from tilefold.sim.two_threads import in_halves, is_large, matmul_in_halves

MATMUL_TILE_FLOPS = 2 * 32 ** 3          # the flops of one 32×32×32 tile product (a multiply-add is two)
_FACE_ROWS_MIN = 4 * 1024                # blocks of more values than this move into DST by face rows


class CbMatrix:
    """Unpacked pages ``[0, pages)`` after a CB's read pointer, ``width`` tiles per tile row:
    ``values`` is (distinct, rows*32, width*32) float32, or (distinct, 32, pages*32) if ``width``
    is None; ``lanes`` maps each lane to its row of ``values`` (None: one row per lane)."""

    __slots__ = ("pages", "width", "values", "pops", "lanes", "companion", "_stacked")

    def __init__(self, pages: int, width: int | None, values: np.ndarray, pops: int,
                 lanes: np.ndarray | None = None, companion: "CbMatrix | None" = None):
        self.pages, self.width, self.values, self.pops, self.lanes = pages, width, values, pops, lanes
        # the same pages as a second fidelity phase multiplies them (HiFi3), else None
        self.companion = companion
        self._stacked: dict[tuple, np.ndarray] = {}

    def stacked_rows(self, row: int, rows: int) -> np.ndarray:
        """Tile rows ``[row, row + rows)`` of every distinct matrix side by side, (rows*32,
        distinct*cols): the right operand of one product with all of them (kept while this is)."""
        return self.stacked(row * self.width if self.width else 0, rows, self.values.shape[2] // 32, "right")

    def stacked(self, tile: int, rows: int, cols: int, side: str) -> np.ndarray:
        """The rows×cols-tile block at page ``tile`` of every distinct matrix as one operand of
        a product with all of them (kept while this matrix is): ``"left"`` stacks them
        vertically, (distinct*rows*32, cols*32); ``"right"`` side by side, (rows*32, distinct*cols*32)."""
        key = (tile, rows, cols, side)
        hit = self._stacked.get(key)
        if hit is None:
            part = self.distinct_block(tile, rows, cols)
            distinct, r, c = part.shape
            if side == "left":
                hit = scratch.take((distinct * r, c))
                hit.reshape(distinct, r, c)[...] = part
            else:
                hit = scratch.take((r, distinct * c))
                hit.reshape(r, distinct, c)[...] = part.transpose(1, 0, 2)
            self._stacked[key] = hit
        return hit

    def release(self) -> None:
        """Give the unpacked arrays back to the scratch pool (this matrix must not be used again)."""
        scratch.give(self.values)
        for array in self._stacked.values():
            scratch.give(array)
        self._stacked.clear()
        if self.companion is not None:
            self.companion.release()

    def place(self, tile: int) -> tuple[int, int]:
        """(tile row, tile column) of page ``tile``."""
        return divmod(tile, self.width) if self.width else (0, tile)

    def distinct_block(self, tile: int, rows: int, cols: int) -> np.ndarray:
        """The (distinct, rows*32, cols*32) view starting at page ``tile``."""
        r, c = self.place(tile)
        return self.values[:, r * 32:(r + rows) * 32, c * 32:(c + cols) * 32]

    def block(self, tile: int, rows: int, cols: int) -> np.ndarray:
        """The (lanes, rows*32, cols*32) block starting at page ``tile`` (a view unless lanes share)."""
        values = self.distinct_block(tile, rows, cols)
        return values if self.lanes is None else values[self.lanes]


def distinct_lanes(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Lanes of ``raw`` (lanes, ...) holding identical bytes: (the first lane of each distinct
    content, the index of each lane's content), or None when sharing would save little (most
    lanes differ). Candidates are grouped by a sample of their words, then compared in full."""
    lanes = raw.shape[0]
    flat = raw.reshape(lanes, -1)
    if lanes < 4 or flat.shape[1] % 8 or flat.strides[1] != 1:
        return None
    words = flat.view(np.uint64)
    sample = np.ascontiguousarray(words[:, ::max(1, words.shape[1] // 128)])
    by_sample: dict[bytes, list[int]] = {}          # sample -> groups with that sample
    reps: list[int] = []
    group = np.empty(lanes, np.intp)
    for lane in range(lanes):
        candidates = by_sample.setdefault(sample[lane].tobytes(), [])
        g = next((g for g in candidates if np.array_equal(words[lane], words[reps[g]])), None)
        if g is None:                                # new content
            g = len(reps)
            candidates.append(g)
            reps.append(lane)
        group[lane] = g
        if 2 * len(reps) > lanes:
            return None
    return np.asarray(reps), group


def lanes_of_content(content: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`distinct_lanes`'s answer from known content numbers per lane (equal numbers:
    identical bytes): (the first lane of each content, each lane's content in that order)."""
    _, reps, group = np.unique(content, return_index=True, return_inverse=True)
    if len(content) < 4 or 2 * len(reps) > len(content):
        return None
    order = np.argsort(reps, kind="stable")             # contents numbered by first lane
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return reps[order], rank[group.reshape(-1)]


_SMALL = 8 * 1024          # operands of at most this many values are multiplied without the scratch pool


def exact_matmul(lhs: np.ndarray, rhs: np.ndarray, out: np.ndarray | None = None,
                 fast: bool = False) -> np.ndarray:
    """``lhs @ rhs`` as float32 (into ``out`` if given), summed in float64. Source-register
    values have at most 11 significant bits, so each product is exact and so is their float64
    sum unless the products span more than 2^31: the one rounding to float32 then does not depend
    on the order BLAS sums in, which changes with the operands' shapes (lanes stacked or not).
    ``fast`` (fast numerics, :mod:`tilefold.sim.numerics_mode`): summed in float32 by BLAS."""
    if fast:
        shape = _product_shape(lhs, rhs)
        if is_large(lhs, shape):
            return matmul_in_halves(lhs, rhs, np.empty(shape, np.float32) if out is None else out)
        return np.matmul(lhs, rhs) if out is None else np.matmul(lhs, rhs, out=out)
    if lhs.size <= _SMALL and rhs.size <= _SMALL:
        # small operands (a few tiles): fresh float64 copies cost less than the pool's bookkeeping
        product = np.matmul(lhs.astype(np.float64), rhs.astype(np.float64))
        if out is None:
            return product.astype(np.float32)
        np.copyto(out, product, casting="same_kind")
        return out
    # float64 copies of the operands and the product come from the scratch pool: freshly
    # allocated, their pages would fault in on first touch, costing as much as the product
    left, right = _float64(lhs), _float64(rhs)
    shape = _product_shape(lhs, rhs)
    product = scratch.take(shape, np.float64)
    if out is None:
        out = scratch.take(shape)
    if is_large(left, shape):
        matmul_in_halves(left, right, product, rounded=out)
    else:
        np.matmul(left, right, out=product)
        np.copyto(out, product, casting="same_kind")
    scratch.give(left)
    scratch.give(right)
    scratch.give(product)
    return out


def _product_shape(lhs: np.ndarray, rhs: np.ndarray) -> tuple[int, ...]:
    """The shape of ``lhs @ rhs`` (leading axes broadcast)."""
    lead = lhs.shape[:-2]
    if lead != rhs.shape[:-2]:
        lead = np.broadcast_shapes(lead, rhs.shape[:-2])
    return lead + (lhs.shape[-2], rhs.shape[-1])


def _float64(values: np.ndarray) -> np.ndarray:
    copy = scratch.take(values.shape, np.float64)
    np.copyto(copy, values)
    return copy


class LaneProducts:
    """Per-lane matrix products ``lhs[lhs_lanes[i]] @ rhs[rhs_lanes[i]]`` (a None map: one
    operand per lane). When the lanes use most pairs of distinct operands (a grid of cores
    sharing rows and columns), every pair is computed in one matrix product of the stacked
    operands and a lane's block is gathered from it (or, when the lanes are those pairs in
    row-major order, viewed in it: blocks are then (distinct lhs, distinct rhs, rows, cols));
    otherwise one batched product. ``stacked_lhs()`` / ``stacked_rhs()``, if given, return the
    distinct left operands one above the other / right operands side by side (cached)."""

    __slots__ = ("values", "pairs", "ga", "gb", "in_grid", "_array")

    def __init__(self, lhs: np.ndarray, lhs_lanes: np.ndarray | None, rhs: np.ndarray,
                 rhs_lanes: np.ndarray | None, stacked_lhs=None, stacked_rhs=None, fast: bool = False):
        self.values = self.pairs = None
        self.in_grid = False
        if lhs_lanes is None and rhs_lanes is None:
            self.values = self._array = exact_matmul(lhs, rhs, scratch.take(lhs.shape[:2] + rhs.shape[2:]), fast=fast)
            return
        lanes = len(lhs_lanes if lhs_lanes is not None else rhs_lanes)
        ga = np.arange(lanes) if lhs_lanes is None else lhs_lanes
        gb = np.arange(lanes) if rhs_lanes is None else rhs_lanes
        (ua, rows, k), (ub, _, cols) = lhs.shape, rhs.shape
        if ua * ub > 2 * lanes:
            self.values = self._array = exact_matmul(lhs[ga], rhs[gb], scratch.take((lanes, rows, cols)), fast=fast)
            return
        in_grid = ua * ub == lanes and np.array_equal(ga * ub + gb, np.arange(lanes))
        if k <= min(rows, cols) and in_grid:
            # lanes are the pairs in order (row-major over a grid) and K is short (gathering
            # lanes from one product would cost as much as multiplying): each lane's in place
            self._array = exact_matmul(lhs[:, None], rhs[None], scratch.take((ua, ub, rows, cols)), fast=fast)
            self.values = self._array.reshape(lanes, rows, cols)
            return
        left = stacked_lhs() if stacked_lhs is not None else lhs.reshape(ua * rows, k)
        right = stacked_rhs() if stacked_rhs is not None else rhs.transpose(1, 0, 2).reshape(k, ub * cols)
        self._array = exact_matmul(left, right, scratch.take((ua * rows, ub * cols)), fast=fast)
        self.pairs, self.ga, self.gb = self._array.reshape(ua, rows, ub, cols), ga, gb
        self.in_grid = in_grid

    def block(self, rows: slice = slice(None), cols: slice = slice(None)) -> np.ndarray:
        """(lanes, rows, cols) of every lane's product — a view, or a fresh gathered array — or a
        (distinct lhs, distinct rhs, rows, cols) view when the lanes are the pairs in order."""
        if self.values is not None:
            return self.values[:, rows, cols]
        if self.in_grid:
            return self.pairs.transpose(0, 2, 1, 3)[:, :, rows, cols]
        return self.pairs[self.ga, rows, self.gb, cols]

    def release(self) -> None:
        """Give the products' array back to the scratch pool (no block of it may be used after)."""
        scratch.give(self._array)


def operand_matrix(raw: np.ndarray, fmt, register: str, part: str, transpose: bool,
                   width: int | None, exact: bool = False) -> np.ndarray:
    """Tile bytes (lanes, n, tile size) → the (lanes, n/width*32, width*32) float32 matrix of
    those tiles, ``width`` per tile row (None: all side by side), as the multiplier sees them:
    source-register precision, each tile transposed if ``transpose``, the ``part`` of source
    register ``register`` one fidelity phase multiplies (:func:`tile_math.multiplier_slice`);
    ``exact`` (fast numerics) keeps float32 values whole instead of TF32. One copy from bytes to
    the final layout (bfloat16 widens by a shift)."""
    lanes, n = raw.shape[:2]
    w = n if width is None else width
    n -= n % w
    # a tile's face order is (face row, face col, row, col); rows of the matrix are (face row,
    # row) of each tile, columns (face col, col) — swapped for transposed tiles
    order = (0, 1, 4, 6, 2, 3, 5) if transpose else (0, 1, 3, 5, 2, 4, 6)
    shape = (lanes, n // w, w, 2, 2, 16, 16)
    matrix = scratch.take((lanes, n // w * 32, w * 32))
    out = matrix.reshape(lanes, n // w, 2, 16, w, 2, 16)
    words = out.view(np.uint32)
    if fmt is DataFormat.Float16_b:
        np.copyto(words, raw[:, :n].view(np.uint16).reshape(shape).transpose(order))
        words <<= 16
    else:
        values = tm.unpack(raw[:, :n], fmt)
        if not exact:                                  # fast numerics keep float32 operands whole
            values = tm.source_register(values, fmt)
        np.copyto(out, values.reshape(shape).transpose(order))
    tm.slice_in_place(matrix, register, part)
    return matrix


class _Run:
    """K steps of one output block whose operands are consecutive in their CB matrices.
    ``in1_matrix(width, pages)`` gives the in1 CB as a :class:`CbMatrix` of ``width`` tiles per
    row (None: one row), or None if it cannot cover ``pages``."""

    __slots__ = ("a", "a_tile", "b_tile", "b_key", "in1_matrix", "b", "step", "count")

    def __init__(self, a: CbMatrix, a_tile: int, b_tile: int, b_key, in1_matrix):
        self.a, self.a_tile = a, a_tile
        self.b_tile, self.b_key, self.in1_matrix = b_tile, b_key, in1_matrix
        self.b: CbMatrix | None = None      # in1 matrix with `step` tiles per row, once count > 1
        self.step = 0
        self.count = 1


class BlockProducts:
    """Float32 products of whole operand matrices over one K range, shared by the output blocks
    of a compute thread. A blocked matmul walks every rt×ct sub-block of one in0 block × in1
    block pair over the same K steps; once a second sub-block asks for the same operands and K
    range (or at once, when the whole product is only a few sub-blocks), the whole product is
    computed in one call and every sub-block is a slice of it. A whole product larger than
    :data:`WHOLE_BYTES` is not kept: each sub-block is multiplied on its own, so that its product
    is still in the cache when it is added to DST."""

    MAX_ENTRIES = 4
    # whole products at most this many times a sub-block are computed at the first request
    EAGER_RATIO = 4
    WHOLE_BYTES = 2 << 20

    def __init__(self, fast: bool = False):
        self._entries: dict[tuple, list] = {}
        self.fast = fast              # fast numerics: products summed in float32 by BLAS

    def product(self, a: CbMatrix, a_tile: int, rt: int, b: CbMatrix, b_tile: int, ct: int,
                n: int) -> tuple[np.ndarray, LaneProducts | None]:
        """The (lanes, rt*32, ct*32) product block (or its grid form, see :meth:`LaneProducts.block`)
        and the products to release once it has been used (None: kept here)."""
        (ar, ac), (bq, bc) = a.place(a_tile), b.place(b_tile)
        segment = self._segment(a, ac, rt, b, bq, bc, ct, n)
        if segment is not None:
            return segment, None
        pairs = len(a.values) * len(b.values) if a.lanes is not None or b.lanes is not None else len(a.values)
        entry = self._whole((id(a), id(b), ac, bq, n), a, b, rt, ct, pairs)
        if entry is None:
            own = LaneProducts(a.distinct_block(a_tile, rt, n), a.lanes, b.distinct_block(b_tile, n, ct), b.lanes,
                               lambda: a.stacked(a_tile, rt, n, "left"), lambda: b.stacked(b_tile, n, ct, "right"),
                               fast=self.fast)
            return own.block(), own
        if entry[2] is None:
            lhs, rhs = a.values[:, :, ac * 32:(ac + n) * 32], b.values[:, bq * 32:(bq + n) * 32, :]
            entry[2] = LaneProducts(lhs, a.lanes, rhs, b.lanes, stacked_rhs=lambda: b.stacked_rows(bq, n),
                                    fast=self.fast)
        return entry[2].block(slice(ar * 32, (ar + rt) * 32), slice(bc * 32, (bc + ct) * 32)), None

    def _segment(self, a: CbMatrix, ac: int, rt: int, b: CbMatrix, bq: int, bc: int, ct: int,
                 n: int) -> np.ndarray | None:
        """The product block of a one-row run over in0 tiles ``ac .. ac+n`` of an in0 matrix that
        is one row of tiles (``matmul_block`` calls of one row each, as a sub-blocked compute makes
        them), from the product of all of that row's ``n``-tile segments stacked as rows with the
        same in1 rows — one multiplication serving each segment's run, every element the same exact
        sum; None when that does not apply (lanes, several rows, a whole too large to keep)."""
        if a.width is not None or rt != 1 or a.lanes is not None or b.lanes is not None or ac % n:
            return None
        lanes, rows, width = a.values.shape
        segments, cols = width // (n * 32), b.values.shape[2]
        if rows != 32 or width % (n * 32) or segments < 2 or segments * cols > self.EAGER_RATIO * ct * 32 \
                or lanes * segments * 32 * cols * 4 > self.WHOLE_BYTES:
            return None
        key = ("segments", id(a), id(b), bq, n)
        entry = self._entries.get(key)
        if entry is None or entry[0] is not a or entry[1] is not b:
            lhs = a.values.reshape(lanes, 32, segments, n * 32).transpose(0, 2, 1, 3).reshape(lanes, segments * 32,
                                                                                            n * 32)
            rhs = b.values[:, bq * 32:(bq + n) * 32, :]
            entry = self._remember(key, [a, b, LaneProducts(lhs, None, rhs, None, fast=self.fast)])
        row = ac // n
        return entry[2].block(slice(row * 32, (row + 1) * 32), slice(bc * 32, (bc + ct) * 32))

    def steps(self, a: CbMatrix, a_tile: int, rt: int, b: CbMatrix, b_tile: int, ct: int,
              n: int) -> tuple[np.ndarray, bool]:
        """The product of each of ``n`` K steps on its own, (n, lanes, rt*32, ct*32), as
        :func:`_step_products` gives it, and whether the caller owns the array (False: a slice of
        the steps of the whole in0 × in1 block pair, kept here). The whole is computed under the
        same rule as :meth:`product`, for one fidelity phase and lanes that share no operand;
        each element is the same exact float64 sum either way."""
        if a.lanes is not None or b.lanes is not None or a.companion is not None:
            return _step_products(a, a_tile, rt, b, b_tile, ct, n), True
        (ar, ac), (bq, bc) = a.place(a_tile), b.place(b_tile)
        entry = self._whole(("steps", id(a), id(b), ac, bq, n), a, b, rt, ct, n * len(a.values))
        if entry is None:
            return _step_products(a, a_tile, rt, b, b_tile, ct, n), True
        if entry[2] is None:
            lanes, rows, cols = len(a.values), a.values.shape[1], b.values.shape[2]
            left = a.values[:, :, ac * 32:(ac + n) * 32].reshape(lanes, rows, n, 32).transpose(2, 0, 1, 3)
            right = b.values[:, bq * 32:(bq + n) * 32, :].reshape(lanes, n, 32, cols).transpose(1, 0, 2, 3)
            entry[2] = _KeptArray(exact_matmul(left, right))
        return entry[2].values[:, :, ar * 32:(ar + rt) * 32, bc * 32:(bc + ct) * 32], False

    def _whole(self, key: tuple, a: CbMatrix, b: CbMatrix, rt: int, ct: int, copies: int) -> list | None:
        """The entry ``[a, b, whole or None]`` whose whole product (``copies`` arrays of all of
        ``a``'s rows × all of ``b``'s columns) serves this rt×ct block, or None when the block is
        multiplied on its own: the whole is too large to keep, or several times the block and not
        asked for before (it is remembered, and computed at the second request)."""
        entry = self._entries.get(key)
        if entry is not None and entry[0] is a and entry[1] is b:
            return entry
        whole = a.values.shape[1] * b.values.shape[2]
        keep = copies * whole * 4 <= self.WHOLE_BYTES
        if whole > self.EAGER_RATIO * rt * ct * 1024 or not keep:
            if keep:
                self._remember(key, [a, b, None])
            return None
        return self._remember(key, [a, b, None])

    def _remember(self, key: tuple, entry: list) -> list:
        if len(self._entries) >= self.MAX_ENTRIES:
            self.release()
        self._entries[key] = entry
        return entry

    def release(self) -> None:
        """Forget every product (their arrays go back to the scratch pool)."""
        for _, _, product in self._entries.values():
            if product is not None:
                product.release()
        self._entries.clear()


class _KeptArray:
    """A scratch array kept by :class:`BlockProducts` (released like a :class:`LaneProducts`)."""

    __slots__ = ("values",)

    def __init__(self, values: np.ndarray):
        self.values = values

    def release(self) -> None:
        scratch.give(self.values)


class PendingMatmul:
    """An rt×ct output block accumulating in DST. ``slots`` are its DST tiles in face order,
    (lanes, rt, ct, 2, 2, 16, 16): a view of DST (or a copy the compute thread writes back);
    ``started`` whether they already hold a value to add to (else the first product is stored).
    Storing into a 16-bit DST rounds to bfloat16, as each accumulation step does on the device.

    A run's in1 matrix is fetched once its step is known, or when a one-step run is settled; so
    the compute thread settles its runs before it pops a CB."""

    def __init__(self, rt: int, ct: int, slots: np.ndarray, started: bool, fp32_dest: bool,
                 products: BlockProducts):
        self.rt, self.ct, self.tiles = rt, ct, rt * ct
        self.slots, self.started = slots, started
        self.fp32_dest = fp32_dest
        self.products = products
        self.run: _Run | None = None

    def accumulate(self, a: CbMatrix, a_tile: int, b_tile: int, b_key, in1_matrix) -> None:
        """Add the product of the in0 block at ``a_tile`` of ``a`` and the in1 block at
        ``b_tile`` of the CB named by ``b_key``."""
        run = self.run
        if run is not None and run.a is a and run.b_key == b_key and a_tile == run.a_tile + run.count:
            in_row = a.width is None or run.a_tile % a.width + run.count < a.width
            if in_row and self._continue(run, b_tile):
                run.count += 1
                return
        self.settle()
        self.run = _Run(a, a_tile, b_tile, b_key, in1_matrix)

    def _continue(self, run: _Run, b_tile: int) -> bool:
        ct = self.ct
        if run.count == 1:
            step = b_tile - run.b_tile
            if step < ct or run.b_tile % step + ct > step:
                return False
            run.b = run.in1_matrix(step, b_tile + ct)
            run.step = step
            return run.b is not None
        return b_tile == run.b_tile + run.count * run.step and run.in1_matrix(run.step, b_tile + ct) is run.b

    def settle(self) -> None:
        """Multiply the current run into the running sum: the product of each fidelity phase's
        operand matrices (one pair, or two with HiFi3: the matrices' companions), summed."""
        run, self.run = self.run, None
        if run is None:
            return
        rt, ct, n = self.rt, self.ct, run.count
        if n == 1:
            b = run.in1_matrix(None, run.b_tile + ct)
            a = run.a
            if a.companion is None and a.lanes is None and b.lanes is None:     # one phase, a lane each
                self._add(exact_matmul(a.distinct_block(run.a_tile, rt, 1), b.distinct_block(run.b_tile, 1, ct),
                                       fast=self.products.fast))
                return
            total, owned = None, []
            while a is not None:
                product = LaneProducts(a.distinct_block(run.a_tile, rt, 1), a.lanes,
                                       b.distinct_block(run.b_tile, 1, ct), b.lanes, fast=self.products.fast)
                total = product.block() if total is None else total + product.block()
                owned.append(product)
                a, b = a.companion, b.companion
            self._add(total)                                      # copied into DST
            for product in owned:
                product.release()
            return
        if self.fp32_dest:
            a, b, total, owned = run.a, run.b, None, []
            while a is not None:
                block, own = self.products.product(a, run.a_tile, rt, b, run.b_tile, ct, n)
                total = block if total is None else total + block
                owned.append(own)
                a, b = a.companion, b.companion
            self._add(total)
            for own in owned:
                if own is not None:
                    own.release()
            return
        steps, owned = self.products.steps(run.a, run.a_tile, rt, run.b, run.b_tile, ct, n)
        a, b = run.a.companion, run.b.companion
        while a is not None:                                      # a second fidelity phase
            part = _step_products(a, run.a_tile, rt, b, run.b_tile, ct, n)
            steps += part
            scratch.give(part)
            a, b = a.companion, b.companion
        self._add_steps(steps)
        if owned:
            scratch.give(steps)

    def _add_steps(self, steps: np.ndarray) -> None:
        """Add the K steps' products ``steps[k]`` one after another into the block's DST tiles (each
        add rounds to DST's format). Past two steps the running sum is kept row-major: the tiles
        are put in row order once and back in face order once, instead of each step's product
        being put in face order (element-wise adds round the same in either order)."""
        slots = self.slots
        if len(steps) <= 2 or slots.size <= _FACE_ROWS_MIN or steps.strides[-1] != steps.itemsize:
            for product in steps:
                self._add(product)
            return
        total = scratch.take(steps.shape[1:], slots.dtype)
        if self.started:
            rows, order, kept = self._face_views(total)
            _copy_face_rows(rows, kept, tuple(np.argsort(order)))
            total += steps[0]
        else:
            total[...] = steps[0]
        for product in steps[1:]:
            total += product
        self.started = False                # a store of the finished sum, already in DST's format
        self._add(total)
        scratch.give(total)

    def _face_views(self, block: np.ndarray) -> tuple[np.ndarray, tuple, np.ndarray]:
        """A row-major block (lead..., rt*32, ct*32) as face rows (lead..., rt, 2, 16, ct, 2, 16), the
        axis order that puts them in DST's face order, and the block's DST tiles with the same lead."""
        lead = block.shape[:-2]
        n = len(lead)
        rows = block.reshape(lead + (self.rt, 2, 16, self.ct, 2, 16))
        slots = self.slots if n == 1 else self.slots.reshape(lead + self.slots.shape[1:], copy=False)
        return rows, (*range(n), n, n + 3, n + 1, n + 4, n + 2, n + 5), slots

    def _add(self, product: np.ndarray) -> None:
        """Add a row-major (lanes, rt*32, ct*32) product — or (lhs, rhs, rt*32, ct*32) for lanes
        that are a grid of operand pairs, see :meth:`LaneProducts.block` — into the block's DST tiles."""
        rows, order, slots = self._face_views(product)
        # (a block of a few tiles moves faster value by value: the face-row view costs more)
        by_face_row = (slots.size > _FACE_ROWS_MIN and slots.dtype == rows.dtype
                       and rows.strides[-1] == slots.strides[-1] == rows.itemsize)
        started, self.started = self.started, True
        if not by_face_row:
            if started:
                slots += rows.transpose(order)
            else:
                slots[...] = rows.transpose(order)
            return
        # adding straight from the product would step 16 values at a time; put it in face
        # order first (a copy by face rows), then add contiguous tiles
        faces = scratch.take(slots.shape, slots.dtype) if started else slots

        def add(part: slice) -> None:
            _copy_face_rows(faces[part], rows[part], order)
            if started:
                slots[part] += faces[part]

        in_halves(add, len(slots), slots.size)
        if started:
            scratch.give(faces)

    def uses(self, matrix: CbMatrix) -> bool:
        """Whether the unsettled run reads ``matrix``."""
        run = self.run
        return run is not None and (run.a is matrix or run.b is matrix)


def _step_products(a: CbMatrix, a_tile: int, rt: int, b: CbMatrix, b_tile: int, ct: int, n: int) -> np.ndarray:
    """The product of each of ``n`` K steps on its own: (n, lanes, rt*32, ct*32); or, when the lanes
    are every pair of the distinct in0 and in1 operands in row-major order (a grid of cores sharing
    rows and columns), (n, distinct in0, distinct in1, rt*32, ct*32) computed from the distinct
    operands without gathering them per lane (see :meth:`LaneProducts.block`)."""
    if a.lanes is not None or b.lanes is not None:
        lanes = len(a.lanes if a.lanes is not None else b.lanes)
        ua, ub = len(a.values), len(b.values)
        ga = np.arange(lanes) if a.lanes is None else a.lanes
        gb = np.arange(lanes) if b.lanes is None else b.lanes
        if ua * ub == lanes and np.array_equal(ga * ub + gb, np.arange(lanes)):
            left = a.distinct_block(a_tile, rt, n).reshape(ua, rt * 32, n, 32).transpose(2, 0, 1, 3)
            right = b.distinct_block(b_tile, n, ct).reshape(ub, n, 32, ct * 32).transpose(1, 0, 2, 3)
            return exact_matmul(left[:, :, None], right[:, None])
    left = a.block(a_tile, rt, n)                     # (lanes, rt*32, n*32)
    right = b.block(b_tile, n, ct)                    # (lanes, n*32, ct*32)
    lanes = left.shape[0]
    return exact_matmul(left.reshape(lanes, rt * 32, n, 32).transpose(2, 0, 1, 3),
                        right.reshape(lanes, n, 32, ct * 32).transpose(1, 0, 2, 3))


# one tile: row-major position r*32 + c <- face-order position, and the reverse
FACES_OF_ROWS = np.arange(1024).reshape(2, 16, 2, 16).transpose(0, 2, 1, 3).reshape(-1)
ROWS_OF_FACES = np.argsort(FACES_OF_ROWS)
_ROWS_OF_FACES_BLOCK = ROWS_OF_FACES.reshape(1, 32, 32)
_BF16_MASKS = {("A", "high"): tm.SRCA_HIGH, ("A", "both"): tm.SRCA_BOTH, ("B", "high"): tm.SRCB_HIGH}
_BF16_WIDENED: dict[tuple, np.ndarray] = {}


def _bf16_widened(register: str, part: str) -> np.ndarray:
    """float64 value of each of the 65536 bfloat16 bit patterns as the multiplier's ``part`` of
    source register ``register`` sees it: the float32 widening, the slice's mask and the float64
    widening :func:`operand_matrix` and :func:`exact_matmul` apply, done once for every pattern."""
    table = _BF16_WIDENED.get((register, part))
    if table is None:
        words = np.arange(1 << 16, dtype=np.uint32) << 16
        mask = _BF16_MASKS.get((register, part))
        if mask is not None:
            words &= mask
        with np.errstate(invalid="ignore"):
            table = _BF16_WIDENED[(register, part)] = words.view(np.float32).astype(np.float64)
    return table


def bf16_tile_operand(raw: np.ndarray, register: str, part: str) -> np.ndarray:
    """One bfloat16 tile's bytes (2048) as the (1, 32, 32) float64 matrix :func:`operand_matrix`
    gives for it (untransposed, one fidelity phase's ``part``, no ``"low"``), as
    :func:`exact_matmul` widens it: the same values, without the matrix's bookkeeping."""
    return _bf16_widened(register, part).take(raw.view(np.uint16).take(_ROWS_OF_FACES_BLOCK))   # take: flat indices


class OneTileMatmul:
    """A pending ``matmul_block`` of one bfloat16 tile (rt = ct = 1) on one lane at one fidelity
    phase, whose in0 tile is the last one waited for (so no later call can continue it as a run
    of :class:`PendingMatmul`): in0 is unpacked at the call (``a``), in1 (``in1()``, the tile's
    bytes, read with their checks; ``part_a`` its SrcA slice) when it settles, and their exact
    product is added to the DST slot ``slot`` (face order) as :class:`PendingMatmul` would add it.
    Kept in the compute thread's pending blocks like one, with the same interface."""

    __slots__ = ("a", "in1", "part_a", "slot", "started", "run")
    rt = ct = tiles = 1

    def __init__(self, a: np.ndarray, in1, part_a: str, slot: np.ndarray, started: bool):
        self.a, self.in1, self.part_a = a, in1, part_a
        self.slot, self.started = slot, started
        self.run = True                    # not settled yet

    def settle(self) -> None:
        if not self.run:
            return
        self.run = False
        b = bf16_tile_operand(self.in1(), "A", self.part_a)
        faces = np.matmul(self.a, b).astype(np.float32).take(FACES_OF_ROWS)       # take: flat indices
        self.a = self.in1 = None
        if self.started:
            self.slot += faces             # rounds to DST's precision, as PendingMatmul._add
        else:
            self.started = True
            self.slot[...] = faces

    def uses(self, matrix: CbMatrix) -> bool:
        return False


def _copy_face_rows(target: np.ndarray, rows: np.ndarray, order: tuple) -> None:
    """``target[...] = rows.transpose(order)`` for arrays of one dtype whose last axis (a face
    row of 16 values) is contiguous: each face row moves as one item, 16× fewer iterations of
    numpy's inner loop than moving the values one by one."""
    face_row = np.dtype((np.void, 16 * rows.itemsize))
    target.view(face_row)[..., 0] = rows.view(face_row)[..., 0].transpose(order[:-1])
