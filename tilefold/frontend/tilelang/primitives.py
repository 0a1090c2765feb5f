"""The rules that build IR for the TileLang primitives a kernel body calls.

Reads: the call's AST and the values of its arguments (through the builder's ``expr``).
Writes: ``tile`` ops — ``tile.alloc`` (``T.alloc_shared`` / ``alloc_fragment``),
``tile.copy``, ``tile.gemm``, ``tile.fill`` (``T.clear`` / ``T.fill``), ``tile.reduce``,
``tile.transpose``, ``tile.cumsum``, element ops inside ``T.Parallel`` — and the layout /
schedule annotations. :class:`PrimitiveRules` is a mixin of
:class:`tilefold.frontend.tilelang.builder.KernelBuilder`; ``rule_<name>`` builds ``T.<name>``.

Some primitives are built from others, so that the pipeline lowers one form:

- ``T.gemm(transpose_A / transpose_B=True)``: the operand is transposed into a fragment
  (``tile.transpose``) and multiplied as is. ``policy=`` / ``GemmWarpPolicy`` are accepted and
  ignored (one matrix engine per core).
- ``T.reduce_min`` is ``-reduce_max(-x)``, ``T.reduce_abssum`` / ``T.reduce_absmax`` reduce
  ``abs(x)``: an element-wise ``T.Parallel`` into a fragment, then the reduction.
- A float32 ``T.reduce_max`` whose output the kernel compares with ``==`` / ``!=`` is exact: three
  reductions, each of what the previous one left (:meth:`PrimitiveRules.exact_max`).
- ``T.reshape`` of a local buffer that ``T.copy`` loaded from a tensor (directly or through local
  copies) loads the same elements again from a row-major view of that tensor.
- A global-to-global ``T.copy`` goes through a local buffer of the region's shape; ``T.fill``
  of a global tensor fills a fragment and copies it out.
- ``T.atomic_add(dst, v)`` is ``dst = dst + v`` (``T.atomic_max`` / ``T.atomic_min``: the maximum /
  minimum); the tensor is listed in ``tile.atomic`` so
  that the pipeline runs the grid blocks that add into one block of it on one core, in turn.

Errors (:class:`KernelError` at the call): shapes that do not match, copy regions that do
not run along the tensor's last dim, arguments a primitive does not take, primitives outside
``T.Kernel``.
"""

from __future__ import annotations

import ast
import math

import numpy as np

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from tilefold.errors import KernelError
from tilefold.frontend.tilelang import api
from tilefold.frontend.tilelang.dtypes import DType, canonical_name, data_format_of
from tilefold.frontend.tilelang.types import TensorType, tensor_type
from tilefold.frontend.source import FunctionSource
from tilefold.layout.formats import DataFormat
from tilefold.ir.tile_types import memref_type
from tilefold.frontend.tilelang.values import BufferRef, ConstVar, Elem, Index, Region, Symbol
from tilefold.ir import tile

TILE = 32
# primitives that only read their arguments (the element functions, selections, conditions, views)
_READ_ONLY_CALLS = {"reshape", "view", "Tensor", "if_then_else", "any_of", "all_of", "max", "min", "cast", "Cast",
                    "clamp", "pow", *api.UNARY_FUNCTIONS}
_GEMM_OPTIONS = {"transpose_A": False, "transpose_B": False, "policy": None, "clear_accum": False, "k_pack": 1,
                 "wg_wait": 0, "use_wgmma": None, "mbar": None}


def layout_entries(layout, where) -> dict[str, dict]:
    """``{name_or_buffer: {field: value}}`` → ``{name: {field: value}}``, checked."""
    if not isinstance(layout, dict):
        raise KernelError("annotate_tt_layout takes a dict {buffer: {memory=..., layout=..., nd_shard=...}}", where)
    out = {}
    for name, value in layout.items():
        key = getattr(name, "name", name)
        if not isinstance(key, str) or not isinstance(value, dict):
            raise KernelError(f"annotate_tt_layout: entry {name!r} must map a tensor to a dict of layout fields "
                              "(memory, layout, nd_shard, ...)", where)
        out[key] = dict(value)
    return out


class PrimitiveRules:
    """``rule_<name>(node, name_hint)`` for each TileLang primitive ``T.<name>``."""

    def arguments(self, node: ast.Call, names: tuple[str, ...], defaults: dict, what: str) -> dict:
        """Bind a primitive's positional and keyword arguments (``**dict`` expanded) to ``names``."""
        if len(node.args) > len(names):
            raise self.error(node, f"{what} takes at most {len(names)} positional arguments ({', '.join(names)})")
        bound = {}
        for name, arg in zip(names, node.args):
            bound[name] = self.expr(arg)
        for key, value in self.keywords(node):
            if key not in names and key not in defaults:
                raise self.error(node, f"{what} has no argument {key!r}; it takes {', '.join([*names, *defaults])}")
            if key in bound:
                raise self.error(node, f"{what} got {key!r} twice")
            bound[key] = value
        for name in names:
            if name not in bound and name not in defaults:
                raise self.error(node, f"{what} needs its {name!r} argument")
        return {**defaults, **bound}

    def local_buffer(self, value, node, what: str) -> BufferRef:
        """A whole local buffer (a region ``X[b, :, :]`` of a 3-D one is its block)."""
        if isinstance(value, Region) and not value.buffer.is_global:
            buf = value.buffer
            starts = self.strip_leading(buf, list(value.starts), node)
            lead = len(buf.shape) - len(starts)
            extents = value.extents[lead:]
            full = all(s.is_constant and s.const == 0 for s in starts) and \
                all(e is None or e == d for e, d in zip(extents, buf.shape[lead:]))
            if not full:
                raise self.error(node, f"{what} takes whole local buffers (T.alloc_shared / T.alloc_fragment), not "
                                       f"a part of {buf.name}")
            value = buf
        if not isinstance(value, BufferRef) or value.is_global:
            raise self.error(node, f"{what} takes a local buffer (T.alloc_shared / T.alloc_fragment), not "
                                   f"{self.describe(value)}")
        return value

    def require_kernel(self, node, what: str) -> None:
        if self.kernel_op is None:
            raise self.error(node, f"{what} outside `with T.Kernel(...)`; put it inside the kernel block")
        if self.parallel is not None:
            raise self.error(node, f"{what} inside T.Parallel; a T.Parallel body holds element statements only")

    def shape_of(self, value) -> tuple[int, ...]:
        """The (IR) shape of a local buffer: a 3-D one keeps one block."""
        return tuple(value.value.type.get_shape())

    # -- eager kernels ------------------------------------------------------------------------------

    def rule_const(self, node, name_hint):
        if self.eager is None:
            raise self.error(node, "T.const names the shapes of an eager kernel (a @tilefold.jit function whose body "
                                   "declares A: T.Tensor(...)); inside @T.prim_func use Python integers")
        args = [self.expr(a) for a in node.args]
        if not args or not isinstance(args[0], str):
            raise self.error(node, 'T.const takes the names as a string: M, N = T.const("M, N")')
        names = [n for n in args[0].replace(",", " ").split() if n]
        values = tuple(self.eager.constants.get(n, ConstVar(n)) for n in names)
        return values[0] if len(values) == 1 else values

    rule_dynamic = rule_const
    rule_symbolic = rule_const

    def rule_empty(self, node, name_hint):
        if self.eager is None:
            raise self.error(node, "T.empty makes an output tensor of an eager kernel; in a @T.prim_func declare the "
                                   "output as a parameter")
        args = [self.expr(a) for a in node.args]
        kwargs = dict(self.keywords(node))
        dtype = kwargs.pop("dtype", None)
        if args and isinstance(args[-1], str) and dtype is None:
            dtype = args.pop()
        shape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)
        ttype = tensor_type(shape, dtype or "float32", self.src.location(node))
        if any(isinstance(d, ConstVar) for d in ttype.shape):
            raise self.error(node, f"T.empty shape {ttype.shape} uses a T.const with no value yet")
        name = self.unique_buffer_name(name_hint or f"out{len(self.outputs)}")
        ref = BufferRef(name, ttype.shape, ttype.dtype, "global", None, ttype.dtype_name)
        self.outputs.append(ref)
        return ref

    def rule_Tensor(self, node, name_hint):
        args = [self.expr(a) for a in node.args]
        kwargs = dict(self.keywords(node))
        shape = args[0] if args else kwargs.get("shape")
        dtype = args[1] if len(args) > 1 else kwargs.get("dtype", "float32")
        ttype = tensor_type(shape, dtype, self.src.location(node))
        data = args[2] if len(args) >= 3 else kwargs.get("data")
        if data is None:
            return ttype
        if not (isinstance(data, tuple) and len(data) == 2 and data[0] == "data"):
            raise self.error(node, f"T.Tensor(shape, dtype, data): data must be X.data of a kernel tensor X, not "
                                   f"{self.describe(data)}")
        return self.tensor_view(data[1], ttype, name_hint, node)

    def rule_reshape(self, node, name_hint):
        args = self.arguments(node, ("src", "shape"), {}, "T.reshape")
        src = args["src"]
        if isinstance(src, Region) and not src.buffer.is_global:
            src = self.local_buffer(src, node, "T.reshape")
        if not isinstance(src, BufferRef):
            raise self.error(node, f"T.reshape takes a kernel tensor or a local buffer, not {self.describe(src)}")
        ttype = tensor_type(args["shape"], src.dtype_name or canonical_name(src.dtype), self.src.location(node))
        if not src.is_global:
            return self.reshape_local(src, ttype.shape, name_hint, node)
        return self.tensor_view(src, ttype, name_hint, node)

    def reshape_local(self, local: BufferRef, shape, name_hint, node) -> BufferRef:
        """``T.reshape`` of a shared / fragment buffer that a ``T.copy`` from a tensor filled. Its tiles
        cannot be renumbered in place, so the reshaped buffer is filled by a copy of the same elements
        from a row-major view of that tensor (which the kernel does not write)."""
        why = (f"T.reshape of {local.describe()}: a local buffer lives in 32x32 tiles, so a reshape moves "
               "elements between tiles; tilefold reshapes a local buffer only when one T.copy from a kernel tensor "
               "filled it and nothing writes either of them afterwards")
        what = "; reshape the tensor instead: T.copy(T.reshape(A, shape)[...], buffer)"
        shape = tuple(int(d) for d in shape)
        if math.prod(shape) != math.prod(local.shape):
            raise self.error(node, f"T.reshape of {local.name} {local.shape} to {shape}: "
                                   f"{math.prod(shape)} elements, not {math.prod(local.shape)}")
        loaded = self.loaded_from.get(local.name)
        if loaded is None:
            raise self.error(node, why + what)
        region, copies = loaded
        glob = region.buffer
        target = name_hint or f"{local.name}_reshaped"
        outs = [c.args[1] for c in copies]
        if not all(isinstance(o, ast.Name) for o in outs) or \
                any(self.written_anywhere(o.id, c, getattr(c, "origin", None)) for o, c in zip(outs, copies)) or \
                self.written_anywhere(target) or self.written_anywhere(self.tensor_name_of(copies[0].args[0])):
            raise self.error(node, why + what)
        base, base_shape = self.views.get(glob.name, (glob, None))
        gshape = tuple(base_shape or glob.shape)
        _, dims = self.global_offsets(region, local, node)
        rank, lshape = len(gshape), self.shape_of(local)
        dims = dims if dims is not None else list(range(rank - len(lshape), rank))
        extents = [1] * rank
        for ld, gd in enumerate(dims):
            if gd >= 0:
                extents[gd] = lshape[ld]
        nonunit = [d for d in range(rank) if extents[d] != 1]
        first = nonunit[0] if nonunit else rank - 1
        if any(not region.starts[d].is_constant or region.starts[d].const != 0 or extents[d] != gshape[d]
               for d in range(first + 1, rank)):
            raise self.error(node, f"{why}, and {local.name} holds a block of {glob.name} that is not one run of "
                                   f"its elements{what}")
        linear, stride = Index(), 1
        for d in reversed(range(rank)):
            linear = linear + region.starts[d] * stride
            stride *= gshape[d]
        row = math.prod(shape[1:])
        if math.prod(gshape) % row or not linear.divisible_by(row):
            raise self.error(node, f"{why}, and {local.name} does not start a row of the shape {shape} in "
                                   f"{glob.name}{what}")
        dtype = local.dtype_name or canonical_name(local.dtype)
        view = self.tensor_view(glob, tensor_type((math.prod(gshape) // row, *shape[1:]), dtype,
                                                  self.src.location(node)), f"{glob.name}_rows", node)
        out = self.new_buffer(shape, dtype, local.scope, target, node)
        rows = Region(view, [linear // row] + [Index() for _ in shape[1:]], [None] * len(shape))
        offsets, copy_dims = self.global_offsets(rows, out, node)
        self.insert(tile.CopyOp(view.value, out.value, offsets, copy_dims), node)
        return out

    def tensor_name_of(self, arg: ast.expr) -> str | None:
        while isinstance(arg, ast.Subscript):
            arg = arg.value
        return arg.id if isinstance(arg, ast.Name) else None

    def written_anywhere(self, name: str | None, but: ast.Call | None = None, origin: ast.AST | None = None) -> bool:
        """Whether a statement or a primitive call (other than ``but``) writes the buffer named ``name``:
        an element store, or an argument of a primitive that is not one it only reads."""
        if name is None:
            return True
        for tree in self.source_trees():
            for n in ast.walk(tree):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(
                    n, (ast.AugAssign, ast.AnnAssign)) else []
                if n is not origin and any(isinstance(t, ast.Subscript) and self.tensor_name_of(t) == name
                                           for t in targets):
                    return True
                if isinstance(n, ast.Call) and n is not but and isinstance(n.func, ast.Attribute) and \
                        n.func.attr not in _READ_ONLY_CALLS:
                    args = [*n.args, *(k.value for k in n.keywords)]
                    sources = args[:1] if n.func.attr in ("copy", "gemm", "reduce_sum", "reduce_max", "reduce_min",
                                                         "reduce_abssum", "reduce_absmax", "cumsum") else []
                    if n.func.attr == "gemm":
                        sources = args[:2]
                    if any(self.tensor_name_of(a) == name for a in args if not any(a is x for x in sources)):
                        return True
        return False

    def rule_view(self, node, name_hint):
        args = self.arguments(node, ("src", "shape", "dtype"), {"shape": None, "dtype": None}, "T.view")
        src = args["src"]
        if not isinstance(src, BufferRef):
            raise self.error(node, f"T.view takes a kernel tensor, not {self.describe(src)}")
        same = src.dtype_name or canonical_name(src.dtype)
        dtype = args["dtype"] if args["dtype"] is not None else same
        if canonical_name(dtype) != same:
            raise self.error(node, f"T.view of {src.name} ({same}) as {canonical_name(dtype)}: tiles of different "
                                   "dtypes hold different bytes, so views keep the dtype; convert with T.copy or "
                                   "T.Cast instead")
        shape = args["shape"] if args["shape"] is not None else src.shape
        return self.tensor_view(src, tensor_type(shape, dtype, self.src.location(node)), name_hint, node)

    def tensor_view(self, base: BufferRef, ttype, name_hint, node) -> BufferRef:
        """``T.Tensor(shape, dtype, X.data)`` / ``T.reshape(X, shape)``: X's elements in row-major
        order under another shape. A tiled tensor cannot be reshaped in place, so the view is a
        tensor of its own that the host fills from (or copies back into) X, reshaped."""
        if not base.is_global:
            raise self.error(node, f"views of {base.describe()}: only kernel tensors (parameters) have views; "
                                   "allocate a local buffer of the shape you need")
        base = self.views.get(base.name, (base, None))[0]
        if math.prod(ttype.shape) != math.prod(base.shape):
            raise self.error(node, f"a view of {base.name} {base.shape} as {ttype.shape} has "
                                   f"{math.prod(ttype.shape)} elements, not {math.prod(base.shape)}")
        if ttype.dtype != base.dtype:
            raise self.error(node, f"a view of {base.name} ({base.dtype_name or canonical_name(base.dtype)}) in "
                                   f"{ttype.dtype_name}: views keep the tensor's dtype; cast when copying instead")
        name = self.unique_buffer_name(name_hint or f"{base.name}_view")
        ref = BufferRef(name, ttype.shape, base.dtype, "global", None, base.dtype_name)
        self.globals.append(ref)
        self.views[name] = (base, ttype.shape)
        if self.function is not None:
            block = self.function.body.block
            ref.value = block.insert_arg(memref_type(ref.shape, ref.dtype), len(block.args))
            ref.value.name_hint = name
            self.function.update_function_type()
        return ref

    # -- hints with no Tensix meaning ------------------------------------------------------------------

    def rule_use_swizzle(self, node, name_hint):
        args = self.arguments(node, ("panel_size", "order", "enable"), {"order": "row", "enable": True},
                              "T.use_swizzle")
        self.swizzle = {"panel_size": int(args["panel_size"]), "order": str(args["order"]),
                        "enable": bool(args["enable"])}

    def rule_get_thread_binding(self, node, name_hint):
        args = self.arguments(node, ("dim",), {"dim": 0}, "T.get_thread_binding")
        dim = args["dim"]
        extent = self.threads[dim] if dim < len(self.threads) else 1
        return Index({Symbol(None, f"thread{dim}", "thread", extent): 1})

    def _no_op(self, node, name_hint):
        for a in node.args:
            self.expr(a)
        self.keywords(node)

    def rule_annotate_layout(self, node, name_hint):
        """GPU shared-memory / fragment layouts (``tilelang.layout.make_swizzled_layout(buf)`` ...):
        Tensix buffers are tiles in circular buffers, so the layouts are not even evaluated."""

    def rule_annotate_safe_value(self, node, name_hint):
        """``T.annotate_safe_value({A: v})``: reads of A past its end give v. A tensor's tiles
        are padded on the device, so the host fills A's padding with v (reads past the padding
        are out of bounds, as without the annotation)."""
        args = [self.expr(a) for a in node.args]
        self.keywords(node)
        if len(args) != 1 or not isinstance(args[0], dict):
            raise self.error(node, "T.annotate_safe_value takes a dict {tensor: value}")
        for key, value in args[0].items():
            buf = self.scope.get(key) if isinstance(key, str) else key    # dict keys are buffer names
            if not isinstance(buf, BufferRef) or not buf.is_global:
                raise self.error(node, f"T.annotate_safe_value: {self.describe(buf)} is not a kernel tensor")
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.error(node, f"T.annotate_safe_value: the value for {buf.name} must be a number, not "
                                       f"{self.describe(value)}")
            self.safe_values[buf.name] = float(value)

    rule_disable_warp_group_reg_alloc = _no_op
    rule_sync_threads = rule_no_set_max_nreg = rule_finalize_reducer = _no_op

    # -- allocation -----------------------------------------------------------------------------------

    def rule_alloc_shared(self, node, name_hint):
        return self.alloc(node, name_hint, "shared", "T.alloc_shared")

    def rule_alloc_fragment(self, node, name_hint):
        return self.alloc(node, name_hint, "fragment", "T.alloc_fragment")

    def rule_alloc_local(self, node, name_hint):
        return self.alloc(node, name_hint, "fragment", "T.alloc_local")

    def rule_alloc_global(self, node, name_hint):
        """A scratch tensor in DRAM that the kernel's grids pass data through: a parameter the
        caller never sees (:mod:`tilefold.run.sequence` allocates it, zeroed, for each call)."""
        args = self.arguments(node, ("shape", "dtype"), {"dtype": "float32"}, "T.alloc_global")
        if self.function is not None:
            raise self.error(node, "T.alloc_global makes a tensor the kernel's grids share: call it before the first "
                                   "`with T.Kernel(...)`")
        shape = args["shape"]
        ttype = tensor_type((shape,) if isinstance(shape, int) else shape, args["dtype"], self.src.location(node))
        name = name_hint or f"scratch{len(self.scratch_names)}"
        if name in self.buffer_names:
            name = self.unique_buffer_name(name)
        self.scratch_names.append(name)
        return self.declare_global(name, ttype)

    def rule_alloc_reducer(self, node, name_hint):
        """A fragment; ``op`` / ``replication`` only describe the GPU's per-thread replicas."""
        call = ast.Call(node.func, node.args[:2], [k for k in node.keywords if k.arg in ("shape", "dtype")])
        return self.alloc(ast.copy_location(call, node), name_hint, "fragment", "T.alloc_reducer")

    def copy_row(self, node) -> bool:
        """``T.copy(L[k, :], v)``: row k of a 2-D local buffer into a local vector, an element loop
        ``v[j] = L[k, j]`` (the row read as :meth:`row_reads` makes it). Returns whether it was."""
        if self.parallel is not None or len(node.args) != 2:
            return False
        src, dst = node.args
        if not (isinstance(src, ast.Subscript) and isinstance(src.value, ast.Name) and
                isinstance(src.slice, ast.Tuple) and len(src.slice.elts) == 2 and isinstance(dst, ast.Name)):
            return False
        row, col = src.slice.elts
        if isinstance(row, ast.Slice) or not (isinstance(col, ast.Slice) and col.lower is None and col.upper is None):
            return False
        buf, vec = self.scope.get(src.value.id), self.scope.get(dst.id)
        if not (isinstance(buf, BufferRef) and isinstance(vec, BufferRef)) or buf.is_global or vec.is_global or \
                len(buf.shape) != 2 or len(vec.shape) != 1 or vec.shape[0] != buf.shape[1]:
            return False
        self.scope["__copy_parallel"] = api.Parallel
        loop = ast.parse(f"for __j in __copy_parallel({vec.shape[0]}):\n    {dst.id}[__j] = {src.value.id}[__ROW, __j]\n")
        stmt = loop.body[0]
        stmt.body[0].value.slice.elts[0] = row
        for n in ast.walk(stmt):
            ast.copy_location(n, node)
        self.statements([stmt])
        return True

    def alloc(self, node, name_hint, scope: str, what: str) -> BufferRef:
        self.require_kernel(node, what)
        args = self.arguments(node, ("shape", "dtype", "scope"), {"dtype": "float32", "scope": None}, what)
        shape = args["shape"]
        shape = (shape,) if isinstance(shape, int) else shape
        if not isinstance(shape, (tuple, list)) or not all(isinstance(s, int) and not isinstance(s, bool)
                                                           for s in shape):
            raise self.error(node, f"{what} shape must be a tuple of integer constants, not {self.describe(shape)}")
        shape = tuple(shape)
        if not 1 <= len(shape) <= 3 or any(s <= 0 for s in shape):
            raise self.error(node, f"{what} shape {shape}: local buffers have 1 to 3 positive dims")
        fmt = data_format_of(args["dtype"], self.src.location(node), f"{what} dtype")
        name = self.unique_buffer_name(name_hint or scope)
        ir_shape = shape[-2:] if len(shape) == 3 else shape
        op = self.insert(tile.AllocOp(name, scope, memref_type(ir_shape, fmt, scope)), node)
        op.result.name_hint = name
        return BufferRef(name, shape, fmt, scope, op.result, canonical_name(args["dtype"]))

    def new_buffer(self, like_shape, dtype, scope: str, hint: str, node) -> BufferRef:
        """A local buffer the front end adds (transposed gemm operands, reduction temporaries)."""
        name = self.unique_buffer_name(hint)
        fmt = data_format_of(dtype)
        op = self.insert(tile.AllocOp(name, scope, memref_type(like_shape, fmt, scope)), node)
        op.result.name_hint = name
        return BufferRef(name, tuple(like_shape), fmt, scope, op.result, canonical_name(dtype))

    def rule_alloc_var(self, node, name_hint):
        args = self.arguments(node, ("dtype", "init"), {"init": None, "scope": None}, "T.alloc_var")
        return args["init"] if args["init"] is not None else 0.0

    # -- copy -----------------------------------------------------------------------------------------

    def rule_copy(self, node, name_hint):
        if self.parallel is not None and len(node.args) == 2 and isinstance(node.args[1], ast.Subscript):
            # ``T.copy(A[i, j], B[i, j])`` inside T.Parallel: one element, ``B[i, j] = A[i, j]``
            self.store(node.args[1], self.expr(node.args[0]), node)
            return None
        if self.copy_row(node):
            return None
        self.require_kernel(node, "T.copy")
        args = self.arguments(node, ("src", "dst"), {"coalesced_width": None, "disable_tma": False,
                                                     "eviction_policy": None, "annotations": None,
                                                     "loop_layout": None}, "T.copy")
        src, dst = args["src"], args["dst"]
        for side, value in (("src", src), ("dst", dst)):
            if not isinstance(value, (BufferRef, Region)):
                raise self.error(node, f"T.copy {side} must be a buffer or a region A[...], not {self.describe(value)}")
        src_global = (src.buffer if isinstance(src, Region) else src).is_global
        dst_global = (dst.buffer if isinstance(dst, Region) else dst).is_global
        if src_global and dst_global and all(isinstance(v, Region) and all(e is None for e in v.extents)
                                             for v in (src, dst)):
            # T.copy(A[i], B[j]): one element each side, TileLang's scalar copy: the store B[j] = A[i],
            # as a T.Parallel of one element
            def at_element(ref: ast.Subscript) -> ast.Subscript:
                indices = list(ref.slice.elts) if isinstance(ref.slice, ast.Tuple) else [ref.slice]
                indices[-1] = ast.BinOp(indices[-1], ast.Add(), ast.Name("__scalar_copy", ast.Load()))
                key = ast.Tuple(indices, ast.Load()) if len(indices) > 1 else indices[0]
                return ast.Subscript(ref.value, key, ref.ctx)

            dst_ref, src_ref = node.args[1], node.args[0]
            store = ast.Assign(targets=[at_element(dst_ref)], value=at_element(src_ref))
            loop = ast.For(target=ast.Name("__scalar_copy", ast.Store()),
                           iter=ast.Call(ast.Name("__scalar_copy_loop", ast.Load()), [ast.Constant(1)], []),
                           body=[store], orelse=[])
            for n in ast.walk(loop):
                ast.copy_location(n, node)
            self.scope["__scalar_copy_loop"] = api.Parallel
            self.parallel_loop(loop, loop.iter)
            return None
        if src_global and dst_global:
            self.copy_through_local(src, dst, node)
            return None
        if not src_global and not dst_global and (self.partial(src) or self.partial(dst)):
            self.local_region_copy(src, dst, node)
            return None
        if not src_global and not dst_global:
            a = self.local_buffer(src, node, "T.copy")
            b = self.local_buffer(dst, node, "T.copy")
            if self.shape_of(a) != self.shape_of(b):
                raise self.error(node, f"T.copy from {a.name} {a.shape} to {b.name} {b.shape}: shapes differ")
            self.insert(tile.CopyOp(a.value, b.value), node)
            if a.name in self.loaded_from:     # b holds what a copy from a tensor put in a
                region, copies = self.loaded_from[a.name]
                self.loaded_from[b.name] = (region, [*copies, node])
            return None
        local = self.local_buffer(dst if src_global else src, node, "T.copy")
        region = src if src_global else dst
        offsets, dims = self.global_offsets(region, local, node)
        glob = region.buffer if isinstance(region, Region) else region
        if src_global:
            self.loaded_from[local.name] = (region if isinstance(region, Region) else self.whole(glob), [node])
        if src_global:
            self.insert(tile.CopyOp(glob.value, local.value, offsets, dims), node)
        else:
            self.insert(tile.CopyOp(local.value, glob.value, offsets, dims), node)
        return None

    def partial(self, value) -> bool:
        """Whether a local region is a part of its buffer (not all of it, nor a block of a 3-D one)."""
        if not isinstance(value, Region) or value.buffer.is_global:
            return False
        buf = value.buffer
        return any(not (s.is_constant and s.const == 0) or (e is not None and e != d)
                   for s, e, d in zip(value.starts[-2:], value.extents[-2:], buf.shape[-2:])) and \
            all(s.is_constant and s.const == 0 and e is None for s, e in zip(value.starts[:-2], value.extents[:-2]))

    def local_region_copy(self, src, dst, node) -> None:
        """``T.copy(acc[:n, :], out)`` between parts of local buffers: an element-wise copy over the
        region's extents, each element from its place in the source to its place in the destination."""
        regions = []
        for side in (src, dst):
            region = side if isinstance(side, Region) else Region(side, [Index() for _ in side.shape], list(side.shape))
            shape = self.shape_of(region.buffer)
            extents = [d if e is None else e for e, d in zip(region.extents, shape)]
            regions.append((region, extents))
        (a, ea), (b, eb) = regions
        squeeze = lambda extents: [e for e in extents if e != 1]      # noqa: E731
        if squeeze(ea) != squeeze(eb):
            raise self.error(node, f"T.copy from a {ea} region of {a.buffer.name} into a {eb} region of "
                                   f"{b.buffer.name}: the extents differ")
        shape = squeeze(eb) or [1]
        src_starts = [self.index_value(s, node) for s in a.starts]
        dst_starts = [self.index_value(s, node) for s in b.starts]

        def place(starts, extents, ix):
            """The indices of element ``ix`` of the copied block in a region with ``extents``."""
            out, k = [], 0
            for start, e in zip(starts, extents):
                if e == 1 and len(shape) < len(extents):
                    out.append(start)
                    continue
                out.append(self.insert(arith.AddiOp(start, ix[k]), node).result)
                k += 1
            return out

        self.elementwise(shape, node, lambda ix: self.load_at(a.buffer, place(src_starts, ea, ix), node), b.buffer,
                         lambda ix: place(dst_starts, eb, ix))

    def local_region_fill(self, region: Region, value: float, node) -> None:
        """``T.clear(acc[:n, :])``: the buffer rewritten whole, each element the value inside the region
        and its own value outside it (a statement defines a whole buffer)."""
        buf = region.buffer
        shape = self.shape_of(buf)
        extents = [d if e is None else e for e, d in zip(region.extents, shape)]

        def element(ix):
            inside = True
            for d, (arg, start, extent) in enumerate(zip(ix, region.starts, extents)):
                i = Index({Symbol(arg, f"i{d}", "parallel", shape[d]): 1})
                inside = self.logical(True, inside, self.compare(ast.GtE, i, start, node), node)
                inside = self.logical(True, inside, self.compare(ast.Lt, i, start + extent, node), node)
            old = Elem(self.load_at(buf, ix, node))
            if isinstance(inside, bool):
                return self.f32_constant(value, node) if inside else old.value
            return self.select(inside, float(value), old, node).value

        self.elementwise(shape, node, element, buf)

    def whole(self, glob: BufferRef) -> Region:
        return Region(glob, [Index() for _ in glob.shape], list(glob.shape))

    def copy_through_local(self, src, dst, node) -> None:
        """A global-to-global copy: into a shared buffer of the region's shape, then out."""
        src_region = src if isinstance(src, Region) else self.whole(src)
        dst_region = dst if isinstance(dst, Region) else self.whole(dst)
        extents = [e for e in src_region.extents if e is not None] or \
            [e for e in dst_region.extents if e is not None]
        if not extents:
            raise self.error(node, "T.copy between two global tensors needs the region's extents: slice it, "
                                   "A[i0:i1, j0:j1]")
        shape = tuple(e for e in extents if e != 1)[-2:] or (1,)
        name = f"{src_region.buffer.name}_to_{dst_region.buffer.name}"
        staging = self.new_buffer(shape, dst_region.buffer.dtype_name or canonical_name(dst_region.buffer.dtype),
                                  "shared", name, node)
        loaded = staging
        if src_region.buffer.dtype != dst_region.buffer.dtype:
            # a dtype change: load in the source's dtype, convert by a local copy
            loaded = self.new_buffer(shape, src_region.buffer.dtype_name or canonical_name(src_region.buffer.dtype),
                                     "shared", f"{name}_src", node)
        offsets, dims = self.global_offsets(src_region, loaded, node)
        self.insert(tile.CopyOp(src_region.buffer.value, loaded.value, offsets, dims), node)
        if loaded is not staging:
            self.insert(tile.CopyOp(loaded.value, staging.value), node)
        offsets, dims = self.global_offsets(dst_region, staging, node)
        self.insert(tile.CopyOp(staging.value, dst_region.buffer.value, offsets, dims), node)

    def global_offsets(self, region, local: BufferRef, node) -> tuple[list[SSAValue], list[int] | None]:
        """Element offsets of a block of a global tensor and the global dim each local dim runs along.

        A region written with slices maps its sliced dims to the local buffer's dims, in order
        (local dims of extent 1 may run along none); one written with start indices only has the
        local buffer's shape in its trailing dims."""
        glob = region.buffer if isinstance(region, Region) else region
        if isinstance(region, BufferRef):
            region = self.whole(glob)
        lshape = self.shape_of(local)
        rank, lrank = len(glob.shape), len(lshape)
        sliced = [d for d, e in enumerate(region.extents) if e is not None]
        if not sliced:
            if lrank > rank:
                if all(s == 1 for s in lshape[:lrank - rank]):
                    dims = [-1] * (lrank - rank) + list(range(rank))
                else:
                    raise self.error(node, f"T.copy of {glob.name} {glob.shape} into {local.name} {lshape}: the local "
                                           "buffer has more dims than the tensor")
            else:
                dims = list(range(rank - lrank, rank))
        else:
            dims = self.match_dims(sliced, region.extents, lshape, glob, local, node)
        extents = [1] * rank
        for ld, gd in enumerate(dims):
            if gd >= 0:
                extents[gd] = lshape[ld]
        for d, (given, need) in enumerate(zip(region.extents, extents)):
            if given is not None and given != need:
                raise self.error(node, f"T.copy region of {glob.name} has extent {given} in dim {d} but {local.name} "
                                       f"needs {need} (its shape is {lshape})")
        mapped = [gd for gd in dims if gd >= 0]
        if mapped and mapped[-1] != rank - 1 and lshape[-1] != 1 and lrank > 1:
            raise self.error(node, f"T.copy of {glob.name}: the block runs along dim {mapped[-1]} in its last dim; "
                                   f"tiles hold rows of the tensor's last dim ({rank - 1}), so a copy must keep "
                                   "that dim last (copy whole rows, then T.transpose)")
        if mapped != sorted(mapped):
            raise self.error(node, f"T.copy of {glob.name}: the block's dims {mapped} are not in the tensor's order")
        for d in range(rank):
            start = region.starts[d]
            if start.is_constant and (start.const < 0 or start.const + extents[d] > glob.shape[d]):
                last = start.const + extents[d] - 1
                if d >= rank - 2 and start.const >= 0 and start.const < glob.shape[d]:
                    continue  # a block reaching past the end reads the tensor's padding
                raise self.error(node, f"T.copy region of {glob.name} covers index {last} of dim {d}, outside its "
                                       f"shape {glob.shape}")
        default = list(range(rank - lrank, rank)) if lrank <= rank else None
        return [self.index_value(s, node) for s in region.starts], (None if dims == default else dims)

    def match_dims(self, sliced, extents, lshape, glob, local, node) -> list[int]:
        """Sliced global dims ↔ local dims, in order; local dims of extent 1 may match none."""
        dims: list[int] = []
        g = 0
        for ld, size in enumerate(lshape):
            remaining_local = len(lshape) - ld
            remaining_sliced = len(sliced) - g
            if g < len(sliced) and (extents[sliced[g]] == size or remaining_local <= remaining_sliced):
                dims.append(sliced[g])
                g += 1
            elif size == 1:
                dims.append(-1)
            else:
                raise self.error(node, f"T.copy region of {glob.name} (extents {extents}) does not match the shape "
                                       f"{lshape} of {local.name}")
        if g != len(sliced) and any(extents[d] != 1 for d in sliced[g:]):
            raise self.error(node, f"T.copy region of {glob.name} (extents {extents}) has more dims than "
                                   f"{local.name} {lshape}")
        return dims

    # -- tile compute ops -----------------------------------------------------------------------------

    def rule_gemm(self, node, name_hint):
        self.require_kernel(node, "T.gemm")
        args = self.arguments(node, ("A", "B", "C", "transpose_A", "transpose_B"), dict(_GEMM_OPTIONS), "T.gemm")
        a = self.local_buffer(args["A"], node, "T.gemm")
        b = self.local_buffer(args["B"], node, "T.gemm")
        c = self.local_buffer(args["C"], node, "T.gemm")
        ta, tb = bool(args["transpose_A"]), bool(args["transpose_B"])
        for buf in (a, b, c):
            if len(self.shape_of(buf)) != 2:
                raise self.error(node, f"T.gemm takes 2-D buffers; {buf.name} is {buf.shape}")
        a_shape, b_shape = self.shape_of(a), self.shape_of(b)
        m, k = a_shape[::-1] if ta else a_shape
        k2, n = b_shape[::-1] if tb else b_shape
        if k != k2:
            raise self.error(node, f"T.gemm shape mismatch: A {a.name} is {a_shape}{' (transposed)' if ta else ''} "
                                   f"and B {b.name} is {b_shape}{' (transposed)' if tb else ''}; A's K ({k}) must "
                                   f"equal B's K ({k2})")
        if self.shape_of(c) != (m, n):
            raise self.error(node, f"T.gemm shape mismatch: A @ B is {m}x{n} but C {c.name} is "
                                   f"{'x'.join(map(str, self.shape_of(c)))}")
        if not args["clear_accum"] and isinstance(c.value.owner, tile.AllocOp) and not c.value.uses:
            raise self.error(node, f"T.gemm adds A @ B to {c.name}, but nothing wrote {c.name} before: its values "
                                   f"are undefined; call T.clear({c.name}) before the loop, or pass clear_accum=True")
        if ta:
            a = self.transposed(a, node)
        if tb:
            b = self.transposed(b, node)
        self.insert(tile.GemmOp(a.value, b.value, c.value, False, False, bool(args["clear_accum"])), node)

    def transposed(self, buf: BufferRef, node) -> BufferRef:
        shape = self.shape_of(buf)[::-1]
        out = self.new_buffer(shape, buf.dtype_name or canonical_name(buf.dtype), "fragment", f"{buf.name}_T", node)
        self.insert(tile.TransposeOp(buf.value, out.value), node)
        return out

    def rule_transpose(self, node, name_hint):
        self.require_kernel(node, "T.transpose")
        args = self.arguments(node, ("src", "dst"), {}, "T.transpose")
        src = self.local_buffer(args["src"], node, "T.transpose")
        dst = self.local_buffer(args["dst"], node, "T.transpose")
        if len(self.shape_of(src)) != 2 or self.shape_of(dst) != self.shape_of(src)[::-1]:
            raise self.error(node, f"T.transpose of {src.name} {self.shape_of(src)} needs a destination of shape "
                                   f"{self.shape_of(src)[::-1]}, not {dst.name} {self.shape_of(dst)}")
        self.insert(tile.TransposeOp(src.value, dst.value), node)

    def rule_cumsum(self, node, name_hint):
        self.require_kernel(node, "T.cumsum")
        args = self.arguments(node, ("src", "dst", "dim", "reverse"), {"dst": None, "dim": 0, "reverse": False,
                                                                       "annotations": None}, "T.cumsum")
        src = self.local_buffer(args["src"], node, "T.cumsum")
        dst = self.local_buffer(args["dst"], node, "T.cumsum") if args["dst"] is not None else src
        shape = self.shape_of(src)
        if self.shape_of(dst) != shape:
            raise self.error(node, f"T.cumsum from {src.name} {shape} into {dst.name} {self.shape_of(dst)}: the shapes "
                                   "differ")
        dim = args["dim"]
        if not isinstance(dim, int) or not -len(shape) <= dim < len(shape):
            raise self.error(node, f"T.cumsum dim {dim!r} is not a dim of {src.name} {shape}")
        self.insert(tile.CumsumOp(src.value, dst.value, dim % len(shape), bool(args["reverse"])), node)

    def rule_clear(self, node, name_hint):
        self.require_kernel(node, "T.clear")
        args = self.arguments(node, ("buffer",), {}, "T.clear")
        self.fill_buffer(args["buffer"], 0.0, node, "T.clear")

    def rule_fill(self, node, name_hint):
        self.require_kernel(node, "T.fill")
        args = self.arguments(node, ("buffer", "value"), {}, "T.fill")
        value = args["value"]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(node, f"T.fill value must be a number constant, not {self.describe(value)}")
        self.fill_buffer(args["buffer"], float(value), node, "T.fill")

    def fill_buffer(self, target, value: float, node, what: str) -> None:
        glob = target.buffer if isinstance(target, Region) else target
        if isinstance(glob, BufferRef) and glob.is_global:
            region = target if isinstance(target, Region) else self.whole(glob)
            shape = tuple(e for e in (region.extents if any(e is not None for e in region.extents) else glob.shape)
                          if e is not None and e != 1)[-2:] or (1,)
            frag = self.new_buffer(shape, glob.dtype_name or canonical_name(glob.dtype), "fragment",
                                   f"{glob.name}_fill", node)
            self.insert(tile.FillOp(frag.value, value), node)
            offsets, dims = self.global_offsets(region, frag, node)
            self.insert(tile.CopyOp(frag.value, glob.value, offsets, dims), node)
            return
        if self.partial(target):
            self.local_region_fill(target, value, node)
            return
        buf = self.local_buffer(target, node, what)
        self.insert(tile.FillOp(buf.value, value), node)

    # -- reductions -----------------------------------------------------------------------------------

    def rule_let(self, node, name_hint):
        """``T.let(x, value)``: the name x (from ``x = T.int32()``) holds ``value`` from here on."""
        if len(node.args) != 2 or node.keywords or not isinstance(node.args[0], ast.Name):
            raise self.error(node, "T.let takes a variable name and its value: T.let(x, value)")
        self.scope[node.args[0].id] = self.expr(node.args[1])

    ANY_OF_LIMIT = 64          # elements T.any_of / T.all_of read one by one

    def rule_any_of(self, node, name_hint):
        return self.each_element(node, "any_of")

    def rule_all_of(self, node, name_hint):
        return self.each_element(node, "all_of")

    def each_element(self, node, what: str):
        """``T.any_of(region)`` / ``T.all_of(region)`` outside T.Parallel: the elements of a small region
        of an integer or bool tensor (or of a local copy of one), each read as a kernel value and
        compared with 0, or-ed / and-ed into one condition of the block."""
        if len(node.args) != 1 or node.keywords:
            raise self.error(node, f"T.{what} takes one buffer or region")
        value = self.expr(node.args[0])
        if isinstance(value, BufferRef):
            value = Region(value, [Index() for _ in value.shape], list(value.shape))
        if not isinstance(value, Region) or self.parallel is not None:
            raise self.error(node, f"T.{what} takes a region of a tensor or buffer outside T.Parallel, not "
                                   f"{self.describe(value)}")
        extents = [1 if e is None else e for e in value.extents]
        if math.prod(extents) > self.ANY_OF_LIMIT:
            raise self.error(node, f"T.{what} of {math.prod(extents)} elements: tilefold reads them one by one, up to "
                                   f"{self.ANY_OF_LIMIT}")
        result = None
        for offsets in np.ndindex(*extents):
            element = Region(value.buffer, [s + o for s, o in zip(value.starts, offsets)], [None] * len(extents))
            cond = self.index_condition(ast.NotEq, self.index_of(element, node), Index.of(0), node)
            result = cond if result is None else self.logical(what == "all_of", result, cond, node)
        return result

    def rule_reduce_sum(self, node, name_hint):
        self.reduce(node, "sum")

    def rule_reduce_max(self, node, name_hint):
        self.reduce(node, "max")

    def rule_reduce_min(self, node, name_hint):
        self.reduce(node, "min")

    def rule_reduce_abssum(self, node, name_hint):
        self.reduce(node, "abssum")

    def rule_reduce_absmax(self, node, name_hint):
        self.reduce(node, "absmax")

    def reduce(self, node, kind: str) -> None:
        what = f"T.reduce_{kind}"
        self.require_kernel(node, what)
        args = self.arguments(node, ("buffer", "out", "dim", "clear"), {"dim": -1, "clear": True, "batch": 1,
                                                                        "nan_propagate": False}, what)
        src = self.local_buffer(args["buffer"], node, what)
        dst = self.local_buffer(args["out"], node, what)
        dim = args["dim"]
        shape = self.shape_of(src)
        if len(shape) == 1 and dim in (0, -1):
            # a vector to one value: its elements as the one row of a (1, n) buffer, reduced along it
            if self.shape_of(dst) != (1,):
                raise self.error(node, f"{what} of the vector {src.name} {shape} gives one value but {dst.name} has "
                                       f"shape {self.shape_of(dst)}; make it (1,)")
            row = self.new_buffer((1, shape[0]), src.dtype_name or canonical_name(src.dtype), "fragment",
                                  f"{src.name}_row", node)
            self.elementwise((1, shape[0]), node, lambda ix: self.load_at(src, ix[1:], node), row)
            src, shape, dim = row, (1, shape[0]), 1
        if len(shape) != 2:
            raise self.error(node, f"{what} reduces a 2-D buffer or a vector; {src.name} is {shape}")
        if dim not in (0, 1, -1, -2):
            raise self.error(node, f"{what} dim must be 0 (down columns) or 1 / -1 (along rows), not {dim!r}")
        dim = dim % 2
        want = shape[1 - dim]
        if self.shape_of(dst) != (want,):
            raise self.error(node, f"{what} of {src.name} {shape} along dim {dim} gives {want} values but "
                                   f"{dst.name} has shape {self.shape_of(dst)}; make it ({want},)")
        clear = bool(args["clear"])
        if kind == "max" and src.dtype is DataFormat.Float32 and self.compared_for_equality(node):
            parts = self.exact_max(src, dst, dim, clear, node)
            if clear and self.written_only_here(node):
                self.exact_parts[dst.name] = parts
            return
        self.reduce_buffers(src, dst, kind, dim, clear, node)

    def reduce_buffers(self, src: BufferRef, dst: BufferRef, kind: str, dim: int, clear: bool, node) -> None:
        """``dst (op)= reduce_kind(src, dim)``: sum and max are ``tile.reduce``; min is max of the
        negated values, abssum / absmax reduce the absolute values."""
        shape = self.shape_of(src)
        want = shape[1 - dim]
        if kind in ("sum", "max"):
            self.insert(tile.ReduceOp(src.value, dst.value, kind, dim, clear), node)
            return
        dtype = src.dtype_name or canonical_name(src.dtype)
        pre = self.new_buffer(shape, dtype, "fragment", f"{src.name}_{'neg' if kind == 'min' else 'abs'}", node)
        fn = "neg" if kind == "min" else "abs"
        self.elementwise(shape, node, lambda ix: self.unary_op(fn, self.load_at(src, ix, node), node), pre)
        if kind in ("abssum", "absmax"):
            self.insert(tile.ReduceOp(pre.value, dst.value, "sum" if kind == "abssum" else "max", dim, clear), node)
            return
        red = self.new_buffer((want,), dst.dtype_name or canonical_name(dst.dtype), "fragment", f"{dst.name}_max",
                              node)
        self.insert(tile.ReduceOp(pre.value, red.value, "max", dim, True), node)

        def result(ix):
            neg = self.unary_op("neg", self.load_at(red, ix, node), node)
            if clear:
                return neg
            return self.insert(arith.MinimumfOp(self.load_at(dst, ix, node), neg), node).result

        self.elementwise((want,), node, result, dst)

    def compared_for_equality(self, node: ast.Call) -> bool:
        """Whether the kernel compares the reduction's output with ``==`` / ``!=`` (an argmax, a top-k)."""
        out = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "out"), None)
        if not isinstance(out, ast.Name):
            return False

        def names_out(side) -> bool:
            return isinstance(side, ast.Subscript) and isinstance(side.value, ast.Name) and side.value.id == out.id

        for tree in self.source_trees():
            for cmp in ast.walk(tree):
                if isinstance(cmp, ast.Compare) and any(isinstance(o, (ast.Eq, ast.NotEq)) for o in cmp.ops) and \
                        any(names_out(side) for side in [cmp.left, *cmp.comparators]):
                    return True
        return False

    def source_trees(self) -> list[ast.AST]:
        return list({id(s.tree): s.tree for s in (self.src, FunctionSource.of(self.prim.python_function))}.values())

    def written_only_here(self, node: ast.Call) -> bool:
        """Whether the output buffer of this call is written by no other statement or primitive."""
        out = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "out"), None)
        return isinstance(out, ast.Name) and not self.written_anywhere(out.id, node)

    def exact_max(self, src: BufferRef, dst: BufferRef, dim: int, clear: bool, node) -> None:
        """The float32 maximum to the last bit. The FPU reduces TF32 values, and TF32 rounding keeps order,
        so its maximum m1 is the true maximum x rounded; x - m1 is then exact (Sterbenz) and the largest of
        the differences. Reducing those again (m2) and once more (m3) leaves no bit out: x = m1 + m2 + m3.
        The differences are taken on the SFPU from tiles unpacked whole to DST (``UnpackToDestFp32``), so a
        buffer the FPU reduces is a copy of the one they read. Returns the three parts: each holds TF32
        values, so the FPU broadcasts them exactly, and a kernel's reads of the maximum read their sum
        (:attr:`exact_parts`) when nothing else writes it."""
        shape, want = self.shape_of(src), self.shape_of(dst)[0]
        vec = (lambda ix: [ix[0]]) if dim == 1 else (lambda ix: [ix[1]])
        parts, rest = [], src
        for step in range(3):
            part = self.new_buffer((want,), "float32", "fragment", f"{dst.name}_max{step}", node)
            reduced = rest
            if step < 2:        # the FPU reads a copy: a CB it unpacks cannot go to DST whole
                reduced = self.new_buffer(shape, "float32", "fragment", f"{src.name}_fpu{step}", node)
                self.elementwise(shape, node, lambda ix, rest=rest: self.load_at(rest, ix, node), reduced)
            self.insert(tile.ReduceOp(reduced.value, part.value, "max", dim, True), node)
            parts.append(part)
            if step < 2:
                diff = self.new_buffer(shape, "float32", "fragment", f"{src.name}_rest{step}", node)
                prev = rest
                self.elementwise(shape, node, lambda ix, prev=prev, part=part: self.insert(arith.SubfOp(
                    self.load_at(prev, ix, node), self.load_at(part, vec(ix), node)), node).result, diff)
                rest = diff

        def result(ix):
            m = self.load_at(parts[0], ix, node)
            for part in parts[1:]:
                m = self.insert(arith.AddfOp(m, self.load_at(part, ix, node)), node).result
            return m if clear else self.insert(arith.MaximumfOp(self.load_at(dst, ix, node), m), node).result

        self.elementwise((want,), node, result, dst)
        return parts

    def unary_op(self, fn: str, value: SSAValue, node) -> SSAValue:
        if fn == "neg":
            return self.insert(arith.NegfOp(value), node).result
        return self.insert(tile.MathOp(fn, [value]), node).result

    def load_at(self, buf: BufferRef, indices, node) -> SSAValue:
        return self.insert(tile.LoadOp(buf.value, list(indices)), node).result

    def elementwise(self, shape, node, compute, out: BufferRef, at=None) -> None:
        """``for ix in T.Parallel(*shape): out[ix] = compute(ix)``, built directly (``at(ix)``: the
        indices of out to store at instead of ``ix``)."""
        op = self.insert(tile.ParallelOp(list(shape)), node)
        outer, saved = self.block, self.parallel
        self.block, self.parallel = op.body.block, op
        try:
            ix = list(op.body.block.args)
            value = compute(ix)
            self.insert(tile.StoreOp(value, out.value, ix if at is None else at(ix)), node)
        finally:
            self.block, self.parallel = outer, saved

    # -- atomic add / max / min ------------------------------------------------------------------------

    def rule_atomic_add(self, node, name_hint):
        return self.atomic_update(node, "atomic_add", arith.AddfOp, "adds", "sum")

    def rule_atomic_max(self, node, name_hint):
        return self.atomic_update(node, "atomic_max", arith.MaximumfOp, "takes the maximum", "max")

    def rule_atomic_min(self, node, name_hint):
        return self.atomic_update(node, "atomic_min", arith.MinimumfOp, "takes the minimum", "min")

    def atomic_update(self, node, what: str, combine, verb: str, suffix: str):
        """``T.atomic_<op>(dst, value)``: dst = combine(dst, value), an element inside T.Parallel or a
        local block into a global tensor (listed in ``tile.atomic``)."""
        call = f"T.{what}"
        if len(node.args) < 2:
            raise self.error(node, f"{call} takes (dst, value)")
        for key, _ in self.keywords(node):
            if key not in ("memory_order", "return_prev", "use_tma", "annotations"):
                raise self.error(node, f"{call} has no argument {key!r}")
        target = node.args[0]
        if self.parallel is not None:
            if not isinstance(target, ast.Subscript):
                raise self.error(node, f"inside T.Parallel, {call} {verb} into an element: {call}(C[i, j], v)")
            buffer = self.expr(target.value)
            if not isinstance(buffer, BufferRef):
                raise self.error(node, f"{call} into {self.describe(buffer)}")
            indices, key = self.element_indices(buffer, target.slice, node)
            old = self.load_key(buffer, indices, key, node)
            value = self.float_value(self.expr(node.args[1]), node)
            self.put(buffer, indices, key, Elem(self.insert(combine(old, value), node).result), node)
            if buffer.is_global and buffer.name not in self.atomic_targets:
                self.atomic_targets.append(buffer.name)
            returns_old = dict(self.keywords(node)).get("return_prev", False)
            return Elem(old) if returns_old else None       # return_prev: the element before the update
        self.require_kernel(node, call)
        dst = self.expr(target)
        value = self.expr(node.args[1])
        glob = dst.buffer if isinstance(dst, Region) else dst
        if not isinstance(glob, BufferRef) or not glob.is_global or not isinstance(value, (BufferRef, Region)):
            raise self.error(node, f"outside T.Parallel, {call} {verb} a local block into a global tensor: "
                                   f"{call}(C[by * bM, bx * bN], C_local); per-thread scalar atomics have no "
                                   "Tensix meaning (a core runs a block as tile operations)")
        local = self.local_buffer(value, node, call)
        shape = self.shape_of(local)
        current = self.new_buffer(shape, glob.dtype_name or canonical_name(glob.dtype), "shared",
                                  f"{glob.name}_old", node)
        total = self.new_buffer(shape, glob.dtype_name or canonical_name(glob.dtype), "fragment",
                                f"{glob.name}_{suffix}", node)
        offsets, dims = self.global_offsets(dst, local, node)
        self.insert(tile.CopyOp(glob.value, current.value, offsets, dims), node)
        self.elementwise(shape, node, lambda ix: self.insert(combine(
            self.load_at(current, ix, node), self.load_at(local, ix, node)), node).result, total)
        offsets, dims = self.global_offsets(dst, local, node)
        self.insert(tile.CopyOp(total.value, glob.value, offsets, dims), node)
        if glob.name not in self.atomic_targets:
            self.atomic_targets.append(glob.name)
        return None

    # -- element functions ------------------------------------------------------------------------------

    def element_args(self, node: ast.Call, count: int, what: str) -> list:
        if node.keywords or len(node.args) != count:
            raise self.error(node, f"{what} takes {count} positional argument{'s' if count > 1 else ''}")
        return [self.expr(a) for a in node.args]

    def rule_max(self, node, name_hint):
        if len(node.args) < 2 or node.keywords:
            raise self.error(node, "T.max takes two or more values")
        return self.min_max("max", [self.expr(a) for a in node.args], node)

    def rule_min(self, node, name_hint):
        if len(node.args) < 2 or node.keywords:
            raise self.error(node, "T.min takes two or more values")
        return self.min_max("min", [self.expr(a) for a in node.args], node)

    def rule_pow(self, node, name_hint):
        a, b = self.element_args(node, 2, "T.pow")
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            return float(a) ** b
        return self.element_binop(ast.Pow(), a, b, node)

    def rule_clamp(self, node, name_hint):
        args = self.arguments(node, ("value", "min_val", "max_val"), {"min_val": None, "max_val": None}, "T.clamp")
        x = args["value"]
        if args["max_val"] is not None:
            x = self.min_max("min", [x, args["max_val"]], node)
        if args["min_val"] is not None:
            x = self.min_max("max", [x, args["min_val"]], node)
        return x

    def rule_if_then_else(self, node, name_hint):
        cond, a, b = self.element_args(node, 3, "T.if_then_else")
        if isinstance(cond, (bool, int)) and not isinstance(cond, Index):
            return a if cond else b
        return self.select(cond, a, b, node)

    def rule_cast(self, node, name_hint):
        args = self.arguments(node, ("value", "dtype"), {}, "T.cast")
        return self.cast_value(args["value"], self.dtype_arg(args["dtype"], node), node)

    def rule_Cast(self, node, name_hint):
        args = self.arguments(node, ("dtype", "value"), {}, "T.Cast")
        return self.cast_value(args["value"], self.dtype_arg(args["dtype"], node), node)

    def dtype_arg(self, dtype, node) -> DType:
        """A dtype written as a name, ``T.float16``, a numpy or a torch dtype."""
        if isinstance(dtype, DType):
            return dtype
        if isinstance(dtype, (bool, int, float)) or dtype is None:
            raise self.error(node, f"{dtype!r} is not a dtype")
        try:
            return DType(canonical_name(dtype))
        except Exception:
            raise self.error(node, f"{dtype!r} is not a dtype") from None

    # layout and schedule annotations

    def rule_annotate_tt_layout(self, node, name_hint):
        self.require_kernel(node, "T.annotate_tt_layout")
        where = self.src.location(node)
        if node.args and len(node.args) == 1 and not node.keywords:
            entries = layout_entries(self.expr(node.args[0]), where)
        elif node.args and len(node.args) == 1:
            target = self.expr(node.args[0])
            if not isinstance(target, BufferRef):
                raise self.error(node, "T.annotate_tt_layout(A, memory=..., ...) names a tensor parameter first")
            entries = {target.name: dict(self.keywords(node))}
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
        values = dict(self.keywords(node))
        if node.args:
            if len(node.args) != 1 or not isinstance(first := self.expr(node.args[0]), dict):
                raise self.error(node, "use T.annotate_tt_schedule(policy=..., order=...) or a dict")
            values = {**first, **values}
        self.schedule = {**self.schedule, **values, "loc": [where.file, where.line]}

    def rule_annotate_tt_compute(self, node, name_hint):
        self.require_kernel(node, "T.annotate_tt_compute")
        where = self.src.location(node)
        if node.args:
            raise self.error(node, "use T.annotate_tt_compute(math_fidelity=..., math_approx_mode=...)")
        values = dict(self.keywords(node))
        fields = {"math_fidelity": ("LoFi", "HiFi2", "HiFi3", "HiFi4"), "math_approx_mode": (True, False)}
        for key, value in values.items():
            if key not in fields:
                raise self.error(node, f"T.annotate_tt_compute has no field {key!r}; use {', '.join(fields)}")
            if value not in fields[key]:
                raise self.error(node, f"T.annotate_tt_compute: {key} = {value!r} is not one of "
                                       f"{', '.join(map(repr, fields[key]))}")
        self.compute = {**self.compute, **values}


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
    "Serial": "for k in T.Serial(n):",
    "unroll": "for k in T.unroll(n):",
    "vectorized": "for k in T.vectorized(n):",
    "grid": "for i, j in T.grid(m, n):",
    "Pipelined": "for k in T.Pipelined(n, num_stages=2):",
    "Parallel": "for i, j in T.Parallel(m, n):",
}

__all__ = ["PrimitiveRules", "USAGE", "TensorType"]
