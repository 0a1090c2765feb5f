"""The rules that build IR for the TileLang primitives a kernel body calls.

Reads: the call's AST and the values of its arguments (through the builder's ``expr``).
Writes: ``tile`` ops — ``tile.alloc`` (``T.alloc_shared`` / ``alloc_fragment``),
``tile.copy``, ``tile.gemm``, ``tile.fill`` (``T.clear`` / ``T.fill``), ``tile.reduce``,
element ops inside ``T.Parallel`` (``T.exp``, ``T.max``, ``T.if_then_else`` ...) — and the
layout / schedule annotations. :class:`PrimitiveRules` is a mixin of
:class:`tilefold.frontend.tilelang.builder.KernelBuilder`; ``rule_<name>`` builds ``T.<name>``.

Errors (:class:`KernelError` at the call): buffers that are not whole 32×32 tiles, copy
regions whose offsets are not tile-aligned or whose extents differ from the local buffer,
gemm operands whose shapes do not chain, reductions whose output length does not match,
element functions outside ``T.Parallel``, primitives outside ``T.Kernel``.
"""

from __future__ import annotations

import ast

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from tilefold.frontend.tilelang import api
from tilefold.frontend.tilelang.types import DType, data_format_of, memref_type
from tilefold.frontend.tilelang.values import BufferRef, Elem, Index, Region
from tilefold.ir import tile
from tilefold.layout.formats import DataFormat

TILE = 32


class PrimitiveRules:
    """``rule_<name>(node, name_hint)`` for each TileLang primitive ``T.<name>``."""

    def arguments(self, node: ast.Call, names: tuple[str, ...], defaults: dict, what: str) -> dict:
        """Bind a primitive's positional and keyword arguments to ``names``."""
        if len(node.args) > len(names):
            raise self.error(node, f"{what} takes at most {len(names)} positional arguments ({', '.join(names)})")
        bound = {}
        for name, arg in zip(names, node.args):
            bound[name] = self.expr(arg)
        for kw in node.keywords:
            if kw.arg not in names and kw.arg not in defaults:
                raise self.error(kw, f"{what} has no argument {kw.arg!r}; it takes {', '.join(names)}")
            if kw.arg in bound:
                raise self.error(kw, f"{what} got {kw.arg!r} twice")
            bound[kw.arg] = self.expr(kw.value)
        for name in names:
            if name not in bound and name not in defaults:
                raise self.error(node, f"{what} needs its {name!r} argument")
        return {**defaults, **bound}

    def local_buffer(self, value, node, what: str) -> BufferRef:
        if isinstance(value, Region):
            if value.buffer.is_global or any(not s.is_constant or s.const for s in value.starts):
                raise self.error(node, f"{what} takes whole local buffers (T.alloc_shared / T.alloc_fragment), not "
                                       f"a region")
            value = value.buffer
        if not isinstance(value, BufferRef) or value.is_global:
            raise self.error(node, f"{what} takes a local buffer (T.alloc_shared / T.alloc_fragment), not "
                                   f"{self.describe(value)}")
        return value

    def require_kernel(self, node, what: str) -> None:
        if self.kernel_op is None:
            raise self.error(node, f"{what} outside `with T.Kernel(...)`; put it inside the kernel block")
        if self.parallel is not None:
            raise self.error(node, f"{what} inside T.Parallel; a T.Parallel body holds element statements only")

    # allocation

    def rule_alloc_shared(self, node, name_hint):
        return self.alloc(node, name_hint, "shared", "T.alloc_shared")

    def rule_alloc_fragment(self, node, name_hint):
        return self.alloc(node, name_hint, "fragment", "T.alloc_fragment")

    def rule_alloc_local(self, node, name_hint):
        return self.alloc(node, name_hint, "fragment", "T.alloc_local")

    def alloc(self, node, name_hint, scope: str, what: str) -> BufferRef:
        self.require_kernel(node, what)
        args = self.arguments(node, ("shape", "dtype", "scope"), {"dtype": "float32", "scope": None}, what)
        shape = args["shape"]
        shape = (shape,) if isinstance(shape, int) else shape
        if not isinstance(shape, (tuple, list)) or not all(isinstance(s, int) and not isinstance(s, bool)
                                                           for s in shape):
            raise self.error(node, f"{what} shape must be a tuple of integer constants, not {self.describe(shape)}")
        shape = tuple(shape)
        if not 1 <= len(shape) <= 2:
            raise self.error(node, f"{what} shape {shape}: local buffers are 1-D (one value per row or column) or "
                                   "2-D blocks")
        if any(s <= 0 or s % TILE for s in shape):
            fixed = tuple(-(-max(s, 1) // TILE) * TILE for s in shape)
            raise self.error(node, f"{what} shape {shape} is not made of whole {TILE}x{TILE} tiles; use multiples of "
                                   f"{TILE} such as {fixed}")
        fmt = data_format_of(args["dtype"], self.src.location(node), f"{what} dtype")
        name = self.unique_buffer_name(name_hint or scope)
        op = self.insert(tile.AllocOp(name, scope, memref_type(shape, fmt, scope)), node)
        op.result.name_hint = name
        return BufferRef(name, shape, fmt, scope, op.result)

    # copy

    def rule_copy(self, node, name_hint):
        self.require_kernel(node, "T.copy")
        args = self.arguments(node, ("src", "dst"), {"coalesced_width": None, "disable_tma": False,
                                                     "eviction_policy": None}, "T.copy")
        src, dst = args["src"], args["dst"]
        for side, value in (("src", src), ("dst", dst)):
            if not isinstance(value, (BufferRef, Region)):
                raise self.error(node, f"T.copy {side} must be a buffer or a region A[...], not {self.describe(value)}")
        src_global = (src.buffer if isinstance(src, Region) else src).is_global
        dst_global = (dst.buffer if isinstance(dst, Region) else dst).is_global
        if src_global and dst_global:
            raise self.error(node, "T.copy between two global tensors; copy through a local buffer")
        if not src_global and not dst_global:
            a = self.local_buffer(src, node, "T.copy")
            b = self.local_buffer(dst, node, "T.copy")
            if a.shape != b.shape:
                raise self.error(node, f"T.copy from {a.name} {a.shape} to {b.name} {b.shape}: shapes differ")
            self.insert(tile.CopyOp(a.value, b.value), node)
            return None
        local = self.local_buffer(dst if src_global else src, node, "T.copy")
        region = src if src_global else dst
        offsets = self.global_offsets(region, local, node)
        glob = region.buffer if isinstance(region, Region) else region
        if src_global:
            self.insert(tile.CopyOp(glob.value, local.value, offsets), node)
        else:
            self.insert(tile.CopyOp(local.value, glob.value, offsets), node)
        return None

    def global_offsets(self, region, local: BufferRef, node) -> list[SSAValue]:
        """Element offsets of a tile-aligned block of a global tensor whose trailing dims are the
        local buffer's shape (leading dims, if any, have extent 1)."""
        glob = region.buffer if isinstance(region, Region) else region
        if isinstance(region, BufferRef):
            region = Region(glob, [Index() for _ in glob.shape], list(glob.shape))
        rank, lrank = len(glob.shape), len(local.shape)
        if lrank != 2:
            raise self.error(node, f"T.copy between {glob.name} and the 1-D buffer {local.name}: copies move 2-D "
                                   "blocks of whole tiles; make the local buffer 2-D")
        if rank < 2:
            raise self.error(node, f"T.copy of the 1-D tensor {glob.name}: give it two dims (1, n)")
        want = [1] * (rank - 2) + list(local.shape)
        for d, (extent, need) in enumerate(zip(region.extents, want)):
            if extent is not None and extent != need:
                raise self.error(node, f"T.copy region of {glob.name} has extent {extent} in dim {d} but "
                                       f"{local.name} needs {need} (its shape is {local.shape})")
        for d in (rank - 2, rank - 1):
            start = region.starts[d]
            if not start.divisible_by(TILE):
                raise self.error(node, f"T.copy region of {glob.name} starts at {start!r} in dim {d}, which is not "
                                       f"tile-aligned; copy regions must start at multiples of {TILE}")
        for d in range(rank):
            start = region.starts[d]
            if start.is_constant and (start.const < 0 or start.const >= -(-glob.shape[d] // TILE) * TILE
                                      if d >= rank - 2 else start.const >= glob.shape[d]):
                raise self.error(node, f"T.copy region of {glob.name} starts at {start.const} in dim {d}, outside its "
                                       f"shape {glob.shape}")
        return [self.index_value(s, node) for s in region.starts]

    # tile compute ops

    def rule_gemm(self, node, name_hint):
        self.require_kernel(node, "T.gemm")
        args = self.arguments(node, ("A", "B", "C", "transpose_A", "transpose_B"), {
            "transpose_A": False, "transpose_B": False, "policy": None, "clear_accum": False, "k_pack": 1,
            "wg_wait": 0}, "T.gemm")
        a = self.local_buffer(args["A"], node, "T.gemm")
        b = self.local_buffer(args["B"], node, "T.gemm")
        c = self.local_buffer(args["C"], node, "T.gemm")
        ta, tb = bool(args["transpose_A"]), bool(args["transpose_B"])
        for buf in (a, b, c):
            if len(buf.shape) != 2:
                raise self.error(node, f"T.gemm takes 2-D buffers; {buf.name} is {buf.shape}")
        m, k = a.shape[::-1] if ta else a.shape
        k2, n = b.shape[::-1] if tb else b.shape
        if k != k2:
            raise self.error(node, f"T.gemm shape mismatch: A {a.name} is {a.shape}{' (transposed)' if ta else ''} "
                                   f"and B {b.name} is {b.shape}{' (transposed)' if tb else ''}; A's K ({k}) must "
                                   f"equal B's K ({k2})")
        if c.shape != (m, n):
            raise self.error(node, f"T.gemm shape mismatch: A @ B is {m}x{n} but C {c.name} is "
                                   f"{'x'.join(map(str, c.shape))}")
        if ta or tb:
            raise self.error(node, "T.gemm with transpose_A / transpose_B is not supported; copy the operand in the "
                                   "layout A (M x K) and B (K x N)")
        self.insert(tile.GemmOp(a.value, b.value, c.value, ta, tb, bool(args["clear_accum"])), node)

    def rule_clear(self, node, name_hint):
        self.require_kernel(node, "T.clear")
        args = self.arguments(node, ("buffer",), {}, "T.clear")
        buf = self.local_buffer(args["buffer"], node, "T.clear")
        self.insert(tile.FillOp(buf.value, 0.0), node)

    def rule_fill(self, node, name_hint):
        self.require_kernel(node, "T.fill")
        args = self.arguments(node, ("buffer", "value"), {}, "T.fill")
        buf = self.local_buffer(args["buffer"], node, "T.fill")
        value = args["value"]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(node, f"T.fill value must be a number constant, not {self.describe(value)}")
        self.insert(tile.FillOp(buf.value, float(value)), node)

    def rule_reduce_sum(self, node, name_hint):
        self.reduce(node, "sum")

    def rule_reduce_max(self, node, name_hint):
        self.reduce(node, "max")

    def reduce(self, node, kind: str) -> None:
        what = f"T.reduce_{kind}"
        self.require_kernel(node, what)
        args = self.arguments(node, ("buffer", "out", "dim", "clear"), {"dim": -1, "clear": True}, what)
        src = self.local_buffer(args["buffer"], node, what)
        dst = self.local_buffer(args["out"], node, what)
        dim = args["dim"]
        if len(src.shape) != 2:
            raise self.error(node, f"{what} reduces a 2-D buffer; {src.name} is {src.shape}")
        if dim not in (0, 1, -1):
            raise self.error(node, f"{what} dim must be 0 (down columns) or 1 / -1 (along rows), not {dim!r}")
        dim = 1 if dim == -1 else dim
        want = src.shape[1 - dim]
        if dst.shape != (want,):
            raise self.error(node, f"{what} of {src.name} {src.shape} along dim {dim} gives {want} values but "
                                   f"{dst.name} has shape {dst.shape}; make it ({want},)")
        self.insert(tile.ReduceOp(src.value, dst.value, kind, dim, bool(args["clear"])), node)

    # element functions

    def element_args(self, node: ast.Call, count: int, what: str) -> list:
        if node.keywords or len(node.args) != count:
            raise self.error(node, f"{what} takes {count} positional argument{'s' if count > 1 else ''}")
        if self.parallel is None:
            raise self.error(node, f"{what} is an element function: use it inside T.Parallel")
        return [self.expr(a) for a in node.args]

    def unary(self, fn: str, value, node) -> Elem:
        return Elem(self.insert(tile.MathOp(fn, [self.float_value(value, node)]), node).result)

    def min_max(self, which: str, args, node) -> Elem:
        a, b = (self.float_value(v, node) for v in args)
        cls = arith.MaximumfOp if which == "max" else arith.MinimumfOp
        return Elem(self.insert(cls(a, b), node).result)

    def rule_max(self, node, name_hint):
        return self.min_max("max", self.element_args(node, 2, "T.max"), node)

    def rule_min(self, node, name_hint):
        return self.min_max("min", self.element_args(node, 2, "T.min"), node)

    def rule_pow(self, node, name_hint):
        a, b = self.element_args(node, 2, "T.pow")
        return Elem(self.insert(tile.MathOp("pow", [self.float_value(a, node), self.float_value(b, node)]),
                                node).result)

    def rule_if_then_else(self, node, name_hint):
        cond, a, b = self.element_args(node, 3, "T.if_then_else")
        if not (isinstance(cond, Elem) and cond.is_bool):
            raise self.error(node, "T.if_then_else needs a comparison of element values as its condition")
        return Elem(self.insert(arith.SelectOp(cond.value, self.float_value(a, node), self.float_value(b, node)),
                                node).result)

    def rule_cast(self, node, name_hint):
        if self.parallel is None:
            raise self.error(node, "T.cast is an element function: use it inside T.Parallel")
        if len(node.args) != 2:
            raise self.error(node, "T.cast takes (value, dtype)")
        value = self.expr(node.args[0])
        dtype = self.expr(node.args[1])
        if not isinstance(dtype, (str, DType, DataFormat)):
            raise self.error(node, f"T.cast dtype {dtype!r} is not a dtype")
        data_format_of(dtype, self.src.location(node), "T.cast dtype")
        return Elem(self.float_value(value, node))

    # layout and schedule annotations

    def rule_annotate_tt_layout(self, node, name_hint):
        from tilefold.frontend.tilelang.prim_func import layout_entries

        self.require_kernel(node, "T.annotate_tt_layout")
        where = self.src.location(node)
        if node.args and len(node.args) == 1 and not node.keywords:
            entries = layout_entries(self.expr(node.args[0]), where)
        elif node.args and len(node.args) == 1:
            target = self.expr(node.args[0])
            if not isinstance(target, BufferRef):
                raise self.error(node, "T.annotate_tt_layout(A, memory=..., ...) names a tensor parameter first")
            entries = {target.name: {kw.arg: self.expr(kw.value) for kw in node.keywords}}
        else:
            raise self.error(node, "use T.annotate_tt_layout({A: {...}}) or T.annotate_tt_layout(A, memory=..., ...)")
        for name, spec in entries.items():
            buf = self.scope.get(name)
            if not isinstance(buf, BufferRef) or not buf.is_global:
                raise self.error(node, f"T.annotate_tt_layout names {name!r}, which is not a tensor parameter")
            self.layout[name] = dict(spec, loc=[where.file, where.line])

    def rule_annotate_tt_schedule(self, node, name_hint):
        self.require_kernel(node, "T.annotate_tt_schedule")
        where = self.src.location(node)
        values = {kw.arg: self.expr(kw.value) for kw in node.keywords}
        if node.args:
            if len(node.args) != 1 or not isinstance(first := self.expr(node.args[0]), dict):
                raise self.error(node, "use T.annotate_tt_schedule(policy=..., order=...) or a dict")
            values = {**first, **values}
        self.schedule = {**self.schedule, **values, "loc": [where.file, where.line]}


def _unary_rule(fn: str):
    def rule(self, node, name_hint):
        (value,) = self.element_args(node, 1, f"T.{fn}")
        return self.unary(fn, value, node)
    return rule


for _fn in api.UNARY_FUNCTIONS:
    setattr(PrimitiveRules, f"rule_{_fn}", _unary_rule(_fn))

USAGE = {
    "Kernel": "with T.Kernel(gx, gy) as (bx, by):",
    "serial": "for k in T.serial(n):",
    "Pipelined": "for k in T.Pipelined(n, num_stages=2):",
    "Parallel": "for i, j in T.Parallel(m, n):",
}
