"""lower_tt_tile_intrinsics (Stage C): tile ops → TT-Metalium tile intrinsics in DST sections.

Reads: ``tile.gemm``, ``tile.reduce``, ``tile.fill``, local ``tile.copy``; ``tt.cb.*``;
``tt.compute_config`` (DST capacity). Writes ``tile.stmt`` ops holding
``tile.dst_section``\\ s of ttkernel calls (no CB or tile-register protocol yet):

- **gemm** — the M×N output block is computed in sub-blocks of ``rt × ct`` tiles that fit
  DST, one ``matmul_block`` per K tile (``in0`` tiles strided by the block's K tiles, ``in1``
  tiles consecutive). Accumulation (:mod:`.accumulation`):

  * over a K loop, when the whole block fits DST and the loop holds no other compute: DST
    stays acquired across the loop (the TileLang-TT architecture's K-loop pattern): ``matmul_open`` before the
    loop, ``matmul_step`` in it, ``matmul_pack`` after it, which packs C (``pack_tile_block``);
  * over a K loop otherwise: partial sums spill (``pack_tile_block``) to a ``<C>_partials``
    CB of one block between K steps; the loop's last iteration is peeled so that it reloads them (``copy_tile``) and
    packs the final sums straight into C's block, each tile at its row-major place
    (``pack_tile<true>``); several such gemms of one loop (two projections of one input) share
    one peeled iteration. Over three or more K steps the packer accumulates them in L1
    (``pack_reconfig_l1_acc(k > 0)``, back to 0 after each step's packs so that other packs in the
    loop write; each step but the last two pops the block unread, so
    the next one packs onto the same pages), as TT-Metal's blocked matmul does; over two, the
    second step reloads the first's sums;
  * once: from zero, or onto C's previous value reloaded with ``copy_tile``.

  A clear of C that the accumulation starts from is absorbed.
- **reduce** — per tile row (``dim=1``, REDUCE_ROW) or column (``dim=0``, REDUCE_COL):
  ``reduce_tile`` over the tiles of the row / column with a scaler tile of ones (CB
  ``reduce_scaler``), onto the previous value when ``clear=False``; ``reduce_uninit``
  after the last one.
- **fill** — ``fill_tile`` and pack, per tile. **local copy** — ``copy_tile`` and pack, per tile.

Errors: none (shapes were checked when the kernel was built).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp, i32
from xdsl.ir import Operation
from xdsl.rewriter import Rewriter

from tilefold.ir import tile
from tilefold.ir.ttkernel import api_call, float_bits
from tilefold.layout.formats import DataFormat
from tilefold.passes.tilelang.accumulation import analyze
from tilefold.passes.tilelang.affine import constant_op, trip_count
from tilefold.ir.attributes import get_attr, kernel_function
from tilefold.passes.tilelang.common import TILE, buffer_name, compile_error, insert_after, insert_before, tile_grid
from tilefold.passes.tilelang.emitter import Emitter

from tilefold.passes.tilelang.internal_buffers import add_buffer, constant_tile
from tilefold.passes.device_pass import DevicePass

REDUCE_SCALER = "reduce_scaler"
COMPUTE_OPS = (tile.GemmOp, tile.ReduceOp, tile.FillOp, tile.ParallelOp, tile.StmtOp, tile.TransposeOp,
               tile.CumsumOp)


def pack_in_order(pack: Emitter, cb: int, count: int) -> None:
    """DST[0 .. count) to the next ``count`` pages of ``cb``: ``pack_tile`` for one tile,
    ``pack_tile_block`` for more."""
    if count == 1:
        pack(api_call("pack_tile", [pack.c(0), pack.c(cb), pack.c(0)]))
    else:
        pack(api_call("pack_tile_block", [pack.c(0), pack.c(cb), pack.c(count)]))


def subblock(rows: int, cols: int, capacity: int) -> tuple[int, int]:
    """The output sub-block rt × ct computed per DST acquire: rt | rows, ct | cols, rt·ct ≤ DST
    capacity, as many tiles as possible, then as square as possible (fewest input tiles
    unpacked per matmul_block), then wider."""
    best, best_key = (1, 1), None
    for rt in range(1, rows + 1):
        for ct in range(1, cols + 1):
            if rows % rt or cols % ct or rt * ct > capacity:
                continue
            key = (rt * ct, -(rt + ct), ct)
            if best_key is None or key > best_key:
                best, best_key = (rt, ct), key
    return best


@dataclass
class _Peel:
    """A K loop's peeled last iteration: each op of the loop body → its copy there; the loop's new
    end (None when the loop ran once and goes)."""

    clones: dict
    end: object
    erase_loop: bool
    trips: int                  # the loop's trip count before the peel


@dataclass(frozen=True)
class LowerTTTileIntrinsics(DevicePass):
    """Tile ops → tile intrinsics in DST sections (see the module docstring)."""

    name = "lower-tt-tile-intrinsics"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = kernel_function(op)
        config = get_attr(kernel, "tt.compute_config")
        fp32 = config["fp32_dest_acc_en"]
        capacity = self.arch.dst_capacity(fp32, config["dst_full_sync_en"])
        TileIntrinsics(kernel, fp32, capacity).run()


class TileIntrinsics:
    """The lowering of one kernel's tile ops."""

    def __init__(self, kernel, fp32: bool, capacity: int):
        self.kernel = kernel
        self.fp32 = fp32
        self.capacity = capacity

    def run(self) -> None:
        kernel = self.kernel
        self.peels: dict = {}           # K loop -> its peeled last iteration, shared by its spilled gemms
        for gemm in [o for o in kernel.walk() if isinstance(o, tile.GemmOp)]:
            self.gemm(gemm)
        for loop in [loop for loop, peel in self.peels.items() if peel.erase_loop]:
            Rewriter.erase_op(loop, safe_erase=False)
        # a gemm the peel of another's K loop copied, which no spill lowered (it is not a K-loop sum)
        for gemm in [o for o in kernel.walk() if isinstance(o, tile.GemmOp)]:
            self.gemm(gemm)
        for red in [o for o in kernel.walk() if isinstance(o, tile.ReduceOp)]:
            self.reduce(red)
        for op in [o for o in kernel.walk() if isinstance(o, tile.CumsumOp)]:
            self.cumsum(op)
        for op in [o for o in kernel.walk() if isinstance(o, tile.TransposeOp)]:
            self.transpose(op)
        for op in [o for o in kernel.walk() if isinstance(o, tile.IotaOp)]:
            self.iota(op)
        # last: the lowerings above may add constant tiles, each made by a fill
        for fill in [o for o in kernel.walk() if isinstance(o, tile.FillOp)]:
            self.per_tile(fill, "fill", [], fill.buffer)
        for copy in [o for o in kernel.walk() if isinstance(o, tile.CopyOp) and not o.offsets]:
            self.per_tile(copy, "copy", [copy.src], copy.dst)

    # -- helpers ------------------------------------------------------------------------------------

    def name(self, value) -> str:
        return buffer_name(value, self.kernel)

    def cb(self, value) -> int:
        return get_attr(self.kernel, f"tt.cb.{self.name(value)}")["index"]

    def tiles(self, value) -> tuple[int, int]:
        return tile_grid(value.type.get_shape())

    def stmt(self, anchor: Operation, kind: str, reads, writes, after: bool = False) -> Emitter:
        st = tile.StmtOp(kind, reads, writes)
        (insert_after if after else insert_before)(anchor, st)
        st.location = anchor.location
        return Emitter(st.body.block, anchor)

    # -- gemm ---------------------------------------------------------------------------------------

    def gemm(self, gemm: tile.GemmOp) -> None:
        acc = analyze(gemm)
        a, b, c = self.name(gemm.a), self.name(gemm.b), self.name(gemm.c)
        mb, kb = self.tiles(gemm.a)
        nb = self.tiles(gemm.b)[1]
        if acc.clear is not None:
            Rewriter.erase_op(acc.clear)
        if acc.kind == "loop":
            loop = acc.loop
            others = [o for o in loop.walk() if isinstance(o, COMPUTE_OPS) and o is not gemm]
            if mb * nb <= self.capacity and not others:
                self.gemm_in_dst(gemm, loop, (mb, nb, kb), (a, b, c))
            else:
                self.gemm_spill(gemm, loop, (mb, nb, kb), (a, b, c))
            return
        reload = acc.kind == "update"
        em = self.stmt(gemm, "matmul", [a, b] + ([c] if reload else []), [c])
        out = self.cb(gemm.c)
        self.subblocks(em, gemm, (mb, nb, kb), reload_from=out if reload else None, out_cb=out)
        Rewriter.erase_op(gemm)

    def matmul_steps(self, em: Emitter, gemm, dims, rt: int, ct: int, base0, base1) -> None:
        """``matmul_block`` for each K tile into DST[0 .. rt*ct)."""
        mb, nb, kb = dims
        a_cb, b_cb = em.c(self.cb(gemm.a)), em.c(self.cb(gemm.b))
        args = [em.c(0), em.c(0), em.c(ct), em.c(rt), em.c(kb)]
        if kb == 1:
            em(api_call("matmul_block", [a_cb, b_cb, base0, base1, *args]))
            return
        inner, kk = em.loop(kb, "kk")
        i0 = inner.add(base0, kk)
        i1 = inner.add(base1, inner.mul(kk, inner.c(nb)))
        inner(api_call("matmul_block", [inner.c(self.cb(gemm.a)), inner.c(self.cb(gemm.b)), i0, i1, inner.c(0),
                                        inner.c(0), inner.c(ct), inner.c(rt), inner.c(kb)]))

    def gemm_in_dst(self, gemm, loop: tile.ForOp, dims, names) -> None:
        mb, nb, kb = dims
        a, b, c = names
        self.stmt(loop, "matmul_open", [], []).section("open")
        em = self.stmt(gemm, "matmul_step", [a, b], [])
        math, _ = em.section("continue")
        self.matmul_steps(math, gemm, dims, mb, nb, math.c(0), math.c(0))
        em = self.stmt(loop, "matmul_pack", [], [c], after=True)
        _, pack = em.section("close")
        pack_in_order(pack, self.cb(gemm.c), mb * nb)
        Rewriter.erase_op(gemm)

    def gemm_spill(self, gemm, loop: tile.ForOp, dims, names) -> None:
        mb, nb, kb = dims
        a, b, c = names
        # (another gemm of this loop may have peeled it already: its trip count is the peel's)
        trips = self.peels[loop].trips if loop in self.peels else trip_count(loop)
        if trips is None:
            why = (f"its {mb}x{nb}-tile product is larger than DST's {self.capacity} tiles" if mb * nb > self.capacity
                   else "the loop also computes other things, which need DST between its steps")
            raise compile_error(loop, f"the K loop of this T.gemm runs a number of iterations known only at run time, "
                                      f"and {why}: tilefold then accumulates the product through a partials buffer "
                                      "whose last step it peels, which needs a constant trip count; loop a constant "
                                      "number of times and skip the extra steps with an if")
        if not trips:
            raise compile_error(loop, "the K loop of this T.gemm runs no iterations; give it at least one")
        fmt = DataFormat.Float32 if self.fp32 else DataFormat.Float16_b
        partials = add_buffer(self.kernel, f"{c}_partials", (mb * TILE, nb * TILE), fmt, mb * nb)
        partials_cb = get_attr(self.kernel, f"tt.cb.{partials.buffer_name.data}")["index"]
        peel = self.peel(loop, trips)
        last = peel.clones[gemm]
        l1_acc = trips >= 3
        if trips == 1:
            pass        # the loop, this gemm in it, goes once every gemm of it is lowered (they see each other)
        else:
            end = peel.end
            em = self.stmt(gemm, "matmul_spill", [a, b], [])
            not_first = em(arith.CmpiOp(loop.iv, loop.lb, "ugt")).result
            if l1_acc:
                em(api_call("pack_reconfig_l1_acc", [em(arith.ExtUIOp(not_first, i32)).result]))
                self.subblocks(em, gemm, dims, spill_to=partials_cb)
                # the packer's other packs (a transposed operand, an element body) write, not add
                em(api_call("pack_reconfig_l1_acc", [em.c(0)]))
                # every step but the last two frees the block unread: the next packs onto it
                recycle = em.when(em(arith.CmpiOp(em.add(loop.iv, em.c(loop.step.value.data)), end, "ult")).result)
                name = self.cb_name(partials_cb)
                recycle(tile.CbEventOp("consume", partials_cb, mb * nb, name))
                recycle(tile.CbEventOp("release", partials_cb, mb * nb, name))
            else:
                self.subblocks(em, gemm, dims, reload_from=partials_cb, reload_when=not_first, spill_to=partials_cb)
            Rewriter.erase_op(gemm)
        em = self.stmt(last, "matmul_final", [a, b], [c])
        if l1_acc:
            em(api_call("pack_reconfig_l1_acc", [em.c(0)]))
        self.subblocks(em, last, dims, reload_from=partials_cb if trips > 1 else None, out_cb=self.cb(last.c))
        Rewriter.erase_op(last)

    def peel(self, loop: tile.ForOp, trips: int) -> "_Peel":
        """The last iteration of a K loop copied after it (it packs the final sums into C), once for
        all the spilled gemms of the loop; the loop then stops before it (or goes, for one trip)."""
        peel = self.peels.get(loop)
        if peel is not None:
            return peel
        last_k = loop.lb.owner.value.value.data + (trips - 1) * loop.step.value.data
        anchor = insert_after(loop, constant_op(last_k))
        mapper = {loop.iv: anchor.result}
        clones = {}
        for op in list(loop.body.block.ops):
            clone = op.clone(value_mapper=mapper)
            anchor = insert_after(anchor, clone)
            clones.update(zip(op.walk(), clone.walk()))
        end = None
        if trips > 1:
            end = insert_before(loop, constant_op(last_k)).result
            loop.operands[1] = end
        peel = self.peels[loop] = _Peel(clones, end, trips == 1, trips)
        return peel

    def subblocks(self, em: Emitter, gemm, dims, reload_from=None, reload_when=None, spill_to=None,
                  out_cb=None) -> None:
        """One DST section per output sub-block: [reload], matmul K steps, pack."""
        mb, nb, kb = dims
        rt, ct = subblock(mb, nb, self.capacity)
        per_row = nb // ct
        count = (mb // rt) * per_row
        body, s = em.loop(count, "sub") if count > 1 else (em, em.c(0))
        sr = s if per_row == 1 else body(arith.DivUIOp(s, body.c(per_row))).result
        sc = body.c(0) if per_row == 1 else body(arith.RemUIOp(s, body.c(per_row))).result
        base0 = body.mul(sr, body.c(rt * kb))
        base1 = body.mul(sc, body.c(ct))
        math, pack = body.section()
        n = rt * ct
        if reload_from is not None:
            load = math.when(reload_when) if reload_when is not None else math
            if reload_from == out_cb:
                # C's previous value, in row-major order in its own block
                for r in range(rt):
                    for q in range(ct):
                        row = load.add(load.mul(sr, load.c(rt)), load.c(r))
                        col = load.add(load.mul(sc, load.c(ct)), load.c(q))
                        index = load.add(load.mul(row, load.c(nb)), col)
                        load(api_call("copy_tile", [load.c(reload_from), index, load.c(r * ct + q)]))
            else:
                name = self.cb_name(reload_from)
                load(tile.CbEventOp("consume", reload_from, n, name))
                for d in range(n):
                    load(api_call("copy_tile", [load.c(reload_from), load.c(d), load.c(d)]))
                load(tile.CbEventOp("release", reload_from, n, name))
        self.matmul_steps(math, gemm, dims, rt, ct, base0, base1)
        if spill_to is not None:
            name = self.cb_name(spill_to)
            pack(tile.CbEventOp("produce_begin", spill_to, n, name))
            pack_in_order(pack, spill_to, n)
            pack(tile.CbEventOp("produce_end", spill_to, n, name))
            return
        for r in range(rt):
            for q in range(ct):
                row = pack.add(pack.mul(sr, pack.c(rt)), pack.c(r))
                col = pack.add(pack.mul(sc, pack.c(ct)), pack.c(q))
                index = pack.add(pack.mul(row, pack.c(nb)), col)
                pack(api_call("pack_tile", [pack.c(r * ct + q), pack.c(out_cb), index],
                              {"out_of_order_output": True}))

    def cb_name(self, index: int) -> str:
        prefix = "tt.cb."
        for key in self.kernel.attributes:
            if key.startswith(prefix) and get_attr(self.kernel, key).get("index") == index:
                return key[len(prefix):]
        return f"c_{index}"

    # -- reduce, fill, copy ---------------------------------------------------------------------------

    def reduce(self, red: tile.ReduceOp) -> None:
        src, dst = self.name(red.src), self.name(red.dst)
        scaler = constant_tile(self.kernel, REDUCE_SCALER, 1.0)
        scaler_cb = get_attr(self.kernel, f"tt.cb.{scaler}")["index"]
        clear = red.clear.value.data
        dim = red.dim.value.data
        rows, cols = self.tiles(red.src)
        templates = {"pool_type": "MAX" if red.kind.data == "max" else "SUM",
                     "reduce_dim": "REDUCE_ROW" if dim == 1 else "REDUCE_COL"}
        reads = [src, scaler] + ([] if clear else [dst])
        em = self.stmt(red, "reduce", reads, [dst])
        outer, inner_count = (rows, cols) if dim == 1 else (cols, rows)
        body, o = em.loop(outer, "r" if dim == 1 else "c") if outer > 1 else (em, em.c(0))
        math, pack = body.section()
        src_cb, dst_cb = self.cb(red.src), self.cb(red.dst)
        if not clear:
            math(api_call("copy_tile", [math.c(dst_cb), o, math.c(0)]))
        for x in range(inner_count):
            index = math.add(math.mul(o, math.c(cols)), math.c(x)) if dim == 1 else \
                math.add(math.mul(math.c(x), math.c(cols)), o)
            math(api_call("reduce_tile", [math.c(src_cb), math.c(scaler_cb), index, math.c(0), math.c(0)], templates))
        pack(api_call("pack_tile", [pack.c(0), pack.c(dst_cb), pack.c(0)]))
        em(api_call("reduce_uninit", []))  # restores the unpacker and the packer's reduce mask
        Rewriter.erase_op(red)

    # -- transpose, index tiles, cumulative sums --------------------------------------------------------

    def transpose(self, op: tile.TransposeOp) -> None:
        """dst tile (i, j) = transpose of src tile (j, i), one ``transpose_wh_tile`` each (a vector:
        tile k of one layout is tile k of the other)."""
        rows, cols = self.tiles(op.src)
        vector = len(op.src.type.get_shape()) == 1
        em = self.stmt(op, "transpose", [self.name(op.src)], [self.name(op.dst)])
        count = rows * cols
        body, t = em.loop(count, "t") if count > 1 else (em, em.c(0))
        if vector or cols == 1:
            src = t
        elif rows == 1:
            src = t
        else:
            i = body(arith.DivUIOp(t, body.c(rows))).result
            j = body(arith.RemUIOp(t, body.c(rows))).result
            src = body.add(body.mul(j, body.c(cols)), i)
        math, pack = body.section()
        math(api_call("transpose_wh_tile", [math.c(self.cb(op.src)), src, math.c(0)]))
        pack(api_call("pack_tile", [pack.c(0), pack.c(self.cb(op.dst)), pack.c(0)]))
        Rewriter.erase_op(op)

    def iota(self, op: tile.IotaOp) -> None:
        """Each element's row number in its tile: the column sums of a tile of ones, minus one
        (``cumsum_tile``); its column number: that, transposed in DST."""
        em = self.stmt(op, "iota", [], [self.name(op.buffer)])
        math, pack = em.section()
        math(api_call("fill_tile", [math.c(0), math.f32(1.0)]))
        math(api_call("cumsum_tile", [math.c(0), math.c(1)]))
        math(api_call("sub_unary_tile", [math.c(0), math.c(float_bits(1.0))]))
        if op.dim.value.data == 1:
            math(api_call("transpose_wh_dest", [math.c(0)]))
        pack(api_call("pack_tile", [pack.c(0), pack.c(self.cb(op.buffer)), pack.c(0)]))
        Rewriter.erase_op(op)

    def cumsum(self, op: tile.CumsumOp) -> None:
        """Column sums (``dim`` 0) run down each column of tiles with ``cumsum_tile``, carrying the
        last row from tile to tile; row sums (``dim`` 1) read each tile transposed
        (``transpose_wh_tile``) and transpose the sums back in a second pass. From the end
        (``reverse``): total - sum + x, the totals reduced beforehand. The carry lives in the
        SFPU's registers, so nothing else runs on the SFPU between the ``cumsum_tile`` calls."""
        src, dst = self.name(op.src), self.name(op.dst)
        rows, cols = self.tiles(op.src)
        dim = op.dim.value.data
        if len(op.src.type.get_shape()) == 1:
            layout = get_attr(self.kernel, "tt.vector_layouts", {}).get(src, "row")
            rows, cols, dim = (rows, 1, 0) if layout == "col" else (1, rows, 1)
        reverse = op.reverse.value.data
        src_cb, dst_cb = self.cb(op.src), self.cb(op.dst)
        fmt = DataFormat.Float32 if self.fp32 else DataFormat.Float16_b
        count = rows * cols
        two_pass = reverse or dim == 1
        reads = [src]
        if reverse:
            reads.append(constant_tile(self.kernel, "zero_tile", 0.0))
            reads.append(constant_tile(self.kernel, REDUCE_SCALER, 1.0))
        em = self.stmt(op, "cumsum", reads, [dst])
        sums_cb = dst_cb
        if two_pass:
            sums = add_buffer(self.kernel, f"{src}_cumsum", (rows * TILE, cols * TILE), fmt, count)
            sums_cb = get_attr(self.kernel, f"tt.cb.{sums.buffer_name.data}")["index"]
            em(tile.CbEventOp("produce_begin", sums_cb, count, self.cb_name(sums_cb)))
        outer, inner = (cols, rows) if dim == 0 else (rows, cols)
        body, o = em.loop(outer, "o") if outer > 1 else (em, em.c(0))
        inner_body, x = body.loop(inner, "x") if inner > 1 else (body, body.c(0))
        index = inner_body.add(inner_body.mul(x, inner_body.c(cols)), o) if dim == 0 else \
            inner_body.add(inner_body.mul(o, inner_body.c(cols)), x)
        first = inner_body(arith.ExtUIOp(inner_body(arith.CmpiOp(x, inner_body.c(0), "eq")).result,
                                         index.type)).result
        math, pack = inner_body.section()
        math(api_call("copy_tile" if dim == 0 else "transpose_wh_tile", [math.c(src_cb), index, math.c(0)]))
        math(api_call("cumsum_tile", [math.c(0), first]))
        pack(api_call("pack_tile", [pack.c(0), pack.c(sums_cb), index], {"out_of_order_output": True}))
        if not two_pass:
            Rewriter.erase_op(op)
            return
        name = self.cb_name(sums_cb)
        em(tile.CbEventOp("produce_end", sums_cb, count, name))
        em(tile.CbEventOp("consume", sums_cb, count, name))
        totals_cb = zero_cb = None
        if reverse:
            totals = add_buffer(self.kernel, f"{src}_totals", (TILE, TILE * outer), fmt, outer)
            totals_cb = get_attr(self.kernel, f"tt.cb.{totals.buffer_name.data}")["index"]
            zero_cb = get_attr(self.kernel, "tt.cb.zero_tile")["index"]
            self.totals(em, src_cb, totals_cb, cols, dim, outer, inner)
        body, t = em.loop(count, "t") if count > 1 else (em, em.c(0))
        if reverse:
            o = body(arith.DivUIOp(t, body.c(cols))).result if dim == 1 else body(arith.RemUIOp(t, body.c(cols))).result
        math, pack = body.section()
        math(api_call("transpose_wh_tile" if dim == 1 else "copy_tile", [math.c(sums_cb), t, math.c(0)]))
        if reverse:
            bcast = "add_tiles_bcast_rows" if dim == 0 else "add_tiles_bcast_cols"
            math(api_call(bcast, [math.c(zero_cb), math.c(totals_cb), math.c(0), o, math.c(1)]))
            math(api_call("sub_binary_tile", [math.c(1), math.c(0), math.c(0)]))
            math(api_call("copy_tile", [math.c(src_cb), t, math.c(1)]))
            math(api_call("add_binary_tile", [math.c(0), math.c(1), math.c(0)]))
        pack(api_call("pack_tile", [pack.c(0), pack.c(dst_cb), pack.c(0)]))
        em(tile.CbEventOp("release", sums_cb, count, name))
        if reverse:
            em(tile.CbEventOp("release", totals_cb, outer, self.cb_name(totals_cb)))
        Rewriter.erase_op(op)

    def totals(self, em: Emitter, src_cb: int, totals_cb: int, cols: int, dim: int, outer: int, inner: int) -> None:
        """The sums of each column (dim 0: a row of values per tile column) or row of tiles."""
        name = self.cb_name(totals_cb)
        em(tile.CbEventOp("produce_begin", totals_cb, outer, name))
        templates = {"pool_type": "SUM", "reduce_dim": "REDUCE_COL" if dim == 0 else "REDUCE_ROW"}
        scaler = get_attr(self.kernel, f"tt.cb.{constant_tile(self.kernel, REDUCE_SCALER, 1.0)}")["index"]
        body, o = em.loop(outer, "o") if outer > 1 else (em, em.c(0))
        math, pack = body.section()
        for x in range(inner):
            index = math.add(math.mul(math.c(x), math.c(cols)), o) if dim == 0 else \
                math.add(math.mul(o, math.c(cols)), math.c(x))
            math(api_call("reduce_tile", [math.c(src_cb), math.c(scaler), index, math.c(0), math.c(0)], templates))
        pack(api_call("pack_tile", [pack.c(0), pack.c(totals_cb), pack.c(0)]))
        em(api_call("reduce_uninit", []))
        em(tile.CbEventOp("produce_end", totals_cb, outer, name))
        em(tile.CbEventOp("consume", totals_cb, outer, name))

    def per_tile(self, op: Operation, kind: str, sources, target) -> None:
        """A fill or a local copy: one section per tile of the target block."""
        rows, cols = self.tiles(target)
        em = self.stmt(op, kind, [self.name(v) for v in sources], [self.name(target)])
        body, t = em.loop(rows * cols, "t") if rows * cols > 1 else (em, em.c(0))
        math, pack = body.section()
        if kind == "fill":
            math(api_call("fill_tile", [math.c(0), math.f32(op.fill_value)]))
        else:
            math(api_call("copy_tile", [math.c(self.cb(sources[0])), t, math.c(0)]))
        pack(api_call("pack_tile", [pack.c(0), pack.c(self.cb(target)), pack.c(0)]))
        Rewriter.erase_op(op)
