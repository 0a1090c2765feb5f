"""legalize_global_access: element accesses of global tensors inside ``T.Parallel`` → block copies.

Reads: ``tile.parallel`` ops whose body loads or stores elements of global tensors, indexed
``G[..., r + i, c + j]`` with ``i``, ``j`` the parallel indices and ``r``, ``c`` multiples of 32
that do not depend on them (and leading indices, if any, independent of them too).

Writes: for each distinct (tensor, offsets) read, a ``shared`` block buffer of the parallel's
shape and a ``tile.copy`` into it before the parallel; for each one written, a ``fragment``
block buffer and a ``tile.copy`` out of it after the parallel; the loads and stores then
index the block buffers with ``[i, j]``. The kernel computes the same values, now in the
block form the Tenstorrent pipeline lowers (reader → compute → writer through CBs).

Errors (:class:`CompileError` at the access's line): a global access inside a 1-D
``T.Parallel``, an index not of the form ``r + i`` / ``c + j``, offsets that are not
tile-aligned, or extents that are not whole tiles.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tilefold.frontend.tilelang.types import format_of_memref, memref_type
from tilefold.ir import tile
from tilefold.passes.tilelang.affine import Affine, affine_of, materialize
from tilefold.passes.tilelang.attributes import kernel_function, param_names
from tilefold.passes.tilelang.common import (
    TILE,
    Inserter,
    buffer_name,
    compile_error,
    insert_after,
    is_global,
    remove_dead_arith,
)


def _outside(value, op) -> bool:
    owner = value.owner
    if isinstance(owner, Block):
        owner = owner.parent_op()
    while owner is not None:
        if owner is op:
            return False
        owner = owner.parent_op()
    return True


def _block_offsets(access, par: tile.ParallelOp, kernel) -> list[Affine]:
    """The element offsets of the block an access touches, or a CompileError."""
    name = buffer_name(access.buffer, kernel)
    ext = par.shape
    if len(ext) != 2:
        raise compile_error(access, f"global tensor {name} is accessed inside a 1-D T.Parallel; copy a block of it "
                                    "into a local buffer with T.copy first")
    if any(e % TILE for e in ext):
        raise compile_error(access, f"T.Parallel{tuple(ext)} accesses global tensor {name} directly, which needs "
                                    f"extents made of whole {TILE}x{TILE} tiles")
    i, j = par.body.block.args
    forms = [affine_of(v) for v in access.indices]
    lead, (row, col) = forms[:-2], forms[-2:]
    offsets = []
    for d, form in enumerate(lead):
        if form.coefficient(i) or form.coefficient(j):
            raise compile_error(access, f"index {d} of global tensor {name} depends on the T.Parallel indices; only "
                                        "the last two dims may")
        offsets.append(form)
    for form, var, other, what in ((row, i, j, "row"), (col, j, i, "column")):
        if form.coefficient(var) != 1 or form.coefficient(other):
            raise compile_error(access, f"the {what} index of global tensor {name} must be <offset> + "
                                        f"{var.name_hint or 'the T.Parallel index'} (one element per parallel index)")
        base = form.without(var)
        if not base.divisible_by(TILE):
            raise compile_error(access, f"the {what} offset of global tensor {name} is not a multiple of {TILE}; "
                                        "T.Parallel blocks of global tensors must be tile-aligned")
        offsets.append(base)
    for form in offsets:
        for v in form.terms:
            if not _outside(v, par):
                raise compile_error(access, f"the block offset of global tensor {name} is computed from a value "
                                            "defined inside T.Parallel; compute it outside")
    return offsets


def _key(name: str, offsets: list[Affine]) -> tuple:
    return (name, tuple((tuple(sorted((id(v), c) for v, c in f.terms.items())), f.const) for f in offsets))


class LegalizeGlobalAccess(ModulePass):
    """Global element accesses in ``T.Parallel`` → block copies (see the module docstring)."""

    name = "legalize_global_access"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = kernel_function(op)
        names = set(param_names(kernel)) | {o.buffer_name.data for o in kernel.walk() if isinstance(o, tile.AllocOp)}
        for par in [o for o in kernel.walk() if isinstance(o, tile.ParallelOp)]:
            self._legalize(par, kernel, names)
        remove_dead_arith(kernel)

    def _legalize(self, par: tile.ParallelOp, kernel: func.FuncOp, names: set[str]) -> None:
        accesses = [o for o in par.body.block.ops if isinstance(o, (tile.LoadOp, tile.StoreOp))
                    and is_global(o.buffer, kernel)]
        if not accesses:
            return
        shape = tuple(par.shape)
        reads: dict[tuple, tile.AllocOp] = {}
        writes: dict[tuple, tile.AllocOp] = {}
        offsets_of: dict[tuple, tuple] = {}
        before = Inserter(par)

        def fresh(hint: str) -> str:
            name, n = hint, 1
            while name in names:
                name, n = f"{hint}_{n}", n + 1
            names.add(name)
            return name

        for access in accesses:
            name = buffer_name(access.buffer, kernel)
            offsets = _block_offsets(access, par, kernel)
            key = _key(name, offsets)
            table, scope, suffix = (reads, "shared", "blk") if isinstance(access, tile.LoadOp) else \
                (writes, "fragment", "out")
            if key not in table:
                alloc = before(tile.AllocOp(local := fresh(f"{name}_{suffix}"), scope,
                                            memref_type(shape, format_of_memref(access.buffer.type), scope)))
                alloc.result.name_hint = local
                table[key] = alloc
                offsets_of[key] = (access.buffer, offsets)
            local_value = table[key].result
            i, j = par.body.block.args
            if isinstance(access, tile.LoadOp):
                new = tile.LoadOp(local_value, [i, j])
            else:
                new = tile.StoreOp(access.value, local_value, [i, j])
            new.location = access.location
            Rewriter.replace_op(access, new)
        for key, alloc in reads.items():
            glob, offsets = offsets_of[key]
            values = [materialize(f, before) for f in offsets]
            before(tile.CopyOp(glob, alloc.result, values))
        anchor = par
        for key, alloc in writes.items():
            glob, offsets = offsets_of[key]
            ops: list = []
            values = [materialize(f, lambda o: ops.append(o) or o) for f in offsets]
            ops.append(tile.CopyOp(alloc.result, glob, values))
            for o in ops:
                anchor = insert_after(anchor, o)
                o.location = par.location
