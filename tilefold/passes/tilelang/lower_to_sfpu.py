"""lower_to_sfpu (Stage C): ``T.Parallel`` element-wise bodies → SFPU ops over whole tiles.

Reads: ``tile.parallel`` ops over local buffers (after legalize_global_access); ``tt.cb.*``;
``tt.vector_layouts``; ``tt.compute_config`` (DST capacity).

An element-wise body computes the same function on every element, so it is computed tile
by tile over its space (:mod:`.parallel_space`): for each tile t of the output block, load
the operands' tiles into DST, apply the SFPU ops, pack the results. An operand is

- the block's tile t (``X[i, j]``, or a vector of the body's own layout): ``copy_tile``;
- the transposed tile of a block read ``X[j, i]``: ``transpose_wh_tile``;
- a vector broadcast along the rows (``v[i]``) or the columns (``v[j]``) of the space, or a
  2-D block's first column / row: ``add_tiles_bcast_cols`` / ``_rows`` onto a zero tile;
- one value broadcast everywhere (``v[0]``, ``X[0, 0]``): ``add_tiles_bcast_scalar``;
- an index as a value (``tile.index_value``): built from two constant tiles holding each
  element's row and column number in its tile (``tile_row_index`` / ``tile_col_index``, made
  once per core), scaled and shifted by the tile's place and the block's offsets
  (``mul_unary_tile``, ``add_binary_tile``, ``fill_tile`` of a runtime value).

Comparisons become SFPU compares (with 0: ``gtz_tile`` ...; with a constant:
``unary_gt_tile`` ...; of two values: ``gt_binary_tile`` ...) giving 1.0 / 0.0, masks
combine with ``mul`` (and), ``max`` (or) and ``1 - x`` (not), and selects are ``where_tile``.
The expression → op mapping is :mod:`.sfpu_expressions`.

Writes, in place of each ``tile.parallel``::

    tile.stmt {kind = "eltwise", reads = [...], writes = [...]} {
      scf.for %t = 0 to <tiles>:
        tile.dst_section math { copy_tile / bcast loads, SFPU ops } pack { pack_tile ... }
    }

plus the constant tiles it needs (``zero_tile``, the index tiles). Each ``tile.parallel`` is
rewritten by a ``RewritePattern`` (:class:`LowerParallel`) under xDSL's pattern walker.

A body that needs more DST tiles at once than half of DST (the default half-sync double
buffering: 8 bfloat16 / 4 float32 tiles) turns on ``dst_full_sync_en`` in the kernel's
``tt.compute_config`` (16 / 8 tiles; math and pack then take turns on all of DST) and is lowered
again.

Errors: an index other than those above; more values alive than all of DST holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint, Rewriter

from tilefold.ir import tile
from tilefold.ir.ttkernel import api_call, constant_int
from tilefold.passes.tilelang.affine import affine_of
from tilefold.ir.attributes import get_attr, kernel_function, set_attr
from tilefold.passes.builder import rewrite_once
from tilefold.passes.tilelang.common import buffer_name, compile_error, is_global, tiles_for
from tilefold.passes.tilelang.emitter import Emitter
from tilefold.passes.tilelang.internal_buffers import constant_tile, index_tile
from tilefold.passes.tilelang.parallel_space import Space, access_pattern, parallel_space
from tilefold.passes.tilelang.sfpu_expressions import DstCapacityError, IndexTerms, Leaf, SfpuTile
from tilefold.passes.device_pass import DevicePass

ZERO_TILE = "zero_tile"


def buffer_tile_grid(value, name: str, layouts: dict[str, str]) -> tuple[int, int]:
    """(rows, cols) of tiles of a local buffer as a body indexes them: a vector is one row of
    tiles (``row`` layout) or one column of them (``col``)."""
    shape = value.type.get_shape()
    if len(shape) == 1:
        n = tiles_for(shape[0])
        return (n, 1) if layouts.get(name, "row") == "col" else (1, n)
    return tiles_for(shape[0]), tiles_for(shape[1])


@dataclass(frozen=True)
class LowerToSFPU(DevicePass):
    """Element-wise ``T.Parallel`` bodies → tile-by-tile SFPU ops (see the module docstring)."""

    name = "lower-to-sfpu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = kernel_function(op)
        config = get_attr(kernel, "tt.compute_config")
        layouts = get_attr(kernel, "tt.vector_layouts", {})
        dst_format = "Float32" if config["fp32_dest_acc_en"] else "Float16_b"
        before = kernel.clone()
        try:
            self.lower(kernel, config, layouts, dst_format)
        except DstCapacityError:
            if config["dst_full_sync_en"]:
                raise
            # an expression needs more DST tiles than half of DST: the whole of it (full sync), math
            # and pack taking turns on all of DST instead of each on its half
            Rewriter.replace_op(kernel, before)
            config = {**config, "dst_full_sync_en": True}
            set_attr(before, "tt.compute_config", config)
            self.lower(before, config, layouts, dst_format)

    def lower(self, kernel, config: dict, layouts: dict, dst_format: str) -> None:
        capacity = self.arch.dst_capacity(config["fp32_dest_acc_en"], config["dst_full_sync_en"])
        rewrite_once(kernel.body, LowerParallel(kernel, layouts, capacity, dst_format))


class LowerParallel(RewritePattern):
    """One element-wise ``tile.parallel`` → its ``tile.stmt`` of SFPU tile ops."""

    def __init__(self, kernel, layouts: dict[str, str], capacity: int, dst_format: str):
        self.kernel, self.layouts, self.capacity, self.dst_format = kernel, layouts, capacity, dst_format

    @op_type_rewrite_pattern
    def match_and_rewrite(self, par: tile.ParallelOp, rewriter: PatternRewriter) -> None:
        ParallelLowering(self.kernel, par, self.layouts, self.capacity, self.dst_format).lower(rewriter)


class ParallelLowering:
    """The lowering of one ``tile.parallel``."""

    def __init__(self, kernel, par: tile.ParallelOp, layouts: dict[str, str], capacity: int, dst_format: str):
        self.kernel, self.par, self.layouts, self.capacity = kernel, par, layouts, capacity
        self.dst_format = dst_format
        self.name = lambda v: buffer_name(v, kernel)
        self.space: Space = parallel_space(par, layouts, self.name)

    def grid(self) -> tuple[int, int]:
        ext, s = self.par.shape, self.space
        if s.layout == "tile":
            return tiles_for(ext[s.row_arg]), tiles_for(ext[s.col_arg])
        n = tiles_for(ext[0])
        return (n, 1) if s.layout == "col" else (1, n)

    def classify(self, access, store: bool) -> Leaf:
        name = self.name(access.buffer)
        if is_global(access.buffer, self.kernel):
            raise compile_error(access, f"T.Parallel accesses global tensor {name} in a way tilefold cannot copy as a "
                                        "block; copy a block of it into a local buffer with T.copy")
        pattern = access_pattern(access, self.par)
        shape = tuple(access.buffer.type.get_shape())
        grid = buffer_tile_grid(access.buffer, name, self.layouts)
        cb = get_attr(self.kernel, f"tt.cb.{name}")["index"]
        s = self.space
        kind = None
        if pattern is not None:
            if len(shape) == 2 and s.layout == "tile":
                if pattern == [("arg", s.row_arg), ("arg", s.col_arg)]:
                    kind = "tile"
                elif pattern == [("arg", s.col_arg), ("arg", s.row_arg)]:
                    kind = "transposed"
                elif pattern == [("arg", s.row_arg), ("const", 0)]:
                    kind = "col"
                elif pattern == [("const", 0), ("arg", s.col_arg)]:
                    kind = "row"
                elif pattern == [("const", 0), ("const", 0)]:
                    kind = "scalar"
            elif len(shape) == 2:
                axis = s.row_arg if s.layout == "col" else s.col_arg
                want = [("arg", axis), ("const", 0)] if s.layout == "col" else [("const", 0), ("arg", axis)]
                if pattern == want:
                    kind = "tile"
                elif pattern == [("const", 0), ("const", 0)]:
                    kind = "scalar"
            elif len(shape) == 1:
                layout = self.layouts.get(name, "row")
                if pattern == [("const", 0)]:
                    kind = "scalar"
                elif s.layout == "tile":
                    # over a space one row (column) wide, a row (column) vector is the space itself
                    ext = self.par.shape
                    if pattern == [("arg", s.row_arg)] and layout == "col":
                        kind = "tile" if store and ext[s.col_arg] == 1 else "col"
                    elif pattern == [("arg", s.col_arg)] and layout == "row":
                        kind = "tile" if store and ext[s.row_arg] == 1 else "row"
                elif pattern == [("arg", 0)] and layout == s.layout:
                    kind = "tile"
        if kind is None or (store and kind != "tile"):
            loop = "[i, j]" if s.layout == "tile" else "[i]"
            raise compile_error(access, f"T.Parallel {'stores into' if store else 'reads'} {name} with an index tilefold "
                                        f"cannot map onto whole tiles; use {loop} of the loop"
                                        f"{'' if store else ', v[i] / v[j] for a vector, or [0] / [0, 0]'}")
        return Leaf(name, cb, kind, grid)

    def lower(self, rewriter: PatternRewriter) -> None:
        par, kernel = self.par, self.kernel
        rows, cols = self.grid()
        ops = list(par.body.block.ops)
        leaves: dict = {}
        reads: list[str] = []
        stores = []
        writes: list[str] = []
        for o in ops:
            if isinstance(o, tile.LoadOp):
                leaf = self.classify(o, store=False)
                leaves[o.result] = leaf
                if leaf.buffer not in reads:
                    reads.append(leaf.buffer)
            elif isinstance(o, tile.StoreOp):
                leaf = self.classify(o, store=True)
                stores.append((o.value, leaf))
                if leaf.buffer in writes:
                    raise compile_error(o, f"T.Parallel stores into {leaf.buffer} twice; store each element once")
                writes.append(leaf.buffer)
        if not stores:
            raise compile_error(par, "this T.Parallel stores nothing; remove it or store its results")
        zero_cb = None
        if any(leaf.kind in ("col", "row", "scalar") for leaf in leaves.values()):
            zero_cb = get_attr(kernel, f"tt.cb.{constant_tile(kernel, ZERO_TILE, 0.0)}")["index"]
            reads.append(ZERO_TILE)
        index_cbs = {}
        if any(isinstance(o, tile.IndexValueOp) for o in ops):
            for dim in (0, 1):
                name = index_tile(kernel, dim)
                index_cbs[dim] = get_attr(kernel, f"tt.cb.{name}")["index"]
                reads.append(name)
        stmt = tile.StmtOp("eltwise", reads, writes)
        stmt.location = par.location
        rewriter.insert(stmt, InsertPoint.before(par))
        body, t = Emitter(stmt.body.block, par).loop(rows * cols, "t")
        t.name_hint = "t"
        math, pack = body.section()
        coords: dict[str, object] = {}

        def coordinate(which: str):
            """The tile row (``r``) or column (``c``) of tile t in the space."""
            if which not in coords:
                if which == "r":
                    coords[which] = t if cols == 1 else (math.c(0) if rows == 1 else
                                                         math(arith.DivUIOp(t, math.c(cols))).result)
                else:
                    coords[which] = t if rows == 1 else (math.c(0) if cols == 1 else
                                                         math(arith.RemUIOp(t, math.c(cols))).result)
            return coords[which]

        def leaf_index(leaf: Leaf):
            r_b, c_b = leaf.grid
            if leaf.kind == "tile" and leaf.grid == (rows, cols):
                return t
            if leaf.kind == "tile":
                return math.add(math.mul(coordinate("r"), math.c(c_b)), coordinate("c")) if c_b > 1 and r_b > 1 \
                    else (coordinate("c") if r_b == 1 else coordinate("r"))
            if leaf.kind == "transposed":
                return math.add(math.mul(coordinate("c"), math.c(c_b)), coordinate("r")) if c_b > 1 \
                    else coordinate("c")
            if leaf.kind == "col":
                return math.mul(coordinate("r"), math.c(c_b)) if c_b > 1 else coordinate("r")
            if leaf.kind == "row":
                return coordinate("c")
            return math.c(0)

        def index_terms(index) -> IndexTerms:
            return self.index_terms(index, math, coordinate)

        program = SfpuTile(self.capacity, math, leaf_index, leaves, zero_cb, par, index_terms, index_cbs,
                           self.dst_format)
        for slot, leaf in program.run(ops, [(v, leaf) for v, leaf in stores]):
            pack(api_call("pack_tile", [pack.c(slot), pack.c(leaf.cb), pack.c(0)]))
        rewriter.erase(par, safe_erase=False)

    def defined_outside(self, value) -> bool:
        owner = value.owner
        op = owner.parent_op() if hasattr(owner, "parent_op") and not hasattr(owner, "results") else owner
        while op is not None:
            if op is self.par:
                return False
            op = op.parent_op()
        return True

    def index_terms(self, index, math: Emitter, coordinate) -> IndexTerms:
        """An index of the body as ``row_coef · (row in tile) + col_coef · (column in tile) + offset``,
        the offset holding the tile's place (32 · its row / column) and the block's offsets."""
        form = affine_of(index)
        args = list(self.par.body.block.args)
        s = self.space
        axis_of = {s.row_arg: 0, s.col_arg: 1} if s.layout == "tile" else {0: 1 if s.layout == "row" else 0}
        coefs = [0, 0]
        static = form.const
        dynamic = []
        for v, c in form.terms.items():
            if v in args:
                axis = axis_of[args.index(v)]
                coefs[axis] += c
                coord = coordinate("r" if axis == 0 else "c")
                known = constant_int(coord)
                if known is not None:
                    static += 32 * c * known
                else:
                    dynamic.append(math.mul(coord, math.c(32 * c)))
            else:
                if not self.defined_outside(v):
                    raise compile_error(index.owner, "this index is not a sum of the T.Parallel indices times "
                                                     "constants plus a value computed outside the loop; compute "
                                                     "divisions and products of the indices outside T.Parallel")
                dynamic.append(v if c == 1 else math.mul(v, math.c(c)))
        if not dynamic:
            return IndexTerms(coefs[0], coefs[1], None, float(static))
        total = dynamic[0]
        for d in dynamic[1:]:
            total = math.add(total, d)
        if static:
            total = math.add(total, math.c(static))
        return IndexTerms(coefs[0], coefs[1], math(arith.SIToFPOp(total, f32)).result, 0.0)
