"""legalize_global_access: element accesses of global tensors inside ``T.Parallel`` → block copies.

Reads: ``tile.parallel`` ops whose body loads or stores elements of global tensors. Each
index of such an access is ``base + p`` for one parallel index ``p`` (each parallel index in at
most one dim) or a ``base`` that does not depend on the parallel indices, the bases computed
outside the body: ``C[by * 64 + i, bx * 64 + j]``, ``Mean[bx * 8 + i]``,
``Q[b, s0 + i, h, j]``, ``B[j, i]``, ``Mean[row]`` (one element for the whole body).

Writes: for each distinct (tensor, bases) read, a ``shared`` block buffer whose dims are the
dims the parallel indices run along (their extents, in the tensor's dim order) and a
``tile.copy`` into it before the parallel; for each one written, a ``fragment`` block buffer
and a ``tile.copy`` out of it after the parallel; the loads and stores then index the block
buffers with those parallel indices (``B[j, i]`` gives a block indexed ``[j, i]``, read
transposed). The kernel computes the same values, now in the block form the Tenstorrent
pipeline lowers (reader → compute → writer through CBs).

Errors (:class:`CompileError` at the access's line): an index that is not ``base + p`` or
``base``, a parallel index used in two dims, an index computed per element inside the body (a
gather, such as an im2col written element by element: the message says to copy rows or blocks).
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block
from xdsl.passes import ModulePass
from xdsl.builder import Builder
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.dead_code_elimination import region_dce

from tilefold.ir.tile_types import format_of_memref, memref_type
from tilefold.ir import tile
from tilefold.passes.tilelang.affine import Affine, affine_of, constant_op, materialize
from tilefold.ir.attributes import kernel_function, param_names
from tilefold.passes.tilelang.common import (
    inserter,
    buffer_name,
    compile_error,
    insert_after,
    is_global,
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


def _block(access, par: tile.ParallelOp, kernel) -> tuple[list[Affine], list[int], list[int]]:
    """(bases per global dim, the global dims the block's dims run along, the parallel index of
    each block dim) of an access, or a CompileError."""
    name = buffer_name(access.buffer, kernel)
    args = list(par.body.block.args)
    offsets: list[Affine] = []
    dims: list[int] = []
    which: list[int] = []
    for d, v in enumerate(access.indices):
        form = affine_of(v)
        used = [k for k, a in enumerate(args) if form.coefficient(a)]
        if len(used) > 1 or (used and form.coefficient(args[used[0]]) != 1):
            if _computed_inside(v, par):
                raise compile_error(access, _gather(name, access, d))
            raise compile_error(access, f"index {d} of global tensor {name} must be <offset> + one T.Parallel index "
                                        "(one element per index), or an offset that does not depend on them")
        if used:
            if used[0] in which:
                raise compile_error(access, f"global tensor {name} uses one T.Parallel index in two dims")
            dims.append(d)
            which.append(used[0])
            form = form.without(args[used[0]])
        for s in form.terms:
            if not _outside(s, par):
                raise compile_error(access, _gather(name, access, d))
        offsets.append(form)
    last = len(access.indices) - 1
    if not dims or dims[-1] != last:
        dims.append(last)         # a block of one column of the tensor: a unit last dim
        which.append(-1)
    return offsets, dims, which


def _computed_inside(value, par: tile.ParallelOp) -> bool:
    """Whether an index is computed by an op inside the T.Parallel body (not only scaled / summed)."""
    form = affine_of(value)
    return any(not _outside(s, par) and s not in par.body.block.args for s in form.terms)


def _gather(name: str, access, dim: int) -> str:
    """The error for an element access whose position is computed per element (a gather / scatter)."""
    verb = "read" if isinstance(access, tile.LoadOp) else "written"
    return (f"global tensor {name} is {verb} at an index computed per element (dim {dim}: a gather); Tensix "
            "cores move tensors by 32x32 tiles and 16-element face rows, not element by element, so each index "
            "of a global tensor in T.Parallel is <offset> + one T.Parallel index, the offset computed outside "
            "it; move whole rows or blocks with T.copy instead (a convolution: one T.copy of "
            "data[n, oh + kh, kw:kw + OW, :] per window position, as examples/tilelang/convolution.py does)")


def _key(name: str, offsets: list[Affine], which: list[int]) -> tuple:
    return (name, tuple(which), tuple((tuple(sorted((id(v), c) for v, c in f.terms.items())), f.const)
                                      for f in offsets))


class LegalizeGlobalAccess(ModulePass):
    """Global element accesses in ``T.Parallel`` → block copies (see the module docstring)."""

    name = "legalize-global-access"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = kernel_function(op)
        names = set(param_names(kernel)) | {o.buffer_name.data for o in kernel.walk() if isinstance(o, tile.AllocOp)}
        for par in [o for o in kernel.walk() if isinstance(o, tile.ParallelOp)]:
            self._legalize(par, kernel, names)
        region_dce(kernel.body)

    def _legalize(self, par: tile.ParallelOp, kernel: func.FuncOp, names: set[str]) -> None:
        accesses = [o for o in par.body.block.ops if isinstance(o, (tile.LoadOp, tile.StoreOp))
                    and is_global(o.buffer, kernel)]
        if not accesses:
            return
        reads: dict[tuple, tile.AllocOp] = {}
        writes: dict[tuple, tile.AllocOp] = {}
        blocks: dict[tuple, tuple] = {}
        before = inserter(par)
        args = list(par.body.block.args)

        def fresh(hint: str) -> str:
            name, n = hint, 1
            while name in names:
                name, n = f"{hint}_{n}", n + 1
            names.add(name)
            return name

        for access in accesses:
            name = buffer_name(access.buffer, kernel)
            offsets, dims, which = _block(access, par, kernel)
            key = _key(name, offsets, which)
            table, scope, suffix = (reads, "shared", "blk") if isinstance(access, tile.LoadOp) else \
                (writes, "fragment", "out")
            if key not in table:
                shape = [par.shape[k] if k >= 0 else 1 for k in which]
                alloc = before(tile.AllocOp(local := fresh(f"{name}_{suffix}"), scope,
                                            memref_type(shape, format_of_memref(access.buffer.type), scope)))
                alloc.result.name_hint = local
                table[key] = alloc
                blocks[key] = (access.buffer, offsets, dims)
            local_value = table[key].result
            zero = None
            if -1 in which:
                zero = constant_op(0)
                Builder(InsertPoint.before(access)).insert(zero)
            indices = [args[k] if k >= 0 else zero.result for k in which]
            if isinstance(access, tile.LoadOp):
                new = tile.LoadOp(local_value, indices)
            else:
                new = tile.StoreOp(access.value, local_value, indices)
            new.location = access.location
            Rewriter.replace_op(access, new)
        for key, alloc in reads.items():
            glob, offsets, dims = blocks[key]
            values = [materialize(f, before) for f in offsets]
            before(tile.CopyOp(glob, alloc.result, values, _dims(dims, len(offsets))))
        anchor = par
        for key, alloc in writes.items():
            glob, offsets, dims = blocks[key]
            ops: list = []
            values = [materialize(f, lambda o: ops.append(o) or o) for f in offsets]
            ops.append(tile.CopyOp(alloc.result, glob, values, _dims(dims, len(offsets))))
            for o in ops:
                anchor = insert_after(anchor, o)
                o.location = par.location


def _dims(dims: list[int], rank: int) -> list[int] | None:
    """The copy's ``dims``, or None when they are the tensor's trailing dims (the default)."""
    return None if dims == list(range(rank - len(dims), rank)) else dims
