"""The ``tile`` dialect: TileLang-style kernels (a grid of blocks, shared / fragment buffers,
tile operations) and the protocol-less tile ops the TileLang pipeline lowers them to.

Reads: nothing. Writes: xDSL op classes, registered with :mod:`tilefold.ir.context` so that
``parse_module`` reads them back.

A kernel is a ``func.func`` whose arguments are the global tensors (``memref`` values, one
per ``T.Tensor`` / ``T.Buffer`` parameter, named by the function attribute ``tile.params``)
and whose attributes carry the ``tt.*`` metadata of the pipeline. Integer values (grid
indices, loop variables, offsets) are ``i32``; element values inside ``tile.parallel`` are
``f32``.

Front-end ops (what ``tilefold.language`` builds):

- ``tile.kernel`` — the block grid (``T.Kernel``); its block arguments are the block indices.
- ``tile.alloc`` — a ``shared`` or ``fragment`` buffer (``T.alloc_shared`` / ``T.alloc_fragment``).
- ``tile.copy`` — copy a block between a global tensor (at element ``offsets``) and a local
  buffer, or between two local buffers (``T.copy``).
- ``tile.gemm`` — ``C (+)= A @ B`` on local buffers (``T.gemm``).
- ``tile.fill`` — every element of a local buffer set to a constant (``T.fill`` / ``T.clear``).
- ``tile.reduce`` — sum or max of a 2-D buffer along ``dim`` into a 1-D buffer.
- ``tile.parallel`` — an element-wise body over ``extents`` (``T.Parallel``), holding
  ``tile.load`` / ``tile.store`` / ``tile.math`` and ``arith`` ops.
- ``tile.for`` — a loop: ``serial`` (``T.serial``), ``pipelined`` (``T.Pipelined``, with
  ``num_stages``) or ``persistent`` (a core's loop over its blocks, made by the pipeline).
- ``tile.if`` — ``if`` on an ``i1`` condition of block indices and loop variables.
- ``tile.transpose`` — ``dst = src^T`` of 2-D buffers, or a vector turned from a column into a
  row (``T.transpose``).
- ``tile.cumsum`` — cumulative sums along ``dim`` (``T.cumsum``), optionally from the end.
- ``tile.index_value`` — inside ``tile.parallel``: an ``i32`` index as an ``f32`` element value.
- ``tile.element`` — outside ``tile.parallel``: one element of an integer or bool global tensor
  as an ``i32`` (a block mask, an offset table), for an ``if``, a loop bound or an index.
- ``tile.iota`` — a buffer whose elements hold their own row (``dim = 0``) or column (``dim = 1``)
  number within their tile (0..31); the pipeline makes it to compute index values.

Pipeline ops (protocol-less until Stage D lowers them to ttkernel):

- ``tile.runtime_arg`` — a named per-core runtime argument (``start_id``, ``Nt``, ``A_addr``...).
- ``tile.read_element`` — ``tile.element`` placed in the tensor's tiles: element (``row``, ``col``)
  of its folded rows; ``key`` names it in every kernel that needs it, ``mailbox`` the CB through
  which the reader hands it to the compute kernel.
- ``tile.read_block`` / ``tile.write_block`` — move ``rows × cols`` pages of a global tensor
  (page of block tile (r, c) = ``first_page + r * row_stride + c``) into / out of a CB.
- ``tile.stmt`` — one compute statement (its ``reads`` / ``writes`` name buffers).
- ``tile.dst_section`` — math into DST (``math`` region), then packing out of DST (``pack``
  region); ``mode`` says which tile-register calls it stands for.
- ``tile.cb_event`` — where a CB version is waited for, popped, reserved or pushed.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    BoolAttr,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    StringAttr,
    f32,
    i1,
    i32,
)
from xdsl.ir import Attribute, Block, Dialect, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import NoTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from tilefold.ir.context import register_dialect

SCOPES = ("shared", "fragment")
LOOP_KINDS = ("serial", "pipelined", "persistent")
REDUCE_KINDS = ("sum", "max")
DST_MODES = ("section", "open", "continue", "close")
CB_EVENTS = ("consume", "release", "produce_begin", "produce_end")
PRODUCER_EVENTS = ("produce_begin", "produce_end")      # the producer's side of a CB; the others are the consumer's


def int_array(values) -> DenseArrayBase:
    return DenseArrayBase.from_list(i32, [int(v) for v in values])


def int_list(attr: DenseArrayBase) -> list[int]:
    return [int(v) for v in attr.get_values()]


def str_array(values) -> ArrayAttr:
    return ArrayAttr([StringAttr(str(v)) for v in values])


def str_list(attr: ArrayAttr) -> list[str]:
    return [a.data for a in attr.data]


def _one_block(args=()) -> Region:
    return Region(Block(arg_types=list(args)))


def _check_choice(value: str, choices, what: str) -> None:
    if value not in choices:
        raise VerifyException(f"{what} must be one of {', '.join(choices)}, not {value!r}")


# --- front-end ops ---------------------------------------------------------------------------


@irdl_op_definition
class KernelOp(IRDLOperation):
    """``with T.Kernel(gx, gy) as (bx, by)``: the body runs once per block of the grid."""

    assembly_format = "attr-dict-with-keyword $body"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.kernel"
    grid = prop_def(DenseArrayBase)
    body = region_def("single_block")
    traits = traits_def(NoTerminator())

    def __init__(self, grid):
        super().__init__(properties={"grid": int_array(grid)}, regions=[_one_block([i32] * len(grid))])

    @property
    def grid_shape(self) -> list[int]:
        return int_list(self.grid)

    def verify_(self) -> None:
        if len(self.body.block.args) != len(self.grid_shape):
            raise VerifyException("tile.kernel needs one block argument per grid dimension")


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A local buffer: ``shared`` (L1, usually filled by a copy) or ``fragment`` (computed)."""

    assembly_format = "attr-dict `:` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.alloc"
    buffer_name = prop_def(StringAttr, prop_name="name")
    scope = prop_def(StringAttr)
    result = result_def(MemRefType)

    def __init__(self, name: str, scope: str, memref_type: MemRefType):
        super().__init__(properties={"name": StringAttr(name), "scope": StringAttr(scope)},
                         result_types=[memref_type])

    def verify_(self) -> None:
        _check_choice(self.scope.data, SCOPES, "tile.alloc scope")


@irdl_op_definition
class CopyOp(IRDLOperation):
    """Copy a block: global ``src[offsets...]`` → local ``dst``, local ``src`` → global
    ``dst[offsets...]``, or local → local (no offsets). The block's shape is the local buffer's;
    ``dims`` says which global dim each local dim runs along (default: the trailing ones)."""

    assembly_format = "$src `,` $dst (`[` $offsets^ `]`)? attr-dict `:` type($src) `,` type($dst)"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.copy"
    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    offsets = var_operand_def(i32)
    dims = opt_prop_def(DenseArrayBase)

    def __init__(self, src, dst, offsets=(), dims=None):
        props = {"dims": int_array(dims)} if dims is not None else {}
        super().__init__(operands=[src, dst, list(offsets)], properties=props)

    def local_dims(self, global_rank: int, local_rank: int) -> list[int]:
        """The global dim each local dim is a slice of (-1: a local dim of extent 1 that is none);
        without ``dims``, the local dims are the global tensor's trailing dims."""
        if self.dims is not None:
            return int_list(self.dims)
        return list(range(global_rank - local_rank, global_rank))


@irdl_op_definition
class GemmOp(IRDLOperation):
    """``C = (clear_accum ? 0 : C) + op(A) @ op(B)`` on local buffers."""

    assembly_format = "$a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c)"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.gemm"
    a = operand_def(MemRefType)
    b = operand_def(MemRefType)
    c = operand_def(MemRefType)
    transpose_a = prop_def(BoolAttr)
    transpose_b = prop_def(BoolAttr)
    clear_accum = prop_def(BoolAttr)

    def __init__(self, a, b, c, transpose_a=False, transpose_b=False, clear_accum=False):
        super().__init__(operands=[a, b, c], properties={
            "transpose_a": BoolAttr.from_bool(transpose_a), "transpose_b": BoolAttr.from_bool(transpose_b),
            "clear_accum": BoolAttr.from_bool(clear_accum)})


@irdl_op_definition
class FillOp(IRDLOperation):
    """Every element of a local buffer set to ``value``."""

    assembly_format = "$buffer attr-dict `:` type($buffer)"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.fill"
    buffer = operand_def(MemRefType)
    value = prop_def(FloatAttr)

    def __init__(self, buffer, value: float):
        super().__init__(operands=[buffer], properties={"value": FloatAttr(float(value), f32)})

    @property
    def fill_value(self) -> float:
        return float(self.value.value.data)


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """``dst = reduce(src, dim)`` (``clear``) or ``dst = combine(dst, reduce(src, dim))``."""

    assembly_format = "$src `,` $dst attr-dict `:` type($src) `,` type($dst)"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.reduce"
    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    kind = prop_def(StringAttr)
    dim = prop_def(IntegerAttr)
    clear = prop_def(BoolAttr)

    def __init__(self, src, dst, kind: str, dim: int, clear: bool = True):
        super().__init__(operands=[src, dst], properties={
            "kind": StringAttr(kind), "dim": IntegerAttr(dim, i32), "clear": BoolAttr.from_bool(clear)})

    def verify_(self) -> None:
        _check_choice(self.kind.data, REDUCE_KINDS, "tile.reduce kind")


@irdl_op_definition
class ParallelOp(IRDLOperation):
    """``for i, j in T.Parallel(...)``: an element-wise body, one block argument per extent."""

    assembly_format = "attr-dict-with-keyword $body"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.parallel"
    extents = prop_def(DenseArrayBase)
    body = region_def("single_block")
    traits = traits_def(NoTerminator())

    def __init__(self, extents):
        super().__init__(properties={"extents": int_array(extents)}, regions=[_one_block([i32] * len(extents))])

    @property
    def shape(self) -> list[int]:
        return int_list(self.extents)


@irdl_op_definition
class LoadOp(IRDLOperation):
    """One element of a buffer, inside ``tile.parallel``."""

    assembly_format = "$buffer `[` $indices `]` attr-dict `:` type($buffer)"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.load"
    buffer = operand_def(MemRefType)
    indices = var_operand_def(i32)
    result = result_def(f32)
    traits = traits_def(Pure())

    def __init__(self, buffer, indices):
        super().__init__(operands=[buffer, list(indices)], result_types=[f32])


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Write one element of a buffer, inside ``tile.parallel``."""

    assembly_format = "$value `,` $buffer `[` $indices `]` attr-dict `:` type($buffer)"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.store"
    value = operand_def(f32)
    buffer = operand_def(MemRefType)
    indices = var_operand_def(i32)

    def __init__(self, value, buffer, indices):
        super().__init__(operands=[value, buffer, list(indices)])


@irdl_op_definition
class MathOp(IRDLOperation):
    """An element function with no ``arith`` op: ``exp``, ``log``, ``sqrt``, ``pow`` ..."""

    assembly_format = "$fn `(` $args `)` attr-dict"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.math"
    args = var_operand_def(f32)
    fn = prop_def(StringAttr)
    result = result_def(f32)
    traits = traits_def(Pure())

    def __init__(self, fn: str, args):
        super().__init__(operands=[list(args)], properties={"fn": StringAttr(fn)}, result_types=[f32])


@irdl_op_definition
class ForOp(IRDLOperation):
    """A loop ``for iv in range(lb, ub, step)`` of a kind: serial, pipelined or persistent."""

    assembly_format = "$lb `to` $ub attr-dict-with-keyword $body"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.for"
    lb = operand_def(i32)
    ub = operand_def(i32)
    step = prop_def(IntegerAttr)
    kind = prop_def(StringAttr)
    num_stages = opt_prop_def(IntegerAttr)
    body = region_def("single_block")
    traits = traits_def(NoTerminator())

    def __init__(self, lb, ub, kind: str = "serial", step: int = 1, num_stages: int | None = None):
        props: dict[str, Attribute] = {"step": IntegerAttr(step, i32), "kind": StringAttr(kind)}
        if num_stages is not None:
            props["num_stages"] = IntegerAttr(num_stages, i32)
        super().__init__(operands=[lb, ub], properties=props, regions=[_one_block([i32])])

    @property
    def iv(self) -> SSAValue:
        return self.body.block.args[0]

    @property
    def stages(self) -> int | None:
        return None if self.num_stages is None else self.num_stages.value.data

    def verify_(self) -> None:
        _check_choice(self.kind.data, LOOP_KINDS, "tile.for kind")
        if self.step.value.data <= 0:
            raise VerifyException("tile.for step must be positive")


@irdl_op_definition
class IfOp(IRDLOperation):
    """``if cond:`` on block indices / loop variables: ``then`` region, optional ``else`` region."""

    assembly_format = "$cond attr-dict-with-keyword $then_region $else_region"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.if"
    cond = operand_def(i1)
    then_region = region_def("single_block")
    else_region = region_def("single_block")
    traits = traits_def(NoTerminator())

    def __init__(self, cond):
        super().__init__(operands=[cond], regions=[_one_block(), _one_block()])


@irdl_op_definition
class TransposeOp(IRDLOperation):
    """``dst = src^T`` (2-D), or a vector laid out down a column copied into one along a row."""

    assembly_format = "$src `,` $dst attr-dict `:` type($src) `,` type($dst)"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.transpose"
    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)

    def __init__(self, src, dst):
        super().__init__(operands=[src, dst])


@irdl_op_definition
class CumsumOp(IRDLOperation):
    """``dst = cumsum(src, dim)``, from the end when ``reverse`` (src and dst may be one buffer)."""

    assembly_format = "$src `,` $dst attr-dict `:` type($src) `,` type($dst)"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.cumsum"
    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    dim = prop_def(IntegerAttr)
    reverse = prop_def(BoolAttr)

    def __init__(self, src, dst, dim: int, reverse: bool = False):
        super().__init__(operands=[src, dst], properties={"dim": IntegerAttr(dim, i32),
                                                          "reverse": BoolAttr.from_bool(reverse)})


@irdl_op_definition
class IndexValueOp(IRDLOperation):
    """Inside ``tile.parallel``: the value of an ``i32`` index expression as an ``f32`` element."""

    assembly_format = "$index attr-dict"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.index_value"
    index = operand_def(i32)
    result = result_def(f32)
    traits = traits_def(Pure())

    def __init__(self, index):
        super().__init__(operands=[index], result_types=[f32])


@irdl_op_definition
class IotaOp(IRDLOperation):
    """Every element of a one-tile buffer set to its row (``dim = 0``) or column (``dim = 1``) number."""

    assembly_format = "$buffer attr-dict `:` type($buffer)"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.iota"
    buffer = operand_def(MemRefType)
    dim = prop_def(IntegerAttr)

    def __init__(self, buffer, dim: int):
        super().__init__(operands=[buffer], properties={"dim": IntegerAttr(dim, i32)})


@irdl_op_definition
class ElementOp(IRDLOperation):
    """One element of an integer or bool global tensor, outside ``tile.parallel``, as an ``i32``."""

    assembly_format = "$buffer `[` $indices `]` attr-dict `:` type($buffer)"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.element"
    buffer = operand_def(MemRefType)
    indices = var_operand_def(i32)
    result = result_def(i32)
    traits = traits_def(Pure())         # the kernel only reads the tensors it reads elements of

    def __init__(self, buffer, indices):
        super().__init__(operands=[buffer, list(indices)], result_types=[i32])


# --- pipeline ops ------------------------------------------------------------------------------


@irdl_op_definition
class ReadElementOp(IRDLOperation):
    """Element (``row``, ``col``) of global ``buffer``'s folded rows (``tiles_per_row`` tiles a row,
    ``element_bytes`` each) as an ``i32``. The same ``key`` marks it in each kernel that needs it;
    ``mailbox`` is the CB through which the reader hands the element's face row to compute."""

    assembly_format = "$row `,` $col (`,` $accessor^ `:` type($accessor))? attr-dict"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.read_element"
    row = operand_def(i32)
    col = operand_def(i32)
    accessor = opt_operand_def()
    buffer = prop_def(StringAttr)
    tiles_per_row = prop_def(IntegerAttr)
    element_bytes = prop_def(IntegerAttr)
    key = prop_def(IntegerAttr)
    mailbox = opt_prop_def(IntegerAttr)
    result = result_def(i32)
    # not Pure: splitting the kernel decides which kernels keep it (the reader keeps the ones it
    # hands to compute even when it does not use them itself)

    def __init__(self, row, col, buffer: str, tiles_per_row: int, element_bytes: int, key: int,
                 accessor=None, mailbox: int | None = None):
        props = {"buffer": StringAttr(buffer), "tiles_per_row": IntegerAttr(tiles_per_row, i32),
                 "element_bytes": IntegerAttr(element_bytes, i32), "key": IntegerAttr(key, i32)}
        if mailbox is not None:
            props["mailbox"] = IntegerAttr(mailbox, i32)
        super().__init__(operands=[row, col, [accessor] if accessor is not None else []], properties=props,
                         result_types=[i32])

    @property
    def buffer_name(self) -> str:
        return self.buffer.data

    @property
    def mailbox_cb(self) -> int | None:
        return None if self.mailbox is None else self.mailbox.value.data

    def rebuilt(self, accessor=None, mailbox: int | None = None) -> "ReadElementOp":
        """A copy with an accessor and / or mailbox CB (the others kept)."""
        return ReadElementOp(self.row, self.col, self.buffer_name, self.tiles_per_row.value.data,
                             self.element_bytes.value.data, self.key.value.data,
                             accessor if accessor is not None else (self.accessor or None),
                             mailbox if mailbox is not None else self.mailbox_cb)


@irdl_op_definition
class RuntimeArgOp(IRDLOperation):
    """A per-core runtime argument, by name; its index is fixed when kernel signatures are final.
    ``tensor`` marks the base address of that tensor (the host passes it, not a canonical value)."""

    assembly_format = "$name attr-dict"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.runtime_arg"
    arg_name = prop_def(StringAttr, prop_name="name")
    tensor = opt_prop_def(StringAttr)
    result = result_def(i32)
    traits = traits_def(Pure())

    def __init__(self, name: str, tensor: str | None = None):
        props = {"name": StringAttr(name)}
        if tensor is not None:
            props["tensor"] = StringAttr(tensor)
        super().__init__(properties=props, result_types=[i32])


class _BlockTransfer(IRDLOperation):
    """Shared fields of ``tile.read_block`` and ``tile.write_block``."""

    assembly_format = "$first_page (`,` $accessor^ `:` type($accessor))? attr-dict"
    irdl_options = (ParsePropInAttrDict(),)
    first_page = operand_def(i32)
    accessor = opt_operand_def()
    buffer = prop_def(StringAttr)
    cb = prop_def(IntegerAttr)
    rows = prop_def(IntegerAttr)
    cols = prop_def(IntegerAttr)
    row_stride = prop_def(IntegerAttr)

    def __init__(self, first_page, buffer: str, cb: int, rows: int, cols: int, row_stride: int, accessor=None):
        super().__init__(operands=[first_page, [accessor] if accessor is not None else []], properties={
            "buffer": StringAttr(buffer), "cb": IntegerAttr(cb, i32), "rows": IntegerAttr(rows, i32),
            "cols": IntegerAttr(cols, i32), "row_stride": IntegerAttr(row_stride, i32)})

    def geometry(self) -> tuple[int, int, int]:
        return self.rows.value.data, self.cols.value.data, self.row_stride.value.data

    @property
    def cb_index(self) -> int:
        return self.cb.value.data

    @property
    def buffer_name(self) -> str:
        return self.buffer.data


    def with_accessor(self, accessor):
        return type(self)(self.first_page, self.buffer_name, self.cb_index, *self.geometry(), accessor)


@irdl_op_definition
class ReadBlockOp(_BlockTransfer):
    """Read ``rows × cols`` pages of global ``buffer`` into the reserved pages of CB ``cb``."""

    name = "tile.read_block"


@irdl_op_definition
class WriteBlockOp(_BlockTransfer):
    """Write ``rows × cols`` waited pages of CB ``cb`` to global ``buffer``."""

    name = "tile.write_block"


class _RowTransfer(IRDLOperation):
    """Shared fields of ``tile.read_rows`` and ``tile.write_rows``: a block of ``rows × cols``
    elements whose local row ``q`` is row ``first_row + q * row_step`` of the tensor's rows
    (every dim but the last folded into rows), columns ``first_col ..`` of its last dim.
    Elements move in face rows of 16 (``first_col`` and ``cols`` multiples of 16), or one by one
    (``elements``); ``tiles_per_row`` is the tensor's tiles per row of tiles, ``element_bytes``
    its element size."""

    assembly_format = "$first_row `,` $first_col (`,` $accessor^ `:` type($accessor))? attr-dict"
    irdl_options = (ParsePropInAttrDict(),)
    first_row = operand_def(i32)
    first_col = operand_def(i32)
    accessor = opt_operand_def()
    buffer = prop_def(StringAttr)
    cb = prop_def(IntegerAttr)
    rows = prop_def(IntegerAttr)
    cols = prop_def(IntegerAttr)
    row_step = prop_def(IntegerAttr)
    tiles_per_row = prop_def(IntegerAttr)
    element_bytes = prop_def(IntegerAttr)
    elements = prop_def(BoolAttr)
    column = opt_prop_def(BoolAttr)

    def __init__(self, first_row, first_col, buffer: str, cb: int, rows: int, cols: int, row_step: int,
                 tiles_per_row: int, element_bytes: int, elements: bool = False, accessor=None, column: bool = False):
        props = {"buffer": StringAttr(buffer), "cb": IntegerAttr(cb, i32), "rows": IntegerAttr(rows, i32),
                 "cols": IntegerAttr(cols, i32), "row_step": IntegerAttr(row_step, i32),
                 "tiles_per_row": IntegerAttr(tiles_per_row, i32), "element_bytes": IntegerAttr(element_bytes, i32),
                 "elements": BoolAttr.from_bool(elements)}
        if column:
            props["column"] = BoolAttr.from_bool(True)
        super().__init__(operands=[first_row, first_col, [accessor] if accessor is not None else []],
                         properties=props)

    def geometry(self) -> tuple[int, int, int, int, int]:
        return (self.rows.value.data, self.cols.value.data, self.row_step.value.data,
                self.tiles_per_row.value.data, self.element_bytes.value.data)

    @property
    def by_element(self) -> bool:
        """Columns that are not whole face rows: elements move one by one through a scratch page."""
        return bool(self.elements.value.data)

    @property
    def cb_index(self) -> int:
        return self.cb.value.data

    @property
    def buffer_name(self) -> str:
        return self.buffer.data

    @property
    def is_column(self) -> bool:
        """A vector of one column of the tensor: local element ``c`` is tensor element (``first_row +
        c * row_step``, ``first_col``), kept at (0, c) of the CB's tiles as a vector's elements are."""
        return self.column is not None and bool(self.column.value.data)

    def with_accessor(self, accessor):
        return type(self)(self.first_row, self.first_col, self.buffer_name, self.cb_index, *self.geometry(),
                          self.by_element, accessor, self.is_column)


@irdl_op_definition
class ReadRowsOp(_RowTransfer):
    """Read a block of rows of global ``buffer`` into the reserved pages of CB ``cb``, element
    (q, c) of the block at its place (q, c) in the CB's tiles."""

    name = "tile.read_rows"


@irdl_op_definition
class WriteRowsOp(_RowTransfer):
    """Write the block's rows from the waited pages of CB ``cb`` into global ``buffer``; only
    the block's elements are written (the rest of each tensor tile is left as it is)."""

    name = "tile.write_rows"


TRANSFERS = (ReadBlockOp, WriteBlockOp, ReadRowsOp, WriteRowsOp)
READS = (ReadBlockOp, ReadRowsOp)
WRITES = (WriteBlockOp, WriteRowsOp)


@irdl_op_definition
class StmtOp(IRDLOperation):
    """One compute statement; ``reads`` / ``writes`` name the local buffers whose CB versions it
    uses and defines."""

    assembly_format = "attr-dict-with-keyword $body"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.stmt"
    kind = prop_def(StringAttr)
    reads = prop_def(ArrayAttr)
    writes = prop_def(ArrayAttr)
    body = region_def("single_block")
    traits = traits_def(NoTerminator())

    def __init__(self, kind: str, reads=(), writes=()):
        super().__init__(properties={"kind": StringAttr(kind), "reads": str_array(reads),
                                     "writes": str_array(writes)}, regions=[_one_block()])

    @property
    def read_names(self) -> list[str]:
        return str_list(self.reads)

    @property
    def write_names(self) -> list[str]:
        return str_list(self.writes)


@irdl_op_definition
class DstSectionOp(IRDLOperation):
    """Math into DST, then packs out of it. ``section``: acquire, math, commit, wait, pack,
    release; ``open``: acquire, math; ``continue``: math only; ``close``: math, commit, wait,
    pack, release."""

    assembly_format = "attr-dict-with-keyword `math` $math `pack` $pack"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.dst_section"
    mode = prop_def(StringAttr)
    math = region_def("single_block")
    pack = region_def("single_block")
    traits = traits_def(NoTerminator())

    def __init__(self, mode: str = "section"):
        super().__init__(properties={"mode": StringAttr(mode)}, regions=[_one_block(), _one_block()])

    def verify_(self) -> None:
        _check_choice(self.mode.data, DST_MODES, "tile.dst_section mode")


@irdl_op_definition
class CbEventOp(IRDLOperation):
    """A point in the CB protocol of ``buffer``'s CB: ``consume`` (wait for ``pages``),
    ``release`` (pop), ``produce_begin`` (reserve), ``produce_end`` (push)."""

    assembly_format = "$kind attr-dict"
    irdl_options = (ParsePropInAttrDict(),)

    name = "tile.cb_event"
    kind = prop_def(StringAttr)
    cb = prop_def(IntegerAttr)
    pages = prop_def(IntegerAttr)
    buffer = prop_def(StringAttr)

    def __init__(self, kind: str, cb: int, pages: int, buffer: str):
        super().__init__(properties={"kind": StringAttr(kind), "cb": IntegerAttr(cb, i32),
                                     "pages": IntegerAttr(pages, i32), "buffer": StringAttr(buffer)})

    @property
    def event(self) -> str:
        return self.kind.data

    @property
    def cb_index(self) -> int:
        return self.cb.value.data

    @property
    def num_pages(self) -> int:
        return self.pages.value.data

    @property
    def by_producer(self) -> bool:
        """True for the producer's events (reserve, push), False for the consumer's (wait, pop)."""
        return self.kind.data in PRODUCER_EVENTS

    def verify_(self) -> None:
        _check_choice(self.kind.data, CB_EVENTS, "tile.cb_event kind")


TILE_OPS = [KernelOp, AllocOp, CopyOp, GemmOp, FillOp, ReduceOp, ParallelOp, LoadOp, StoreOp, MathOp, ForOp,
            IfOp, TransposeOp, CumsumOp, IndexValueOp, IotaOp, ElementOp, RuntimeArgOp, ReadElementOp, ReadBlockOp, WriteBlockOp, ReadRowsOp,
            WriteRowsOp, StmtOp, DstSectionOp, CbEventOp]

Tile = Dialect("tile", TILE_OPS, [])
register_dialect(Tile)

__all__ = [
    "Tile", "TILE_OPS", "KernelOp", "AllocOp", "CopyOp", "GemmOp", "FillOp", "ReduceOp", "ParallelOp", "LoadOp",
    "StoreOp", "MathOp", "ForOp", "IfOp", "TransposeOp", "CumsumOp", "IndexValueOp", "IotaOp", "ElementOp", "RuntimeArgOp", "ReadElementOp",
    "ReadRowsOp", "WriteRowsOp", "TRANSFERS", "READS", "WRITES", "ReadBlockOp", "WriteBlockOp", "StmtOp", "DstSectionOp",
    "CbEventOp", "SCOPES", "LOOP_KINDS", "REDUCE_KINDS", "DST_MODES", "CB_EVENTS", "PRODUCER_EVENTS", "int_array", "int_list",
    "str_array", "str_list",
]
