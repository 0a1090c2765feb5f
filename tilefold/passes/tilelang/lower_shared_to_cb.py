"""lower_shared_to_cb (Stage C1): local buffers → circular buffers; block copies → page transfers.

Reads: ``tile.alloc`` buffers and every op that defines or uses them, ``tt.cb.*`` (from
propagate_tt_layout), ``tt.buffer.*``.

Each local buffer becomes one circular buffer. Its producer and consumer come from the
dataflow, never from names: a buffer filled by ``T.copy`` from a global tensor is produced
by the reader kernel, one written by a compute op (fill, gemm, reduce, an element store,
a local copy) by the compute kernel; one copied to a global tensor is consumed by the
writer, one read by compute ops by the compute kernel. A buffer that compute reads *and*
that is copied out (or that is copied out twice) gets a separate output buffer
``<name>_out`` and a local copy into it, so that every CB has one consumer.

Writes:

- ``tt.cb.<name>`` = {index, page_size, data_format, depth, block_tiles, producer,
  consumer, scope}: indices by role in the TT-Metalium convention — reader-filled CBs from
  c_0, writer-drained CBs from c_16, compute-internal CBs from c_24 (then any free index);
  compute-internal CBs hold one block of the buffer's own dtype.
- ``tile.read_block`` / ``tile.write_block`` in place of global↔local ``tile.copy``:
  ``first_page`` = the page (tile) id of the block's first tile, ``row_stride`` = tiles
  per row of the (padded) tensor.
- ``tile.read_element`` in place of ``tile.element``: the element's folded row and column.
- ``tt.global_roles`` = {name: input | output | inout | unused}.
- ``tt.compute_config`` = the compute kernel's ComputeConfig: HiFi4, and DST in float32
  (``fp32_dest_acc_en``) when a buffer that compute produces is float32.

Errors: a buffer filled both by ``T.copy`` and by compute; a tensor read after it is
written in the same kernel (reader and writer run concurrently); more than 32 CBs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp
from xdsl.rewriter import Rewriter
from xdsl.transforms.dead_code_elimination import region_dce

from tilefold.ir.tile_types import memref_type
from tilefold.ir import tile
from tilefold.layout.formats import DataFormat
from tilefold.passes.tilelang.accumulation import analyze
from tilefold.passes.tilelang.affine import Affine, affine_of, constant_op, materialize
from tilefold.passes.tilelang.copy_geometry import copy_geometry, folded_row_strides
from tilefold.passes.tilelang.internal_buffers import scratch_for
from tilefold.ir.attributes import get_attr, kernel_function, param_names, set_attr
from tilefold.ir.buffer_layouts import entry_format
from tilefold.passes.tilelang.common import (
    TILE,
    inserter,
    buffer_name,
    buffers,
    compile_error,
    insert_before,
    is_global,
    memref_shape,
    persistent_loop,
)
from tilefold.passes.device_pass import DevicePass
from tilefold.ir.locations import source_location

FIRST_INDEX = {"input": 0, "output": 16, "intermediate": 24}


@dataclass
class Flow:
    """Who defines and who uses one local buffer."""

    copy_in: list = field(default_factory=list)
    compute_defs: list = field(default_factory=list)
    compute_uses: list = field(default_factory=list)
    copy_out: list = field(default_factory=list)


def compute_defs_uses(op) -> tuple[list, list]:
    """(defined, used) memref operands of a compute op."""
    if isinstance(op, tile.FillOp):
        return [op.buffer], []
    if isinstance(op, tile.GemmOp):
        uses = [op.a, op.b] + ([op.c] if analyze(op).kind == "update" else [])
        return [op.c], uses
    if isinstance(op, tile.ReduceOp):
        return [op.dst], [op.src] + ([] if op.clear.value.data else [op.dst])
    if isinstance(op, tile.CopyOp) and not op.offsets:
        return [op.dst], [op.src]
    if isinstance(op, (tile.TransposeOp, tile.CumsumOp)):
        return [op.dst], [op.src]
    if isinstance(op, tile.IotaOp):
        return [op.buffer], []
    if isinstance(op, tile.ParallelOp):
        defs = [o.buffer for o in op.walk() if isinstance(o, tile.StoreOp)]
        uses = [o.buffer for o in op.walk() if isinstance(o, tile.LoadOp)]
        return list(dict.fromkeys(defs)), list(dict.fromkeys(uses))
    return [], []


def flows(kernel: func.FuncOp) -> dict[str, Flow]:
    out: dict[str, Flow] = {}
    for name, info in buffers(kernel).items():
        if not info.is_global:
            out[name] = Flow()
    for op in kernel.walk():
        if isinstance(op, tile.CopyOp) and op.offsets:
            if is_global(op.src, kernel):
                out[buffer_name(op.dst, kernel)].copy_in.append(op)
            else:
                out[buffer_name(op.src, kernel)].copy_out.append(op)
            continue
        defs, uses = compute_defs_uses(op)
        for v in defs:
            if not is_global(v, kernel):
                out[buffer_name(v, kernel)].compute_defs.append(op)
        for v in uses:
            if not is_global(v, kernel):
                out[buffer_name(v, kernel)].compute_uses.append(op)
    return out


WIDE_DST_FORMATS = (DataFormat.Float32, DataFormat.Float16, DataFormat.Int32, DataFormat.UInt32)


def compute_config(kernel: func.FuncOp, cbs: dict[str, dict]) -> dict:
    """The compute kernel's config: DST holds 32-bit values (``fp32_dest_acc_en``) when a buffer that
    compute produces or reads is float32 (a float32 fragment, e.g. a gemm accumulator, or a
    float32 tensor converted on its way through), float16 (whose 10-bit mantissas a bfloat16 DST
    would cut to 7) or a 32-bit integer. A 32-bit DST is also what lets a float32 CB that is only
    copied unpack straight to DST, without the source registers' truncation. Math fidelity (default
    HiFi4) and approximation mode come from ``tt.user_compute`` (``T.annotate_tt_compute``)."""
    infos = buffers(kernel)
    fp32 = any("compute" in (cb["producer"], cb["consumer"]) and infos[name].data_format in WIDE_DST_FORMATS
               for name, cb in cbs.items())
    user = get_attr(kernel, "tt.user_compute", {})
    return {"math_fidelity": user.get("math_fidelity", "HiFi4"), "fp32_dest_acc_en": fp32, "dst_full_sync_en": False,
            "math_approx_mode": bool(user.get("math_approx_mode", False))}


class LowerSharedToCB(DevicePass):
    """Local buffers → CBs with dataflow roles; copies → page transfers (see the module docstring)."""

    name = "lower-shared-to-cb"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = kernel_function(op)
        self._split_shared_outputs(kernel)
        self._check_global_hazards(kernel)
        cbs = self._assign(kernel)
        for name, cb in cbs.items():
            set_attr(kernel, f"tt.cb.{name}", cb)
        self._lower_copies(kernel, cbs)
        self._lower_elements(kernel)
        region_dce(kernel.body)

    # -- one consumer per CB ------------------------------------------------------------------------

    def _split_shared_outputs(self, kernel: func.FuncOp) -> None:
        infos = buffers(kernel)
        names = set(infos)
        entry = persistent_loop(kernel)
        for name, flow in flows(kernel).items():
            if not flow.copy_out or (not flow.compute_uses and len(flow.copy_out) == 1):
                continue
            for copy in flow.copy_out:
                glob_fmt = entry_format(get_attr(kernel, f"tt.buffer.{buffer_name(copy.dst, kernel)}"))
                out, n = f"{name}_out", 1
                while out in names:
                    out, n = f"{name}_out{n}", n + 1
                names.add(out)
                shape = memref_shape(copy.src)
                alloc = tile.AllocOp(out, "fragment", memref_type(shape, glob_fmt, "fragment"))
                alloc.result.name_hint = out
                insert_before(entry, alloc).location = infos[name].op.location
                insert_before(copy, tile.CopyOp(copy.src, alloc.result))
                copy.operands[0] = alloc.result

    def _check_global_hazards(self, kernel: func.FuncOp) -> None:
        body = persistent_loop(kernel).body.block
        by_global: dict[str, list] = {}
        for op in kernel.walk():
            if isinstance(op, tile.CopyOp) and op.offsets:
                for end in (op.src, op.dst):
                    if is_global(end, kernel):
                        by_global.setdefault(buffer_name(end, kernel), []).append((op, end is op.src))
        for name, copies in by_global.items():
            reads = [c for c, is_read in copies if is_read]
            writes = [c for c, is_read in copies if not is_read]
            if not reads or not writes:
                continue
            first = [affine_of(v) for v in copies[0][0].offsets]
            for c, _ in copies:
                same = all(a.same_as(affine_of(v)) for a, v in zip(first, c.offsets))
                if c.parent_block() is not body or not same:
                    raise compile_error(c, f"{name} is both read and written by this kernel at different blocks or in "
                                           "a loop; the reader and writer kernels run concurrently, so a block may be "
                                           "read before or after it is written. Write the result to its own tensor")
            order = {id(op): i for i, op in enumerate(kernel.walk())}
            written = min(order[id(c)] for c in writes)
            late = [c for c in reads if order[id(c)] > written]
            if late:
                raise compile_error(late[0], f"{name} is read back after this kernel writes it; the reader and writer "
                                             "kernels run concurrently, so the read may come first. Read the value "
                                             "from the buffer it was written from, or write it in one `with "
                                             "T.Kernel` grid and read it in the next")

    # -- CB indices -----------------------------------------------------------------------------------

    def _assign(self, kernel: func.FuncOp) -> dict[str, dict]:
        infos = buffers(kernel)
        known = {name: get_attr(kernel, f"tt.cb.{name}", None) for name in infos if not infos[name].is_global}
        used: set[int] = set()
        cbs: dict[str, dict] = {}
        order = [op.buffer_name.data for op in kernel.walk() if isinstance(op, tile.AllocOp)]
        flow_of = flows(kernel)
        for name in order:
            flow, info = flow_of[name], infos[name]
            if flow.copy_in and flow.compute_defs:
                raise compile_error(flow.compute_defs[0], f"{name} is filled by T.copy and also written by a compute "
                                                          "op; write the computed values into a separate fragment")
            producer = "reader" if flow.copy_in else "compute"
            consumer = "writer" if flow.copy_out else ("compute" if flow.compute_uses else "none")
            role = "input" if producer == "reader" else ("output" if consumer == "writer" else "intermediate")
            index = self._next_index(role, used, info.op)
            used.add(index)
            base = known.get(name) if (flow.copy_in or flow.copy_out) else None
            if base is None:
                fmt = info.data_format
                blocks = 1
                if consumer == "writer":
                    fmt = entry_format(get_attr(kernel, f"tt.buffer.{buffer_name(flow.copy_out[0].dst, kernel)}"))
                    blocks = 2
                base = {"page_size": fmt.tile_size(TILE, TILE), "depth": blocks * info.num_tiles,
                        "data_format": fmt.value, "block_tiles": list(info.tiles) if len(info.tiles) == 2
                        else [info.tiles[0], 1]}
            cbs[name] = {**base, "index": index, "producer": producer, "consumer": consumer, "scope": info.scope}
            where = source_location(info.op)
            if where is not None:                        # the T.alloc_* line, for errors about this CB
                cbs[name]["loc"] = [where.file, where.line]
        roles = {}
        for name in param_names(kernel):
            read = any((isinstance(o, tile.CopyOp) and o.offsets and o.src == infos[name].value)
                       or (isinstance(o, tile.ElementOp) and o.buffer == infos[name].value) for o in kernel.walk())
            written = any(isinstance(o, tile.CopyOp) and o.offsets and o.dst == infos[name].value
                          for o in kernel.walk())
            roles[name] = "inout" if read and written else "input" if read else "output" if written else "unused"
        set_attr(kernel, "tt.global_roles", roles)
        set_attr(kernel, "tt.compute_config", compute_config(kernel, cbs))
        return cbs

    def _next_index(self, role: str, used: set[int], op) -> int:
        start = FIRST_INDEX[role]
        count = self.arch.max_circular_buffers
        for index in list(range(start, count)) + list(range(0, start)):
            if index not in used:
                return index
        raise compile_error(op, f"the kernel needs more than {count} circular buffers; use fewer local buffers")

    # -- copies ---------------------------------------------------------------------------------------

    def _lower_elements(self, kernel: func.FuncOp) -> None:
        """Each ``tile.element`` → ``tile.read_element`` at its folded row and column."""
        for key, op in enumerate(o for o in list(kernel.walk()) if isinstance(o, tile.ElementOp)):
            name = buffer_name(op.buffer, kernel)
            entry = get_attr(kernel, f"tt.buffer.{name}")
            padded = list(entry["padded_shape"])
            indices = list(op.indices)
            if len(indices) == 1:
                indices = [None, indices[0]]
            strides = folded_row_strides(padded)
            at = inserter(op)
            row = None
            for index, stride in zip(indices[:-1], strides):
                if index is None:
                    continue
                term = index if stride == 1 else at(arith.MuliOp(index, at(constant_op(stride)).result)).result
                row = term if row is None else at(arith.AddiOp(row, term)).result
            if row is None:
                row = at(constant_op(0)).result
            fmt = entry_format(entry)
            new = tile.ReadElementOp(row, indices[-1], name, padded[-1] // TILE, fmt.tile_size(TILE, TILE) // (TILE * TILE),
                                     key)
            new.location = op.location
            Rewriter.replace_op(op, new)

    def _lower_copies(self, kernel: func.FuncOp, cbs: dict[str, dict]) -> None:
        for copy in [o for o in kernel.walk() if isinstance(o, tile.CopyOp) and o.offsets]:
            entry = get_attr(kernel, f"tt.buffer.{buffer_name(copy.src if is_global(copy.src, kernel) else copy.dst, kernel)}")
            padded = entry["padded_shape"]
            g = copy_geometry(copy, kernel, padded)
            at = inserter(copy)
            tiles_per_row = padded[-1] // TILE
            cb = cbs[g.lname]["index"]
            if g.moves_whole_tiles():
                page = Affine({v: c // TILE for v, c in g.first_row.terms.items()}, g.first_row.const // TILE)
                page = page.scaled(tiles_per_row) + Affine({v: c // TILE for v, c in g.first_col.terms.items()},
                                                           g.first_col.const // TILE)
                rows, cols = g.local_tiles
                cls = tile.ReadBlockOp if g.reading else tile.WriteBlockOp
                new = cls(materialize(page, at), g.gname, cb, rows, cols, tiles_per_row)
            else:
                fmt = entry_format(entry)
                if fmt.is_block_float:
                    raise compile_error(copy, f"{g.gname} is stored as {fmt.ttnn_name}, whose tiles move whole; copy "
                                              "blocks of whole 32x32 tiles of it")
                by_element = not g.face_rows()
                if by_element:
                    scratch_for(kernel, "reader" if g.reading else "writer")
                cls = tile.ReadRowsOp if g.reading else tile.WriteRowsOp
                new = cls(materialize(g.first_row, at), materialize(g.first_col, at), g.gname, cb, g.rows, g.cols,
                          g.row_step, tiles_per_row, fmt.tile_size(TILE, TILE) // (TILE * TILE), by_element,
                          column=g.column)
            new.location = copy.location
            Rewriter.replace_op(copy, new)
