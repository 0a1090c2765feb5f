"""The host Program of a lowered TT-Lang operation: buffers, circular buffers, kernels, arguments.

Reads: the ttkernel module the pipeline produced (kernel functions with ``ttl.compile_args`` /
``ttl.runtime_args``, the module's ``ttl.circular_buffers`` and ``ttl.pipe_nets`` tables and its
``ttl.active_nodes``) and the operation's capture (tensors, pipe nets, grid, the semaphores of its
``runtime_resource_factory``). Writes: a :class:`~tilefold.program.Program`:

* each tensor a kernel reads or writes → a buffer named after the operation's parameter:
  interleaved in DRAM (or L1), or — for a sharded tensor — sharded by its memory config, each shard
  in the L1 of its core; a written tensor is ``inout`` so that what the kernels do not write keeps
  its value;
* each dataflow buffer → circular buffer ``c_<index>`` on every node of the grid (page = one tile
  of the buffer's data format, or one block row; pages = block pages × block count); a
  tensor-backed one at its sharded L1 tensor's address (plus its byte offset) on each node holding
  a shard of it;
* the semaphores of each pipe net (a ``valid`` per receive slot, ``one``, ``ready`` s; see ``net_layout``),
  then the operation's ``ttl.Semaphore`` s, then those its ``runtime_resource_factory`` describes;
* the compute kernel with the compute config the pipeline chose, the first data movement kernel on
  RISCV_0 and the second on RISCV_1, each on the whole grid (on the nodes of the PipeNet active set
  when the operation has one) with its compile-time arguments, and per
  node its runtime arguments: node coordinates, tensor addresses, and for each pipe net the pipes it
  sends and receives (NOC rectangles, destination counts, the sender's NOC coordinates, the logical
  coordinates of the other end for ``pipe.src`` / ``pipe.dst``), per route: a pipe whose
  destinations form no rectangle takes several routes, each its own multicast and ``ready``.

Errors: a tensor-backed buffer whose blocks do not fit the shard of each node, or a grid no node of
which holds a shard, at the buffer's line; :class:`L1OverflowError` at the line of the dataflow buffer that does not fit a node's L1
(the first, in the order they were made, past the budget).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tilefold.ir.ttl_metadata import (ACTIVE_NODES_ATTR, RUNTIME_WORDS_ATTR, STAGING_BUFFERS_ATTR,
                                      pipe_semaphore_roles, pipe_semaphores)
from tilefold.arch.cores import CoreCoord, CoreRange, CoreRangeSet
from tilefold.errors import KernelError, L1OverflowError

from tilefold.ir import ttl
from tilefold.ir.ttkernel import compute_config
from tilefold.layout.formats import DataFormat, tensor_tile
from tilefold.program import ComputeConfig, DataMovementConfig, HalfWords, NocX, NocY, Program
from tilefold.program.program import SEMAPHORE_SIZE
from tilefold.program.unpack_to_dest import TTL_FLOAT32_TO_DEST_CALLS, float32_source_reads, unpack_to_dest_mode



@dataclass
class CircularBufferEntry:
    index: int
    name: str
    shape: tuple[int, ...]
    data_format: DataFormat
    layout: str
    block_count: int
    page_size: int
    num_pages: int
    tile: tuple[int, int] = (32, 32)

    @property
    def total_size(self) -> int:
        return self.page_size * self.num_pages


def circular_buffer_table(module: ModuleOp) -> list[CircularBufferEntry]:
    entries = []
    for entry in module.attributes[ttl.CB_TABLE_ATTR].data:
        d = entry.to_dict()
        entries.append(CircularBufferEntry(d["index"], d["name"], tuple(d["shape"]), DataFormat(d["data_format"]),
                                           d["layout"], d["block_count"], d["page_size"], d["num_pages"],
                                           tuple(d.get("tile") or (32, 32))))
    return entries


def _align(n: int, a: int) -> int:
    return -(-n // a) * a


ARENA_BUFFER = "dfb_l1_arena"
ARENA_PAGE = DataFormat.Float16_b.tile_size()


def _add_arena(program: Program, size: int, cores: CoreRangeSet):
    """The L1 area of ``size`` bytes on each node of ``cores`` where dataflow buffers take turns
    (:func:`tilefold.frontend.ttl.dfb_reuse.l1_arena`): a height-sharded L1 buffer of whole tiles,
    one shard per node, holding no host data."""
    from tilefold.layout.tensor_spec import BufferType, MemoryConfig, ShardSpec, TensorMemoryLayout

    rows = -(-size // ARENA_PAGE) * 32
    nodes = cores.num_cores
    config = MemoryConfig(TensorMemoryLayout.HEIGHT_SHARDED, BufferType.L1, ShardSpec(cores, (rows, 32)))
    return program.add_buffer(ARENA_BUFFER, (nodes * rows, 32), "bfloat16", "TILE", "L1", role="arena",
                              memory_config=config)


def check_l1(entries: list[CircularBufferEntry], capture, semaphores: int, arch, arena: int = 0) -> None:
    """Raise :class:`L1OverflowError` at the user's line when the buffers (and the ``arena`` bytes
    some of them take turns in) do not fit one node's L1."""
    arena = _align(arena, ARENA_PAGE)
    total = sum(_align(e.total_size, arch.l1_alignment) for e in entries) + semaphores * SEMAPHORE_SIZE + arena
    if total <= arch.l1_free:
        return
    by_index = {d.index: d for d in capture.dataflow_buffers}
    ranked = sorted(entries, key=lambda e: -e.total_size)
    largest = next((by_index[e.index] for e in ranked if e.index in by_index), None)
    used = semaphores * SEMAPHORE_SIZE + arena
    for e in entries:                  # the buffer that crosses the budget, in the order they were made
        used += _align(e.total_size, arch.l1_alignment)
        if used > arch.l1_free and e.index in by_index:
            largest = by_index[e.index]
            break
    described = ", ".join(
        f"{by_index[e.index].name if e.index in by_index else e.name} {e.total_size} B" for e in ranked[:4])
    added = [e for e in entries if e.index in by_index and by_index[e.index].hidden]
    added_text = "" if not added else (
        f"; {sum(_align(e.total_size, arch.l1_alignment) for e in added)} B of it are buffers the compiler adds ("
        + ", ".join(f"{by_index[e.index].name} {e.total_size} B" for e in added[:4]) + (", ..." if len(added) > 4 else "")
        + ")")
    arena_text = f", and {arena} B of buffers taking turns in one L1 area" if arena else ""
    raise L1OverflowError(
        f"the dataflow buffers of operation {capture.name!r} need {total} B of L1 on each node ({described}"
        f"{', ...' if len(ranked) > 4 else ''}{arena_text}) but a {arch.board} node has {arch.l1_free} B free{added_text}; use "
        "smaller blocks or a smaller block_count", largest.location if largest is not None else capture.location)


def _check_backing(dfb, entry: CircularBufferEntry, buffer, cores: CoreRangeSet, arch) -> CoreRangeSet:
    """The nodes of the grid holding a shard of a tensor-backed buffer's tensor, where the buffer
    exists (a node without one has no such buffer: a kernel there using it stops the run at its
    line); its blocks fit each shard. An error at the buffer's line otherwise."""
    layout = buffer.buffer_layout(arch)
    shard_cores = set(layout.distribution.cores_with_data)
    inside = [c for c in cores.cores() if c in shard_cores]
    name = dfb.backing.name
    if not inside:
        raise KernelError(f"{dfb.name}: no node of the grid holds a shard of {name}; a tensor-backed buffer lives in "
                          f"its tensor's shards (shard {name} over nodes of the operation's grid)", dfb.location)
    room = layout.bytes_per_bank(arch)
    if layout.aligned_page_size(arch) != buffer.page_size:
        raise KernelError(f"{dfb.name}: the pages of {name} ({buffer.page_size} B) lie {layout.aligned_page_size(arch)} "
                          f"B apart in L1, so its shard's bytes are not the buffer's {entry.page_size} B tiles; use a "
                          "tensor of tiles whose size is a multiple of the L1 alignment", dfb.location)
    small, large = sorted((buffer.page_size, entry.page_size))
    if large % small:
        raise KernelError(f"{dfb.name}: the pages of {name} ({buffer.page_size} B) and the buffer's tiles "
                          f"({entry.page_size} B) do not divide one another, so the shard's bytes make no whole "
                          "tiles of the buffer; give tile= a tile whose bytes are a multiple or a part of the tensor's",
                          dfb.location)
    if dfb.byte_offset + entry.total_size > room:
        pages = room // entry.page_size
        raise KernelError(f"{dfb.name}: {entry.num_pages} tiles ({'x'.join(map(str, dfb.shape))} x block_count="
                          f"{dfb.block_count}) from byte {dfb.byte_offset} do not fit the {pages} tiles of {name}'s "
                          "shard on each node; use a smaller shape or block_count", dfb.location)
    return CoreRangeSet([CoreRange((c.x, c.y), (c.x, c.y)) for c in inside])


def _check_overlap(dfb, entry: CircularBufferEntry, earlier) -> None:
    """Two tensor-backed buffers over one tensor take the same bytes or none of the same bytes."""
    start, end = dfb.byte_offset, dfb.byte_offset + entry.total_size
    for other, e in earlier:
        if other.backing.index != dfb.backing.index:
            continue
        o_start, o_end = other.byte_offset, other.byte_offset + e.total_size
        if (start, end) != (o_start, o_end) and start < o_end and o_start < end:
            raise KernelError(f"{dfb.name} (bytes {start}-{end} of {dfb.backing.name}'s shard) partly overlaps "
                              f"{other.name} (bytes {o_start}-{o_end}); tensor-backed buffers over one tensor take "
                              "the same byte range or disjoint ones", dfb.location)


def _kernel_functions(module: ModuleOp) -> list[func.FuncOp]:
    return [op for op in module.ops if isinstance(op, func.FuncOp)]


def build_program(module: ModuleOp, built, arch) -> Program:
    """The Program of a lowered operation (see the module docstring)."""
    capture = built.capture
    cols, rows = capture.grid
    cores = CoreRangeSet([CoreRange((0, 0), (cols - 1, rows - 1))])
    program = Program(name=capture.name, arch=arch)
    backed = {d.index: d for d in capture.dataflow_buffers if d.backing is not None}
    used = built.reads | built.writes | {d.backing.index for d in backed.values()}
    written = built.writes | {d.backing.index for d in backed.values()}
    for arg in capture.tensors:
        if arg.index not in used:
            continue
        tensor = arg.tensor
        memory = tensor.memory_config()
        buffer_type = getattr(getattr(memory, "buffer_type", None), "name", "DRAM")
        layout = "TILE" if "TILE" in str(getattr(tensor.layout, "name", tensor.layout)).upper() else "ROW_MAJOR"
        sharded = getattr(memory, "is_sharded", False)
        domain = capture.device_domain
        if domain is not None and domain.size > 1 and (sharded or arg.index in written) \
                and arg.name not in capture.device_pieces:
            raise KernelError(f"operation {capture.name!r} runs over {domain!r} and writes tensor {arg.name!r}, which "
                              f"is one device tensor; give a mesh tensor (ttnn.from_torch(..., device=mesh_device, "
                              "mesh_mapper=...)) so that each device writes its own piece", capture.location)
        layout_kind = getattr(getattr(memory, "memory_layout", None), "name", "")
        if sharded and layout == "ROW_MAJOR" and "HEIGHT" not in str(layout_kind).upper():
            # a shard of such a tensor holds part of each row: its pages are shard rows, not tensor rows
            how = str(layout_kind).lower().removesuffix("_sharded") or "width"
            raise KernelError(f"tensor {arg.name!r} is row-major and {how}-sharded; "
                              "tilefold's kernels read and write row-major tensors interleaved or height-sharded "
                              "(whole rows on each node) — shard it by height, convert it with ttnn.to_memory_config, "
                              "or use the tile layout", capture.location)
        if domain is not None and sharded:
            raise KernelError(f"tensor {arg.name!r} is sharded in L1; an operation over a device domain reads and "
                              "writes interleaved tensors (DRAM or L1) only — sharded pieces are not supported by "
                              "tilefold yet", capture.location)
        for device in range(domain.size if arg.name in capture.device_pieces else 1):
            program.add_buffer(capture.device_buffer(arg.name, device), tuple(getattr(tensor, "device_shape", tensor.shape)),
                               tensor.dtype.name, layout, buffer_type,
                               tile=tensor_tile(tensor) if layout == "TILE" else None,
                               role="inout" if arg.index in written else "input",
                               memory_config=memory if sharded else None)
    for mailbox in capture.mailboxes.values():     # the DRAM the nets' blocks land in (never host data)
        pages = mailbox.pages(cols * rows)
        program.add_buffer(mailbox.buffer_name, (pages * mailbox.tile[0], mailbox.tile[1]),
                           mailbox.data_format.ttnn_name, "TILE", "DRAM", tile=mailbox.tile, role="scratch")
    entries = circular_buffer_table(module)
    nets = {net.index: net for net in capture.pipe_nets}
    # the pipe nets' semaphores, then the operation's ttl.Semaphore s
    initial = [0] * pipe_semaphores(module) + [s.initial_value for s in capture.semaphores]    # then the ttl.Semaphore s
    in_arena = {d.index: d for d in capture.dataflow_buffers if d.arena_offset is not None}
    check_l1([e for e in entries if e.index not in backed and e.index not in in_arena], capture, len(initial), arch,
             capture.l1_arena)    # backed: no L1 of their own; the arena's buffers take turns in it
    arena = _add_arena(program, capture.l1_arena, cores) if in_arena else None
    for e in entries:
        dfb = backed.get(e.index)
        if dfb is None and e.index in in_arena:
            program.create_circular_buffer(cores, e.index, e.page_size, e.num_pages, e.data_format, name=e.name,
                                           tile=e.tile, backing_buffer=arena,
                                           backing_offset=in_arena[e.index].arena_offset)
            continue
        if dfb is None:
            program.create_circular_buffer(cores, e.index, e.page_size, e.num_pages, e.data_format, name=e.name,
                                           tile=e.tile)
            continue
        buffer = program.buffer(dfb.backing.name)
        holders = _check_backing(dfb, e, buffer, cores, arch)
        _check_overlap(dfb, e, [(backed[o.index], o) for o in entries if o.index in backed and o.index < e.index])
        program.create_circular_buffer(holders, e.index, e.page_size, e.num_pages, e.data_format, name=e.name,
                                       backing_buffer=buffer, backing_offset=dfb.byte_offset,
                                       defined_at=dfb.location)
    for value, purpose in zip(initial, _semaphore_purposes(module, capture), strict=True):
        program.create_semaphore(cores, value, purpose)
    if capture.resource_semaphores is not None:     # then the ones the host program adds for the kernels' C++
        for rects, value in capture.resource_semaphores(len(initial)):
            program.create_semaphore(CoreRangeSet([CoreRange((x0, y0), (x1, y1)) for x0, y0, x1, y1 in rects]), value)
    names = {arg.index: arg.name for arg in capture.tensors}
    processors = iter(("RISCV_0", "RISCV_1"))
    staging = module.attributes.get(STAGING_BUFFERS_ATTR)
    if staging is not None:
        program.staging_circular_buffers = frozenset(i.value.data for i in staging.data)
    active = module.attributes.get(ACTIVE_NODES_ATTR)      # nodes outside every pipe run no kernel
    if active is not None:
        cores = CoreRangeSet([CoreRange((r.data[0].value.data, r.data[1].value.data),
                                        (r.data[2].value.data, r.data[3].value.data)) for r in active.data])
    for fn in _kernel_functions(module):
        role = fn.attributes[ttl.KERNEL_ROLE_ATTR].data
        compile_args = []
        for arg in _args(fn, "ttl.compile_args"):
            if arg["kind"] == "cb":
                compile_args.append(arg["index"])
            elif arg["kind"] == "mailbox_accessor":
                compile_args.append(program.buffer(capture.mailboxes[arg["index"]].buffer_name).accessor_args)
            else:
                compile_args.append(program.buffer(names[arg["index"]]).accessor_args)
        if role == "compute":
            cfg = compute_config(fn)
            formats = {cb.index: cb.data_format for cb in program.circular_buffers}
            config = ComputeConfig(cfg["math_fidelity"], cfg["fp32_dest_acc_en"], cfg["dst_full_sync_en"],
                                   cfg["math_approx_mode"],
                                   unpack_to_dest_mode(fn, formats, cfg["fp32_dest_acc_en"], compile_args,
                                                       TTL_FLOAT32_TO_DEST_CALLS))
            program.float32_source_reads |= float32_source_reads(fn, formats, compile_args, TTL_FLOAT32_TO_DEST_CALLS)
        else:
            config = DataMovementConfig(next(processors))
        kernel = program.create_kernel(fn, cores, config, compile_args, name=fn.sym_name.data)
        descriptors = _args(fn, "ttl.runtime_args")
        noc1 = isinstance(config, DataMovementConfig) and config.noc_index == 1
        words = [[i.value.data for i in w.data] for w in fn.attributes[RUNTIME_WORDS_ATTR].data] \
            if RUNTIME_WORDS_ATTR in fn.attributes else None
        for core in cores:
            args = [_runtime_value(d, core, program, names, nets, noc1, capture) for d in descriptors]
            program.set_runtime_args(kernel, core, args if words is None else _packed(args, words))
    return program


def _packed(args: list, words: list[list[int]]) -> list:
    """The runtime arguments two to a word, as the kernel's ``ttl.runtime_arg_words`` lists them (see
    :mod:`tilefold.passes.ttl.ttkernel_builder`): the first in the low half."""
    return [args[word[0]] if len(word) == 1 else HalfWords(*(args[i] for i in word)).packed() for word in words]


def _args(fn: func.FuncOp, name: str) -> list[dict]:
    """The kernel's ``#ttl.arg`` list ``name``, as dicts."""
    attr = fn.attributes.get(name)
    return [a.to_dict() for a in attr.data] if attr is not None else []


def _peer(route, role: str, field: str, net) -> int:
    """A logical coordinate of the other end of ``route`` (``ttl.pipe_peer``); ``linear`` is TT-Lang's
    linear node index ``x * rows + y``; over a device domain, nodes are named on their own chip and
    ``device`` is the other end's device."""
    rows = net.grid[1]
    if role == "dst":
        x, y = route.src
        base = net.device_of(x) * (net.chip_columns or 0)
        x -= base
        return {"x": x, "y": y, "linear": x * rows + y, "device": net.device_of(route.src[0])}[field]
    base = net.device_of(route.x0) * (net.chip_columns or 0)
    x0, x1 = route.x0 - base, route.x1 - base
    first, stop = route.span if route.span is not None else (x0 * rows + route.y0, None)
    return {"x0": x0, "y0": route.y0, "x1": x1, "y1": route.y1, "linear": x0 * rows + route.y0,
            "first": first, "stop": stop, "device": net.device_of(route.x0)}[field]


def _runtime_value(arg: dict, core: CoreCoord, program: Program, names, nets, noc1: bool, capture=None):
    kind = arg["kind"]
    # an operation over a device domain: device k is chip k, node columns k * chip_columns onwards;
    # nodes and semaphores are named on the node's own chip
    chip_columns = capture.arch.chip_columns if capture is not None and capture.device_domain is not None else None
    chip = core.x // chip_columns if chip_columns else 0
    base = chip * chip_columns if chip_columns else 0
    if kind == "node":
        return (core.x - base, core.y, chip)[arg["index"]]
    if kind == "noc":                   # a node of the grid, by linear index
        cols = capture.grid[0]
        node = CoreCoord(arg["index"] % cols + base, arg["index"] // cols)
        return NocX(node) if arg["field"] == "x" else NocY(node)
    if kind == "noc_rect":              # a semaphore's multicast rectangle
        x0, y0, x1, y1 = capture.semaphore_rects[arg["index"]]
        x0, x1 = x0 + base, x1 + base
        if arg["field"] == "dests":     # the others: this node sets its own copy itself
            inside = x0 <= core.x <= x1 and y0 <= core.y <= y1
            return (x1 - x0 + 1) * (y1 - y0 + 1) - int(inside)
        first, last = CoreCoord(x0, y0), CoreCoord(x1, y1)
        if noc1:                        # NOC 1 multicasts from the far corner
            first, last = last, first
        corner = first if arg["field"][1] == "0" else last
        return NocX(corner) if arg["field"][0] == "x" else NocY(corner)
    if kind == "address":
        return program.buffer(capture.device_buffer(names[arg["index"]], chip)).address
    if kind == "mailbox_address":
        return program.buffer(capture.mailboxes[arg["index"]].buffer_name).address
    net = nets[arg["index"]]
    node = (core.x, core.y)
    role = arg["role"]
    if kind == "pipe_named" and role == "dst":
        # a receive names the first route of its pipe: the node receives from the route of that pipe
        # that reaches it
        pipe = net.routes[arg["slot"]].pipe
        routes = list(net.routes)
        mine = [r for r in net.pipe_routes[pipe] if node in net.routes[r].destinations]
        if mine:
            routes[arg["slot"]] = net.routes[mine[0]]
    elif kind == "pipe_named":
        routes = list(net.routes)
        routes[arg["slot"]] = net.routes[net.named_route(arg["slot"], chip)]    # the copy of a replicated net's pipe on this chip
    else:
        routes = net.sources_of(node) if role == "src" else net.destinations_of(node)
    if kind == "pipe_count":
        return len(routes)
    slot, field = arg["slot"], arg["field"]
    if slot >= len(routes):
        return 0
    route = routes[slot]
    if field == "src_slot":             # the pipe's place among its source's pipes: its ready semaphore
        return net.sources_of(route.src).index(route)
    if field == "index":                # the pipe's receive slot: its slot in the net's landing buffer, or its valid
        return net.landing_slots()[net.routes.index(route)]
    if field == "mailbox_block":        # the first block of the receiver's slot in the net's DRAM mailbox
        mailbox = capture.mailboxes[arg["index"]]
        receiver = route.destinations[0] if role == "src" else node
        linear = receiver[1] * capture.grid[0] + receiver[0]
        return (linear * mailbox.slots + net.landing_slots()[net.routes.index(route)]) * mailbox.depth
    if kind == "pipe_peer":
        return _peer(route, role, field, net)
    if role == "src":
        first, last = CoreCoord(route.x0, route.y0), CoreCoord(route.x1, route.y1)
        if noc1:                       # NOC 1 multicasts from the far corner
            first, last = last, first
        if field in ("x0", "y0", "x1", "y1"):
            corner = first if field[1] == "0" else last
            return NocX(corner) if field[0] == "x" else NocY(corner)
        if field == "dests":
            return len(route.destinations) if route.loopback else route.remote_receivers
        if field == "remote":
            return route.remote_receivers
        return int(route.loopback)
    source = CoreCoord(*route.src)
    if field == "x":
        return NocX(source)
    if field == "y":
        return NocY(source)
    return int(route.src == node)


# what a wait on each kind of pipe net semaphore waits for (``net_layout`` / ``landing_layout``)
_PIPE_WAITS = {
    "valid": "a block sent through the pipe net made at {at}",
    "one": "the pipe net made at {at}",
    "ready": "the receivers of the pipe net made at {at} to be ready for the next block",
    "outbox": "a receiver of the pipe net made at {at} to post where its block goes",
    "address": "a receiver of the pipe net made at {at} to post where its block goes",
    "flag": "a block sent through the pipe net made at {at} to land",
    "received": "blocks received through the pipe net made at {at}",
    "sent": "blocks sent through the pipe net made at {at}",
    "credit": "a receiver of the pipe net made at {at} to free a block",
}


def _semaphore_purposes(module: ModuleOp, capture) -> list[str]:
    """What a wait on each of the operation's semaphores waits for (the pipe nets' words, then each
    ``ttl.Semaphore``), as a deadlock report says it."""
    nets = {net.index: net for net in capture.pipe_nets}
    purposes = []
    for net, kind in pipe_semaphore_roles(module):
        location = getattr(nets.get(net), "location", None)
        purposes.append(_PIPE_WAITS[kind].format(at=location) if location else "")
    return purposes + [f"the ttl.Semaphore made at {s.location}" if s.location else "" for s in capture.semaphores]
