"""``tilefold layout SHAPE``: show how a tensor is laid out, sharded and paged.

Reads: the command line (shape, dtype, tile, grid, collapse intervals or a linear map,
TT-NN memory layout, shard shape, buffer type, arch). Writes: a report on stdout — the
tt-mlir MetalLayout (affine map, physical shape, shard per core, padding) and the TT-NN
TensorSpec (pages, page → bank placement, TensorAccessorArgs) — and, with ``--png``, a
picture of the tensor split over the core grid with the padding highlighted.

Errors: a malformed option raises :class:`~tilefold.errors.LayoutError` naming the option;
``tilefold.cli.main`` prints it as one line.
"""

from __future__ import annotations

import argparse
import json
import re
from typing import Sequence

import numpy as np

from tilefold.arch import Arch, get_arch
from tilefold.arch.cores import CoreRange, CoreRangeSet
from tilefold.cli.targets import ARCH_HELP
from tilefold.errors import LayoutError
from tilefold.layout.addressing import BufferType, TensorAccessorArgs, buffer_type
from tilefold.layout.formats import DataFormat, data_format
from tilefold.layout.metal_layout import (
    LinearMetalLayout,
    MemorySpace,
    MetalLayout,
    format_affine_map,
    parse_affine_map,
)
from tilefold.layout.tensor_spec import (
    Layout,
    MemoryConfig,
    NdShardSpec,
    ShardSpec,
    TensorMemoryLayout,
    TensorSpec,
    layout as parse_layout,
    tensor_memory_layout,
)
from tilefold.layout.tiles import tile_shape
from tilefold.layout.visualize import draw_layout, linear_layout_picture, metal_layout_picture


def add_parser(subparsers, help: str) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "layout",
        help=help,
        description="Show how a tensor is collapsed, aligned and sharded over a core grid (tt-mlir MetalLayout) "
        "and how its pages are placed in banks (TT-NN TensorSpec, TensorAccessorArgs).",
    )
    parser.add_argument("shape", help="logical shape, e.g. 2,3,64,128")
    parser.add_argument("--dtype", default="bfloat16", help="data format (bfloat16, float32, bfloat8_b, ...)")
    parser.add_argument("--tile", default="32x32", help="tile shape HxW (default 32x32)")
    parser.add_argument("--layout", default="tile", help="TT-NN page layout: tile or row_major")
    parser.add_argument("--grid", help="core grid as rows x cols (tt-mlir order), e.g. 2x4; higher ranks allowed")
    parser.add_argument("--collapse", help="collapse intervals, e.g. '[[0,3],[3,4]]' or '0:3,3:4'")
    parser.add_argument("--map", dest="linear_map", help="tt-mlir tensor layout linear map, e.g. '(d0, d1, d2) -> (d0 * 32 + d1, d2)'")
    parser.add_argument("--memory-layout", help="interleaved, height_sharded, width_sharded or block_sharded")
    parser.add_argument("--shard-shape", help="shard shape HxW (2-D shard spec) or an N-D shape (ND sharding)")
    parser.add_argument("--orientation", default="row_major", help="shard orientation: row_major or col_major")
    parser.add_argument("--buffer-type", default="dram", help="dram or l1")
    parser.add_argument("--arch", default=None, help=ARCH_HELP)
    parser.add_argument("--pages", type=int, default=8, help="how many pages of the page -> bank table to list")
    parser.add_argument("--png", help="draw the tensor split over the core grid to this PNG file")
    parser.set_defaults(handler=run)
    return parser


# --- option parsing (errors are LayoutErrors naming the option) --------------------------------


def _ints(text: str, option: str) -> tuple[int, ...]:
    """``2,3,64,128`` or ``2x3x64x128``."""
    try:
        dims = tuple(int(p) for p in re.split(r"[,x×]", text.strip()))
    except ValueError:
        raise LayoutError(f"{option} {text!r} is not a list of integers, e.g. 2,3,64,128") from None
    if not dims or any(d <= 0 for d in dims):
        raise LayoutError(f"{option} {text!r} needs positive dimensions")
    return dims


def parse_collapse(text: str) -> list[list[int]]:
    """``[[0,3],[3,4]]`` (JSON) or ``0:3,3:4``."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError:
            raise LayoutError(f"--collapse {text!r} is not valid JSON; write e.g. [[0,3],[3,4]]") from None
        return value
    pairs = []
    for item in stripped.split(","):
        try:
            start, end = item.split(":")
            pairs.append([int(start), int(end)])
        except ValueError:
            raise LayoutError(f"--collapse {text!r}: {item!r} is not start:end; write e.g. 0:3,3:4") from None
    return pairs


def _device_grid(arch: Arch) -> tuple[int, int]:
    """The arch's worker grid as (rows, cols)."""
    return (arch.grid[1], arch.grid[0])


# --- the two reports ----------------------------------------------------------------------------


def _x(dims: Sequence[int]) -> str:
    return "x".join(str(int(d)) for d in dims)


def metal_layout_report(args, arch: Arch, shape, tile, space: MemorySpace):
    """Lines about the tt-mlir layout, and a function that builds its picture (or None)."""
    if args.linear_map:
        if args.collapse:
            raise LayoutError("--map and --collapse both describe the collapse; give one of them")
        return _linear_layout_report(args, shape, tile, space)
    intervals = parse_collapse(args.collapse) if args.collapse else None
    if args.grid:
        grid = _ints(args.grid, "--grid")
        how = "given"
    else:
        rank = len(MetalLayout.create(shape, collapse_intervals=intervals, tile=tile).physical_shape)
        device = (1,) * max(0, rank - 2) + _device_grid(arch)[-rank:]
        how = f"largest grid dividing the tiles within {_x(device)}"
    ml = MetalLayout.create(shape, grid=grid if args.grid else device, collapse_intervals=intervals, tile=tile,
                            memory_space=space)
    if not args.grid:
        grid = ml.optimal_grid(device)
    strides, volume = ml.host_strides_and_volume()
    lines = [
        "tt-mlir MetalLayout",
        f"  attribute       {ml}",
        f"  affine map      {format_affine_map(ml.linear)}",
        f"  physical shape  {_x(ml.physical_shape)} elements = {_x(ml.physical_shape_in_tiles())} tiles of {tile}",
        f"  host strides    {', '.join(map(str, strides))} (volume {volume})",
        f"  grid            {_x(grid)} ({how})",
        f"  shard per core  {_x(ml.shard_shape(grid, tiled=False))} elements = {_x(ml.shard_shape(grid))} tiles "
        f"(device shape {_x(ml.device_shape(grid))})",
        f"  padding         {ml.core_padding(grid).summary()}",
    ]
    return lines, (lambda: metal_layout_picture(ml, grid))


def _linear_layout_report(args, shape, tile, space: MemorySpace):
    linear = parse_affine_map(args.linear_map)
    grid = _ints(args.grid, "--grid") if args.grid else (1,) * len(linear.results)
    fmt = data_format(args.dtype)
    tensor_dtype = DataFormat.Float32 if fmt.is_block_float else fmt
    tiled = parse_layout(args.layout) is Layout.TILE
    lin = LinearMetalLayout(shape, linear, grid, tensor_dtype, tile if tiled else None, fmt, space)
    allocated = f" tiles ({_x(lin.padded_shard_shape)} elements allocated)" if lin.tile is not None else ""
    lines = [
        "tt-mlir metal_layout (the tt-mlir tensor layout, grid in the attribute)",
        f"  tensor type     {lin.tensor_type()}",
        f"  affine map      {format_affine_map(lin.linear)}",
        f"  physical shape  {_x(lin.physical_shape)} elements",
        f"  grid            {_x(lin.grid)}",
        f"  shard per core  {_x(lin.shard_shape)} elements -> memref {_x(lin.memref_shape)}{allocated}",
        f"  padding         {lin.core_padding().summary()}",
    ]
    picture = (lambda: linear_layout_picture(lin)) if len(lin.grid) == 2 else None
    return lines, picture


def _memory_config(args, arch: Arch, shape, tile, page_layout: Layout) -> MemoryConfig:
    btype = buffer_type(args.buffer_type)
    shard = _ints(args.shard_shape, "--shard-shape") if args.shard_shape else None
    if args.memory_layout:
        mem_layout = tensor_memory_layout(args.memory_layout)
    else:
        mem_layout = TensorMemoryLayout.BLOCK_SHARDED if shard else TensorMemoryLayout.INTERLEAVED
    if mem_layout is TensorMemoryLayout.INTERLEAVED:
        if shard:
            raise LayoutError("--shard-shape needs a sharded --memory-layout (height_sharded, width_sharded or block_sharded)")
        return MemoryConfig(mem_layout, btype)
    # The cores (banks) that hold the shards.
    if btype is BufferType.DRAM:
        rows, cols = 1, arch.dram_banks
    elif args.grid:
        grid = _ints(args.grid, "--grid")
        if len(grid) != 2:
            raise LayoutError(f"--grid {args.grid!r} must be 2-D (rows x cols) for TT-NN sharding")
        rows, cols = grid
    else:
        rows, cols = _device_grid(arch)
    cores = CoreRangeSet([CoreRange((0, 0), (cols - 1, rows - 1))])
    orientation = args.orientation
    if shard and len(shard) > 2:
        return MemoryConfig(mem_layout, btype, nd_shard_spec=NdShardSpec(shard, cores, orientation))
    if shard is None:
        shard = _default_shard(shape, args.dtype, tile, page_layout, mem_layout, rows, cols)
    return MemoryConfig(mem_layout, btype, ShardSpec(cores, shard, orientation))


def _default_shard(shape, dtype, tile, page_layout: Layout, mem_layout: TensorMemoryLayout, rows: int, cols: int):
    """Shards that spread the tensor over the grid: HEIGHT over all cores by rows, WIDTH by
    columns, BLOCK as grid rows x grid columns (whole tiles in TILE layout)."""
    probe = TensorSpec(shape, dtype, page_layout, tile=tile)
    height, width = probe.physical_shape
    th, tw = (tile.height, tile.width) if page_layout is Layout.TILE else (1, 1)
    ht, wt = height // th, width // tw
    n = rows * cols
    if mem_layout is TensorMemoryLayout.HEIGHT_SHARDED:
        return (-(-ht // n) * th, width)
    if mem_layout is TensorMemoryLayout.WIDTH_SHARDED:
        return (height, -(-wt // n) * tw)
    return (-(-ht // rows) * th, -(-wt // cols) * tw)


def tensor_spec_report(args, arch: Arch, shape, tile) -> list[str]:
    page_layout = parse_layout(args.layout)
    spec = TensorSpec(shape, args.dtype, page_layout, _memory_config(args, arch, shape, tile, page_layout), tile)
    buf = spec.buffer_layout(arch)
    mc = spec.memory_config
    aligned = buf.aligned_page_size(arch)
    nbanks = buf.num_banks(arch)
    slots = buf.pages_per_bank(arch)
    kind = "DRAM banks" if buf.is_dram else ("L1 banks (cores)" if buf.is_sharded else "L1 banks")
    lines = [
        "TT-NN TensorSpec",
        f"  memory          {mc.memory_layout.name} in {mc.buffer_type.name}, {spec.layout.name} layout",
        f"  padded shape    {_x(spec.padded_shape)}, stride {', '.join(map(str, spec.stride))}",
        f"  physical shape  {_x(spec.physical_shape)}",
    ]
    if spec.shard_shape is not None:
        lines += [
            f"  shard shape     {_x(spec.shard_shape)} (physical {_x(spec.physical_shard_shape)}), "
            f"shard grid {_x(spec.grid_shape)} = {spec.num_shards} shards, {mc.shard_spec.orientation.name if mc.shard_spec else mc.nd_shard_spec.orientation.name}",
        ]
    lines += [
        f"  pages           {spec.num_pages} pages of {_x(spec.page_shape)} = {spec.page_size} B "
        f"(aligned {aligned} B), buffer {spec.buffer_size} B",
        f"  banks           {nbanks} {kind}, {slots} page slot{'' if slots == 1 else 's'} per bank "
        f"({buf.bytes_per_bank(arch)} B per bank)",
    ]
    count = max(0, min(args.pages, spec.num_pages))
    ids = np.arange(spec.num_pages)
    bank, offset = buf.page_location(ids, arch)
    per_bank = np.bincount(bank, minlength=nbanks)
    lines.append(f"  pages per bank  min {per_bank.min()}, max {per_bank.max()}")
    if buf.is_sharded:
        coords = buf.bank_noc_coords(arch)
    elif buf.is_dram:
        coords = tuple(arch.dram_noc_coord(b) for b in range(nbanks))
    else:
        coords = None
    for i in range(count):
        b = int(bank[i])
        where = f" noc {coords[b]}" if coords is not None else ""
        lines.append(f"  page {i:>5} -> bank {b:>3}{where} +{int(offset[i])}")
    if count < spec.num_pages:
        lines.append(f"  ... {spec.num_pages - count} more pages")
    ta = TensorAccessorArgs(buf, arch)
    lines.append(f"  TensorAccessorArgs  {ta.compile_time_args()}")
    return lines


def run(args) -> int:
    arch = get_arch(args.arch)
    shape = _ints(args.shape, "shape")
    tile = tile_shape(args.tile)
    fmt = data_format(args.dtype)
    space = MemorySpace.DeviceDRAM if buffer_type(args.buffer_type) is BufferType.DRAM else MemorySpace.DeviceL1
    if args.pages < 0:
        raise LayoutError(f"--pages {args.pages} must not be negative")
    header = (
        f"tensor {_x(shape)} {fmt.ttnn_name}, tile {tile}, on {arch.name} {arch.board} "
        f"({arch.grid[0]}x{arch.grid[1]} cores, {arch.dram_banks} DRAM banks)"
    )
    ml_lines, picture = metal_layout_report(args, arch, shape, tile, space)
    tt_lines = tensor_spec_report(args, arch, shape, tile)
    print("\n".join([header, ""] + ml_lines + [""] + tt_lines))
    if args.png:
        if picture is None:
            raise LayoutError("--png needs a 2-D grid for a --map layout")
        path = draw_layout(picture(), args.png)
        print(f"\npicture written to {path}")
    return 0


__all__ = ["add_parser", "run", "parse_collapse"]
