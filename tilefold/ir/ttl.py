"""The ``ttl`` dialect (TT-Lang operations) and the ``ttcore`` tile type it computes on.

Reads: nothing. Writes: xDSL type, attribute and op classes, registered with
:func:`tilefold.ir.context.register_dialect` so that ``parse_module`` reads ttl IR.

The dialect holds every level the TT-Lang pipeline passes through (TT-Lang multi-tile lowering, docs/references.md):

* **front-end level** — dataflow buffers (``ttl.bind_cb`` → ``!ttl.cb<[r, c], !ttcore.tile<32x32,
  bf16>, block_count>``), block acquisition (``ttl.cb_reserve`` / ``ttl.cb_wait`` give a
  ``tensor<r x c x !ttcore.tile<...>>``, ``ttl.cb_push`` / ``ttl.cb_pop`` release it), block
  expressions (``ttl.add``, ``ttl.exp``, ``ttl.matmul``, ``ttl.bcast``, ``ttl.reduce_sum`` ...),
  ``ttl.store``; data movement (``ttl.tensor``, ``ttl.tensor_slice``, ``ttl.copy`` → ``!ttl.transfer``,
  ``ttl.wait``), the node's coordinates (``ttl.node_coord``) and pipes (``ttl.pipe_count``,
  ``ttl.pipe_send``, ``ttl.pipe_recv``, ``ttl.wait_any``);
* **compute level** — ``ttl.compute ins(...) outs(...) {indexing_maps, iterator_types}`` whose
  region computes one tile with ``ttl.tile_<op>`` ops and ``ttl.yield``; ``ttl.attach_cb``;
* **DST level** — ``ttl.copy_tile`` (tile → DST slot), ``ttl.copy_dst``, ``ttl.linearized_index``,
  ``dst_idx`` / ``ttl.dst_output`` / ``ttl.dst_footprint`` attributes, ``ttl.init_sfpu``,
  ``ttl.tile_regs_acquire / commit / wait / release``, ``ttl.pack_tile``, ``ttl.matmul_block``,
  ``ttl.block_slice`` (a DST-sized sub-block of a block).

:data:`TILE_OPS` is the catalog of tile operations: for each, its arity, its float parameters and
the TT-Metalium compute API call (and init) it becomes. The block-level op ``ttl.<name>`` and the
tile-level op ``ttl.tile_<name>`` of each entry are generated from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects import tensor as tensor_dialect
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import VerifyException

from tilefold.ir.lazy_format import op_with_format
from tilefold.ir.context import register_dialect
from tilefold.ir.sfpu import INTEGER_SFPU_OPS, SFPU_CALLS
from tilefold.ir import ttl_metadata
from tilefold.layout.formats import DataFormat
from tilefold.ir.row_major_blocks import ROW_PITCH_ELEMENTS, TILE_ELEMENTS, row_major_pitch, row_major_tiles

# --- ttcore: the tile type ------------------------------------------------------------------

TILE_DTYPES = {"bf16": DataFormat.Float16_b, "f32": DataFormat.Float32, "bfp_bf8": DataFormat.Bfp8_b,
               "bfp_bf4": DataFormat.Bfp4_b, "si32": DataFormat.Int32, "u32": DataFormat.UInt32,
               "u16": DataFormat.UInt16, "u8": DataFormat.UInt8}
_DTYPE_OF_FORMAT = {fmt: name for name, fmt in TILE_DTYPES.items()}


@irdl_attr_definition
class TileType(ParametrizedAttribute, TypeAttribute):
    """``!ttcore.tile<32x32, bf16>``: one tile of a data format (bf16, f32, bfp_bf8,
    bfp_bf4, si32, u32, u16 or u8)."""

    name = "ttcore.tile"
    height: IntAttr
    width: IntAttr
    dtype: StringAttr

    def __init__(self, dtype: str = "bf16", height: int = 32, width: int = 32):
        super().__init__(IntAttr(height), IntAttr(width), StringAttr(dtype))

    @property
    def data_format(self) -> DataFormat:
        return TILE_DTYPES[self.dtype.data]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.height.data}x{self.width.data}, {self.dtype.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            dims = parser.parse_dimension_list()
            parser.parse_punctuation(",")
            dtype = parser.parse_identifier()
        if len(dims) != 2 or dtype not in TILE_DTYPES:
            parser.raise_error(f"expected <HxW, {' | '.join(TILE_DTYPES)}>")
        return [IntAttr(dims[0]), IntAttr(dims[1]), StringAttr(dtype)]

    def verify(self) -> None:
        if self.dtype.data not in TILE_DTYPES:
            raise VerifyException(f"tile dtype must be one of {', '.join(TILE_DTYPES)}, not {self.dtype.data}")


def tile_type(fmt: DataFormat, height: int = 32, width: int = 32) -> TileType:
    """The tile type of a data format (``height`` x ``width`` tiles; 32x32 by default)."""
    return TileType(_DTYPE_OF_FORMAT[fmt], height, width)


TTCore = Dialect("ttcore", [], [TileType])

# --- ttl types ------------------------------------------------------------------------------


@irdl_attr_definition
class CircularBufferType(ParametrizedAttribute, TypeAttribute):
    """``!ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>``: a dataflow buffer of ``block_count``
    blocks of ``shape`` elements (tiles, or scalars for a row-major buffer)."""

    name = "ttl.cb"
    shape: ArrayAttr[IntAttr]
    element_type: Attribute
    block_count: IntAttr

    def __init__(self, shape, element_type: Attribute, block_count: int):
        super().__init__(ArrayAttr([IntAttr(int(s)) for s in shape]), element_type, IntAttr(block_count))

    @property
    def block_shape(self) -> tuple[int, ...]:
        return tuple(s.data for s in self.shape.data)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<[" + ", ".join(str(s) for s in self.block_shape) + "], ")
        printer.print_attribute(self.element_type)
        printer.print_string(f", {self.block_count.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            shape = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
            parser.parse_punctuation(",")
            element = parser.parse_type()
            parser.parse_punctuation(",")
            count = parser.parse_integer()
        return [ArrayAttr([IntAttr(s) for s in shape]), element, IntAttr(count)]


@irdl_attr_definition
class TransferType(ParametrizedAttribute, TypeAttribute):
    """``!ttl.transfer``: the handle of an asynchronous ``ttl.copy``."""

    name = "ttl.transfer"


@irdl_attr_definition
class DstType(ParametrizedAttribute, TypeAttribute):
    """``!ttl.dst``: the token of a tile placed in a DST register slot."""

    name = "ttl.dst"


def block_type(shape, element: Attribute) -> TensorType:
    """``tensor<r x c x element>``: a block (or a tensor) in its shape unit."""
    return TensorType(element, list(shape))


def element_of(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, (TensorType, CircularBufferType)) else t


def shape_of(t: Attribute) -> tuple[int, ...]:
    if isinstance(t, TensorType):
        return tuple(t.get_shape())
    if isinstance(t, CircularBufferType):
        return t.block_shape
    raise TypeError(f"{t} has no shape")


def data_format_of(t: Attribute) -> DataFormat:
    """The data format of a tile, a tensor of tiles or scalars, or a dataflow buffer."""
    e = element_of(t)
    if isinstance(e, TileType):
        return e.data_format
    if isinstance(e, BFloat16Type):
        return DataFormat.Float16_b
    if isinstance(e, Float32Type):
        return DataFormat.Float32
    raise TypeError(f"{t} has no data format")


def scalar_type(fmt: DataFormat) -> Attribute:
    """The element type of a row-major block of ``fmt``."""
    if fmt is DataFormat.Float16_b:
        return BFloat16Type()
    if fmt is DataFormat.Float32:
        return Float32Type()
    raise TypeError(f"{fmt.ttnn_name} has no row-major element type")


DST_OUTPUT_ATTR = "ttl.dst_output"

# --- the tile-op catalog ------------------------------------------------------------------------


@dataclass(frozen=True)
class TileOpInfo:
    """One tile operation: ``kind`` says how it is computed (``sfpu_unary`` in place on a DST slot,
    ``sfpu_binary`` from two slots into a third, ``sfpu_ternary``, ``fill`` into a slot, or one of the
    operations that read their input from a circular buffer: ``bcast``, ``transpose``, ``reduce``,
    ``matmul``); ``call`` / ``init`` are the TT-Metalium compute API functions."""

    name: str
    kind: str
    call: str
    init: str
    params: tuple[str, ...] = ()
    param_encoding: str = "bits"   # how float params are passed: "bits" (uint32 of the float), "int", "float"
    # params that are the init's template arguments (their float bits), not the call's
    init_params: tuple[str, ...] = ()


def _unary(name, call=None, params=(), encoding="bits", init_params=()):
    call = call or f"{name}_tile"
    return TileOpInfo(name, "sfpu_unary", call, SFPU_CALLS[call].init, tuple(params), encoding, tuple(init_params))


def _binary(name, call):
    return TileOpInfo(name, "sfpu_binary", call, SFPU_CALLS[call].init)


TILE_OPS: dict[str, TileOpInfo] = {info.name: info for info in (
    _binary("add", "add_binary_tile"), _binary("sub", "sub_binary_tile"), _binary("mul", "mul_binary_tile"),
    _binary("div", "div_binary_tile"), _binary("max", "binary_max_tile"), _binary("min", "binary_min_tile"),
    _binary("pow", "power_binary_tile"), _binary("remainder", "remainder_binary_tile"),
    _binary("gt", "gt_binary_tile"), _binary("lt", "lt_binary_tile"), _binary("ge", "ge_binary_tile"),
    _binary("le", "le_binary_tile"), _binary("eq", "eq_binary_tile"), _binary("ne", "ne_binary_tile"),
    # on integer tiles (tilefold.ir.sfpu.INTEGER_SFPU_OPS; a templated call takes the tile type's format)
    *(TileOpInfo(op.name, "sfpu_binary", op.call, op.init) for op in INTEGER_SFPU_OPS),
    _unary("exp"), _unary("exp_scaled", params=("vector_mode", "scale_bf16_bits"), encoding="int"),
    # the approximate exp of scale * x: the scale is exp_tile_init's template argument
    _unary("exp_approx", params=("scale",), init_params=("scale",)), _unary("exp2"), _unary("log"), _unary("sqrt"), _unary("rsqrt"), _unary("recip"),
    _unary("square"), _unary("tanh"), _unary("sigmoid"), _unary("relu"), _unary("gelu"), _unary("silu"),
    _unary("sin"), _unary("cos"), _unary("abs"), _unary("neg", "negative_tile"),
    _unary("floor"), _unary("ceil"),
    _unary("sign"),
    _unary("asin"), _unary("acos"), _unary("atan"), _unary("sinh"), _unary("cosh"), _unary("asinh"),
    _unary("acosh"), _unary("atanh"), _unary("tan"), _unary("softsign"), _unary("hardsigmoid"),
    _unary("expm1"), _unary("log1p"), _unary("signbit"),
    _unary("trunc"), _unary("frac"),
    _unary("round", params=("decimals",), encoding="int"),
    _unary("elu", params=("alpha",)), _unary("celu", params=("alpha", "alpha_recip")),
    _unary("selu", params=("scale", "alpha")), _unary("leaky_relu", params=("slope",)),
    _unary("prelu", params=("alpha",)), _unary("softplus", params=("beta", "beta_reciprocal", "threshold")),
    _unary("clamp", params=("min", "max")),
    _unary("power", params=("exponent",), encoding="int"),
    # the tile's data format becomes the result's: the formats are typecast_tile's template arguments
    TileOpInfo("typecast", "sfpu_unary", "typecast_tile", "typecast_tile_init"),
    _unary("add_scalar", "add_unary_tile", ("value",)),
    _unary("sub_scalar", "sub_unary_tile", ("value",)),
    _unary("rsub_scalar", "rsub_unary_tile", ("value",)),
    _unary("mul_scalar", "mul_unary_tile", ("value",)),
    _unary("div_scalar", "div_unary_tile", ("value",)),
    _unary("max_scalar", "unary_max_tile", ("value",)),
    _unary("min_scalar", "unary_min_tile", ("value",)),
    TileOpInfo("where", "sfpu_ternary", "where_tile", "where_tile_init"),
    TileOpInfo("fill", "fill", "fill_tile", "fill_tile_init", ("value",), "float"),
    # a fill of an integer tile: the integer's 32 bits (the tile type's format is the template argument)
    TileOpInfo("fill_int", "fill", "fill_tile_int", "fill_tile_init", ("value",), "int"),
    TileOpInfo("bcast", "bcast", "", ""),
    TileOpInfo("transpose", "transpose", "transpose_wh_tile", "transpose_wh_init_short"),
    TileOpInfo("reduce_sum", "reduce", "reduce_tile", "reduce_init"),
    TileOpInfo("reduce_max", "reduce", "reduce_tile", "reduce_init"),
    TileOpInfo("matmul", "matmul", "matmul_block", "mm_block_init_short"),
    # the FPU's element-wise binary ops: both operands read from circular buffers (see ttl-assign-dst)
    TileOpInfo("fpu_add", "fpu_binary", "add_tiles", "add_tiles_init"),
    TileOpInfo("fpu_sub", "fpu_binary", "sub_tiles", "sub_tiles_init"),
    TileOpInfo("fpu_mul", "fpu_binary", "mul_tiles", "mul_tiles_init"),
)}
# the SFPU binary op each FPU one replaces
FPU_BINARY = {"add": "fpu_add", "sub": "fpu_sub", "mul": "fpu_mul"}

ARITY = {"sfpu_unary": 1, "sfpu_binary": 2, "sfpu_ternary": 3, "fill": 0, "bcast": 1, "transpose": 1, "reduce": 1,
         "matmul": 2, "fpu_binary": 2}
# Ops whose input is read from a circular buffer (never from DST).
CB_READING_KINDS = ("bcast", "transpose", "reduce", "matmul", "fpu_binary")
ELEMENTWISE_KINDS = ("sfpu_unary", "sfpu_binary", "sfpu_ternary", "fill")
REDUCTION_KINDS = ("reduce", "matmul")


class BlockOp(IRDLOperation):
    """Base of the block-level expression ops ``ttl.<name>`` (one per :data:`TILE_OPS` entry)."""

    @property
    def info(self) -> TileOpInfo:
        return TILE_OPS[self.name.removeprefix("ttl.")]

    def param(self, name: str) -> float:
        attr = self.properties[name]
        return attr.value.data

    @property
    def dim_list(self) -> tuple[int, ...]:
        """The ``dims`` of a broadcast or reduction (normalized, non-negative)."""
        attr = self.properties.get("dims")
        return tuple(attr.get_values()) if attr is not None else ()


class TileOp(IRDLOperation):
    """Base of the tile-level ops ``ttl.tile_<name>``: one tile of a ``ttl.compute`` body.

    ``dst_idx`` (set by ``ttl-assign-dst``) is the DST slot of the result; with the unit attribute
    ``ttl.dst_output`` the slot is ``dst_idx + `` the tile's linear index in the DST sub-block.
    Printed ``ttl.tile_add %a, %b {dst_idx = 2 : i32} : !ttcore.tile<32x32, bf16>`` when every operand
    and the result have one type, else with ``: (T0, T1) -> T``; ops that read a circular buffer
    print their tile indices in brackets (``ttl.tile_bcast %a [%i] {...}``, ``ttl.tile_fpu_add %a, %b [%i, %j]``)."""

    @property
    def info(self) -> TileOpInfo:
        return TILE_OPS[self.name.removeprefix("ttl.tile_")]

    def param(self, name: str) -> float:
        return self.properties[name].value.data

    @property
    def dst_index(self) -> int | None:
        attr = self.properties.get("dst_idx")
        return attr.value.data if attr is not None else None

    @property
    def is_dst_output(self) -> bool:
        return DST_OUTPUT_ATTR in self.attributes

    @property
    def tile_operands(self) -> list[SSAValue]:
        return [v for v in self.operands if isinstance(v.type, TileType)]

    @property
    def tile_index(self) -> SSAValue | None:
        idx = self.tile_indices
        return idx[0] if idx else None

    @property
    def tile_indices(self) -> list[SSAValue]:
        """The tile index in its CB block of each operand read from a circular buffer."""
        return [v for v in self.operands if isinstance(v.type, IndexType)]

    def print(self, printer: Printer) -> None:
        tiles = self.tile_operands
        if tiles:
            printer.print_string(" ")
            printer.print_list(tiles, printer.print_operand)
        indices = self.tile_indices
        if indices:
            printer.print_string(" [")
            printer.print_list(indices, printer.print_operand)
            printer.print_string("]")
        printer.print_op_attributes({**self.properties, **self.attributes})
        printer.print_string(" : ")
        types = [v.type for v in tiles]
        if all(t == self.result.type for t in types):
            printer.print_attribute(self.result.type)
        else:
            printer.print_string("(")
            printer.print_list(types, printer.print_attribute)
            printer.print_string(") -> ")
            printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser):
        tiles = []
        first = parser.parse_optional_unresolved_operand()
        if first is not None:
            tiles.append(first)
            while parser.parse_optional_punctuation(","):
                tiles.append(parser.parse_unresolved_operand())
        indices = []
        if parser.parse_optional_punctuation("["):
            indices.append(parser.parse_unresolved_operand())
            while parser.parse_optional_punctuation(","):
                indices.append(parser.parse_unresolved_operand())
            parser.parse_punctuation("]")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        if parser.parse_optional_punctuation("("):
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type) \
                if not parser.parse_optional_punctuation(")") else []
            if types:
                parser.parse_punctuation(")")
            parser.parse_punctuation("->")
            result = parser.parse_type()
        else:
            result = parser.parse_type()
            types = [result] * len(tiles)
        operands = parser.resolve_operands(tiles, types, parser.pos)
        prop_names = set(cls.get_irdl_definition().properties)
        props = {k: v for k, v in attrs.items() if k in prop_names}
        others = {k: v for k, v in attrs.items() if k not in prop_names}
        all_operands: list = list(operands)
        # the index operands: one optional ``index``, or the required ``index`` and ``index_b`` of an FPU binary
        names = [n for n, _ in cls.get_irdl_definition().operands if n in ("index", "index_b")]
        resolved = [[parser.resolve_operand(i, IndexType())] for i in indices[:len(names)]]
        if len(names) == 1:
            all_operands.append(resolved[0] if resolved else [])
        else:
            all_operands += [r[0] for r in resolved]
        op = cls.build(operands=all_operands, result_types=[result], properties=props)
        op.attributes.update(others)
        return op


def _class_name(prefix: str, name: str) -> str:
    return prefix + "".join(p.capitalize() for p in name.split("_")) + "Op"


def _make_block_op(info: TileOpInfo) -> type[BlockOp]:
    arity = ARITY[info.kind]
    fields: dict = {"name": f"ttl.{info.name}", "__doc__": f"Block-level ``{info.name}`` (see TILE_OPS)."}
    names = ("lhs", "rhs", "third")[:arity] if arity > 1 else ("input",)[:arity]
    for n in names:
        fields[n] = operand_def(TensorType)
    if info.kind == "reduce":       # the block whose first tile scales the reduced elements (else ones)
        fields["scaler"] = opt_operand_def(TensorType)
    for p in info.params:
        fields[p] = prop_def(FloatAttr)
    if info.kind in ("bcast", "reduce"):
        fields["dims"] = prop_def(DenseArrayBase)
    fields["result"] = result_def(TensorType)
    operands = ", ".join(f"${n}" for n in names)
    if info.kind == "reduce":
        assembly_format = "$input (`,` $scaler^)? attr-dict `:` type(operands) `->` type($result)"
    elif arity:
        assembly_format = f"{operands} attr-dict `:` type(operands) `->` type($result)".replace(", ", " `,` ")
    else:
        assembly_format = "attr-dict `:` type($result)"
    fields["irdl_options"] = (ParsePropInAttrDict(),)
    cls = type(_class_name("Block", info.name), (BlockOp,), fields)
    cls.__module__ = __name__
    return op_with_format(cls, assembly_format)


def _make_tile_op(info: TileOpInfo) -> type[TileOp]:
    arity = ARITY[info.kind]
    fields: dict = {"name": f"ttl.tile_{info.name}", "__doc__": f"Tile-level ``{info.name}`` (see TILE_OPS)."}
    names = ("lhs", "rhs", "third")[:arity] if arity > 1 else ("input",)[:arity]
    if info.kind == "reduce":       # the scaler tile, read from its circular buffer as the input is
        names = ("input", "scaler")
    for n in names:
        fields[n] = operand_def(TileType)
    if info.kind == "fpu_binary":         # made by ttl-assign-dst, with the tile index of each operand
        fields["index"] = operand_def(IndexType)
        fields["index_b"] = operand_def(IndexType)
    elif info.kind in CB_READING_KINDS and info.kind != "matmul":
        fields["index"] = opt_operand_def(IndexType)   # linear tile index in the CB block (after assign-dst)
    for p in info.params:
        fields[p] = prop_def(FloatAttr)
    if info.kind == "bcast":
        fields["bcast_kind"] = prop_def(StringAttr)   # "rows" | "cols" | "scalar" | "none"
    if info.kind == "reduce":
        fields["reduce_dim"] = prop_def(StringAttr)   # "REDUCE_ROW" | "REDUCE_COL" | "REDUCE_SCALAR"
    fields["dst_idx"] = opt_prop_def(IntegerAttr)
    fields["result"] = result_def(TileType)
    cls = type(_class_name("Tile", info.name), (TileOp,), fields)
    cls.__module__ = __name__
    return irdl_op_definition(cls)


BLOCK_OPS: dict[str, type[BlockOp]] = {name: _make_block_op(info) for name, info in TILE_OPS.items()}
TILE_OP_CLASSES: dict[str, type[TileOp]] = {name: _make_tile_op(info) for name, info in TILE_OPS.items()}
globals().update({cls.__name__: cls for cls in (*BLOCK_OPS.values(), *TILE_OP_CLASSES.values())})


def float_props(info: TileOpInfo, values: dict[str, float]) -> dict[str, Attribute]:
    """The op's number parameters as float attributes: f32, or f64 for a value float32 cannot hold
    (an integer fill of 2^31 - 1 keeps every bit)."""
    return {p: FloatAttr(float(values[p]), f32 if float(np.float32(values[p])) == float(values[p]) else f64)
            for p in info.params}


def make_block_op(name: str, operands: list[SSAValue], result_type: TensorType, params: dict | None = None,
                  dims: tuple[int, ...] | None = None) -> BlockOp:
    info = TILE_OPS[name]
    props = float_props(info, params or {})
    if dims is not None:
        props["dims"] = DenseArrayBase.from_list(i64, list(dims))
    operands = list(operands)
    if info.kind == "reduce":       # (input[, scaler]): the scaler is an optional operand
        operands = [operands[0], operands[1:]]
    return BLOCK_OPS[name].build(operands=operands, result_types=[result_type], properties=props)


def make_tile_op(name: str, operands: list[SSAValue], result_type: TileType, params: dict | None = None,
                 extra: dict[str, Attribute] | None = None, index: SSAValue | None = None,
                 index_b: SSAValue | None = None) -> TileOp:
    info = TILE_OPS[name]
    props = float_props(info, params or {})
    props.update(extra or {})
    all_operands: list = list(operands)
    if info.kind == "fpu_binary":
        all_operands += [index, index_b]
    elif info.kind in CB_READING_KINDS and info.kind != "matmul":
        all_operands.append([index] if index is not None else [])
    return TILE_OP_CLASSES[name].build(operands=all_operands, result_types=[result_type], properties=props)


# --- dataflow buffers and blocks --------------------------------------------------------------


@irdl_op_definition
class BindCBOp(IRDLOperation):
    """``ttl.bind_cb {cb_index, block_count}``: the dataflow buffer with circular-buffer index ``cb_index``."""

    name = "ttl.bind_cb"
    cb_index = prop_def(IntegerAttr)
    block_count = prop_def(IntegerAttr)
    buffer_name = opt_prop_def(StringAttr, prop_name="name")
    result = result_def(CircularBufferType)
    assembly_format = "attr-dict `:` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, index: int, cb_type: CircularBufferType, name: str | None = None):
        props: dict[str, Attribute] = {"cb_index": IntegerAttr(index, i32),
                                       "block_count": IntegerAttr(cb_type.block_count.data, i32)}
        if name:
            props["name"] = StringAttr(name)
        super().__init__(properties=props, result_types=[cb_type])

    @property
    def index(self) -> int:
        return self.cb_index.value.data


class _Acquire(IRDLOperation):
    cb = operand_def(CircularBufferType)
    depth = opt_prop_def(IntegerAttr)    # held blocks of this end of the FIFO before this one
    result = result_def(TensorType)
    assembly_format = "$cb attr-dict `:` type($cb) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, cb: SSAValue, depth: int = 0):
        t = cb.type
        props = {"depth": IntegerAttr(depth, i32)} if depth else {}
        super().__init__(operands=[cb], properties=props, result_types=[block_type(t.block_shape, t.element_type)])

    @property
    def held_before(self) -> int:
        return self.depth.value.data if self.depth is not None else 0


@irdl_op_definition
class CBReserveOp(_Acquire):
    """``ttl.cb_reserve %cb``: wait for a free block and return it (producer side)."""

    name = "ttl.cb_reserve"


@irdl_op_definition
class CBWaitOp(_Acquire):
    """``ttl.cb_wait %cb``: wait for a filled block and return it (consumer side)."""

    name = "ttl.cb_wait"


class _Release(IRDLOperation):
    cb = operand_def(CircularBufferType)
    count = opt_prop_def(IntegerAttr)    # blocks released at once (younger ones released earlier), default 1
    assembly_format = "$cb attr-dict `:` type($cb)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, cb: SSAValue, count: int = 1):
        props = {"count": IntegerAttr(count, i32)} if count != 1 else {}
        super().__init__(operands=[cb], properties=props)

    @property
    def blocks(self) -> int:
        return self.count.value.data if self.count is not None else 1


@irdl_op_definition
class CBPushOp(_Release):
    """``ttl.cb_push %cb {count}``: hand the oldest reserved block (and ``count - 1`` younger ones) to the consumer."""

    name = "ttl.cb_push"


@irdl_op_definition
class CBPopOp(_Release):
    """``ttl.cb_pop %cb {count}``: free the oldest waited block (and ``count - 1`` younger ones) for the producer."""

    name = "ttl.cb_pop"


@irdl_op_definition
class CBDrainedOp(IRDLOperation):
    """``ttl.cb_drained %cb {message}``: a check, in a data movement kernel, that no block pushed into
    the buffer still waits at its front (every push so far was popped); ``message`` says what the
    program must change when one does (a kernel assert, lowered to ``cb_pages_available_at_front``)."""

    name = "ttl.cb_drained"
    cb = operand_def(CircularBufferType)
    message = prop_def(StringAttr)
    assembly_format = "$cb attr-dict `:` type($cb)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, cb: SSAValue, message: str):
        super().__init__(operands=[cb], properties={"message": StringAttr(message)})


@irdl_op_definition
class StoreOp(IRDLOperation):
    """``ttl.store %value, %block``: materialize a block expression into a reserved block."""

    name = "ttl.store"
    value = operand_def(TensorType)
    block = operand_def(TensorType)
    assembly_format = "$value `,` $block attr-dict `:` type($value) `,` type($block)"

    def __init__(self, value: SSAValue, block: SSAValue):
        super().__init__(operands=[value, block])


@irdl_op_definition
class AttachCBOp(IRDLOperation):
    """``ttl.attach_cb %tensor, %cb``: the tensor lives in the dataflow buffer ``%cb``."""

    name = "ttl.attach_cb"
    tensor = operand_def(TensorType)
    cb = operand_def(CircularBufferType)
    result = result_def(TensorType)
    assembly_format = "$tensor `,` $cb attr-dict `:` type($tensor) `,` type($cb) `->` type($result)"

    def __init__(self, tensor: SSAValue, cb: SSAValue):
        super().__init__(operands=[tensor, cb], result_types=[tensor.type])


@irdl_op_definition
class BlockSliceOp(IRDLOperation):
    """``ttl.block_slice %block[%i, %j] {sizes}``: a sub-block (in tiles) of a block, for DST-sized work."""

    name = "ttl.block_slice"
    block = operand_def(TensorType)
    offsets = var_operand_def(IndexType)
    sizes = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    assembly_format = "$block `[` $offsets `]` attr-dict `:` type($block) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, block: SSAValue, offsets, sizes):
        super().__init__(operands=[block, list(offsets)], properties={"sizes": DenseArrayBase.from_list(i64, list(sizes))},
                         result_types=[block_type(sizes, element_of(block.type))])


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """``ttl.reshape %block : tensor<1xNxM> -> tensor<NxM>``: the same tiles in the same order with
    dimensions of size 1 removed or added (``ttl.block.squeeze`` / ``unsqueeze``). Of a block that
    lives in a dataflow buffer it is a view of that buffer."""

    name = "ttl.reshape"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, shape):
        super().__init__(operands=[value], result_types=[block_type(shape, element_of(value.type))])

    def verify_(self) -> None:
        a = [s for s in self.input.type.get_shape() if s != 1]
        b = [s for s in self.result.type.get_shape() if s != 1]
        if a != b:
            raise VerifyException(f"ttl.reshape only adds or removes dimensions of size 1, not "
                                  f"{list(self.input.type.get_shape())} -> {list(self.result.type.get_shape())}")


@irdl_op_definition
class RowPrefixOp(IRDLOperation):
    """``ttl.row_prefix %block {rows} : tensor<1x14x!ttcore.tile<1x32, bf16>> -> tensor<1x1x!ttcore.tile<32x32,
    bf16>>``: a reserved block of tiles 32 wide seen as the one 32x32 tile whose first ``rows`` rows
    of DST (16 values each, in DST's order) its bytes hold — the target of ``Block.store_rows`` /
    ``accumulate_rows``, packed with ``pack_rows``."""

    name = "ttl.row_prefix"
    block = operand_def(TensorType)
    rows = prop_def(IntegerAttr)
    result = result_def(TensorType)
    assembly_format = "$block attr-dict `:` type($block) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, block: SSAValue, rows: int, tile: TileType):
        super().__init__(operands=[block], properties={"rows": IntegerAttr(rows, i32)},
                         result_types=[block_type((1, 1), tile)])

    def verify_(self) -> None:
        if not 1 <= self.rows.value.data <= 64:
            raise VerifyException(f"ttl.row_prefix: rows must be 1 to 64, not {self.rows.value.data}")


# --- compute -------------------------------------------------------------------------------


@irdl_op_definition
class ComputeOp(IRDLOperation):
    """``ttl.compute ins(...) outs(...) {indexing_maps, iterator_types} {^bb(tiles...): ... ttl.yield}``.

    The body computes one output tile from one tile of each input, at the iteration point the
    ``indexing_maps`` give; ``iterator_types`` name the ``parallel`` and ``reduction`` dimensions."""

    name = "ttl.compute"
    inputs = var_operand_def(TensorType)
    outputs = var_operand_def(TensorType)
    result = var_result_def(TensorType)
    body = region_def("single_block")
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = ("`ins` `(` $inputs `:` type($inputs) `)` `outs` `(` $outputs `:` type($outputs) `)` "
                       "attr-dict-with-keyword $body `->` type($result)")

    @property
    def indexing_maps(self) -> list:
        return [m.data for m in self.attributes["indexing_maps"].data]

    @property
    def iterator_types(self) -> list[str]:
        return [s.data for s in self.attributes["iterator_types"].data]

    @property
    def footprint(self) -> int | None:
        attr = self.attributes.get("ttl.dst_footprint")
        return attr.value.data if attr is not None else None


@irdl_op_definition
class YieldOp(IRDLOperation):
    """``ttl.yield %tile``: the output tile of a ``ttl.compute`` body."""

    name = "ttl.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator())
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[list(values)])


@irdl_op_definition
class LinearizedIndexOp(IRDLOperation):
    """``ttl.linearized_index affine_map<(d0, d1) -> (d0 * C + d1)>``: the tile index of the current
    iteration point in an operand (symbols: sub-block offsets)."""

    name = "ttl.linearized_index"
    map = prop_def(AffineMapAttr)
    symbols = var_operand_def(IndexType)
    result = result_def(IndexType)
    assembly_format = "$map (`[` $symbols^ `]`)? attr-dict `:` type($result)"

    def __init__(self, affine_map, symbols=()):
        super().__init__(operands=[list(symbols)], properties={"map": AffineMapAttr(affine_map)},
                         result_types=[IndexType()])


@irdl_op_definition
class CopyTileOp(IRDLOperation):
    """``ttl.copy_tile %tile, %index, %dst_index``: copy tile ``index`` of a block into DST slot ``dst_index``."""

    name = "ttl.copy_tile"
    tile = operand_def(TileType)
    index = operand_def(IndexType)
    dst_index = operand_def(IndexType)
    token = result_def(DstType)
    result = result_def(TileType)
    assembly_format = ("$tile `,` $index `,` $dst_index attr-dict `:` type($tile) `,` type($index) `,` "
                       "type($dst_index) `->` type($token) `,` type($result)")

    def __init__(self, tile: SSAValue, index: SSAValue, dst_index: SSAValue):
        super().__init__(operands=[tile, index, dst_index], result_types=[DstType(), tile.type])


@irdl_op_definition
class CopyDstOp(IRDLOperation):
    """``ttl.copy_dst %tile {dst_idx}``: copy a DST slot to another (a value with more than one consumer)."""

    name = "ttl.copy_dst"
    input = operand_def(TileType)
    dst_idx = opt_prop_def(IntegerAttr)
    result = result_def(TileType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value], result_types=[value.type])


@irdl_op_definition
class InitSFPUOp(IRDLOperation):
    """``ttl.init_sfpu(%in_cb, %out_cb)``: configure unpack, math and pack for a compute region."""

    name = "ttl.init_sfpu"
    in_cb = operand_def(CircularBufferType)
    out_cb = operand_def(CircularBufferType)
    assembly_format = "`(` $in_cb `,` $out_cb `)` attr-dict `:` type($in_cb) `,` type($out_cb)"

    def __init__(self, in_cb: SSAValue, out_cb: SSAValue):
        super().__init__(operands=[in_cb, out_cb])


class _TileRegs(IRDLOperation):
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class TileRegsAcquireOp(_TileRegs):
    """``ttl.tile_regs_acquire``: math takes a DST half."""

    name = "ttl.tile_regs_acquire"


@irdl_op_definition
class TileRegsCommitOp(_TileRegs):
    """``ttl.tile_regs_commit``: math hands DST to the packer."""

    name = "ttl.tile_regs_commit"


@irdl_op_definition
class TileRegsWaitOp(_TileRegs):
    """``ttl.tile_regs_wait``: the packer waits for math's DST."""

    name = "ttl.tile_regs_wait"


@irdl_op_definition
class TileRegsReleaseOp(_TileRegs):
    """``ttl.tile_regs_release``: the packer gives DST back."""

    name = "ttl.tile_regs_release"


@irdl_op_definition
class PackL1AccOp(IRDLOperation):
    """``ttl.pack_l1_acc {enable}``: whether the packs that follow add DST to the tiles already at
    their L1 place (``pack_reconfig_l1_acc``); set around the packs of a ``ttl.store`` marked
    :data:`L1_ACC_ATTR`."""

    name = "ttl.pack_l1_acc"
    enable = prop_def(IntegerAttr)
    assembly_format = "attr-dict"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, enable: bool):
        super().__init__(properties={"enable": IntegerAttr(int(enable), i32)})


@irdl_op_definition
class PackTileOp(IRDLOperation):
    """``ttl.pack_tile %dst_slot, %cb_tile, %block {ttl.dst_footprint}``: pack DST slot
    ``footprint + dst_slot`` into tile ``cb_tile`` of a reserved block."""

    name = "ttl.pack_tile"
    dst_slot = operand_def(IndexType)
    cb_tile = operand_def(IndexType)
    block = operand_def(TensorType)
    assembly_format = "$dst_slot `,` $cb_tile `,` $block attr-dict `:` type($block)"

    def __init__(self, dst_slot: SSAValue, cb_tile: SSAValue, block: SSAValue, footprint: int):
        super().__init__(operands=[dst_slot, cb_tile, block])
        self.attributes["ttl.dst_footprint"] = IntegerAttr(footprint, i32)

    @property
    def footprint(self) -> int:
        return self.attributes["ttl.dst_footprint"].value.data


@irdl_op_definition
class DstTileOp(IRDLOperation):
    """``ttl.dst_tile {dst_idx}``: the tile a previous loop left in a DST slot (a reduction's result)."""

    name = "ttl.dst_tile"
    dst_idx = prop_def(IntegerAttr)
    result = result_def(TileType)
    assembly_format = "attr-dict `:` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, dst_idx: int, tile: TileType):
        super().__init__(properties={"dst_idx": IntegerAttr(dst_idx, i32)}, result_types=[tile])


@irdl_op_definition
class MatmulBlockOp(IRDLOperation):
    """``ttl.matmul_block %a, %b, %a_tile, %b_tile {rt, ct, kt, dst_idx}``: rt×ct output tiles in DST
    from one K step (``matmul_block``)."""

    name = "ttl.matmul_block"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    lhs_tile = operand_def(IndexType)
    rhs_tile = operand_def(IndexType)
    rt = prop_def(IntegerAttr)
    ct = prop_def(IntegerAttr)
    kt = prop_def(IntegerAttr)
    dst_idx = prop_def(IntegerAttr)
    assembly_format = ("$lhs `,` $rhs `,` $lhs_tile `,` $rhs_tile attr-dict `:` type($lhs) `,` type($rhs)")
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, lhs, rhs, lhs_tile, rhs_tile, rt: int, ct: int, kt: int, dst_idx: int):
        super().__init__(operands=[lhs, rhs, lhs_tile, rhs_tile],
                         properties={"rt": IntegerAttr(rt, i32), "ct": IntegerAttr(ct, i32),
                                     "kt": IntegerAttr(kt, i32), "dst_idx": IntegerAttr(dst_idx, i32)})


# --- data movement ------------------------------------------------------------------------------


@irdl_op_definition
class TensorOp(IRDLOperation):
    """``ttl.tensor {index, name}``: operand ``index`` of the operation, in its shape unit (tiles or scalars)."""

    name = "ttl.tensor"
    arg_index = prop_def(IntegerAttr, prop_name="index")
    tensor_name = prop_def(StringAttr, prop_name="name")
    result = result_def(TensorType)
    assembly_format = "attr-dict `:` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, index: int, name: str, t: TensorType):
        super().__init__(properties={"index": IntegerAttr(index, i32), "name": StringAttr(name)}, result_types=[t])


@irdl_op_definition
class TensorAddressOp(IRDLOperation):
    """``ttl.tensor_address {index, name}``: the base address of operand ``index``'s buffer
    (``ttl.raw_addr``), a runtime argument of the kernel."""

    name = "ttl.tensor_address"
    arg_index = prop_def(IntegerAttr, prop_name="index")
    tensor_name = prop_def(StringAttr, prop_name="name")
    result = result_def(IndexType)
    assembly_format = "attr-dict `:` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, index: int, name: str):
        super().__init__(properties={"index": IntegerAttr(index, i32), "name": StringAttr(name)},
                         result_types=[IndexType()])


@irdl_op_definition
class TensorSliceOp(IRDLOperation):
    """``ttl.tensor_slice %t[%offsets] {sizes}``: a slice of a tensor (offsets in its shape unit).
    ``checked`` lists the dimensions whose offset no loop or node range bounds, so the copy checks
    them against the tensor when it runs."""

    name = "ttl.tensor_slice"
    tensor = operand_def(TensorType)
    offsets = var_operand_def(IndexType)
    sizes = prop_def(DenseArrayBase)
    checked = opt_prop_def(DenseArrayBase)
    result = result_def(TensorType)
    assembly_format = "$tensor `[` $offsets `]` attr-dict `:` type($tensor) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, tensor: SSAValue, offsets, sizes, checked=()):
        properties = {"sizes": DenseArrayBase.from_list(i64, list(sizes))}
        if checked:
            properties["checked"] = DenseArrayBase.from_list(i64, list(checked))
        super().__init__(operands=[tensor, list(offsets)], properties=properties,
                         result_types=[block_type(sizes, element_of(tensor.type))])

    @property
    def static_sizes(self) -> tuple[int, ...]:
        return tuple(self.sizes.get_values())

    @property
    def checked_dims(self) -> tuple[int, ...]:
        return tuple(self.checked.get_values()) if self.checked is not None else ()

    def verify_(self) -> None:
        rank = len(self.tensor.type.get_shape())
        if any(not 0 <= d < rank for d in self.checked_dims):
            raise VerifyException(f"ttl.tensor_slice checks dimensions {self.checked_dims} of a rank-{rank} tensor")


@irdl_op_definition
class CopyOp(IRDLOperation):
    """``ttl.copy %src, %dst``: start copying a tensor slice into a block, a block into a slice, or
    (with ``byte_count``) the first ``byte_count`` bytes of a block into another block."""

    name = "ttl.copy"
    src = operand_def(TensorType)
    dst = operand_def(TensorType)
    byte_count = opt_prop_def(IntegerAttr)
    result = result_def(TransferType)
    assembly_format = "$src `,` $dst attr-dict `:` type($src) `,` type($dst)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, src: SSAValue, dst: SSAValue, byte_count: int | None = None):
        properties = {} if byte_count is None else {"byte_count": IntegerAttr(byte_count, i32)}
        super().__init__(operands=[src, dst], properties=properties, result_types=[TransferType()])


@irdl_op_definition
class WaitOp(IRDLOperation):
    """``ttl.wait %xf``: block until a transfer is complete."""

    name = "ttl.wait"
    transfer = operand_def(TransferType)
    assembly_format = "$transfer attr-dict"

    def __init__(self, transfer: SSAValue):
        super().__init__(operands=[transfer])


@irdl_op_definition
class WaitAnyOp(IRDLOperation):
    """``ttl.wait_any %recv... start %start done %done...``: wait until at least one of the pipe
    receives is complete and complete it; the result is its position among the operands, the first
    complete one found scanning cyclically from ``start % n``. ``done``: per receive, whether the
    program already completed it (an earlier selection), so it counts as complete and is not
    completed again."""

    name = "ttl.wait_any"
    requests = var_operand_def(TransferType)
    start = operand_def(IndexType)
    done = var_operand_def(i1)
    result = result_def(IndexType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, requests, start: SSAValue, done):
        super().__init__(operands=[list(requests), start, list(done)], result_types=[IndexType()])

    def verify_(self) -> None:
        if not self.requests or len(self.requests) != len(self.done):
            raise VerifyException("ttl.wait_any: one done flag per receive, at least one receive")
        for value in self.requests:
            if not isinstance(value.owner, PipeRecvOp):
                raise VerifyException("ttl.wait_any: every request is a ttl.pipe_recv")


@irdl_op_definition
class GroupWaitOp(IRDLOperation):
    """``ttl.group_wait {kinds = ["read", "write"]}``: wait for every transfer of a ``ttl.GroupTransfer``."""

    name = "ttl.group_wait"
    kinds = prop_def(ArrayAttr)
    assembly_format = "attr-dict"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, kinds):
        super().__init__(properties={"kinds": ArrayAttr([StringAttr(k) for k in sorted(kinds)])})

    @property
    def kind_names(self) -> list[str]:
        return [k.data for k in self.kinds.data]


@irdl_op_definition
class NodeCoordOp(IRDLOperation):
    """``ttl.node_coord {dim}``: this node's logical coordinate (0 = x / column, 1 = y / row), or (2)
    its device's index in the operation's device domain."""

    name = "ttl.node_coord"
    dim = prop_def(IntegerAttr)
    result = result_def(IndexType)
    assembly_format = "attr-dict `:` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, dim: int):
        super().__init__(properties={"dim": IntegerAttr(dim, i32)}, result_types=[IndexType()])


class _PipeOp(IRDLOperation):
    """A block sent through (or received from) one of this node's pipes of a pipe net: the node's
    ``slot``-th pipe in its role, or — with ``named`` — the net's ``slot``-th pipe, a pipe the
    kernel names (``ttl.copy(blk, pipe)`` with a ``ttl.Pipe``)."""

    net = prop_def(IntegerAttr)
    slot = prop_def(IntegerAttr)
    named = opt_prop_def(UnitAttr)
    byte_count = opt_prop_def(IntegerAttr)    # only the block's first bytes travel (None: all of it)
    block = operand_def(TensorType)
    result = result_def(TransferType)
    assembly_format = "$block attr-dict `:` type($block)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, block: SSAValue, net: int, slot: int, named: bool = False, byte_count: int | None = None):
        properties = {"net": IntegerAttr(net, i32), "slot": IntegerAttr(slot, i32)}
        if named:
            properties["named"] = UnitAttr()
        if byte_count is not None:
            properties["byte_count"] = IntegerAttr(byte_count, i32)
        super().__init__(operands=[block], properties=properties, result_types=[TransferType()])

    @property
    def net_index(self) -> int:
        return self.net.value.data

    @property
    def slot_index(self) -> int:
        return self.slot.value.data


@irdl_op_definition
class PipeCountOp(IRDLOperation):
    """``ttl.pipe_count {net, role}``: how many pipes of the net have this node as source (role
    ``src``) or among their destinations (role ``dst``)."""

    name = "ttl.pipe_count"
    net = prop_def(IntegerAttr)
    role = prop_def(StringAttr)
    result = result_def(IndexType)
    assembly_format = "attr-dict `:` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, net: int, role: str):
        super().__init__(properties={"net": IntegerAttr(net, i32), "role": StringAttr(role)},
                         result_types=[IndexType()])


PIPE_PEER_FIELDS = {"src": ("x0", "y0", "x1", "y1", "linear", "first", "stop", "device"),
                    "dst": ("x", "y", "linear", "device")}


@irdl_op_definition
class PipePeerOp(IRDLOperation):
    """``ttl.pipe_peer {net, slot, role, field}``: a logical node coordinate of the other end of this
    node's ``slot``-th pipe of the net: for role ``src`` (this node sends) the destination rectangle
    (``x0 y0 x1 y1``, inclusive), for role ``dst`` the source (``x y``); ``linear`` is ``y * cols + x``
    of the source or of the first destination; ``first`` / ``stop`` the linear destination range of
    a pipe written as one; ``device`` the other end's device index in the operation's device domain."""

    name = "ttl.pipe_peer"
    net = prop_def(IntegerAttr)
    slot = prop_def(IntegerAttr)
    role = prop_def(StringAttr)
    field = prop_def(StringAttr)
    result = result_def(IndexType)
    assembly_format = "attr-dict `:` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, net: int, slot: int, role: str, field: str):
        super().__init__(properties={"net": IntegerAttr(net, i32), "slot": IntegerAttr(slot, i32),
                                     "role": StringAttr(role), "field": StringAttr(field)},
                         result_types=[IndexType()])

    def verify_(self) -> None:
        if self.field.data not in PIPE_PEER_FIELDS.get(self.role.data, ()):
            raise VerifyException(f"ttl.pipe_peer: no field {self.field.data!r} for role {self.role.data!r}")


@irdl_op_definition
class PipeSendOp(_PipeOp):
    """``ttl.pipe_send %block {net, slot}``: send a block through this node's ``slot``-th source pipe."""

    name = "ttl.pipe_send"


@irdl_op_definition
class PipeRecvOp(_PipeOp):
    """``ttl.pipe_recv %block {net, slot}``: receive a block from this node's ``slot``-th destination pipe."""

    name = "ttl.pipe_recv"


@irdl_op_definition
class UnsafeElementReadOp(IRDLOperation):
    """``ttl.unsafe_element_read %block[%row, %col]``: the raw bits of one element of a block held by a
    data movement kernel (row and column in elements of the whole block), zero-extended to i32."""

    name = "ttl.unsafe_element_read"
    block = operand_def(TensorType)
    row = operand_def(IndexType)
    col = operand_def(IndexType)
    result = result_def(i32)
    assembly_format = "$block `[` $row `,` $col `]` attr-dict `:` type($block) `->` type($result)"

    def __init__(self, block: SSAValue, row: SSAValue, col: SSAValue):
        super().__init__(operands=[block, row, col], result_types=[i32])


@irdl_op_definition
class UnsafeElementWriteOp(IRDLOperation):
    """``ttl.unsafe_element_write %block[%row, %col], %value``: store the low bits of ``value`` into one
    element of a block held by a data movement kernel."""

    name = "ttl.unsafe_element_write"
    block = operand_def(TensorType)
    row = operand_def(IndexType)
    col = operand_def(IndexType)
    value = operand_def(i32)
    assembly_format = "$block `[` $row `,` $col `]` `,` $value attr-dict `:` type($block)"

    def __init__(self, block: SSAValue, row: SSAValue, col: SSAValue, value: SSAValue):
        super().__init__(operands=[block, row, col, value])


SEMAPHORE_ACTIONS = ("wait_eq", "wait_min", "set", "inc_remote", "set_remote", "set_multicast")


@irdl_op_definition
class SemaphoreOp(IRDLOperation):
    """``ttl.semaphore {semaphore, action, remote}``: an operation's semaphore (``ttl.Semaphore``) in a
    data movement kernel: ``wait_eq`` / ``wait_min`` / ``set`` on this node's copy, ``inc_remote`` /
    ``set_remote`` on the copy of node ``remote`` (a linear node index), ``set_multicast`` (this node's copy, then
    every node of rectangle ``remote``) with ``value``."""

    name = "ttl.semaphore"
    semaphore = prop_def(IntegerAttr)
    action = prop_def(StringAttr)
    remote = opt_prop_def(IntegerAttr)
    value = operand_def(IndexType)
    assembly_format = "$value attr-dict"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, semaphore: int, action: str, value: SSAValue, remote: int | None = None):
        props = {"semaphore": IntegerAttr(semaphore, i32), "action": StringAttr(action)}
        if remote is not None:
            props["remote"] = IntegerAttr(remote, i32)
        super().__init__(operands=[value], properties=props)

    def verify_(self) -> None:
        if self.action.data not in SEMAPHORE_ACTIONS:
            raise VerifyException(f"ttl.semaphore: action {self.action.data!r} is none of {SEMAPHORE_ACTIONS}")
        if (self.remote is None) != (self.action.data in ("wait_eq", "wait_min", "set")):
            raise VerifyException(f"ttl.semaphore: {self.action.data} {'needs' if self.remote is None else 'takes no'} "
                                  "remote")


STRUCTURAL_OPS = (BindCBOp, CBReserveOp, CBWaitOp, CBPushOp, CBPopOp, CBDrainedOp, StoreOp, AttachCBOp, BlockSliceOp, ReshapeOp,
                  RowPrefixOp,
                  ComputeOp, YieldOp, LinearizedIndexOp, CopyTileOp, CopyDstOp, InitSFPUOp, TileRegsAcquireOp,
                  TileRegsCommitOp, TileRegsWaitOp, TileRegsReleaseOp, PackL1AccOp, PackTileOp, DstTileOp, MatmulBlockOp, TensorOp,
                  TensorAddressOp, TensorSliceOp, CopyOp, WaitOp, WaitAnyOp, GroupWaitOp, NodeCoordOp, PipeCountOp, PipePeerOp,
                  PipeSendOp, PipeRecvOp, UnsafeElementReadOp, UnsafeElementWriteOp, SemaphoreOp)

TTL = Dialect("ttl", [*STRUCTURAL_OPS, *BLOCK_OPS.values(), *TILE_OP_CLASSES.values()],
              [CircularBufferType, TransferType, DstType, *ttl_metadata.ATTRIBUTES])

# attribute names shared by the passes
DST_FOOTPRINT_ATTR = "ttl.dst_footprint"
DST_SUBBLOCK_ATTR = "ttl.dst_subblock"
DST_OUTPUT_INDEX_ATTR = "ttl.dst_output_index"
OPERAND_ATTR = "ttl.operand"
SUBBLOCK_LOOP_ATTR = "ttl.subblock_loop"
# on a ``ttl.copy_tile`` of a compute body: the tile a matmul adds onto (copied into its output slots first)
MATMUL_ADDEND_ATTR = "ttl.matmul_addend"
CB_INDEX_ATTR = "ttl.cb_index"
# on a ttl.copy between data formats: the circular buffer its pages go through in the tensor's format
STAGING_CB_ATTR = "ttl.staging_cb"
CB_TILE_OFFSET_ATTR = "ttl.cb_tile_offset"
# on a ttl.copy of one row-major tensor page into a block (ttl.copy_tensor_page): the page's bytes land
# in the block as they are, whatever the block's tiles
RAW_PAGE_ATTR = "ttl.raw_page"
# on a ttl.store: the value is added to what the block's L1 already holds (the packer's L1
# accumulation), not written over it
L1_ACC_ATTR = "ttl.l1_acc"
# on a ttl.store into a ttl.row_prefix view (and the ttl.pack_tile it lowers to): pack only the view's
# rows of DST (``pack_rows``), not the whole tile
ROW_PREFIX_ATTR = "ttl.row_prefix"
CB_TABLE_ATTR = "ttl.circular_buffers"
KERNEL_ROLE_ATTR = "ttl.kernel_role"
UNIT = UnitAttr()

for _dialect in (TTCore, TTL, tensor_dialect.Tensor):
    register_dialect(_dialect)

__all__ = [
    "TTL", "TTCore", "TileType", "CircularBufferType", "TransferType", "DstType", "TILE_OPS", "TileOpInfo",
    "BLOCK_OPS", "TILE_OP_CLASSES", "BlockOp", "TileOp", "make_block_op", "make_tile_op", "tile_type",
    "block_type", "element_of", "shape_of", "data_format_of", "scalar_type", "row_major_pitch", "row_major_tiles", *[c.__name__ for c in STRUCTURAL_OPS],
]
