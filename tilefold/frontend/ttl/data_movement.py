"""Data movement in a kernel: tensor slices, ``ttl.copy``, transfers and pipes.

Reads: ``tensor[...]`` of the operation's tensors (indices in the tensor's tiles — 32x32 or
others — for a tiled tensor, in elements for a row-major one, whose copies move a contiguous part
of each row), ``ttl.copy(src, dst)``, ``ttl.copy(blk, other_blk | pipe, byte_count=n)`` (the first
``n`` bytes of a block), ``xf.wait()``, ``ttl.wait_any(requests, start)``, ``ttl.GroupTransfer``,
``net.if_src(body)`` / ``net.if_dst(body)``. Writes: ``ttl.tensor``, ``ttl.tensor_slice``,
``ttl.copy``, ``ttl.wait``, ``ttl.wait_any``, ``ttl.group_wait``, ``ttl.pipe_count`` + ``scf.if`` around each pipe
body, ``ttl.pipe_send`` / ``ttl.pipe_recv``.

A pipe body runs once for every pipe of the net the node takes part in: the front end unrolls it
as many times as the busiest node needs and guards each copy with the node's pipe count.

A pipe receive may be waited again (a no-op) and completed by ``ttl.wait_any``; the front end
tracks, per receive, the waits and selections on the path to each statement, so a later wait
waits only when no selection took it; in a branch testing ``index == k`` request ``k`` is complete
(its block may be used without a wait), and a receive a selection did not take may stay pending
when the kernel ends.

Errors: a slice whose extent is not a compile-time number or that leaves the tensor, a copy
between a slice and a block of different shapes, data types, layouts or tiles, a ``byte_count``
that is not a positive int, exceeds a block or is given to a tensor copy, a copy in a compute
kernel, a transfer other than a pipe receive waited twice, a wait outside the loop iteration
that started it, a pipe used on the wrong side, ``ttl.wait_any`` given no request, a request
twice or something other than a pipe receive request.
"""

from __future__ import annotations

import ast
import math

from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr, i32
from xdsl.ir import Block as IRBlock

from tilefold.frontend.ttl.session import compile_only_or_raise
from tilefold.frontend.ttl.grid import core_grid, node_coordinates
from tilefold.frontend.ttl.branch_conditions import exclusive
from tilefold.frontend.ttl.pipes import Pipe, PipeNet, may_leave_nodes_idle, nets_holding, pipe_text, resolve_routes
from tilefold.frontend.ttl.scalars import Scalar, difference
from tilefold.frontend.ttl.values import (
    Block,
    BlockView,
    GroupTransfer,
    LocalFunction,
    PipeIdentity,
    ReadyReceive,
    TensorSlice,
    Transfer,
    device_block_shape,
)
from tilefold.errors import CrossDeviceAccessError
from tilefold.ir import ttl
from tilefold.layout.formats import DataFormat, data_format, tensor_tile
from tilefold.frontend.ttl.scopes import Region, Scope

TILE = 32


def tensor_units(tensor) -> tuple[int, ...]:
    """The shape of a tensor in its shape unit: tiles in the last two dims of a tiled tensor."""
    shape = tuple(int(s) for s in getattr(tensor, "device_shape", tensor.shape))
    if not _is_tiled(tensor):
        return shape
    if len(shape) == 1:
        shape = (1,) + shape
    height, width = tensor_tile(tensor)
    return shape[:-2] + (-(-shape[-2] // height), -(-shape[-1] // width))


def mesh_origin(tensor, units: tuple[int, ...]) -> tuple[int, ...] | None:
    """Where a piece of a mesh tensor starts in the whole, in the units of ``units`` (tiles in the
    last two dims of a tiled tensor), or None when it is not such a piece."""
    origin = getattr(tensor, "mesh_origin", None)
    if origin is None or len(origin) != len(units) or _is_tiled(tensor) and len(origin) < 2:
        return None
    if not _is_tiled(tensor):
        return tuple(origin)
    height, width = tensor_tile(tensor)
    return tuple(origin[:-2]) + (origin[-2] // height, origin[-1] // width)


def is_1d_tiled(tensor) -> bool:
    """A tiled tensor of rank 1: ``tensor[i]`` selects its tile ``i`` (elements ``32 i .. 32 i + 31``)."""
    return _is_tiled(tensor) and len(tuple(getattr(tensor, "device_shape", tensor.shape))) == 1


def _is_tiled(tensor) -> bool:
    return "TILE" in str(getattr(tensor.layout, "name", tensor.layout)).upper()


def _strip(shape) -> tuple[int, ...]:
    shape = tuple(shape)
    while len(shape) > 1 and shape[0] == 1:
        shape = shape[1:]
    return shape


def _shape_text(shape) -> str:
    return "x".join(str(s) for s in shape)


class DataMovementBuilder:
    """Mixin of :class:`~.builder.KernelBuilder`."""

    def require_datamovement(self, node, what: str) -> None:
        if self.kind != "datamovement":
            raise self.error(f"{what} can only be used in a @ttl.datamovement() kernel; the compute kernel works on "
                             "blocks that data movement kernels fill and drain", node)

    # -- tensors ----------------------------------------------------------------------------

    def tensor_value(self, argument, node):
        if argument.index not in self.tensors:
            tensor = argument.tensor
            fmt = data_format(getattr(tensor.dtype, "name", tensor.dtype))
            element = ttl.tile_type(fmt, *tensor_tile(tensor)) if _is_tiled(tensor) else ttl.scalar_type(fmt)
            op = self.emit_prologue(ttl.TensorOp(argument.index, argument.name,
                                                 ttl.block_type(tensor_units(tensor), element)), node)
            op.result.name_hint = argument.name
            self.tensors[argument.index] = op.result
        return self.tensors[argument.index]

    def tensor_slice(self, argument, index, node) -> TensorSlice:
        self.require_datamovement(node, f"slicing tensor {argument.name}")
        units = tensor_units(argument.tensor)
        entries = list(index) if isinstance(index, tuple) else [index]
        unit = "tiles" if _is_tiled(argument.tensor) else "elements"
        one_d = len(entries) == 1 and is_1d_tiled(argument.tensor)
        if one_d:        # a 1-D tensor's tiles: its device row (1, n) seen as (n,)
            units = units[1:]
        if len(entries) > len(units):
            raise self.error(f"{argument.name}[...] has {len(entries)} indices but the tensor has {len(units)} "
                             f"dimensions ({_shape_text(units)} {unit})", node)
        entries += [slice(None)] * (len(units) - len(entries))
        offsets, sizes, checked = [], [], []
        ranges = tuple(isinstance(e, slice) for e in entries)
        chips = getattr(argument.tensor, "mesh_piece_of", None)     # a piece of a mesh tensor over that many chips
        piece = f", one chip's piece of a mesh tensor over {chips} chips" if chips else ""
        origin = mesh_origin(argument.tensor, units) if self.operation.mesh_chip is not None else None
        if origin is not None and any(origin):
            piece = (f"; this chip's piece of a mesh tensor over {chips} chips, which starts at {unit} "
                     f"{_shape_text(origin)} of the whole: a node reads and writes its own chip's piece")
        for d, (entry, dim) in enumerate(zip(entries, units)):
            if isinstance(entry, slice):
                if entry.step not in (None, 1):
                    raise self.error(f"{argument.name}[...]: slices of a tensor are contiguous; drop the step", node)
                start = 0 if entry.start is None else self.as_int(entry.start, node, "a slice start")
                stop = dim if entry.stop is None else self.as_int(entry.stop, node, "a slice end")
                size = difference(stop, start)
                if size is None:
                    raise self.error(f"{argument.name}[...]: the extent of dimension {d} ({ast.unparse(node)[:60]}) "
                                     "is not a compile-time number; write slices as start:start + size", node)
                if size <= 0:
                    raise self.error(f"{argument.name}[...]: dimension {d} selects {size} {unit}; a slice selects at "
                                     "least one", node)
            else:
                start = self.as_int(entry, node, f"index {d} of {argument.name}[...]")
                size = 1
            if origin is not None and origin[d]:            # the whole tensor's index on this chip's piece
                start = self.scalars.sub(start, origin[d])
            if size > dim:
                raise self.error(f"{argument.name}[...]: dimension {d} selects {size} {unit} but the tensor has only "
                                 f"{dim} (shape {_shape_text(units)}{piece}); make the block smaller", node)
            if isinstance(start, int) and (start < 0 or start + size > dim) and origin is not None and origin[d]:
                first = start + origin[d]
                raise CrossDeviceAccessError(
                    f"Cross-device access: {argument.name}[...]: {unit} {first}..{first + size - 1} of dimension {d} "
                    f"are on another chip; this chip's piece of the mesh tensor holds {unit} {origin[d]}.."
                    f"{origin[d] + dim - 1} of it; a node reads and writes its own chip's piece", self.location(node))
            if isinstance(start, int) and (start < 0 or start + size > dim):
                raise self.error(f"{argument.name}[...]: {unit} {start}..{start + size - 1} of dimension {d} are "
                                 f"outside the tensor ({dim} {unit}; shape {_shape_text(units)}{piece})", node)
            if not isinstance(start, int):
                bounds = self.scalars.bounds(start)
                inside = bounds is not None and bounds[0] >= 0 and bounds[1] + size <= dim
                if not inside and (bounds is None or self._guarded()):
                    checked.append(d)     # nothing known keeps it inside: the copy checks it when it runs
                elif not inside:
                    message = (f"{argument.name}[...]: dimension {d} starts at {unit[:-1]} {bounds[0]} to "
                               f"{bounds[1]} over the loop and node values, so it reaches {unit} "
                               f"{bounds[0]}..{bounds[1] + size - 1}, outside the tensor ({dim} {unit}; "
                               f"shape {_shape_text(units)}{piece}); shorten the loop or the grid, or guard the copy "
                               "with an if")
                    compile_only_or_raise(message, self.location(node))
                    checked.append(d)     # a build that runs nothing goes on: the copy checks it when it runs
            offsets.append(start)
            sizes.append(size)
        if one_d:
            offsets, sizes, checked = [0, *offsets], [1, *sizes], [d + 1 for d in checked]
            ranges = (False, *ranges)
        return TensorSlice(argument, self.tensor_value(argument, node), offsets, tuple(sizes), self.location(node),
                           tuple(checked), ranges)

    def _guarded(self) -> bool:
        """Whether the statement being built sits inside a runtime ``if`` (which may keep a slice in range),
        or in an operation with pipe nets, whose nodes outside every pipe run no kernel."""
        if may_leave_nodes_idle(self.operation):
            return True
        block = self.block
        while block is not None:
            parent = block.parent_op()
            if parent is None:
                return False
            if isinstance(parent, scf.IfOp):
                return True
            block = parent.parent_block()
        return False

    # -- copy ------------------------------------------------------------------------------------

    def call_copy(self, args, kwargs, node):
        self.require_datamovement(node, "ttl.copy")
        if len(args) == 2 and isinstance(args[0], (PipeIdentity, Pipe)) and isinstance(args[1], TensorSlice):
            if "byte_count" in kwargs:
                raise self.error(f"ttl.copy(pipe, {args[1].argument.name}[...], byte_count=...): byte_count= copies "
                                 "part of a block; receive into a block of a dataflow buffer", node)
            return self.receive_into_tensor(args[0], args[1], kwargs, node)
        byte_count = None
        if "byte_count" in kwargs:
            kwargs = dict(kwargs)
            byte_count = kwargs.pop("byte_count")
        if kwargs or len(args) != 2:
            raise self.error("ttl.copy(src, dst) takes two arguments (and byte_count= between blocks or a block "
                             "and a pipe)", node)
        src, dst = args
        view = next((b for b in (src, dst) if isinstance(b, BlockView)), None)
        if byte_count is None and view is not None and isinstance(src if view is dst else dst, (PipeIdentity, Pipe)):
            byte_count = view.block_bytes       # a view travels as a block of its own tiles
        if byte_count is not None or (isinstance(src, Block) and isinstance(dst, Block)):
            return self.copy_bytes(src, dst, byte_count, node)
        if isinstance(src, TensorSlice) and isinstance(dst, Block):
            return self.copy_slice(src, dst, node, "read")
        if isinstance(src, Block) and isinstance(dst, TensorSlice):
            return self.copy_slice(dst, src, node, "write")
        if isinstance(src, Block) and isinstance(dst, (PipeIdentity, Pipe)):
            return self.copy_through_pipe(dst, src, node, "send")
        if isinstance(src, (PipeIdentity, Pipe)) and isinstance(dst, Block):
            return self.copy_through_pipe(src, dst, node, "recv")
        raise self.error(f"ttl.copy copies a tensor slice into a block, a block into a tensor slice, or a block "
                         f"through a pipe; not {self.describe(src)} into {self.describe(dst)}", node)

    def copy_bytes(self, src, dst, byte_count, node) -> Transfer:
        """``ttl.copy(blk, other_blk[, byte_count=n])``: the first ``n`` bytes of ``blk``'s L1 block
        into ``other_blk``'s (the rest of it keeps its bytes; n: all of ``blk`` by default);
        ``ttl.copy(blk, pipe, byte_count=n)`` / ``ttl.copy(pipe, blk, byte_count=n)``: only the
        block's first ``n`` bytes travel through the pipe."""
        pipes = (PipeIdentity, Pipe)
        if isinstance(src, TensorSlice) or isinstance(dst, TensorSlice):
            piece = src if isinstance(src, TensorSlice) else dst
            raise self.error(f"ttl.copy(..., byte_count=...) with a slice of tensor {piece.argument.name}: "
                             "byte_count= copies part of a block into another block or through a pipe; a tensor "
                             "copy moves whole pages — drop byte_count=", node)
        if not (isinstance(src, Block) and isinstance(dst, (Block, *pipes))
                or isinstance(src, pipes) and isinstance(dst, Block)):
            raise self.error(f"ttl.copy(src, dst, byte_count=n) copies part of a block into another block or "
                             f"through a pipe; not {self.describe(src)} into {self.describe(dst)}", node)
        blocks = [b for b in (src, dst) if isinstance(b, Block)]
        if byte_count is None:
            byte_count = src.block_bytes
        elif not isinstance(byte_count, int) or isinstance(byte_count, bool) or byte_count <= 0:
            raise self.error(f"ttl.copy(..., byte_count={byte_count!r}): byte_count is a positive int (a "
                             "compile-time number of bytes)", node)
        for b in blocks:
            size = b.block_bytes
            if byte_count > size:
                raise self.error(f"ttl.copy(..., byte_count={byte_count}): {b.name} holds {size} bytes "
                                 f"({b.dfb.describe()}); byte_count must not exceed either block's bytes", node)
        if isinstance(dst, pipes):
            return self.copy_through_pipe(dst, src, node, "send", byte_count)
        if isinstance(src, pipes):
            return self.copy_through_pipe(src, dst, node, "recv", byte_count)
        if src.dfb is dst.dfb and src.value is dst.value:
            raise self.error(f"ttl.copy({src.name}, {dst.name}, ...): a block copied into itself", node)
        self.check_position(src, node)
        self.check_position(dst, node)
        self.wait_copies_into(src, node)
        src.status.copy_from(self.location(node))
        dst.status.copy_into(self.location(node))
        self.node = node
        op = self.emit(ttl.CopyOp(src.value, dst.value, byte_count))
        transfer = self.new_transfer(op.result, "local", src, node)
        transfer.peer = dst
        return transfer

    def copy_slice(self, piece: TensorSlice, block: Block, node, kind: str) -> Transfer:
        tensor = piece.argument.tensor
        name = piece.argument.name
        if _is_tiled(tensor) != block.dfb.is_tiled:
            raise self.error(f"ttl.copy between {name} ({'tiled' if _is_tiled(tensor) else 'row-major'}) and "
                             f"{block.name} ({'tiled' if block.dfb.is_tiled else 'row-major'}); make the buffer "
                             f"like {name}", node)
        if block.dfb.is_tiled and tensor_tile(tensor) != block.dfb.tile:
            (th, tw), (bh, bw) = tensor_tile(tensor), block.dfb.tile
            raise self.error(f"ttl.copy between {name} ({th}x{tw} tiles) and {block.name} ({bh}x{bw} tiles); a "
                             f"copy moves one tile per page — make the buffer like {name}", node)
        fmt = data_format(getattr(tensor.dtype, "name", tensor.dtype))
        staging = None
        if fmt is not block.dfb.data_format:
            if not {fmt, block.dfb.data_format} <= _CONVERTIBLE:
                raise self.error(f"ttl.copy between {name} ({fmt.ttnn_name}) and {block.name} "
                                 f"({block.dfb.data_format.ttnn_name}); a copy converts only between bfloat16 "
                                 f"and float32 — make the buffer like {name}", node)
            staging = self.staging_buffer(block.dfb, fmt, node)
        if _strip(piece.sizes) != _strip(block.shape):
            unit = "tiles" if block.dfb.is_tiled else "elements"
            extra = len(_strip(piece.sizes)) - len(_strip(block.shape))
            hint = (f"; index the first {extra} dimension{'s' * (extra > 1)} of {name} with an integer (a scalar "
                    f"index, not a range) to drop {'them' if extra > 1 else 'it'}") if extra > 0 and \
                tuple(_strip(piece.sizes))[extra:] == tuple(_strip(block.shape)) else ""
            raise self.error(f"ttl.copy: the slice of {name} is {_shape_text(piece.sizes)} {unit} but {block.name} "
                             f"is {_shape_text(block.shape)}; the slice and the block must have the same shape"
                             f"{hint}", node)
        dropped = len(piece.sizes) - len(block.shape)
        ranged = [d for d in range(max(dropped, 0)) if piece.ranges[d]]
        if ranged:
            raise self.error(f"ttl.copy: dimension {ranged[0]} of the slice of {name} is a range but {block.name} "
                             f"has {len(block.shape)} dimensions, so the first {dropped} of {name}'s are dropped; "
                             f"a dropped dimension takes a scalar index ({name}[0, ...] rather than {name}[0:1, ...])",
                             node)
        if not block.dfb.is_tiled:
            self.check_row_range(piece, fmt, staging is not None, node)
        op = self.slice_copy(piece, block, node, kind)
        if staging is not None:
            self.cb_value(staging)
            op.attributes[ttl.STAGING_CB_ATTR] = IntegerAttr(staging.index, i32)
        transfer = self.new_transfer(op.result, kind, block, node)
        transfer.converts = staging is not None
        return transfer

    def slice_copy(self, piece: TensorSlice, block: Block, node, kind: str):
        """The ``ttl.copy`` op between a checked tensor slice and a block (``kind``: read or write),
        with the block's state and the operation's read / written tensors noted."""
        self.check_position(block, node)
        if kind == "read":
            # a node filling the block it posted a receive of its own multicast into (the net's
            # source, in its if_src body): only its own send lands there, after this copy
            block.status.copy_into(self.location(node), own_send=block.status.receiving in self.sending_nets)
            self.read_tensors.add(piece.argument.index)
        else:
            self.wait_copies_into(block, node)
            block.status.copy_from(self.location(node))
            self.written_tensors.add(piece.argument.index)
        self.node = node
        offsets = [self.scalars.materialize(o) for o in piece.offsets]
        slice_op = self.emit(ttl.TensorSliceOp(piece.tensor_value, offsets, piece.sizes, piece.checked))
        src, dst = (slice_op.result, block.value) if kind == "read" else (block.value, slice_op.result)
        return self.emit(ttl.CopyOp(src, dst))

    def call_copy_tensor_page(self, args, kwargs, node):
        """``ttl.copy_tensor_page(tensor, page_id, block)``: page ``page_id`` of a row-major tensor (a
        row of its last dimension; the leading dimensions flattened) read into the reserved block's
        L1 as it is — a block of 1x32 tiles takes a bfloat16 row of 32 k elements as its tiles."""
        self.require_datamovement(node, "ttl.copy_tensor_page")
        if kwargs or len(args) != 3:
            raise self.error("ttl.copy_tensor_page(tensor, page_id, block) takes three arguments", node)
        tensor, page, block = args
        argument = self.argument_of(tensor)
        if argument is None:
            raise self.error(f"ttl.copy_tensor_page reads a page of one of the operation's tensors, not "
                             f"{self.describe(tensor)}", node)
        name, tensor = argument.name, argument.tensor
        if _is_tiled(tensor):
            raise self.error(f"ttl.copy_tensor_page reads a page of a row-major tensor; {name} is tiled — copy its "
                             "tiles with ttl.copy", node)
        if not isinstance(block, Block) or isinstance(block, BlockView) or block.acquired != "reserve":
            raise self.error(f"ttl.copy_tensor_page reads into a block from reserve(), not {self.describe(block)}",
                             node)
        page_id = self.as_int(page, node, "the page id of ttl.copy_tensor_page")
        units = tensor_units(tensor)
        fmt = data_format(getattr(tensor.dtype, "name", tensor.dtype))
        page_bytes = units[-1] * fmt.element_size
        if page_bytes > block.dfb.block_bytes:
            raise self.error(f"ttl.copy_tensor_page: a page of {name} is {page_bytes} B (a row of {units[-1]} "
                             f"{fmt.ttnn_name} elements) but a block of {block.dfb.name} holds "
                             f"{block.dfb.block_bytes} B; make the block larger", node)
        index = []
        for dim in reversed(units[1:-1]):            # the page's row index in each leading dimension
            index.append(self.scalars.mod(page_id, dim))
            page_id = self.scalars.floordiv(page_id, dim)
        index = (page_id, *reversed(index))
        op = self.slice_copy(self.tensor_slice(argument, (*index, slice(None)), node), block, node, "read")
        op.attributes[ttl.RAW_PAGE_ATTR] = IntegerAttr(page_bytes, i32)
        return self.new_transfer(op.result, "read", block, node)

    def check_row_range(self, piece: TensorSlice, fmt: DataFormat, converts: bool, node) -> None:
        """A row-major slice copies a contiguous byte range of each row (a part of a DRAM page): the
        NOC moves it between addresses 16-byte aligned alike, so a part of a row starts at an element
        whose byte offset is a multiple of 16 (checked when known here)."""
        name = piece.argument.name
        width = tensor_units(piece.argument.tensor)[-1]
        start, size = piece.offsets[-1], piece.sizes[-1]
        if size == width:
            return
        if converts:
            raise self.error(f"ttl.copy of part of a row of {name} ({size} of {width} elements) into a buffer of "
                             "another data type; copy whole rows, or make the buffer like the tensor", node)
        step = 16 // fmt.element_size
        if isinstance(start, int) and start % step:
            raise self.error(f"ttl.copy of {name}[...]: the row part starts at element {start}, not a multiple of "
                             f"{step} ({fmt.ttnn_name}: 16 bytes); the NOC moves 16-byte aligned ranges", node)

    def staging_buffer(self, dfb, fmt, node):
        """The L1 area of one block in the tensor's data format that a converting copy at this line
        goes through: the NOC moves the tensor's pages there, the data movement core converts them."""
        from tilefold.frontend.ttl.dataflow_buffers import hidden_dataflow_buffer

        key = (id(node), dfb.index, fmt)
        if key not in self.staging:
            self.staging[key] = hidden_dataflow_buffer(dfb.shape, fmt, f"{dfb.name} as {fmt.ttnn_name}",
                                                       self.location(node), block_count=1, what="a converting copy",
                                                       tile=dfb.tile)
        return self.staging[key]

    def block_subview(self, args, kwargs, node) -> BlockView:
        """``ttl.block.subview(block, offsets=(r, c), shape=(h, w))``: the tiles of a held block from
        ``offsets`` on, as a block of ``shape`` that a data movement kernel copies from or into or
        sends (one row's part, or whole rows: tiles that lie one after another in L1)."""
        if self.kind != "datamovement":
            raise self.error("ttl.block.subview in a compute kernel is not supported by tilefold yet; compute on "
                             "the whole block, or copy the view into a block of its own in a data movement kernel",
                             node)
        names = ("block", "offsets", "shape")
        if len(args) > 3 or set(kwargs) - set(names):
            raise self.error("ttl.block.subview(block, offsets=(...), shape=(...)) takes a block, its offsets and a "
                             "shape, in tiles", node)
        given = dict(zip(names, args))
        for key, value in kwargs.items():
            if key in given:
                raise self.error(f"ttl.block.subview: {key} is given twice", node)
            given[key] = value
        missing = [n for n in names if n not in given]
        if missing:
            raise self.error(f"ttl.block.subview needs {', '.join(missing)}=", node)
        block, offsets, shape = given["block"], given["offsets"], given["shape"]
        if not isinstance(block, Block) or isinstance(block, BlockView):
            raise self.error(f"ttl.block.subview takes a block acquired with reserve() or wait(), not "
                             f"{self.describe(block)}", node)
        parent = tuple(block.shape)
        if not isinstance(shape, (tuple, list)) or len(shape) != len(parent) or \
                not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in shape):
            raise self.error(f"ttl.block.subview: shape= is a tuple of {len(parent)} positive tile counts (the "
                             f"block is {_shape_text(parent)}), not {self.describe(shape)}", node)
        if not isinstance(offsets, (tuple, list)) or len(offsets) != len(parent):
            raise self.error(f"ttl.block.subview: offsets= is a tuple of {len(parent)} tile indices, not "
                             f"{self.describe(offsets)}", node)
        offsets = [self.as_int(o, node, "a subview offset") for o in offsets]
        for d, (o, s, n) in enumerate(zip(offsets, shape, parent)):
            if s > n or isinstance(o, int) and not 0 <= o <= n - s:
                raise self.error(f"ttl.block.subview: dimension {d} takes {s} tiles from offset {o}, but "
                                 f"{block.name} has {n} there", node)
        first = next((d for d, s in enumerate(shape) if s > 1), len(shape))
        if any(shape[d] != parent[d] for d in range(first + 1, len(shape))):
            raise self.error(f"ttl.block.subview of shape {_shape_text(shape)} in a {_shape_text(parent)} block: "
                             "its tiles are not one after another in L1 (part of several rows), which tilefold does "
                             "not support yet; view part of one row, or whole rows", node)
        self.node = node
        op = self.emit(ttl.BlockSliceOp(block.value, [self.scalars.materialize(o) for o in offsets], tuple(shape)))
        op.result.name_hint = self.pending_name(node) or f"{block.name}_view"
        return BlockView(block.dfb, op.result, block.status, block.depth, parent=block, view_shape=tuple(shape))

    def receive_into_tensor(self, pipe, piece: TensorSlice, kwargs, node) -> Transfer:
        """``ttl.copy(pipe, t[...], shape=...)``: the block sent lands in a compiler-managed L1 block at
        this line, and the receive's first wait copies it on into the tensor slice (and waits for that
        write) before the L1 block is released."""
        name = piece.argument.name
        unknown = set(kwargs) - {"shape"}
        if unknown:
            raise self.error(f"ttl.copy(pipe, {name}[...]) takes shape= (the block's shape in tiles), not "
                             f"{', '.join(sorted(unknown))}=", node)
        tensor = piece.argument.tensor
        if not _is_tiled(tensor):
            raise self.error(f"ttl.copy(pipe, {name}[...]) receives tiles; {name} is row-major — receive into a "
                             "block of a row-major buffer and copy the block to the tensor", node)
        if "shape" in kwargs:
            shape = kwargs["shape"]
            if not isinstance(shape, (tuple, list)) or not shape or \
                    not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in shape):
                raise self.error(f"ttl.copy(pipe, {name}[...], shape=...) takes a tuple of positive tile counts, "
                                 f"not {self.describe(shape)}", node)
            if _strip(shape) != _strip(piece.sizes):
                raise self.error(f"ttl.copy(pipe, {name}[...], shape={tuple(shape)}): the slice of {name} is "
                                 f"{_shape_text(piece.sizes)} tiles; give the slice's shape", node)
        shape = tuple(piece.sizes)
        fmt = data_format(getattr(tensor.dtype, "name", tensor.dtype))
        key = ("receive", id(node))
        if key not in self.staging:
            from tilefold.frontend.ttl.dataflow_buffers import hidden_dataflow_buffer
            line = self.location(node).line if self.location(node) else 0
            self.staging[key] = hidden_dataflow_buffer(shape, fmt, f"received_{name}_{line}",
                                                       self.location(node), block_count=1,
                                                       what="a pipe receive into a tensor", tile=tensor_tile(tensor))
            # the blocks a receive can place in the tensor without overlap: a bound on the blocks its
            # senders may send ahead when the net lands its blocks in a DRAM mailbox (operation.py)
            self.staging[key].tensor_blocks = math.prod(tensor_units(tensor)) // math.prod(shape)
        dfb = self.staging[key]
        if self._ends(dfb)["reserve"] or self._ends(dfb)["wait"]:
            raise self.error(f"ttl.copy(pipe, {name}[...]) again before the receive this line posted earlier was "
                             "waited for; wait() on it first", node)
        landing = self.acquire(dfb, "reserve", node, managed=True)
        received = self.copy_through_pipe(pipe, landing, node, "recv")

        def land(wait_node):
            self.release(landing, wait_node)
            held = self.acquire(dfb, "wait", wait_node, managed=True)
            self.transfer_wait(self.copy_slice(piece, held, wait_node, "write"), wait_node)
            self.release(held, wait_node)

        received.landed = land
        return received

    def copy_through_pipe(self, pipe, block: Block, node, kind: str, byte_count: int | None = None) -> Transfer:
        """Send ``block`` into (``kind`` "send") or receive it from a pipe: the one a pipe body was
        given, or a ``ttl.Pipe`` of a net named directly."""
        if isinstance(pipe, PipeIdentity):
            return self.copy_pipe(pipe, block, node, kind, byte_count)
        return self.copy_named_pipe(pipe, block, node, kind, byte_count)

    def copy_pipe(self, pipe: PipeIdentity, block: Block, node, kind: str, byte_count: int | None = None) -> Transfer:
        role = "src" if kind == "send" else "dst"
        if kind == "send" and pipe.role == "dst" and _self_pipes_only(pipe.net):
            # a node's pipe to itself sent from its if_dst body (TT-Lang allows it): its k-th receive
            # and its k-th send are the same pipe, the net's routes each being a node to itself
            return self.pipe_transfer(block, node, kind, pipe.net, pipe.slot, byte_count=byte_count)
        if pipe.role != role:
            side = "net.if_src" if kind == "send" else "net.if_dst"
            raise self.error(f"this pipe was given to net.if_{pipe.role}'s body; "
                             f"{'sending into' if kind == 'send' else 'receiving from'} a pipe belongs in {side}'s "
                             "body", node)
        return self.pipe_transfer(block, node, kind, pipe.net, pipe.slot, byte_count=byte_count)

    def copy_named_pipe(self, pipe: Pipe, block: Block, node, kind: str, byte_count: int | None = None) -> Transfer:
        """``ttl.copy(blk, pipe)`` / ``ttl.copy(pipe, blk)`` with a ``ttl.Pipe`` of a net: the kernel
        guards the copy with the node's role (``net.is_src()``, node coordinates ...); the pipe's
        ends are the same on every node."""
        nets = nets_holding(pipe, self.operation)
        if not nets:        # a pipe of no net is a net of its own (as TT-Lang takes it), the same for every kernel
            nets = [PipeNet([pipe], _operation=self.operation, _location=self.location(node))]
        if len(nets) > 1:
            raise self.error(f"this pipe ({pipe_text(pipe)}) is in {len(nets)} pipe nets; put each ttl.Pipe in one "
                             "net", node)
        net = nets[0]
        routes = net.routes_of(pipe)
        if kind == "recv":          # a node receives from the one route of the pipe that reaches it
            return self.pipe_transfer(block, node, kind, net, routes[0], named=True, byte_count=byte_count)
        return self.pipe_transfer(block, node, kind, net, *routes, named=True, byte_count=byte_count)

    def wait_copies_into(self, block: Block, node) -> None:
        """In a kernel that releases its blocks itself: before ``block`` is copied out, wait for the
        copies into it not waited for yet (``ttl.copy(t[...], blk)`` then ``ttl.copy(blk, pipe)``), as
        its release would."""
        if not self.implicit_release:
            return
        own = block.status.receiving in self.sending_nets      # the receive of the node's own send: after it
        for region in self.regions:
            for t in region.transfers:
                if (t.block is block and t.into_block or t.peer is block) and not t.waited and t.group is None \
                        and not t.selections and self._dominates(t.value) and not (own and t.kind == "recv"):
                    self.transfer_wait(t, node)

    def wait_unnamed_copies(self, block: Block, node) -> None:
        """Before ``block`` is released: wait for the copies into or out of it that the kernel did not
        wait for and holds no name of (``ttl.copy(t[...], blk)`` then ``blk.push()``), as TT-Lang
        waits a bare copy before its block's next use. A copy whose handle a name holds is the
        kernel's to wait for (TT-Lang's compiler refuses ``tx = ttl.copy(...)`` with no
        ``tx.wait()``): releasing its block first stays an error."""
        def named(t) -> bool:
            scope = getattr(self, "_scope", None)
            while scope is not None:
                if any(value is t for value in scope.names.values()):
                    return True
                scope = scope.parent
            return False

        for region in self.regions:
            for t in region.transfers:
                if t.touches(block) and not t.waited and t.group is None and not t.selections \
                        and t.kind != "recv" and self._dominates(t.value) and not named(t):
                    self.transfer_wait(t, node)

    def pipe_transfer(self, block: Block, node, kind: str, net, *where, named: bool = False,
                      byte_count: int | None = None) -> Transfer:
        """Send ``block`` into (``kind`` "send") or receive it from a pipe of ``net`` at each slot of
        ``where`` (this node's slots, or — ``named`` — routes of the net: a named pipe's), noting the
        pipe's use for the net's checks; the transfer's wait waits for every one."""
        if kind == "send":
            self.wait_copies_into(block, node)
            block.status.copy_from(self.location(node))
        else:
            block.status.copy_into(self.location(node))
            block.status.receiving = net.index
        self.node = node
        landing = self.landing_buffer(net, block.dfb, node)
        if landing is not None:
            self.cb_value(landing)
        cls = ttl.PipeSendOp if kind == "send" else ttl.PipeRecvOp
        ops = [self.emit(cls(block.value, net.index, slot, named, byte_count)) for slot in where]
        self.pipe_uses.append((net, kind, block.dfb, self.location(node), byte_count))
        transfer = self.new_transfer(ops[0].result, kind, block, node)
        for op in ops[1:]:
            op.result.name_hint = ops[0].result.name_hint
        transfer.more = tuple(op.result for op in ops[1:])
        return transfer

    def landing_buffer(self, net, dfb, node):
        """The buffer a net's blocks land in when a node both sends and receives on it (see
        ``PipeNet.needs_landing``): one block per landing slot (``block_count`` of them when every
        pipe reaches one other node); None when the net needs none or more than
        :data:`MAX_LANDING_SLOTS` slots (each slot takes a semaphore)."""
        from tilefold.frontend.ttl.dataflow_buffers import DataflowBuffer

        op = self.operation
        if net.index in op.landing:
            return op.landing[net.index]
        landing = None
        if net.needs_landing() and max(net.landing_slots()) < MAX_LANDING_SLOTS:
            # a net whose pipes each reach one other node holds, in each slot, as many blocks as the
            # buffer of its blocks (block_count): a sender may send that many before its receiver
            # takes the first, as TT-Lang's senders fill a receiving buffer's free blocks
            unicast = all(len(r.destinations) == 1 and not r.loopback for r in net.routes)
            depth = dfb.block_count if unicast else 1
            landing = DataflowBuffer(tuple(dfb.shape), (max(net.landing_slots()) + 1) * depth, dfb.data_format,
                                     dfb.layout, self.location(node),
                                     f"landing of pipe net {net.index}", hidden=True, tile=dfb.tile)
            landing.depth, landing.unicast = depth, unicast
            landing.index = op.add_dataflow_buffer(landing)
        op.landing[net.index] = landing
        return landing

    def new_transfer(self, value, kind: str, block: Block, node) -> Transfer:
        value.name_hint = self.pending_name(node) or "xf"
        t = Transfer(value, kind, block, self.location(node))
        self.regions[-1].transfers.append(t)
        return t

    # -- waiting ---------------------------------------------------------------------------------

    def _dominates(self, value) -> bool:
        block = value.owner.parent_block() if hasattr(value.owner, "parent_block") else None
        current = self.block
        while current is not None:
            if current is block:
                return True
            parent = current.parent_op()
            current = parent.parent_block() if parent is not None else None
        return False

    def transfer_wait(self, t: Transfer, node, explicit: bool = False) -> None:
        """Wait for ``t`` at ``node``: the program's ``wait()`` (``explicit``) or the compiler's, where
        a block's scope ends. A wait for a transfer already waited for (by the program, the compiler,
        or its group's ``wait_all()``) waits for nothing more, as TT-Lang's ``wait()`` of a completed
        transfer returns at once; a member of a group not yet waited is waited on its own."""
        if (t.waited and t.kind != "recv") or (t.group is not None and t.group.waited):
            return
        if not self._dominates(t.value):
            raise self.error(f"wait() for the transfer started at {t.location} must be called in the same loop "
                             "iteration or branch that started it", node)
        if t.kind == "recv":
            # a pipe receive may be waited again (it observes the same transfer) and may have been
            # completed by a ttl.wait_any: then its wait waits only when that selected another one
            if t.selections and self._loops_between(t.value):
                raise self.error(f"wait() for the receive posted at {t.location}, which ttl.wait_any took, must be "
                                 "called in the loop iteration that posted it", node)
            pending = self.receive_completed(t, node, pending=True)
            if pending is False:
                return
        else:
            pending = True
        self.node = node
        if pending is True:
            for value in (t.value, *t.more):
                t.wait_ops.append(self.emit(ttl.WaitOp(value)))
        else:
            then_block = IRBlock()
            self.emit(scf.IfOp(pending, [], [then_block]))
            outer, self.block = self.block, then_block
            for value in (t.value, *t.more):
                t.wait_ops.append(self.emit(ttl.WaitOp(value)))
            self.emit(scf.YieldOp())
            self.block = outer
        if t.done_slot is not None:          # (a later wait may ask whether this one ran)
            self._mark_waited(t, t.wait_ops[-1])
        if t.kind == "recv":
            t.block.status.receiving = None
        first = not t.waited
        self._complete(t, implicit=not explicit)
        if first and t.landed is not None:
            t.landed(node)
        if t.kind != "recv" and not t.converts:
            self._barrier_completes(t)

    def _barrier_completes(self, t: Transfer) -> None:
        """A copy's or send's wait is a NOC barrier (``noc_async_read_barrier`` for reads,
        ``noc_async_write_barrier`` for writes and sends): every earlier read — or write and send —
        this kernel started on every path here and has not waited for completes with it."""
        kinds = {"read"} if t.kind == "read" else {"write", "send", "local"}
        for region in self.regions:
            for u in region.transfers:
                if u is not t and u.kind in kinds and not u.waited and u.group is None and not u.converts \
                        and not u.selections and self._dominates(u.value):
                    self._complete(u, implicit=True)

    def _complete(self, t: Transfer, implicit: bool) -> None:
        """Note ``t`` done here: waited for in this IR block, its blocks' states past the copy."""
        t.waits.append(self.block)
        t.waited, t.implicit = True, implicit
        t.block.status.transfer_done(t.into_block)
        if t.peer is not None:
            t.peer.status.transfer_done(True)

    # -- selecting among receives --------------------------------------------------------------

    def _ancestry(self) -> list:
        """The IR blocks holding the statement being built, innermost first."""
        chain, block = [], self.block
        while block is not None:
            chain.append(block)
            parent = block.parent_op()
            block = parent.parent_block() if parent is not None else None
        return chain

    def _relation(self, block) -> str:
        """How code emitted in IR block ``block`` relates to the statement being built: ``before``
        (it ran on every path here), ``exclusive`` (another branch of an ``if`` holding this
        statement) or ``maybe`` (inside a branch or loop that ended before it)."""
        chain = self._ancestry()
        if any(b is block for b in chain):
            return "before"
        op = inner = None
        while block is not None and not any(b is block for b in chain):
            op, inner = block.parent_op(), block
            block = op.parent_block() if op is not None else None
        if isinstance(op, scf.IfOp) and any(b.parent_op() is op for b in chain):
            return "exclusive"
        if isinstance(op, scf.IfOp) and _in_then(inner, op) and any(
                isinstance(b.parent_op(), scf.IfOp) and _in_then(b, b.parent_op())
                and exclusive(b.parent_op().cond, op.cond) for b in chain):
            return "exclusive"      # the then-branch of an earlier if whose condition excludes this one's
        return "maybe"

    def _loops_between(self, value) -> bool:
        """Whether a runtime loop lies between the definition of ``value`` and the statement being built."""
        home = value.owner.parent_block()
        for block in self._ancestry():
            if block is home:
                return False
            if isinstance(block.parent_op(), (scf.ForOp, scf.WhileOp)):
                return True
        return False

    def _waited_flag(self, t: Transfer, node) -> Scalar:
        """The runtime integer that is 1 once receive ``t`` was waited for: a slot set to 0 where the
        receive is posted and to 1 after each of its waits (the ones already built get theirs now)."""
        from xdsl.dialects import memref
        from xdsl.dialects.builtin import IndexType

        if t.done_slot is None:
            slot = self.emit_prologue(memref.AllocaOp.get(IndexType(), shape=[]), node)
            slot.memref.name_hint = "received"
            t.done_slot = slot.memref
            self._set_waited(t, 0, t.value.owner)
            for wait in t.wait_ops:
                self._mark_waited(t, wait)
            for value, position, _ in t.selections:
                self._mark_selected(t, value, position)
        self.node = node
        return Scalar.opaque(self.emit(memref.LoadOp.get(t.done_slot, [])).res)

    def _mark_waited(self, t: Transfer, wait) -> None:
        """Set ``t``'s waited slot to 1 right after ``wait`` (one of its ttl.wait ops)."""
        self._set_waited(t, 1, wait)

    @staticmethod
    def _mark_selected(t: Transfer, ready, position: int) -> None:
        """Set ``t``'s waited slot to 1 right after the ``ttl.wait_any`` whose result is ``ready``,
        when it selected ``t`` (request ``position``)."""
        from xdsl.dialects import arith, memref
        from xdsl.dialects.builtin import IndexType
        from xdsl.rewriter import InsertPoint, Rewriter

        at = arith.ConstantOp(IntegerAttr(position, IndexType()))
        chosen = arith.CmpiOp(ready, at.result, "eq")
        one = arith.ConstantOp(IntegerAttr(1, IndexType()))
        before = memref.LoadOp.get(t.done_slot, [])
        flag = arith.SelectOp(chosen.result, one.result, before.res)
        ops = [at, chosen, one, before, flag, memref.StoreOp.get(flag.result, t.done_slot, [])]
        for op in ops:
            op.location = ready.owner.location
        Rewriter.insert_op(ops, InsertPoint.after(ready.owner))

    @staticmethod
    def _set_waited(t: Transfer, value: int, after) -> None:
        """Store ``value`` into ``t``'s waited slot right after op ``after``, at its line."""
        from xdsl.dialects import arith, memref
        from xdsl.dialects.builtin import IndexType
        from xdsl.rewriter import InsertPoint, Rewriter

        constant = arith.ConstantOp(IntegerAttr(value, IndexType()))
        store = memref.StoreOp.get(constant.result, t.done_slot, [])
        for op in (constant, store):
            op.location = after.location
        Rewriter.insert_op([constant, store], InsertPoint.after(after))

    def receive_completed(self, t: Transfer, node, pending: bool = False):
        """Whether pipe receive ``t`` was completed before this statement on every path (True), on
        none (False), or as an ``i1``: an earlier ``ttl.wait_any`` selected it; with ``pending`` the
        opposite (whether it is still to be completed)."""
        relations = [self._relation(block) for block in t.waits]
        if "before" in relations:
            return not pending
        done = pending
        selections = [(value, position, self._relation(value.owner.parent_block()))
                      for value, position, _ in t.selections]
        if "maybe" in relations or any(relation == "maybe" for _, _, relation in selections):
            # waited, or selected by a ttl.wait_any, inside a branch or loop that ended: whether it
            # completed is known at run time, from the flag its waits and selections set
            waited = self._waited_flag(t, node)
            done = self.scalars.compare("eq" if pending else "ne", waited, 0)
        for value, position, relation in selections:
            if relation in ("exclusive", "maybe"):
                continue
            self.node = node
            chosen = self.scalars.compare("ne" if pending else "eq", Scalar.opaque(value), position)
            done = self.logical(ast.And if pending else ast.Or, done, chosen, node)
        return done

    def call_wait_any(self, args, kwargs, node):
        """``ttl.wait_any(requests, start)``: a :class:`ReadyReceive` whose ``index()`` is the position
        of the pipe receive the wait completed (see :class:`tilefold.ir.ttl.WaitAnyOp`)."""
        from xdsl.dialects import arith

        self.require_datamovement(node, "ttl.wait_any")
        usage = "ttl.wait_any(requests, start) takes a tuple of pipe receive requests and a start index"
        if len(args) > 2 or set(kwargs) - {"requests", "start"}:
            raise self.error(usage, node)
        given = dict(zip(("requests", "start"), args))
        for name, value in kwargs.items():
            if name in given:
                raise self.error(f"{usage}; {name} is given twice", node)
            given[name] = value
        if "requests" not in given:
            raise self.error(usage, node)
        requests, start = given["requests"], given.get("start", 0)
        if not isinstance(requests, (tuple, list)):
            raise self.error(f"ttl.wait_any takes a tuple of pipe receive requests (the handles of "
                             f"ttl.copy(pipe, block)), not {self.describe(requests)}", node)
        if not requests:
            raise self.error("ttl.wait_any(()): the tuple of requests is empty; give at least one pipe receive "
                             "request", node)
        for i, t in enumerate(requests):
            if not isinstance(t, Transfer) or t.kind != "recv":
                hint = ("; a send completes inside ttl.copy(block, pipe) — call wait() on it"
                        if isinstance(t, Transfer) and t.kind == "send" else "")
                raise self.error(f"ttl.wait_any: request {i} is {self.describe(t)}, not a pipe receive request "
                                 f"(the handle of ttl.copy(pipe, block)){hint}", node)
            if t.landed is not None:
                raise self.error(f"ttl.wait_any: request {i} (posted at {t.location}) receives into a tensor; "
                                 "tilefold selects only among receives into blocks yet — wait() on it", node)
            for j in range(i):
                if requests[j] is t:
                    raise self.error(f"ttl.wait_any: requests {j} and {i} are the same receive request (posted at "
                                     f"{t.location}); give each request once", node)
            if not self._dominates(t.value) or self._loops_between(t.value):
                raise self.error(f"ttl.wait_any: request {i} was posted at {t.location}; call ttl.wait_any in the "
                                 "loop iteration and branch that posted it", node)
        start = self.as_int(start, node, "the start index of ttl.wait_any")
        if not isinstance(start, Scalar):
            start %= len(requests)          # Python's %: a negative start counts from the end
        done = []
        for t in requests:
            flag = self.receive_completed(t, node)
            if isinstance(flag, bool):
                self.node = node
                flag = self.emit(arith.ConstantOp.from_int_and_width(int(flag), 1)).result
            done.append(flag)
        self.node = node
        op = self.emit(ttl.WaitAnyOp([t.value for t in requests], self.scalars.materialize(start), done))
        op.result.name_hint = self.pending_name(node) or "ready"
        self.scalars.ranges[id(op.result)] = (0, len(requests) - 1)
        for position, t in enumerate(requests):
            t.selections.append((op.result, position, self.location(node)))
            if t.done_slot is not None:     # a later line asks whether this receive completed
                self._mark_selected(t, op.result, position)
        self.ready_requests[op.result] = tuple(requests)
        return ReadyReceive(Scalar.opaque(op.result), tuple(requests), self.location(node))

    def selected_in_branches(self, cond) -> tuple[tuple, tuple]:
        """The receives known complete in the then and else branches of an ``if`` whose condition
        compares a ``ttl.wait_any`` index with a number: ``index == k`` selects request ``k`` in the
        then branch (and, of two requests, the other one in the else branch); ``!=`` the reverse."""
        from xdsl.dialects import arith

        from tilefold.ir.ttkernel import constant_int

        op = getattr(cond, "owner", None)
        if not isinstance(op, arith.CmpiOp) or op.predicate.value.data not in (0, 1):
            return (), ()
        for ready, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            requests, k = self.ready_requests.get(ready), constant_int(other)
            if requests is None or k is None or not 0 <= k < len(requests):
                continue
            chosen = (requests[k],)
            rest = (requests[1 - k],) if len(requests) == 2 else ()
            return (chosen, rest) if op.predicate.value.data == 0 else (rest, chosen)
        return (), ()

    def mark_selected(self, transfers) -> list:
        """In a branch where a selection completed each of ``transfers``: their blocks are no longer
        being written (they may be read, copied out or pushed); undone by :meth:`unmark_selected`."""
        from tilefold.frontend.ttl.block_states import NAW

        marked = []
        for t in transfers:
            status = t.block.status
            if status.state == NAW and status.writer_line == t.location:
                marked.append((t, status.state, status.writer_line, len(t.waits)))
                status.transfer_done(True)
        return marked

    @staticmethod
    def unmark_selected(marked) -> None:
        """After the branch: a block still held whose receive was not waited in it is, outside the
        branch, still being written."""
        for t, state, writer, waits in marked:
            if not t.block.status.released and len(t.waits) == waits:
                t.block.status.state, t.block.status.writer_line = state, writer

    def group_add(self, group: GroupTransfer, t, node) -> None:
        if not isinstance(t, Transfer):
            raise self.error(f"GroupTransfer.add() takes a transfer handle from ttl.copy, not {self.describe(t)}", node)
        if group.waited:
            raise self.error("GroupTransfer.add() after wait_all(); make a new ttl.GroupTransfer", node)
        if t.kind not in ("read", "write"):
            what = "a copy between blocks" if t.kind == "local" else "pipe transfers"
            raise self.error(f"{what} cannot join a GroupTransfer; wait() on {'it' if t.kind == 'local' else 'them'}",
                             node)
        if getattr(t, "converts", False):
            raise self.error("a copy that converts data types cannot join a GroupTransfer; wait() on it", node)
        if t.waited or t.group is not None:
            raise self.error("this transfer was already waited for or added to a group", node)
        t.group = group
        group.transfers.append(t)
        group.kinds.add(t.kind)

    def group_wait(self, group: GroupTransfer, node) -> None:
        if group.waited:
            return                       # its transfers are complete: nothing more to wait for
        group.waited = True
        self.node = node
        if group.kinds:
            self.emit(ttl.GroupWaitOp(group.kinds))
        for t in group.transfers:
            t.waited = True
            t.block.status.transfer_done(t.into_block)

    # -- element access ----------------------------------------------------------------------------

    def unsafe_element(self, fn, args, kwargs, node):
        """``ttl.unsafe.element_read(blk, row, col)`` (the element's raw bits as an integer) and
        ``ttl.unsafe.element_write(blk, row, col, value)`` on a block this data movement kernel holds."""
        from xdsl.dialects import arith
        from xdsl.dialects.builtin import IndexType, i32

        self.require_datamovement(node, f"ttl.unsafe.{fn.name}")
        names = ("block", "row", "col") + (("value",) if fn.name == "element_write" else ())
        b = self._kw(fn, args, kwargs, names, node)
        if set(b) != set(names):
            raise self.error(f"ttl.unsafe.{fn.name}({', '.join(names)}) needs all {len(names)} arguments", node)
        block = b["block"]
        if not isinstance(block, Block):
            raise self.error(f"ttl.unsafe.{fn.name} reads a block held with reserve() or wait(), not "
                             f"{self.describe(block)}", node)
        self.check_position(block, node)
        if block.dfb.is_tiled and block.dfb.tile != (32, 32):
            raise self.error(f"ttl.unsafe.{fn.name} on {block.name}, a block of {block.dfb.tile[0]}x"
                             f"{block.dfb.tile[1]} tiles, is not supported by tilefold yet (32x32 tiles only)", node)
        shape = device_block_shape(block.dfb.shape)     # a 1-D block is one row
        rows, cols = shape[-2] * (32 if block.dfb.is_tiled else 1), shape[-1] * (32 if block.dfb.is_tiled else 1)
        coords = []
        for what, v, size in (("row", b["row"], rows), ("col", b["col"], cols)):
            v = self.as_int(v, node, f"the {what} of ttl.unsafe.{fn.name}")
            if isinstance(v, int) and not 0 <= v < size:
                raise self.error(f"ttl.unsafe.{fn.name}: {what} {v} is outside the block ({size} elements)", node)
            coords.append(self.scalars.materialize(v))
        self.node = node
        if fn.name == "element_read":
            block.status.read(self.location(node))
            op = self.emit(ttl.UnsafeElementReadOp(block.value, *coords))
            cast = self.emit(arith.IndexCastOp(op.result, IndexType()))
            return Scalar.opaque(cast.result)
        raw = self.as_int(b["value"], node, "the value of ttl.unsafe.element_write")
        fmt = block.dfb.data_format
        if isinstance(raw, int) and raw and fmt.is_float:
            from tilefold.errors import warn_at

            warn_at(f"ttl.unsafe.element_write writes an element's raw bits: {raw} is not the number {raw} in a "
                    f"{fmt.ttnn_name} block; write a number with ttl.raw_element_write({block.name}, row, col, "
                    f"{float(raw)!r})", self.location(node))
        value = self.scalars.materialize(raw)
        cast = self.emit(arith.IndexCastOp(value, i32))
        if block.acquired == "reserve":
            block.status.store(self.location(node))
        self.emit(ttl.UnsafeElementWriteOp(block.value, *coords, cast.result))
        return None

    # -- pipes -----------------------------------------------------------------------------------

    def pipe_attribute(self, pipe: PipeIdentity, name: str, node):
        """``pipe.dst`` in an ``if_src`` body (the destination node, or a node range with slices for a
        multicast; a range of linear nodes as the pipe names it, the same for each of its routes) and
        ``pipe.src`` in an ``if_dst`` body (the source node): runtime integers, since the pipe a slot
        holds differs from node to node."""
        other = "dst" if pipe.role == "src" else "src"
        device = "destination_device_index" if pipe.role == "src" else "source_device_index"
        net = pipe.net
        if name != other and name != device:
            also = f" and .{device} (its device's index in the operation's device domain)" if net.graph else ""
            raise self.error(f"pipe.{name}: in net.if_{pipe.role}'s body a pipe has .{other} (the node at its other "
                             f"end){also}", node)
        cols, rows = core_grid(net.grid_dims)          # one chip's nodes: peers are named on their own chip
        self.node = node

        def peer(field: str, high: int) -> Scalar:
            op = self.emit(ttl.PipePeerOp(net.index, pipe.slot, pipe.role, field))
            op.result.name_hint = f"peer_{field}"
            self.scalars.ranges[id(op.result)] = (0, high)
            return Scalar.opaque(op.result)

        def coordinates(x, y, dims: int):
            """A node's coordinates as the pipe names them (``dims`` of them), from its column and row."""
            ops = {"+": self.scalars.add, "*": self.scalars.mul, "//": self.scalars.floordiv,
                   "%": self.scalars.mod}
            value = node_coordinates(net.grid_dims, dims, x, y, lambda op, a, b: ops[op](a, b), self.location(node))
            return value if isinstance(value, tuple) else (value,)

        def linear_coordinates(index, dims: int):
            return coordinates(self.scalars.floordiv(index, rows), self.scalars.mod(index, rows), dims)

        if name == device:
            chips = self.operation.device_domain.size if self.operation.device_domain is not None else 1
            return peer("device", chips - 1)
        if pipe.role == "dst":
            if net.linear_src:
                return peer("linear", cols * rows - 1)
            if net.src_dims:
                return coordinates(peer("x", cols - 1), peer("y", rows - 1), net.src_dims)
            return peer("x", cols - 1), peer("y", rows - 1)
        if net.linear_dst:
            return peer("linear", cols * rows - 1)
        if net.dst_dims:
            return coordinates(peer("x0", cols - 1), peer("y0", rows - 1), net.dst_dims)
        boxes = {r.box for r in net.routes}
        if None not in boxes and len({len(b) for b in boxes}) == 1:     # boxes of an n-D grid, as written
            sliced = [any(b[a] for b in boxes) for a in range(len(next(iter(boxes))))]
            low = linear_coordinates(peer("first", cols * rows - 1), len(sliced))
            high = linear_coordinates(self.scalars.sub(peer("stop", cols * rows), 1), len(sliced))
            return tuple(slice(lo, self.scalars.add(hi, 1)) if s else lo for lo, hi, s in zip(low, high, sliced))
        spans = {r.span[1] - r.span[0] for r in net.routes if r.span is not None}
        if all(r.span is not None and r.box is None for r in net.routes):   # linear ranges, as written
            start = peer("first", cols * rows - 1)
            if len(spans) == 1:
                return (slice(start, self.scalars.add(start, spans.pop())),)
            return (slice(start, peer("stop", cols * rows)),)
        coords = []
        for d, size in ((0, cols), (1, rows)):
            lo, hi = (("x0", "x1") if d == 0 else ("y0", "y1"))
            widths = {getattr(r, hi) - getattr(r, lo) + 1 for r in net.routes}
            if widths == {1}:
                coords.append(peer(lo, size - 1))
            elif len(widths) == 1:          # a slice of a known size
                start = peer(lo, size - 1)
                coords.append(slice(start, self.scalars.add(start, widths.pop())))
            else:
                coords.append(slice(peer(lo, size - 1), self.scalars.add(peer(hi, size - 1), 1)))
        return tuple(coords)

    def bound_net(self, net: PipeNet) -> PipeNet:
        """``net`` resolved on this operation's grid (a net made outside the operation's body)."""
        return net.bound(self.operation)

    def pipe_role(self, net: PipeNet, role: str, node):
        """``net.is_src()`` / ``is_dst()`` / ``is_active()``: whether this node sends through a pipe
        of the net, receives from one, or either — an ``i1`` computed from the node's pipe counts
        (runtime arguments), so one kernel serves every node of the grid."""
        self.node = node
        flags = []
        for r in (("src", "dst") if role == "active" else (role,)):
            count = self.emit(ttl.PipeCountOp(net.index, r))
            count.result.name_hint = f"{r}_pipes"
            flags.append(self.scalars.compare("sgt", Scalar.opaque(count.result), 0))
        return flags[0] if len(flags) == 1 else self.logical(ast.Or, flags[0], flags[1], node)

    def pipe_destination_count(self, net: PipeNet, node):
        """``net.destination_count()``: how many pipes of the net have this node among their
        destinations — the number of times ``net.if_dst(body)`` runs ``body`` here (a runtime
        integer, as each node has its own count)."""
        self.node = node
        count = self.emit(ttl.PipeCountOp(net.index, "dst"))
        count.result.name_hint = "dst_pipes"
        return Scalar.opaque(count.result)

    def pipe_has_node(self, pipe: Pipe, node):
        """``pipe.has_current_core()``: whether this node is the pipe's source or one of its
        destinations — a compile-time bool on a one-node grid, else an ``i1`` from the node's
        coordinates, so one kernel serves every node (usable in compute kernels too)."""
        nets = nets_holding(pipe, self.operation)
        routes = ([nets[0].routes[r] for r in nets[0].routes_of(pipe)] if nets
                  else resolve_routes(pipe, 0, self.operation.grid_dims, self.location(node)))
        x, y = self.node_values(node)
        self.node = node
        compare = self.scalars.compare
        src = routes[0].src
        found = self.logical(ast.And, compare("eq", x, src[0]), compare("eq", y, src[1]), node)
        for route in routes:           # the source, or a node of any of the pipe's rectangles
            inside = None
            for value, low, high in ((x, route.x0, route.x1), (y, route.y0, route.y1)):
                within = self.logical(ast.And, compare("sge", value, low), compare("sle", value, high), node)
                inside = within if inside is None else self.logical(ast.And, inside, within, node)
            found = self.logical(ast.Or, found, inside, node)
        return found

    def pipe_condition(self, net: PipeNet, role: str, body, node, scope) -> None:
        from tilefold.frontend.ttl.variables import carried_names

        self.require_datamovement(node, f"net.if_{role}")
        if not isinstance(body, LocalFunction):
            raise self.error(f"net.if_{role}() takes a function defined in this kernel (def body(pipe): ...)", node)
        fn = body.node
        params = fn.args
        # one parameter (the pipe); more only with defaults (``def send(pipe, dfb=dfb)``, binding a
        # loop's value as Python does)
        bound = dict(body.defaults or {})
        if (not params.args or params.vararg or params.kwarg or params.posonlyargs
                or any(p.arg not in bound for p in params.args[1:]) or params.args[0].arg in bound
                or any(p.arg not in bound for p in params.kwonlyargs)):
            raise self.error(f"the pipe body {fn.name} takes exactly one parameter (the pipe), and others only with "
                             "default values", fn)
        count = net.max_sources() if role == "src" else net.max_destinations()
        for slot in range(count):
            self.node = node
            n = self.emit(ttl.PipeCountOp(net.index, role))
            n.result.name_hint = f"{role}_pipes"
            cond = self.scalars.compare("slt", slot, Scalar.opaque(n.result))
            held_before = self.held_snapshot()
            then_block = IRBlock()
            self.emit(scf.IfOp(cond, [], [then_block]))
            outer = self.block
            self.block = then_block
            inner = Scope(parent=body.scope, carried=carried_names(fn))
            inner.names.update(bound)
            inner.names[params.args[0].arg] = PipeIdentity(net, slot, role)
            self.function_stack.append(fn)
            self.sending_nets.append(net.index if role == "src" else -1)
            self.statements(fn.body, inner, Region("branch", fn))
            self.sending_nets.pop()
            self.function_stack.pop()
            self.check_held(held_before, fn, "pipe body")
            self.node = node
            self.emit(scf.YieldOp())
            self.block = outer


def _self_pipes_only(net) -> bool:
    """Whether every route of ``net`` goes from a node to that node alone."""
    return bool(net.routes) and all(r.destinations == [r.src] for r in net.routes)


# the data formats a ttl.copy converts between (on the data movement core, element by element)
MAX_LANDING_SLOTS = 8
_CONVERTIBLE = {DataFormat.Float16_b, DataFormat.Float32}


def _in_then(block, op: scf.IfOp) -> bool:
    """Whether IR block ``block`` is the then-block of ``op``."""
    return block is not None and block.parent is op.true_region
