"""lower_to_sfpu (Stage C): ``T.Parallel`` element-wise bodies → SFPU ops over whole tiles.

Reads: ``tile.parallel`` ops over local buffers (after legalize_global_access), whose
extents are whole tiles; ``tt.cb.*``; ``tt.compute_config`` (DST capacity); ``tile.reduce``
ops (which way a vector is laid out).

An element-wise body computes the same function on every element, so it is computed tile
by tile: for each tile t of the output block, load the operands' tiles into DST, apply the
SFPU ops, pack the results. Operands index the block as ``X[i, j]`` (the block's tile t),
``v[i]`` (a column vector: one value per row, broadcast along the row) or ``v[j]`` (a row
vector); a 1-D ``T.Parallel`` works on vectors tile by tile. A vector is held as tiles
whose first column (``v[i]``, as a row reduction leaves it) or first row (``v[j]``) holds
the values. The expression → op mapping is :mod:`.sfpu_expressions`.

Writes, in place of each ``tile.parallel``::

    tile.stmt {kind = "eltwise", reads = [...], writes = [...]} {
      scf.for %t = 0 to <tiles>:
        tile.dst_section math { copy_tile / bcast loads, SFPU ops } pack { pack_tile ... }
    }

plus a zero tile CB (``zero_tile``) when a vector is broadcast.

Errors: extents that are not whole tiles or do not match the buffers; an index other than
``[i, j]`` / ``[i]`` / ``[j]``; a vector used along the wrong axis; more values alive
than DST holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tilefold.arch import get_arch
from tilefold.ir import tile
from tilefold.ir.ttkernel import api_call
from tilefold.passes.tilelang.affine import affine_of
from tilefold.passes.tilelang.attributes import get_attr, kernel_function
from tilefold.passes.tilelang.common import TILE, buffer_name, compile_error, insert_before, is_global
from tilefold.passes.tilelang.emitter import Emitter
from tilefold.passes.tilelang.internal_buffers import constant_tile
from tilefold.passes.tilelang.sfpu_expressions import Leaf, SfpuTile

ZERO_TILE = "zero_tile"


def vector_orientations(kernel) -> dict[str, str]:
    """1-D buffer → ``col`` (values down the first column, one per row) or ``row``."""
    orient: dict[str, str] = {}

    def set_orient(name: str, value: str, op) -> bool:
        old = orient.get(name)
        if old is None:
            orient[name] = value
            return True
        if old != value:
            raise compile_error(op, f"vector {name} is made both as a row vector and as a column vector; use two "
                                    "buffers")
        return False

    for op in kernel.walk():
        if isinstance(op, tile.ReduceOp):
            set_orient(buffer_name(op.dst, kernel), "col" if op.dim.value.data == 1 else "row", op)
    changed = True
    while changed:
        changed = False
        for par in kernel.walk():
            if not isinstance(par, tile.ParallelOp) or len(par.shape) != 1:
                continue
            found = {orient[buffer_name(o.buffer, kernel)] for o in par.walk()
                     if isinstance(o, tile.LoadOp) and buffer_name(o.buffer, kernel) in orient}
            if len(found) > 1:
                raise compile_error(par, "this T.Parallel mixes row vectors and column vectors")
            if found:
                value = found.pop()
                for o in par.walk():
                    if isinstance(o, tile.StoreOp):
                        changed |= set_orient(buffer_name(o.buffer, kernel), value, par)
    return orient


@dataclass(frozen=True)
class LowerToSFPU(ModulePass):
    """Element-wise ``T.Parallel`` bodies → tile-by-tile SFPU ops (see the module docstring)."""

    name = "lower_to_sfpu"
    arch: str = "wormhole_b0"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = kernel_function(op)
        config = get_attr(kernel, "tt.compute_config")
        capacity = get_arch(self.arch).dst_capacity(config["fp32_dest_acc_en"], config["dst_full_sync_en"])
        orient = vector_orientations(kernel)
        for par in [o for o in kernel.walk() if isinstance(o, tile.ParallelOp)]:
            self._lower(par, kernel, orient, capacity)

    def _classify(self, access, par: tile.ParallelOp, kernel, orient, store: bool) -> Leaf:
        name = buffer_name(access.buffer, kernel)
        if is_global(access.buffer, kernel):
            raise compile_error(access, f"T.Parallel accesses global tensor {name}; copy a block of it into a local "
                                        "buffer with T.copy")
        shape = tuple(access.buffer.type.get_shape())
        args = list(par.body.block.args)
        forms = [affine_of(v) for v in access.indices]
        plain = [f.const == 0 and len(f.terms) == 1 and next(iter(f.terms.values())) == 1 and
                 next(iter(f.terms)) in args for f in forms]
        which = [args.index(next(iter(f.terms))) if ok else None for f, ok in zip(forms, plain)]
        ext = par.shape
        kind = None
        if len(ext) == 2 and len(shape) == 2 and which == [0, 1]:
            kind = "tile"
            if shape != tuple(ext):
                raise compile_error(access, f"T.Parallel{tuple(ext)} indexes {name}{shape} with [i, j]; the block and "
                                            "the loop must have the same shape")
        elif len(ext) == 2 and len(shape) == 1 and which in ([0], [1]):
            kind = "col" if which == [0] else "row"
            if shape[0] != ext[which[0]]:
                raise compile_error(access, f"vector {name} has {shape[0]} values but T.Parallel{tuple(ext)} indexes "
                                            f"it along an axis of {ext[which[0]]}")
            want = orient.get(name)
            if want is not None and want != kind:
                axis = "i (one value per row)" if want == "col" else "j (one value per column)"
                raise compile_error(access, f"vector {name} is laid out for indexing by {axis}; index it that way "
                                            "or reduce along the other dim")
        elif len(ext) == 1 and len(shape) == 1 and which == [0]:
            kind = "tile"
            if shape[0] != ext[0]:
                raise compile_error(access, f"T.Parallel({ext[0]}) indexes {name}{shape}; the lengths must match")
        if kind is None or (store and kind != "tile"):
            loop = "[i, j]" if len(ext) == 2 else "[i]"
            raise compile_error(access, f"T.Parallel {'stores into' if store else 'reads'} {name} with an index that "
                                        f"is not {loop}{'' if store else ' (or v[i] / v[j] for a vector)'}; element "
                                        "bodies work on whole blocks, element for element")
        return Leaf(name, get_attr(kernel, f"tt.cb.{name}")["index"], kind)

    def _lower(self, par: tile.ParallelOp, kernel, orient, capacity: int) -> None:
        ext = par.shape
        if any(e % TILE for e in ext):
            raise compile_error(par, f"T.Parallel{tuple(ext)}: extents must be whole {TILE}-element tiles")
        rows, cols = (ext[0] // TILE, ext[1] // TILE) if len(ext) == 2 else (ext[0] // TILE, 1)
        ops = list(par.body.block.ops)
        leaves: dict = {}
        reads: list[str] = []
        stores = []
        writes: list[str] = []
        for o in ops:
            if isinstance(o, tile.LoadOp):
                leaf = self._classify(o, par, kernel, orient, store=False)
                leaves[o.result] = leaf
                if leaf.buffer not in reads:
                    reads.append(leaf.buffer)
            elif isinstance(o, tile.StoreOp):
                leaf = self._classify(o, par, kernel, orient, store=True)
                stores.append((o.value, leaf.cb))
                if leaf.buffer in writes:
                    raise compile_error(o, f"T.Parallel stores into {leaf.buffer} twice; store each element once")
                writes.append(leaf.buffer)
        if not stores:
            raise compile_error(par, "this T.Parallel stores nothing; remove it or store its results")
        zero_cb = None
        if any(leaf.kind != "tile" for leaf in leaves.values()):
            zero_cb = get_attr(kernel, f"tt.cb.{constant_tile(kernel, ZERO_TILE, 0.0)}")["index"]
            reads.append(ZERO_TILE)
        stmt = insert_before(par, tile.StmtOp("eltwise", reads, writes))
        stmt.location = par.location
        body, t = Emitter(stmt.body.block, par).loop(rows * cols, "t")
        t.name_hint = "t"
        math, pack = body.section()
        indices: dict[str, object] = {}

        def leaf_index(kind: str):
            if kind not in indices:
                if kind == "tile" or (kind == "col" and cols == 1):
                    indices[kind] = t
                elif kind == "col":
                    indices[kind] = math(arith.DivUIOp(t, math.c(cols))).result
                elif cols == 1:
                    indices[kind] = math.c(0)
                else:
                    indices[kind] = math(arith.RemUIOp(t, math.c(cols))).result
            return indices[kind]

        program = SfpuTile(capacity, math, leaf_index, leaves, zero_cb, par)
        for slot, cb in program.run(ops, stores):
            pack(api_call("pack_tile", [pack.c(slot), pack.c(cb), pack.c(0)]))
        Rewriter.erase_op(par, safe_erase=False)
