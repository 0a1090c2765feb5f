"""Typed ``tt.*`` metadata of the TileLang pipeline: attributes that verify themselves.

Reads / writes: nothing. Each metadata kind is an xDSL attribute of the ``tt`` dialect with one
typed parameter per field; it checks its fields when it is made (by a pass or by the parser), so
a pass that writes bad metadata fails there, not in a later pass. In MLIR text a record prints as
``#tt.<kind><field = value, ...>`` (fields a pass has not set yet are left out).

:func:`tilefold.ir.attributes.set_attr` stores a dict under a key of :data:`RECORDS` as its
record and :func:`~tilefold.ir.attributes.get_attr` gives the dict back, so passes read and
write plain values.

* ``tt.cb.<buffer>`` — :class:`CircularBufferAttr`: a buffer's circular buffer (page size,
  depth in pages, data format, block in tiles; from ``lower-shared-to-cb`` on its index, the
  threads that produce and consume it and the buffer's scope).
* ``tt.compute_config`` / ``ttkernel.compute_config`` — :class:`ComputeConfigAttr`: a compute
  kernel's math fidelity and DST modes.
* ``tt.schedule``, ``tt.shard``, ``tt.grid_axes``, ``tt.raster`` — the kernel's block schedule,
  default layout, grid axes and block order (:class:`ScheduleAttr`, :class:`ShardAttr`,
  :class:`GridAxesAttr`, :class:`RasterAttr`).
* ``tt.tensor_accessor.<tensor>`` — :class:`TensorAccessorAttr`: how its accessor is built.
* ``tt.global_roles``, ``tt.padded_shapes``, ``tt.lead_pads``, ``tt.kernels`` — maps by name
  (:class:`NameMap`): each tensor's role, padded shape and padding before its first element in
  each dim, each thread's kernel function.
* ``tt.buffer.<tensor>`` — :class:`BufferAttr`: a global tensor's memory, layout, tile shape,
  data type, shape and padded shape, and for a sharded tensor its :class:`NdShardAttr`.
* ``tt.tile_dfg`` — :class:`TileDfgAttr`: the tile dataflow graph, one :class:`DfgEdgeAttr` per CB.
* ``tt.vector_layouts`` — :class:`VectorLayoutsAttr`: row or column, per 1-D fragment.
* ``tt.user_layout``, ``tt.user_schedule``, ``tt.use_swizzle`` — the user's annotations as written
  (:class:`UserLayoutsAttr` of :class:`UserLayoutAttr`, :class:`UserScheduleAttr`,
  :class:`SwizzleAttr`), each with the [file, line] of its call; the passes that read them check
  their values and name that line.
* ``tile.safe_values``, ``tile.views`` — :class:`SafeValuesAttr` (a tensor's padding value),
  :class:`ViewsAttr` of :class:`ViewAttr` (a tensor viewing another with a new shape).

* ``tt.multicast_groups`` — :class:`MulticastGroupsAttr`: per multicast circular buffer (by its
  buffer name) a :class:`MulticastAttr`: the grid axis its groups run along, the semaphores of the
  handshake and each group's sender and receiver run.
* ``tt.sync_barriers`` — :class:`SyncBarriersAttr`: the program's semaphores by name, each a
  :class:`SemaphoreAttr` (id, initial value, the buffer whose handshake it carries, its side).
* ``tt.runtime_args`` — a list of :class:`RuntimeArgAttr`: the per-core runtime arguments, each
  with its role (a plain value, the NOC x / y of a logical core, a tensor's base address); the
  host function's list is the canonical one, a device kernel's adds its tensors' addresses.
* ``tt.user_compute`` — ``T.annotate_tt_compute`` (math fidelity, approximation mode) as a
  :class:`ComputeConfigAttr`.

A dict under a key that has no record is refused (:func:`tilefold.ir.attributes.set_attr`). The
TT-Lang pipeline's ``ttl.*`` tables are in :mod:`tilefold.ir.ttl_metadata`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from xdsl.dialects.builtin import (ArrayAttr, BoolAttr, DictionaryAttr, FloatAttr, IntegerAttr, IntegerType,
                                   NoneAttr, StringAttr, f64, i64)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from tilefold.layout.formats import DataFormat


@dataclass(frozen=True)
class Field:
    """One field of a record: its name, whether every record has it, and a check of its Python
    value (an error message, or None when the value is good)."""

    name: str
    required: bool
    check: Callable[[Any], str | None]
    record: type[Record] | None = None      # a field that is itself a record, or a list of records (dicts)


def _int(low: int = 0, high: int | None = None):
    def check(v):
        if not isinstance(v, int) or isinstance(v, bool):
            return "an integer"
        if v < low or (high is not None and v >= high):
            return f"an integer in [{low}, {high})" if high is not None else f"an integer >= {low}"
        return None
    return check


def _ints(count: int, low: int = 1):
    def check(v):
        ok = isinstance(v, list) and len(v) == count and all(isinstance(x, int) and x >= low for x in v)
        return None if ok else f"{count} integers >= {low}"
    return check


def _int_list(low: int = 1):
    def check(v):
        ok = isinstance(v, list) and len(v) >= 1 and all(isinstance(x, int) and x >= low for x in v)
        return None if ok else f"a list of integers >= {low}"
    return check


def _bool(v):
    return None if isinstance(v, bool) else "true or false"


def _record(v):
    return None if isinstance(v, dict) else "a record"


def _records(v):
    return None if isinstance(v, list) and all(isinstance(x, dict) for x in v) else "a list of records"


def _str(v):
    return None if isinstance(v, str) else "a string"


def _any_int(v):
    return None if isinstance(v, int) and not isinstance(v, bool) else "an integer"


def _number(v):
    return None if isinstance(v, (int, float)) and not isinstance(v, bool) else "a number"


def _loc(v):
    ok = isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) and isinstance(v[1], int)
    return None if ok else "[file, line]"


def _plain(v):
    """A value a user wrote (string, number, bool, list of them, or a record): the pass that reads
    it checks its meaning and names the user's line."""
    if isinstance(v, (str, int, float, bool)):
        return None
    if isinstance(v, list):
        return next((p for p in map(_plain, v) if p is not None), None)
    return "a string, number, boolean or list"


def _one_of(*choices: str):
    def check(v):
        return None if v in choices else "one of " + ", ".join(repr(c) for c in choices)
    return check


def _value(attr: Attribute) -> Any:
    if isinstance(attr, Record):
        return attr.to_dict()
    if isinstance(attr, IntegerAttr):
        if isinstance(attr.type, IntegerType) and attr.type.width.data == 1:
            return bool(attr.value.data)
        return attr.value.data
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, ArrayAttr):
        return [_value(a) for a in attr.data]
    return attr


def _attr(value: Any, record: type[Record] | None = None) -> Attribute:
    if isinstance(value, Attribute):
        return value
    if record is not None and isinstance(value, dict):
        return record.from_dict(value)
    if isinstance(value, bool):
        return BoolAttr.from_bool(value)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    if isinstance(value, float):
        return FloatAttr(value, f64)
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, (list, tuple)):
        return ArrayAttr([_attr(v, record) for v in value])
    raise VerifyException(f"{value!r} is not a metadata value")


class Record(ParametrizedAttribute):
    """A metadata record: one parameter per :attr:`FIELDS` entry (``NoneAttr`` when unset)."""

    FIELDS: ClassVar[tuple[Field, ...]] = ()

    @classmethod
    def from_dict(cls, values: dict) -> Record:
        """The record of ``values`` (a field set to None is left out)."""
        names = {f.name for f in cls.FIELDS}
        unknown = sorted(set(values) - names)
        if unknown:
            raise VerifyException(f"#{cls.name} has no field {', '.join(unknown)} "
                                  f"(its fields: {', '.join(sorted(names))})")
        return cls(*(_attr(values[f.name], f.record) if values.get(f.name) is not None else NoneAttr()
                     for f in cls.FIELDS))

    def to_dict(self) -> dict:
        return {f.name: _value(p) for f, p in zip(self.FIELDS, self.parameters) if not isinstance(p, NoneAttr)}

    def verify(self) -> None:
        for f, p in zip(self.FIELDS, self.parameters):
            if isinstance(p, NoneAttr):
                if f.required:
                    raise VerifyException(f"#{self.name} needs its {f.name} field")
                continue
            problem = f.check(_value(p))
            if problem is not None:
                raise VerifyException(f"#{self.name}: {f.name} must be {problem}, not {_value(p)!r}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        values: dict[str, Attribute] = {}

        def entry():
            key = parser.parse_identifier()
            parser.parse_punctuation("=")
            values[key] = parser.parse_attribute()

        parser.parse_comma_separated_list(parser.Delimiter.ANGLE, entry)
        names = [f.name for f in cls.FIELDS]
        unknown = sorted(set(values) - set(names))
        if unknown:
            parser.raise_error(f"#{cls.name} has no field {', '.join(unknown)}")
        return [values.get(n, NoneAttr()) for n in names]

    def print_parameters(self, printer: Printer) -> None:
        present = [(f.name, p) for f, p in zip(self.FIELDS, self.parameters) if not isinstance(p, NoneAttr)]
        with printer.in_angle_brackets():
            printer.print_list(present, lambda fp: (printer.print_string(f"{fp[0]} = "),
                                                    printer.print_attribute(fp[1])))


_THREADS = ("reader", "writer", "compute", "none")
_FORMATS = tuple(f.value for f in DataFormat)
_OPT_INT = IntegerAttr | NoneAttr
_OPT_STR = StringAttr | NoneAttr


@irdl_attr_definition
class CircularBufferAttr(Record):
    """``#tt.cb<page_size, depth, data_format, block_tiles[, index, producer, consumer, scope, loc]>``
    (``loc``: the [file, line] that allocates the buffer, for errors about it)."""

    name = "tt.cb"

    page_size: _OPT_INT
    depth: _OPT_INT
    data_format: _OPT_STR
    block_tiles: ArrayAttr | NoneAttr
    index: _OPT_INT
    producer: _OPT_STR
    consumer: _OPT_STR
    scope: _OPT_STR
    loc: ArrayAttr | NoneAttr

    FIELDS = (
        Field("page_size", True, _int(1)),
        Field("depth", True, _int(1)),
        Field("data_format", True, _one_of(*_FORMATS)),
        Field("block_tiles", True, _ints(2)),
        Field("index", False, _int(0)),
        Field("producer", False, _one_of(*_THREADS)),
        Field("consumer", False, _one_of(*_THREADS)),
        Field("scope", False, _one_of("shared", "fragment")),
        Field("loc", False, _loc),
    )


@irdl_attr_definition
class NdShardAttr(Record):
    """``#tt.nd_shard<axes, grid, shard_shape_elems, order, align_tiles, projected_grid,
    projected_shard_tiles>``: how a sharded tensor is cut over the cores, and the 2-D grid of cores
    and tiles per shard it projects to."""

    name = "tt.nd_shard"

    axes: ArrayAttr | NoneAttr
    grid: ArrayAttr | NoneAttr
    shard_shape_elems: ArrayAttr | NoneAttr
    order: _OPT_STR
    align_tiles: _OPT_INT
    projected_grid: ArrayAttr | NoneAttr
    projected_shard_tiles: ArrayAttr | NoneAttr

    FIELDS = (
        Field("axes", True, lambda v: None if isinstance(v, list) else "a list"),
        Field("grid", True, _int_list()),
        Field("shard_shape_elems", True, _int_list()),
        Field("order", True, _one_of("row_major")),
        Field("align_tiles", True, _bool),
        Field("projected_grid", True, _ints(2)),
        Field("projected_shard_tiles", True, _ints(2)),
    )


@irdl_attr_definition
class BufferAttr(Record):
    """``#tt.buffer<memory, layout, tile_shape, dtype, shape, padded_shape[, nd_shard]>``: where a
    global tensor lives and how it is laid out."""

    name = "tt.buffer"

    memory: _OPT_STR
    layout: _OPT_STR
    tile_shape: ArrayAttr | NoneAttr
    dtype: _OPT_STR
    shape: ArrayAttr | NoneAttr
    padded_shape: ArrayAttr | NoneAttr
    nd_shard: NdShardAttr | NoneAttr

    FIELDS = (
        Field("memory", True, _one_of("DRAM", "L1")),
        Field("layout", True, _one_of("interleaved", "sharded")),
        Field("tile_shape", True, _ints(2)),
        Field("dtype", True, lambda v: None if isinstance(v, str) and v else "a data type name"),
        Field("shape", True, _int_list()),
        Field("padded_shape", True, _int_list()),
        Field("nd_shard", False, _record, NdShardAttr),
    )

    def verify(self) -> None:
        super().verify()
        fields = self.to_dict()
        if (fields["layout"] == "sharded") != ("nd_shard" in fields):
            raise VerifyException("#tt.buffer: a sharded buffer has an nd_shard, an interleaved one has none")


@irdl_attr_definition
class ComputeConfigAttr(Record):
    """``#ttkernel.compute_config<math_fidelity, fp32_dest_acc_en, dst_full_sync_en,
    math_approx_mode>``: a compute kernel's ComputeConfig (fields left out take their defaults:
    HiFi4, false, false, false). Stored under ``ttkernel.compute_config`` on a compute kernel and
    ``tt.compute_config`` on a TileLang kernel; part of the ``ttkernel`` dialect."""

    name = "ttkernel.compute_config"

    math_fidelity: _OPT_STR
    fp32_dest_acc_en: _OPT_INT
    dst_full_sync_en: _OPT_INT
    math_approx_mode: _OPT_INT

    FIELDS = (
        Field("math_fidelity", False, _one_of("LoFi", "HiFi2", "HiFi3", "HiFi4")),
        Field("fp32_dest_acc_en", False, _bool),
        Field("dst_full_sync_en", False, _bool),
        Field("math_approx_mode", False, _bool),
    )


def _order(v):
    ok = isinstance(v, str) and (v in ("row_major", "column_major", "z_order", "hilbert", "match_shard")
                                 or (v.startswith("block_linear(") and v.endswith(")")))
    return None if ok else "a block order (row_major, column_major, block_linear(k), z_order, hilbert, match_shard)"


@irdl_attr_definition
class ScheduleAttr(Record):
    """``#tt.schedule<policy, order>``: how blocks are split over the cores and the order they are walked."""

    name = "tt.schedule"

    policy: _OPT_STR
    order: _OPT_STR

    FIELDS = (
        Field("policy", True, _one_of("contiguous")),
        Field("order", True, _order),
    )


@irdl_attr_definition
class ShardAttr(Record):
    """``#tt.shard<layout, interleaved, tile_shape>``: the kernel's default tensor layout."""

    name = "tt.shard"

    layout: _OPT_STR
    interleaved: _OPT_INT
    tile_shape: ArrayAttr | NoneAttr

    FIELDS = (
        Field("layout", True, _one_of("tiled")),
        Field("interleaved", True, _bool),
        Field("tile_shape", True, _ints(2)),
    )


@irdl_attr_definition
class GridAxesAttr(Record):
    """``#tt.grid_axes<m, n[, others]>``: which grid dims walk the output's rows (m) and columns
    (n) of blocks (-1: none), and the other dims (outermost)."""

    name = "tt.grid_axes"

    m: _OPT_INT
    n: _OPT_INT
    others: ArrayAttr | NoneAttr

    FIELDS = (
        Field("m", True, _int(-1)),
        Field("n", True, _int(-1)),
        Field("others", False, _int_list(0)),
    )


@irdl_attr_definition
class RasterAttr(Record):
    """``#tt.raster<order, k, rows, cols>``: the block order (its name and panel height) over a
    grid of rows x cols blocks."""

    name = "tt.raster"

    order: _OPT_STR
    k: _OPT_INT
    rows: _OPT_INT
    cols: _OPT_INT

    FIELDS = (
        Field("order", True, _one_of("row_major", "column_major", "block_linear", "z_order", "hilbert")),
        Field("k", True, _int(0)),
        Field("rows", True, _int(1)),
        Field("cols", True, _int(1)),
    )


@irdl_attr_definition
class TensorAccessorAttr(Record):
    """``#tt.tensor_accessor<kind, is_dram, page_size, aligned_page_size, compile_time_args>``:
    how a data-movement kernel builds a tensor's TensorAccessor."""

    name = "tt.tensor_accessor"

    kind: _OPT_STR
    is_dram: _OPT_INT
    page_size: _OPT_INT
    aligned_page_size: _OPT_INT
    compile_time_args: _OPT_INT

    FIELDS = (
        Field("kind", True, _one_of("interleaved", "sharded")),
        Field("is_dram", True, _bool),
        Field("page_size", True, _int(1)),
        Field("aligned_page_size", True, _int(1)),
        Field("compile_time_args", True, _int(0)),
    )


class NameMap(ParametrizedAttribute):
    """Metadata keyed by names the program chooses (tensors, kernels): ``<name = value, ...>``,
    each value checked by :meth:`check`."""

    entries: DictionaryAttr

    RECORD: ClassVar[type[Record] | None] = None     # the record each value is, when values are records

    @classmethod
    def check(cls, value: Any) -> str | None:
        if cls.RECORD is not None:
            return _record(value)
        raise NotImplementedError

    @classmethod
    def from_dict(cls, values: dict) -> NameMap:
        return cls(DictionaryAttr({str(k): _attr(v, cls.RECORD) for k, v in values.items()}))

    def to_dict(self) -> dict:
        return {k: _value(v) for k, v in self.entries.data.items()}

    def verify(self) -> None:
        for key, value in self.to_dict().items():
            problem = self.check(value)
            if problem is not None:
                raise VerifyException(f"#{self.name}: {key} must be {problem}, not {value!r}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        values: dict[str, Attribute] = {}

        def entry():
            key = parser.parse_identifier()
            parser.parse_punctuation("=")
            values[key] = parser.parse_attribute()

        parser.parse_comma_separated_list(parser.Delimiter.ANGLE, entry)
        return [DictionaryAttr(values)]

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_list(list(self.entries.data.items()),
                               lambda kv: (printer.print_string(f"{kv[0]} = "), printer.print_attribute(kv[1])))


@irdl_attr_definition
class RolesAttr(NameMap):
    """``#tt.roles<A = "input", ...>``: how the kernel uses each tensor parameter."""

    name = "tt.roles"

    @classmethod
    def check(cls, value):
        return _one_of("input", "output", "inout", "unused")(value)


@irdl_attr_definition
class ShapesAttr(NameMap):
    """``#tt.shapes<A = [256, 256], ...>``: a shape per tensor (e.g. its device shape, padded to tiles)."""

    name = "tt.shapes"

    @classmethod
    def check(cls, value):
        return _int_list()(value)


@irdl_attr_definition
class LeadPadsAttr(NameMap):
    """``#tt.lead_pads<A = [32, 0], ...>``: per tensor, the padding before its first element in each
    device dim (a read below index 0 reads it)."""

    name = "tt.lead_pads"

    @classmethod
    def check(cls, value):
        return _int_list(0)(value)


@irdl_attr_definition
class KernelsAttr(NameMap):
    """``#tt.kernels<reader = "reader", ...>``: the device kernel function of each thread."""

    name = "tt.kernels"

    @classmethod
    def check(cls, value):
        return None if isinstance(value, str) and value else "a function name"

    def verify(self) -> None:
        super().verify()
        unknown = sorted(set(self.entries.data) - {"reader", "compute", "writer"})
        if unknown:
            raise VerifyException(f"#tt.kernels: {', '.join(unknown)} is not a thread (reader, compute, writer)")


@irdl_attr_definition
class DfgEdgeAttr(Record):
    """``#tt.dfg_edge<buffer, cb, producer, consumer, pages, depth>``: a circular buffer as an edge
    of the tile dataflow graph, from the thread that fills it to the one that drains it."""

    name = "tt.dfg_edge"

    buffer: _OPT_STR
    cb: _OPT_INT
    producer: _OPT_STR
    consumer: _OPT_STR
    pages: _OPT_INT
    depth: _OPT_INT

    FIELDS = (
        Field("buffer", True, lambda v: None if isinstance(v, str) and v else "a buffer name"),
        Field("cb", True, _int(0)),
        Field("producer", True, _one_of(*_THREADS)),
        Field("consumer", True, _one_of(*_THREADS)),
        Field("pages", True, _int(1)),
        Field("depth", True, _int(1)),
    )

    def verify(self) -> None:
        super().verify()
        fields = self.to_dict()
        if fields["pages"] > fields["depth"]:
            raise VerifyException(f"#tt.dfg_edge: a block of {fields['pages']} pages does not fit the "
                                  f"{fields['depth']} pages of {fields['buffer']}")


@irdl_attr_definition
class TileDfgAttr(Record):
    """``#tt.tile_dfg<edges = [#tt.dfg_edge<...>, ...]>``: the kernel's tile dataflow graph."""

    name = "tt.tile_dfg"

    edges: ArrayAttr | NoneAttr

    FIELDS = (Field("edges", True, _records, DfgEdgeAttr),)


@irdl_attr_definition
class VectorLayoutsAttr(NameMap):
    """``#tt.vector_layouts<m_l = "row", ...>``: whether a 1-D fragment lies along a tile's rows
    or its columns."""

    name = "tt.vector_layouts"

    @classmethod
    def check(cls, value):
        return _one_of("row", "col")(value)


@irdl_attr_definition
class UserNdShardAttr(Record):
    """``#tt.user_nd_shard<grid, shard_shape_elems, ...>``: the ``nd_shard`` of a layout annotation,
    as the user wrote it (``infer-tt-layout`` checks and completes it)."""

    name = "tt.user_nd_shard"

    axes: ArrayAttr | NoneAttr
    grid: Attribute
    shard_shape_elems: Attribute
    order: Attribute
    align_tiles: Attribute
    halo: Attribute

    FIELDS = tuple(Field(n, False, _plain) for n in ("axes", "grid", "shard_shape_elems", "order", "align_tiles",
                                                    "halo"))


@irdl_attr_definition
class UserLayoutAttr(Record):
    """``#tt.user_layout<memory, layout, tile_shape, dtype, nd_shard, halo, loc>``: one tensor's
    ``annotate_tt_layout``, as the user wrote it, with the call's [file, line]."""

    name = "tt.user_layout"

    memory: Attribute
    layout: Attribute
    tile_shape: Attribute
    dtype: Attribute
    nd_shard: UserNdShardAttr | NoneAttr
    halo: Attribute
    loc: ArrayAttr | NoneAttr

    FIELDS = (
        Field("memory", False, _plain),
        Field("layout", False, _plain),
        Field("tile_shape", False, _plain),
        Field("dtype", False, _plain),
        Field("nd_shard", False, _record, UserNdShardAttr),
        Field("halo", False, _plain),
        Field("loc", False, _loc),
    )


@irdl_attr_definition
class UserLayoutsAttr(NameMap):
    """``#tt.user_layouts<A = #tt.user_layout<...>, ...>``: the layout annotations, by tensor."""

    name = "tt.user_layouts"
    RECORD = UserLayoutAttr


@irdl_attr_definition
class UserScheduleAttr(Record):
    """``#tt.user_schedule<policy, order, loc>``: ``annotate_tt_schedule`` as the user wrote it
    (``apply-tt-defaults`` checks it), with the call's [file, line]."""

    name = "tt.user_schedule"

    policy: Attribute
    order: Attribute
    loc: ArrayAttr | NoneAttr

    FIELDS = (Field("policy", False, _plain), Field("order", False, _plain), Field("loc", False, _loc))


@irdl_attr_definition
class SwizzleAttr(Record):
    """``#tt.swizzle<panel_size, order, enable>``: the ``T.use_swizzle`` rasterization hint."""

    name = "tt.swizzle"

    panel_size: _OPT_INT
    order: _OPT_STR
    enable: _OPT_INT

    FIELDS = (Field("panel_size", True, _any_int), Field("order", True, _str), Field("enable", True, _bool))


@irdl_attr_definition
class SafeValuesAttr(NameMap):
    """``#tt.safe_values<A = 0.0, ...>``: ``T.annotate_safe_value``, the value reads past a tensor's
    end give (the host fills the tensor's padding with it)."""

    name = "tt.safe_values"

    @classmethod
    def check(cls, value):
        return _number(value)


@irdl_attr_definition
class ViewAttr(Record):
    """``#tt.view<base, shape>``: a tensor that is a reshaped view of the kernel tensor ``base``."""

    name = "tt.view"

    base: _OPT_STR
    shape: ArrayAttr | NoneAttr

    FIELDS = (Field("base", True, lambda v: None if isinstance(v, str) and v else "a tensor name"),
              Field("shape", True, _int_list(0)))


@irdl_attr_definition
class ViewsAttr(NameMap):
    """``#tt.views<V = #tt.view<...>, ...>``: the kernel's tensor views, by view name."""

    name = "tt.views"
    RECORD = ViewAttr


def _groups(v):
    ok = isinstance(v, list) and len(v) >= 1 and all(
        isinstance(g, list) and len(g) == 6 and all(isinstance(x, int) and x >= 0 for x in g) for g in v)
    return None if ok else "a list of [sender_x, sender_y, x0, y0, x1, y1] groups"


@irdl_attr_definition
class MulticastAttr(Record):
    """``#tt.multicast<cb, axis, sender_sem, receiver_sem, groups>``: a circular buffer whose blocks
    one core of each group reads from DRAM and multicasts to the others. ``axis`` is ``row`` (a
    group is a run of cores along a grid row) or ``column``; each group is ``[sender_x, sender_y,
    x0, y0, x1, y1]`` in logical core coordinates: the sender, then the receivers' rectangle, which
    starts next to the sender and runs along ``axis``. No core is in two groups."""

    name = "tt.multicast"

    cb: _OPT_INT
    axis: _OPT_STR
    sender_sem: _OPT_INT
    receiver_sem: _OPT_INT
    groups: ArrayAttr | NoneAttr

    FIELDS = (
        Field("cb", True, _int(0)),
        Field("axis", True, _one_of("row", "column")),
        Field("sender_sem", True, _int(0)),
        Field("receiver_sem", True, _int(0)),
        Field("groups", True, _groups),
    )

    def verify(self) -> None:
        super().verify()
        f = self.to_dict()
        if f["sender_sem"] == f["receiver_sem"]:
            raise VerifyException("#tt.multicast: the sender and receiver semaphores must differ")
        seen: set[tuple[int, int]] = set()
        for sx, sy, x0, y0, x1, y1 in f["groups"]:
            if f["axis"] == "row":
                ok = sy == y0 == y1 and x0 == sx + 1 and x1 >= x0
                cores = [(x, sy) for x in range(sx, x1 + 1)]
            else:
                ok = sx == x0 == x1 and y0 == sy + 1 and y1 >= y0
                cores = [(sx, y) for y in range(sy, y1 + 1)]
            if not ok:
                raise VerifyException(f"#tt.multicast: group {[sx, sy, x0, y0, x1, y1]} is not a sender followed by "
                                      f"a run of receivers along its {f['axis']}")
            if seen & set(cores):
                raise VerifyException(f"#tt.multicast: core {sorted(seen & set(cores))[0]} is in two groups")
            seen |= set(cores)


@irdl_attr_definition
class SemaphoreAttr(Record):
    """``#tt.semaphore<id, initial_value, buffer, side>``: a semaphore on every active core; it
    carries the multicast handshake of ``buffer``'s circular buffer, counted on the ``sender``
    (receivers ready) or set on the ``receiver`` (data valid)."""

    name = "tt.semaphore"

    id: _OPT_INT
    initial_value: _OPT_INT
    buffer: _OPT_STR
    side: _OPT_STR

    FIELDS = (
        Field("id", True, _int(0)),
        Field("initial_value", True, _int(0)),
        Field("buffer", True, lambda v: None if isinstance(v, str) and v else "a buffer name"),
        Field("side", True, _one_of("sender", "receiver")),
    )


@irdl_attr_definition
class RuntimeArgAttr(Record):
    """``#tt.runtime_arg<name[, role, core, tensor]>``: one per-core runtime argument of the
    kernels. Without a role the kernels read the host's value as is; ``noc_x`` / ``noc_y`` name
    the x / y of the logical core ``core`` (the pair with one ``core`` is one core), whose NOC
    coordinates the host passes; ``address`` is the base address of tensor ``tensor``."""

    name = "tt.runtime_arg"

    arg_name: _OPT_STR
    role: _OPT_STR
    core: _OPT_STR
    tensor: _OPT_STR

    FIELDS = (
        Field("name", True, lambda v: None if isinstance(v, str) and v else "an argument name"),
        Field("role", False, _one_of("noc_x", "noc_y", "address")),
        Field("core", False, lambda v: None if isinstance(v, str) and v else "a core name"),
        Field("tensor", False, lambda v: None if isinstance(v, str) and v else "a tensor name"),
    )

    def verify(self) -> None:
        super().verify()
        f = self.to_dict()
        role = f.get("role")
        needs = {"noc_x": {"core"}, "noc_y": {"core"}, "address": {"tensor"}}.get(role, set())
        if set(f) - {"name", "role"} != needs:
            raise VerifyException(f"#tt.runtime_arg {f['name']!r} with role {role or 'none'} has "
                                  f"{' and '.join(sorted(needs)) or 'no core or tensor'}, not "
                                  f"{', '.join(sorted(set(f) - {'name', 'role'})) or 'none'}")


def noc_cores(args: Sequence[dict]) -> dict[str, tuple[int, int]]:
    """Each logical core the runtime ``args`` (:class:`RuntimeArgAttr` dicts) name: its
    ``(noc_x index, noc_y index)`` in ``args``. A core with only one of the two is an error."""
    cores: dict[str, list] = {}
    for i, a in enumerate(args):
        if a.get("role") in ("noc_x", "noc_y"):
            cores.setdefault(a["core"], [None, None])[a["role"] == "noc_y"] = i
    broken = sorted(c for c, (x, y) in cores.items() if x is None or y is None)
    if broken:
        raise VerifyException(f"runtime arguments name core {broken[0]} without both its noc_x and noc_y")
    return {c: (x, y) for c, (x, y) in cores.items()}


class _RecordMap(NameMap):
    """A :class:`NameMap` whose values are records of one kind."""

    RECORD: ClassVar[type[Record]]

    @classmethod
    def check(cls, value):
        return None if isinstance(value, dict) else f"a #{cls.RECORD.name} record"

    @classmethod
    def from_dict(cls, values: dict) -> NameMap:
        return cls(DictionaryAttr({str(k): v if isinstance(v, cls.RECORD) else cls.RECORD.from_dict(dict(v))
                                   for k, v in values.items()}))

    def verify(self) -> None:
        for key, value in self.entries.data.items():
            if not isinstance(value, self.RECORD):
                raise VerifyException(f"#{self.name}: {key} must be a #{self.RECORD.name} record")


@irdl_attr_definition
class MulticastGroupsAttr(_RecordMap):
    """``#tt.multicast_groups<A_shared = #tt.multicast<...>, ...>``: the multicast circular
    buffers by buffer name; no two name one circular buffer or share a semaphore."""

    name = "tt.multicast_groups"
    RECORD = MulticastAttr

    def verify(self) -> None:
        super().verify()
        entries = self.to_dict().values()
        cbs = [e["cb"] for e in entries]
        sems = [s for e in entries for s in (e["sender_sem"], e["receiver_sem"])]
        if len(set(cbs)) != len(cbs) or len(set(sems)) != len(sems):
            raise VerifyException("#tt.multicast_groups: each circular buffer and semaphore belongs to one entry")


@irdl_attr_definition
class SyncBarriersAttr(_RecordMap):
    """``#tt.sync_barriers<A_shared_sender = #tt.semaphore<...>, ...>``: the program's semaphores
    by name; their ids are 0, 1, ... (the order ``CreateSemaphore`` makes them)."""

    name = "tt.sync_barriers"
    RECORD = SemaphoreAttr

    def verify(self) -> None:
        super().verify()
        ids = sorted(e["id"] for e in self.to_dict().values())
        if ids != list(range(len(ids))):
            raise VerifyException(f"#tt.sync_barriers: semaphore ids {ids} must be 0, 1, ... each once")


# metadata key (or key prefix, ending in ".") -> its record
RECORDS: dict[str, type[Record] | type[NameMap]] = {"tt.cb.": CircularBufferAttr, "tt.buffer.": BufferAttr,
                                    "tt.compute_config": ComputeConfigAttr, "tt.schedule": ScheduleAttr,
                                    "tt.shard": ShardAttr, "tt.grid_axes": GridAxesAttr, "tt.raster": RasterAttr,
                                    "tt.tensor_accessor.": TensorAccessorAttr, "tt.global_roles": RolesAttr,
                                    "tt.padded_shapes": ShapesAttr, "tt.kernels": KernelsAttr,
                                    "tt.lead_pads": LeadPadsAttr, "tt.tile_dfg": TileDfgAttr,
                                    "tt.vector_layouts": VectorLayoutsAttr,
                                    "tt.user_layout": UserLayoutsAttr, "tt.user_schedule": UserScheduleAttr,
                                    "tt.use_swizzle": SwizzleAttr, "tile.safe_values": SafeValuesAttr,
                                    "tile.views": ViewsAttr, "tt.multicast_groups": MulticastGroupsAttr,
                                    "tt.sync_barriers": SyncBarriersAttr, "tt.user_compute": ComputeConfigAttr,
                                    "tt.runtime_args": RuntimeArgAttr}


def record_for(key: str) -> type[Record] | type[NameMap] | None:
    """The record kind stored under ``key`` (None for untyped metadata). A :data:`RECORDS` key
    ending in ``.`` is a prefix (``tt.cb.<buffer>``); any other is the whole key."""
    for name, cls in RECORDS.items():
        if key == name or (name.endswith(".") and key.startswith(name)):
            return cls
    return None


def as_record(key: str, value: Any) -> Attribute | None:
    """``value`` (a dict, or a ``DictionaryAttr`` parsed from older text) as the record of
    ``key``; None when ``key`` holds untyped metadata."""
    cls = record_for(key)
    if cls is None:
        return None
    if isinstance(value, cls):
        return value
    if isinstance(value, DictionaryAttr):
        value = {k: _value(v) for k, v in value.data.items()}
    if isinstance(value, (list, ArrayAttr)):      # a list of records (``tt.runtime_args``)
        return ArrayAttr([v if isinstance(v, cls) else cls.from_dict(dict(v)) for v in value])
    return cls.from_dict(dict(value))


TT = Dialect("tt", [], [CircularBufferAttr, BufferAttr, NdShardAttr, ScheduleAttr, ShardAttr, GridAxesAttr, RasterAttr,
                       TensorAccessorAttr, RolesAttr, ShapesAttr, LeadPadsAttr, KernelsAttr, DfgEdgeAttr, TileDfgAttr,
                       VectorLayoutsAttr, UserNdShardAttr, UserLayoutAttr, UserLayoutsAttr, UserScheduleAttr,
                       SwizzleAttr, SafeValuesAttr, ViewAttr, ViewsAttr, MulticastAttr, SemaphoreAttr,
                       MulticastGroupsAttr, SyncBarriersAttr, RuntimeArgAttr])

__all__ = ["Record", "Field", "CircularBufferAttr", "BufferAttr", "NdShardAttr", "ComputeConfigAttr", "ScheduleAttr",
           "ShardAttr", "GridAxesAttr", "RasterAttr", "TensorAccessorAttr", "NameMap", "RolesAttr", "ShapesAttr", "LeadPadsAttr",
           "KernelsAttr", "DfgEdgeAttr", "TileDfgAttr", "VectorLayoutsAttr", "UserNdShardAttr", "UserLayoutAttr",
           "UserLayoutsAttr", "UserScheduleAttr", "SwizzleAttr", "SafeValuesAttr", "ViewAttr", "ViewsAttr", "MulticastAttr", "SemaphoreAttr",
           "MulticastGroupsAttr", "SyncBarriersAttr", "RuntimeArgAttr", "noc_cores", "RECORDS", "record_for", "as_record",
           "TT"]
