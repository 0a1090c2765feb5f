"""tensorize_tt: the tile-level matmul notation of TileLang-TT architecture §6 → ``tile.gemm``.

Reads: ``tile.for`` loops (serial or pipelined) whose body is one ``tile.parallel`` over an
E×E block (E a multiple of 32) holding exactly

    C[r + i, c + j] = C[r + i, c + j] + A[r + i, kx + j] * B[kx + i, c + j]

with global tensors A, B, C, ``kx = E·k + k0`` for the loop variable ``k``, and ``r``, ``c``
independent of ``i``, ``j`` and ``k`` (TileLang-TT architecture §6: ``C[bx*32+i, by*32+j] += A[bx*32+i,
kt*32+j] * B[kt*32+i, by*32+j]``). In this notation each term is a tile and ``*`` is the
tile product, so the loop is a blocked matmul ``C_tile = Σ_k A_tile(r, k) @ B_tile(k, c)``
that starts from zero, as the generated kernels of the TileLang-TT architecture show (C is written, not read).

Writes: the same computation in tile ops — before the loop ``tile.alloc`` of an A block, a
B block (shared, the tensors' dtype) and an accumulator (fragment, float32) and
``tile.fill`` 0 of it; in the loop ``tile.copy`` of the A and B blocks and ``tile.gemm``;
after the loop ``tile.copy`` of the accumulator to C.

Errors: none; loops that do not match are left to :mod:`.legalize_global_access`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.transforms.dead_code_elimination import region_dce

from tilefold.ir.tile_types import format_of_memref, memref_type
from tilefold.ir import tile
from tilefold.layout.formats import DataFormat
from tilefold.passes.tilelang.affine import Affine, affine_of, materialize
from tilefold.ir.attributes import kernel_function, param_names
from tilefold.passes.tilelang.common import inserter, buffer_name, insert_after, is_global

TILE = 32


@dataclass
class _Match:
    loop: tile.ForOp
    parallel: tile.ParallelOp
    a: object
    b: object
    c: object
    row: Affine      # r
    col: Affine      # c
    k: Affine        # kx
    extent: int


def _strip(value, arg) -> Affine | None:
    """``affine_of(value) - arg`` when ``value`` is ``x + arg`` with x independent of ``arg``."""
    form = affine_of(value)
    if form.coefficient(arg) != 1:
        return None
    return form.without(arg)


def _defined_outside(value, op: tile.ParallelOp) -> bool:
    owner = value.owner
    if isinstance(owner, Block):
        owner = owner.parent_op()
    while owner is not None:
        if owner is op:
            return False
        owner = owner.parent_op()
    return True


def _match(loop: tile.ForOp, kernel: func.FuncOp) -> _Match | None:
    ops = [op for op in loop.body.block.ops if not isinstance(op, arith.ConstantOp)]
    parallels = [op for op in ops if isinstance(op, tile.ParallelOp)]
    if len(parallels) != 1 or len(ops) != 1:
        return None
    par = parallels[0]
    ext = par.shape
    if len(ext) != 2 or ext[0] != ext[1] or ext[0] % TILE:
        return None
    i, j = par.body.block.args
    stores = [op for op in par.body.block.ops if isinstance(op, tile.StoreOp)]
    loads = [op for op in par.body.block.ops if isinstance(op, tile.LoadOp)]
    if len(stores) != 1 or len(loads) != 3:
        return None
    store = stores[0]
    add = store.value.owner
    if not isinstance(add, arith.AddfOp):
        return None
    lhs, rhs = add.lhs.owner, add.rhs.owner
    if isinstance(rhs, tile.LoadOp) and isinstance(lhs, arith.MulfOp):
        lhs, rhs = rhs, lhs
    if not (isinstance(lhs, tile.LoadOp) and isinstance(rhs, arith.MulfOp)):
        return None
    c_load, mul = lhs, rhs
    a_load, b_load = mul.lhs.owner, mul.rhs.owner
    if not (isinstance(a_load, tile.LoadOp) and isinstance(b_load, tile.LoadOp)):
        return None
    if c_load.buffer != store.buffer or not all(is_global(v, kernel) for v in (store.buffer, a_load.buffer,
                                                                                b_load.buffer)):
        return None
    if any(len(op.indices) != 2 for op in (store, c_load, a_load, b_load)):
        return None
    row = _strip(store.indices[0], i)
    col = _strip(store.indices[1], j)
    if row is None or col is None:
        return None
    c_row = _strip(c_load.indices[0], i)
    c_col = _strip(c_load.indices[1], j)
    if c_row is None or c_col is None or not (row.same_as(c_row) and col.same_as(c_col)):
        return None
    a_row = _strip(a_load.indices[0], i)
    a_k = _strip(a_load.indices[1], j)
    b_k = _strip(b_load.indices[0], i)
    b_col = _strip(b_load.indices[1], j)
    if None in (a_row, a_k, b_k, b_col):
        # the product may be written B * A
        a_load, b_load = b_load, a_load
        a_row = _strip(a_load.indices[0], i)
        a_k = _strip(a_load.indices[1], j)
        b_k = _strip(b_load.indices[0], i)
        b_col = _strip(b_load.indices[1], j)
        if None in (a_row, a_k, b_k, b_col):
            return None
    if not (a_row.same_as(row) and b_col.same_as(col) and a_k.same_as(b_k)):
        return None
    if not all(_defined_outside(v, par) for form in (row, col, a_k) for v in form.terms):
        return None
    extent = ext[0]
    k_iv = loop.iv
    for form in (row, col):
        if form.coefficient(k_iv) or form.coefficient(i) or form.coefficient(j) or not form.divisible_by(TILE):
            return None
    if a_k.coefficient(k_iv) != extent * loop.step.value.data or not a_k.divisible_by(TILE) or \
            a_k.coefficient(i) or a_k.coefficient(j):
        return None
    return _Match(loop, par, a_load.buffer, b_load.buffer, store.buffer, row, col, a_k, extent)


def _rewrite(m: _Match, kernel: func.FuncOp, names: set[str]) -> None:
    loop, e = m.loop, m.extent

    def alloc(hint: str, scope: str, fmt) -> tile.AllocOp:
        name, n = hint, 1
        while name in names:
            name, n = f"{hint}_{n}", n + 1
        names.add(name)
        op = tile.AllocOp(name, scope, memref_type((e, e), fmt, scope))
        op.result.name_hint = name
        return op

    before_loop = inserter(loop)
    a_s = before_loop(alloc(f"{buffer_name(m.a, kernel)}_tile", "shared", format_of_memref(m.a.type)))
    b_s = before_loop(alloc(f"{buffer_name(m.b, kernel)}_tile", "shared", format_of_memref(m.b.type)))
    acc = before_loop(alloc(f"{buffer_name(m.c, kernel)}_acc", "fragment", DataFormat.Float32))
    before_loop(tile.FillOp(acc.result, 0.0))
    in_body = inserter(m.parallel)
    row = materialize(m.row, in_body)
    col = materialize(m.col, in_body)
    k = materialize(m.k, in_body)
    in_body(tile.CopyOp(m.a, a_s.result, [row, k]))
    in_body(tile.CopyOp(m.b, b_s.result, [k, col]))
    in_body(tile.GemmOp(a_s.result, b_s.result, acc.result))
    Rewriter.erase_op(m.parallel, safe_erase=False)
    after: list = []
    row_out = materialize(m.row, lambda op: after.append(op) or op)
    col_out = materialize(m.col, lambda op: after.append(op) or op)
    after.append(tile.CopyOp(acc.result, m.c, [row_out, col_out]))
    anchor = loop
    for op in after:
        anchor = insert_after(anchor, op)
        op.location = loop.location


class TensorizeTT(ModulePass):
    """The TileLang-TT architecture §6 tile matmul notation → ``tile.gemm`` (see the module docstring)."""

    name = "tensorize-tt"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = kernel_function(op)
        names = {o.buffer_name.data for o in kernel.walk() if isinstance(o, tile.AllocOp)}
        names |= set(param_names(kernel))
        loops = [o for o in kernel.walk() if isinstance(o, tile.ForOp) and o.kind.data in ("serial", "pipelined")]
        for loop in loops:
            match = _match(loop, kernel)
            if match is not None:
                _rewrite(match, kernel, names)
        region_dce(kernel.body)
